/* test_receiver_config.c: the receiver's options parse, keep their limits, and refuse nonsense. */
#include <errno.h>
#include <string.h>

#include "../harness.h"
#include "receiver.h"

/* An empty environment, so RDMALAB_* on the test machine changes nothing. */
static char *no_env(const char *name)
{
	(void)name;
	return NULL;
}

/* Parse a NULL-terminated argument list into CFG. */
#define PARSE(cfg, ...)                                                                            \
	({                                                                                         \
		char *argv_[] = { "/usr/bin/rdmalab-receiver", __VA_ARGS__, NULL };                \
		rcv_parse_args((int)(sizeof(argv_) / sizeof(argv_[0])) - 1, argv_, no_env, (cfg)); \
	})

START_TEST(test_defaults_need_only_a_secret)
{
	struct rcv_config c;
	int ret = PARSE(&c, "--secret-file", "/etc/rdmalab/secret");

	ck_assert_msg(ret == 0, "expected 0, got %d", ret);
	ck_assert_str_eq(c.secret_file, "/etc/rdmalab/secret");
	ck_assert_int_eq(c.max_conns, 64);
	ck_assert_msg(c.max_file == 64ULL << 20, "max_file: expected 64 MiB, got %llu",
		      (unsigned long long)c.max_file);
	ck_assert_msg(c.max_window == 1ULL << 20, "max_window: expected 1 MiB");
	ck_assert_msg(c.mem_budget == 256ULL << 20, "mem_budget: expected 256 MiB");
	ck_assert_int_eq(c.idle_timeout_ms, 30000);
	ck_assert_str_eq(c.results_path, "rdmalab-results.jsonl");
	ck_assert_int_eq(c.common.port, RL_DEFAULT_PORT);
	ck_assert_ptr_null(c.common.addr);
	ck_assert_msg(!c.faults.bad_hash && !c.faults.delay_step && !c.faults.drop_steps &&
			      !c.faults.window,
		      "expected every fault knob off by default");
}
END_TEST

START_TEST(test_every_option_is_read_with_either_spelling)
{
	struct rcv_config c;
	int ret = PARSE(&c, "--self-study", "--max-conns=8", "--max-file-size", "2G",
			"--max-window=64K", "--mem-budget", "1M", "--idle-timeout", "500ms",
			"--results=/tmp/r.jsonl", "-p", "9000", "-v", "--fault-bad-hash",
			"--fault-delay", "5:200", "--fault-drop=4", "--fault-window", "1000",
			"10.0.0.1");

	ck_assert_msg(ret == 0, "expected 0, got %d", ret);
	ck_assert_msg(c.self_study, "expected --self-study");
	ck_assert_int_eq(c.max_conns, 8);
	ck_assert_msg(c.max_file == 2ULL << 30, "expected 2 GiB");
	ck_assert_msg(c.max_window == 64 * 1024, "expected 64 KiB");
	ck_assert_msg(c.mem_budget == 1 << 20, "expected 1 MiB");
	ck_assert_int_eq(c.idle_timeout_ms, 500);
	ck_assert_str_eq(c.results_path, "/tmp/r.jsonl");
	ck_assert_int_eq(c.common.port, 9000);
	ck_assert_int_eq(c.common.verbose, 1);
	ck_assert_str_eq(c.common.addr, "10.0.0.1");
	ck_assert_msg(c.faults.bad_hash, "expected --fault-bad-hash");
	ck_assert_int_eq(c.faults.delay_step, 5);
	ck_assert_int_eq(c.faults.delay_ms, 200);
	ck_assert_int_eq(c.faults.drop_steps, 1);
	ck_assert_int_eq(c.faults.drop_step[0], 4);
	ck_assert_msg(c.faults.window == 1000, "expected a fault window of 1000");
}
END_TEST

START_TEST(test_verify_takes_an_id_and_a_key)
{
	struct rcv_config c;
	int ret = PARSE(&c, "--self-study", "--verify", "s42", "ABCD-EFGH-IJKL-MNOP");

	ck_assert_msg(ret == 0, "expected 0, got %d", ret);
	ck_assert_str_eq(c.verify_id, "s42");
	ck_assert_str_eq(c.verify_key, "ABCD-EFGH-IJKL-MNOP");
	ck_assert_int_eq(PARSE(&c, "--self-study", "--verify", "s42"), -EINVAL);
}
END_TEST

START_TEST(test_class_options_are_read)
{
	struct rcv_config c;
	int ret = PARSE(&c, "--secret-file", "s", "--tokens");

	ck_assert_msg(ret == 0 && c.tokens, "--tokens: expected class mode, got %d", ret);
	ret = PARSE(&c, "--secret-file", "s", "--verify-file", "keys.csv");
	ck_assert_msg(ret == 0 && c.verify_file && !strcmp(c.verify_file, "keys.csv"),
		      "--verify-file: expected keys.csv, got %d", ret);
	ret = PARSE(&c, "--self-study", "--make-tokens=roster.csv");
	ck_assert_msg(ret == 0 && c.make_tokens && !strcmp(c.make_tokens, "roster.csv"),
		      "--make-tokens: expected roster.csv, got %d", ret);
	ck_assert_msg(PARSE(&c, "--self-study") == 0 && !c.tokens && !c.verify_file &&
			      !c.make_tokens,
		      "expected no class option by default");
	/* One thing to do at a time. */
	ck_assert_int_eq(PARSE(&c, "--self-study", "--verify-file", "k", "--make-tokens", "r"),
			 -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--self-study", "--verify", "s1", "K", "--verify-file", "k"),
			 -EINVAL);
	/* Tokens and keys under a random secret could be checked by nobody. */
	ck_assert_int_eq(PARSE(&c, "--secret-random", "--tokens"), -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--secret-random", "--verify-file", "k"), -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--secret-random", "--make-tokens", "r"), -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--self-study", "--verify-file"), -EINVAL);
}
END_TEST

START_TEST(test_bad_values_and_combinations_are_refused)
{
	struct rcv_config c;

	ck_assert_int_eq(PARSE(&c, "-p", "9000"), -EINVAL); /* no secret */
	ck_assert_int_eq(PARSE(&c, "--self-study", "--secret-file", "x"), -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--secret-random", "--secret-file", "x"), -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--secret-random", "--self-study"), -EINVAL);
	/* A key made under a random secret can be checked by nobody but its receiver. */
	ck_assert_int_eq(PARSE(&c, "--secret-random", "--verify", "s42", "ABCD-EFGH-IJKL-MNOP"),
			 -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--secret-random"), 0);
	ck_assert_msg(c.secret_random && !c.self_study && !c.secret_file,
		      "expected --secret-random alone");
	ck_assert_int_eq(PARSE(&c, "--self-study", "--max-conns", "0"), -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--self-study", "--max-conns", "2000"), -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--self-study", "--max-file-size", "2T"), -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--self-study", "--max-window", "100"), -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--self-study", "--max-window", "2M", "--mem-budget", "1M"),
			 -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--self-study", "--idle-timeout", "0"), -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--self-study", "--idle-timeout", "5m"), -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--self-study", "--fault-delay", "4:100"), -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--self-study", "--fault-delay", "5"), -EINVAL);
	/* One delay per run: a second one would silently replace the first. */
	ck_assert_int_eq(PARSE(&c, "--self-study", "--fault-delay", "3:100", "--fault-delay",
			       "7:100"),
			 -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--self-study", "--fault-drop", "8"), -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--self-study", "--fault-drop", "2:"), -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--self-study", "--fault-drop", "2::3"), -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--self-study", "--fault-drop", "1:2:3:4:5:6:7:1:2"), -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--self-study", "--fault-window", "0"), -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--self-study", "--max-conns"), -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--self-study", "--frobnicate"), -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--self-study", "10.0.0.1", "extra"), -EINVAL);
	ck_assert_int_eq(PARSE(&c, "--self-study", "--self-study=yes"), -EINVAL);
}
END_TEST

START_TEST(test_fault_drop_takes_a_step_per_sender)
{
	struct rcv_config c;
	int ret = PARSE(&c, "--self-study", "--fault-drop", "2:3:5:7");

	ck_assert_msg(ret == 0, "expected 0, got %d", ret);
	ck_assert_int_eq(c.faults.drop_steps, 4);
	ck_assert_msg(c.faults.drop_step[0] == 2 && c.faults.drop_step[1] == 3 &&
			      c.faults.drop_step[2] == 5 && c.faults.drop_step[3] == 7,
		      "expected steps 2, 3, 5, 7, got %d, %d, %d, %d", c.faults.drop_step[0],
		      c.faults.drop_step[1], c.faults.drop_step[2], c.faults.drop_step[3]);
}
END_TEST

START_TEST(test_sizes_take_binary_units)
{
	static const struct {
		const char *s;
		int ret;
		uint64_t v;
	} cases[] = {
		{ "0", 0, 0 },
		{ "4096", 0, 4096 },
		{ "64K", 0, 65536 },
		{ "64k", 0, 65536 },
		{ "1M", 0, 1048576 },
		{ "2G", 0, 2ULL << 30 },
		{ "1T", 0, 1ULL << 40 },
		{ "", -EINVAL, 0 },
		{ "K", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "1.5M", -EINVAL, 0 },
		{ "1MB", -EINVAL, 0 },
		{ "99999999999999999999", -EINVAL, 0 },
		{ "17179869184G", -EINVAL, 0 },
	};
	uint64_t v;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		v = 0;
		ret = rcv_parse_size(cases[i].s, &v);
		ck_assert_msg(ret == cases[i].ret && (ret || v == cases[i].v),
			      "'%s': expected %d and %llu, got %d and %llu", cases[i].s,
			      cases[i].ret, (unsigned long long)cases[i].v, ret,
			      (unsigned long long)v);
	}
}
END_TEST

START_TEST(test_durations_take_seconds_or_milliseconds)
{
	static const struct {
		const char *s;
		int ret, ms;
	} cases[] = {
		{ "30", 0, 30000 },      { "30s", 0, 30000 },  { "500ms", 0, 500 },
		{ "1ms", 0, 1 },         { "0", -EINVAL, 0 },  { "0ms", -EINVAL, 0 },
		{ "86401", -EINVAL, 0 }, { "2h", -EINVAL, 0 }, { "", -EINVAL, 0 },
	};
	size_t i;
	int ret, ms;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ms = 0;
		ret = rcv_parse_duration(cases[i].s, &ms);
		ck_assert_msg(ret == cases[i].ret && (ret || ms == cases[i].ms),
			      "'%s': expected %d and %d ms, got %d and %d ms", cases[i].s,
			      cases[i].ret, cases[i].ms, ret, ms);
	}
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("receiver: options");
	TCase *tc = tcase_create("config");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_UNIT);
	tcase_add_test(tc, test_defaults_need_only_a_secret);
	tcase_add_test(tc, test_every_option_is_read_with_either_spelling);
	tcase_add_test(tc, test_verify_takes_an_id_and_a_key);
	tcase_add_test(tc, test_class_options_are_read);
	tcase_add_test(tc, test_bad_values_and_combinations_are_refused);
	tcase_add_test(tc, test_fault_drop_takes_a_step_per_sender);
	tcase_add_test(tc, test_sizes_take_binary_units);
	tcase_add_test(tc, test_durations_take_seconds_or_milliseconds);
	suite_add_tcase(s, tc);
	return s;
}
