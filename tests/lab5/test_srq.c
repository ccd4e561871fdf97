/*
 * test_srq.c: Lab 5 step 4, a shared receive queue (docs/lab5.md#step-4).
 * The act opens the lab's SRQ and lets one reference client's RC QP take
 * its receives (the fixture's listener and accept, plain rdma_cm); the
 * client sends one message at a time with no RNR retry, so the number its
 * sends delivered before one failed is the number of receives the queue
 * held. The device's own view of the queue (ibv_query_srq, rdma res) and
 * its limit events, taken by the fixture, say the rest.
 */
#include <string.h>

#include "srq_fixture.h"

#define STEP4 "(see docs/lab5.md#step-4)"

/* The probe's input: the SRQ's size and limit, at random, and the port the act listens on. */
static void probe_in(struct rl_case *c, uint32_t phase1)
{
	struct srq_fx_in *in = c->in;

	in->port = rl_test_free_port();
	in->probe = true;
	in->depth = srq_fx_between(24, LAB5_SRQ_DEPTH);
	in->limit = srq_fx_between(4, in->depth / 2);
	/* Past the limit (its event raised), short of the depth (no RNR yet). */
	if (phase1)
		in->phase1 = srq_fx_between(in->depth - in->limit + 1, in->depth - 2);
	srq_fx_peer_start(in);
}

static void one_probe(struct rl_case *c)
{
	probe_in(c, 0);
}

static void two_probes(struct rl_case *c)
{
	probe_in(c, 1);
}

/* The lab's SRQ opened; the client's sends probe it until one finds it empty. */
static void open_and_probe(struct rl_case *c)
{
	const struct srq_fx_in *in = c->in;
	struct srq_fx_server f;
	struct lab5_srq s;
	int ret;

	srq_fx_listen(&f, in->port);
	ret = lab5_srq_open(&s, f.pd, in->depth, in->limit);
	rl_say_int("open", ret);
	if (ret)
		return;
	srq_fx_say_srq(s.srq, "opened");
	srq_fx_accept(&f, s.srq, 0);
	srq_fx_take(&f, &s, 0, "probe");
	srq_fx_drop_client(&f);
	rl_hold();
	srq_fx_close(&f);
	lab5_srq_close(&s);
}

/* Whether the act's open returned 0. */
static bool opened(struct rl_case *c)
{
	long long ret = rl_said_int(c, "open");

	return rl_expect(c, ret == 0, "expected lab5_srq_open to return 0, got %lld (%s) " STEP4,
			 ret, strerror((int)-ret));
}

/* The client's report says it connected, with no RNR retry. */
static bool probed(struct rl_case *c, const struct srq_fx_report *r)
{
	return rl_expect(c, r->ret == 0, "the reference client failed: %s", r->why) &&
	       rl_expect(c, r->n == 1 && r->cl[0].established && r->cl[0].rnr_retry == 0,
			 "the reference client did not connect with rnr_retry 0 (it has %u)",
			 r->cl[0].rnr_retry);
}

static void every_slot_posted_and_limit_armed(struct rl_case *c)
{
	const struct srq_fx_in *in = c->in;
	const struct srq_fx_report *r;
	struct rl_res res[4];
	int n = -1;

	if (rl_said(c, "open") && rl_said_int(c, "open") == 0 && rl_act_pid(c))
		n = rl_rdma_res("srq", rl_act_pid(c), res, 4);
	r = srq_fx_peer_end(c);
	if (!opened(c) || !probed(c, r))
		return;
	rl_expect(
		c, n == 1,
		"expected the kernel to list 1 SRQ of the act's (rdma res show srq), got %d " STEP4,
		n);
	rl_expect(
		c, rl_said_int(c, "opened_max_wr") >= in->depth,
		"expected an SRQ of at least %u receives (ibv_query_srq's max_wr), got %lld " STEP4,
		in->depth, rl_said_int(c, "opened_max_wr"));
	rl_expect(c, r->cl[0].sent == in->depth && r->cl[0].status == IBV_WC_RNR_RETRY_EXC_ERR,
		  "expected the client's sends to find exactly %u receives posted (one per slot), "
		  "then none (%s), got %u (then %s): every slot posted, once " STEP4,
		  in->depth, ibv_wc_status_str(IBV_WC_RNR_RETRY_EXC_ERR), r->cl[0].sent,
		  r->cl[0].status ? ibv_wc_status_str(r->cl[0].status) : "no failure");
	rl_expect(
		c, rl_said_int(c, "probe_bad_slots") == 0,
		"expected each completion's wr_id to name its slot, holding its message, got %lld "
		"completions that did not: what does the completion tell you? " STEP4,
		rl_said_int(c, "probe_bad_slots"));
	rl_expect(c, rl_said_int(c, "opened_limit") == in->limit,
		  "expected the SRQ's limit armed at %u once opened (ibv_query_srq's srq_limit), "
		  "got %lld " STEP4,
		  in->limit, rl_said_int(c, "opened_limit"));
	rl_expect(
		c, rl_said_int(c, "probe_limit_events") == 1,
		"expected 1 IBV_EVENT_SRQ_LIMIT_REACHED as the %u receives ran below the limit %u, "
		"got %lld " STEP4,
		in->depth, in->limit, rl_said_int(c, "probe_limit_events"));
}
RL_GRADED(srq_open_posts_every_slot_once_and_arms_the_limit, .step = 4, .points = 5,
	  .setup = one_probe, .act = open_and_probe, .check = every_slot_posted_and_limit_armed);

/*
 * The lab's SRQ opened; the client sends past the limit; the fixture
 * takes those completions (their slots freed), the lab refills, the
 * client probes the queue again.
 */
static void refill_and_probe(struct rl_case *c)
{
	const struct srq_fx_in *in = c->in;
	struct srq_fx_server f;
	struct lab5_srq s;
	int ret;

	srq_fx_listen(&f, in->port);
	ret = lab5_srq_open(&s, f.pd, in->depth, in->limit);
	rl_say_int("open", ret);
	if (ret)
		return;
	srq_fx_accept(&f, s.srq, 0);
	srq_fx_take(&f, &s, in->phase1, "before");
	srq_fx_say_srq(s.srq, "fired"); /* measured, not judged: the limit once its event came */
	ret = lab5_srq_refill(&s);
	rl_say_int("refill", ret);
	srq_fx_say_srq(s.srq, "refilled");
	srq_fx_go(&f);
	srq_fx_take(&f, &s, 0, "after");
	srq_fx_close(&f);
	lab5_srq_close(&s);
}

static void refill_posts_the_free_slots_and_rearms(struct rl_case *c)
{
	const struct srq_fx_in *in = c->in;
	const struct srq_fx_report *r = srq_fx_peer_end(c);
	long long ret;

	if (!opened(c) || !probed(c, r))
		return;
	rl_expect(c, r->cl[0].sent == in->phase1 && rl_said_int(c, "before_limit_events") == 1,
		  "expected the first %u messages to be taken, with 1 limit event, got %u and "
		  "%lld (step 4's open first: see docs/lab5.md#step-4)",
		  in->phase1, r->cl[0].sent, rl_said_int(c, "before_limit_events"));
	ret = rl_said_int(c, "refill");
	if (!rl_expect(c, ret == 0, "expected lab5_srq_refill to return 0, got %lld (%s) " STEP4,
		       ret, strerror((int)-ret)))
		return;
	rl_expect(
		c, r->cl[0].sent2 == in->depth && r->cl[0].status == IBV_WC_RNR_RETRY_EXC_ERR,
		"after %u completions freed their slots and a refill, expected the client's sends "
		"to find exactly %u receives (the %u freed and the %u still posted), got %u: which "
		"slots does a refill post? " STEP4,
		in->phase1, in->depth, in->phase1, in->depth - in->phase1, r->cl[0].sent2);
	rl_expect(
		c, rl_said_int(c, "after_bad_slots") + rl_said_int(c, "before_bad_slots") == 0,
		"expected each completion's wr_id to name a slot its receive still held, with its "
		"message, got %lld that did not: a slot posted twice, or a wr_id that is not the "
		"slot " STEP4,
		rl_said_int(c, "after_bad_slots") + rl_said_int(c, "before_bad_slots"));
	rl_expect(c, rl_said_int(c, "refilled_limit") == in->limit,
		  "expected the limit armed again at %u after the refill (ibv_query_srq's "
		  "srq_limit), got %lld: the device disarms it when it raises its event " STEP4,
		  in->limit, rl_said_int(c, "refilled_limit"));
	rl_expect(
		c, rl_said_int(c, "after_limit_events") == 1,
		"expected the next IBV_EVENT_SRQ_LIMIT_REACHED as the refilled queue ran below %u, "
		"got %lld events: is the limit armed again after each refill? " STEP4,
		in->limit, rl_said_int(c, "after_limit_events"));
}
RL_GRADED(refill_posts_exactly_the_free_slots_and_arms_the_limit_again, .step = 4, .points = 6,
	  .setup = two_probes, .act = refill_and_probe,
	  .check = refill_posts_the_free_slots_and_rearms);
