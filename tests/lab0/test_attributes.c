/* test_attributes.c: Lab 0 steps 4 and 5, checked against sysfs and ibv_devinfo. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "lab0.h"
#include "reference.h"

/* Step 4 */

/* The device attributes the lab's code reports for the environment's device. */
static void query_device(struct ibv_device_attr *attr)
{
	struct ibv_context *ctx = ref_open(rl_test_device());
	int ret;

	memset(attr, 0, sizeof(*attr));
	ret = lab0_query_device(ctx, attr);
	ck_assert_msg(ret == 0, "expected lab0_query_device to return 0, got %d (%s)", ret,
		      strerror(-ret));
	ibv_close_device(ctx);
}

/* Fail unless ibv_devinfo's KEY (a number) equals GOT. */
static void expect_devinfo(const char *key, unsigned long long got)
{
	char value[128];

	ck_assert_msg(ref_devinfo(rl_test_device(), 0, key, value, sizeof(value)) == 0,
		      "expected ibv_devinfo to print %s, it did not", key);
	ck_assert_msg(strtoull(value, NULL, 0) == got, "%s: expected %s (ibv_devinfo), got %llu",
		      key, value, got);
}

RL_TEST(device_limits_match_ibv_devinfo, .step = 4, .points = 3)
{
	struct ibv_device_attr attr;

	query_device(&attr);
	expect_devinfo("max_qp", attr.max_qp);
	expect_devinfo("max_qp_wr", attr.max_qp_wr);
	expect_devinfo("max_cq", attr.max_cq);
	expect_devinfo("max_cqe", attr.max_cqe);
	expect_devinfo("max_mr", attr.max_mr);
	expect_devinfo("max_pd", attr.max_pd);
	expect_devinfo("max_sge", attr.max_sge);
	expect_devinfo("max_qp_rd_atom", attr.max_qp_rd_atom);
}
END_TEST

RL_TEST(max_mr_size_matches_ibv_devinfo, .step = 4, .points = 1)
{
	struct ibv_device_attr attr;

	query_device(&attr);
	expect_devinfo("max_mr_size", attr.max_mr_size);
}
END_TEST

RL_TEST(atomic_capability_matches_ibv_devinfo, .step = 4, .points = 1)
{
	struct ibv_device_attr attr;
	char value[128];

	query_device(&attr);
	ck_assert_int_eq(ref_devinfo(rl_test_device(), 0, "atomic_cap", value, sizeof(value)), 0);
	ck_assert_msg(ref_paren_number(value) == attr.atomic_cap,
		      "atomic_cap: expected %s (ibv_devinfo), got %d", value, attr.atomic_cap);
}
END_TEST

RL_TEST(port_count_matches_sysfs, .step = 4, .points = 1)
{
	struct ibv_device_attr attr;
	char dir[256];
	struct dirent *e;
	int n = 0;
	DIR *d;

	query_device(&attr);
	snprintf(dir, sizeof(dir), "/sys/class/infiniband/%s/ports", rl_test_device());
	d = opendir(dir);
	ck_assert_msg(d, "expected %s to exist, got %s", dir, strerror(errno));
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	ck_assert_msg(attr.phys_port_cnt == n, "phys_port_cnt: expected %d (entries in %s), got %u",
		      n, dir, attr.phys_port_cnt);
}
END_TEST

RL_TEST(node_guid_matches_sysfs, .step = 4, .points = 1)
{
	struct ibv_device_attr attr;
	char want[64], got[64];

	query_device(&attr);
	ck_assert_int_eq(ref_sysfs(rl_test_device(), "node_guid", want, sizeof(want)), 0);
	ref_format_guid(attr.node_guid, got, sizeof(got));
	ck_assert_msg(strcmp(want, got) == 0, "node_guid: expected %s (sysfs), got %s", want, got);
}
END_TEST

/* Step 5 */

/* Port 1's attributes as the lab's code reports them. */
static void query_port(struct ibv_port_attr *attr)
{
	struct ibv_context *ctx = ref_open(rl_test_device());
	int ret;

	memset(attr, 0, sizeof(*attr));
	ret = lab0_query_port(ctx, 1, attr);
	ck_assert_msg(ret == 0, "expected lab0_query_port(port 1) to return 0, got %d (%s)", ret,
		      strerror(-ret));
	ibv_close_device(ctx);
}

/* Fail unless the number in parentheses of ibv_devinfo's port 1 KEY equals GOT. */
static void expect_port_devinfo(const char *key, long got)
{
	char value[128];

	ck_assert_msg(ref_devinfo(rl_test_device(), 1, key, value, sizeof(value)) == 0,
		      "expected ibv_devinfo to print port 1's %s, it did not", key);
	ck_assert_msg(ref_paren_number(value) == got, "%s: expected %s (ibv_devinfo), got (%ld)",
		      key, value, got);
}

RL_TEST(port_state_matches_sysfs, .step = 5, .points = 1)
{
	struct ibv_port_attr attr;
	char state[64];

	query_port(&attr);
	ck_assert_int_eq(ref_sysfs(rl_test_device(), "ports/1/state", state, sizeof(state)), 0);
	ck_assert_msg(atoi(state) == (int)attr.state, "state: expected %s (sysfs), got %d (%s)",
		      state, attr.state, ibv_port_state_str(attr.state));
}
END_TEST

RL_TEST(link_layer_matches_sysfs, .step = 5, .points = 1)
{
	struct ibv_port_attr attr;
	char layer[64];
	int want;

	query_port(&attr);
	ck_assert_int_eq(ref_sysfs(rl_test_device(), "ports/1/link_layer", layer, sizeof(layer)),
			 0);
	want = strcmp(layer, "Ethernet") == 0 ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
	ck_assert_msg(attr.link_layer == want, "link_layer: expected %d (sysfs says %s), got %u",
		      want, layer, attr.link_layer);
}
END_TEST

RL_TEST(mtu_matches_ibv_devinfo, .step = 5, .points = 1)
{
	struct ibv_port_attr attr;

	query_port(&attr);
	expect_port_devinfo("active_mtu", attr.active_mtu);
	expect_port_devinfo("max_mtu", attr.max_mtu);
}
END_TEST

RL_TEST(width_and_speed_match_ibv_devinfo, .step = 5, .points = 1)
{
	struct ibv_port_attr attr;

	query_port(&attr);
	expect_port_devinfo("active_width", attr.active_width);
	expect_port_devinfo("active_speed", attr.active_speed);
}
END_TEST

RL_TEST(gid_table_length_matches_ibv_devinfo, .step = 5, .points = 1)
{
	struct ibv_port_attr attr;
	char value[64];

	query_port(&attr);
	ck_assert_int_eq(ref_devinfo(rl_test_device(), 1, "gid_tbl_len", value, sizeof(value)), 0);
	ck_assert_msg(atoi(value) == attr.gid_tbl_len,
		      "gid_tbl_len: expected %s (ibv_devinfo), got %d", value, attr.gid_tbl_len);
}
END_TEST
