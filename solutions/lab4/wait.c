/*
 * wait.c: Lab 4 step 5: how the sender waits for its completions. Three
 * strategies behind one switch (--wait): busy-poll the CQ, sleep on its
 * completion channel, or poll for a short budget and then sleep (adaptive).
 */
#include <poll.h>
#include <string.h>

#include "lab4.h"

static const char *const lab4_wait_names[] = {
	[LAB4_WAIT_BUSY] = "busy",
	[LAB4_WAIT_EVENT] = "event",
	[LAB4_WAIT_ADAPTIVE] = "adaptive",
};

const char *lab4_wait_name(enum lab4_wait wait)
{
	return wait <= LAB4_WAIT_ADAPTIVE ? lab4_wait_names[wait] : "unknown";
}

/* The strategy NAME names, into *OUT; -EINVAL after one line when it names none. */
int lab4_wait_parse(const char *name, enum lab4_wait *out)
{
	int i;

	for (i = LAB4_WAIT_BUSY; i <= LAB4_WAIT_ADAPTIVE; i++) {
		if (!strcmp(name, lab4_wait_names[i])) {
			*out = (enum lab4_wait)i;
			return 0;
		}
	}
	rl_err("--wait takes busy, event or adaptive, not '%s'", name);
	return -EINVAL;
}

/*
 * Poll s's CQ for up to MAX completions into WC until some come or the clock
 * passes UNTIL_US (lab4_now_us()). The clock is read once every
 * LAB4_SPIN_CHECK empty polls: a poll costs tens of nanoseconds, a clock
 * read can cost a system call. Returns how many came (0: none by UNTIL_US),
 * or -EIO when the poll itself fails.
 */
int lab4_spin_sends(struct lab4_sender *s, struct ibv_wc *wc, int max, int64_t until_us)
{
	int i, n;

	for (;;) {
		for (i = 0; i < LAB4_SPIN_CHECK; i++) {
			n = ibv_poll_cq(s->cq, max, wc);
			if (n < 0)
				return rl_fail("ibv_poll_cq", EIO, "on the sender's CQ");
			if (n > 0)
				return n;
		}
		if (lab4_now_us() >= until_us)
			return 0;
	}
}

/* The one line every strategy prints when no write completed in time. */
static int lab4_sends_timed_out(const struct lab4_sender *s)
{
	rl_err("timed out: no write completed for %d ms (%u of %u chunks done, %s wait)",
	       s->timeout_ms, s->completed, s->nchunks, lab4_wait_name(s->wait));
	return -ETIMEDOUT;
}

/*
 * Busy: poll until a completion comes, for at most s->timeout_ms. The
 * completion is seen the moment it lands, and a whole CPU is spent meanwhile.
 */
int lab4_poll_busy(struct lab4_sender *s, struct ibv_wc *wc, int max)
{
	int n = lab4_spin_sends(s, wc, max, lab4_now_us() + (int64_t)s->timeout_ms * 1000);

	return n == 0 ? lab4_sends_timed_out(s) : n;
}

/*
 * Sleep on s's completion channel until the armed CQ raises an event, then
 * acknowledge it, or fail after one line when the clock passes DEADLINE_MS
 * (lab4_now_ms()). The caller arms the CQ and polls it once more first.
 */
int lab4_sleep_sends(struct lab4_sender *s, int64_t deadline_ms)
{
	struct pollfd pfd = { .fd = s->comp->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *context;
	int64_t left = deadline_ms - lab4_now_ms();
	int n;

	n = left > 0 ? poll(&pfd, 1, (int)left) : 0;
	if (n < 0 && errno == EINTR)
		return 0;
	if (n < 0)
		return rl_fail("poll", errno, "on the sender's completion channel");
	if (n == 0)
		return lab4_sends_timed_out(s);
	if (ibv_get_cq_event(s->comp, &cq, &context))
		return rl_fail("ibv_get_cq_event", errno, "on the sender's channel");
	ibv_ack_cq_events(cq, 1);
	return 0;
}

/*
 * Step 5. Event: up to MAX completions of s's CQ into WC, sleeping on the
 * completion channel whenever the CQ is empty. Returns how many (at least
 * 1), -ETIMEDOUT when none came for s->timeout_ms, -EIO when a poll fails.
 */
int lab4_poll_event(struct lab4_sender *s, struct ibv_wc *wc, int max)
{
	/* BEGIN SOLUTION step 5
	 * Look at the CQ, arm it (rl_req_notify_cq) and sleep (lab4_sleep_sends())
	 * in an order that misses no completion, one timeout for the whole call:
	 * docs/lab4.md#step-5, "The race".
	 * Read: man ibv_req_notify_cq, man ibv_get_cq_event (its example).
	 * stub: return rl_todo(5);
	 */
	int64_t deadline = lab4_now_ms() + s->timeout_ms;
	int n, ret;

	for (;;) {
		n = ibv_poll_cq(s->cq, max, wc);
		if (n != 0)
			break;
		ret = rl_req_notify_cq(s->cq);
		if (ret)
			return ret;
		n = ibv_poll_cq(s->cq, max, wc);
		if (n != 0)
			break;
		ret = lab4_sleep_sends(s, deadline);
		if (ret)
			return ret;
	}
	return n > 0 ? n : rl_fail("ibv_poll_cq", EIO, "on the sender's CQ");
	/* END SOLUTION */
}

/*
 * Step 5. Adaptive: poll for s->spin_us microseconds; when nothing came,
 * wait as lab4_poll_event() does. Same returns as lab4_poll_event().
 */
int lab4_poll_adaptive(struct lab4_sender *s, struct ibv_wc *wc, int max)
{
	/* BEGIN SOLUTION step 5
	 * A completion due within the spin budget is taken without paying for a
	 * sleep and a wake-up; a later one costs the budget, then no more CPU.
	 * lab4_spin_sends() spins: its limit's clock and unit, docs/lab4.md#step-5.
	 * stub: return rl_todo(5);
	 */
	int n = lab4_spin_sends(s, wc, max, lab4_now_us() + s->spin_us);

	return n != 0 ? n : lab4_poll_event(s, wc, max);
	/* END SOLUTION */
}

/*
 * Up to MAX completions of s's CQ into WC, waiting as s->wait says: what
 * step 1's pipeline calls. At least 1, or a negative errno (-ETIMEDOUT
 * after s->timeout_ms without one). The completions' status is the caller's.
 */
int lab4_poll_sends(struct lab4_sender *s, struct ibv_wc *wc, int max)
{
	switch (s->wait) {
	case LAB4_WAIT_BUSY:
		return lab4_poll_busy(s, wc, max);
	case LAB4_WAIT_EVENT:
		return lab4_poll_event(s, wc, max);
	default:
		return lab4_poll_adaptive(s, wc, max);
	}
}
