/* pipeline.c: Lab 4 step 1: keep a window of RDMA writes in flight, signal every k-th. */
#include "lab4.h"

/*
 * Step 1. Send all s->nchunks chunks with s->post(s, index, signaled), in
 * order, keeping at most s->window of them posted and not known complete.
 * Ask for a completion (signaled) on every s->signal_every-th chunk, counted
 * from one, and on whichever others keep the loop from ever waiting with no
 * signaled write in flight. Keep s->posted and s->completed (in chunks) up
 * to date from the completions' wr_id. Take completions with
 * lab4_poll_sends(), which waits as s->wait says (step 5). Returns 0 when every chunk
 * completed; -EIO after a failed completion; lab4_poll_sends()'s error
 * (-ETIMEDOUT) otherwise.
 */
int lab4_pipeline(struct lab4_sender *s)
{
	/* BEGIN SOLUTION step 1
	 * Loop: post while the window has room, then take a batch of completions
	 * (lab4_poll_sends()). Which writes to signal, and what a completion of chunk
	 * I says of the others: docs/lab4.md#step-1.
	 * Read: man ibv_post_send (IBV_SEND_SIGNALED, sq_sig_all), man ibv_poll_cq.
	 * stub: return rl_todo(1);
	 */
	struct ibv_wc wc[LAB4_POLL_BATCH];
	uint32_t index;
	bool signaled;
	int i, n, ret;

	while (s->completed < s->nchunks) {
		while (s->posted < s->nchunks && s->posted - s->completed < s->window) {
			index = s->posted;
			signaled = (index + 1) % s->signal_every == 0 || index + 1 == s->nchunks ||
				   index + 1 - s->completed == s->window;
			ret = s->post(s, index, signaled);
			if (ret)
				return ret;
			s->posted++;
		}
		n = lab4_poll_sends(s, wc, LAB4_POLL_BATCH);
		if (n < 0)
			return n;
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				return rl_fail_wc("RDMA WRITE WITH IMM", &wc[i]);
			s->completed = (uint32_t)wc[i].wr_id + 1;
		}
	}
	return 0;
	/* END SOLUTION */
}
