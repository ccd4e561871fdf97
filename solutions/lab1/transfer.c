/* transfer.c: Lab 1 step 10: post a receive, a send and an RDMA write; wait for their completions. */
#include <time.h>

#include "lab1.h"

/* BEGIN SOLUTION step 10
 * A helper of your own, if you want one: here, what a work request was,
 * from its wr_id (enum lab1_wr_id), for the line a failed completion prints.
 */
static const char *lab1_wr_name(uint64_t wr_id)
{
	switch (wr_id) {
	case LAB1_WR_RECV:
		return "receive";
	case LAB1_WR_SEND:
		return "SEND";
	case LAB1_WR_WRITE:
		return "RDMA WRITE";
	default:
		return "work request";
	}
}
/* END SOLUTION */

/*
 * Step 10. Post one receive of up to LEN bytes into BUF (inside MR), with
 * wr_id LAB1_WR_RECV. Returns 0, or a negative errno after printing why.
 */
int lab1_post_recv(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len)
{
	/* BEGIN SOLUTION step 10
	 * A receive names where the next incoming SEND lands: one SGE (address,
	 * length, lkey). Post it before the peer sends, or the peer gets RNR NAKs.
	 * Read: man ibv_post_recv.
	 * stub: return rl_todo(10);
	 */
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf,
		.length = len,
		.lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = LAB1_WR_RECV,
		.sg_list = &sge,
		.num_sge = 1,
	};
	struct ibv_recv_wr *bad_wr;
	int ret = ibv_post_recv(qp, &wr, &bad_wr);

	if (ret)
		return rl_fail("ibv_post_recv", ret, "%u bytes on QP 0x%x", len, qp->qp_num);
	return 0;
	/* END SOLUTION */
}

/*
 * Step 10. Post one signaled SEND of LEN bytes at BUF (inside MR), with
 * wr_id LAB1_WR_SEND. Returns 0, or a negative errno after printing why.
 */
int lab1_post_send(struct ibv_qp *qp, struct ibv_mr *mr, const void *buf, uint32_t len)
{
	/* BEGIN SOLUTION step 10
	 * A SEND consumes the peer's next receive. IBV_SEND_SIGNALED asks for a
	 * completion on our CQ, so we know when the buffer may be reused.
	 * Read: man ibv_post_send.
	 * stub: return rl_todo(10);
	 */
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf,
		.length = len,
		.lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = LAB1_WR_SEND,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad_wr;
	int ret = ibv_post_send(qp, &wr, &bad_wr);

	if (ret)
		return rl_fail("ibv_post_send", ret, "SEND of %u bytes on QP 0x%x", len,
			       qp->qp_num);
	return 0;
	/* END SOLUTION */
}

/*
 * Step 10. Post one signaled RDMA WRITE of LEN bytes at BUF (inside MR) to
 * REMOTE_ADDR in the peer's memory that RKEY names, with wr_id
 * LAB1_WR_WRITE. Returns 0, or a negative errno after printing why.
 */
int lab1_post_write(struct ibv_qp *qp, struct ibv_mr *mr, const void *buf, uint32_t len,
		    uint64_t remote_addr, uint32_t rkey)
{
	/* BEGIN SOLUTION step 10
	 * Like a SEND, plus wr.rdma: the remote address and rkey the peer sent us.
	 * The peer posts nothing and sees no completion: its CPU is not involved.
	 * Read: man ibv_post_send (IBV_WR_RDMA_WRITE).
	 * stub: return rl_todo(10);
	 */
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf,
		.length = len,
		.lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = LAB1_WR_WRITE,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = {
			.remote_addr = remote_addr,
			.rkey = rkey,
		},
	};
	struct ibv_send_wr *bad_wr;
	int ret = ibv_post_send(qp, &wr, &bad_wr);

	if (ret)
		return rl_fail("ibv_post_send", ret, "RDMA WRITE of %u bytes on QP 0x%x", len,
			       qp->qp_num);
	return 0;
	/* END SOLUTION */
}

/*
 * Step 10. Poll CQ until one completion arrives, for at most TIMEOUT_MS,
 * into WC. Returns 0 when it succeeded, -EIO when it failed (WC->status
 * says why; printed with ibv_wc_status_str), or -ETIMEDOUT.
 */
int lab1_wait_completion(struct ibv_cq *cq, int timeout_ms, struct ibv_wc *wc)
{
	/* BEGIN SOLUTION step 10
	 * ibv_poll_cq() returns at once: how many completions it took (0 if none)
	 * or a negative value. Loop until one arrives or the time is up; then check wc->status.
	 * Read: man ibv_poll_cq, man ibv_wc_status_str.
	 * stub: return rl_todo(10);
	 */
	struct timespec start, now;
	long elapsed_ms;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			return rl_fail("ibv_poll_cq", EIO, "on CQ %p", (void *)cq);
		if (n == 1)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		elapsed_ms = (now.tv_sec - start.tv_sec) * 1000 +
			     (now.tv_nsec - start.tv_nsec) / 1000000;
		if (elapsed_ms >= timeout_ms) {
			rl_err("ibv_poll_cq: no completion within %d ms", timeout_ms);
			return -ETIMEDOUT;
		}
	}
	if (wc->status != IBV_WC_SUCCESS)
		return rl_fail_wc(lab1_wr_name(wc->wr_id), wc);
	return 0;
	/* END SOLUTION */
}
