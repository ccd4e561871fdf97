/*
 * post.c: post one signaled work request of each kind, with one SGE over a
 * buffer inside a registered MR. The completion's wr_id is WR_ID.
 */
#include <errno.h>

#include "rdmalab.h"

/* Post SEND_WR on QP, naming it WHAT in the error line. */
static int rl_post(struct ibv_qp *qp, struct ibv_send_wr *wr, const char *what)
{
	struct ibv_send_wr *bad_wr;
	int ret = ibv_post_send(qp, wr, &bad_wr);

	if (ret)
		return rl_fail("ibv_post_send", ret, "%s of %u bytes on QP 0x%x", what,
			       wr->sg_list->length, qp->qp_num);
	return 0;
}

/* Post a SEND of LEN bytes at BUF (inside MR); the peer needs a receive posted. */
int rl_post_send_msg(struct ibv_qp *qp, struct ibv_mr *mr, const void *buf, uint32_t len,
		     uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf,
		.length = len,
		.lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};

	return rl_post(qp, &wr, "SEND");
}

/* Post a receive of up to LEN bytes into BUF (inside MR). */
int rl_post_recv(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf,
		.length = len,
		.lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
	};
	struct ibv_recv_wr *bad_wr;
	int ret = ibv_post_recv(qp, &wr, &bad_wr);

	if (ret)
		return rl_fail("ibv_post_recv", ret, "of %u bytes on QP 0x%x", len, qp->qp_num);
	return 0;
}

/* Post one signaled RDMA OPCODE of LEN bytes between BUF (inside MR) and REMOTE_ADDR / RKEY. */
static int rl_post_rdma(struct ibv_qp *qp, enum ibv_wr_opcode opcode, struct ibv_mr *mr, void *buf,
			uint32_t len, uint64_t remote_addr, uint32_t rkey, uint64_t wr_id,
			const char *what)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf,
		.length = len,
		.lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = opcode,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = {
			.remote_addr = remote_addr,
			.rkey = rkey,
		},
	};

	return rl_post(qp, &wr, what);
}

/* Post an RDMA WRITE of LEN bytes at BUF (inside MR) to REMOTE_ADDR / RKEY. */
int rl_post_write(struct ibv_qp *qp, struct ibv_mr *mr, const void *buf, uint32_t len,
		  uint64_t remote_addr, uint32_t rkey, uint64_t wr_id)
{
	/* The NIC only reads BUF for a write; the SGE just has no const. */
	return rl_post_rdma(qp, IBV_WR_RDMA_WRITE, mr, (void *)buf, len, remote_addr, rkey, wr_id,
			    "RDMA WRITE");
}

/* Post an RDMA READ of LEN bytes from REMOTE_ADDR / RKEY into BUF (inside MR). */
int rl_post_read(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len,
		 uint64_t remote_addr, uint32_t rkey, uint64_t wr_id)
{
	return rl_post_rdma(qp, IBV_WR_RDMA_READ, mr, buf, len, remote_addr, rkey, wr_id,
			    "RDMA READ");
}
