/* test_fw_device.c: the device opener and GID chooser agree with the environment. */
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "rdmalab.h"

START_TEST(test_open_device_by_name_gives_that_device)
{
	const char *name = rl_test_device();
	struct ibv_context *ctx = rl_open_device(name);

	ck_assert_msg(ctx, "expected to open %s (see stderr)", name);
	ck_assert_msg(!strcmp(ibv_get_device_name(ctx->device), name), "expected %s, got %s", name,
		      ibv_get_device_name(ctx->device));
	ibv_close_device(ctx);
}
END_TEST

START_TEST(test_open_device_without_name_finds_an_active_one)
{
	const char *name = rl_test_device();
	struct ibv_context *ctx;

	unsetenv("RDMALAB_DEVICE");
	ctx = rl_open_device(NULL);
	setenv("RDMALAB_DEVICE", name, 1);
	ck_assert_msg(ctx, "expected the first active device (see stderr)");
	ibv_close_device(ctx);
}
END_TEST

START_TEST(test_open_device_with_unknown_name_fails)
{
	struct ibv_context *ctx = rl_open_device("no_such_dev9");

	ck_assert_msg(ctx == NULL, "expected NULL for no_such_dev9, got a device");
}
END_TEST

START_TEST(test_gid_picker_agrees_with_environment_script)
{
	/* vm/rdma-env.sh picked RDMALAB_GID_INDEX with the same scoring rule. */
	int expected = rl_test_gid_index();
	struct ibv_context *ctx = rl_open_device(rl_test_device());
	char *saved = strdup(getenv("RDMALAB_GID_INDEX"));
	int got;

	ck_assert_ptr_nonnull(ctx);
	unsetenv("RDMALAB_GID_INDEX");
	got = rl_choose_gid_index(ctx, 1, -1);
	setenv("RDMALAB_GID_INDEX", saved, 1);
	free(saved);
	ibv_close_device(ctx);
	ck_assert_msg(got == expected, "expected GID index %d (as rdma-env.sh chose), got %d",
		      expected, got);
}
END_TEST

START_TEST(test_requested_gid_index_wins)
{
	struct ibv_context *ctx = rl_open_device(rl_test_device());
	int got;

	ck_assert_ptr_nonnull(ctx);
	got = rl_choose_gid_index(ctx, 1, 0);
	ibv_close_device(ctx);
	ck_assert_msg(got == 0, "expected the requested index 0, got %d", got);
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("framework device");
	TCase *tc = tcase_create("device");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_RDMA);
	tcase_add_test(tc, test_open_device_by_name_gives_that_device);
	tcase_add_test(tc, test_open_device_without_name_finds_an_active_one);
	tcase_add_test(tc, test_open_device_with_unknown_name_fails);
	tcase_add_test(tc, test_gid_picker_agrees_with_environment_script);
	tcase_add_test(tc, test_requested_gid_index_wins);
	suite_add_tcase(s, tc);
	return s;
}
