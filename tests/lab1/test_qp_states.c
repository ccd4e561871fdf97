/* test_qp_states.c: Lab 1 steps 5 to 7: each transition, checked with ibv_query_qp. */
#include <string.h>

#include "fixture.h"
#include "lab1.h"

/* A fresh RC QP in RESET, built with plain verbs, and a second one to aim it at. */
struct qps {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp, *peer;
};

static void make_qps(struct qps *q)
{
	q->ctx = fx_open();
	q->pd = fx_pd(q->ctx);
	q->cq = fx_cq(q->ctx);
	q->qp = fx_qp(q->pd, q->cq);
	q->peer = fx_qp(q->pd, q->cq);
}

/* What a peer on this device would send us about PEER: QPN, PSN, our own GID. */
static struct lab1_dest peer_dest(struct ibv_qp *peer)
{
	struct lab1_dest d = { .qpn = peer->qp_num, .psn = 0xabcdef };

	ck_assert_int_eq(
		ibv_query_gid(peer->context, rl_test_ib_port(), rl_test_gid_index(), &d.gid), 0);
	return d;
}

static void expect_state(struct ibv_qp *qp, enum ibv_qp_state want)
{
	enum ibv_qp_state got = fx_state(qp);

	ck_assert_msg(got == want, "expected state %s (ibv_query_qp), got %s", fx_state_str(want),
		      fx_state_str(got));
}

/* Step 5 */

RL_TEST(init_moves_the_qp_to_init_on_the_given_port, .step = 5, .points = 2)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct qps q;
	int ret;

	make_qps(&q);
	ret = lab1_qp_to_init(q.qp, rl_test_ib_port());
	ck_assert_msg(ret == 0, "expected lab1_qp_to_init to return 0, got %d (%s)", ret,
		      strerror(-ret));
	fx_query(q.qp, &attr, &init);
	ck_assert_msg(attr.qp_state == IBV_QPS_INIT, "expected state INIT, got %s",
		      fx_state_str(attr.qp_state));
	ck_assert_msg(attr.port_num == rl_test_ib_port(), "expected port_num %u, got %u",
		      rl_test_ib_port(), attr.port_num);
	ck_assert_msg(attr.pkey_index == 0, "expected pkey_index 0, got %u", attr.pkey_index);
}
END_TEST

RL_TEST(init_grants_the_peer_remote_write, .step = 5, .points = 1)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct qps q;
	int ret;

	make_qps(&q);
	ret = lab1_qp_to_init(q.qp, rl_test_ib_port());
	ck_assert_msg(ret == 0, "expected lab1_qp_to_init to return 0, got %d (%s)", ret,
		      strerror(-ret));
	fx_query(q.qp, &attr, &init);
	ck_assert_msg(attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE,
		      "expected IBV_ACCESS_REMOTE_WRITE in qp_access_flags, got 0x%x",
		      attr.qp_access_flags);
}
END_TEST

RL_TEST(init_on_a_port_the_device_lacks_fails_with_einval, .step = 5, .points = 1)
{
	struct qps q;
	int ret;

	make_qps(&q);
	ret = lab1_qp_to_init(q.qp, 77);
	ck_assert_msg(ret == -EINVAL, "expected -EINVAL (%d) for port 77, got %d (%s)", -EINVAL,
		      ret, strerror(-ret));
	expect_state(q.qp, IBV_QPS_RESET);
}
END_TEST

/* Step 6 */

/* Q's QP in INIT (plain verbs), then INIT -> RTR by the lab's code, aimed at Q's peer. */
static struct lab1_dest to_rtr(struct qps *q)
{
	struct lab1_dest remote;
	int ret;

	make_qps(q);
	remote = peer_dest(q->peer);
	fx_to_init(q->qp);
	ret = lab1_qp_to_rtr(q->qp, rl_test_ib_port(), rl_test_gid_index(), &remote);
	ck_assert_msg(ret == 0, "expected lab1_qp_to_rtr to return 0, got %d (%s)", ret,
		      strerror(-ret));
	return remote;
}

RL_TEST(rtr_aims_the_qp_at_the_peers_qpn_and_psn, .step = 6, .points = 2)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct qps q;
	struct lab1_dest remote = to_rtr(&q);

	fx_query(q.qp, &attr, &init);
	ck_assert_msg(attr.qp_state == IBV_QPS_RTR, "expected state RTR, got %s",
		      fx_state_str(attr.qp_state));
	ck_assert_msg(attr.dest_qp_num == remote.qpn, "expected dest_qp_num 0x%x, got 0x%x",
		      remote.qpn, attr.dest_qp_num);
	ck_assert_msg(attr.rq_psn == remote.psn, "expected rq_psn 0x%x (the peer's PSN), got 0x%x",
		      remote.psn, attr.rq_psn);
}
END_TEST

RL_TEST(rtr_uses_the_ports_active_mtu, .step = 6, .points = 1)
{
	struct ibv_qp_init_attr init;
	struct ibv_port_attr port;
	struct ibv_qp_attr attr;
	struct qps q;

	to_rtr(&q);
	fx_query(q.qp, &attr, &init);
	ck_assert_int_eq(ibv_query_port(q.ctx, rl_test_ib_port(), &port), 0);
	ck_assert_msg(attr.path_mtu == port.active_mtu,
		      "expected path_mtu %d (the port's active_mtu, %d bytes), got %d",
		      port.active_mtu, 128 << port.active_mtu, attr.path_mtu);
}
END_TEST

RL_TEST(rtr_routes_by_gid_from_the_chosen_index, .step = 6, .points = 2)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	char want[RL_GID_STR_LEN], got[RL_GID_STR_LEN];
	struct qps q;
	struct lab1_dest remote = to_rtr(&q);

	fx_query(q.qp, &attr, &init);
	ck_assert_msg(attr.ah_attr.is_global == 1,
		      "expected ah_attr.is_global 1 (RoCE needs a GRH), got %u",
		      attr.ah_attr.is_global);
	rl_gid_str(&remote.gid, want);
	rl_gid_str(&attr.ah_attr.grh.dgid, got);
	ck_assert_msg(memcmp(&attr.ah_attr.grh.dgid, &remote.gid, 16) == 0,
		      "expected dgid %s (the peer's GID), got %s", want, got);
	ck_assert_msg(attr.ah_attr.grh.sgid_index == rl_test_gid_index(),
		      "expected sgid_index %d (RDMALAB_GID_INDEX), got %u", rl_test_gid_index(),
		      attr.ah_attr.grh.sgid_index);
	ck_assert_msg(attr.ah_attr.port_num == rl_test_ib_port(),
		      "expected ah_attr.port_num %u, got %u", rl_test_ib_port(),
		      attr.ah_attr.port_num);
}
END_TEST

RL_TEST(rtr_straight_from_reset_fails_with_einval, .step = 6, .points = 1)
{
	struct lab1_dest remote;
	struct qps q;
	int ret;

	make_qps(&q);
	remote = peer_dest(q.peer);
	ret = lab1_qp_to_rtr(q.qp, rl_test_ib_port(), rl_test_gid_index(), &remote);
	ck_assert_msg(ret == -EINVAL, "expected -EINVAL (%d) for RESET -> RTR, got %d (%s)",
		      -EINVAL, ret, strerror(-ret));
	expect_state(q.qp, IBV_QPS_RESET);
}
END_TEST

RL_TEST(rtr_without_the_address_vector_fails_where_lab1_qp_to_rtr_succeeds, .step = 6, .points = 1)
{
	struct ibv_port_attr port;
	struct lab1_dest remote;
	struct ibv_qp_attr attr;
	struct qps q;
	int ret;

	make_qps(&q);
	remote = peer_dest(q.peer);
	fx_to_init(q.qp);
	ck_assert_int_eq(ibv_query_port(q.ctx, rl_test_ib_port(), &port), 0);
	attr = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR,
		.path_mtu = port.active_mtu,
		.dest_qp_num = remote.qpn,
		.rq_psn = remote.psn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
	};
	ret = ibv_modify_qp(q.qp, &attr,
			    IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	ck_assert_msg(ret == EINVAL, "expected EINVAL from INIT -> RTR without IBV_QP_AV, got %d",
		      ret);
	ret = lab1_qp_to_rtr(q.qp, rl_test_ib_port(), rl_test_gid_index(), &remote);
	ck_assert_msg(ret == 0, "expected lab1_qp_to_rtr to return 0, got %d (%s)", ret,
		      strerror(-ret));
	expect_state(q.qp, IBV_QPS_RTR);
}
END_TEST

/* Step 7 */

/* Q's QP in RTR (plain verbs), then RTR -> RTS by the lab's code from PSN. */
static void to_rts(struct qps *q, uint32_t psn)
{
	int ret;

	make_qps(q);
	fx_to_init(q->qp);
	fx_to_rtr(q->qp, q->peer);
	ret = lab1_qp_to_rts(q->qp, psn);
	ck_assert_msg(ret == 0, "expected lab1_qp_to_rts to return 0, got %d (%s)", ret,
		      strerror(-ret));
}

RL_TEST(rts_sends_from_the_psn_given, .step = 7, .points = 2)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct qps q;

	to_rts(&q, 0x123456);
	fx_query(q.qp, &attr, &init);
	ck_assert_msg(attr.qp_state == IBV_QPS_RTS, "expected state RTS, got %s",
		      fx_state_str(attr.qp_state));
	ck_assert_msg(attr.sq_psn == 0x123456, "expected sq_psn 0x123456, got 0x%x", attr.sq_psn);
}
END_TEST

RL_TEST(rts_sets_finite_timeouts_and_retries, .step = 7, .points = 1)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct qps q;

	to_rts(&q, 1);
	fx_query(q.qp, &attr, &init);
	ck_assert_msg(attr.timeout >= 1 && attr.timeout <= 31,
		      "expected an ACK timeout from 1 to 31 (0 waits for ever), got %u",
		      attr.timeout);
	ck_assert_msg(attr.retry_cnt >= 1 && attr.retry_cnt <= 7,
		      "expected retry_cnt from 1 to 7, got %u", attr.retry_cnt);
	ck_assert_msg(attr.rnr_retry >= 1 && attr.rnr_retry <= 6,
		      "expected rnr_retry from 1 to 6 (7 retries for ever and hides a missing "
		      "receive), got %u",
		      attr.rnr_retry);
}
END_TEST

RL_TEST(rts_straight_from_init_fails_with_einval, .step = 7, .points = 1)
{
	struct qps q;
	int ret;

	make_qps(&q);
	fx_to_init(q.qp);
	ret = lab1_qp_to_rts(q.qp, 1);
	ck_assert_msg(ret == -EINVAL, "expected -EINVAL (%d) for INIT -> RTS, got %d (%s)", -EINVAL,
		      ret, strerror(-ret));
	expect_state(q.qp, IBV_QPS_INIT);
}
END_TEST
