/* gids.c: Lab 0 steps 6 and 7: a port's GID table, and which entry to use. */
#include <string.h>

#include "lab0.h"

/* Step 6. Tell what GID's bytes hold: empty, link-local, IPv4-mapped or other IPv6. */
enum lab0_gid_form lab0_gid_form(const union ibv_gid *gid)
{
	/* TODO step 6
	 * A GID is written as an IPv6 address; all zeros is an empty slot.
	 * Decide how many leading bits make each form (RFC 4291, 2.4 and 2.5.5.2).
	 */
	rl_todo(6);
	return LAB0_GID_EMPTY;
}

/*
 * Step 6. Read the GID table of PORT, which has MAX slots (the port's
 * gid_tbl_len), into GIDS, skipping empty slots. Returns how many entries
 * it stored, or a negative errno after printing why.
 */
int lab0_query_gids(struct ibv_context *ctx, uint8_t port, struct lab0_gid *gids, int max)
{
	/* TODO step 6
	 * Read every slot: decide which answers mean "nothing here" and which
	 * a failure, and what an entry's index is. Classify with lab0_gid_form().
	 * Read: man ibv_query_gid_ex (RETURN VALUE, ERRORS).
	 */
	return rl_todo(6);
}

/*
 * Step 7. Score one entry: 0 when it can never be used, else more for a
 * better one. Only the order of the scores matters; it is the order
 * vm/rdma-env.sh's rl_gid_score gives.
 */
int lab0_gid_score(const struct lab0_gid *g)
{
	/* TODO step 7
	 * RoCE v2 rides in UDP/IP, so routers forward it; an IPv4-mapped GID is
	 * what rdma_cm finds from an IPv4 address; a link-local one never leaves
	 * the link. Decide which of these outranks which.
	 */
	return rl_todo(7);
}

/*
 * Step 7. Return the table index of the best of the N entries in GIDS
 * (highest lab0_gid_score; a tie broken the same way on every run) and
 * point *WHY at a sentence saying why; -ENOENT when no entry scores above 0.
 */
int lab0_pick_gid(const struct lab0_gid *gids, int n, const char **why)
{
	/* TODO step 7
	 * Keep the entry with the highest lab0_gid_score(). Decide which of
	 * equal entries wins: the array's order is not the table's.
	 */
	*why = "not implemented";
	return rl_todo(7);
}
