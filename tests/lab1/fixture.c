/* fixture.c: plain-verbs objects for the Lab 1 acts, and their end of the link to the peer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"

struct ibv_context *fx_open(void)
{
	const char *dev = rl_test_device();
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	ck_assert_msg(list, "expected a device list, got NULL (%s)", strerror(errno));
	for (i = 0; list[i] && !ctx; i++)
		if (strcmp(ibv_get_device_name(list[i]), dev) == 0)
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	ck_assert_msg(ctx, "expected to open %s, could not", dev);
	return ctx;
}

/*
 * The fixture's own version of each step, run around the step under test
 * in an act. Each is declared hidden (RL_HIDDEN, tests/harness.h) in the
 * acts of the step it does, so that the lab's code cannot call it there,
 * except where an act of that step needs it: fx_mr runs in step 2's acts
 * (the link's own buffer, beside the lab's MR), fx_poll in step 10's (the
 * completions of the lab's posts). Neither is that step's function: fx_mr
 * registers a buffer it allocates, for remote read too, and fx_poll takes
 * a completion whatever its status; each is a few lines of the calls the
 * step allows anyway. The reference wire format and the reference peer
 * are in peer.c, hidden there.
 */
struct ibv_pd *fx_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);

	ck_assert_msg(pd, "fixture: ibv_alloc_pd failed: %s", strerror(errno));
	return pd;
}
RL_HIDDEN(fx_pd, 1);

struct ibv_cq *fx_cq(struct ibv_context *ctx)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 2 * FX_DEPTH, NULL, NULL, 0);

	ck_assert_msg(cq, "fixture: ibv_create_cq failed: %s", strerror(errno));
	return cq;
}
RL_HIDDEN(fx_cq, 3);

struct ibv_qp *fx_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {
			.max_send_wr = FX_DEPTH,
			.max_recv_wr = FX_DEPTH,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	ck_assert_msg(qp, "fixture: ibv_create_qp failed: %s", strerror(errno));
	return qp;
}
RL_HIDDEN(fx_qp, 4);

struct ibv_mr *fx_mr(struct ibv_pd *pd, size_t len)
{
	void *buf = calloc(1, len);
	struct ibv_mr *mr;

	ck_assert_msg(buf, "fixture: calloc of %zu bytes failed", len);
	mr = ibv_reg_mr(pd, buf, len,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	ck_assert_msg(mr, "fixture: ibv_reg_mr failed: %s", strerror(errno));
	return mr;
}

void fx_to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = rl_test_ib_port(),
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	int ret = ibv_modify_qp(qp, &attr, mask);

	ck_assert_msg(ret == 0, "fixture: RESET->INIT failed: %s", strerror(ret));
}
RL_HIDDEN(fx_to_init, 5);

uint32_t fx_psn(const struct ibv_qp *qp)
{
	return (qp->qp_num * 7919u + 1) & 0xffffff;
}

void fx_to_rtr_dest(struct ibv_qp *qp, const struct lab1_dest *remote)
{
	struct ibv_port_attr port_attr;
	struct ibv_qp_attr attr;
	int mask, ret;

	ck_assert_int_eq(ibv_query_port(qp->context, rl_test_ib_port(), &port_attr), 0);
	attr = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR,
		.path_mtu = port_attr.active_mtu,
		.dest_qp_num = remote->qpn,
		.rq_psn = remote->psn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.port_num = rl_test_ib_port(),
			.grh = { .dgid = remote->gid, .sgid_index = rl_test_gid_index(), .hop_limit = 1 },
		},
	};
	mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
	       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	ret = ibv_modify_qp(qp, &attr, mask);
	ck_assert_msg(ret == 0, "fixture: INIT->RTR failed: %s", strerror(ret));
}
RL_HIDDEN(fx_to_rtr_dest, 6);

void fx_to_rtr(struct ibv_qp *qp, struct ibv_qp *peer)
{
	struct lab1_dest remote = { .qpn = peer->qp_num, .psn = fx_psn(peer) };

	ck_assert_int_eq(
		ibv_query_gid(qp->context, rl_test_ib_port(), rl_test_gid_index(), &remote.gid), 0);
	fx_to_rtr_dest(qp, &remote);
}
RL_HIDDEN(fx_to_rtr, 6);

void fx_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.sq_psn = fx_psn(qp),
		.max_rd_atomic = 1,
	};
	int mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		   IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
	int ret = ibv_modify_qp(qp, &attr, mask);

	ck_assert_msg(ret == 0, "fixture: RTR->RTS failed: %s", strerror(ret));
}
RL_HIDDEN(fx_to_rts, 7);

void fx_query(struct ibv_qp *qp, struct ibv_qp_attr *attr, struct ibv_qp_init_attr *init)
{
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS |
		   IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER | IBV_QP_TIMEOUT |
		   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC |
		   IBV_QP_CAP;
	int ret;

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	ret = ibv_query_qp(qp, attr, mask, init);
	ck_assert_msg(ret == 0, "fixture: ibv_query_qp failed: %s", strerror(ret));
}

/* Say NAME as PREFIX.NAME. */
static void fx_say(const char *prefix, const char *name, long long v)
{
	char key[64];

	snprintf(key, sizeof(key), "%s.%s", prefix, name);
	rl_say_int(key, v);
}

void fx_say_qp(const char *prefix, struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	char key[64];

	fx_query(qp, &attr, &init);
	fx_say(prefix, "state", attr.qp_state);
	fx_say(prefix, "port", attr.port_num);
	fx_say(prefix, "pkey_index", attr.pkey_index);
	fx_say(prefix, "access", attr.qp_access_flags);
	fx_say(prefix, "path_mtu", attr.path_mtu);
	fx_say(prefix, "is_global", attr.ah_attr.is_global);
	fx_say(prefix, "sgid_index", attr.ah_attr.grh.sgid_index);
	fx_say(prefix, "ah_port", attr.ah_attr.port_num);
	fx_say(prefix, "timeout", attr.timeout);
	fx_say(prefix, "retry_cnt", attr.retry_cnt);
	fx_say(prefix, "rnr_retry", attr.rnr_retry);
	fx_say(prefix, "max_send_wr", init.cap.max_send_wr);
	fx_say(prefix, "max_recv_wr", init.cap.max_recv_wr);
	fx_say(prefix, "max_send_sge", init.cap.max_send_sge);
	fx_say(prefix, "max_recv_sge", init.cap.max_recv_sge);
	snprintf(key, sizeof(key), "%s.dgid", prefix);
	rl_say_bytes(key, attr.ah_attr.grh.dgid.raw, 16);
}

void fx_say_wc(const char *prefix, const struct ibv_wc *wc)
{
	fx_say(prefix, "status", wc->status);
	fx_say(prefix, "opcode", wc->opcode);
	fx_say(prefix, "wr_id", (long long)wc->wr_id);
	fx_say(prefix, "byte_len", wc->byte_len);
}

void fx_pair_open(struct fx_pair *p)
{
	int i;

	memset(p, 0, sizeof(*p));
	p->ctx = fx_open();
	p->pd = fx_pd(p->ctx);
	for (i = 0; i < 2; i++) {
		p->cq[i] = fx_cq(p->ctx);
		p->qp[i] = fx_qp(p->pd, p->cq[i]);
		p->mr[i] = fx_mr(p->pd, FX_BUF_SIZE);
		p->buf[i] = p->mr[i]->addr;
		fx_to_init(p->qp[i]);
	}
	fx_to_rtr(p->qp[0], p->qp[1]);
	fx_to_rtr(p->qp[1], p->qp[0]);
	fx_to_rts(p->qp[0]);
	fx_to_rts(p->qp[1]);
}

void fx_post_recv(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 100, .sg_list = &sge, .num_sge = 1 }, *bad;
	int ret = ibv_post_recv(qp, &wr, &bad);

	ck_assert_msg(ret == 0, "fixture: ibv_post_recv failed: %s", strerror(ret));
}
RL_HIDDEN(fx_post_recv, 10);

void fx_post_send(struct ibv_qp *qp, uint32_t lkey, void *buf, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = 101,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int ret = ibv_post_send(qp, &wr, &bad);

	ck_assert_msg(ret == 0, "fixture: ibv_post_send failed: %s", strerror(ret));
}
RL_HIDDEN(fx_post_send, 10);

int fx_poll(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms)
{
	struct timespec start, now;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		ck_assert_msg(n >= 0, "fixture: ibv_poll_cq failed: %d", n);
		if (n == 1)
			return 1;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >=
		    timeout_ms)
			return 0;
		usleep(1000);
	}
}

void fx_link_open(struct fx_link *l, const struct fx_peer_in *in)
{
	memset(l, 0, sizeof(*l));
	l->ctx = fx_open();
	l->pd = fx_pd(l->ctx);
	l->cq = fx_cq(l->ctx);
	l->qp = fx_qp(l->pd, l->cq);
	l->mr = fx_mr(l->pd, FX_BUF_SIZE);
	l->buf = l->mr->addr;
	l->fd = rl_oob_connect("127.0.0.1", in->port, FX_OOB_TIMEOUT_MS);
	ck_assert_msg(l->fd >= 0, "fixture: could not reach the test's peer on port %u: %s",
		      in->port, strerror(-l->fd));
}

void fx_link_swap(struct fx_link *l, struct ibv_mr *mr, void *buf, size_t len)
{
	struct lab1_dest ours = {
		.qpn = l->qp->qp_num,
		.psn = fx_psn(l->qp),
		.addr = (uintptr_t)buf,
		.rkey = mr->rkey,
		.len = (uint32_t)len,
	};
	uint8_t wire[LAB1_DEST_WIRE_LEN];
	int ret;

	ck_assert_int_eq(ibv_query_gid(l->ctx, rl_test_ib_port(), rl_test_gid_index(), &ours.gid),
			 0);
	fx_encode_dest(&ours, wire);
	ret = rl_oob_send(l->fd, wire, sizeof(wire), FX_OOB_TIMEOUT_MS);
	if (ret == 0)
		ret = rl_oob_recv(l->fd, wire, sizeof(wire), FX_OOB_TIMEOUT_MS);
	ck_assert_msg(ret == 0, "fixture: no QP description from the test's peer: %s",
		      strerror(-ret));
	ck_assert_msg(fx_decode_dest(wire, &l->peer) == 0,
		      "fixture: the test's peer sent a bad QP description");
}
RL_HIDDEN(fx_link_swap, 9);

void fx_link_tell(struct fx_link *l, char what)
{
	int ret = rl_oob_send(l->fd, &what, 1, FX_OOB_TIMEOUT_MS);

	ck_assert_msg(ret == 0, "fixture: could not tell the test's peer '%c': %s", what,
		      strerror(-ret));
}

void fx_link_ready(struct fx_link *l, bool ok)
{
	fx_link_tell(l, ok ? 'R' : 'X');
}

void fx_link_wait(struct fx_link *l, char what)
{
	char got = 0;
	int ret = rl_oob_recv(l->fd, &got, 1, FX_OOB_TIMEOUT_MS);

	ck_assert_msg(ret == 0 && got == what,
		      "fixture: expected '%c' from the test's peer, got %s", what,
		      ret ? strerror(-ret) : "another byte");
}
