/* cq.c: Lab 2 step 2: a CQ with a completion channel, and sleeping until a completion comes. */
#include <poll.h>
#include <time.h>

#include "lab2.h"

/*
 * Step 2. Create a completion channel on CTX (C->comp) and a CQ of
 * LAB2_CQ_DEPTH entries bound to it (C->cq). Returns 0, or a negative
 * errno after printing why; what was made stays in C.
 */
int lab2_create_cq(struct lab2_conn *c, struct ibv_context *ctx)
{
	/* BEGIN SOLUTION step 2
	 * A completion channel is a file descriptor: a CQ made with it raises an
	 * event there at its next completion, once armed. Busy polling needs none.
	 * Read: man ibv_create_comp_channel, man ibv_create_cq.
	 * stub: return rl_todo(2);
	 */
	c->comp = ibv_create_comp_channel(ctx);
	if (!c->comp)
		return rl_fail("ibv_create_comp_channel", errno, "on %s",
			       ibv_get_device_name(ctx->device));
	c->cq = ibv_create_cq(ctx, LAB2_CQ_DEPTH, NULL, c->comp, 0);
	if (!c->cq)
		return rl_fail("ibv_create_cq", errno, "of %d entries with a channel",
			       LAB2_CQ_DEPTH);
	return 0;
	/* END SOLUTION */
}

/* BEGIN SOLUTION step 2
 * Helpers of your own, if you want them: milliseconds on a clock that
 * never jumps, and taking one CM event while waiting for completions.
 */
static int64_t lab2_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A CM event that came while we waited for a completion: DISCONNECTED and errors end it. */
static void lab2_take_cm_event(struct lab2_conn *c)
{
	struct rdma_cm_event *event;

	if (rdma_get_cm_event(c->cm_ch, &event))
		return;
	rl_debug("rdma_cm: %s while waiting for a completion", rdma_event_str(event->event));
	if (event->event != RDMA_CM_EVENT_ESTABLISHED)
		c->gone = true;
	rdma_ack_cm_event(event);
}
/* END SOLUTION */

/*
 * Step 2. Take the next completion of C->cq into WC, sleeping on C->comp
 * (and on C->cm_ch, if not NULL) while the CQ is empty, for at most
 * C->timeout_ms. Returns 0 for a completion that succeeded; -EIO for one
 * that failed (WC says why, printed with its status); -ECONNRESET once the
 * peer has disconnected and the CQ is empty; -ETIMEDOUT.
 */
int lab2_wait_wc(struct lab2_conn *c, struct ibv_wc *wc)
{
	/* BEGIN SOLUTION step 2
	 * Sleep on the channel's fd while the CQ is empty, yet never through a completion:
	 * the order of polling, arming and sleeping is yours (docs/lab2.md#step-2).
	 * Read: man ibv_req_notify_cq, man ibv_get_cq_event, man ibv_ack_cq_events.
	 * stub: return rl_todo(2);
	 */
	int64_t deadline = lab2_now_ms() + c->timeout_ms, left;
	struct pollfd pfd[2] = {
		{ .fd = c->comp->fd, .events = POLLIN },
		{ .fd = c->cm_ch ? c->cm_ch->fd : -1, .events = POLLIN },
	};
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int n, ret;

	for (;;) {
		n = ibv_poll_cq(c->cq, 1, wc);
		if (n == 0 && !c->gone) {
			ret = ibv_req_notify_cq(c->cq, 0);
			if (ret)
				return rl_fail("ibv_req_notify_cq", ret, "CQ %p", (void *)c->cq);
			n = ibv_poll_cq(c->cq, 1, wc);
		}
		if (n < 0)
			return rl_fail("ibv_poll_cq", EIO, "CQ %p", (void *)c->cq);
		if (n > 0)
			break;
		if (c->gone) {
			rl_err("connection lost: the peer disconnected");
			return -ECONNRESET;
		}
		left = deadline - lab2_now_ms();
		n = left > 0 ? poll(pfd, 2, (int)left) : 0;
		if (n < 0 && errno != EINTR)
			return rl_fail("poll", errno, "on the completion and CM channels");
		if (n == 0) {
			rl_err("no completion within %d ms", c->timeout_ms);
			return -ETIMEDOUT;
		}
		if (n > 0 && pfd[1].revents)
			lab2_take_cm_event(c);
		if (n > 0 && pfd[0].revents && !ibv_get_cq_event(c->comp, &ev_cq, &ev_ctx))
			ibv_ack_cq_events(ev_cq, 1);
	}
	if (wc->status != IBV_WC_SUCCESS)
		return rl_fail_wc(lab2_wr_name(wc->wr_id), wc);
	return 0;
	/* END SOLUTION */
}
