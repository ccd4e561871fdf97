/*
 * test_attributes.c: Lab 0 steps 4 and 5. The act opens the device with
 * plain verbs, calls the lab's query and says the attributes it got; the
 * check compares them with sysfs and ibv_devinfo.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "lab0.h"
#include "reference.h"

/* What the act said as NAME, SIZE bytes, copied into OUT; false (the test failed) otherwise. */
static bool said_struct(struct rl_case *c, const char *name, void *out, size_t size)
{
	size_t n;
	const void *p = rl_said_bytes(c, name, &n);

	if (!rl_expect(c, n == size,
		       "the test's act said %zu bytes of %s, not %zu (a fault in the test)", n,
		       name, size))
		return false;
	memcpy(out, p, size);
	return true;
}

/* Step 4 */

static void query_device(struct rl_case *c)
{
	struct ibv_context *ctx = ref_open(rl_test_device());
	struct ibv_device_attr attr;

	(void)c;
	memset(&attr, 0, sizeof(attr));
	rl_say_int("ret", lab0_query_device(ctx, &attr));
	rl_say_bytes("attr", &attr, sizeof(attr));
	ibv_close_device(ctx);
}

/* The attributes the act said, once lab0_query_device returned 0; false (the test failed) otherwise. */
static bool device_attr(struct rl_case *c, struct ibv_device_attr *attr)
{
	long long ret = rl_said_int(c, "ret");

	return rl_expect(c, ret == 0, "expected lab0_query_device to return 0, got %lld (%s)", ret,
			 strerror((int)-ret)) &&
	       said_struct(c, "attr", attr, sizeof(*attr));
}

/* Fails the test unless ibv_devinfo's KEY (a number) equals GOT. */
static void expect_devinfo(struct rl_case *c, const char *key, unsigned long long got)
{
	char value[128];

	if (rl_failed(c))
		return;
	if (rl_expect(c, ref_devinfo(rl_test_device(), 0, key, value, sizeof(value)) == 0,
		      "expected ibv_devinfo to print %s, it did not", key))
		rl_expect(c, strtoull(value, NULL, 0) == got,
			  "%s: expected %s (ibv_devinfo), got %llu", key, value, got);
}

static void limits_match_devinfo(struct rl_case *c)
{
	struct ibv_device_attr attr;

	if (!device_attr(c, &attr))
		return;
	expect_devinfo(c, "max_qp", attr.max_qp);
	expect_devinfo(c, "max_qp_wr", attr.max_qp_wr);
	expect_devinfo(c, "max_cq", attr.max_cq);
	expect_devinfo(c, "max_cqe", attr.max_cqe);
	expect_devinfo(c, "max_mr", attr.max_mr);
	expect_devinfo(c, "max_pd", attr.max_pd);
	expect_devinfo(c, "max_sge", attr.max_sge);
	expect_devinfo(c, "max_qp_rd_atom", attr.max_qp_rd_atom);
}

RL_GRADED(device_limits_match_ibv_devinfo, .step = 4, .points = 3, .act = query_device,
	  .check = limits_match_devinfo);

static void max_mr_size_matches_devinfo(struct rl_case *c)
{
	struct ibv_device_attr attr;

	if (device_attr(c, &attr))
		expect_devinfo(c, "max_mr_size", attr.max_mr_size);
}

RL_GRADED(max_mr_size_matches_ibv_devinfo, .step = 4, .points = 1, .act = query_device,
	  .check = max_mr_size_matches_devinfo);

static void atomic_cap_matches_devinfo(struct rl_case *c)
{
	struct ibv_device_attr attr;
	char value[128];

	if (!device_attr(c, &attr) ||
	    !rl_expect(c, ref_devinfo(rl_test_device(), 0, "atomic_cap", value, sizeof(value)) == 0,
		       "expected ibv_devinfo to print atomic_cap, it did not"))
		return;
	rl_expect(c, ref_paren_number(value) == attr.atomic_cap,
		  "atomic_cap: expected %s (ibv_devinfo), got %d", value, attr.atomic_cap);
}

RL_GRADED(atomic_capability_matches_ibv_devinfo, .step = 4, .points = 1, .act = query_device,
	  .check = atomic_cap_matches_devinfo);

static void port_count_matches_sysfs(struct rl_case *c)
{
	struct ibv_device_attr attr;
	char dir[256];
	struct dirent *e;
	int n = 0;
	DIR *d;

	if (!device_attr(c, &attr))
		return;
	snprintf(dir, sizeof(dir), "/sys/class/infiniband/%s/ports", rl_test_device());
	d = opendir(dir);
	ck_assert_msg(d, "expected %s to exist, got %s", dir, strerror(errno));
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	rl_expect(c, attr.phys_port_cnt == n, "phys_port_cnt: expected %d (entries in %s), got %u",
		  n, dir, attr.phys_port_cnt);
}

RL_GRADED(port_count_matches_sysfs, .step = 4, .points = 1, .act = query_device,
	  .check = port_count_matches_sysfs);

static void node_guid_matches_sysfs(struct rl_case *c)
{
	struct ibv_device_attr attr;
	char want[64], got[64];

	if (!device_attr(c, &attr))
		return;
	ck_assert_int_eq(ref_sysfs(rl_test_device(), "node_guid", want, sizeof(want)), 0);
	ref_format_guid(attr.node_guid, got, sizeof(got));
	rl_expect(c, strcmp(want, got) == 0, "node_guid: expected %s (sysfs), got %s", want, got);
}

RL_GRADED(node_guid_matches_sysfs, .step = 4, .points = 1, .act = query_device,
	  .check = node_guid_matches_sysfs);

/* Step 5 */

static void query_port(struct rl_case *c)
{
	struct ibv_context *ctx = ref_open(rl_test_device());
	struct ibv_port_attr attr;

	(void)c;
	memset(&attr, 0, sizeof(attr));
	rl_say_int("ret", lab0_query_port(ctx, 1, &attr));
	rl_say_bytes("attr", &attr, sizeof(attr));
	ibv_close_device(ctx);
}

/* Port 1's attributes the act said, once lab0_query_port returned 0; false (the test failed) otherwise. */
static bool port_attr(struct rl_case *c, struct ibv_port_attr *attr)
{
	long long ret = rl_said_int(c, "ret");

	return rl_expect(c, ret == 0, "expected lab0_query_port(port 1) to return 0, got %lld (%s)",
			 ret, strerror((int)-ret)) &&
	       said_struct(c, "attr", attr, sizeof(*attr));
}

/* Fails the test unless the number in parentheses of ibv_devinfo's port 1 KEY equals GOT. */
static void expect_port_devinfo(struct rl_case *c, const char *key, long got)
{
	char value[128];

	if (rl_failed(c))
		return;
	if (rl_expect(c, ref_devinfo(rl_test_device(), 1, key, value, sizeof(value)) == 0,
		      "expected ibv_devinfo to print port 1's %s, it did not", key))
		rl_expect(c, ref_paren_number(value) == got,
			  "%s: expected %s (ibv_devinfo), got (%ld)", key, value, got);
}

static void port_state_matches_sysfs(struct rl_case *c)
{
	struct ibv_port_attr attr;
	char state[64];

	if (!port_attr(c, &attr))
		return;
	ck_assert_int_eq(ref_sysfs(rl_test_device(), "ports/1/state", state, sizeof(state)), 0);
	rl_expect(c, atoi(state) == (int)attr.state, "state: expected %s (sysfs), got %d (%s)",
		  state, attr.state, ibv_port_state_str(attr.state));
}

RL_GRADED(port_state_matches_sysfs, .step = 5, .points = 1, .act = query_port,
	  .check = port_state_matches_sysfs);

static void link_layer_matches_sysfs(struct rl_case *c)
{
	struct ibv_port_attr attr;
	char layer[64];
	int want;

	if (!port_attr(c, &attr))
		return;
	ck_assert_int_eq(ref_sysfs(rl_test_device(), "ports/1/link_layer", layer, sizeof(layer)),
			 0);
	want = strcmp(layer, "Ethernet") == 0 ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
	rl_expect(c, attr.link_layer == want, "link_layer: expected %d (sysfs says %s), got %u",
		  want, layer, attr.link_layer);
}

RL_GRADED(link_layer_matches_sysfs, .step = 5, .points = 1, .act = query_port,
	  .check = link_layer_matches_sysfs);

static void mtu_matches_devinfo(struct rl_case *c)
{
	struct ibv_port_attr attr;

	if (!port_attr(c, &attr))
		return;
	expect_port_devinfo(c, "active_mtu", attr.active_mtu);
	expect_port_devinfo(c, "max_mtu", attr.max_mtu);
}

RL_GRADED(mtu_matches_ibv_devinfo, .step = 5, .points = 1, .act = query_port,
	  .check = mtu_matches_devinfo);

static void width_and_speed_match_devinfo(struct rl_case *c)
{
	struct ibv_port_attr attr;

	if (!port_attr(c, &attr))
		return;
	expect_port_devinfo(c, "active_width", attr.active_width);
	expect_port_devinfo(c, "active_speed", attr.active_speed);
}

RL_GRADED(width_and_speed_match_ibv_devinfo, .step = 5, .points = 1, .act = query_port,
	  .check = width_and_speed_match_devinfo);

static void gid_table_length_matches_devinfo(struct rl_case *c)
{
	struct ibv_port_attr attr;
	char value[64];

	if (!port_attr(c, &attr) ||
	    !rl_expect(c,
		       ref_devinfo(rl_test_device(), 1, "gid_tbl_len", value, sizeof(value)) == 0,
		       "expected ibv_devinfo to print port 1's gid_tbl_len, it did not"))
		return;
	rl_expect(c, atoi(value) == attr.gid_tbl_len,
		  "gid_tbl_len: expected %s (ibv_devinfo), got %d", value, attr.gid_tbl_len);
}

RL_GRADED(gid_table_length_matches_ibv_devinfo, .step = 5, .points = 1, .act = query_port,
	  .check = gid_table_length_matches_devinfo);
