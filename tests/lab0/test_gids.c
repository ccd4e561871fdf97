/* test_gids.c: Lab 0 steps 6 and 7: the GID table against sysfs and ibv_devinfo, and the choice of GID. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "lab0.h"
#include "reference.h"

/* An entry for a synthetic table: INDEX, address ADDR (as text), TYPE. */
static struct lab0_gid entry(int index, const char *addr, enum ibv_gid_type type)
{
	struct lab0_gid g = { .index = index, .type = type };

	ck_assert_msg(inet_pton(AF_INET6, addr, g.gid.raw) == 1, "bad test address %s", addr);
	g.form = addr[0] == ':' && addr[1] == ':' && addr[2] == '\0' ? LAB0_GID_EMPTY :
		 strncmp(addr, "fe80:", 5) == 0                      ? LAB0_GID_LINK_LOCAL :
		 strncmp(addr, "::ffff:", 7) == 0                    ? LAB0_GID_IPV4_MAPPED :
								       LAB0_GID_IPV6;
	return g;
}

/* Port 1's GID table as the lab's code reads it; returns how many entries. */
static int query_gids(struct lab0_gid **gids)
{
	struct ibv_context *ctx = ref_open(rl_test_device());
	struct ibv_port_attr pattr;
	int n;

	ck_assert_int_eq(ibv_query_port(ctx, 1, &pattr), 0);
	*gids = calloc(pattr.gid_tbl_len, sizeof(**gids));
	ck_assert(*gids);
	n = lab0_query_gids(ctx, 1, *gids, pattr.gid_tbl_len);
	ck_assert_msg(n > 0, "expected lab0_query_gids to find GIDs, got %d (%s)", n,
		      n < 0 ? strerror(-n) : "none");
	ibv_close_device(ctx);
	return n;
}

static const struct lab0_gid *find_index(const struct lab0_gid *gids, int n, int index)
{
	int i;

	for (i = 0; i < n; i++)
		if (gids[i].index == index)
			return &gids[i];
	return NULL;
}

/* Step 6 */

RL_TEST(gid_forms_tell_empty_link_local_ipv4_mapped_and_ipv6_apart, .step = 6, .points = 2)
{
	static const struct {
		const char *addr;
		enum lab0_gid_form want;
	} cases[] = {
		{ "::", LAB0_GID_EMPTY },
		{ "fe80::4863:dff:feee:d480", LAB0_GID_LINK_LOCAL },
		{ "::ffff:10.211.0.1", LAB0_GID_IPV4_MAPPED },
		{ "2001:db8::1", LAB0_GID_IPV6 },
		{ "::1", LAB0_GID_IPV6 },
	};
	union ibv_gid gid;
	enum lab0_gid_form got;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		inet_pton(AF_INET6, cases[i].addr, gid.raw);
		got = lab0_gid_form(&gid);
		ck_assert_msg(got == cases[i].want, "%s: expected %s, got %s", cases[i].addr,
			      lab0_gid_form_str(cases[i].want), lab0_gid_form_str(got));
	}
}
END_TEST

RL_TEST(gid_table_holds_every_nonempty_sysfs_gid_at_its_index, .step = 6, .points = 2)
{
	static const char zero[] = "0000:0000:0000:0000:0000:0000:0000:0000";
	struct lab0_gid *gids;
	const struct lab0_gid *g;
	char path[64], want[64], got[64];
	int i, n = query_gids(&gids), count = 0;

	for (i = 0; i < 4096; i++) {
		snprintf(path, sizeof(path), "ports/1/gids/%d", i);
		if (ref_sysfs(rl_test_device(), path, want, sizeof(want)) < 0)
			break;
		if (strcmp(want, zero) == 0)
			continue;
		count++;
		g = find_index(gids, n, i);
		ck_assert_msg(g,
			      "expected GID index %d (%s in sysfs) in the table, it is not there",
			      i, want);
		snprintf(got, sizeof(got), "%04x:%04x:%04x:%04x:%04x:%04x:%04x:%04x",
			 g->gid.raw[0] << 8 | g->gid.raw[1], g->gid.raw[2] << 8 | g->gid.raw[3],
			 g->gid.raw[4] << 8 | g->gid.raw[5], g->gid.raw[6] << 8 | g->gid.raw[7],
			 g->gid.raw[8] << 8 | g->gid.raw[9], g->gid.raw[10] << 8 | g->gid.raw[11],
			 g->gid.raw[12] << 8 | g->gid.raw[13],
			 g->gid.raw[14] << 8 | g->gid.raw[15]);
		ck_assert_msg(strcmp(want, got) == 0, "GID index %d: expected %s (sysfs), got %s",
			      i, want, got);
	}
	ck_assert_msg(n == count, "expected %d non-empty GIDs (as in sysfs), got %d", count, n);
	free(gids);
}
END_TEST

RL_TEST(gid_types_match_sysfs, .step = 6, .points = 1)
{
	struct lab0_gid *gids;
	char path[64], want[64];
	int i, n = query_gids(&gids);

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "ports/1/gid_attrs/types/%d", gids[i].index);
		ck_assert_int_eq(ref_sysfs(rl_test_device(), path, want, sizeof(want)), 0);
		/* sysfs says "IB/RoCE v1" or "RoCE v2" */
		ck_assert_msg(strstr(want, lab0_gid_type_str(gids[i].type)) != NULL,
			      "GID index %d: expected type %s (sysfs), got %s", gids[i].index, want,
			      lab0_gid_type_str(gids[i].type));
	}
	free(gids);
}
END_TEST

RL_TEST(gid_table_matches_ibv_devinfo, .step = 6, .points = 1)
{
	struct ref_gid want[64];
	struct lab0_gid *gids;
	const struct lab0_gid *g;
	char addr[INET6_ADDRSTRLEN];
	int i, n = query_gids(&gids), m = ref_devinfo_gids(rl_test_device(), 1, want, 64);

	ck_assert_msg(m == n, "expected %d GIDs (ibv_devinfo -v), got %d", m, n);
	for (i = 0; i < m; i++) {
		inet_ntop(AF_INET6, want[i].gid.raw, addr, sizeof(addr));
		g = find_index(gids, n, want[i].index);
		ck_assert_msg(g, "expected GID[%d] %s (ibv_devinfo) in the table, it is not there",
			      want[i].index, addr);
		ck_assert_msg(memcmp(g->gid.raw, want[i].gid.raw, 16) == 0,
			      "GID[%d]: expected %s (ibv_devinfo), got other bytes", want[i].index,
			      addr);
		ck_assert_msg(strcmp(lab0_gid_type_str(g->type), want[i].type) == 0,
			      "GID[%d]: expected type %s (ibv_devinfo), got %s", want[i].index,
			      want[i].type, lab0_gid_type_str(g->type));
	}
	free(gids);
}
END_TEST

/* Step 7 */

RL_TEST(gid_scores_match_rl_gid_score_in_vm_rdma_env_sh, .step = 7, .points = 2)
{
	const struct {
		struct lab0_gid g;
		int want;
	} cases[] = {
		{ entry(0, "::ffff:10.0.0.1", IBV_GID_TYPE_ROCE_V2), 5 },
		{ entry(0, "2001:db8::1", IBV_GID_TYPE_ROCE_V2), 4 },
		{ entry(0, "::ffff:10.0.0.1", IBV_GID_TYPE_ROCE_V1), 3 },
		{ entry(0, "2001:db8::1", IBV_GID_TYPE_ROCE_V1), 2 },
		{ entry(0, "fe80::1", IBV_GID_TYPE_ROCE_V2), 0 },
		{ entry(0, "::", IBV_GID_TYPE_ROCE_V2), 0 },
	};
	char addr[INET6_ADDRSTRLEN];
	size_t i;
	int got;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		got = lab0_gid_score(&cases[i].g);
		inet_ntop(AF_INET6, cases[i].g.gid.raw, addr, sizeof(addr));
		ck_assert_msg(got == cases[i].want, "%s %s: expected score %d, got %d", addr,
			      lab0_gid_type_str(cases[i].g.type), cases[i].want, got);
	}
}
END_TEST

RL_TEST(pick_prefers_roce_v2_ipv4_mapped_and_says_why, .step = 7, .points = 2)
{
	const struct lab0_gid gids[] = {
		entry(0, "fe80::1", IBV_GID_TYPE_ROCE_V1),
		entry(1, "fe80::1", IBV_GID_TYPE_ROCE_V2),
		entry(2, "2001:db8::1", IBV_GID_TYPE_ROCE_V2),
		entry(3, "::ffff:10.0.0.1", IBV_GID_TYPE_ROCE_V1),
		entry(4, "::ffff:10.0.0.1", IBV_GID_TYPE_ROCE_V2),
	};
	const char *why = NULL;
	int got = lab0_pick_gid(gids, 5, &why);

	ck_assert_msg(got == 4, "expected index 4 (RoCE v2, IPv4-mapped), got %d", got);
	ck_assert_msg(why && *why, "expected a reason in *why, got %s", why ? "\"\"" : "NULL");
}
END_TEST

RL_TEST(pick_never_chooses_a_link_local_or_empty_gid, .step = 7, .points = 1)
{
	const struct lab0_gid mixed[] = {
		entry(0, "fe80::1", IBV_GID_TYPE_ROCE_V2),
		entry(1, "::", IBV_GID_TYPE_ROCE_V2),
		entry(2, "2001:db8::1", IBV_GID_TYPE_ROCE_V1),
	};
	const char *why = NULL;
	int got = lab0_pick_gid(mixed, 3, &why);

	ck_assert_msg(got == 2, "expected index 2 (the only routable entry), got %d", got);
	got = lab0_pick_gid(mixed, 2, &why);
	ck_assert_msg(got == -ENOENT,
		      "expected -ENOENT with only link-local and empty entries, got %d", got);
}
END_TEST

RL_TEST(pick_breaks_ties_with_the_lowest_index, .step = 7, .points = 1)
{
	const struct lab0_gid gids[] = {
		entry(7, "::ffff:10.0.0.2", IBV_GID_TYPE_ROCE_V2),
		entry(3, "::ffff:10.0.0.1", IBV_GID_TYPE_ROCE_V2),
		entry(5, "::ffff:10.0.0.3", IBV_GID_TYPE_ROCE_V2),
	};
	const char *why = NULL;
	int got = lab0_pick_gid(gids, 3, &why);

	ck_assert_msg(got == 3, "expected index 3 (lowest of three equal entries), got %d", got);
}
END_TEST

RL_TEST(pick_agrees_with_vm_rdma_env_sh_on_this_device, .step = 7, .points = 2, .needs = 6)
{
	struct lab0_gid *gids;
	const char *why = NULL;
	char cmd[256], want[32] = "";
	int n = query_gids(&gids), got;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "bash -c '. vm/rdma-env.sh && rl_pick_gid %s 1'",
		 rl_test_device());
	p = popen(cmd, "r");
	ck_assert_msg(p && fgets(want, sizeof(want), p),
		      "expected '%s' to print a GID index, it did not", cmd);
	pclose(p);
	got = lab0_pick_gid(gids, n, &why);
	ck_assert_msg(got == atoi(want), "expected GID index %d (rl_pick_gid), got %d", atoi(want),
		      got);
	free(gids);
}
END_TEST
