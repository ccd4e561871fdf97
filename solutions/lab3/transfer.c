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
	/* BEGIN SOLUTION step 3
	 * mmap() the file, then ibv_reg_mr() it. Which access? Work it out from
	 * who touches these pages in this lab, and how.
	 * Read: man mmap, man ibv_reg_mr, docs/lab3.md#step-3.
	 * stub: return rl_todo(3);
	 */
	void *data;

	if (f->size == 0)
		return 0;
	data = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, f->fd, 0);
	if (data == MAP_FAILED)
		return rl_fail("mmap", errno, "%s, %llu bytes", f->path,
			       (unsigned long long)f->size);
	f->data = data;
	f->mr = ibv_reg_mr(pd, f->data, f->size, 0);
	if (!f->mr) {
		int err = rl_fail("ibv_reg_mr", errno, "%s, %llu bytes", f->path,
				  (unsigned long long)f->size);

		munmap(f->data, f->size);
		f->data = NULL;
		return err;
	}
	return 0;
	/* END SOLUTION */
}

/*
 * Step 3b. Wait for the receiver's next WINDOW into *W and check it: its
 * index is f->windows, it starts where the last one ended (f->written) and
 * ends inside the file. Returns 0, -EPROTO for a window that breaks those
 * rules, or lab3_wait_msg()'s error.
 */
int lab3_wait_window(struct lab3_conn *c, const struct lab3_file *f, struct rl_msg_window *w)
{
	/* BEGIN SOLUTION step 3
	 * Wait with lab3_wait_msg() for RL_MSG_WINDOW. Never trust the peer's
	 * numbers: a window past the end of the file would make you send bytes
	 * that are not the file's. Read: docs/protocol.md "Type 2, WINDOW".
	 * stub: return rl_todo(3);
	 */
	struct rl_msg m;
	int ret;

	ret = lab3_wait_msg(c, RL_MSG_WINDOW, &m);
	if (ret)
		return ret;
	*w = m.u.window;
	if (w->index != f->windows || w->offset != f->written || w->len > f->size - f->written) {
		rl_err("window %u at %llu, %u bytes: expected window %u at %llu, at most %llu bytes",
		       w->index, (unsigned long long)w->offset, w->len, f->windows,
		       (unsigned long long)f->written, (unsigned long long)(f->size - f->written));
		return -EPROTO;
	}
	return 0;
	/* END SOLUTION */
}

/*
 * Step 4a. Write the file bytes [w->offset, w->offset + w->len) to the
 * receiver's w->addr with w->rkey: RDMA WRITEs of at most LAB3_CHUNK bytes,
 * at most LAB3_MAX_INFLIGHT of them posted at once, and wait until every one
 * of them completed. Returns 0 or a negative errno.
 */
int lab3_write_window(struct lab3_conn *c, const struct lab3_file *f, const struct rl_msg_window *w)
{
	/* BEGIN SOLUTION step 4
	 * One RDMA WRITE per chunk, a bounded number in flight. Design the loop:
	 * where each chunk is in your MR and in the window, and which completions
	 * count. Read: man ibv_post_send; lab3_wait_completion(); docs/lab3.md#step-4.
	 * stub: return rl_todo(4);
	 */
	struct ibv_send_wr *bad_wr;
	struct ibv_wc wc;
	uint32_t posted = 0;
	int inflight = 0, ret;

	while (posted < w->len || inflight > 0) {
		if (posted < w->len && inflight < LAB3_MAX_INFLIGHT) {
			struct ibv_sge sge = {
				.addr = (uintptr_t)(f->data + w->offset + posted),
				.length = w->len - posted < LAB3_CHUNK ? w->len - posted :
									 LAB3_CHUNK,
				.lkey = f->mr->lkey,
			};
			struct ibv_send_wr wr = {
				.wr_id = LAB3_WR_WRITE,
				.sg_list = &sge,
				.num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE,
				.send_flags = IBV_SEND_SIGNALED,
				.wr.rdma.remote_addr = w->addr + posted,
				.wr.rdma.rkey = w->rkey,
			};

			ret = ibv_post_send(c->id->qp, &wr, &bad_wr);
			if (ret)
				return rl_fail("ibv_post_send", ret, "RDMA WRITE of %u bytes",
					       sge.length);
			posted += sge.length;
			inflight++;
			continue;
		}
		ret = lab3_wait_completion(c, &wc);
		if (ret)
			return ret;
		if (wc.wr_id == LAB3_WR_WRITE)
			inflight--;
	}
	return 0;
	/* END SOLUTION */
}

/*
 * Step 4b. The whole transfer: until every byte is written, take a window
 * (step 3), write it, say so with WINDOW_DONE, count it in f->written and
 * f->windows and update the progress bar. A 0-byte file has no window.
 */
int lab3_send_windows(struct lab3_conn *c, struct lab3_file *f)
{
	/* BEGIN SOLUTION step 4
	 * Every window the receiver grants: take it, write it, say it is done.
	 * Read: docs/protocol.md "The sender's state machine" and "Type 3,
	 * WINDOW_DONE".
	 * stub: return rl_todo(4);
	 */
	struct rl_msg_window w;
	struct rl_msg done = { .type = RL_MSG_WINDOW_DONE };
	int ret;

	while (f->written < f->size) {
		ret = lab3_wait_window(c, f, &w);
		if (ret)
			return ret;
		ret = lab3_write_window(c, f, &w);
		if (ret)
			return ret;
		done.u.window_done.index = w.index;
		done.u.window_done.len = w.len;
		ret = lab3_send_msg(c, &done);
		if (ret)
			return ret;
		f->written += w.len;
		f->windows++;
		lab3_progress(f);
	}
	return 0;
	/* END SOLUTION */
}
