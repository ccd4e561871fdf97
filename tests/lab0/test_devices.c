/* test_devices.c: Lab 0 steps 1 to 3, checked against sysfs and ibv_devinfo. */
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "lab0.h"
#include "reference.h"

/* Step 1 */

RL_TEST(device_list_names_every_device_in_sysfs, .step = 1, .points = 3)
{
	char names[REF_MAX_DEVICES][REF_NAME_LEN];
	int i, j, num = -1, n = ref_sysfs_devices(names, REF_MAX_DEVICES);
	struct ibv_device **list = lab0_get_devices(&num);

	ck_assert_msg(list, "expected a list of %d device(s), got NULL", n);
	ck_assert_msg(num == n, "expected %d device(s) as in /sys/class/infiniband, got %d", n,
		      num);
	for (i = 0; i < n; i++) {
		for (j = 0; j < num; j++)
			if (strcmp(ibv_get_device_name(list[j]), names[i]) == 0)
				break;
		ck_assert_msg(j < num, "expected %s (from sysfs) in the list, it is not there",
			      names[i]);
	}
	ibv_free_device_list(list);
}
END_TEST

RL_TEST(device_list_ends_with_null_after_num_entries, .step = 1, .points = 1)
{
	int num = -1;
	struct ibv_device **list = lab0_get_devices(&num);

	ck_assert_msg(list, "expected a device list, got NULL");
	ck_assert_msg(num > 0, "expected at least one device, got num = %d", num);
	ck_assert_msg(list[num] == NULL, "expected list[%d] == NULL, got a device", num);
	ibv_free_device_list(list);
}
END_TEST

/* Step 2 */

/* Describe the device the environment names with the lab's code, into LINE. */
static void describe(char *line, size_t len)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	int ret;

	ck_assert_msg(list, "expected a device list from ibv_get_device_list, got NULL");
	ret = lab0_describe_device(ref_find(list, rl_test_device()), line, len);
	ck_assert_msg(ret == 0, "expected lab0_describe_device to return 0, got %d (%s)", ret,
		      strerror(-ret));
	ibv_free_device_list(list);
}

RL_TEST(device_line_starts_with_the_device_name, .step = 2, .points = 1)
{
	const char *dev = rl_test_device();
	char line[256] = "";

	describe(line, sizeof(line));
	ck_assert_msg(strncmp(line, dev, strlen(dev)) == 0,
		      "expected a line starting with %s, got \"%s\"", dev, line);
}
END_TEST

RL_TEST(device_line_shows_the_guid_sysfs_reports, .step = 2, .points = 2)
{
	char line[256] = "", guid[64];

	ck_assert_int_eq(ref_sysfs(rl_test_device(), "node_guid", guid, sizeof(guid)), 0);
	describe(line, sizeof(line));
	ck_assert_msg(strstr(line, guid),
		      "expected the GUID %s (sysfs node_guid) in the line, got \"%s\"", guid, line);
}
END_TEST

RL_TEST(device_line_shows_the_node_type_sysfs_reports, .step = 2, .points = 1)
{
	char line[256] = "", type[64];
	const char *want;

	ck_assert_int_eq(ref_sysfs(rl_test_device(), "node_type", type, sizeof(type)), 0);
	want = ibv_node_type_str(atoi(type));
	describe(line, sizeof(line));
	ck_assert_msg(strstr(line, want),
		      "expected \"%s\" (sysfs node_type %s) in the line, got \"%s\"", want, type,
		      line);
}
END_TEST

RL_TEST(device_line_shows_the_transport_ibv_devinfo_reports, .step = 2, .points = 1)
{
	char line[256] = "", transport[64];

	ck_assert_msg(ref_devinfo(rl_test_device(), 0, "transport", transport, sizeof(transport)) ==
			      0,
		      "expected ibv_devinfo to print a transport: line, it did not");
	transport[strcspn(transport, " ")] = '\0'; /* "InfiniBand (0)" */
	describe(line, sizeof(line));
	ck_assert_msg(strstr(line, transport),
		      "expected \"%s\" (ibv_devinfo transport) in the line, got \"%s\"", transport,
		      line);
}
END_TEST

RL_TEST(device_line_too_long_for_the_buffer_is_refused, .step = 2, .points = 1)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	char line[8];
	int ret;

	ck_assert_msg(list, "expected a device list from ibv_get_device_list, got NULL");
	ret = lab0_describe_device(ref_find(list, rl_test_device()), line, sizeof(line));
	ck_assert_msg(ret == -ENOSPC, "expected -ENOSPC for an 8-byte buffer, got %d (%s)", ret,
		      strerror(-ret));
	ibv_free_device_list(list);
}
END_TEST

/* Step 3 */

/* Open with the lab's code: by NAME, or with NAME NULL and RDMALAB_DEVICE set to ENV. */
static struct ibv_context *open_with(const char *name, const char *env, struct ibv_device ***list)
{
	int num;

	*list = ibv_get_device_list(&num);
	ck_assert_msg(*list, "expected a device list from ibv_get_device_list, got NULL");
	if (env)
		setenv("RDMALAB_DEVICE", env, 1);
	else
		unsetenv("RDMALAB_DEVICE");
	return lab0_open_device(*list, num, name);
}

static void expect_opened(struct ibv_context *ctx, const char *want, struct ibv_device **list)
{
	ck_assert_msg(ctx, "expected a context for %s, got NULL", want);
	ck_assert_msg(strcmp(ibv_get_device_name(ctx->device), want) == 0,
		      "expected %s open, got %s", want, ibv_get_device_name(ctx->device));
	ibv_close_device(ctx);
	ibv_free_device_list(list);
}

RL_TEST(opening_by_name_gives_that_device, .step = 3, .points = 2)
{
	const char *dev = rl_test_device();
	struct ibv_device **list;
	struct ibv_context *ctx = open_with(dev, "no-such-device", &list);

	expect_opened(ctx, dev, list);
}
END_TEST

RL_TEST(opening_without_a_name_uses_RDMALAB_DEVICE, .step = 3, .points = 2)
{
	const char *dev = rl_test_device();
	struct ibv_device **list;
	struct ibv_context *ctx = open_with(NULL, dev, &list);

	expect_opened(ctx, dev, list);
}
END_TEST

RL_TEST(opening_without_a_name_or_RDMALAB_DEVICE_gives_the_first_device, .step = 3, .points = 1)
{
	struct ibv_device **list;
	struct ibv_context *ctx = open_with(NULL, NULL, &list);

	expect_opened(ctx, ibv_get_device_name(list[0]), list);
}
END_TEST

RL_TEST(opening_an_unknown_name_fails_without_a_context, .step = 3, .points = 1)
{
	const char *dev = rl_test_device();
	struct ibv_device **list;
	struct ibv_context *ctx = open_with(dev, NULL, &list);

	ck_assert_msg(ctx, "expected a context for %s first, got NULL", dev);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	ctx = open_with("no-such-device", dev, &list);
	ck_assert_msg(!ctx, "expected NULL for no-such-device, got a context for %s",
		      ctx ? ibv_get_device_name(ctx->device) : "");
	ibv_free_device_list(list);
}
END_TEST
