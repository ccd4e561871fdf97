/* resources.c: Lab 1 steps 1 to 4: the PD, the MR, the CQ and the RC QP. */
#include "lab1.h"

/*
 * Step 1. Allocate a protection domain on CTX. Returns it, or NULL after
 * printing why.
 */
struct ibv_pd *lab1_alloc_pd(struct ibv_context *ctx)
{
	/* BEGIN SOLUTION step 1
	 * A protection domain groups the MRs and QPs that may be used together:
	 * a QP can only reach memory registered in its own PD. Use ibv_alloc_pd().
	 * Read: man ibv_alloc_pd.
	 * stub: rl_todo(1);
	 * stub: return NULL;
	 */
	struct ibv_pd *pd = ibv_alloc_pd(ctx);

	if (!pd)
		rl_fail("ibv_alloc_pd", errno, "on %s", ibv_get_device_name(ctx->device));
	return pd;
	/* END SOLUTION */
}

/*
 * Step 2. Register LEN bytes at BUF in PD, for what this program does
 * with its buffer and nothing more. Returns the MR, or NULL after
 * printing why.
 */
struct ibv_mr *lab1_reg_mr(struct ibv_pd *pd, void *buf, size_t len)
{
	/* BEGIN SOLUTION step 2
	 * ibv_reg_mr() pins the pages and gives two keys: lkey for our own work
	 * requests, rkey for the peer's. Grant what this buffer is used for, no more.
	 * Read: man ibv_reg_mr, docs/lab1.md#step-2.
	 * stub: rl_todo(2);
	 * stub: return NULL;
	 */
	int access = IBV_ACCESS_LOCAL_WRITE | /* receives land here */
		     IBV_ACCESS_REMOTE_WRITE; /* the peer RDMA-writes here */
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, access);

	if (!mr) /* ENOMEM is the locked-memory limit: rl_fail() says so */
		rl_fail("ibv_reg_mr", errno, "%zu bytes at %p", len, buf);
	return mr;
	/* END SOLUTION */
}

/*
 * Step 3. Create a completion queue on CTX for one QP of QP_DEPTH work
 * requests each way whose sends and receives both complete here: it must
 * hold every completion they can have outstanding at once. Returns it, or
 * NULL after printing why.
 */
struct ibv_cq *lab1_create_cq(struct ibv_context *ctx, int qp_depth)
{
	/* BEGIN SOLUTION step 3
	 * Every finished work request leaves one completion here: how many can
	 * wait at once, with both of the QP's queues full? No channel, no vector: we poll.
	 * Read: man ibv_create_cq, docs/lab1.md#step-3.
	 * stub: rl_todo(3);
	 * stub: return NULL;
	 */
	int cqe = 2 * qp_depth; /* a full send queue and a full receive queue */
	struct ibv_cq *cq = ibv_create_cq(ctx, cqe, NULL, NULL, 0);

	if (!cq)
		rl_fail("ibv_create_cq", errno, "of %d entries on %s", cqe,
			ibv_get_device_name(ctx->device));
	return cq;
	/* END SOLUTION */
}

/*
 * Step 4. Create a reliable-connected QP in PD whose sends and receives
 * complete on CQ, with DEPTH work requests of one SGE each way; of the
 * send requests, only those that ask for a completion make one. Returns
 * it (in the RESET state), or NULL after printing why.
 */
struct ibv_qp *lab1_create_qp(struct ibv_pd *pd, struct ibv_cq *cq, int depth)
{
	/* BEGIN SOLUTION step 4
	 * Describe the QP in a struct ibv_qp_init_attr (designated initializers):
	 * its CQs, its capacities, its type, and who decides what completes.
	 * Read: man ibv_create_qp, docs/lab1.md#step-4.
	 * stub: rl_todo(4);
	 * stub: return NULL;
	 */
	struct ibv_qp_init_attr init_attr = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {
			.max_send_wr = depth,
			.max_recv_wr = depth,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0, /* each work request asks for its own completion */
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init_attr);

	if (!qp)
		rl_fail("ibv_create_qp", errno, "RC with %d work requests each way", depth);
	return qp;
	/* END SOLUTION */
}
