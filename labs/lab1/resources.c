/* resources.c: Lab 1 steps 1 to 4: the PD, the MR, the CQ and the RC QP. */
#include "lab1.h"

/*
 * Step 1. Allocate a protection domain on CTX. Returns it, or NULL after
 * printing why.
 */
struct ibv_pd *lab1_alloc_pd(struct ibv_context *ctx)
{
	/* TODO step 1
	 * A protection domain groups the MRs and QPs that may be used together:
	 * a QP can only reach memory registered in its own PD. Use ibv_alloc_pd().
	 * Read: man ibv_alloc_pd.
	 */
	rl_todo(1);
	return NULL;
}

/*
 * Step 2. Register LEN bytes at BUF in PD so that a receive can land in
 * them and the peer can RDMA-write into them (nothing more). Returns the
 * MR, or NULL after printing why.
 */
struct ibv_mr *lab1_reg_mr(struct ibv_pd *pd, void *buf, size_t len)
{
	/* TODO step 2
	 * ibv_reg_mr() pins the pages and gives two keys: lkey for our own work
	 * requests, rkey for the peer's. Grant only what this buffer is used for.
	 * Read: man ibv_reg_mr, docs/lab1.md#step-2.
	 */
	rl_todo(2);
	return NULL;
}

/*
 * Step 3. Create a completion queue of at least DEPTH entries on CTX.
 * Returns it, or NULL after printing why.
 */
struct ibv_cq *lab1_create_cq(struct ibv_context *ctx, int depth)
{
	/* TODO step 3
	 * Every finished work request leaves one completion here; size it for
	 * all the requests that can be outstanding. No channel, no vector: we poll.
	 * Read: man ibv_create_cq.
	 */
	rl_todo(3);
	return NULL;
}

/*
 * Step 4. Create a reliable-connected QP in PD whose sends and receives
 * complete on CQ, with DEPTH work requests of one SGE each way. Returns it
 * (in the RESET state), or NULL after printing why.
 */
struct ibv_qp *lab1_create_qp(struct ibv_pd *pd, struct ibv_cq *cq, int depth)
{
	/* TODO step 4
	 * Fill a struct ibv_qp_init_attr with designated initializers: both
	 * CQs, the capacities (cap), and qp_type IBV_QPT_RC. The QP starts in RESET.
	 * Read: man ibv_create_qp.
	 */
	rl_todo(4);
	return NULL;
}
