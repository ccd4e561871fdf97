/* teardown.c: Lab 1 step 11: destroy what the lab created, in reverse order. */
#include "lab1.h"

/*
 * Step 11. Destroy the QP, the CQ, the MR and the PD of RES, those that
 * are not NULL, in that order, setting each pointer to NULL. Goes on after
 * a failure, printing each. Returns 0, or the first failure as a negative errno.
 */
int lab1_teardown(struct lab1_res *res)
{
	/* TODO step 11
	 * Undo in reverse order of creation: a CQ cannot go while a QP uses it,
	 * nor a PD while an MR or a QP is in it (EBUSY). Each destroy returns an errno.
	 * Read: man ibv_destroy_qp, man ibv_destroy_cq, man ibv_dereg_mr, man ibv_dealloc_pd.
	 */
	return rl_todo(11);
}
