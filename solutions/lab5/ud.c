/* ud.c: Lab 5 step 1: a UD endpoint over rdma_cm (helper A writes it). */
#include "lab5.h"

int lab5_ud_create_qp(struct lab5_ud *u)
{
	/* BEGIN SOLUTION step 1
	 * Placeholder.
	 * stub: return rl_todo(1);
	 */
	return rl_todo(1);
	/* END SOLUTION */
}

int lab5_ud_connect(struct lab5_ud *u, const char *host, uint16_t port)
{
	/* BEGIN SOLUTION step 1
	 * Placeholder.
	 * stub: return rl_todo(1);
	 */
	return rl_todo(1);
	/* END SOLUTION */
}
