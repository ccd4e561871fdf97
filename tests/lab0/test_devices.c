/*
 * test_devices.c: Lab 0 steps 1 to 3. The act calls the lab's code and says
 * what it returned; the check compares with sysfs and ibv_devinfo, and asks
 * the kernel which contexts the act holds open.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "lab0.h"
#include "reference.h"

/*
 * Whether the kernel says the held act has a context open on WANT. The
 * number of its contexts into *N (-1, and the test failed, when the kernel
 * could not be asked), their devices into ON for a message.
 */
static bool contexts_on(struct rl_case *c, const char *want, char *on, size_t len, int *n)
{
	struct rl_res ctx[16];
	const char *dev;
	int i, pid = rl_act_pid(c);
	bool found = false;
	size_t at = 0;

	on[0] = '\0';
	*n = -1;
	if (!rl_expect(c, pid > 0, "expected the test's process to wait while checked, it did not"))
		return false;
	*n = rl_rdma_res("ctx", pid, ctx, 16);
	if (!rl_expect(c, *n >= 0,
		       "expected the kernel's list of contexts (rdma res show ctx), got none"))
		return false;
	for (i = 0; i < *n && i < 16; i++) {
		dev = rl_res_get(&ctx[i], "ifname");
		found |= dev && strcmp(dev, want) == 0;
		if (at < len)
			at += (size_t)snprintf(on + at, len - at, "%s%s", i ? ", " : "",
					       dev ? dev : "?");
	}
	return found;
}

/* Step 1 */

/*
 * Lists the devices with the lab's code and says what came back: whether a
 * list did, its length, how many devices it holds before its first NULL
 * (at most num), their names (one a line) and, when it holds num of them,
 * whether list[num] is a device too. Then opens the environment's device
 * from that list with plain verbs and holds it open: the kernel sees a
 * context only if the entry is a device libibverbs made.
 */
static void list_devices(struct rl_case *c)
{
	char names[REF_MAX_DEVICES * REF_NAME_LEN] = "";
	struct ibv_context *ctx = NULL;
	int i, num = -1;
	struct ibv_device **list = lab0_get_devices(&num);
	size_t at = 0;

	(void)c;
	rl_say_int("list", list != NULL);
	rl_say_int("num", num);
	if (!list)
		return;
	for (i = 0; i < num && i < REF_MAX_DEVICES && list[i] && at < sizeof(names); i++) {
		at += (size_t)snprintf(names + at, sizeof(names) - at, "%s%.63s", i ? "\n" : "",
				       ibv_get_device_name(list[i]));
		if (!ctx && strcmp(ibv_get_device_name(list[i]), rl_test_device()) == 0)
			ctx = ibv_open_device(list[i]);
	}
	rl_say_int("entries", i);
	rl_say_str("names", names);
	/* A list that ends before num may end before list[num] too: read it only after num devices. */
	if (num > 0 && i == num)
		rl_say_int("device_at_num", list[num] != NULL);
	rl_hold();
	if (ctx)
		ibv_close_device(ctx);
	ibv_free_device_list(list);
}

/* Whether the act's list is the devices in /sys/class/infiniband, num of them; else fails. */
static bool lists_the_sysfs_devices(struct rl_case *c)
{
	char names[REF_MAX_DEVICES][REF_NAME_LEN];
	int i, n = ref_sysfs_devices(names, REF_MAX_DEVICES);
	long long num = rl_said_int(c, "num");

	if (!rl_expect(c, rl_said_int(c, "list"),
		       "expected a list of %d device(s), got NULL (num %lld): the verb writes the "
		       "list's length through its argument, see docs/lab0.md#step-1",
		       n, num) ||
	    !rl_expect(c, num == n,
		       "expected num = %d, the devices in /sys/class/infiniband, got %lld; see "
		       "docs/lab0.md#step-1",
		       n, num))
		return false;
	for (i = 0; i < n; i++)
		if (!rl_expect(c, ref_has_line(rl_said_str(c, "names"), names[i]),
			       "expected %s (from sysfs) in the list, it is not there; see "
			       "docs/lab0.md#step-1",
			       names[i]))
			return false;
	return true;
}

static void lists_every_sysfs_device(struct rl_case *c)
{
	const char *dev = rl_test_device();
	char on[256];
	bool found;
	int held;

	if (!lists_the_sysfs_devices(c))
		return;
	found = contexts_on(c, dev, on, sizeof(on), &held);
	if (held >= 0)
		rl_expect(
			c, found,
			"expected %s in the list to be a device that opens, the kernel shows no "
			"context on it (the test's contexts: %s): is each entry a device the verb "
			"gave? See docs/lab0.md#step-1",
			dev, held ? on : "none");
}

RL_GRADED(device_list_names_every_device_in_sysfs, .step = 1, .points = 3, .act = list_devices,
	  .check = lists_every_sysfs_device);

/* Only a list of the devices, num of them, ends where they do: a made-up num proves nothing. */
static void ends_with_null(struct rl_case *c)
{
	long long num = rl_said_int(c, "num"), entries;

	if (!lists_the_sysfs_devices(c) ||
	    !rl_expect(c, num > 0, "expected at least one device, got num = %lld", num))
		return;
	entries = rl_said_int(c, "entries");
	if (rl_expect(c, entries == num,
		      "expected %lld device(s) before list[%lld], got NULL at list[%lld]; see "
		      "docs/lab0.md#step-1",
		      num, num, entries))
		rl_expect(c, !rl_said_int(c, "device_at_num"),
			  "expected list[%lld] == NULL, got a device: num counts the devices, not "
			  "the NULL after them; see docs/lab0.md#step-1",
			  num);
}

RL_GRADED(device_list_ends_with_null_after_num_entries, .step = 1, .points = 1, .act = list_devices,
	  .check = ends_with_null);

/* Step 2 */

/*
 * The buffers the act gives lab0_describe_device: always one of 256 bytes;
 * with SHORT_LEN set, also one of that many, before the other when
 * SHORT_FIRST (so the order of the calls tells the code nothing), and then
 * two cut to the line the 256 bytes got: exactly its length (no room for
 * its NUL) and its length plus one.
 */
struct describe_in {
	size_t short_len;
	bool short_first;
};

/*
 * Calls lab0_describe_device on DEV with LEN bytes; says (PREFIX) what it
 * returned and wrote. Returns the length of what it wrote.
 */
static size_t say_description(struct ibv_device *dev, size_t len, const char *prefix)
{
	char *line = calloc(1, len + 1); /* line[len] stays NUL, whatever the code writes */
	char name[64];
	size_t n;

	ck_assert_msg(line, "expected %zu bytes for the line, got none", len + 1);
	snprintf(name, sizeof(name), "%sret", prefix);
	rl_say_int(name, lab0_describe_device(dev, line, len));
	snprintf(name, sizeof(name), "%sline", prefix);
	rl_say_str(name, line);
	n = strlen(line);
	free(line);
	return n;
}

/* Describes the environment's device with the lab's code, in the buffers the setup says. */
static void describe(struct rl_case *c)
{
	const struct describe_in *in = c->in;
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_device *dev;
	size_t n;

	ck_assert_msg(list, "expected a device list from ibv_get_device_list, got NULL");
	dev = ref_find(list, rl_test_device());
	if (in->short_len && in->short_first)
		say_description(dev, in->short_len, "short_");
	n = say_description(dev, 256, "");
	if (in->short_len && !in->short_first)
		say_description(dev, in->short_len, "short_");
	if (in->short_len && n > 0) {
		say_description(dev, n, "exact_");
		say_description(dev, n + 1, "fits_");
	}
	ibv_free_device_list(list);
}

/* The line the act said, once lab0_describe_device returned 0; NULL (the test failed) otherwise. */
static const char *described_line(struct rl_case *c)
{
	long long ret = rl_said_int(c, "ret");

	if (!rl_expect(
		    c, ret == 0,
		    "expected lab0_describe_device to return 0, got %lld (%s); see docs/lab0.md#step-2",
		    ret, strerror((int)-ret)))
		return NULL;
	return rl_said_str(c, "line");
}

/* Whether LINE starts with the device's name; the test fails otherwise. */
static bool names_the_device(struct rl_case *c, const char *line)
{
	const char *dev = rl_test_device();

	return rl_expect(c, strncmp(line, dev, strlen(dev)) == 0,
			 "expected a line starting with %s, got \"%s\"; see docs/lab0.md#step-2",
			 dev, line);
}

/* Whether LINE holds the device's GUID as sysfs writes it; the test fails otherwise. */
static bool shows_the_guid(struct rl_case *c, const char *line)
{
	char guid[64];

	ck_assert_int_eq(ref_sysfs(rl_test_device(), "node_guid", guid, sizeof(guid)), 0);
	return rl_expect(c, strstr(line, guid),
			 "expected the GUID %s (sysfs node_guid) in the line, got \"%s\": in what "
			 "order does ibv_get_device_guid give its bytes? See docs/lab0.md#step-2",
			 guid, line);
}

static void starts_with_the_name(struct rl_case *c)
{
	const char *line = described_line(c);

	if (line)
		names_the_device(c, line);
}

RL_GRADED(device_line_starts_with_the_device_name, .step = 2, .points = 1, .act = describe,
	  .check = starts_with_the_name);

static void shows_the_sysfs_guid(struct rl_case *c)
{
	const char *line = described_line(c);

	if (line)
		shows_the_guid(c, line);
}

RL_GRADED(device_line_shows_the_guid_sysfs_reports, .step = 2, .points = 2, .act = describe,
	  .check = shows_the_sysfs_guid);

static void shows_the_sysfs_node_type(struct rl_case *c)
{
	const char *want, *line = described_line(c);
	char type[64];

	if (!line)
		return;
	ck_assert_int_eq(ref_sysfs(rl_test_device(), "node_type", type, sizeof(type)), 0);
	want = ibv_node_type_str(atoi(type)); /* sysfs: "1: CA" */
	rl_expect(
		c, strstr(line, want),
		"expected \"%s\" (sysfs node_type %s) in the line, got \"%s\"; see docs/lab0.md#step-2",
		want, type, line);
}

RL_GRADED(device_line_shows_the_node_type_sysfs_reports, .step = 2, .points = 1, .act = describe,
	  .check = shows_the_sysfs_node_type);

static void shows_the_devinfo_transport(struct rl_case *c)
{
	const char *line = described_line(c);
	char transport[64];

	if (!line)
		return;
	ck_assert_msg(ref_devinfo(rl_test_device(), 0, "transport", transport, sizeof(transport)) ==
			      0,
		      "expected ibv_devinfo to print a transport: line, it did not");
	transport[strcspn(transport, " ")] = '\0'; /* "InfiniBand (0)" */
	rl_expect(
		c, strstr(line, transport),
		"expected \"%s\" (ibv_devinfo transport) in the line, got \"%s\"; see docs/lab0.md#step-2",
		transport, line);
}

RL_GRADED(device_line_shows_the_transport_ibv_devinfo_reports, .step = 2, .points = 1,
	  .act = describe, .check = shows_the_devinfo_transport);

/*
 * A buffer too short for any right line, of a size drawn for this run:
 * every right line holds the device's name and its 19-character GUID. The
 * act also describes the device in a buffer that is long enough, first or
 * second as drawn too: refusing every buffer is no answer.
 */
static void too_short_a_buffer(struct rl_case *c)
{
	struct describe_in *in = c->in;

	in->short_len = 1 + ref_random_below((unsigned)strlen(rl_test_device()) + 19);
	in->short_first = ref_random_below(2);
}

static void refused_with_enospc(struct rl_case *c)
{
	const struct describe_in *in = c->in;
	long long ret = rl_said_int(c, "short_ret");
	const char *line;

	size_t n;

	if (!rl_expect(
		    c, ret == -ENOSPC,
		    "expected -ENOSPC for a %zu-byte buffer, got %lld (%s); see docs/lab0.md#step-2",
		    in->short_len, ret, strerror((int)-ret)))
		return;
	line = described_line(c);
	if (!line || !names_the_device(c, line) || !shows_the_guid(c, line))
		return;
	n = strlen(line);
	ret = rl_said_int(c, "exact_ret");
	if (rl_expect(c, ret == -ENOSPC,
		      "expected -ENOSPC for a buffer of exactly the line's %zu characters (no room "
		      "for its NUL), got %lld: what does snprintf's return count? See "
		      "docs/lab0.md#step-2",
		      n, ret))
		rl_expect(c, rl_said_int(c, "fits_ret") == 0,
			  "expected 0 for a buffer of the line's %zu characters and its NUL, got "
			  "%lld; see docs/lab0.md#step-2",
			  n, rl_said_int(c, "fits_ret"));
}

RL_GRADED(device_line_too_long_for_the_buffer_is_refused, .step = 2, .points = 1,
	  .setup = too_short_a_buffer, .act = describe, .check = refused_with_enospc);

/* Step 3 */

/* One call of lab0_open_device: NAME ("": NULL), with RDMALAB_DEVICE set to ENV ("": unset). */
struct open_call {
	char name[REF_NAME_LEN];
	char env[REF_NAME_LEN];
	bool env_empty; /* RDMALAB_DEVICE set, to "" */
};

/* The calls of a test: FIRST (closed again) when it has a name or an environment (empty too), then THEN. */
struct open_in {
	struct open_call first;
	struct open_call then;
};

/* A name no device has, new on every run ("no-such-" and letters). */
static void unknown_name(char name[REF_NAME_LEN])
{
	strcpy(name, "no-such-");
	rl_test_random_text(name + 8, 17);
}

/* Calls lab0_open_device as CALL says; says whether a context came (PREFIX "opened") and its device's name. */
static struct ibv_context *open_as_told(const struct open_call *call, const char *prefix,
					struct ibv_device ***list)
{
	struct ibv_context *ctx;
	char said[64];
	int num;

	*list = ibv_get_device_list(&num);
	ck_assert_msg(*list, "expected a device list from ibv_get_device_list, got NULL");
	if (call->env[0] || call->env_empty)
		setenv("RDMALAB_DEVICE", call->env, 1);
	else
		unsetenv("RDMALAB_DEVICE");
	ctx = lab0_open_device(*list, num, call->name[0] ? call->name : NULL);
	snprintf(said, sizeof(said), "%sopened", prefix);
	rl_say_int(said, ctx != NULL);
	snprintf(said, sizeof(said), "%sdevice", prefix);
	rl_say_str(said, ctx ? ibv_get_device_name(ctx->device) : "");
	return ctx;
}

/*
 * Opens as the test's calls say, and holds the last context open while the
 * check asks the kernel which contexts this process has.
 */
static void open_and_hold(struct rl_case *c)
{
	const struct open_in *in = c->in;
	struct ibv_device **list;
	struct ibv_context *ctx;

	if (in->first.name[0] || in->first.env[0] || in->first.env_empty) {
		ctx = open_as_told(&in->first, "first_", &list);
		if (ctx)
			ibv_close_device(ctx);
		ibv_free_device_list(list);
	}
	ctx = open_as_told(&in->then, "", &list);
	rl_hold();
	if (ctx)
		ibv_close_device(ctx);
	ibv_free_device_list(list);
}

/* The act's context is on WANT, as it says and as the kernel says. */
static void expect_opened(struct rl_case *c, const char *want)
{
	const char *got = rl_said_str(c, "device");
	char on[256];
	bool found;
	int n;

	if (!rl_expect(c, rl_said_int(c, "opened"),
		       "expected a context for %s, got NULL; see docs/lab0.md#step-3", want) ||
	    !rl_expect(c, strcmp(got, want) == 0,
		       "expected %s open, got %s: which source names the device first? See "
		       "docs/lab0.md#step-3",
		       want, got))
		return;
	found = contexts_on(c, want, on, sizeof(on), &n);
	if (n >= 0)
		rl_expect(
			c, found,
			"expected the kernel to show a context on %s held by the test, it shows %s",
			want, n ? on : "none");
}

/*
 * The name of the last device of the list into NAME: where there are two
 * or more (the kit's guests have rxe0 and siw0), not the first, so that
 * code which ignores where the name comes from opens another device.
 */
static void last_device(char name[REF_NAME_LEN])
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	int i;

	ck_assert_msg(list && list[0], "expected a device from ibv_get_device_list, got none");
	for (i = 0; list[i + 1]; i++)
		;
	snprintf(name, REF_NAME_LEN, "%s", ibv_get_device_name(list[i]));
	ibv_free_device_list(list);
}

/* By name, with RDMALAB_DEVICE naming no device: the name wins. */
static void name_and_a_wrong_environment(struct rl_case *c)
{
	struct open_in *in = c->in;

	last_device(in->then.name);
	unknown_name(in->then.env);
}

static void opened_the_named_device(struct rl_case *c)
{
	const struct open_in *in = c->in;

	expect_opened(c, in->then.name);
}

RL_GRADED(opening_by_name_gives_that_device, .step = 3, .points = 2,
	  .setup = name_and_a_wrong_environment, .act = open_and_hold,
	  .check = opened_the_named_device);

static void environment_only(struct rl_case *c)
{
	struct open_in *in = c->in;

	last_device(in->then.env);
}

static void opened_the_environments_device(struct rl_case *c)
{
	const struct open_in *in = c->in;

	expect_opened(c, in->then.env);
}

RL_GRADED(opening_without_a_name_uses_RDMALAB_DEVICE, .step = 3, .points = 2,
	  .setup = environment_only, .act = open_and_hold, .check = opened_the_environments_device);

/* First with RDMALAB_DEVICE set but empty (a shell's VAR=), then unset. */
static void an_empty_then_no_environment(struct rl_case *c)
{
	struct open_in *in = c->in;

	in->first.env_empty = true;
}

/* The first device of the list, as libibverbs gives it to this process, both times. */
static void opened_the_first_device(struct rl_case *c)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	char first[REF_NAME_LEN];
	const char *got = rl_said_str(c, "first_device");

	ck_assert_msg(list && list[0], "expected a device from ibv_get_device_list, got none");
	snprintf(first, sizeof(first), "%s", ibv_get_device_name(list[0]));
	ibv_free_device_list(list);
	if (rl_expect(c, rl_said_int(c, "first_opened") && strcmp(got, first) == 0,
		      "expected %s, the first device, with RDMALAB_DEVICE set but empty, got %s: "
		      "what does an empty variable name? See docs/lab0.md#step-3",
		      first, rl_said_int(c, "first_opened") ? got : "NULL"))
		expect_opened(c, first);
}

RL_GRADED(opening_without_a_name_or_RDMALAB_DEVICE_gives_the_first_device, .step = 3, .points = 1,
	  .setup = an_empty_then_no_environment, .act = open_and_hold,
	  .check = opened_the_first_device);

/* First the right name (it must open), then one no device has, RDMALAB_DEVICE set. */
static void a_name_then_an_unknown_one(struct rl_case *c)
{
	struct open_in *in = c->in;

	snprintf(in->first.name, sizeof(in->first.name), "%s", rl_test_device());
	unknown_name(in->then.name);
	snprintf(in->then.env, sizeof(in->then.env), "%s", rl_test_device());
}

static void refused_without_a_context(struct rl_case *c)
{
	const struct open_in *in = c->in;
	const char *dev = rl_test_device();
	char on[256];
	int n;

	if (!rl_expect(c, rl_said_int(c, "first_opened"),
		       "expected a context for %s first, got NULL", dev) ||
	    !rl_expect(c, !rl_said_int(c, "opened"),
		       "expected NULL for %s, got a context for %s: a name no device has is the "
		       "caller's mistake, not a reason to open another; see docs/lab0.md#step-3",
		       in->then.name, rl_said_str(c, "device")))
		return;
	contexts_on(c, dev, on, sizeof(on), &n);
	if (n >= 0)
		rl_expect(c, n == 0,
			  "expected no context open after NULL for %s, the kernel shows %d (on %s)",
			  in->then.name, n, on);
}

RL_GRADED(opening_an_unknown_name_fails_without_a_context, .step = 3, .points = 1,
	  .setup = a_name_then_an_unknown_one, .act = open_and_hold,
	  .check = refused_without_a_context);
