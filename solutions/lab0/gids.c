/* gids.c: Lab 0 steps 6 and 7: a port's GID table, and which entry to use. */
#include <string.h>

#include "lab0.h"

/* Step 6. Tell what GID's bytes hold: empty, link-local, IPv4-mapped or other IPv6. */
enum lab0_gid_form lab0_gid_form(const union ibv_gid *gid)
{
	/* BEGIN SOLUTION step 6
	 * A GID is written as an IPv6 address; all zeros is an empty slot.
	 * Decide how many leading bits make each form (RFC 4291, 2.4 and 2.5.5.2).
	 * stub: rl_todo(6);
	 * stub: return LAB0_GID_EMPTY;
	 */
	static const uint8_t v4_prefix[12] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t zero[16];
	const uint8_t *b = gid->raw;

	if (memcmp(b, zero, sizeof(zero)) == 0)
		return LAB0_GID_EMPTY;
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return LAB0_GID_LINK_LOCAL;
	if (memcmp(b, v4_prefix, sizeof(v4_prefix)) == 0)
		return LAB0_GID_IPV4_MAPPED;
	return LAB0_GID_IPV6;
	/* END SOLUTION */
}

/*
 * Step 6. Read the GID table of PORT, which has MAX slots (the port's
 * gid_tbl_len), into GIDS, skipping empty slots. Returns how many entries
 * it stored, or a negative errno after printing why.
 */
int lab0_query_gids(struct ibv_context *ctx, uint8_t port, struct lab0_gid *gids, int max)
{
	/* BEGIN SOLUTION step 6
	 * Read every slot: decide which answers mean "nothing here" and which
	 * a failure, and what an entry's index is. Classify with lab0_gid_form().
	 * Read: man ibv_query_gid_ex (RETURN VALUE, ERRORS).
	 * stub: return rl_todo(6);
	 */
	struct ibv_gid_entry entry;
	int i, ret, n = 0;

	for (i = 0; i < max; i++) {
		ret = ibv_query_gid_ex(ctx, port, i, &entry, 0);
		if (ret == ENODATA)
			continue;
		if (ret) {
			fprintf(stderr, "ibv_query_gid_ex %s port %u index %d: %s\n",
				ibv_get_device_name(ctx->device), port, i, strerror(ret));
			return -ret;
		}
		gids[n] = (struct lab0_gid){
			.index = i,
			.gid = entry.gid,
			.type = entry.gid_type,
			.form = lab0_gid_form(&entry.gid),
		};
		if (gids[n].form != LAB0_GID_EMPTY)
			n++;
	}
	return n;
	/* END SOLUTION */
}

/*
 * Step 7. Score one entry: 0 when it can never be used, else more for a
 * better one. Only the order of the scores matters; it is the order
 * vm/rdma-env.sh's rl_gid_score gives.
 */
int lab0_gid_score(const struct lab0_gid *g)
{
	/* BEGIN SOLUTION step 7
	 * RoCE v2 rides in UDP/IP, so routers forward it; an IPv4-mapped GID is
	 * what rdma_cm finds from an IPv4 address; a link-local one never leaves
	 * the link. Decide which of these outranks which.
	 * stub: return rl_todo(7);
	 */
	int score;

	if (g->form == LAB0_GID_EMPTY || g->form == LAB0_GID_LINK_LOCAL)
		return 0;
	score = g->type == IBV_GID_TYPE_ROCE_V2 ? 4 : 2;
	if (g->form == LAB0_GID_IPV4_MAPPED)
		score++;
	return score;
	/* END SOLUTION */
}

/*
 * Step 7. Return the table index of the best of the N entries in GIDS
 * (highest lab0_gid_score; a tie broken the same way on every run) and
 * point *WHY at a sentence saying why; -ENOENT when no entry scores above 0.
 */
int lab0_pick_gid(const struct lab0_gid *gids, int n, const char **why)
{
	/* BEGIN SOLUTION step 7
	 * Keep the entry with the highest lab0_gid_score(). Decide which of
	 * equal entries wins: the array's order is not the table's.
	 * stub: *why = "not implemented";
	 * stub: return rl_todo(7);
	 */
	const struct lab0_gid *best = NULL;
	int i, score, best_score = 0;

	for (i = 0; i < n; i++) {
		score = lab0_gid_score(&gids[i]);
		if (score == 0 || score < best_score)
			continue;
		if (score == best_score && gids[i].index > best->index)
			continue;
		best = &gids[i];
		best_score = score;
	}
	if (!best) {
		*why = "no usable GID: every entry is empty or link-local (give the netdev an IP address)";
		return -ENOENT;
	}
	switch (best_score) {
	case 5:
		*why = "RoCE v2 with an IPv4-mapped address: routable, and what rdma_cm resolves from an IPv4 address";
		break;
	case 4:
		*why = "RoCE v2 with an IPv6 address: routable, but no IPv4-mapped RoCE v2 entry exists";
		break;
	default:
		*why = "no RoCE v2 entry: this one only reaches its own link (RoCE v1 or InfiniBand)";
		break;
	}
	return best->index;
	/* END SOLUTION */
}
