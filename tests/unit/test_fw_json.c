/* test_fw_json.c: one JSON object a line, every byte escaped, never past its buffer. */
#include <errno.h>
#include <string.h>

#include "../harness.h"
#include "rdmalab.h"

START_TEST(test_json_writes_each_kind_of_member_in_order)
{
	char buf[256];
	struct rl_json j;
	int n;

	rl_json_start(&j, buf, sizeof(buf));
	rl_json_str(&j, "test", "hash_of_nothing");
	rl_json_int(&j, "points", -3);
	rl_json_bool(&j, "pass", true);
	rl_json_null(&j, "why");
	rl_json_str(&j, "message", NULL);
	n = rl_json_end(&j);
	ck_assert_str_eq(buf, "{\"test\":\"hash_of_nothing\",\"points\":-3,\"pass\":true,"
			      "\"why\":null,\"message\":null}\n");
	ck_assert_int_eq(n, (int)strlen(buf));
}
END_TEST

START_TEST(test_json_escapes_quotes_backslashes_controls_and_high_bytes)
{
	char buf[256];
	struct rl_json j;

	rl_json_start(&j, buf, sizeof(buf));
	rl_json_str(&j, "m", "a\"b\\c\nd\te\r\x01\x7f\xc3\xa9");
	ck_assert_int_gt(rl_json_end(&j), 0);
	ck_assert_str_eq(buf,
			 "{\"m\":\"a\\\"b\\\\c\\nd\\te\\u000d\\u0001\\u007f\\u00c3\\u00a9\"}\n");
}
END_TEST

START_TEST(test_json_escapes_keys_too)
{
	char buf[64];
	struct rl_json j;

	rl_json_start(&j, buf, sizeof(buf));
	rl_json_int(&j, "a\"b", 1);
	ck_assert_int_gt(rl_json_end(&j), 0);
	ck_assert_str_eq(buf, "{\"a\\\"b\":1}\n");
}
END_TEST

/* Every size of buffer: whole and NUL-ended, or -EMSGSIZE; never a byte past it. */
START_TEST(test_json_that_does_not_fit_is_refused_without_overrun)
{
	char whole[128], buf[128 + 8];
	struct rl_json j;
	size_t size;
	int n, len;

	rl_json_start(&j, whole, sizeof(whole));
	rl_json_str(&j, "message", "expected \"x\", got \"y\"\n");
	rl_json_int(&j, "max", 12345);
	len = rl_json_end(&j);
	ck_assert_int_gt(len, 0);
	for (size = 0; size <= (size_t)len + 2; size++) {
		memset(buf, '#', sizeof(buf));
		rl_json_start(&j, buf, size);
		rl_json_str(&j, "message", "expected \"x\", got \"y\"\n");
		rl_json_int(&j, "max", 12345);
		n = rl_json_end(&j);
		if (size > (size_t)len) {
			ck_assert_int_eq(n, len);
			ck_assert_str_eq(buf, whole);
		} else {
			ck_assert_msg(n == -EMSGSIZE,
				      "buffer of %zu bytes: expected -EMSGSIZE, got %d", size, n);
		}
		ck_assert_msg(buf[size] == '#', "buffer of %zu bytes: byte %zu written", size,
			      size);
	}
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("framework json");
	TCase *tc = tcase_create("json");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_UNIT);

	tcase_add_test(tc, test_json_writes_each_kind_of_member_in_order);
	tcase_add_test(tc, test_json_escapes_quotes_backslashes_controls_and_high_bytes);
	tcase_add_test(tc, test_json_escapes_keys_too);
	tcase_add_test(tc, test_json_that_does_not_fit_is_refused_without_overrun);
	suite_add_tcase(s, tc);
	return s;
}
