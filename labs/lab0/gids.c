/* gids.c: Lab 0 steps 6 and 7: a port's GID table, and which entry to use. */
#include <string.h>

#include "lab0.h"

/* Step 6. Tell what GID's bytes hold: empty, link-local, IPv4-mapped or other IPv6. */
enum lab0_gid_form lab0_gid_form(const union ibv_gid *gid)
{
	/* TODO step 6
	 * A GID is an IPv6 address: all zeros is an empty slot, fe80::/10 is
	 * link-local, ::ffff:a.b.c.d carries an IPv4 address (RFC 4291, 2.5).
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
	 * Read every slot with ibv_query_gid_ex(): it gives the GID and its type
	 * (RoCE v1 or v2); an empty slot answers ENODATA. Classify each with lab0_gid_form().
	 * Read: man ibv_query_gid_ex.
	 */
	return rl_todo(6);
}

/*
 * Step 7. Score one entry as vm/rdma-env.sh does (rl_gid_score): 0 for an
 * empty or link-local GID (never usable), else 4 for RoCE v2 or 2 for
 * anything older, plus 1 when it holds an IPv4 address.
 */
int lab0_gid_score(const struct lab0_gid *g)
{
	/* TODO step 7
	 * RoCE v2 rides in UDP/IP, so routers forward it; an IPv4-mapped GID is
	 * what rdma_cm finds from an IPv4 address; a link-local one never leaves the link.
	 */
	return rl_todo(7);
}

/*
 * Step 7. Return the table index of the best of the N entries in GIDS
 * (highest lab0_gid_score, ties to the lowest index) and point *WHY at a
 * sentence saying why; -ENOENT when no entry scores above 0.
 */
int lab0_pick_gid(const struct lab0_gid *gids, int n, const char **why)
{
	/* TODO step 7
	 * Keep the entry with the highest lab0_gid_score(); on a tie keep the
	 * lower index, so the choice is the same on every run.
	 */
	*why = "not implemented";
	return rl_todo(7);
}
