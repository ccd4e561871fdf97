/* teardown.c: Lab 1 step 11: free what the lab created, users first. */
#include "lab1.h"

/*
 * Step 11. Free the PD, MR, CQ and QP of RES, those that are not NULL,
 * setting each pointer to NULL. Goes on after a failure, printing each.
 * Returns 0, or the first failure as a negative errno.
 */
int lab1_teardown(struct lab1_res *res)
{
	/* BEGIN SOLUTION step 11
	 * The order is yours: an object goes only when nothing created on it
	 * is left (EBUSY otherwise). Each call returns an errno value.
	 * Read: docs/lab1.md#step-11, man ibv_dealloc_pd, man ibv_dereg_mr,
	 * man ibv_destroy_cq, man ibv_destroy_qp.
	 * stub: return rl_todo(11);
	 */
	int ret, first = 0;

	if (res->qp) {
		ret = ibv_destroy_qp(res->qp);
		if (ret)
			ret = rl_fail("ibv_destroy_qp", ret, "QP 0x%x", res->qp->qp_num);
		first = first ? first : ret;
		res->qp = NULL;
	}
	if (res->cq) {
		ret = ibv_destroy_cq(res->cq);
		if (ret)
			ret = rl_fail("ibv_destroy_cq", ret, "CQ %p", (void *)res->cq);
		first = first ? first : ret;
		res->cq = NULL;
	}
	if (res->mr) {
		ret = ibv_dereg_mr(res->mr);
		if (ret)
			ret = rl_fail("ibv_dereg_mr", ret, "MR %p", (void *)res->mr);
		first = first ? first : ret;
		res->mr = NULL;
	}
	if (res->pd) {
		ret = ibv_dealloc_pd(res->pd);
		if (ret)
			ret = rl_fail("ibv_dealloc_pd", ret, "PD %p", (void *)res->pd);
		first = first ? first : ret;
		res->pd = NULL;
	}
	return first;
	/* END SOLUTION */
}
