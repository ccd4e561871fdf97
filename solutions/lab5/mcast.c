/* mcast.c: Lab 5 step 3 (placeholder: its helper writes it). */
#include "lab5.h"

int lab5_mc_join(struct lab5_ud *u, const char *local, const char *group, bool send_only)
{
	/* BEGIN SOLUTION step 3
	 * Placeholder.
	 * stub: return rl_todo(3);
	 */
	return rl_todo(3);
	/* END SOLUTION */
}

int lab5_mc_leave(struct lab5_ud *u)
{
	/* BEGIN SOLUTION step 3
	 * Placeholder.
	 * stub: return rl_todo(3);
	 */
	return rl_todo(3);
	/* END SOLUTION */
}
