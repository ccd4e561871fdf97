/* teardown.c: Lab 1 step 11: destroy what the lab created, in reverse order. */
#include "lab1.h"

/*
 * Step 11. Destroy the QP, the CQ, the MR and the PD of RES, those that
 * are not NULL, in that order, setting each pointer to NULL. Goes on after
 * a failure, printing each. Returns 0, or the first failure as a negative errno.
 */
int lab1_teardown(struct lab1_res *res)
{
	/* BEGIN SOLUTION step 11
	 * Undo in reverse order of creation: a CQ cannot go while a QP uses it,
	 * nor a PD while an MR or a QP is in it (EBUSY). Each destroy returns an errno.
	 * Read: man ibv_destroy_qp, man ibv_destroy_cq, man ibv_dereg_mr, man ibv_dealloc_pd.
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
