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
 * Step 2. Register LEN bytes at BUF in PD, for what this program does
 * with its buffer and nothing more. Returns the MR, or NULL after
 * printing why.
 */
struct ibv_mr *lab1_reg_mr(struct ibv_pd *pd, void *buf, size_t len)
{
	/* TODO step 2
	 * ibv_reg_mr() pins the pages and gives two keys: lkey for our own work
	 * requests, rkey for the peer's. Grant what this buffer is used for, no more.
	 * Read: man ibv_reg_mr, docs/lab1.md#step-2.
	 */
	rl_todo(2);
	return NULL;
}

/*
 * Step 3. Create a completion queue on CTX for one QP of QP_DEPTH work
 * requests each way whose sends and receives both complete here: it must
 * hold every completion they can have outstanding at once. Returns it, or
 * NULL after printing why.
 */
struct ibv_cq *lab1_create_cq(struct ibv_context *ctx, int qp_depth)
{
	/* TODO step 3
	 * Every finished work request leaves one completion here: how many can
	 * wait at once, with both of the QP's queues full? No channel, no vector: we poll.
	 * Read: man ibv_create_cq, docs/lab1.md#step-3.
	 */
	rl_todo(3);
	return NULL;
}

/*
 * Step 4. Create a reliable-connected QP in PD whose sends and receives
 * complete on CQ, with DEPTH work requests of one SGE each way; of the
 * send requests, only those that ask for a completion make one. Returns
 * it (in the RESET state), or NULL after printing why.
 */
struct ibv_qp *lab1_create_qp(struct ibv_pd *pd, struct ibv_cq *cq, int depth)
{
	/* TODO step 4
	 * Describe the QP in a struct ibv_qp_init_attr (designated initializers):
	 * its CQs, its capacities, its type, and who decides what completes.
	 * Read: man ibv_create_qp, docs/lab1.md#step-4.
	 */
	rl_todo(4);
	return NULL;
}
