/* test_receiver_results.c: results lines are valid JSON with every field, escaped, on disk. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness.h"
#include "receiver.h"

START_TEST(test_an_issued_key_makes_a_complete_line)
{
	struct rcv_result r = {
		.time = 1700000000,
		.peer = "10.211.0.1:51234",
		.student_id = "s1234567",
		.has_file_size = true,
		.file_size = 300001,
		.bytes_received = 300001,
		.hash_ok = 1,
		.key_issued = true,
		.sha256 = "8f14e45fceea167a5a36dedd4bea2543f1bb7b3a2f3c0e9b8e2f6d5f0e9c0a11",
		.key_sha256 = "0b2d6a3e4c4bd0d4e6a8b9c3d2e1f00112233445566778899aabbccddeeff001",
		.step = 7,
	};
	static const char expected[] =
		"{\"time\":\"2023-11-14T22:13:20Z\",\"peer\":\"10.211.0.1:51234\","
		"\"student_id\":\"s1234567\",\"file_size\":300001,"
		"\"sha256\":\"8f14e45fceea167a5a36dedd4bea2543f1bb7b3a2f3c0e9b8e2f6d5f0e9c0a11\","
		"\"bytes_received\":300001,\"hash_ok\":true,\"key_issued\":true,"
		"\"key_sha256\":\"0b2d6a3e4c4bd0d4e6a8b9c3d2e1f00112233445566778899aabbccddeeff001\","
		"\"step\":7,\"step_name\":\"key\","
		"\"error\":null,\"self_study\":false}\n";
	char line[1024];
	int n = rcv_results_format(line, sizeof(line), &r);

	ck_assert_msg(n == (int)strlen(expected), "expected %zu bytes, got %d", strlen(expected),
		      n);
	ck_assert_msg(!strcmp(line, expected), "expected\n%sgot\n%s", expected, line);
}
END_TEST

START_TEST(test_a_failed_attempt_has_nulls_and_an_escaped_error)
{
	struct rcv_result r = {
		.time = 0,
		.peer = "10.0.0.2:1",
		.hash_ok = -1,
		.step = 1,
		.error = "bad-id: \"a\\b\"\x01",
		.self_study = true,
	};
	char line[1024];
	int n = rcv_results_format(line, sizeof(line), &r);

	ck_assert_msg(n > 0, "expected a line, got %d", n);
	ck_assert_msg(strstr(line, "\"student_id\":null,\"file_size\":null,\"sha256\":null,"),
		      "got %s", line);
	ck_assert_msg(strstr(line, "\"hash_ok\":null,\"key_issued\":false,\"key_sha256\":null,"
				   "\"step\":1,\"step_name\":\"connected\""),
		      "got %s", line);
	ck_assert_msg(strstr(line, "\"error\":\"bad-id: \\\"a\\\\b\\\"\\u0001\""), "got %s", line);
	ck_assert_msg(strstr(line, "\"self_study\":true}\n"), "got %s", line);
}
END_TEST

START_TEST(test_a_line_too_long_for_the_buffer_is_refused)
{
	struct rcv_result r = { .peer = "10.0.0.2:1", .hash_ok = -1 };
	char line[64];

	ck_assert_int_eq(rcv_results_format(line, sizeof(line), &r), -EMSGSIZE);
}
END_TEST

START_TEST(test_append_puts_each_line_on_disk)
{
	struct rcv_result r = { .peer = "10.0.0.2:1", .hash_ok = 0, .step = 5 };
	char path[] = "/tmp/rdmalab-results-XXXXXX", buf[2048];
	int fd = mkstemp(path), out;
	ssize_t n;

	ck_assert(fd >= 0);
	close(fd);
	out = rcv_results_open(path);
	ck_assert_msg(out >= 0, "expected to open %s, got %d", path, out);
	ck_assert_int_eq(rcv_results_append(out, &r), 0);
	ck_assert_int_eq(rcv_results_append(out, &r), 0);
	close(out);
	fd = open(path, O_RDONLY);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	unlink(path);
	ck_assert(n > 0);
	buf[n] = '\0';
	ck_assert_msg(strchr(buf, '\n') && strchr(strchr(buf, '\n') + 1, '\n') == buf + n - 1,
		      "expected two lines, got %s", buf);
	ck_assert_msg(strstr(buf, "\"hash_ok\":false"), "got %s", buf);
}
END_TEST

START_TEST(test_steps_have_names)
{
	ck_assert_str_eq(rcv_step_name(0), "none");
	ck_assert_str_eq(rcv_step_name(3), "window");
	ck_assert_str_eq(rcv_step_name(7), "key");
	ck_assert_str_eq(rcv_step_name(8), "unknown");
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("receiver: results log");
	TCase *tc = tcase_create("results");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_UNIT);
	tcase_add_test(tc, test_an_issued_key_makes_a_complete_line);
	tcase_add_test(tc, test_a_failed_attempt_has_nulls_and_an_escaped_error);
	tcase_add_test(tc, test_a_line_too_long_for_the_buffer_is_refused);
	tcase_add_test(tc, test_append_puts_each_line_on_disk);
	tcase_add_test(tc, test_steps_have_names);
	suite_add_tcase(s, tc);
	return s;
}
