/* test_fw_gid.c: the GID picker prefers RoCE v2 IPv4-mapped entries, as perftest does. */
#include <arpa/inet.h>
#include <string.h>

#include "../harness.h"
#include "rdmalab.h"

/* One table entry from GID text such as "::ffff:10.211.0.1" ("" for empty). */
static struct ibv_gid_entry entry(uint32_t index, const char *text, uint32_t type)
{
	struct ibv_gid_entry e = { .gid_index = index, .port_num = 1, .gid_type = type };

	if (*text)
		ck_assert_msg(inet_pton(AF_INET6, text, e.gid.raw) == 1, "bad sample GID %s", text);
	return e;
}

START_TEST(test_gid_score_matches_rdma_env_rule)
{
	struct ibv_gid_entry v2_ipv4 = entry(0, "::ffff:10.211.0.1", IBV_GID_TYPE_ROCE_V2);
	struct ibv_gid_entry v1_ipv4 = entry(0, "::ffff:10.211.0.1", IBV_GID_TYPE_ROCE_V1);
	struct ibv_gid_entry v2_ipv6 = entry(0, "2001:db8::1", IBV_GID_TYPE_ROCE_V2);
	struct ibv_gid_entry link_local = entry(0, "fe80::1", IBV_GID_TYPE_ROCE_V2);
	struct ibv_gid_entry empty = entry(0, "", IBV_GID_TYPE_ROCE_V2);

	ck_assert_msg(rl_gid_score(&v2_ipv4.gid, v2_ipv4.gid_type) == 5,
		      "v2 IPv4: expected 5, got %d", rl_gid_score(&v2_ipv4.gid, v2_ipv4.gid_type));
	ck_assert_msg(rl_gid_score(&v1_ipv4.gid, v1_ipv4.gid_type) == 3,
		      "v1 IPv4: expected 3, got %d", rl_gid_score(&v1_ipv4.gid, v1_ipv4.gid_type));
	ck_assert_msg(rl_gid_score(&v2_ipv6.gid, v2_ipv6.gid_type) == 4,
		      "v2 IPv6: expected 4, got %d", rl_gid_score(&v2_ipv6.gid, v2_ipv6.gid_type));
	ck_assert_msg(rl_gid_score(&link_local.gid, link_local.gid_type) == 0,
		      "link-local: expected 0, got %d",
		      rl_gid_score(&link_local.gid, link_local.gid_type));
	ck_assert_msg(rl_gid_score(&empty.gid, empty.gid_type) == 0, "empty: expected 0, got %d",
		      rl_gid_score(&empty.gid, empty.gid_type));
}
END_TEST

START_TEST(test_gid_pick_skips_link_local_on_rxe_like_table)
{
	/* What rxe on a veth shows: link-local at 0, IPv4-mapped v2 at 1. */
	struct ibv_gid_entry table[] = {
		entry(0, "fe80::a8bb:ccff:fedd:eeff", IBV_GID_TYPE_ROCE_V2),
		entry(1, "::ffff:10.211.0.1", IBV_GID_TYPE_ROCE_V2),
	};
	int got = rl_gid_pick(table, 2);

	ck_assert_msg(got == 1, "expected GID index 1, got %d", got);
}
END_TEST

START_TEST(test_gid_pick_prefers_v2_over_v1_pair)
{
	/* mlx5-style: every address twice, v1 then v2. */
	struct ibv_gid_entry table[] = {
		entry(0, "fe80::1", IBV_GID_TYPE_ROCE_V1),
		entry(1, "fe80::1", IBV_GID_TYPE_ROCE_V2),
		entry(2, "::ffff:192.168.1.5", IBV_GID_TYPE_ROCE_V1),
		entry(3, "::ffff:192.168.1.5", IBV_GID_TYPE_ROCE_V2),
	};
	int got = rl_gid_pick(table, 4);

	ck_assert_msg(got == 3, "expected GID index 3 (v2, IPv4), got %d", got);
}
END_TEST

START_TEST(test_gid_pick_prefers_ipv4_mapped_over_global_ipv6)
{
	struct ibv_gid_entry table[] = {
		entry(2, "2001:db8::5", IBV_GID_TYPE_ROCE_V2),
		entry(3, "::ffff:192.168.1.5", IBV_GID_TYPE_ROCE_V2),
	};
	int got = rl_gid_pick(table, 2);

	ck_assert_msg(got == 3, "expected GID index 3, got %d", got);
}
END_TEST

START_TEST(test_gid_pick_breaks_ties_to_lowest_index)
{
	/* Listed out of order, as a sparse table can be. */
	struct ibv_gid_entry table[] = {
		entry(7, "::ffff:10.0.0.2", IBV_GID_TYPE_ROCE_V2),
		entry(4, "::ffff:10.0.0.1", IBV_GID_TYPE_ROCE_V2),
	};
	int got = rl_gid_pick(table, 2);

	ck_assert_msg(got == 4, "expected GID index 4, got %d", got);
}
END_TEST

START_TEST(test_gid_pick_finds_nothing_in_all_empty_table)
{
	struct ibv_gid_entry table[] = {
		entry(0, "", IBV_GID_TYPE_ROCE_V2),
		entry(1, "", IBV_GID_TYPE_ROCE_V1),
		entry(2, "fe80::2", IBV_GID_TYPE_ROCE_V2),
	};
	int got = rl_gid_pick(table, 3);

	ck_assert_msg(got == -ENOENT, "expected -ENOENT, got %d", got);
	got = rl_gid_pick(table, 0);
	ck_assert_msg(got == -ENOENT, "empty table: expected -ENOENT, got %d", got);
}
END_TEST

START_TEST(test_gid_str_prints_ipv4_mapped_form)
{
	struct ibv_gid_entry e = entry(1, "::ffff:10.211.0.1", IBV_GID_TYPE_ROCE_V2);
	char text[RL_GID_STR_LEN];

	rl_gid_str(&e.gid, text);
	ck_assert_msg(!strcmp(text, "::ffff:10.211.0.1"), "expected ::ffff:10.211.0.1, got %s",
		      text);
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("framework gid");
	TCase *tc = tcase_create("gid");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_UNIT);
	tcase_add_test(tc, test_gid_score_matches_rdma_env_rule);
	tcase_add_test(tc, test_gid_pick_skips_link_local_on_rxe_like_table);
	tcase_add_test(tc, test_gid_pick_prefers_v2_over_v1_pair);
	tcase_add_test(tc, test_gid_pick_prefers_ipv4_mapped_over_global_ipv6);
	tcase_add_test(tc, test_gid_pick_breaks_ties_to_lowest_index);
	tcase_add_test(tc, test_gid_pick_finds_nothing_in_all_empty_table);
	tcase_add_test(tc, test_gid_str_prints_ipv4_mapped_form);
	suite_add_tcase(s, tc);
	return s;
}
