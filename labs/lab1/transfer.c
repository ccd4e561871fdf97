/* transfer.c: Lab 1 step 10: post a receive, a send and an RDMA write; wait for their completions. */
#include <time.h>

#include "lab1.h"

/* TODO step 10
 * A helper of your own, if you want one: here, what a work request was,
 * from its wr_id (enum lab1_wr_id), for the line a failed completion prints.
 */

/*
 * Step 10. Post one receive of up to LEN bytes into BUF (inside MR), with
 * wr_id LAB1_WR_RECV. Returns 0, or a negative errno after printing why.
 */
int lab1_post_recv(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len)
{
	/* TODO step 10
	 * A receive names where the next incoming SEND lands: one SGE (address,
	 * length, lkey). Post it before the peer sends, or the peer gets RNR NAKs.
	 * Read: man ibv_post_recv.
	 */
	return rl_todo(10);
}

/*
 * Step 10. Post one signaled SEND of LEN bytes at BUF (inside MR), with
 * wr_id LAB1_WR_SEND. Returns 0, or a negative errno after printing why.
 */
int lab1_post_send(struct ibv_qp *qp, struct ibv_mr *mr, const void *buf, uint32_t len)
{
	/* TODO step 10
	 * A SEND consumes the peer's next receive. IBV_SEND_SIGNALED asks for a
	 * completion on our CQ, so we know when the buffer may be reused.
	 * Read: man ibv_post_send.
	 */
	return rl_todo(10);
}

/*
 * Step 10. Post one signaled RDMA WRITE of LEN bytes at BUF (inside MR) to
 * REMOTE_ADDR in the peer's memory that RKEY names, with wr_id
 * LAB1_WR_WRITE. Returns 0, or a negative errno after printing why.
 */
int lab1_post_write(struct ibv_qp *qp, struct ibv_mr *mr, const void *buf, uint32_t len,
		    uint64_t remote_addr, uint32_t rkey)
{
	/* TODO step 10
	 * Like a SEND, plus wr.rdma: the remote address and rkey the peer sent us.
	 * The peer posts nothing and sees no completion: its CPU is not involved.
	 * Read: man ibv_post_send (IBV_WR_RDMA_WRITE).
	 */
	return rl_todo(10);
}

/*
 * Step 10. Poll CQ until one completion arrives, for at most TIMEOUT_MS,
 * into WC. Returns 0 when it succeeded, -EIO when it failed (WC->status
 * says why; printed with ibv_wc_status_str), or -ETIMEDOUT.
 */
int lab1_wait_completion(struct ibv_cq *cq, int timeout_ms, struct ibv_wc *wc)
{
	/* TODO step 10
	 * ibv_poll_cq() returns at once: how many completions it took (0 if none)
	 * or a negative value. Loop until one arrives or the time is up; then check wc->status.
	 * Read: man ibv_poll_cq, man ibv_wc_status_str.
	 */
	return rl_todo(10);
}
