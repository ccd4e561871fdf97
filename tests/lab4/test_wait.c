/*
 * test_wait.c: Lab 4 step 5: waiting for completions by sleeping on the
 * completion channel (event) and by polling for a budget first (adaptive).
 * The act holds a connected pair; the test's own write of a chunk chosen
 * at random completes already, late, just before the CQ is armed, or
 * never (while wake-ups find nothing); the act says what the lab's wait returned. The sender's CQ arms
 * are counted through the context's req_notify_cq, which can also land a
 * completion just before the arm. What the wait cost is not the act's to
 * say: the act says the clock and its CPU time before the lab's code runs,
 * then holds once it is done, and the check reads the act's CPU time from
 * the kernel and the time on its own clock.
 */
#define _GNU_SOURCE /* pthread_timedjoin_np */
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"

/* Long enough for an RDMA write's acknowledgement to reach the sender's CQ. */
#define SETTLE_US 300000
#define SETTLE_MS (SETTLE_US / 1000)
#define CLOSE_MS 3000
/*
 * The lab's timeout when a completion is due: far longer than it takes to
 * come, so a wait that sleeps its timeout through before it polls returns
 * it late. PROMPT_MS: how much later than the completion the parent may
 * see the act done (a busy machine), which stays well under WAIT_MS.
 */
#define WAIT_MS 6000
#define PROMPT_MS 2000
/*
 * NEVER's second wait: this many arms each land a completion just after
 * the arm and take it away, so the lab's wait wakes to an event and finds
 * nothing, about SETTLE_MS apart. A wait whose deadline moves with each
 * sleep ends only once they stop, more than PROMPT_MS past its timeout.
 */
#define STEALS 10

/* When the test's write completes, against the lab's wait. */
enum when {
	NEVER,      /* nothing is in flight (after a first wait that a late write ends) */
	ALREADY,    /* before the wait starts */
	LATE,       /* LATE_MS after it starts */
	BEFORE_ARM, /* inside the first arm, just before it */
};

/*
 * The inputs: the chunk written, when, and how the lab's wait is told to
 * wait. NEVER: a first wait of WAIT_MS ends with chunk INDEX written LATE_MS
 * in; then the wait of TIMEOUT_MS with nothing in flight.
 */
struct wait_in {
	uint32_t index;
	enum when when;
	int late_ms;
	bool adaptive;
	uint32_t spin_us;
	int timeout_ms;
};

static struct fx_pair *watched;
static int (*real_req_notify_cq)(struct ibv_cq *cq, int solicited_only);
static int arms;             /* arms of the sender's CQ so far */
static bool land_before_arm; /* the next arm first lands a completion, unannounced */
static uint32_t land_index;
static int steals_left; /* arms still to land a completion after them and take it away */

/* Post chunk INDEX, signaled, and wait until it has landed and been acknowledged. */
static void land_a_completion(struct fx_pair *p, uint32_t index)
{
	struct ibv_wc wc;

	ck_assert_int_eq(fx_ref_post(&p->s, index, true), 0);
	fx_recv_wc(&p->r, &wc);
	usleep(SETTLE_US);
}

/*
 * Arm P's sender CQ, then land a completion (it raises the event) and take
 * it out of the CQ: the lab's wait wakes up to find nothing.
 */
static int arm_and_steal(struct fx_pair *p, struct ibv_cq *cq, int solicited_only)
{
	int ret = real_req_notify_cq(cq, solicited_only);
	struct ibv_recv_wr rwr = { .wr_id = 0 }, *bad;
	struct ibv_wc wc;

	/* The receiver posted a receive per chunk: one more, empty, for this write. */
	ck_assert_int_eq(ibv_post_recv(p->r.qp, &rwr, &bad), 0);
	land_a_completion(p, land_index);
	ck_assert_msg(fx_poll_one(p->s.cq, &wc, FX_TIMEOUT_MS),
		      "fixture: expected the stolen completion in the sender's CQ");
	return ret;
}

static int counting_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	if (cq == watched->s.cq) {
		arms++;
		if (land_before_arm) {
			land_before_arm = false;
			land_a_completion(watched, land_index);
		} else if (steals_left > 0) {
			steals_left--;
			return arm_and_steal(watched, cq, solicited_only);
		}
	}
	return real_req_notify_cq(cq, solicited_only);
}

/* A connected pair whose sender waits as IN says; no write in flight. */
static void open_sender(struct fx_pair *p, const struct wait_in *in)
{
	fx_pair_open(p, 4 * 4096, 4096);
	p->s.spin_us = in->spin_us;
	p->s.timeout_ms = in->timeout_ms;
	p->s.nchunks = 1;
	watched = p;
	arms = 0;
	land_before_arm = false;
	steals_left = 0;
	land_index = in->index;
	real_req_notify_cq = p->ctx->ops.req_notify_cq;
	p->ctx->ops.req_notify_cq = counting_req_notify_cq;
}

static void *close_pair(void *p)
{
	fx_pair_close(p);
	return NULL;
}

/*
 * Tears P down within CLOSE_MS, or says it could not: ibv_destroy_cq()
 * waits for ever for an event that was not acknowledged. (A teardown left
 * hanging ends with the act's process.)
 */
static void close_sender(struct fx_pair *p)
{
	struct timespec until;
	pthread_t t;

	p->ctx->ops.req_notify_cq = real_req_notify_cq;
	ck_assert_int_eq(pthread_create(&t, NULL, close_pair, p), 0);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += CLOSE_MS / 1000;
	rl_say_int("closed", pthread_timedjoin_np(t, NULL, &until) == 0);
}

/* This process's CPU time so far (all its threads), in ns. */
static long long process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Chunk INDEX posted by another thread DELAY_MS after it starts. */
struct late_post {
	pthread_t thread;
	struct fx_pair *p;
	uint32_t index;
	int delay_ms;
	int ret;
};

static void *late_post_run(void *arg)
{
	struct late_post *lp = arg;

	usleep((useconds_t)lp->delay_ms * 1000);
	lp->ret = fx_ref_post(&lp->p->s, lp->index, true);
	return NULL;
}

/* One call of the lab's wait on P, as IN says, into WC (4 entries). */
static int lab_wait(const struct wait_in *in, struct fx_pair *p, struct ibv_wc *wc)
{
	int i;

	/* What a wait that returns without filling WC in leaves there: no chunk's. */
	for (i = 0; i < 4; i++)
		wc[i] = (struct ibv_wc){ .wr_id = 0xdead, .status = IBV_WC_GENERAL_ERR };
	return in->adaptive ? lab4_poll_adaptive(&p->s, wc, 4) : lab4_poll_event(&p->s, wc, 4);
}

/* The lab's wait while chunk IN->index is written IN->late_ms later; then it has landed. */
static int wait_for_a_late_write(const struct wait_in *in, struct fx_pair *p, struct ibv_wc *wc)
{
	struct late_post lp = { .p = p, .index = in->index, .delay_ms = in->late_ms };
	struct ibv_wc landed;
	int ret;

	ck_assert_int_eq(pthread_create(&lp.thread, NULL, late_post_run, &lp), 0);
	ret = lab_wait(in, p, wc);
	pthread_join(lp.thread, NULL);
	ck_assert_msg(lp.ret == 0, "fixture: the late post failed: %s", strerror(-lp.ret));
	/* Landed at the receiver, so acknowledged soon after: the sender's CQ has it. */
	fx_recv_wc(&p->r, &landed);
	return ret;
}

/*
 * NEVER's first wait: a write LATE_MS in, within WAIT_MS; says how it
 * ended (first, first_wr_id) and the arms so far.
 */
static void first_wait(const struct wait_in *in, struct fx_pair *p)
{
	struct ibv_wc wc[4];
	int ret;

	p->s.timeout_ms = WAIT_MS;
	ret = wait_for_a_late_write(in, p, wc);
	rl_say_int("first", ret);
	rl_say_int("first_wr_id",
		   ret == 1 && wc[0].status == IBV_WC_SUCCESS ? (long long)wc[0].wr_id : -1);
	rl_say_int("first_arms", arms);
	p->s.timeout_ms = in->timeout_ms;
}

/*
 * The act: the write as IN says and one call of the lab's wait (NEVER: two),
 * what it returned, arms, events acknowledged, completions it left in the
 * CQ, and whether the pair could be torn down; then it holds, for the check
 * to read the time and the act's CPU time since start_ms and cpu_ns.
 */
static void wait_once(struct rl_case *c)
{
	const struct wait_in *in = c->in;
	struct ibv_wc wc[4], left;
	struct fx_pair p;
	int ret;

	open_sender(&p, in);
	if (in->when == ALREADY)
		land_a_completion(&p, in->index);
	land_before_arm = in->when == BEFORE_ARM;
	/* Said before the lab's code runs: the check's starting point. */
	rl_say_int("start_ms", lab4_now_ms());
	rl_say_int("cpu_ns", process_cpu_ns());
	if (in->when == NEVER) {
		first_wait(in, &p);
		steals_left = STEALS;
	}
	if (in->when == LATE)
		ret = wait_for_a_late_write(in, &p, wc);
	else
		ret = lab_wait(in, &p, wc);
	rl_say_int("ret", ret);
	rl_say_int("wr_id", (long long)wc[0].wr_id);
	rl_say_int("status", wc[0].status);
	rl_say_int("arms", arms);
	rl_say_int("acked", p.s.cq->comp_events_completed);
	/* Is the chunk's completion still in the CQ, acknowledged by now? */
	if (in->when == LATE)
		usleep(SETTLE_US);
	rl_say_int("left", fx_poll_one(p.s.cq, &left, 0));
	close_sender(&p);
	rl_hold();
}

static void wait_setup(struct rl_case *c, enum when when, int late_ms, bool adaptive,
		       uint32_t spin_us, int timeout_ms)
{
	struct wait_in *in = c->in;

	*in = (struct wait_in){
		.index = fx_between(0, 3),
		.when = when,
		.late_ms = late_ms,
		.adaptive = adaptive,
		.spin_us = spin_us,
		.timeout_ms = timeout_ms,
	};
}

/* The wait took chunk INDEX's completion, successfully, and no other, out of the CQ. */
static bool took_the_chunk(struct rl_case *c, const char *what)
{
	const struct wait_in *in = c->in;
	long long ret = rl_said_int(c, "ret"), status = rl_said_int(c, "status");

	if (!rl_expect(c, ret == 1, "%s: expected 1 completion, got %lld (%s)", what, ret,
		       ret < 0 ? strerror((int)-ret) : "a count") ||
	    !rl_expect(c, status == IBV_WC_SUCCESS && rl_said_int(c, "wr_id") == in->index,
		       "%s: expected chunk %u's good completion, got wr_id %lld (%s)", what,
		       in->index, rl_said_int(c, "wr_id"),
		       ibv_wc_status_str((enum ibv_wc_status)status)))
		return false;
	return rl_expect(c, rl_said_int(c, "left") == 0,
			 "%s: expected chunk %u's completion taken out of the CQ, it is still "
			 "there (ibv_poll_cq() takes it)",
			 what, in->index);
}

/* The time from the act's start_ms to its hold, on this process's clock. */
static long long wall_ms(struct rl_case *c)
{
	return lab4_now_ms() - rl_said_int(c, "start_ms");
}

/* The act's CPU time since its cpu_ns, in ms, from the kernel; -1 when it cannot be read. */
static long long cpu_ms(struct rl_case *c)
{
	struct timespec ts;
	clockid_t clock;

	if (rl_act_pid(c) <= 0 || clock_getcpuclockid(rl_act_pid(c), &clock) ||
	    clock_gettime(clock, &ts))
		return -1;
	return ((long long)ts.tv_sec * 1000000000 + ts.tv_nsec - rl_said_int(c, "cpu_ns")) /
	       1000000;
}

/*
 * The completion was there (or came) and the wait gave it back at once:
 * the act was done within PROMPT_MS of what the test itself waited, far
 * less than s->timeout_ms. A wait that sleeps its timeout through before it
 * polls is caught here.
 */
static bool prompt(struct rl_case *c, const char *what)
{
	const struct wait_in *in = c->in;
	int waited = in->when == LATE       ? in->late_ms + SETTLE_MS :
		     in->when == BEFORE_ARM ? SETTLE_MS :
					      0;
	long long wall = wall_ms(c);

	return rl_expect(c, wall < waited + PROMPT_MS,
			 "%s: expected it taken as the completion came, the act done within "
			 "about %d ms; it took %lld ms, with s->timeout_ms %d (sleep on the "
			 "channel: poll() wakes when the completion comes; docs/lab4.md#step-5)",
			 what, waited, wall, in->timeout_ms);
}

/* It slept while it waited for the late completion: under a quarter of the time in CPU. */
static bool asleep(struct rl_case *c, const char *what)
{
	long long cpu = cpu_ms(c), wall = wall_ms(c) - SETTLE_MS;

	return rl_expect(c, cpu >= 0 && cpu * 4 < wall,
			 "%s: expected it to sleep while it waited: it used %lld ms of CPU in "
			 "%lld ms (the kernel's count)",
			 what, cpu, wall);
}

/* The sender's CQ could be destroyed: every event taken was acknowledged. */
static bool closed(struct rl_case *c)
{
	return rl_expect(c, rl_said_int(c, "closed"),
			 "expected the sender's CQ destroyed at the end, ibv_destroy_cq() still "
			 "waits after %d ms: an event taken with ibv_get_cq_event() was not "
			 "acknowledged (ibv_ack_cq_events)",
			 CLOSE_MS);
}

/*
 * A first wait took a write that came IN->late_ms in, as it came; the
 * second, with nothing in flight, gave up with -ETIMEDOUT after about
 * IN->timeout_ms, asleep on the armed CQ meanwhile (after the budget, for
 * adaptive): the wait it is, not a sleep of s->timeout_ms and a fixed
 * answer. The two are timed together, on the parent's clock.
 */
static void timed_out(struct rl_case *c)
{
	const struct wait_in *in = c->in;
	long long first = rl_said_int(c, "first"), ret = rl_said_int(c, "ret");
	long long arms = rl_said_int(c, "arms") - rl_said_int(c, "first_arms");
	long long wall = wall_ms(c), cpu = cpu_ms(c);
	int want = in->late_ms + in->timeout_ms;

	if (!rl_expect(c, first == 1 && rl_said_int(c, "first_wr_id") == in->index,
		       "first, a write %d ms in: expected its good completion (chunk %u), got %lld "
		       "(%s)",
		       in->late_ms, in->index, first,
		       first < 0 ? strerror((int)-first) : "a count") ||
	    !rl_expect(c, ret == -ETIMEDOUT,
		       "then nothing in flight: expected -ETIMEDOUT, got %lld (%s)", ret,
		       ret < 0 ? strerror((int)-ret) : "a count") ||
	    !closed(c))
		return;
	if (!rl_expect(c, arms >= 1,
		       "timeout %d ms, nothing in flight: expected it to arm the CQ "
		       "(ibv_req_notify_cq) and sleep on the channel, it never armed it",
		       in->timeout_ms) ||
	    !rl_expect(c, wall >= want - 50 && wall < want + PROMPT_MS,
		       "a write %d ms into a wait of %d ms, then a wait of %d ms with nothing in "
		       "flight: expected the first to end as the write came and the second to "
		       "give up after its timeout, about %d ms in all, though it woke to events "
		       "that brought nothing; they took %lld ms: the timeout bounds each call's "
		       "whole wait (see docs/lab4.md#step-5)",
		       in->late_ms, WAIT_MS, in->timeout_ms, want, wall))
		return;
	rl_expect(c, cpu >= 0 && cpu * 4 < wall,
		  "timeout %d ms, nothing in flight: expected it to sleep on the channel until "
		  "then; used %lld ms of CPU in %lld ms (the kernel's count)",
		  in->timeout_ms, cpu, wall);
}

static void event_already_setup(struct rl_case *c)
{
	wait_setup(c, ALREADY, 0, false, 0, WAIT_MS);
}

static void event_already_check(struct rl_case *c)
{
	const char *what = "a completion already in the CQ (an armed CQ raises no event for "
			   "it: docs/lab4.md#step-5, \"The race\")";

	if (took_the_chunk(c, what) && closed(c))
		prompt(c, what);
}

RL_GRADED(poll_event_returns_a_completion_already_in_the_cq, .step = 5, .points = 1,
	  .setup = event_already_setup, .act = wait_once, .check = event_already_check);

static void event_late_setup(struct rl_case *c)
{
	wait_setup(c, LATE, 500, false, 0, WAIT_MS);
}

static void event_late_check(struct rl_case *c)
{
	const char *what = "a completion 500 ms later";
	long long acked = rl_said_int(c, "acked");

	if (!took_the_chunk(c, what) ||
	    !rl_expect(c, rl_said_int(c, "arms") >= 1,
		       "expected the CQ armed (ibv_req_notify_cq) before sleeping, it never was") ||
	    !rl_expect(c, acked >= 1,
		       "expected the event it woke on to be acknowledged (ibv_ack_cq_events), "
		       "got %lld acknowledged: ibv_destroy_cq() waits for ever on one that is not",
		       acked) ||
	    !closed(c))
		return;
	if (prompt(c, what))
		asleep(c, what);
}

RL_GRADED(poll_event_sleeps_until_a_late_completion_then_takes_it, .step = 5, .points = 2,
	  .setup = event_late_setup, .act = wait_once, .check = event_late_check);

static void event_race_setup(struct rl_case *c)
{
	wait_setup(c, BEFORE_ARM, 0, false, 0, WAIT_MS);
}

/* The CQ was armed: the test's write landed then, just before the arm. */
static bool armed(struct rl_case *c, const char *what)
{
	return rl_expect(c, rl_said_int(c, "arms") >= 1,
			 "%s: expected the CQ armed (ibv_req_notify_cq) before sleeping, it never "
			 "was (ret %lld)",
			 what, rl_said_int(c, "ret"));
}

static void event_race_check(struct rl_case *c)
{
	const char *what =
		"a completion that landed just before the CQ was armed raises no "
		"event, so what must come between the arm and the sleep? see docs/lab4.md#step-5";

	if ((rl_said_int(c, "ret") != 1 || armed(c, "nothing in the CQ")) &&
	    took_the_chunk(c, what) && closed(c))
		prompt(c, what);
}

RL_GRADED(poll_event_takes_a_completion_that_lands_just_before_the_arm, .step = 5, .points = 2,
	  .setup = event_race_setup, .act = wait_once, .check = event_race_check);

static void event_timeout_setup(struct rl_case *c)
{
	wait_setup(c, NEVER, (int)fx_between(200, 400), false, 0, 400);
}

RL_GRADED(poll_event_gives_up_after_the_timeout_when_nothing_is_in_flight, .step = 5, .points = 1,
	  .setup = event_timeout_setup, .act = wait_once, .check = timed_out);

static void adaptive_budget_setup(struct rl_case *c)
{
	wait_setup(c, LATE, 300, true, 3000000, WAIT_MS);
}

static void adaptive_budget_check(struct rl_case *c)
{
	const char *what = "spin budget 3 s, a completion 300 ms later";

	if (took_the_chunk(c, what) &&
	    rl_expect(c, rl_said_int(c, "arms") == 0,
		      "%s: expected it taken by polling, without arming the CQ; it was armed %lld "
		      "times: s->spin_us is in microseconds (see docs/lab4.md#step-5)",
		      what, rl_said_int(c, "arms")) &&
	    closed(c))
		prompt(c, what);
}

RL_GRADED(poll_adaptive_polls_through_its_budget_without_arming, .step = 5, .points = 2,
	  .setup = adaptive_budget_setup, .act = wait_once, .check = adaptive_budget_check);

static void adaptive_sleeps_setup(struct rl_case *c)
{
	wait_setup(c, LATE, 600, true, 20000, WAIT_MS);
}

static void adaptive_sleeps_check(struct rl_case *c)
{
	const char *what = "spin budget 20 ms, a completion 600 ms later";
	long long arms = rl_said_int(c, "arms");

	if (took_the_chunk(c, what) &&
	    rl_expect(c, arms >= 1,
		      "%s: expected it to arm the CQ and sleep after 20 ms; it was never armed "
		      "(see docs/lab4.md#step-5)",
		      what) &&
	    closed(c) && prompt(c, what))
		asleep(c, what);
}

RL_GRADED(poll_adaptive_sleeps_once_its_budget_is_spent, .step = 5, .points = 2,
	  .setup = adaptive_sleeps_setup, .act = wait_once, .check = adaptive_sleeps_check);

static void adaptive_race_setup(struct rl_case *c)
{
	wait_setup(c, BEFORE_ARM, 0, true, 1000, WAIT_MS);
}

static void adaptive_race_check(struct rl_case *c)
{
	const char *what = "spin budget 1 ms, then a completion just before the arm, which "
			   "raises no event (see docs/lab4.md#step-5)";

	if ((rl_said_int(c, "ret") != 1 || armed(c, "spin budget 1 ms, nothing in the CQ")) &&
	    took_the_chunk(c, what) && closed(c))
		prompt(c, what);
}

RL_GRADED(poll_adaptive_takes_a_completion_that_lands_just_before_the_arm, .step = 5, .points = 1,
	  .setup = adaptive_race_setup, .act = wait_once, .check = adaptive_race_check);

static void adaptive_timeout_setup(struct rl_case *c)
{
	wait_setup(c, NEVER, (int)fx_between(200, 400), true, 1000, 400);
}

RL_GRADED(poll_adaptive_gives_up_after_the_timeout, .step = 5, .points = 1,
	  .setup = adaptive_timeout_setup, .act = wait_once, .check = timed_out);
