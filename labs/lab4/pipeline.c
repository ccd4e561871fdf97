/* pipeline.c: Lab 4 step 1: keep a window of RDMA writes in flight, signal every k-th. */
#include "lab4.h"

/*
 * Step 1. Send all s->nchunks chunks with s->post(s, index, signaled), in
 * order, keeping at most s->window of them posted and not known complete.
 * Ask for a completion (signaled) on every s->signal_every-th chunk, on the
 * last chunk, and on the chunk that fills the window. A completion of chunk
 * I (its wr_id) means every chunk up to I is done: keep s->posted and
 * s->completed up to date. Returns 0 when every chunk completed; -EIO after
 * a failed completion; -ETIMEDOUT when none came for s->timeout_ms.
 */
int lab4_pipeline(struct lab4_sender *s)
{
	/* TODO step 1
	 * Loop: post while the window has room, then ibv_poll_cq() a batch and move
	 * s->completed past each signaled chunk (wr_id + 1). An unsignaled write
	 * completes silently: only a later signaled one tells you it is done.
	 * Read: man ibv_post_send (IBV_SEND_SIGNALED, sq_sig_all), man ibv_poll_cq.
	 */
	return rl_todo(1);
}
