/* transfer.c: Lab 3 steps 3 and 4: register the file, then write each window the receiver grants. */
#include <sys/mman.h>

#include "lab3.h"

/*
 * Step 3a. Map the file into memory (f->data) and register it in PD
 * (f->mr) so the NIC can read it for RDMA WRITEs. A 0-byte file needs
 * neither: leave both NULL. Returns 0 or a negative errno.
 */
int lab3_register_file(struct ibv_pd *pd, struct lab3_file *f)
{
	/* TODO step 3
	 * mmap() the file, then ibv_reg_mr() it. Which access? Work it out from
	 * who touches these pages in this lab, and how.
	 * Read: man mmap, man ibv_reg_mr, docs/lab3.md#step-3.
	 */
	return rl_todo(3);
}

/*
 * Step 3b. Wait for the receiver's next WINDOW into *W and check it: its
 * index is f->windows, it starts where the last one ended (f->written) and
 * ends inside the file. Returns 0, -EPROTO for a window that breaks those
 * rules, or lab3_wait_msg()'s error.
 */
int lab3_wait_window(struct lab3_conn *c, const struct lab3_file *f, struct rl_msg_window *w)
{
	/* TODO step 3
	 * Wait with lab3_wait_msg() for RL_MSG_WINDOW. Never trust the peer's
	 * numbers: a window past the end of the file would make you send bytes
	 * that are not the file's. Read: docs/protocol.md "Type 2, WINDOW".
	 */
	return rl_todo(3);
}

/*
 * Step 4a. Write the file bytes [w->offset, w->offset + w->len) to the
 * receiver's w->addr with w->rkey: RDMA WRITEs of at most LAB3_CHUNK bytes,
 * at most LAB3_MAX_INFLIGHT of them posted at once, and wait until every one
 * of them completed. Returns 0 or a negative errno.
 */
int lab3_write_window(struct lab3_conn *c, const struct lab3_file *f, const struct rl_msg_window *w)
{
	/* TODO step 4
	 * One RDMA WRITE per chunk, a bounded number in flight. Design the loop:
	 * where each chunk is in your MR and in the window, and which completions
	 * count. Read: man ibv_post_send; lab3_wait_completion(); docs/lab3.md#step-4.
	 */
	return rl_todo(4);
}

/*
 * Step 4b. The whole transfer: until every byte is written, take a window
 * (step 3), write it, say so with WINDOW_DONE, count it in f->written and
 * f->windows and update the progress bar. A 0-byte file has no window.
 */
int lab3_send_windows(struct lab3_conn *c, struct lab3_file *f)
{
	/* TODO step 4
	 * Every window the receiver grants: take it, write it, say it is done.
	 * Read: docs/protocol.md "The sender's state machine" and "Type 3,
	 * WINDOW_DONE".
	 */
	return rl_todo(4);
}
