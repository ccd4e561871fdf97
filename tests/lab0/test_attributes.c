/*
 * test_attributes.c: Lab 0 steps 4 and 5. The act opens every device with
 * plain verbs, calls the lab's query on each and says the attributes it
 * got; the check compares each device's with sysfs and ibv_devinfo. Every
 * device, not only the test's: the kit's guests have two kinds, Soft-RoCE
 * (rxe0) and SoftiWARP (siw0, its link down, an MTU chosen per boot), and
 * rxe0's MTU is chosen per boot too, so no set of constants answers for
 * both (vm/guest-stage2). Where one device is all there is (a machine's
 * own), the tests ask about that one.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* "WHAT<I>", the name of what the act said of its I-th device, into KEY. */
static const char *key_of(char *key, size_t size, const char *what, int i)
{
	snprintf(key, size, "%s%d", what, i);
	return key;
}

/*
 * The act of both steps: every device the verbs list has, opened with
 * plain verbs; its name, then what the lab's query (PORT 0: the device's,
 * else that port's) returned and filled in.
 */
static void query_every_device(struct rl_case *c, int port)
{
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	struct ibv_device **list;
	struct ibv_context *ctx;
	char key[32];
	int n = 0, i;

	(void)c;
	list = ibv_get_device_list(&n);
	ck_assert_msg(list, "fixture: ibv_get_device_list: %s", strerror(errno));
	for (i = 0; i < n; i++) {
		rl_say_str(key_of(key, sizeof(key), "name", i), ibv_get_device_name(list[i]));
		ctx = ibv_open_device(list[i]);
		ck_assert_msg(ctx, "fixture: ibv_open_device %s: %s", ibv_get_device_name(list[i]),
			      strerror(errno));
		memset(&dattr, 0, sizeof(dattr));
		memset(&pattr, 0, sizeof(pattr));
		rl_say_int(key_of(key, sizeof(key), "ret", i),
			   port ? lab0_query_port(ctx, (uint8_t)port, &pattr) :
				  lab0_query_device(ctx, &dattr));
		if (port)
			rl_say_bytes(key_of(key, sizeof(key), "attr", i), &pattr, sizeof(pattr));
		else
			rl_say_bytes(key_of(key, sizeof(key), "attr", i), &dattr, sizeof(dattr));
		ibv_close_device(ctx);
	}
	rl_say_int("n", n);
	ibv_free_device_list(list);
}

static void query_device(struct rl_case *c)
{
	query_every_device(c, 0);
}

static void query_port(struct rl_case *c)
{
	query_every_device(c, 1);
}

/*
 * The name of the act's I-th device, once the act's devices are the ones
 * in /sys/class/infiniband, each once; NULL (the test failed) otherwise.
 */
static const char *device_named(struct rl_case *c, int i)
{
	char names[REF_MAX_DEVICES][REF_NAME_LEN], key[32];
	int n = ref_sysfs_devices(names, REF_MAX_DEVICES), j, k;
	long long said = rl_said_int(c, "n");
	const char *name;

	if (!rl_expect(c, said == n,
		       "expected the %d device(s) of /sys/class/infiniband, the act "
		       "opened %lld",
		       n, said))
		return NULL;
	name = rl_said_str(c, key_of(key, sizeof(key), "name", i));
	for (j = 0; j < n && strcmp(names[j], name) != 0; j++)
		;
	for (k = 0; k < i && strcmp(rl_said_str(c, key_of(key, sizeof(key), "name", k)), name); k++)
		;
	return rl_expect(c, j < n && k == i,
			 "the act's device %d, %s, is not one of /sys/class/infiniband's, or twice "
			 "(a fault in the test)",
			 i, name) ?
		       name :
		       NULL;
}

/* How many devices the act asked about: "n", once the check may trust it. */
static int devices(struct rl_case *c)
{
	return (int)rl_said_int(c, "n");
}

/*
 * What the act said of its device I (named *DEV) into ATTR, SIZE bytes,
 * once the lab's VERB returned 0 for it; false (the test failed) otherwise.
 * STEP is the handout's section for a message.
 */
static bool said_attr(struct rl_case *c, int i, const char *verb, int step, const char **dev,
		      void *attr, size_t size)
{
	char key[32];
	long long ret;

	*dev = device_named(c, i);
	if (!*dev)
		return false;
	ret = rl_said_int(c, key_of(key, sizeof(key), "ret", i));
	return rl_expect(c, ret == 0,
			 "expected %s to return 0 for %s, got %lld (%s)%s; see "
			 "docs/lab0.md#step-%d",
			 verb, *dev, ret, strerror((int)-ret),
			 ret == -EINVAL && step == 5 ? ": the port number is given as the verb "
						       "counts it" :
						       "",
			 step) &&
	       said_struct(c, key_of(key, sizeof(key), "attr", i), attr, size);
}

/* Step 4 */

static bool device_attr(struct rl_case *c, int i, const char **dev, struct ibv_device_attr *attr)
{
	return said_attr(c, i, "lab0_query_device", 4, dev, attr, sizeof(*attr));
}

/* Fails the test unless ibv_devinfo's KEY (a number) of DEV equals GOT. */
static void expect_devinfo(struct rl_case *c, const char *dev, const char *key,
			   unsigned long long got)
{
	char value[128];

	if (rl_failed(c))
		return;
	if (rl_expect(c, ref_devinfo(dev, 0, key, value, sizeof(value)) == 0,
		      "expected ibv_devinfo to print %s of %s, it did not", key, dev))
		rl_expect(c, strtoull(value, NULL, 0) == got,
			  "%s: %s: expected %s (ibv_devinfo), got %llu; see docs/lab0.md#step-4",
			  dev, key, value, got);
}

/* Fails the test unless ATTR's port count is the number of DEV's ports in sysfs. */
static void expect_port_count(struct rl_case *c, const char *dev,
			      const struct ibv_device_attr *attr)
{
	char dir[256];
	struct dirent *e;
	int n = 0;
	DIR *d;

	if (rl_failed(c))
		return;
	snprintf(dir, sizeof(dir), "/sys/class/infiniband/%s/ports", dev);
	d = opendir(dir);
	ck_assert_msg(d, "expected %s to exist, got %s", dir, strerror(errno));
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	rl_expect(c, attr->phys_port_cnt == n,
		  "%s: phys_port_cnt: expected %d (entries in %s), got %u; see docs/lab0.md#step-4",
		  dev, n, dir, attr->phys_port_cnt);
}

static void limits_match_devinfo(struct rl_case *c)
{
	struct ibv_device_attr attr;
	const char *dev;
	int i;

	for (i = 0; i < devices(c) && !rl_failed(c) && device_attr(c, i, &dev, &attr); i++) {
		expect_devinfo(c, dev, "max_qp", attr.max_qp);
		expect_devinfo(c, dev, "max_qp_wr", attr.max_qp_wr);
		expect_devinfo(c, dev, "max_cq", attr.max_cq);
		expect_devinfo(c, dev, "max_cqe", attr.max_cqe);
		expect_devinfo(c, dev, "max_mr", attr.max_mr);
		expect_devinfo(c, dev, "max_pd", attr.max_pd);
		expect_devinfo(c, dev, "max_sge", attr.max_sge);
		expect_devinfo(c, dev, "max_qp_rd_atom", attr.max_qp_rd_atom);
		expect_devinfo(c, dev, "max_mr_size", attr.max_mr_size);
		expect_port_count(c, dev, &attr);
	}
}

/*
 * The limits, with max_mr_size and the port count, which are the same on
 * every software device: tested alone, a constant would pass them.
 */
RL_GRADED(device_limits_match_ibv_devinfo, .step = 4, .points = 5, .act = query_device,
	  .check = limits_match_devinfo);

static void atomic_cap_matches_devinfo(struct rl_case *c)
{
	struct ibv_device_attr attr;
	char value[128];
	const char *dev;
	int i;

	for (i = 0; i < devices(c) && !rl_failed(c) && device_attr(c, i, &dev, &attr); i++)
		if (rl_expect(c, ref_devinfo(dev, 0, "atomic_cap", value, sizeof(value)) == 0,
			      "expected ibv_devinfo to print atomic_cap of %s, it did not", dev))
			rl_expect(
				c, ref_paren_number(value) == attr.atomic_cap,
				"%s: atomic_cap: expected %s (ibv_devinfo), got %d; see docs/lab0.md#step-4",
				dev, value, attr.atomic_cap);
}

RL_GRADED(atomic_capability_matches_ibv_devinfo, .step = 4, .points = 1, .act = query_device,
	  .check = atomic_cap_matches_devinfo);

static void node_guid_matches_sysfs(struct rl_case *c)
{
	struct ibv_device_attr attr;
	char want[64], got[64];
	const char *dev;
	int i;

	for (i = 0; i < devices(c) && !rl_failed(c) && device_attr(c, i, &dev, &attr); i++) {
		ck_assert_int_eq(ref_sysfs(dev, "node_guid", want, sizeof(want)), 0);
		ref_format_guid(attr.node_guid, got, sizeof(got));
		rl_expect(c, strcmp(want, got) == 0,
			  "%s: node_guid: expected %s (sysfs), got %s; see docs/lab0.md#step-4",
			  dev, want, got);
	}
}

RL_GRADED(node_guid_matches_sysfs, .step = 4, .points = 1, .act = query_device,
	  .check = node_guid_matches_sysfs);

/*
 * The test's device, opened with plain verbs, its command descriptor then
 * closed: every query of it fails, as a device that went away does. The
 * verb's own answer first ("verb_ret"), then the lab's ("ret").
 */
static void query_a_broken_context(struct rl_case *c)
{
	struct ibv_context *ctx = ref_open(rl_test_device());
	struct ibv_device_attr attr;

	(void)c;
	close(ctx->cmd_fd);
	rl_say_int("verb_ret", ibv_query_device(ctx, &attr));
	rl_say_int("ret", lab0_query_device(ctx, &attr));
	ibv_close_device(ctx);
}

/* The lab's query returned the verb's errno, negated; VERB names it for the message. */
static void returned_the_errno_negated(struct rl_case *c, const char *verb, int step)
{
	long long want = rl_said_int(c, "verb_ret"), got = rl_said_int(c, "ret");

	if (!rl_expect(c, want > 0,
		       "expected %s to fail here with an errno, it returned %lld "
		       "(a fault in the test)",
		       verb, want))
		return;
	rl_expect(c, got == -want,
		  "expected -%lld (%s failed with %lld, %s), got %lld: what does the verb "
		  "return, and what does this function? See docs/lab0.md#step-%d",
		  want, verb, want, strerror((int)want), got, step);
}

static void device_query_failure_is_a_negative_errno(struct rl_case *c)
{
	returned_the_errno_negated(c, "ibv_query_device", 4);
}

RL_GRADED(a_failed_device_query_returns_the_errno_negated, .step = 4, .points = 1,
	  .act = query_a_broken_context, .check = device_query_failure_is_a_negative_errno);

/* Step 5 */

static bool port_attr(struct rl_case *c, int i, const char **dev, struct ibv_port_attr *attr)
{
	return said_attr(c, i, "lab0_query_port(port 1)", 5, dev, attr, sizeof(*attr));
}

/* Fails the test unless the number in parentheses of DEV's ibv_devinfo port 1 KEY equals GOT. */
static void expect_port_devinfo(struct rl_case *c, const char *dev, const char *key, long got)
{
	char value[128];

	if (rl_failed(c))
		return;
	if (rl_expect(c, ref_devinfo(dev, 1, key, value, sizeof(value)) == 0,
		      "expected ibv_devinfo to print port 1's %s of %s, it did not", key, dev))
		rl_expect(c, ref_paren_number(value) == got,
			  "%s: %s: expected %s (ibv_devinfo), got (%ld); see docs/lab0.md#step-5",
			  dev, key, value, got);
}

static void state_and_link_layer_match_sysfs(struct rl_case *c)
{
	struct ibv_port_attr attr;
	char state[64], layer[64];
	const char *dev;
	int i, want;

	for (i = 0; i < devices(c) && !rl_failed(c) && port_attr(c, i, &dev, &attr); i++) {
		ck_assert_int_eq(ref_sysfs(dev, "ports/1/state", state, sizeof(state)), 0);
		ck_assert_int_eq(ref_sysfs(dev, "ports/1/link_layer", layer, sizeof(layer)), 0);
		want = strcmp(layer, "Ethernet") == 0 ? IBV_LINK_LAYER_ETHERNET :
							IBV_LINK_LAYER_INFINIBAND;
		if (rl_expect(c, atoi(state) == (int)attr.state,
			      "%s: state: expected %s (sysfs), got %d (%s); see docs/lab0.md#step-5",
			      dev, state, attr.state, ibv_port_state_str(attr.state)))
			rl_expect(
				c, attr.link_layer == want,
				"%s: link_layer: expected %d (sysfs says %s), got %u; see docs/lab0.md#step-5",
				dev, want, layer, attr.link_layer);
	}
}

/* With the link layer, which every software device has the same (Ethernet). */
RL_GRADED(port_state_and_link_layer_match_sysfs, .step = 5, .points = 2, .act = query_port,
	  .check = state_and_link_layer_match_sysfs);

static void mtu_width_and_speed_match_devinfo(struct rl_case *c)
{
	struct ibv_port_attr attr;
	const char *dev;
	int i;

	for (i = 0; i < devices(c) && !rl_failed(c) && port_attr(c, i, &dev, &attr); i++) {
		expect_port_devinfo(c, dev, "active_mtu", attr.active_mtu);
		expect_port_devinfo(c, dev, "max_mtu", attr.max_mtu);
		expect_port_devinfo(c, dev, "active_width", attr.active_width);
		expect_port_devinfo(c, dev, "active_speed", attr.active_speed);
	}
}

/* With the width and speed, which a veth gives every software device the same. */
RL_GRADED(mtu_width_and_speed_match_ibv_devinfo, .step = 5, .points = 2, .act = query_port,
	  .check = mtu_width_and_speed_match_devinfo);

static void gid_table_length_matches_devinfo(struct rl_case *c)
{
	struct ibv_port_attr attr;
	const char *dev;
	char value[64];
	int i;

	for (i = 0; i < devices(c) && !rl_failed(c) && port_attr(c, i, &dev, &attr); i++)
		if (rl_expect(c, ref_devinfo(dev, 1, "gid_tbl_len", value, sizeof(value)) == 0,
			      "expected ibv_devinfo to print port 1's gid_tbl_len of %s, it did not",
			      dev))
			rl_expect(
				c, atoi(value) == attr.gid_tbl_len,
				"%s: gid_tbl_len: expected %s (ibv_devinfo), got %d; see docs/lab0.md#step-5",
				dev, value, attr.gid_tbl_len);
}

RL_GRADED(gid_table_length_matches_ibv_devinfo, .step = 5, .points = 1, .act = query_port,
	  .check = gid_table_length_matches_devinfo);

/* A port the test's device lacks, drawn for this run: 0, or one past its last. */
struct lacking_port_in {
	unsigned port_past_last;
};

static void a_port_the_device_lacks(struct rl_case *c)
{
	struct lacking_port_in *in = c->in;

	in->port_past_last = ref_random_below(2);
}

/* The verb's answer for that port first ("verb_ret"), then the lab's ("ret"). */
static void query_the_lacking_port(struct rl_case *c)
{
	const struct lacking_port_in *in = c->in;
	struct ibv_context *ctx = ref_open(rl_test_device());
	struct ibv_device_attr dattr;
	struct ibv_port_attr attr;
	uint8_t port = 0;

	if (in->port_past_last) {
		ck_assert_msg(ibv_query_device(ctx, &dattr) == 0,
			      "expected ibv_query_device to work, it did not");
		port = (uint8_t)(dattr.phys_port_cnt + 1);
	}
	rl_say_int("port", port);
	rl_say_int("verb_ret", ibv_query_port(ctx, port, &attr));
	rl_say_int("ret", lab0_query_port(ctx, port, &attr));
	ibv_close_device(ctx);
}

static void port_query_failure_is_a_negative_errno(struct rl_case *c)
{
	char verb[64];

	snprintf(verb, sizeof(verb), "ibv_query_port(port %lld)", rl_said_int(c, "port"));
	returned_the_errno_negated(c, verb, 5);
}

RL_GRADED(querying_a_port_the_device_lacks_returns_the_errno_negated, .step = 5, .points = 1,
	  .setup = a_port_the_device_lacks, .act = query_the_lacking_port,
	  .check = port_query_failure_is_a_negative_errno);
