/*
 * test_rdma_env.c: the device and GID choice of vm/rdma-env.sh, which
 * vm/run-rdma uses on a machine with a native RDMA device, checked against
 * fake /sys/class/infiniband trees (RDMALAB_SYSFS points it at one).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../harness.h"

#define ENV_SCRIPT "vm/rdma-env.sh"

static char sysfs[64];

static void write_file(const char *rel, const char *text)
{
	char path[512], dir[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", sysfs, rel);
	snprintf(dir, sizeof(dir), "mkdir -p \"$(dirname '%s')\"", path);
	ck_assert_msg(system(dir) == 0, "cannot create the folder of %s", path);
	f = fopen(path, "w");
	ck_assert_msg(f, "cannot write %s: %s", path, strerror(errno));
	fprintf(f, "%s\n", text);
	fclose(f);
}

/* Add GID entry INDEX with TYPE to DEV's port 1. */
static void add_gid(const char *dev, int index, const char *gid, const char *type)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "%s/ports/1/gids/%d", dev, index);
	write_file(rel, gid);
	snprintf(rel, sizeof(rel), "%s/ports/1/gid_attrs/types/%d", dev, index);
	write_file(rel, type);
}

static void add_device(const char *dev, const char *state)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "%s/ports/1/state", dev);
	write_file(rel, state);
}

/* Run rl_export_env on the fake tree with PRESET variables; its output in OUT. */
static int export_env(const char *preset, char *out, size_t len)
{
	char cmd[1024];
	FILE *p;
	size_t n;

	ck_assert_msg(access(ENV_SCRIPT, R_OK) == 0,
		      "expected %s (run the tests from the kit folder)", ENV_SCRIPT);
	snprintf(cmd, sizeof(cmd),
		 "env -u RDMALAB_DEVICE -u RDMALAB_GID_INDEX -u RDMALAB_ADDR -u RDMALAB_IB_PORT "
		 "%s RDMALAB_SYSFS=%s bash -c '. %s; rl_export_env && "
		 "echo \"$RDMALAB_DEVICE $RDMALAB_GID_INDEX $RDMALAB_ADDR\"' 2>&1",
		 preset, sysfs, ENV_SCRIPT);
	p = popen(cmd, "r");
	ck_assert_msg(p, "popen failed");
	n = fread(out, 1, len - 1, p);
	out[n] = '\0';
	if (n && out[n - 1] == '\n')
		out[n - 1] = '\0';
	return pclose(p);
}

static void setup(void)
{
	strcpy(sysfs, "/tmp/rdmalab-sysfs.XXXXXX");
	ck_assert_msg(mkdtemp(sysfs), "mkdtemp failed: %s", strerror(errno));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sysfs);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", sysfs);
}

START_TEST(test_rxe_table_picks_roce_v2_ipv4_mapped_and_its_address)
{
	char out[256];

	add_device("rxe0", "4: ACTIVE");
	add_gid("rxe0", 0, "fe80:0000:0000:0000:a46a:c2ff:fef0:656f", "IB/RoCE v1");
	add_gid("rxe0", 1, "fe80:0000:0000:0000:a46a:c2ff:fef0:656f", "RoCE v2");
	add_gid("rxe0", 2, "0000:0000:0000:0000:0000:ffff:0ad3:0001", "IB/RoCE v1");
	add_gid("rxe0", 3, "0000:0000:0000:0000:0000:ffff:0ad3:0001", "RoCE v2");
	add_gid("rxe0", 4, "0000:0000:0000:0000:0000:0000:0000:0000", "");
	ck_assert_int_eq(export_env("", out, sizeof(out)), 0);
	ck_assert_msg(strcmp(out, "rxe0 3 10.211.0.1") == 0,
		      "expected \"rxe0 3 10.211.0.1\", got \"%s\"", out);
}
END_TEST

START_TEST(test_device_whose_port_is_down_is_passed_over)
{
	char out[256];

	add_device("mlx5_0", "1: DOWN");
	add_gid("mlx5_0", 0, "0000:0000:0000:0000:0000:ffff:c000:0201", "RoCE v2");
	add_device("rxe0", "4: ACTIVE");
	add_gid("rxe0", 1, "0000:0000:0000:0000:0000:ffff:c000:0202", "RoCE v2");
	ck_assert_int_eq(export_env("", out, sizeof(out)), 0);
	ck_assert_msg(strcmp(out, "rxe0 1 192.0.2.2") == 0,
		      "expected \"rxe0 1 192.0.2.2\", got \"%s\"", out);
}
END_TEST

START_TEST(test_global_ipv6_gid_is_used_when_no_ipv4_mapped_one_exists)
{
	char out[256];

	add_device("rxe0", "4: ACTIVE");
	add_gid("rxe0", 0, "fe80:0000:0000:0000:0000:0000:0000:0001", "RoCE v2");
	add_gid("rxe0", 1, "2001:0db8:0000:0000:0000:0000:0000:0001", "RoCE v2");
	ck_assert_int_eq(export_env("", out, sizeof(out)), 0);
	/* No IPv4 address can be derived from an IPv6 GID: RDMALAB_ADDR stays empty. */
	ck_assert_msg(strcmp(out, "rxe0 1 ") == 0, "expected \"rxe0 1 \", got \"%s\"", out);
}
END_TEST

START_TEST(test_values_the_user_set_are_kept)
{
	char out[256];

	add_device("rxe0", "4: ACTIVE");
	add_gid("rxe0", 1, "0000:0000:0000:0000:0000:ffff:0ad3:0001", "RoCE v2");
	add_gid("rxe0", 2, "0000:0000:0000:0000:0000:ffff:0ad3:0002", "RoCE v2");
	ck_assert_int_eq(export_env("RDMALAB_GID_INDEX=2", out, sizeof(out)), 0);
	ck_assert_msg(strcmp(out, "rxe0 2 10.211.0.2") == 0,
		      "expected \"rxe0 2 10.211.0.2\", got \"%s\"", out);
}
END_TEST

START_TEST(test_no_active_device_fails_and_points_to_make_doctor)
{
	char out[256];

	add_device("rxe0", "1: DOWN");
	ck_assert_msg(export_env("", out, sizeof(out)) != 0, "expected failure, got success: %s",
		      out);
	ck_assert_msg(strstr(out, "make doctor"), "expected a hint naming make doctor, got \"%s\"",
		      out);
}
END_TEST

START_TEST(test_device_with_only_link_local_gids_fails_with_a_fix)
{
	char out[256];

	add_device("rxe0", "4: ACTIVE");
	add_gid("rxe0", 0, "fe80:0000:0000:0000:0000:0000:0000:0001", "RoCE v2");
	ck_assert_msg(export_env("", out, sizeof(out)) != 0, "expected failure, got success: %s",
		      out);
	ck_assert_msg(strstr(out, "no usable GID"), "expected \"no usable GID\", got \"%s\"", out);
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("rdma-env.sh device and GID choice");
	TCase *tc = tcase_create("native");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, RL_TEST_TIMEOUT_UNIT);
	tcase_add_test(tc, test_rxe_table_picks_roce_v2_ipv4_mapped_and_its_address);
	tcase_add_test(tc, test_device_whose_port_is_down_is_passed_over);
	tcase_add_test(tc, test_global_ipv6_gid_is_used_when_no_ipv4_mapped_one_exists);
	tcase_add_test(tc, test_values_the_user_set_are_kept);
	tcase_add_test(tc, test_no_active_device_fails_and_points_to_make_doctor);
	tcase_add_test(tc, test_device_with_only_link_local_gids_fails_with_a_fix);
	suite_add_tcase(s, tc);
	return s;
}
