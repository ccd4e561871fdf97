/* teardown.c: Lab 1 step 11: free what the lab created, users first. */
#include "lab1.h"

/*
 * Step 11. Free the PD, MR, CQ and QP of RES, those that are not NULL,
 * setting each pointer to NULL. Goes on after a failure, printing each.
 * Returns 0, or the first failure as a negative errno.
 */
int lab1_teardown(struct lab1_res *res)
{
	/* TODO step 11
	 * The order is yours: an object goes only when nothing created on it
	 * is left (EBUSY otherwise). Each call returns an errno value.
	 * Read: docs/lab1.md#step-11, man ibv_dealloc_pd, man ibv_dereg_mr,
	 * man ibv_destroy_cq, man ibv_destroy_qp.
	 */
	return rl_todo(11);
}
