/*
 * test_gids.c: Lab 0 steps 6 and 7: the GID table against sysfs and
 * ibv_devinfo, and the choice of GID. The synthetic tables are drawn anew
 * for each run by the setup; the check scores them itself (reference.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "lab0.h"
#include "reference.h"

#define MAX_ENTRIES 16

/*
 * Port 1's GID table as the lab's code reads it (the port's gid_tbl_len
 * slots): the act says how many entries it stored, and the entries.
 */
static void query_gid_table(struct rl_case *c)
{
	struct ibv_context *ctx = ref_open(rl_test_device());
	struct ibv_port_attr pattr;
	struct lab0_gid *gids;
	int n;

	(void)c;
	ck_assert_msg(ibv_query_port(ctx, 1, &pattr) == 0,
		      "expected ibv_query_port(port 1) to work, it did not");
	gids = calloc(pattr.gid_tbl_len, sizeof(*gids));
	ck_assert_msg(gids, "expected room for %d GID entries, got none", pattr.gid_tbl_len);
	n = lab0_query_gids(ctx, 1, gids, pattr.gid_tbl_len);
	rl_say_int("n", n);
	if (n > 0)
		rl_say_bytes("gids", gids,
			     (size_t)(n < pattr.gid_tbl_len ? n : pattr.gid_tbl_len) *
				     sizeof(*gids));
	free(gids);
	ibv_close_device(ctx);
}

/* The entries the act said into *GIDS (the act's record): how many, or 0 when the test failed. */
static int said_gid_table(struct rl_case *c, const struct lab0_gid **gids)
{
	long long n = rl_said_int(c, "n");
	size_t bytes;

	if (!rl_expect(c, n > 0,
		       "expected lab0_query_gids to find GIDs, got %lld (%s): what does an empty "
		       "slot answer, and is that an error? See docs/lab0.md#step-6",
		       n, n < 0 ? strerror((int)-n) : "none"))
		return 0;
	*gids = rl_said_bytes(c, "gids", &bytes);
	if (!rl_expect(c, bytes == (size_t)n * sizeof(**gids),
		       "expected %lld entries from lab0_query_gids, more than the table's slots",
		       n))
		return 0;
	return (int)n;
}

static const struct lab0_gid *find_index(const struct lab0_gid *gids, int n, int index)
{
	int i;

	for (i = 0; i < n; i++)
		if (gids[i].index == index)
			return &gids[i];
	return NULL;
}

/* Whether the act said BYTES for N ints, one per entry; the test fails otherwise. */
static bool said_one_each(struct rl_case *c, size_t bytes, int n)
{
	return rl_expect(c, bytes == (size_t)n * sizeof(int),
			 "the test's act said %zu bytes for %d entries (a fault in the test)",
			 bytes, n);
}

/* Step 6 */

/* N addresses of every form, drawn for this run. */
struct forms_in {
	int n;
	union ibv_gid gid[MAX_ENTRIES];
};

/*
 * Two of each form (one empty: there is one), in random order: one
 * link-local address in fe80::/64 as the kernel makes them, one elsewhere
 * in fe80::/10; one IPv6 address ends as an IPv4-mapped one does (ffff
 * and four bytes) under a prefix that is not zero.
 */
static void addresses_of_every_form(struct rl_case *c)
{
	static const enum lab0_gid_form forms[] = {
		LAB0_GID_EMPTY,       LAB0_GID_LINK_LOCAL,  LAB0_GID_LINK_LOCAL,
		LAB0_GID_IPV4_MAPPED, LAB0_GID_IPV4_MAPPED, LAB0_GID_IPV6,
		LAB0_GID_IPV6,        LAB0_GID_IPV6,
	};
	struct lab0_gid g[MAX_ENTRIES];
	struct forms_in *in = c->in;
	int i;

	in->n = sizeof(forms) / sizeof(forms[0]);
	for (i = 0; i < in->n; i++)
		g[i] = ref_random_entry(i, forms[i], IBV_GID_TYPE_ROCE_V2);
	g[2].gid.raw[1] = (uint8_t)(0x81 + ref_random_below(0x3f)); /* fe81:: to febf:: */
	g[5].gid.raw[0] = (uint8_t)(0x20 | ref_random_below(0x20)); /* 2000::/3 */
	g[5].gid.raw[10] = g[5].gid.raw[11] = 0xff;
	ref_shuffle(g, in->n);
	for (i = 0; i < in->n; i++)
		in->gid[i] = g[i].gid;
}

static void classify(struct rl_case *c)
{
	const struct forms_in *in = c->in;
	int i, got[MAX_ENTRIES];

	for (i = 0; i < in->n; i++)
		got[i] = lab0_gid_form(&in->gid[i]);
	rl_say_bytes("forms", got, (size_t)in->n * sizeof(got[0]));
}

static void forms_match(struct rl_case *c)
{
	const struct forms_in *in = c->in;
	char addr[INET6_ADDRSTRLEN];
	const int *got;
	enum lab0_gid_form want;
	size_t bytes;
	int i;

	got = rl_said_bytes(c, "forms", &bytes);
	if (!said_one_each(c, bytes, in->n))
		return;
	for (i = 0; i < in->n; i++) {
		want = ref_gid_form(&in->gid[i]);
		if (!rl_expect(c, got[i] == (int)want,
			       "%s: expected %s, got %s: how many leading bits make each form? "
			       "See docs/lab0.md#step-6",
			       ref_gid_text(&in->gid[i], addr), ref_gid_form_str(want),
			       ref_gid_form_str(got[i])))
			return;
	}
}

RL_GRADED(gid_forms_tell_empty_link_local_ipv4_mapped_and_ipv6_apart, .step = 6, .points = 2,
	  .setup = addresses_of_every_form, .act = classify, .check = forms_match);

/*
 * The next GID of port 1 that sysfs shows non-empty, from index *I on: its
 * index into *I, its text into GID; false after the last slot.
 */
static bool next_sysfs_gid(int *i, char gid[64])
{
	static const char zero[] = "0000:0000:0000:0000:0000:0000:0000:0000";
	char path[64];

	for (; *i < 4096; ++*i) {
		snprintf(path, sizeof(path), "ports/1/gids/%d", *i);
		if (ref_sysfs(rl_test_device(), path, gid, 64) < 0)
			return false;
		if (strcmp(gid, zero) != 0)
			return true;
	}
	return false;
}

/*
 * Whether the act's table holds every non-empty GID of sysfs at its index,
 * its type too when TYPES, and nothing else; the test fails otherwise. The
 * GID's bytes are always compared: a table that is not this port's (a
 * made-up one of the usual shape) says nothing of its types.
 */
static void matches_sysfs(struct rl_case *c, bool types)
{
	const struct lab0_gid *gids, *g;
	char path[64], want[64], got[64], type[64];
	int i, n = said_gid_table(c, &gids), count = 0;

	if (n == 0)
		return;
	for (i = 0; next_sysfs_gid(&i, want); i++) {
		count++;
		g = find_index(gids, n, i);
		if (!rl_expect(c, g,
			       "expected GID index %d (%s in sysfs) in the table, it is not there: "
			       "where does a GID table start, and what is an entry's index? See "
			       "docs/lab0.md#step-6",
			       i, want))
			return;
		snprintf(got, sizeof(got), "%04x:%04x:%04x:%04x:%04x:%04x:%04x:%04x",
			 g->gid.raw[0] << 8 | g->gid.raw[1], g->gid.raw[2] << 8 | g->gid.raw[3],
			 g->gid.raw[4] << 8 | g->gid.raw[5], g->gid.raw[6] << 8 | g->gid.raw[7],
			 g->gid.raw[8] << 8 | g->gid.raw[9], g->gid.raw[10] << 8 | g->gid.raw[11],
			 g->gid.raw[12] << 8 | g->gid.raw[13],
			 g->gid.raw[14] << 8 | g->gid.raw[15]);
		if (!rl_expect(c, strcmp(want, got) == 0,
			       "GID index %d: expected %s (sysfs), got %s", i, want, got))
			return;
		if (!types)
			continue;
		snprintf(path, sizeof(path), "ports/1/gid_attrs/types/%d", i);
		if (!rl_expect(c, ref_sysfs(rl_test_device(), path, type, sizeof(type)) == 0,
			       "GID index %d: expected a type in sysfs, it has none", i) ||
		    /* sysfs says "IB/RoCE v1" or "RoCE v2" */
		    !rl_expect(c, strstr(type, ref_gid_type_str(g->type)) != NULL,
			       "GID index %d: expected type %s (sysfs), got %s", i, type,
			       ref_gid_type_str(g->type)))
			return;
	}
	rl_expect(c, n == count,
		  "expected %d non-empty GIDs (as in sysfs), got %d; see docs/lab0.md#step-6",
		  count, n);
}

static void holds_every_nonempty_sysfs_gid(struct rl_case *c)
{
	matches_sysfs(c, false);
}

RL_GRADED(gid_table_holds_every_nonempty_sysfs_gid_at_its_index, .step = 6, .points = 2,
	  .act = query_gid_table, .check = holds_every_nonempty_sysfs_gid);

static void types_match_sysfs(struct rl_case *c)
{
	matches_sysfs(c, true);
}

RL_GRADED(gid_types_match_sysfs, .step = 6, .points = 1, .act = query_gid_table,
	  .check = types_match_sysfs);

static void table_matches_devinfo(struct rl_case *c)
{
	struct ref_gid want[64];
	const struct lab0_gid *gids, *g;
	char addr[INET6_ADDRSTRLEN];
	int i, n = said_gid_table(c, &gids), m;

	if (n == 0)
		return;
	m = ref_devinfo_gids(rl_test_device(), 1, want, 64);
	if (!rl_expect(c, m == n, "expected %d GIDs (ibv_devinfo -v), got %d", m, n))
		return;
	for (i = 0; i < m; i++) {
		ref_gid_text(&want[i].gid, addr);
		g = find_index(gids, n, want[i].index);
		if (!rl_expect(c, g,
			       "expected GID[%d] %s (ibv_devinfo) in the table, it is not there",
			       want[i].index, addr) ||
		    !rl_expect(c, memcmp(g->gid.raw, want[i].gid.raw, 16) == 0,
			       "GID[%d]: expected %s (ibv_devinfo), got other bytes", want[i].index,
			       addr) ||
		    !rl_expect(c, strcmp(ref_gid_type_str(g->type), want[i].type) == 0,
			       "GID[%d]: expected type %s (ibv_devinfo), got %s", want[i].index,
			       want[i].type, ref_gid_type_str(g->type)))
			return;
	}
}

RL_GRADED(gid_table_matches_ibv_devinfo, .step = 6, .points = 1, .act = query_gid_table,
	  .check = table_matches_devinfo);

/* Step 7 */

/* Synthetic tables, drawn for this run: ALL, and for one test UNUSABLE (its link-local and empty entries). */
struct table_in {
	int n;
	struct lab0_gid all[MAX_ENTRIES];
	int unusable_n;
	struct lab0_gid unusable[MAX_ENTRIES];
};

/* One entry of every form and type (RoCE v1 and v2), in random order at random indices. */
static void one_entry_of_each_kind(struct rl_case *c)
{
	static const enum lab0_gid_form forms[] = { LAB0_GID_EMPTY, LAB0_GID_LINK_LOCAL,
						    LAB0_GID_IPV4_MAPPED, LAB0_GID_IPV6 };
	struct table_in *in = c->in;
	int i, index[8];

	ref_random_indices(index, 8);
	for (i = 0; i < 8; i++)
		in->all[i] = ref_random_entry(index[i], forms[i / 2],
					      i % 2 ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1);
	in->n = 8;
	ref_shuffle(in->all, in->n);
}

static void score_each(struct rl_case *c)
{
	const struct table_in *in = c->in;
	int i, got[MAX_ENTRIES];

	for (i = 0; i < in->n; i++)
		got[i] = lab0_gid_score(&in->all[i]);
	rl_say_bytes("scores", got, (size_t)in->n * sizeof(got[0]));
}

/* "ADDRESS (TYPE, FORM)" of entry G into BUF; returns BUF. */
static const char *entry_text(const struct lab0_gid *g, char *buf, size_t len)
{
	char addr[INET6_ADDRSTRLEN];

	snprintf(buf, len, "%s (%s, %s)", ref_gid_text(&g->gid, addr), ref_gid_type_str(g->type),
		 ref_gid_form_str(g->form));
	return buf;
}

/* Entry I scored 0 exactly when it can never be used; the test fails otherwise. */
static bool zero_when_unusable(struct rl_case *c, int i, int got)
{
	const struct table_in *in = c->in;
	char e[128];

	if (ref_gid_score(&in->all[i]) == 0)
		return rl_expect(c, got == 0,
				 "%s: expected score 0 (never usable), got %d; see "
				 "docs/lab0.md#step-7",
				 entry_text(&in->all[i], e, sizeof(e)), got);
	return rl_expect(c, got > 0,
			 "%s: expected a score above 0 (usable), got %d; see "
			 "docs/lab0.md#step-7",
			 entry_text(&in->all[i], e, sizeof(e)), got);
}

/*
 * The scores order the entries as rl_gid_score in vm/rdma-env.sh does:
 * 0 for those never usable, and among the others the same order. The
 * numbers themselves are the lab's to choose.
 */
static void scores_rank_alike(struct rl_case *c)
{
	const struct table_in *in = c->in;
	const struct lab0_gid *a, *b;
	char ea[128], eb[128];
	const int *got;
	size_t bytes;
	int i, j;

	got = rl_said_bytes(c, "scores", &bytes);
	if (!said_one_each(c, bytes, in->n))
		return;
	for (i = 0; i < in->n; i++)
		if (!zero_when_unusable(c, i, got[i]))
			return;
	for (i = 0; i < in->n; i++)
		for (j = 0; j < in->n; j++) {
			a = &in->all[i];
			b = &in->all[j];
			if (ref_gid_score(a) > ref_gid_score(b) && ref_gid_score(b) > 0 &&
			    !rl_expect(c, got[i] > got[j],
				       "expected %s to score above %s, got %d and %d: which "
				       "matters more, and why? See docs/lab0.md#step-7",
				       entry_text(a, ea, sizeof(ea)), entry_text(b, eb, sizeof(eb)),
				       got[i], got[j]))
				return;
		}
}

RL_GRADED(gid_scores_rank_entries_as_rl_gid_score_in_vm_rdma_env_sh, .step = 7, .points = 2,
	  .setup = one_entry_of_each_kind, .act = score_each, .check = scores_rank_alike);

/* Calls lab0_pick_gid on the N entries of GIDS; says the index (PREFIX "index") and the reason. */
static void say_pick(const char *prefix, const struct lab0_gid *gids, int n)
{
	const char *why = NULL;
	char name[64];

	snprintf(name, sizeof(name), "%sindex", prefix);
	rl_say_int(name, lab0_pick_gid(gids, n, &why));
	snprintf(name, sizeof(name), "%swhy_given", prefix);
	rl_say_int(name, why != NULL);
	snprintf(name, sizeof(name), "%swhy", prefix);
	rl_say_str(name, why ? why : "");
}

static void pick(struct rl_case *c)
{
	const struct table_in *in = c->in;

	say_pick("", in->all, in->n);
	if (in->unusable_n)
		say_pick("unusable_", in->unusable, in->unusable_n);
}

/* Puts the entry at AT, of the N in G, somewhere that is neither first nor last (N >= 3). */
static void put_inside(struct lab0_gid *g, int n, int at)
{
	int to = 1 + (int)ref_random_below((unsigned)n - 2);
	struct lab0_gid t = g[to];

	g[to] = g[at];
	g[at] = t;
}

/* Every kind of entry, one RoCE v2 IPv4-mapped among them, in random order at random indices. */
static void one_best_among_others(struct rl_case *c)
{
	struct table_in *in = c->in;
	int i, best = 0, index[6];

	ref_random_indices(index, 6);
	in->all[0] = ref_random_entry(index[0], LAB0_GID_IPV4_MAPPED, IBV_GID_TYPE_ROCE_V2);
	in->all[1] = ref_random_entry(index[1], LAB0_GID_IPV4_MAPPED, IBV_GID_TYPE_ROCE_V1);
	in->all[2] = ref_random_entry(index[2], LAB0_GID_IPV6, IBV_GID_TYPE_ROCE_V2);
	in->all[3] = ref_random_entry(index[3], LAB0_GID_LINK_LOCAL, IBV_GID_TYPE_ROCE_V2);
	in->all[4] = ref_random_entry(index[4], LAB0_GID_LINK_LOCAL, IBV_GID_TYPE_ROCE_V1);
	in->all[5] = ref_random_entry(index[5], LAB0_GID_EMPTY, IBV_GID_TYPE_ROCE_V2);
	in->n = 6;
	ref_shuffle(in->all, in->n);
	for (i = 0; i < in->n; i++)
		if (in->all[i].form == LAB0_GID_IPV4_MAPPED &&
		    in->all[i].type == IBV_GID_TYPE_ROCE_V2)
			best = i;
	put_inside(in->all, in->n, best);
}

static void picked_the_best_and_said_why(struct rl_case *c)
{
	const struct table_in *in = c->in;
	int want = ref_pick_gid(in->all, in->n);
	long long got = rl_said_int(c, "index");
	bool given = rl_said_int(c, "why_given");

	if (rl_expect(c, got == want,
		      "expected index %d (RoCE v2, IPv4-mapped), got %lld: the table's index, of "
		      "the entry that reaches farthest; see docs/lab0.md#step-7",
		      want, got))
		rl_expect(c, given && *rl_said_str(c, "why"), "expected a reason in *why, got %s",
			  given ? "\"\"" : "NULL");
}

RL_GRADED(pick_prefers_roce_v2_ipv4_mapped_and_says_why, .step = 7, .points = 2,
	  .setup = one_best_among_others, .act = pick, .check = picked_the_best_and_said_why);

/*
 * Link-local and empty entries (2 to 5 of them), and one usable entry of
 * any kind; UNUSABLE holds the first ones alone.
 */
static void one_usable_among_unusable(struct rl_case *c)
{
	static const enum lab0_gid_form usable[] = { LAB0_GID_IPV4_MAPPED, LAB0_GID_IPV6 };
	struct table_in *in = c->in;
	int i, index[6];

	in->unusable_n = 2 + (int)ref_random_below(4);
	ref_random_indices(index, in->unusable_n + 1);
	in->unusable[0] = ref_random_entry(index[0], LAB0_GID_LINK_LOCAL, IBV_GID_TYPE_ROCE_V2);
	in->unusable[1] = ref_random_entry(index[1], LAB0_GID_EMPTY, IBV_GID_TYPE_ROCE_V2);
	for (i = 2; i < in->unusable_n; i++)
		in->unusable[i] = ref_random_entry(
			index[i], ref_random_below(2) ? LAB0_GID_LINK_LOCAL : LAB0_GID_EMPTY,
			ref_random_below(2) ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1);
	ref_shuffle(in->unusable, in->unusable_n);
	memcpy(in->all, in->unusable, sizeof(in->unusable));
	in->all[in->unusable_n] =
		ref_random_entry(index[in->unusable_n], usable[ref_random_below(2)],
				 ref_random_below(2) ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1);
	in->n = in->unusable_n + 1;
	ref_shuffle(in->all, in->n);
}

static void never_picked_the_unusable(struct rl_case *c)
{
	const struct table_in *in = c->in;
	int want = ref_pick_gid(in->all, in->n);
	long long got = rl_said_int(c, "index");

	if (rl_expect(c, got == want,
		      "expected index %d (the only routable entry), got %lld; see "
		      "docs/lab0.md#step-7",
		      want, got)) {
		got = rl_said_int(c, "unusable_index");
		rl_expect(c, got == -ENOENT,
			  "expected -ENOENT with only link-local and empty entries, got %lld: a "
			  "link-local GID never leaves its link; see docs/lab0.md#step-7",
			  got);
	}
}

RL_GRADED(pick_never_chooses_a_link_local_or_empty_gid, .step = 7, .points = 1,
	  .setup = one_usable_among_unusable, .act = pick, .check = never_picked_the_unusable);

/* 3 to 6 entries of one kind (so of one score), the lowest index neither first nor last. */
static void equal_entries(struct rl_case *c)
{
	static const enum lab0_gid_form forms[] = { LAB0_GID_IPV4_MAPPED, LAB0_GID_IPV6 };
	enum lab0_gid_form form = forms[ref_random_below(2)];
	enum ibv_gid_type type = ref_random_below(2) ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1;
	struct table_in *in = c->in;
	int i, lowest = 0, index[6];

	in->n = 3 + (int)ref_random_below(4);
	ref_random_indices(index, in->n);
	for (i = 0; i < in->n; i++) {
		in->all[i] = ref_random_entry(index[i], form, type);
		if (index[i] < index[lowest])
			lowest = i;
	}
	put_inside(in->all, in->n, lowest);
}

static void picked_the_lowest_index(struct rl_case *c)
{
	const struct table_in *in = c->in;
	int want = ref_pick_gid(in->all, in->n);
	long long got = rl_said_int(c, "index");

	rl_expect(c, got == want,
		  "expected index %d (lowest of %d equal entries), got %lld: the table's order "
		  "is not the index's; see docs/lab0.md#step-7",
		  want, in->n, got);
}

RL_GRADED(pick_breaks_ties_with_the_lowest_index, .step = 7, .points = 1, .setup = equal_entries,
	  .act = pick, .check = picked_the_lowest_index);

/* Where the act starts the table it gives lab0_pick_gid, drawn for this run: the order must not matter. */
struct rotation_in {
	unsigned by;
};

static void a_rotation(struct rl_case *c)
{
	struct rotation_in *in = c->in;

	in->by = ref_random_below(1u << 16);
}

/*
 * Takes NAME out of this process's environment, the bytes of its value
 * too: unsetenv alone leaves "NAME=value" where the kernel put it, for code
 * to find by reading on from another variable. The act is a fork: the
 * parent's environment keeps NAME.
 */
static void forget_env(const char *name)
{
	char *value = getenv(name);

	if (value)
		memset(value, 0, strlen(value));
	unsetenv(name);
}

/* The lab's own table of this device (step 6), rotated as the setup says, then its pick. */
static void pick_from_the_device(struct rl_case *c)
{
	const struct rotation_in *in = c->in;
	struct ibv_context *ctx = ref_open(rl_test_device());
	struct ibv_port_attr pattr;
	struct lab0_gid *gids, *rotated;
	const char *why = NULL;
	int i, n;

	/*
	 * vm/rdma-env.sh exported this test's answer: rl_pick_gid's index, and
	 * the address of the GID at it. Neither is the lab's to read.
	 */
	forget_env("RDMALAB_GID_INDEX");
	forget_env("RDMALAB_ADDR");
	ck_assert_msg(ibv_query_port(ctx, 1, &pattr) == 0,
		      "expected ibv_query_port(port 1) to work, it did not");
	gids = calloc(pattr.gid_tbl_len, sizeof(*gids));
	rotated = calloc(pattr.gid_tbl_len, sizeof(*rotated));
	ck_assert_msg(gids && rotated, "expected room for %d GID entries, got none",
		      pattr.gid_tbl_len);
	n = lab0_query_gids(ctx, 1, gids, pattr.gid_tbl_len);
	rl_say_int("n", n);
	if (n > 0) {
		n = n < pattr.gid_tbl_len ? n : pattr.gid_tbl_len;
		for (i = 0; i < n; i++)
			rotated[i] = gids[(i + in->by) % (unsigned)n];
		rl_say_int("index", lab0_pick_gid(rotated, n, &why));
	}
	free(rotated);
	free(gids);
	ibv_close_device(ctx);
}

static void agrees_with_rl_pick_gid(struct rl_case *c)
{
	long long n = rl_said_int(c, "n"), got;
	char cmd[256], want[32] = "";
	FILE *p;

	if (!rl_expect(c, n > 0, "expected lab0_query_gids to find GIDs, got %lld (%s)", n,
		       n < 0 ? strerror((int)-n) : "none"))
		return;
	snprintf(cmd, sizeof(cmd), "bash -c '. vm/rdma-env.sh && rl_pick_gid %s 1'",
		 rl_test_device());
	p = popen(cmd, "r");
	ck_assert_msg(p && fgets(want, sizeof(want), p),
		      "expected '%s' to print a GID index, it did not", cmd);
	pclose(p);
	got = rl_said_int(c, "index");
	rl_expect(c, got == atoi(want),
		  "expected GID index %d (rl_pick_gid), got %lld; see docs/lab0.md#step-7",
		  atoi(want), got);
}

RL_GRADED(pick_agrees_with_vm_rdma_env_sh_on_this_device, .step = 7, .points = 2, .needs = 6,
	  .setup = a_rotation, .act = pick_from_the_device, .check = agrees_with_rl_pick_gid);
