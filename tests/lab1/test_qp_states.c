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
#include <unistd.h>

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

/* A transition of the QP state machine: the lab's function, the states, the step. */
struct move {
	const char *fn, *from, *to, *verb;
	int step;
};

static const struct move to_init_move = { "lab1_qp_to_init", "RESET", "INIT", "INIT", 5 };
static const struct move to_rtr_move = { "lab1_qp_to_rtr", "INIT", "RTR", "RTR", 6 };
static const struct move to_rts_move = { "lab1_qp_to_rts", "RTR", "RTS", "RTS", 7 };

/*
 * M's function returned 0, as the act said it as NAME, for a QP the act had
 * put in M's from-state with plain verbs. -EINVAL there is the verb refusing
 * the attributes or the mask: the message says where to look.
 */
static bool moved(struct rl_case *c, const char *name, const struct move *m)
{
	long long ret = rl_said_int(c, name);

	if (ret == -EINVAL)
		return rl_expect(
			c, false,
			"expected %s to return 0 for %s -> %s, got %lld (%s) with the QP "
			"in %s: the mask lacks a flag this transition requires or names "
			"one it does not take (the table in man ibv_modify_qp), or a value "
			"is refused; see docs/lab1.md#step-%d, row 'ibv_modify_qp %s ...: "
			"Invalid argument' of docs/lab1.md#common-errors-and-fixes",
			m->fn, m->from, m->to, ret, strerror(EINVAL), m->from, m->step, m->verb);
	return rl_expect(c, ret == 0,
			 "expected %s to return 0, got %lld (%s): see docs/lab1.md#step-%d", m->fn,
			 ret, strerror((int)-ret), m->step);
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

	if (!moved(c, "ret", &to_init_move) || !in_state(c, "qpn", "INIT"))
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

/* The peer writes, then reads: the link's MR allows both, so only the QP can refuse either. */
static void peer_writes_then_reads(struct rl_case *c)
{
	fx_peer_start(&((struct states_in *)c->in)->peer, FX_PEER_WRITE | FX_PEER_READ);
}

static void peer_may_write_only(struct rl_case *c)
{
	struct fx_peer_log log;

	if (!moved(c, "ret", &to_init_move)) {
		fx_peer_stop();
		return;
	}
	if (!fx_peer_finish(c, &log))
		return;
	peer_wrote(c, &log,
		   "the MR allows it, so the QP refused: what does this program's peer do "
		   "through the QP? see docs/lab1.md#step-5");
	if (!rl_failed(c))
		rl_expect(c, log.read_status != IBV_WC_SUCCESS,
			  "expected the peer's RDMA read through the QP to be refused, got \"%s\" "
			  "(qp_access_flags 0x%llx): no peer of this program reads, and a QP that "
			  "allows it lets a peer read any MR that allows it too; see "
			  "docs/lab1.md#step-5",
			  fx_status_str(log.read_status), rl_said_int(c, "qp.access"));
}

RL_GRADED(init_grants_the_peer_remote_write_and_nothing_more, .step = 5, .points = 1,
	  .setup = peer_writes_then_reads, .act = init_then_peer_writes,
	  .check = peer_may_write_only);

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
	long long ret = rl_said_int(c, "ret");

	if (!rl_expect(c, ret == -EINVAL, "expected -EINVAL (%d) for port %u, got %lld (%s)",
		       -EINVAL, in->port, ret, strerror((int)-ret)) ||
	    !in_state(c, "qpn", "RESET"))
		return;
	if (moved(c, "good", &to_init_move))
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

	if (!moved(c, "ret", &to_rtr_move) || !in_state(c, "qpn", "RTR"))
		return;
	qp = fx_act_qp(c, "qpn", all, MAX_RES);
	if (qp &&
	    rl_expect(c, fx_res_num(qp, "rqpn") == peer,
		      "expected dest_qp_num 0x%llx (the peer's QPN), got 0x%llx (rdma res show "
		      "qp): see docs/lab1.md#step-6",
		      peer, fx_res_num(qp, "rqpn")))
		rl_expect(
			c, fx_res_num(qp, "rq-psn") == in->psn,
			"expected rq_psn 0x%x (the peer's PSN), got 0x%llx (rdma res show qp): see "
			"docs/lab1.md#step-6",
			in->psn, fx_res_num(qp, "rq-psn"));
}

RL_GRADED(rtr_aims_the_qp_at_the_peers_qpn_and_psn, .step = 6, .points = 2, .setup = choose_psn,
	  .act = to_rtr, .check = aimed_at_the_peer);

static void at_the_active_mtu(struct rl_case *c)
{
	enum ibv_mtu mtu = fx_device().active_mtu;
	long long got;

	if (!moved(c, "ret", &to_rtr_move) || !in_state(c, "qpn", "RTR"))
		return;
	got = rl_said_int(c, "qp.path_mtu");
	rl_expect(c, got == mtu,
		  "expected path_mtu %d (the port's active_mtu, %d bytes), got %lld: see "
		  "docs/lab1.md#step-6",
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
	if (!moved(c, "ret", &to_rtr_move) || !in_state(c, "qpn", "RTR") ||
	    !rl_expect(c, rl_said_int(c, "qp.is_global") == 1,
		       "expected ah_attr.is_global 1 (RoCE needs a GRH), got %lld: see "
		       "docs/lab1.md#step-6",
		       rl_said_int(c, "qp.is_global")) ||
	    !rl_expect(c, n == 16 && memcmp(dgid.raw, dev.gid.raw, 16) == 0,
		       "expected dgid %s (the peer's GID), got %s: see docs/lab1.md#step-6", want,
		       got) ||
	    !rl_expect(c, rl_said_int(c, "qp.sgid_index") == rl_test_gid_index(),
		       "expected sgid_index %d (the index given), got %lld: see docs/lab1.md#step-6",
		       rl_test_gid_index(), rl_said_int(c, "qp.sgid_index")) ||
	    !rl_expect(c, rl_said_int(c, "qp.ah_port") == rl_test_ib_port(),
		       "expected ah_attr.port_num %u, got %lld: see docs/lab1.md#step-6",
		       rl_test_ib_port(), rl_said_int(c, "qp.ah_port"))) {
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
	long long ret = rl_said_int(c, "ret");

	if (!rl_expect(c, ret == -EINVAL, "expected -EINVAL (%d) for RESET -> RTR, got %lld (%s)",
		       -EINVAL, ret, strerror((int)-ret)) ||
	    !in_state(c, "qpn", "RESET"))
		return;
	if (moved(c, "good", &to_rtr_move))
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
	    moved(c, "ret", &to_rtr_move))
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

	if (!moved(c, "ret", &to_rts_move) || !in_state(c, "qpn", "RTS"))
		return;
	qp = fx_act_qp(c, "qpn", all, MAX_RES);
	if (qp)
		rl_expect(
			c, fx_res_num(qp, "sq-psn") == in->psn,
			"expected sq_psn 0x%x (the PSN given), got 0x%llx (rdma res show qp): see "
			"docs/lab1.md#step-7",
			in->psn, fx_res_num(qp, "sq-psn"));
}

RL_GRADED(rts_sends_from_the_psn_given, .step = 7, .points = 2, .setup = choose_psn, .act = to_rts,
	  .check = sends_from_the_psn);

/* How long an RC sender waits before it reports a lost peer, in ms, by the
 * specification: 4.096 us x 2^TIMEOUT for each of its RETRY + 1 tries. */
static double lost_peer_ms(long long timeout, long long retry)
{
	return 4.096e-3 * (double)(1LL << timeout) * (double)(retry + 1);
}

static void finite_timeouts(struct rl_case *c)
{
	long long timeout = rl_said_int(c, "qp.timeout"), retry = rl_said_int(c, "qp.retry_cnt"),
		  rnr = rl_said_int(c, "qp.rnr_retry");

	if (!moved(c, "ret", &to_rts_move) || !in_state(c, "qpn", "RTS"))
		return;
	if (rl_expect(c, timeout >= 1 && timeout <= 31,
		      "expected an ACK timeout from 1 to 31, got %lld: 0 waits for ever, and a "
		      "lost peer is never noticed; see docs/lab1.md#step-7",
		      timeout) &&
	    rl_expect(c, retry >= 1 && retry <= 7,
		      "expected retry_cnt from 1 to 7, got %lld: see docs/lab1.md#step-7", retry) &&
	    rl_expect(c, lost_peer_ms(timeout, retry) <= LAB1_WC_TIMEOUT_MS / 2,
		      "expected a lost peer reported within %d ms, half the %d ms the program "
		      "waits for a completion, got %.0f ms by the specification's arithmetic "
		      "(timeout %lld: 4.096 us x 2^%lld a try; retry_cnt %lld: %lld tries); see "
		      "docs/lab1.md#step-7",
		      LAB1_WC_TIMEOUT_MS / 2, LAB1_WC_TIMEOUT_MS, lost_peer_ms(timeout, retry),
		      timeout, timeout, retry, retry + 1))
		rl_expect(c, rnr >= 1 && rnr <= 6,
			  "expected rnr_retry from 1 to 6, got %lld: %s; see docs/lab1.md#step-7",
			  rnr,
			  rnr == 0 ?
				  "0 gives up at the first RNR NAK, so a receive posted a moment "
				  "late fails the send" :
				  "7 retries for ever and hides a missing receive");
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
	long long ret = rl_said_int(c, "ret");

	if (!rl_expect(c, ret == -EINVAL, "expected -EINVAL (%d) for INIT -> RTS, got %lld (%s)",
		       -EINVAL, ret, strerror((int)-ret)) ||
	    !in_state(c, "qpn", "INIT"))
		return;
	if (moved(c, "good", &to_rts_move))
		in_state(c, "peer_qpn", "RTS");
}

RL_GRADED(rts_straight_from_init_fails_with_einval, .step = 7, .points = 1, .setup = choose_psn,
	  .act = rts_from_init, .check = refused_from_init);

/*
 * The peer is slow, then late, then absent. A slow peer: its QP reaches RTR
 * only SLOW_PEER_MS after our RDMA write went out, so the write's first
 * packets go unanswered and only a resend within the ACK timeout and retry
 * count can reach it. A late receiver: it posts its receive LATE_RECV_MS
 * after our SEND, and tells a sender to wait 163.84 ms (min_rnr_timer 28)
 * before each retry. An absent receiver never posts one.
 */
#define SLOW_PEER_MS 200
#define LATE_RECV_MS 20
#define PEER_RNR_TIMER 28 /* 163.84 ms */
#define GIVE_UP_MS 4000

/* Post on QP one signaled request of OPCODE (wr_id ID) from MR into PEER_MR. */
static void post_one(struct ibv_qp *qp, struct ibv_mr *mr, struct ibv_mr *peer_mr,
		     enum ibv_wr_opcode opcode, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)mr->addr, .length = 16, .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = opcode,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)peer_mr->addr, .rkey = peer_mr->rkey },
	},
			   *bad;

	ck_assert_msg(ibv_post_send(qp, &wr, &bad) == 0, "fixture: ibv_post_send failed");
}

/* Say as NAME the status of the next completion on CQ within MS, or -1 when none came. */
static int say_status(const char *name, struct ibv_cq *cq, int ms)
{
	struct ibv_wc wc;
	int status = fx_poll(cq, &wc, ms) ? (int)wc.status : -1;

	rl_say_int(name, status);
	return status;
}

/*
 * The receiver to RTR, aimed at QP, telling senders to wait PEER_RNR_TIMER
 * before each retry. A responder needs no RTS; plain verbs here, since the
 * fixture's RTS is step 7's and hidden in its acts.
 */
static void receiver_up(struct ibv_qp *peer, struct ibv_qp *qp)
{
	struct ibv_port_attr port;
	struct ibv_qp_attr attr;
	int ret;

	ck_assert_int_eq(ibv_query_port(peer->context, rl_test_ib_port(), &port), 0);
	attr = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR,
		.path_mtu = port.active_mtu,
		.dest_qp_num = qp->qp_num,
		.rq_psn = fx_psn(qp),
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = PEER_RNR_TIMER,
		.ah_attr = {
			.is_global = 1,
			.port_num = rl_test_ib_port(),
			.grh = { .sgid_index = rl_test_gid_index(), .hop_limit = 1 },
		},
	};
	ck_assert_int_eq(ibv_query_gid(peer->context, rl_test_ib_port(), rl_test_gid_index(),
				       &attr.ah_attr.grh.dgid),
			 0);
	ret = ibv_modify_qp(peer, &attr,
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER);
	ck_assert_msg(ret == 0, "fixture: the receiver's INIT->RTR failed: %s", strerror(ret));
}

/* The lab's RTS on a QP aimed at a peer of the act's, which is slow, then late, then absent. */
static void rts_then_slow_late_absent(struct rl_case *c)
{
	struct qps q;
	struct ibv_mr *mr, *peer_mr;
	int ret;

	(void)c;
	q.ctx = fx_open();
	q.pd = fx_pd(q.ctx);
	q.qp = fx_qp(q.pd, fx_cq(q.ctx));
	q.peer = fx_qp(q.pd,
		       fx_cq(q.ctx)); /* a CQ of its own: the sender's completions stay apart */
	mr = fx_mr(q.pd, FX_BUF_SIZE);
	peer_mr = fx_mr(q.pd, FX_BUF_SIZE);
	fx_to_init(q.qp);
	fx_to_init(q.peer);
	fx_to_rtr(q.qp, q.peer);
	ret = lab1_qp_to_rts(q.qp, fx_psn(q.qp));
	rl_say_int("ret", ret);
	fx_say_qp("qp", q.qp);
	if (ret)
		return;
	post_one(q.qp, mr, peer_mr, IBV_WR_RDMA_WRITE, 1);
	usleep(SLOW_PEER_MS * 1000);
	receiver_up(q.peer, q.qp);
	if (say_status("slow", q.qp->send_cq, GIVE_UP_MS) != IBV_WC_SUCCESS)
		return;
	post_one(q.qp, mr, peer_mr, IBV_WR_SEND, 2);
	usleep(LATE_RECV_MS * 1000);
	fx_post_recv(q.peer, peer_mr, peer_mr->addr, 64);
	if (say_status("late", q.qp->send_cq, GIVE_UP_MS) != IBV_WC_SUCCESS)
		return;
	post_one(q.qp, mr, peer_mr, IBV_WR_SEND, 3);
	say_status("absent", q.qp->send_cq, GIVE_UP_MS);
}

static void rides_out_slow_peers_and_reports_absent_ones(struct rl_case *c)
{
	long long timeout = rl_said_int(c, "qp.timeout"), retry = rl_said_int(c, "qp.retry_cnt"),
		  rnr = rl_said_int(c, "qp.rnr_retry"), status;

	if (!moved(c, "ret", &to_rts_move))
		return;
	status = rl_said_int(c, "slow");
	if (!rl_expect(c, status == IBV_WC_SUCCESS,
		       "expected an RDMA write to a peer that is %d ms slow to answer to succeed, "
		       "got \"%s\" (timeout %lld, retry_cnt %lld): %s; see docs/lab1.md#step-7",
		       SLOW_PEER_MS, fx_status_str(status), timeout, retry,
		       status < 0 ?
			       "nothing completed: the packet the slow peer dropped was never "
			       "sent again (an ACK timeout of 0 waits for ever)" :
			       "the sender gave up before the peer could answer; how long does "
			       "it wait in all before it gives up?"))
		return;
	status = rl_said_int(c, "late");
	if (!rl_expect(c, status == IBV_WC_SUCCESS,
		       "expected a SEND to a receiver that posts its receive %d ms late to succeed "
		       "(it asks for 163.84 ms between tries), got \"%s\" (rnr_retry %lld): the "
		       "sender gave up at the first receiver-not-ready NAK; see docs/lab1.md#step-7",
		       LATE_RECV_MS, fx_status_str(status), rnr))
		return;
	status = rl_said_int(c, "absent");
	rl_expect(c, status == IBV_WC_RNR_RETRY_EXC_ERR,
		  "expected a SEND to a receiver that never posts a receive to fail with \"%s\" "
		  "within %d ms, got \"%s\" (rnr_retry %lld): a sender that retries for ever hides "
		  "a missing receive instead of reporting it; see docs/lab1.md#step-7",
		  ibv_wc_status_str(IBV_WC_RNR_RETRY_EXC_ERR), GIVE_UP_MS, fx_status_str(status),
		  rnr);
}

RL_GRADED(rts_rides_out_a_slow_peer_and_a_late_receive_and_reports_a_missing_one, .step = 7,
	  .points = 2, .act = rts_then_slow_late_absent,
	  .check = rides_out_slow_peers_and_reports_absent_ones);
