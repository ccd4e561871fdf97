/*
 * test_wait.c: Lab 4 step 5: waiting for completions by sleeping on the
 * completion channel (event) and by polling for a budget first (adaptive).
 * The act holds a connected pair; the test's own write of a chunk chosen
 * at random completes already, late, just before the CQ is armed, or
 * never; the act says what the lab's wait returned and what it cost. The
 * sender's CQ arms are counted through the context's req_notify_cq, which
 * can also land a completion just before the arm.
 */
#define _GNU_SOURCE /* pthread_timedjoin_np */
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"

/* Long enough for an RDMA write's acknowledgement to reach the sender's CQ. */
#define SETTLE_US 300000
#define CLOSE_MS 3000

/* When the test's write completes, against the lab's wait. */
enum when {
	NEVER,      /* nothing is in flight */
	ALREADY,    /* before the wait starts */
	LATE,       /* LATE_MS after it starts */
	BEFORE_ARM, /* inside the first arm, just before it */
};

/* The inputs: the chunk written, when, and how the lab's wait is told to wait. */
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

/* Post chunk INDEX, signaled, and wait until it has landed and been acknowledged. */
static void land_a_completion(struct fx_pair *p, uint32_t index)
{
	struct ibv_wc wc;

	ck_assert_int_eq(fx_ref_post(&p->s, index, true), 0);
	fx_recv_wc(&p->r, &wc);
	usleep(SETTLE_US);
}

static int counting_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	if (cq == watched->s.cq) {
		arms++;
		if (land_before_arm) {
			land_before_arm = false;
			land_a_completion(watched, land_index);
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

static int64_t thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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

/*
 * The act: the write as IN says, one call of the lab's wait, timed (wall
 * and CPU milliseconds of this thread), and what it cost: arms, events
 * acknowledged, completions it left in the CQ.
 */
static void wait_once(struct rl_case *c)
{
	const struct wait_in *in = c->in;
	struct late_post lp = { .index = in->index, .delay_ms = in->late_ms };
	struct ibv_wc wc[4], left;
	int64_t wall, cpu;
	struct fx_pair p;
	int ret, i;

	/* What a wait that returns without filling WC in leaves there: no chunk's. */
	for (i = 0; i < 4; i++)
		wc[i] = (struct ibv_wc){ .wr_id = 0xdead, .status = IBV_WC_GENERAL_ERR };

	open_sender(&p, in);
	lp.p = &p;
	if (in->when == ALREADY)
		land_a_completion(&p, in->index);
	land_before_arm = in->when == BEFORE_ARM;
	if (in->when == LATE)
		ck_assert_int_eq(pthread_create(&lp.thread, NULL, late_post_run, &lp), 0);
	wall = lab4_now_ms();
	cpu = thread_cpu_ms();
	ret = in->adaptive ? lab4_poll_adaptive(&p.s, wc, 4) : lab4_poll_event(&p.s, wc, 4);
	rl_say_int("cpu_ms", thread_cpu_ms() - cpu);
	rl_say_int("wall_ms", lab4_now_ms() - wall);
	if (in->when == LATE) {
		pthread_join(lp.thread, NULL);
		ck_assert_msg(lp.ret == 0, "fixture: the late post failed: %s", strerror(-lp.ret));
		/* Landed and acknowledged, whenever the wait returned: then is it in the CQ? */
		fx_recv_wc(&p.r, &left);
	}
	rl_say_int("ret", ret);
	rl_say_int("wr_id", (long long)wc[0].wr_id);
	rl_say_int("status", wc[0].status);
	rl_say_int("arms", arms);
	rl_say_int("acked", p.s.cq->comp_events_completed);
	rl_say_int("left", fx_poll_one(p.s.cq, &left, in->when == LATE ? SETTLE_US / 1000 : 0));
	close_sender(&p);
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
	long long ret = rl_said_int(c, "ret"), wall = rl_said_int(c, "wall_ms");
	long long status = rl_said_int(c, "status");

	if (!rl_expect(c, ret == 1, "%s: expected 1 completion, got %lld (%s) after %lld ms", what,
		       ret, ret < 0 ? strerror((int)-ret) : "a count", wall) ||
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

/*
 * It gave up with -ETIMEDOUT after about IN->timeout_ms, asleep on the
 * armed CQ meanwhile (after the budget, for adaptive): the wait it is, not
 * a sleep of s->timeout_ms and a fixed answer.
 */
static bool timed_out(struct rl_case *c)
{
	const struct wait_in *in = c->in;
	long long ret = rl_said_int(c, "ret"), wall = rl_said_int(c, "wall_ms");
	long long cpu = rl_said_int(c, "cpu_ms"), arms = rl_said_int(c, "arms");

	if (!rl_expect(c, ret == -ETIMEDOUT, "expected -ETIMEDOUT, got %lld (%s)", ret,
		       ret < 0 ? strerror((int)-ret) : "a count") ||
	    !rl_expect(c, wall >= in->timeout_ms - 50 && wall < in->timeout_ms + 3000,
		       "timeout %d ms: expected to give up after about %d ms, took %lld ms",
		       in->timeout_ms, in->timeout_ms, wall))
		return false;
	return rl_expect(c, arms >= 1 && cpu * 4 < wall,
			 "timeout %d ms, nothing in flight: expected it to arm the CQ and sleep "
			 "on the channel until then; armed %lld times, used %lld ms of CPU in %lld "
			 "ms",
			 in->timeout_ms, arms, cpu, wall);
}

/* The sender's CQ could be destroyed: every event taken was acknowledged. */
static void closed(struct rl_case *c)
{
	rl_expect(c, rl_said_int(c, "closed"),
		  "expected the sender's CQ destroyed at the end, ibv_destroy_cq() still waits "
		  "after %d ms: an event taken with ibv_get_cq_event() was not acknowledged "
		  "(ibv_ack_cq_events)",
		  CLOSE_MS);
}

static void event_already_setup(struct rl_case *c)
{
	wait_setup(c, ALREADY, 0, false, 0, 3000);
}

static void event_already_check(struct rl_case *c)
{
	if (took_the_chunk(c, "a completion already in the CQ (poll before you sleep: an armed "
			      "CQ raises no event for it)"))
		closed(c);
}

RL_GRADED(poll_event_returns_a_completion_already_in_the_cq, .step = 5, .points = 1,
	  .setup = event_already_setup, .act = wait_once, .check = event_already_check);

static void event_late_setup(struct rl_case *c)
{
	wait_setup(c, LATE, 500, false, 0, 5000);
}

static void event_late_check(struct rl_case *c)
{
	long long cpu = rl_said_int(c, "cpu_ms"), wall = rl_said_int(c, "wall_ms");
	long long acked = rl_said_int(c, "acked");

	if (!took_the_chunk(c, "a completion 500 ms later") ||
	    !rl_expect(c, rl_said_int(c, "arms") >= 1,
		       "expected the CQ armed (ibv_req_notify_cq) before sleeping, it never was") ||
	    !rl_expect(c, cpu * 4 < wall,
		       "expected it to sleep while it waited: it used %lld ms of CPU in %lld ms",
		       cpu, wall) ||
	    !rl_expect(c, acked >= 1,
		       "expected the event it woke on to be acknowledged (ibv_ack_cq_events), "
		       "got %lld acknowledged: ibv_destroy_cq() waits for ever on one that is not",
		       acked))
		return;
	closed(c);
}

RL_GRADED(poll_event_sleeps_until_a_late_completion_then_takes_it, .step = 5, .points = 2,
	  .setup = event_late_setup, .act = wait_once, .check = event_late_check);

static void event_race_setup(struct rl_case *c)
{
	wait_setup(c, BEFORE_ARM, 0, false, 0, 1500);
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
	if ((rl_said_int(c, "ret") != 1 || armed(c, "nothing in the CQ")) &&
	    took_the_chunk(c, "a completion that landed just before the CQ was armed raises no "
			      "event: poll once more after ibv_req_notify_cq(), before sleeping"))
		closed(c);
}

RL_GRADED(poll_event_takes_a_completion_that_lands_just_before_the_arm, .step = 5, .points = 2,
	  .setup = event_race_setup, .act = wait_once, .check = event_race_check);

static void event_timeout_setup(struct rl_case *c)
{
	wait_setup(c, NEVER, 0, false, 0, 400);
}

static void timeout_check(struct rl_case *c)
{
	if (timed_out(c))
		closed(c);
}

RL_GRADED(poll_event_gives_up_after_the_timeout_when_nothing_is_in_flight, .step = 5, .points = 1,
	  .setup = event_timeout_setup, .act = wait_once, .check = timeout_check);

static void adaptive_budget_setup(struct rl_case *c)
{
	wait_setup(c, LATE, 300, true, 3000000, 6000);
}

static void adaptive_budget_check(struct rl_case *c)
{
	if (took_the_chunk(c, "spin budget 3 s, a completion 300 ms later") &&
	    rl_expect(c, rl_said_int(c, "arms") == 0,
		      "spin budget 3 s, a completion 300 ms later: expected it taken by polling, "
		      "without arming the CQ; it was armed %lld times",
		      rl_said_int(c, "arms")))
		closed(c);
}

RL_GRADED(poll_adaptive_polls_through_its_budget_without_arming, .step = 5, .points = 2,
	  .setup = adaptive_budget_setup, .act = wait_once, .check = adaptive_budget_check);

static void adaptive_sleeps_setup(struct rl_case *c)
{
	wait_setup(c, LATE, 600, true, 20000, 5000);
}

static void adaptive_sleeps_check(struct rl_case *c)
{
	long long cpu = rl_said_int(c, "cpu_ms"), wall = rl_said_int(c, "wall_ms");
	long long arms = rl_said_int(c, "arms");

	if (took_the_chunk(c, "spin budget 20 ms, a completion 600 ms later") &&
	    rl_expect(c, arms >= 1 && cpu * 4 < wall,
		      "spin budget 20 ms: expected it to arm the CQ and sleep after 20 ms; "
		      "armed %lld times, used %lld ms of CPU in %lld ms",
		      arms, cpu, wall))
		closed(c);
}

RL_GRADED(poll_adaptive_sleeps_once_its_budget_is_spent, .step = 5, .points = 2,
	  .setup = adaptive_sleeps_setup, .act = wait_once, .check = adaptive_sleeps_check);

static void adaptive_race_setup(struct rl_case *c)
{
	wait_setup(c, BEFORE_ARM, 0, true, 1000, 1500);
}

static void adaptive_race_check(struct rl_case *c)
{
	if ((rl_said_int(c, "ret") != 1 || armed(c, "spin budget 1 ms, nothing in the CQ")) &&
	    took_the_chunk(c, "spin budget 1 ms, then a completion just before the arm (poll "
			      "once more after ibv_req_notify_cq())"))
		closed(c);
}

RL_GRADED(poll_adaptive_takes_a_completion_that_lands_just_before_the_arm, .step = 5, .points = 1,
	  .setup = adaptive_race_setup, .act = wait_once, .check = adaptive_race_check);

static void adaptive_timeout_setup(struct rl_case *c)
{
	wait_setup(c, NEVER, 0, true, 1000, 400);
}

RL_GRADED(poll_adaptive_gives_up_after_the_timeout, .step = 5, .points = 1,
	  .setup = adaptive_timeout_setup, .act = wait_once, .check = timeout_check);
