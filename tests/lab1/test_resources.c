/*
 * test_resources.c: Lab 1 steps 1 to 4: the PD, the MR, the CQ and the QP.
 * The act makes them with the lab's code and holds; the check asks the
 * kernel what the act's process holds (rdma res), and the peer (peer.c)
 * writes, sends and reads to the MR, proving its keys by using them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "lab1.h"

#define MAX_RES 8

/* The one object of KIND the act holds, into R; false (and a failure) when it holds N others. */
static bool only_one(struct rl_case *c, const char *kind, struct rl_res *r)
{
	struct rl_res all[MAX_RES];
	int n = fx_res(c, kind, all, MAX_RES);

	if (n < 0)
		return false;
	if (!rl_expect(c, n == 1,
		       "expected 1 %s of the test's process in 'rdma res show %s', got %d", kind,
		       kind, n))
		return false;
	*r = all[0];
	return true;
}

/* Step 1 */

/* A PD from the lab's code, beside a CQ of the fixture's on the same context. */
static void alloc_pd(struct rl_case *c)
{
	struct ibv_context *ctx = fx_open();
	struct ibv_pd *pd;

	(void)c;
	fx_cq(ctx);
	rl_say_int("ctx", (long long)(uintptr_t)ctx);
	pd = lab1_alloc_pd(ctx);
	rl_say_int("pd", pd != NULL);
	if (!pd)
		return;
	rl_say_int("pd.context", (long long)(uintptr_t)pd->context);
	rl_hold();
}

/* The kernel lists one PD, on the context of the fixture's CQ (the context given). */
static void pd_on_the_context(struct rl_case *c)
{
	struct rl_res pd, cq;

	if (!fx_made(c, "pd", "a PD from lab1_alloc_pd", 1))
		return;
	if (!rl_expect(c, rl_said_int(c, "pd.context") == rl_said_int(c, "ctx"),
		       "expected pd->context %#llx (the context given), got %#llx",
		       rl_said_int(c, "ctx"), rl_said_int(c, "pd.context")))
		return;
	if (!only_one(c, "pd", &pd) || !only_one(c, "cq", &cq))
		return;
	rl_expect(c, strcmp(fx_res_str(&pd, "ctxn"), fx_res_str(&cq, "ctxn")) == 0,
		  "expected the PD on the context given (ctxn %s in rdma res), got ctxn %s",
		  fx_res_str(&cq, "ctxn"), fx_res_str(&pd, "ctxn"));
}

RL_GRADED(pd_is_allocated_on_the_given_context, .step = 1, .points = 2, .act = alloc_pd,
	  .check = pd_on_the_context);

/* Two PDs from the lab's code, the first deallocated again with plain verbs. */
static void alloc_two_pds_free_one(struct rl_case *c)
{
	struct ibv_context *ctx = fx_open();
	struct ibv_pd *first = lab1_alloc_pd(ctx), *second = first ? lab1_alloc_pd(ctx) : NULL;

	(void)c;
	rl_say_int("pd", first && second);
	if (!first || !second)
		return;
	rl_say_int("dealloc", ibv_dealloc_pd(first));
	rl_hold();
}

static void one_pd_left(struct rl_case *c)
{
	struct rl_res pd[MAX_RES];
	long long ret;
	int n;

	if (!fx_made(c, "pd", "a PD from lab1_alloc_pd", 1))
		return;
	ret = rl_said_int(c, "dealloc");
	if (!rl_expect(c, ret == 0,
		       "expected ibv_dealloc_pd of the first PD to return 0, got %lld (%s)", ret,
		       strerror((int)ret)))
		return;
	n = fx_res(c, "pd", pd, MAX_RES);
	if (n >= 0)
		rl_expect(c, n == 1,
			  "expected 1 PD in 'rdma resource show' (2 from lab1_alloc_pd, then 1 "
			  "deallocated), got %d",
			  n);
}

RL_GRADED(pd_is_counted_by_rdma_resource_until_deallocated, .step = 1, .points = 1,
	  .act = alloc_two_pds_free_one, .check = one_pd_left);

/* Step 2 */

struct mr_in {
	uint32_t offset, len; /* the part of a buffer to register */
	struct fx_peer_in peer;
};

static void choose_part(struct rl_case *c)
{
	struct mr_in *in = c->in;

	in->offset = fx_random_between(1, FX_BUF_SIZE / 2);
	in->len = fx_random_between(1, FX_BUF_SIZE / 2);
}

/* The lab's MR over IN's part of a buffer, in a PD of the fixture's. */
static void reg_part(struct rl_case *c)
{
	const struct mr_in *in = c->in;
	struct ibv_pd *pd = fx_pd(fx_open());
	char *buf = calloc(1, FX_BUF_SIZE);
	struct ibv_mr *mr;

	ck_assert(buf);
	rl_say_int("buf", (long long)(uintptr_t)(buf + in->offset));
	rl_say_int("pd", (long long)(uintptr_t)pd);
	mr = lab1_reg_mr(pd, buf + in->offset, in->len);
	rl_say_int("mr", mr != NULL);
	if (!mr)
		return;
	rl_say_int("mr.addr", (long long)(uintptr_t)mr->addr);
	rl_say_int("mr.length", (long long)mr->length);
	rl_say_int("mr.pd", (long long)(uintptr_t)mr->pd);
	rl_hold();
}

static void mr_is_the_part(struct rl_case *c)
{
	const struct mr_in *in = c->in;
	struct rl_res mr, pd;
	long long len;

	if (!fx_made(c, "mr", "an MR from lab1_reg_mr", 2))
		return;
	if (!rl_expect(c, rl_said_int(c, "mr.addr") == rl_said_int(c, "buf"),
		       "expected mr->addr %#llx, got %#llx", rl_said_int(c, "buf"),
		       rl_said_int(c, "mr.addr")) ||
	    !rl_expect(c, rl_said_int(c, "mr.length") == in->len,
		       "expected mr->length %u, got %lld", in->len, rl_said_int(c, "mr.length")) ||
	    !rl_expect(c, rl_said_int(c, "mr.pd") == rl_said_int(c, "pd"),
		       "expected mr->pd to be the PD given, got another"))
		return;
	if (!only_one(c, "mr", &mr) || !only_one(c, "pd", &pd))
		return;
	len = fx_res_num(&mr, "mrlen");
	if (rl_expect(c, len == in->len,
		      "expected the kernel's MR to be %u bytes (rdma res mrlen), got %lld", in->len,
		      len))
		rl_expect(c, fx_res_num(&mr, "pdn") == fx_res_num(&pd, "pdn"),
			  "expected the MR in the PD given (pdn %s in rdma res), got pdn %s",
			  fx_res_str(&pd, "pdn"), fx_res_str(&mr, "pdn"));
}

RL_GRADED(mr_covers_exactly_the_buffer_given, .step = 2, .points = 2, .setup = choose_part,
	  .act = reg_part, .check = mr_is_the_part);

/*
 * The tests below link the lab's MR to the peer (peer.c), which proves its
 * keys by using them: the kernel shows an MR's rkey and lkey only to
 * CAP_NET_ADMIN, and the grader's checks run without it. IN's part is long
 * enough for the peer's texts and shorter than the link's own MR, so the
 * kernel's MR of that length in the act's PD is the lab's.
 */
static void choose_part_for_the_peer(struct rl_case *c, unsigned what)
{
	struct mr_in *in = c->in;

	in->offset = fx_random_between(1, FX_BUF_SIZE / 2);
	in->len = fx_random_between(FX_TEXT_MAX, FX_BUF_SIZE / 2);
	fx_peer_start(&in->peer, what);
}

static void peer_writes(struct rl_case *c)
{
	choose_part_for_the_peer(c, FX_PEER_WRITE);
}

static void peer_sends(struct rl_case *c)
{
	choose_part_for_the_peer(c, FX_PEER_SEND);
}

/* It writes first: a write that works proves that the rkey the read is refused with is the MR's. */
static void peer_writes_then_reads(struct rl_case *c)
{
	choose_part_for_the_peer(c, FX_PEER_WRITE | FX_PEER_READ);
}

static void peer_writes_then_receives(struct rl_case *c)
{
	choose_part_for_the_peer(c, FX_PEER_WRITE | FX_PEER_RECV);
}

/*
 * The lab's MR over IN's part of a buffer, linked to the peer: the peer is
 * told that part and the MR's rkey, and the link's QP goes to RTS with
 * plain verbs. RECV: a receive into the lab's MR is posted first. Then the
 * peer does its part; ECHO: the act SENDs back what the peer wrote, from
 * the lab's MR with its lkey. The act says what arrived, and holds.
 */
static void mr_for_the_peer(struct rl_case *c, bool recv, bool echo)
{
	const struct mr_in *in = c->in;
	char *buf = calloc(1, FX_BUF_SIZE), *part;
	struct fx_link l;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	uint32_t lkey;

	ck_assert(buf);
	part = buf + in->offset;
	fx_link_open(&l, &in->peer);
	mr = lab1_reg_mr(l.pd, part, in->len);
	rl_say_int("mr", mr != NULL);
	if (!mr)
		return;
	lkey = mr->lkey;
	rl_say_int("mr.rkey", mr->rkey);
	rl_say_int("mr.lkey", lkey);
	fx_link_swap(&l, mr, part, in->len);
	fx_to_init(l.qp);
	if (recv)
		fx_post_recv(l.qp, mr, part, in->len);
	fx_to_rtr_dest(l.qp, &l.peer);
	fx_to_rts(l.qp);
	fx_link_ready(&l, true);
	fx_link_wait(&l, 'D');
	if (recv)
		rl_say_int("recv.status",
			   fx_poll(l.cq, &wc, FX_WC_TIMEOUT_MS) ? (int)wc.status : -1);
	part[FX_TEXT_MAX - 1] = '\0';
	if (echo) {
		fx_post_send(l.qp, lkey, part, (uint32_t)strlen(part) + 1);
		rl_say_int("send.status",
			   fx_poll(l.cq, &wc, FX_WC_TIMEOUT_MS) ? (int)wc.status : -1);
	}
	rl_say_str("buf", part);
	rl_hold();
}

/*
 * Whether the kernel lists an MR of the act of IN's length in the act's one
 * PD (the link's MR is longer); a failure when it does not.
 */
static bool act_mr(struct rl_case *c)
{
	const struct mr_in *in = c->in;
	struct rl_res all[MAX_RES], pd;
	const struct rl_res *mr = NULL;
	int n, i;

	if (!only_one(c, "pd", &pd))
		return false;
	n = fx_res(c, "mr", all, MAX_RES);
	for (i = 0; i < n && i < MAX_RES && !mr; i++)
		if (fx_res_num(&all[i], "mrlen") == in->len &&
		    fx_res_num(&all[i], "pdn") == fx_res_num(&pd, "pdn"))
			mr = &all[i];
	if (n >= 0)
		rl_expect(c, mr != NULL,
			  "expected the kernel to list an MR of %u bytes in the PD given (pdn %s) "
			  "for the test's process (rdma res show mr), it lists %d others",
			  in->len, fx_res_str(&pd, "pdn"), n);
	return mr != NULL;
}

/* The peer's RDMA write landed in the buffer, with the rkey the act said: it is the MR's. */
static bool peer_wrote(struct rl_case *c, const struct fx_peer_log *log)
{
	long long rkey = rl_said_int(c, "mr.rkey");
	const char *buf = rl_said_str(c, "buf");

	return rl_expect(c, log->write_status == IBV_WC_SUCCESS,
			 "expected the peer's RDMA write to succeed, got \"%s\" (what lets a peer "
			 "write into an MR? see docs/lab1.md#step-2)%s%s",
			 fx_status_str(log->write_status), log->error[0] ? "; the peer: " : "",
			 log->error) &&
	       rl_expect(
		       c, log->act_rkey == rkey,
		       "expected the peer to write with rkey 0x%llx (mr->rkey), it was given 0x%x",
		       rkey, log->act_rkey) &&
	       rl_expect(c, strcmp(buf, log->sent) == 0,
			 "expected \"%s\" (the peer's) in the buffer, got \"%.64s\"", log->sent,
			 buf);
}

/* The keys the act said are the MR's: the peer writes with the rkey, the act sends with the lkey. */
static void mr_echoes_the_peers_write(struct rl_case *c)
{
	mr_for_the_peer(c, false, true);
}

static void keys_work(struct rl_case *c)
{
	struct fx_peer_log log;
	long long lkey, status;

	if (!fx_made(c, "mr", "an MR from lab1_reg_mr", 2)) {
		fx_peer_stop();
		return;
	}
	if (!fx_peer_finish(c, &log) || !peer_wrote(c, &log))
		return;
	lkey = rl_said_int(c, "mr.lkey");
	status = rl_said_int(c, "send.status");
	if (rl_expect(c,
		      status == IBV_WC_SUCCESS && log.recv_status == IBV_WC_SUCCESS &&
			      strcmp(log.received, log.sent) == 0,
		      "expected a SEND from the MR with lkey 0x%llx (mr->lkey) to bring the peer "
		      "its text back, got \"%s\" at the sender and \"%.64s\" (\"%s\") at the peer",
		      lkey, fx_status_str(status), log.received, fx_status_str(log.recv_status)))
		act_mr(c);
}

RL_GRADED(mr_keys_match_rdma_resource, .step = 2, .points = 1, .setup = peer_writes_then_receives,
	  .act = mr_echoes_the_peers_write, .check = keys_work);

static void mr_receives_the_peers_write(struct rl_case *c)
{
	mr_for_the_peer(c, false, false);
}

static void peer_wrote_into_it(struct rl_case *c)
{
	struct fx_peer_log log;

	if (!fx_made(c, "mr", "an MR from lab1_reg_mr", 2)) {
		fx_peer_stop();
		return;
	}
	if (fx_peer_finish(c, &log) && peer_wrote(c, &log))
		act_mr(c);
}

RL_GRADED(mr_lets_the_peer_rdma_write_into_it, .step = 2, .points = 2, .setup = peer_writes,
	  .act = mr_receives_the_peers_write, .check = peer_wrote_into_it);

static void mr_receives_from_the_peer(struct rl_case *c)
{
	mr_for_the_peer(c, true, false);
}

static void peer_sent_into_it(struct rl_case *c)
{
	struct fx_peer_log log;
	long long status;
	const char *buf;

	if (!fx_made(c, "mr", "an MR from lab1_reg_mr", 2)) {
		fx_peer_stop();
		return;
	}
	if (!fx_peer_finish(c, &log))
		return;
	status = rl_said_int(c, "recv.status");
	buf = rl_said_str(c, "buf");
	if (!rl_expect(c, log.send_status == IBV_WC_SUCCESS,
		       "expected the receive into the MR to succeed, got \"%s\" at the peer (a "
		       "receive is the device writing into the MR: see docs/lab1.md#step-2)%s%s",
		       fx_status_str(log.send_status), log.error[0] ? "; the peer: " : "",
		       log.error) ||
	    !rl_expect(c, status == IBV_WC_SUCCESS,
		       "expected the receive into the MR to succeed, got \"%s\" (a receive is "
		       "the device writing into the MR: see docs/lab1.md#step-2)",
		       fx_status_str(status)))
		return;
	rl_expect(c, strcmp(buf, log.sent) == 0, "expected \"%s\" (the peer's), got \"%.64s\"",
		  log.sent, buf);
}

RL_GRADED(mr_takes_a_send_into_a_posted_receive, .step = 2, .points = 1, .setup = peer_sends,
	  .act = mr_receives_from_the_peer, .check = peer_sent_into_it);

static void peer_could_not_read_it(struct rl_case *c)
{
	struct fx_peer_log log;

	if (!fx_made(c, "mr", "an MR from lab1_reg_mr", 2)) {
		fx_peer_stop();
		return;
	}
	if (!fx_peer_finish(c, &log))
		return;
	/* Refused by that MR, not for an rkey that names nothing: the same rkey let the peer write. */
	if (peer_wrote(c, &log) &&
	    rl_expect(c, log.read_status == IBV_WC_REM_ACCESS_ERR,
		      "expected the peer's RDMA read to fail with \"%s\", got \"%s\": no peer "
		      "of this program reads its buffer, and an MR that allows it gives the "
		      "buffer to anyone who learns its rkey; see docs/lab1.md#step-2%s%s",
		      ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR), fx_status_str(log.read_status),
		      log.error[0] ? "; the peer: " : "", log.error))
		act_mr(c);
}

RL_GRADED(mr_does_not_let_the_peer_rdma_read_it, .step = 2, .points = 1,
	  .setup = peer_writes_then_reads, .act = mr_receives_the_peers_write,
	  .check = peer_could_not_read_it);

/* Step 3 */

struct cq_in {
	int depth; /* of the QP whose both queues complete on the CQ */
};

/*
 * A depth of the form 2^k - 1: a CQ of exactly that many entries is one the
 * device need not round up (rxe rounds to a power of two, less one), so a
 * CQ that holds only one queue's completions shows.
 */
static void choose_depth(struct rl_case *c)
{
	((struct cq_in *)c->in)->depth = (1 << fx_random_between(3, 8)) - 1;
}

/* The lab's CQ for a QP of IN's depth, beside a PD of the fixture's on the same context. */
static void create_cq(struct rl_case *c)
{
	const struct cq_in *in = c->in;
	struct ibv_context *ctx = fx_open();
	struct ibv_cq *cq;
	struct ibv_wc wc;

	fx_pd(ctx);
	rl_say_int("ctx", (long long)(uintptr_t)ctx);
	cq = lab1_create_cq(ctx, in->depth);
	rl_say_int("cq", cq != NULL);
	if (!cq)
		return;
	rl_say_int("cq.context", (long long)(uintptr_t)cq->context);
	rl_say_int("polled", ibv_poll_cq(cq, 1, &wc));
	rl_hold();
}

/* The kernel's one CQ of the act, deep enough for both full queues of IN's QP, into CQ. */
static bool deep_enough(struct rl_case *c, struct rl_res *cq)
{
	const struct cq_in *in = c->in;

	if (!only_one(c, "cq", cq))
		return false;
	return rl_expect(
		c, fx_res_num(cq, "cqe") >= 2 * in->depth,
		"expected cq->cqe >= %d for a QP of depth %d, got %s (rdma res show cq): "
		"both of its queues complete on this CQ, and a burst of completions it "
		"cannot hold overflows it, which is fatal to its QPs; see docs/lab1.md#step-3",
		2 * in->depth, in->depth, fx_res_str(cq, "cqe"));
}

static void cq_is_deep_enough(struct rl_case *c)
{
	struct rl_res cq, pd;

	if (!fx_made(c, "cq", "a CQ from lab1_create_cq", 3) || !deep_enough(c, &cq) ||
	    !only_one(c, "pd", &pd))
		return;
	rl_expect(c,
		  rl_said_int(c, "cq.context") == rl_said_int(c, "ctx") &&
			  strcmp(fx_res_str(&cq, "ctxn"), fx_res_str(&pd, "ctxn")) == 0,
		  "expected the CQ on the context given, got another");
}

RL_GRADED(cq_holds_every_completion_both_queues_of_the_qp_can_have, .step = 3, .points = 2,
	  .setup = choose_depth, .act = create_cq, .check = cq_is_deep_enough);

/* A CQ for a QP of depth 4 from the lab's code, then one for a QP the device cannot complete. */
static void create_too_deep(struct rl_case *c)
{
	struct ibv_context *ctx = fx_open();
	struct ibv_device_attr attr;
	struct ibv_cq *cq = lab1_create_cq(ctx, 4);

	(void)c;
	rl_say_int("cq", cq != NULL);
	if (!cq)
		return;
	ck_assert_int_eq(ibv_query_device(ctx, &attr), 0);
	rl_say_int("deep", lab1_create_cq(ctx, attr.max_cqe / 2 + 1) != NULL);
	rl_hold();
}

static void only_the_small_cq(struct rl_case *c)
{
	int max_cqe = fx_device().max_cqe;
	struct rl_res cq;

	if (!fx_made(c, "cq", "a CQ for a QP of depth 4 from lab1_create_cq", 3) ||
	    !rl_expect(c, !rl_said_int(c, "deep"),
		       "expected NULL for a QP of depth %d (%d completions; max_cqe is %d), got a "
		       "CQ: see docs/lab1.md#step-3",
		       max_cqe / 2 + 1, 2 * (max_cqe / 2 + 1), max_cqe))
		return;
	/* The kernel agrees: the act holds the small CQ, and nothing deeper. */
	if (only_one(c, "cq", &cq))
		rl_expect(c, fx_res_num(&cq, "cqe") >= 8 && fx_res_num(&cq, "cqe") <= max_cqe,
			  "expected the CQ for a QP of depth 4 (8 completions) in 'rdma res show "
			  "cq', got one of %s: see docs/lab1.md#step-3",
			  fx_res_str(&cq, "cqe"));
}

RL_GRADED(cq_deeper_than_the_device_allows_is_refused, .step = 3, .points = 1,
	  .act = create_too_deep, .check = only_the_small_cq);

static void cq_is_empty(struct rl_case *c)
{
	struct rl_res cq;
	long long n;

	if (!fx_made(c, "cq", "a CQ from lab1_create_cq", 3))
		return;
	n = rl_said_int(c, "polled");
	if (rl_expect(c, n == 0, "expected ibv_poll_cq to find 0 completions, got %lld", n))
		deep_enough(c, &cq);
}

RL_GRADED(cq_is_empty_when_created, .step = 3, .points = 1, .setup = choose_depth, .act = create_cq,
	  .check = cq_is_empty);

/* Step 4 */

struct qp_in {
	int depth;
};

static void choose_qp_depth(struct rl_case *c)
{
	((struct qp_in *)c->in)->depth = (int)fx_random_between(2, 64);
}

/*
 * A QP from the lab's code, in a PD and on a CQ of the fixture's; a second
 * CQ, of another size, is there for the QP not to use.
 */
static void create_qp(struct rl_case *c)
{
	const struct qp_in *in = c->in;
	struct ibv_context *ctx = fx_open();
	struct ibv_pd *pd = fx_pd(ctx);
	struct ibv_cq *cq = fx_cq(ctx), *other = ibv_create_cq(ctx, 100, NULL, NULL, 0);
	struct ibv_qp *qp;

	ck_assert_msg(other, "fixture: ibv_create_cq failed: %s", strerror(errno));
	rl_say_int("pd", (long long)(uintptr_t)pd);
	rl_say_int("cq", (long long)(uintptr_t)cq);
	rl_say_int("cq.cqe", cq->cqe);
	rl_say_int("other.cqe", other->cqe);
	qp = lab1_create_qp(pd, cq, in->depth);
	rl_say_int("qp", qp != NULL);
	if (!qp)
		return;
	rl_say_int("qpn", qp->qp_num);
	rl_say_int("qp.type", qp->qp_type);
	rl_say_int("qp.pd", (long long)(uintptr_t)qp->pd);
	rl_say_int("qp.send_cq", (long long)(uintptr_t)qp->send_cq);
	rl_say_int("qp.recv_cq", (long long)(uintptr_t)qp->recv_cq);
	fx_say_qp("qp", qp);
	rl_hold();
}

static void reliable_in_reset(struct rl_case *c)
{
	struct rl_res all[MAX_RES];
	const struct rl_res *qp;
	long long type;

	if (!fx_made(c, "qp", "a QP from lab1_create_qp", 4))
		return;
	type = rl_said_int(c, "qp.type");
	if (!rl_expect(c, type == IBV_QPT_RC,
		       "expected qp_type IBV_QPT_RC (%d), got %lld: which transport resends, and "
		       "offers RDMA WRITE? see docs/lab1.md#step-4",
		       IBV_QPT_RC, type))
		return;
	qp = fx_act_qp(c, "qpn", all, MAX_RES);
	if (qp && rl_expect(c, strcmp(fx_res_str(qp, "type"), "RC") == 0,
			    "expected type RC (rdma res show qp), got %s", fx_res_str(qp, "type")))
		rl_expect(c, strcmp(fx_res_str(qp, "state"), "RESET") == 0,
			  "expected state RESET (rdma res show qp), got %s",
			  fx_res_str(qp, "state"));
}

RL_GRADED(qp_is_reliable_connected_and_starts_in_reset, .step = 4, .points = 2,
	  .setup = choose_qp_depth, .act = create_qp, .check = reliable_in_reset);

static void holds_the_work_requests(struct rl_case *c)
{
	const struct qp_in *in = c->in;
	struct rl_res all[MAX_RES];
	long long send, recv;

	if (!fx_made(c, "qp", "a QP from lab1_create_qp", 4) || !fx_act_qp(c, "qpn", all, MAX_RES))
		return;
	send = rl_said_int(c, "qp.max_send_wr");
	recv = rl_said_int(c, "qp.max_recv_wr");
	if (rl_expect(c, send >= in->depth && recv >= in->depth,
		      "expected at least %d send and %d receive work requests (ibv_query_qp), got "
		      "%lld and %lld",
		      in->depth, in->depth, send, recv))
		rl_expect(c,
			  rl_said_int(c, "qp.max_send_sge") >= 1 &&
				  rl_said_int(c, "qp.max_recv_sge") >= 1,
			  "expected at least 1 SGE each way, got %lld and %lld",
			  rl_said_int(c, "qp.max_send_sge"), rl_said_int(c, "qp.max_recv_sge"));
}

RL_GRADED(qp_holds_the_work_requests_asked_for_each_way, .step = 4, .points = 1,
	  .setup = choose_qp_depth, .act = create_qp, .check = holds_the_work_requests);

static void on_the_given_cq_and_pd(struct rl_case *c)
{
	struct rl_res all[MAX_RES], cqs[MAX_RES], pd;
	const struct rl_res *qp, *cq, *other;
	int n;

	if (!fx_made(c, "qp", "a QP from lab1_create_qp", 4) ||
	    !rl_expect(c, rl_said_int(c, "qp.send_cq") == rl_said_int(c, "cq"),
		       "expected send_cq to be the CQ given, got another") ||
	    !rl_expect(c, rl_said_int(c, "qp.recv_cq") == rl_said_int(c, "cq"),
		       "expected recv_cq to be the CQ given, got another") ||
	    !rl_expect(c, rl_said_int(c, "qp.pd") == rl_said_int(c, "pd"),
		       "expected the QP in the PD given, got another"))
		return;
	qp = fx_act_qp(c, "qpn", all, MAX_RES);
	n = fx_res(c, "cq", cqs, MAX_RES);
	if (!qp || n < 0 || !only_one(c, "pd", &pd))
		return;
	/* A CQ's users, in the kernel: one for each queue of a QP that completes on it. */
	cq = fx_res_with(cqs, n, "cqe", (unsigned long long)rl_said_int(c, "cq.cqe"));
	other = fx_res_with(cqs, n, "cqe", (unsigned long long)rl_said_int(c, "other.cqe"));
	if (rl_expect(
		    c,
		    cq && other && fx_res_num(cq, "users") == 2 && fx_res_num(other, "users") == 0,
		    "expected the CQ given to complete the QP's sends and receives (users 2 in rdma "
		    "res show cq) and the other CQ nothing, got users %s and %s",
		    fx_res_str(cq, "users"), fx_res_str(other, "users")))
		rl_expect(c, fx_res_num(qp, "pdn") == fx_res_num(&pd, "pdn"),
			  "expected the QP in the PD given (pdn %s in rdma res), got pdn %s",
			  fx_res_str(&pd, "pdn"), fx_res_str(qp, "pdn"));
}

RL_GRADED(qp_completes_on_the_given_cq_in_the_given_pd, .step = 4, .points = 1,
	  .setup = choose_qp_depth, .act = create_qp, .check = on_the_given_cq_and_pd);

/*
 * The lab's QP, connected to a QP of the act's own on the same device (in a
 * step 4 act the fixture's QP is hidden: it is step 4's), posts an
 * unsignaled RDMA write and then a signaled one. The act says how many
 * completions its CQ got, and the wr_id of the first.
 */
static void unsignaled_then_signaled(struct rl_case *c)
{
	struct ibv_context *ctx = fx_open();
	struct ibv_pd *pd = fx_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4 * FX_DEPTH, NULL, NULL, 0),
		      *peer_cq = ibv_create_cq(ctx, 4 * FX_DEPTH, NULL, NULL, 0);
	struct ibv_qp_init_attr init = {
		.send_cq = peer_cq,
		.recv_cq = peer_cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_mr *mr = fx_mr(pd, FX_BUF_SIZE);
	struct ibv_qp *qp, *peer;
	struct ibv_sge sge = { .addr = (uintptr_t)mr->addr, .length = 8, .lkey = mr->lkey };
	struct ibv_send_wr wr[2], *bad;
	struct ibv_wc wc;
	int i, n = 0;

	(void)c;
	ck_assert_msg(cq && peer_cq, "fixture: ibv_create_cq failed: %s", strerror(errno));
	peer = ibv_create_qp(pd, &init);
	ck_assert_msg(peer, "fixture: ibv_create_qp failed: %s", strerror(errno));
	qp = lab1_create_qp(pd, cq, FX_DEPTH);
	rl_say_int("qp", qp != NULL);
	if (!qp)
		return;
	fx_to_init(qp);
	fx_to_init(peer);
	fx_to_rtr(qp, peer);
	fx_to_rtr(peer, qp);
	fx_to_rts(qp);
	for (i = 0; i < 2; i++)
		wr[i] = (struct ibv_send_wr){
			.wr_id = 1 + i,
			.next = i == 0 ? &wr[1] : NULL,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = i == 0 ? 0 : IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = (uintptr_t)mr->addr + 64, .rkey = mr->rkey },
		};
	ck_assert_msg(ibv_post_send(qp, wr, &bad) == 0, "fixture: ibv_post_send failed");
	if (fx_poll(cq, &wc, FX_WC_TIMEOUT_MS)) {
		rl_say_int("first.wr_id", (long long)wc.wr_id);
		rl_say_int("first.status", wc.status);
		n = 1 + fx_poll(cq, &wc, 200);
	}
	rl_say_int("completions", n);
}

static void only_the_signaled_one_completes(struct rl_case *c)
{
	long long n;

	if (!fx_made(c, "qp", "a QP from lab1_create_qp", 4))
		return;
	n = rl_said_int(c, "completions");
	if (!rl_expect(c, n >= 1,
		       "expected a completion for the signaled RDMA write, got none within %d ms",
		       FX_WC_TIMEOUT_MS) ||
	    !rl_expect(c, rl_said_int(c, "first.status") == IBV_WC_SUCCESS,
		       "expected the signaled RDMA write to succeed, got \"%s\"",
		       fx_status_str(rl_said_int(c, "first.status"))))
		return;
	rl_expect(c, n == 1 && rl_said_int(c, "first.wr_id") == 2,
		  "expected 1 completion, the signaled write's (wr_id 2), after an unsignaled "
		  "write (wr_id 1) and a signaled one, got %lld, the first for wr_id %lld: this QP "
		  "completes every send request, also those that ask for none, so a program that "
		  "posts unsignaled ones finds its CQ filling with completions it never asked for; "
		  "see docs/lab1.md#step-4",
		  n, rl_said_int(c, "first.wr_id"));
}

RL_GRADED(qp_completes_only_the_send_requests_that_ask_for_it, .step = 4, .points = 1,
	  .act = unsignaled_then_signaled, .check = only_the_signaled_one_completes);
