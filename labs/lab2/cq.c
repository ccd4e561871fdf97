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
	/* TODO step 2
	 * A completion channel is a file descriptor: a CQ made with it raises an
	 * event there at its next completion, once armed. Busy polling needs none.
	 * Read: man ibv_create_comp_channel, man ibv_create_cq.
	 */
	return rl_todo(2);
}

/* TODO step 2
 * Helpers of your own, if you want them: milliseconds on a clock that
 * never jumps, and taking one CM event while waiting for completions.
 */

/*
 * Step 2. Take the next completion of C->cq into WC, sleeping on C->comp
 * (and on C->cm_ch, if not NULL) while the CQ is empty, for at most
 * C->timeout_ms. Returns 0 for a completion that succeeded; -EIO for one
 * that failed (WC says why, printed with its status); -ECONNRESET once the
 * peer has disconnected and the CQ is empty; -ETIMEDOUT.
 */
int lab2_wait_wc(struct lab2_conn *c, struct ibv_wc *wc)
{
	/* TODO step 2
	 * Sleep on the channel's fd while the CQ is empty, yet never through a completion:
	 * the order of polling, arming and sleeping is yours (docs/lab2.md#step-2).
	 * Read: man ibv_req_notify_cq, man ibv_get_cq_event, man ibv_ack_cq_events.
	 */
	return rl_todo(2);
}
