/* test_fw_args.c: the common options parse, fall back to the environment, and reject nonsense. */
#include <string.h>

#include "../harness.h"
#include "rdmalab.h"

/* A fake environment: NAME=VALUE pairs a test sets before parsing. */
static const char *fake_env_vars[8][2];

static char *fake_env(const char *name)
{
	size_t i;

	for (i = 0; i < 8 && fake_env_vars[i][0]; i++) {
		if (!strcmp(fake_env_vars[i][0], name))
			return (char *)fake_env_vars[i][1];
	}
	return NULL;
}

static void set_env(const char *name, const char *value)
{
	size_t i;

	for (i = 0; i < 7 && fake_env_vars[i][0]; i++)
		;
	fake_env_vars[i][0] = name;
	fake_env_vars[i][1] = value;
}

static void clear_env(void)
{
	memset(fake_env_vars, 0, sizeof(fake_env_vars));
}

/* Parse a NULL-terminated list of arguments with the fake environment. */
#define PARSE(a, ...)                                                                              \
	({                                                                                         \
		char *argv_[] = { "/usr/bin/lab1", __VA_ARGS__, NULL };                            \
		rl_parse_args_env((int)(sizeof(argv_) / sizeof(argv_[0])) - 1, argv_, fake_env,    \
				  (a));                                                            \
	})

START_TEST(test_args_defaults_without_flags_or_env)
{
	char *argv[] = { "/usr/bin/lab1", NULL };
	struct rl_args a;
	int ret = rl_parse_args_env(1, argv, fake_env, &a);

	ck_assert_msg(ret == 0, "expected 0, got %d", ret);
	ck_assert_msg(!strcmp(a.prog, "lab1"), "prog: expected lab1, got %s", a.prog);
	ck_assert_msg(a.dev == NULL, "dev: expected NULL, got %s", a.dev);
	ck_assert_msg(a.gid_index == -1, "gid_index: expected -1, got %d", a.gid_index);
	ck_assert_msg(a.ib_port == 1, "ib_port: expected 1, got %d", a.ib_port);
	ck_assert_msg(a.port == RL_DEFAULT_PORT, "port: expected %d, got %u", RL_DEFAULT_PORT,
		      a.port);
	ck_assert_msg(a.addr == NULL, "addr: expected NULL, got %s", a.addr);
	ck_assert_msg(a.verbose == 0 && !a.help, "expected quiet and no help");
}
END_TEST

START_TEST(test_args_parses_short_and_long_flags)
{
	struct rl_args a;
	int ret = PARSE(&a, "-d", "rxe0", "--gid-index", "3", "-p7000", "--ib-port=2", "-vv",
			"10.0.0.1", "extra");

	ck_assert_msg(ret == 0, "expected 0, got %d", ret);
	ck_assert_msg(a.dev && !strcmp(a.dev, "rxe0"), "dev: expected rxe0, got %s", a.dev);
	ck_assert_msg(a.gid_index == 3, "gid_index: expected 3, got %d", a.gid_index);
	ck_assert_msg(a.port == 7000, "port: expected 7000, got %u", a.port);
	ck_assert_msg(a.ib_port == 2, "ib_port: expected 2, got %d", a.ib_port);
	ck_assert_msg(a.verbose == 2, "verbose: expected 2, got %d", a.verbose);
	ck_assert_msg(a.addr && !strcmp(a.addr, "10.0.0.1"), "addr: expected 10.0.0.1, got %s",
		      a.addr);
	ck_assert_msg(a.nrest == 1 && !strcmp(a.rest[0], "extra"),
		      "rest: expected [extra], got %d operands", a.nrest);
}
END_TEST

START_TEST(test_args_counts_repeated_v_flags)
{
	struct rl_args a;
	int ret = PARSE(&a, "-v", "--verbose", "-v");

	ck_assert_int_eq(ret, 0);
	ck_assert_msg(a.verbose == 3, "verbose: expected 3, got %d", a.verbose);
}
END_TEST

START_TEST(test_args_takes_env_fallbacks)
{
	struct rl_args a;
	int ret;

	clear_env();
	set_env("RDMALAB_DEVICE", "mlx5_0");
	set_env("RDMALAB_GID_INDEX", "1");
	set_env("RDMALAB_ADDR", "10.211.0.1");
	set_env("RDMALAB_VERBOSE", "debug");
	ret = PARSE(&a, "-p", "9000");
	clear_env();

	ck_assert_msg(ret == 0, "expected 0, got %d", ret);
	ck_assert_msg(a.dev && !strcmp(a.dev, "mlx5_0"), "dev: expected mlx5_0, got %s", a.dev);
	ck_assert_msg(a.gid_index == 1, "gid_index: expected 1, got %d", a.gid_index);
	ck_assert_msg(a.addr && !strcmp(a.addr, "10.211.0.1"), "addr: expected 10.211.0.1, got %s",
		      a.addr);
	ck_assert_msg(a.verbose == RL_LOG_DEBUG, "verbose: expected 2, got %d", a.verbose);
	ck_assert_msg(!a.addr_given, "addr_given: expected false for RDMALAB_ADDR, got true");
}
END_TEST

START_TEST(test_args_flags_override_env)
{
	struct rl_args a;
	int ret;

	clear_env();
	set_env("RDMALAB_DEVICE", "mlx5_0");
	set_env("RDMALAB_GID_INDEX", "1");
	set_env("RDMALAB_ADDR", "10.211.0.1");
	ret = PARSE(&a, "--dev=rxe0", "-g", "0", "192.168.0.9");
	clear_env();

	ck_assert_msg(ret == 0, "expected 0, got %d", ret);
	ck_assert_msg(!strcmp(a.dev, "rxe0"), "dev: expected rxe0, got %s", a.dev);
	ck_assert_msg(a.gid_index == 0, "gid_index: expected 0, got %d", a.gid_index);
	ck_assert_msg(!strcmp(a.addr, "192.168.0.9"), "addr: expected 192.168.0.9, got %s", a.addr);
	ck_assert_msg(a.addr_given, "addr_given: expected true for an operand, got false");
}
END_TEST

START_TEST(test_args_rejects_non_numeric_gid_index)
{
	struct rl_args a;
	int ret = PARSE(&a, "-g", "one");

	ck_assert_msg(ret == -EINVAL, "expected -EINVAL, got %d", ret);
}
END_TEST

START_TEST(test_args_rejects_out_of_range_values)
{
	struct rl_args a;
	int ret;

	ret = PARSE(&a, "--gid-index", "256");
	ck_assert_msg(ret == -EINVAL, "gid index 256: expected -EINVAL, got %d", ret);
	ret = PARSE(&a, "-p", "0");
	ck_assert_msg(ret == -EINVAL, "port 0: expected -EINVAL, got %d", ret);
	ret = PARSE(&a, "-p", "65536");
	ck_assert_msg(ret == -EINVAL, "port 65536: expected -EINVAL, got %d", ret);
	ret = PARSE(&a, "-p", "-1");
	ck_assert_msg(ret == -EINVAL, "port -1: expected -EINVAL, got %d", ret);
	ret = PARSE(&a, "-p", "70x");
	ck_assert_msg(ret == -EINVAL, "port 70x: expected -EINVAL, got %d", ret);
}
END_TEST

START_TEST(test_args_rejects_flag_without_value)
{
	struct rl_args a;
	int ret = PARSE(&a, "-d");

	ck_assert_msg(ret == -EINVAL, "expected -EINVAL, got %d", ret);
	ret = PARSE(&a, "--dev=");
	ck_assert_msg(ret == -EINVAL, "empty --dev=: expected -EINVAL, got %d", ret);
}
END_TEST

START_TEST(test_args_rejects_unknown_option)
{
	struct rl_args a;
	int ret = PARSE(&a, "--fast");

	ck_assert_msg(ret == -EINVAL, "expected -EINVAL, got %d", ret);
	ret = PARSE(&a, "-x");
	ck_assert_msg(ret == -EINVAL, "-x: expected -EINVAL, got %d", ret);
	ret = PARSE(&a, "--device", "rxe0"); /* a prefix of nothing: --dev is the name */
	ck_assert_msg(ret == -EINVAL, "--device: expected -EINVAL, got %d", ret);
}
END_TEST

START_TEST(test_args_rejects_bad_env_gid_index)
{
	struct rl_args a;
	int ret;

	clear_env();
	set_env("RDMALAB_GID_INDEX", "auto");
	ret = PARSE(&a, "-v");
	clear_env();
	ck_assert_msg(ret == -EINVAL, "expected -EINVAL, got %d", ret);
}
END_TEST

START_TEST(test_args_sets_help_and_stops_options_at_double_dash)
{
	struct rl_args a;
	int ret = PARSE(&a, "-h", "--", "-not-an-option");

	ck_assert_int_eq(ret, 0);
	ck_assert_msg(a.help, "expected help to be set");
	ck_assert_msg(a.addr && !strcmp(a.addr, "-not-an-option"),
		      "addr: expected -not-an-option, got %s", a.addr);
}
END_TEST

START_TEST(test_usage_lists_every_common_option)
{
	static const char *const flags[] = { "--dev",  "--gid-index", "--ib-port",
					     "--port", "-v",          "--help" };
	char text[2048] = "";
	FILE *f = fmemopen(text, sizeof(text) - 1, "w");
	size_t i;

	ck_assert_ptr_nonnull(f);
	rl_usage(f, "lab1", "[SERVER]");
	fclose(f);
	ck_assert_msg(strstr(text, "usage: lab1 [options] [SERVER]"),
		      "expected the usage line, got: %s", text);
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		ck_assert_msg(strstr(text, flags[i]), "expected %s in the usage text", flags[i]);
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("framework args");
	TCase *tc = tcase_create("args");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_UNIT);
	tcase_add_checked_fixture(tc, clear_env, clear_env);
	tcase_add_test(tc, test_args_defaults_without_flags_or_env);
	tcase_add_test(tc, test_args_parses_short_and_long_flags);
	tcase_add_test(tc, test_args_counts_repeated_v_flags);
	tcase_add_test(tc, test_args_takes_env_fallbacks);
	tcase_add_test(tc, test_args_flags_override_env);
	tcase_add_test(tc, test_args_rejects_non_numeric_gid_index);
	tcase_add_test(tc, test_args_rejects_out_of_range_values);
	tcase_add_test(tc, test_args_rejects_flag_without_value);
	tcase_add_test(tc, test_args_rejects_unknown_option);
	tcase_add_test(tc, test_args_rejects_bad_env_gid_index);
	tcase_add_test(tc, test_args_sets_help_and_stops_options_at_double_dash);
	tcase_add_test(tc, test_usage_lists_every_common_option);
	suite_add_tcase(s, tc);
	return s;
}
