/* sge.c: Lab 5 step 2 (placeholder: its helper writes it). */
#include "lab5.h"

int lab5_post_send_gather(struct lab5_ud *u, const struct lab5_hdr *h, const void *payload)
{
	/* TODO step 2
	 * Placeholder.
	 */
	return rl_todo(2);
}

int lab5_post_recv_scatter(struct lab5_ud *u, int slot)
{
	/* TODO step 2
	 * Placeholder.
	 */
	return rl_todo(2);
}

int lab5_recv_msg(struct lab5_ud *u, struct lab5_msg *m)
{
	/* TODO step 2
	 * Placeholder.
	 */
	return rl_todo(2);
}

int lab5_send_msg(struct lab5_ud *u, uint32_t kind, const void *payload, uint32_t len)
{
	/* TODO step 2
	 * Placeholder.
	 */
	return rl_todo(2);
}
