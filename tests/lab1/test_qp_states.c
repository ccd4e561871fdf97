/*
 * test_qp_states.c: Lab 1 steps 5 to 7: each transition. The act moves a
 * QP with the lab's code and holds; the check asks the kernel for its
 * state, remote QP and PSNs (rdma res), and takes from ibv_query_qp, as
 * the act says it, only what the kernel does not show (port, MTU, route,
 * timeouts). Where a step must refuse, a second QP in the right state must
 * be accepted, so the refusal comes from the device. The peer (peer.c)
 * writes into a QP's buffer to show what its attributes really allow.
 */
#include <errno.h>
#include <string.h>

#include "fixture.h"
#include "lab1.h"

#define MAX_RES 8

/* A fresh RC QP in RESET, built with plain verbs, and a second one to aim it at. */
struct qps {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp, *peer;
};

/* The inputs: the bad port, or the peer's PSN; and where the peer is. */
struct states_in {
	uint8_t port;
	uint32_t psn;
	struct fx_peer_in peer;
};

/* Q's QPs; their numbers said as "qpn" and "peer_qpn", before any lab code runs. */
static void make_qps(struct qps *q)
{
	q->ctx = fx_open();
	q->pd = fx_pd(q->ctx);
	q->cq = fx_cq(q->ctx);
	q->qp = fx_qp(q->pd, q->cq);
	q->peer = fx_qp(q->pd, q->cq);
	rl_say_int("qpn", q->qp->qp_num);
	rl_say_int("peer_qpn", q->peer->qp_num);
}

/* What a peer on this device would send us about PEER: QPN, PSN, our own GID. */
static struct lab1_dest peer_dest(struct ibv_qp *peer, uint32_t psn)
{
	struct lab1_dest d = { .qpn = peer->qp_num, .psn = psn };

	ck_assert_int_eq(
		ibv_query_gid(peer->context, rl_test_ib_port(), rl_test_gid_index(), &d.gid), 0);
	return d;
}

/* The kernel has the QP the act said as NAME in state WANT; or fail, saying so. */
static bool in_state(struct rl_case *c, const char *name, const char *want)
{
	struct rl_res all[MAX_RES];
	const struct rl_res *qp = fx_act_qp(c, name, all, MAX_RES);

	return qp && rl_expect(c, strcmp(fx_res_str(qp, "state"), want) == 0,
			       "expected state %s (rdma res show qp), got %s", want,
			       fx_res_str(qp, "state"));
}

/* The lab's function returned 0, as the act said it as NAME. */
static bool returned_0(struct rl_case *c, const char *name, const char *fn)
{
	long long ret = rl_said_int(c, name);

	return rl_expect(c, ret == 0, "expected %s to return 0, got %lld (%s)", fn, ret,
			 strerror((int)-ret));
}

/* The act's buffer holds what the peer wrote, and the peer's write succeeded. */
static void peer_wrote(struct rl_case *c, const struct fx_peer_log *log, const char *hint)
{
	const char *buf = rl_said_str(c, "buf");

	if (rl_expect(c, log->write_status == IBV_WC_SUCCESS,
		      "expected the peer's RDMA write into the QP's buffer to succeed, got \"%s\" "
		      "(%s)%s%s",
		      fx_status_str(log->write_status), hint, log->error[0] ? "; the peer: " : "",
		      log->error))
		rl_expect(c, strcmp(buf, log->sent) == 0,
			  "expected \"%s\" (the peer's) in the buffer, got \"%.64s\"", log->sent,
			  buf);
}

static void peer_writes(struct rl_case *c)
{
	fx_peer_start(&((struct states_in *)c->in)->peer, FX_PEER_WRITE);
}

/* Tell the peer whether L is ready (OK); once it wrote, say what arrived in L's buffer. */
static void let_the_peer_write(struct fx_link *l, bool ok)
{
	fx_link_ready(l, ok);
	if (!ok)
		return;
	fx_link_wait(l, 'D');
	l->buf[FX_TEXT_MAX - 1] = '\0';
	rl_say_str("buf", l->buf);
}

/* Step 5 */

static void to_init(struct rl_case *c)
{
	struct qps q;

	(void)c;
	make_qps(&q);
	rl_say_int("ret", lab1_qp_to_init(q.qp, rl_test_ib_port()));
	fx_say_qp("qp", q.qp);
	rl_hold();
}

static void in_init_on_the_port(struct rl_case *c)
{
	struct rl_res all[MAX_RES];
	const struct rl_res *qp;

	if (!returned_0(c, "ret", "lab1_qp_to_init") || !in_state(c, "qpn", "INIT"))
		return;
	qp = fx_act_qp(c, "qpn", all, MAX_RES);
	if (rl_expect(c, qp && fx_res_num(qp, "port") == rl_test_ib_port(),
		      "expected port_num %u (rdma res show qp), got %s", rl_test_ib_port(),
		      fx_res_str(qp, "port")))
		rl_expect(c, rl_said_int(c, "qp.pkey_index") == 0,
			  "expected pkey_index 0, got %lld", rl_said_int(c, "qp.pkey_index"));
}

RL_GRADED(init_moves_the_qp_to_init_on_the_given_port, .step = 5, .points = 2, .act = to_init,
	  .check = in_init_on_the_port);

/* The lab's INIT on the link's QP, then RTR and RTS with plain verbs; the peer writes. */
static void init_then_peer_writes(struct rl_case *c)
{
	const struct states_in *in = c->in;
	struct fx_link l;
	int ret;

	fx_link_open(&l, &in->peer);
	fx_link_swap(&l, l.mr, l.buf, FX_BUF_SIZE);
	ret = lab1_qp_to_init(l.qp, rl_test_ib_port());
	rl_say_int("ret", ret);
	fx_say_qp("qp", l.qp);
	if (ret == 0) {
		fx_to_rtr_dest(l.qp, &l.peer);
		fx_to_rts(l.qp);
	}
	let_the_peer_write(&l, ret == 0);
}

static void peer_may_write(struct rl_case *c)
{
	struct fx_peer_log log;
	long long access = rl_said_int(c, "qp.access");

	if (!returned_0(c, "ret", "lab1_qp_to_init") ||
	    !rl_expect(c, access & IBV_ACCESS_REMOTE_WRITE,
		       "expected IBV_ACCESS_REMOTE_WRITE in qp_access_flags, got 0x%llx", access)) {
		fx_peer_stop();
		return;
	}
	if (fx_peer_finish(c, &log))
		peer_wrote(c, &log, "is IBV_ACCESS_REMOTE_WRITE in qp_access_flags?");
}

RL_GRADED(init_grants_the_peer_remote_write, .step = 5, .points = 1, .setup = peer_writes,
	  .act = init_then_peer_writes, .check = peer_may_write);

static void choose_bad_port(struct rl_case *c)
{
	((struct states_in *)c->in)->port = (uint8_t)fx_random_between(3, 250);
}

/* INIT on a port the device lacks, then on the environment's port for the second QP. */
static void init_on_bad_port(struct rl_case *c)
{
	const struct states_in *in = c->in;
	struct qps q;

	make_qps(&q);
	rl_say_int("ret", lab1_qp_to_init(q.qp, in->port));
	rl_say_int("good", lab1_qp_to_init(q.peer, rl_test_ib_port()));
	rl_hold();
}

static void refused_the_bad_port(struct rl_case *c)
{
	const struct states_in *in = c->in;
	long long ret = rl_said_int(c, "ret"), good = rl_said_int(c, "good");

	if (!rl_expect(c, ret == -EINVAL, "expected -EINVAL (%d) for port %u, got %lld (%s)",
		       -EINVAL, in->port, ret, strerror((int)-ret)) ||
	    !in_state(c, "qpn", "RESET"))
		return;
	if (rl_expect(c, good == 0,
		      "expected lab1_qp_to_init to return 0 on port %u, got %lld (%s): -EINVAL is "
		      "for a port the device lacks",
		      rl_test_ib_port(), good, strerror((int)-good)))
		in_state(c, "peer_qpn", "INIT");
}

RL_GRADED(init_on_a_port_the_device_lacks_fails_with_einval, .step = 5, .points = 1,
	  .setup = choose_bad_port, .act = init_on_bad_port, .check = refused_the_bad_port);

/* Step 6 */

static void choose_psn(struct rl_case *c)
{
	((struct states_in *)c->in)->psn = fx_random_between(0, 0xffffff);
}

/* The QP in INIT (plain verbs), then INIT -> RTR by the lab's code, aimed at the second QP. */
static void to_rtr(struct rl_case *c)
{
	const struct states_in *in = c->in;
	struct lab1_dest remote;
	struct qps q;

	make_qps(&q);
	remote = peer_dest(q.peer, in->psn);
	fx_to_init(q.qp);
	rl_say_int("ret", lab1_qp_to_rtr(q.qp, rl_test_ib_port(), rl_test_gid_index(), &remote));
	fx_say_qp("qp", q.qp);
	rl_hold();
}

static void aimed_at_the_peer(struct rl_case *c)
{
	const struct states_in *in = c->in;
	struct rl_res all[MAX_RES];
	const struct rl_res *qp;
	long long peer = rl_said_int(c, "peer_qpn");

	if (!returned_0(c, "ret", "lab1_qp_to_rtr") || !in_state(c, "qpn", "RTR"))
		return;
	qp = fx_act_qp(c, "qpn", all, MAX_RES);
	if (qp && rl_expect(c, fx_res_num(qp, "rqpn") == peer,
			    "expected dest_qp_num 0x%llx, got 0x%llx (rdma res show qp)", peer,
			    fx_res_num(qp, "rqpn")))
		rl_expect(c, fx_res_num(qp, "rq-psn") == in->psn,
			  "expected rq_psn 0x%x (the peer's PSN), got 0x%llx (rdma res show qp)",
			  in->psn, fx_res_num(qp, "rq-psn"));
}

RL_GRADED(rtr_aims_the_qp_at_the_peers_qpn_and_psn, .step = 6, .points = 2, .setup = choose_psn,
	  .act = to_rtr, .check = aimed_at_the_peer);

static void at_the_active_mtu(struct rl_case *c)
{
	enum ibv_mtu mtu = fx_device().active_mtu;
	long long got;

	if (!returned_0(c, "ret", "lab1_qp_to_rtr") || !in_state(c, "qpn", "RTR"))
		return;
	got = rl_said_int(c, "qp.path_mtu");
	rl_expect(c, got == mtu, "expected path_mtu %d (the port's active_mtu, %d bytes), got %lld",
		  mtu, 128 << mtu, got);
}

RL_GRADED(rtr_uses_the_ports_active_mtu, .step = 6, .points = 1, .setup = choose_psn, .act = to_rtr,
	  .check = at_the_active_mtu);

/* The link's QP in INIT (plain verbs), then the lab's RTR aimed at the peer; the peer writes. */
static void rtr_then_peer_writes(struct rl_case *c)
{
	const struct states_in *in = c->in;
	struct fx_link l;
	int ret;

	fx_link_open(&l, &in->peer);
	rl_say_int("qpn", l.qp->qp_num);
	fx_link_swap(&l, l.mr, l.buf, FX_BUF_SIZE);
	fx_to_init(l.qp);
	ret = lab1_qp_to_rtr(l.qp, rl_test_ib_port(), rl_test_gid_index(), &l.peer);
	rl_say_int("ret", ret);
	fx_say_qp("qp", l.qp);
	let_the_peer_write(&l, ret == 0);
	rl_hold();
}

static void routed_by_gid(struct rl_case *c)
{
	struct fx_device dev = fx_device();
	char want[RL_GID_STR_LEN], got[RL_GID_STR_LEN];
	union ibv_gid dgid = { 0 };
	struct fx_peer_log log;
	const void *said;
	size_t n;

	said = rl_said_bytes(c, "qp.dgid", &n);
	memcpy(dgid.raw, said, n == 16 ? 16 : 0);
	rl_gid_str(&dev.gid, want);
	rl_gid_str(&dgid, got);
	if (!returned_0(c, "ret", "lab1_qp_to_rtr") || !in_state(c, "qpn", "RTR") ||
	    !rl_expect(c, rl_said_int(c, "qp.is_global") == 1,
		       "expected ah_attr.is_global 1 (RoCE needs a GRH), got %lld",
		       rl_said_int(c, "qp.is_global")) ||
	    !rl_expect(c, n == 16 && memcmp(dgid.raw, dev.gid.raw, 16) == 0,
		       "expected dgid %s (the peer's GID), got %s", want, got) ||
	    !rl_expect(c, rl_said_int(c, "qp.sgid_index") == rl_test_gid_index(),
		       "expected sgid_index %d (RDMALAB_GID_INDEX), got %lld", rl_test_gid_index(),
		       rl_said_int(c, "qp.sgid_index")) ||
	    !rl_expect(c, rl_said_int(c, "qp.ah_port") == rl_test_ib_port(),
		       "expected ah_attr.port_num %u, got %lld", rl_test_ib_port(),
		       rl_said_int(c, "qp.ah_port"))) {
		fx_peer_stop();
		return;
	}
	/* The route works both ways: the peer's write arrives, and its ACK goes back. */
	if (fx_peer_finish(c, &log))
		peer_wrote(c, &log, "the QP's address vector must lead back to the peer");
}

RL_GRADED(rtr_routes_by_gid_from_the_chosen_index, .step = 6, .points = 2, .setup = peer_writes,
	  .act = rtr_then_peer_writes, .check = routed_by_gid);

/* RTR straight from RESET, then from INIT for the second QP (aimed at the first). */
static void rtr_from_reset(struct rl_case *c)
{
	const struct states_in *in = c->in;
	struct lab1_dest remote;
	struct qps q;

	make_qps(&q);
	remote = peer_dest(q.peer, in->psn);
	rl_say_int("ret", lab1_qp_to_rtr(q.qp, rl_test_ib_port(), rl_test_gid_index(), &remote));
	remote = peer_dest(q.qp, in->psn);
	fx_to_init(q.peer);
	rl_say_int("good", lab1_qp_to_rtr(q.peer, rl_test_ib_port(), rl_test_gid_index(), &remote));
	rl_hold();
}

static void refused_from_reset(struct rl_case *c)
{
	long long ret = rl_said_int(c, "ret"), good = rl_said_int(c, "good");

	if (!rl_expect(c, ret == -EINVAL, "expected -EINVAL (%d) for RESET -> RTR, got %lld (%s)",
		       -EINVAL, ret, strerror((int)-ret)) ||
	    !in_state(c, "qpn", "RESET"))
		return;
	if (rl_expect(c, good == 0,
		      "expected lab1_qp_to_rtr to return 0 for INIT -> RTR, got %lld (%s): -EINVAL "
		      "is for a QP not in INIT",
		      good, strerror((int)-good)))
		in_state(c, "peer_qpn", "RTR");
}

RL_GRADED(rtr_straight_from_reset_fails_with_einval, .step = 6, .points = 1, .setup = choose_psn,
	  .act = rtr_from_reset, .check = refused_from_reset);

/* INIT -> RTR with plain verbs but without IBV_QP_AV, then with the lab's code. */
static void rtr_without_av(struct rl_case *c)
{
	const struct states_in *in = c->in;
	struct ibv_port_attr port;
	struct lab1_dest remote;
	struct ibv_qp_attr attr;
	struct qps q;

	make_qps(&q);
	remote = peer_dest(q.peer, in->psn);
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
	rl_say_int("without_av",
		   ibv_modify_qp(q.qp, &attr,
				 IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));
	rl_say_int("ret", lab1_qp_to_rtr(q.qp, rl_test_ib_port(), rl_test_gid_index(), &remote));
	rl_hold();
}

static void the_lab_gives_the_av(struct rl_case *c)
{
	long long without = rl_said_int(c, "without_av");

	if (rl_expect(c, without == EINVAL,
		      "expected EINVAL from INIT -> RTR without IBV_QP_AV, got %lld", without) &&
	    returned_0(c, "ret", "lab1_qp_to_rtr"))
		in_state(c, "qpn", "RTR");
}

RL_GRADED(rtr_without_the_address_vector_fails_where_lab1_qp_to_rtr_succeeds, .step = 6,
	  .points = 1, .setup = choose_psn, .act = rtr_without_av, .check = the_lab_gives_the_av);

/* Step 7 */

/* The QP in RTR (plain verbs), then RTR -> RTS by the lab's code from IN's PSN. */
static void to_rts(struct rl_case *c)
{
	const struct states_in *in = c->in;
	struct qps q;

	make_qps(&q);
	fx_to_init(q.qp);
	fx_to_rtr(q.qp, q.peer);
	rl_say_int("ret", lab1_qp_to_rts(q.qp, in->psn));
	fx_say_qp("qp", q.qp);
	rl_hold();
}

static void sends_from_the_psn(struct rl_case *c)
{
	const struct states_in *in = c->in;
	struct rl_res all[MAX_RES];
	const struct rl_res *qp;

	if (!returned_0(c, "ret", "lab1_qp_to_rts") || !in_state(c, "qpn", "RTS"))
		return;
	qp = fx_act_qp(c, "qpn", all, MAX_RES);
	if (qp)
		rl_expect(c, fx_res_num(qp, "sq-psn") == in->psn,
			  "expected sq_psn 0x%x, got 0x%llx (rdma res show qp)", in->psn,
			  fx_res_num(qp, "sq-psn"));
}

RL_GRADED(rts_sends_from_the_psn_given, .step = 7, .points = 2, .setup = choose_psn, .act = to_rts,
	  .check = sends_from_the_psn);

static void finite_timeouts(struct rl_case *c)
{
	long long timeout = rl_said_int(c, "qp.timeout"), retry = rl_said_int(c, "qp.retry_cnt"),
		  rnr = rl_said_int(c, "qp.rnr_retry");

	if (!returned_0(c, "ret", "lab1_qp_to_rts") || !in_state(c, "qpn", "RTS"))
		return;
	if (rl_expect(c, timeout >= 1 && timeout <= 31,
		      "expected an ACK timeout from 1 to 31 (0 waits for ever), got %lld",
		      timeout) &&
	    rl_expect(c, retry >= 1 && retry <= 7, "expected retry_cnt from 1 to 7, got %lld",
		      retry))
		rl_expect(c, rnr >= 1 && rnr <= 6,
			  "expected rnr_retry from 1 to 6 (7 retries for ever and hides a missing "
			  "receive), got %lld",
			  rnr);
}

RL_GRADED(rts_sets_finite_timeouts_and_retries, .step = 7, .points = 1, .setup = choose_psn,
	  .act = to_rts, .check = finite_timeouts);

/* RTS straight from INIT, then from RTR for the second QP. */
static void rts_from_init(struct rl_case *c)
{
	const struct states_in *in = c->in;
	struct qps q;

	make_qps(&q);
	fx_to_init(q.qp);
	rl_say_int("ret", lab1_qp_to_rts(q.qp, in->psn));
	fx_to_init(q.peer);
	fx_to_rtr(q.peer, q.qp);
	rl_say_int("good", lab1_qp_to_rts(q.peer, in->psn));
	rl_hold();
}

static void refused_from_init(struct rl_case *c)
{
	long long ret = rl_said_int(c, "ret"), good = rl_said_int(c, "good");

	if (!rl_expect(c, ret == -EINVAL, "expected -EINVAL (%d) for INIT -> RTS, got %lld (%s)",
		       -EINVAL, ret, strerror((int)-ret)) ||
	    !in_state(c, "qpn", "INIT"))
		return;
	if (rl_expect(c, good == 0,
		      "expected lab1_qp_to_rts to return 0 for RTR -> RTS, got %lld (%s): -EINVAL "
		      "is for a QP not in RTR",
		      good, strerror((int)-good)))
		in_state(c, "peer_qpn", "RTS");
}

RL_GRADED(rts_straight_from_init_fails_with_einval, .step = 7, .points = 1, .setup = choose_psn,
	  .act = rts_from_init, .check = refused_from_init);
