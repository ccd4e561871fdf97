/*
 * test_wait.c: Lab 4 step 5: waiting for completions by sleeping on the
 * completion channel (event) and by polling for a budget first (adaptive).
 * The sender's CQ arms are counted through the context's req_notify_cq, and
 * can be made to race a completion that lands just before the arm.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"

/* Long enough for an RDMA write's acknowledgement to reach the sender's CQ. */
#define SETTLE_US 300000

static struct fx_pair *watched;
static int (*real_req_notify_cq)(struct ibv_cq *cq, int solicited_only);
static int arms;             /* arms of the sender's CQ so far */
static bool land_before_arm; /* the next arm first lands a completion, unannounced */

/* Post chunk 0, signaled, and wait until it has landed and been acknowledged. */
static void land_a_completion(struct fx_pair *p)
{
	struct ibv_wc wc;

	ck_assert_int_eq(fx_ref_post(&p->s, 0, true), 0);
	fx_recv_wc(&p->r, &wc);
	usleep(SETTLE_US);
}

static int counting_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	if (cq == watched->s.cq) {
		arms++;
		if (land_before_arm) {
			land_before_arm = false;
			land_a_completion(watched);
		}
	}
	return real_req_notify_cq(cq, solicited_only);
}

/* A connected pair whose sender waits as the test says; no write in flight. */
static void open_sender(struct fx_pair *p, uint32_t spin_us, int timeout_ms)
{
	fx_pair_open(p, 4 * 4096, 4096, false);
	p->s.spin_us = spin_us;
	p->s.timeout_ms = timeout_ms;
	p->s.nchunks = 1;
	watched = p;
	arms = 0;
	land_before_arm = false;
	real_req_notify_cq = p->ctx->ops.req_notify_cq;
	p->ctx->ops.req_notify_cq = counting_req_notify_cq;
}

static void close_sender(struct fx_pair *p)
{
	p->ctx->ops.req_notify_cq = real_req_notify_cq;
	fx_pair_close(p);
}

static int64_t thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One call of the step's wait, timed: wall and CPU milliseconds of this thread. */
struct timed {
	int ret;
	struct ibv_wc wc[4];
	int64_t wall_ms;
	int64_t cpu_ms;
};

static void timed_wait(struct fx_pair *p, bool adaptive, struct timed *t)
{
	int64_t wall = lab4_now_ms(), cpu = thread_cpu_ms();

	t->ret = adaptive ? lab4_poll_adaptive(&p->s, t->wc, 4) : lab4_poll_event(&p->s, t->wc, 4);
	t->wall_ms = lab4_now_ms() - wall;
	t->cpu_ms = thread_cpu_ms() - cpu;
}

/* Chunk 0 posted by another thread DELAY_MS after it starts. */
struct late_post {
	pthread_t thread;
	struct fx_pair *p;
	int delay_ms;
	int ret;
};

static void *late_post_run(void *arg)
{
	struct late_post *lp = arg;

	usleep((useconds_t)lp->delay_ms * 1000);
	lp->ret = fx_ref_post(&lp->p->s, 0, true);
	return NULL;
}

static void late_post_start(struct late_post *lp, struct fx_pair *p, int delay_ms)
{
	lp->p = p;
	lp->delay_ms = delay_ms;
	lp->ret = 0;
	ck_assert_int_eq(pthread_create(&lp->thread, NULL, late_post_run, lp), 0);
}

static void late_post_join(struct late_post *lp)
{
	pthread_join(lp->thread, NULL);
	ck_assert_msg(lp->ret == 0, "fixture: the late post failed: %s", strerror(-lp->ret));
}

/* T took chunk 0's completion, successfully, and no other. */
static void took_chunk_0(const struct timed *t, const char *what)
{
	ck_assert_msg(t->ret == 1, "%s: expected 1 completion, got %d (%s) after %lld ms", what,
		      t->ret, t->ret < 0 ? strerror(-t->ret) : "a count", (long long)t->wall_ms);
	ck_assert_msg(t->wc[0].status == IBV_WC_SUCCESS && t->wc[0].wr_id == 0,
		      "%s: expected chunk 0's good completion, got wr_id %llu (%s)", what,
		      (unsigned long long)t->wc[0].wr_id, ibv_wc_status_str(t->wc[0].status));
}

RL_TEST(poll_event_returns_a_completion_already_in_the_cq, .step = 5, .points = 1)
{
	struct fx_pair p;
	struct timed t;

	open_sender(&p, 0, 3000);
	land_a_completion(&p);
	timed_wait(&p, false, &t);
	took_chunk_0(&t, "a completion already in the CQ (poll before you sleep: an armed CQ "
			 "raises no event for it)");
	close_sender(&p);
}
END_TEST

RL_TEST(poll_event_sleeps_until_a_late_completion_then_takes_it, .step = 5, .points = 2)
{
	struct fx_pair p;
	struct late_post lp;
	struct timed t;

	open_sender(&p, 0, 5000);
	late_post_start(&lp, &p, 500);
	timed_wait(&p, false, &t);
	late_post_join(&lp);
	took_chunk_0(&t, "a completion 500 ms later");
	ck_assert_msg(arms >= 1, "expected the CQ armed (ibv_req_notify_cq) before sleeping, "
				 "it never was");
	ck_assert_msg(t.cpu_ms * 4 < t.wall_ms,
		      "expected it to sleep while it waited: it used %lld ms of CPU in %lld ms",
		      (long long)t.cpu_ms, (long long)t.wall_ms);
	ck_assert_msg(p.s.cq->comp_events_completed >= 1,
		      "expected the event it woke on to be acknowledged (ibv_ack_cq_events), "
		      "got %u acknowledged: ibv_destroy_cq() waits for ever on one that is not",
		      p.s.cq->comp_events_completed);
	close_sender(&p);
}
END_TEST

RL_TEST(poll_event_takes_a_completion_that_lands_just_before_the_arm, .step = 5, .points = 2)
{
	struct fx_pair p;
	struct timed t;

	open_sender(&p, 0, 1500);
	land_before_arm = true;
	timed_wait(&p, false, &t);
	took_chunk_0(&t, "a completion that landed just before the CQ was armed raises no "
			 "event: poll once more after ibv_req_notify_cq(), before sleeping");
	close_sender(&p);
}
END_TEST

RL_TEST(poll_event_gives_up_after_the_timeout_when_nothing_is_in_flight, .step = 5, .points = 1)
{
	struct fx_pair p;
	struct timed t;

	open_sender(&p, 0, 400);
	timed_wait(&p, false, &t);
	ck_assert_msg(t.ret == -ETIMEDOUT, "expected -ETIMEDOUT, got %d (%s)", t.ret,
		      t.ret < 0 ? strerror(-t.ret) : "a count");
	ck_assert_msg(t.wall_ms >= 350 && t.wall_ms < 400 + 3000,
		      "timeout 400 ms: expected to give up after about 400 ms, took %lld ms",
		      (long long)t.wall_ms);
	close_sender(&p);
}
END_TEST

RL_TEST(poll_adaptive_polls_through_its_budget_without_arming, .step = 5, .points = 2)
{
	struct fx_pair p;
	struct late_post lp;
	struct timed t;

	open_sender(&p, 3000000, 6000);
	late_post_start(&lp, &p, 300);
	timed_wait(&p, true, &t);
	late_post_join(&lp);
	took_chunk_0(&t, "spin budget 3 s, a completion 300 ms later");
	ck_assert_msg(arms == 0,
		      "spin budget 3 s, a completion 300 ms later: expected it taken by polling, "
		      "without arming the CQ; it was armed %d times",
		      arms);
	close_sender(&p);
}
END_TEST

RL_TEST(poll_adaptive_sleeps_once_its_budget_is_spent, .step = 5, .points = 2)
{
	struct fx_pair p;
	struct late_post lp;
	struct timed t;

	open_sender(&p, 20000, 5000);
	late_post_start(&lp, &p, 600);
	timed_wait(&p, true, &t);
	late_post_join(&lp);
	took_chunk_0(&t, "spin budget 20 ms, a completion 600 ms later");
	ck_assert_msg(arms >= 1 && t.cpu_ms * 4 < t.wall_ms,
		      "spin budget 20 ms: expected it to arm the CQ and sleep after 20 ms; "
		      "armed %d times, used %lld ms of CPU in %lld ms",
		      arms, (long long)t.cpu_ms, (long long)t.wall_ms);
	close_sender(&p);
}
END_TEST

RL_TEST(poll_adaptive_takes_a_completion_that_lands_just_before_the_arm, .step = 5, .points = 1)
{
	struct fx_pair p;
	struct timed t;

	open_sender(&p, 1000, 1500);
	land_before_arm = true;
	timed_wait(&p, true, &t);
	took_chunk_0(&t, "spin budget 1 ms, then a completion just before the arm (poll "
			 "once more after ibv_req_notify_cq())");
	close_sender(&p);
}
END_TEST

RL_TEST(poll_adaptive_gives_up_after_the_timeout, .step = 5, .points = 1)
{
	struct fx_pair p;
	struct timed t;

	open_sender(&p, 1000, 400);
	timed_wait(&p, true, &t);
	ck_assert_msg(t.ret == -ETIMEDOUT, "expected -ETIMEDOUT, got %d (%s)", t.ret,
		      t.ret < 0 ? strerror(-t.ret) : "a count");
	ck_assert_msg(t.wall_ms >= 350 && t.wall_ms < 400 + 3000,
		      "timeout 400 ms: expected to give up after about 400 ms, took %lld ms",
		      (long long)t.wall_ms);
	close_sender(&p);
}
END_TEST
