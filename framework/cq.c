/*
 * cq.c: wait for completions, either by busy polling the CQ or by sleeping
 * on a completion channel until the CQ reports an event. Timeouts are in
 * milliseconds; a negative timeout waits for ever.
 */
#include <errno.h>
#include <poll.h>
#include <time.h>

#include "rdmalab.h"

/* Milliseconds on a clock that never jumps. */
static int64_t rl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left until DEADLINE (never negative), or -1 for no deadline. */
static int rl_ms_left(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - rl_now_ms();
	return left > 0 ? (int)left : 0;
}

/* Check a completion that was polled: 0 if it succeeded, else report it. */
static int rl_check_wc(const struct ibv_wc *wc)
{
	if (wc->status != IBV_WC_SUCCESS)
		return rl_fail_wc("work completion", wc);
	rl_debug("completion wr_id %llu opcode %d, %u bytes", (unsigned long long)wc->wr_id,
		 wc->opcode, wc->byte_len);
	return 0;
}

/*
 * Busy-poll CQ for one completion into WC. Returns 0 when it succeeded,
 * -EIO when it completed with an error (WC says which), -ETIMEDOUT.
 */
int rl_poll_cq(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? -1 : rl_now_ms() + timeout_ms;
	int n;

	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			return rl_fail("ibv_poll_cq", EIO, "on CQ %p", (void *)cq);
		if (n > 0)
			return rl_check_wc(wc);
		if (deadline >= 0 && rl_now_ms() >= deadline) {
			rl_err("ibv_poll_cq: no completion within %d ms", timeout_ms);
			return -ETIMEDOUT;
		}
	}
}

/* Create a completion channel: a file descriptor the CQs can wake. */
struct ibv_comp_channel *rl_create_comp_channel(struct ibv_context *ctx)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);

	if (!ch)
		rl_fail("ibv_create_comp_channel", errno, "on %s",
			ibv_get_device_name(ctx->device));
	return ch;
}

/* Ask CQ for one event on its channel when the next completion arrives. */
int rl_req_notify_cq(struct ibv_cq *cq)
{
	int ret = ibv_req_notify_cq(cq, 0);

	if (ret)
		return rl_fail("ibv_req_notify_cq", ret, "on CQ %p", (void *)cq);
	return 0;
}

/*
 * Sleep until CH has an event (at most TIMEOUT_MS), take it and acknowledge
 * it at once; *CQ says which CQ it was for. 0, -ETIMEDOUT or -errno.
 */
int rl_get_cq_event(struct ibv_comp_channel *ch, int timeout_ms, struct ibv_cq **cq)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	void *cq_context;
	int n;

	do {
		n = poll(&pfd, 1, timeout_ms);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return rl_fail("poll", errno, "on completion channel fd %d", ch->fd);
	if (n == 0) {
		rl_err("ibv_get_cq_event: no completion event within %d ms", timeout_ms);
		return -ETIMEDOUT;
	}
	if (ibv_get_cq_event(ch, cq, &cq_context))
		return rl_fail("ibv_get_cq_event", errno, "on completion channel fd %d", ch->fd);
	ibv_ack_cq_events(*cq, 1);
	return 0;
}

/*
 * Wait on CH for one completion of CQ into WC, sleeping between events.
 * Re-arms before polling again, so a completion that lands between the
 * last poll and the re-arm is not missed. Same returns as rl_poll_cq().
 */
int rl_wait_cq(struct ibv_comp_channel *ch, struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? -1 : rl_now_ms() + timeout_ms;
	struct ibv_cq *ev_cq;
	int n, ret;

	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			return rl_fail("ibv_poll_cq", EIO, "on CQ %p", (void *)cq);
		if (n > 0)
			return rl_check_wc(wc);
		ret = rl_req_notify_cq(cq);
		if (ret)
			return ret;
		n = ibv_poll_cq(cq, 1, wc);
		if (n > 0)
			return rl_check_wc(wc);
		ret = rl_get_cq_event(ch, rl_ms_left(deadline), &ev_cq);
		if (ret)
			return ret;
	}
}

/* Poll CQ until it is empty, discarding what is there; returns how many. */
int rl_drain_cq(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int count = 0;

	while (ibv_poll_cq(cq, 1, &wc) > 0)
		count++;
	return count;
}
