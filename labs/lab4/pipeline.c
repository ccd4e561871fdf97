/* pipeline.c: Lab 4 step 1: keep a window of RDMA writes in flight, signal every k-th. */
#include "lab4.h"

/*
 * Step 1. Send all s->nchunks chunks with s->post(s, index, signaled), in
 * order, keeping at most s->window of them posted and not known complete.
 * Ask for a completion (signaled) on every s->signal_every-th chunk, on the
 * last chunk, and on the chunk that fills the window. A completion of chunk
 * I (its wr_id) means every chunk up to I is done: keep s->posted and
 * s->completed up to date. Take completions with lab4_poll_sends(), which
 * waits for them as s->wait says (step 5). Returns 0 when every chunk
 * completed; -EIO after a failed completion; lab4_poll_sends()'s error
 * (-ETIMEDOUT) otherwise.
 */
int lab4_pipeline(struct lab4_sender *s)
{
	/* TODO step 1
	 * Loop: post while the window has room, then take a batch of completions
	 * (lab4_poll_sends()) and move s->completed past each signaled chunk (wr_id
	 * + 1). An unsignaled write completes silently: a later signaled one says so.
	 * Read: man ibv_post_send (IBV_SEND_SIGNALED, sq_sig_all), man ibv_poll_cq.
	 */
	return rl_todo(1);
}
