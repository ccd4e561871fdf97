/*
 * test_receiver_transfer.c: a correct sender gets the right key from
 * rdmalab-receiver for files of 0, 1, odd and many-window sizes, and the
 * key is in the results log before it reaches the sender.
 */
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "receiver_fixture.h"

/* Send N bytes as ID; check the key and the log line, return the windows written. */
static int send_and_check(struct rf_receiver *rf, uint64_t n, const char *id)
{
	char expected[RCV_KEY_LEN + 1], line[1024], want[64];
	uint8_t *data = malloc(n + 1);
	struct rs_opts o;
	struct rs_result r;
	int ret;

	ck_assert_ptr_nonnull(data);
	rf_fill(data, n, (unsigned)n);
	o = rf_sender(rf, data, n, id);
	ret = rs_send_file(&o, &r);
	free(data);
	ck_assert_msg(ret == 0, "file of %llu bytes: expected a key, got: %s",
		      (unsigned long long)n, r.what);
	rf_expected_key(rf, id, expected);
	ck_assert_msg(!strcmp(r.key, expected), "file of %llu bytes: expected key %s, got %s",
		      (unsigned long long)n, expected, r.key);
	/* No waiting: the line must be on disk before the key was sent. */
	ck_assert_msg(rf_wait_line(rf, r.peer, 0, line, sizeof(line)),
		      "file of %llu bytes: no results line for %s when the key arrived",
		      (unsigned long long)n, r.peer);
	snprintf(want, sizeof(want), "\"file_size\":%llu,", (unsigned long long)n);
	ck_assert_msg(strstr(line, want) && strstr(line, "\"key_issued\":true") &&
			      strstr(line, "\"hash_ok\":true") && strstr(line, "\"step\":7"),
		      "expected a line with %s key_issued, hash_ok and step 7, got %s", want, line);
	return r.windows;
}

START_TEST(test_sender_gets_the_right_key_for_every_file_size)
{
	static const char *const opts[] = { "--max-window", "64K", NULL };
	static const struct {
		uint64_t size;
		int windows;
	} cases[] = {
		{ 0, 0 }, { 1, 1 }, { 4097, 1 }, { 65536, 1 }, { 65537, 2 }, { 300001, 5 },
	};
	struct rf_receiver rf;
	char id[32];
	size_t i;
	int windows;

	rf_start(&rf, opts);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(id, sizeof(id), "student-%zu", i);
		windows = send_and_check(&rf, cases[i].size, id);
		ck_assert_msg(windows == cases[i].windows,
			      "file of %llu bytes: expected %d windows of 64 KiB, got %d",
			      (unsigned long long)cases[i].size, cases[i].windows, windows);
	}
	ck_assert_msg(rf_count_lines(&rf) == (int)i, "expected %zu results lines, got %d", i,
		      rf_count_lines(&rf));
	ck_assert_msg(rf_stop(&rf) == 0, "expected the receiver to exit 0 on SIGTERM");
}
END_TEST

START_TEST(test_tiny_fault_windows_still_give_the_key)
{
	static const char *const opts[] = { "--fault-window", "1000", NULL };
	struct rf_receiver rf;
	int windows;

	rf_start(&rf, opts);
	windows = send_and_check(&rf, 9999, "s-tiny");
	rf_stop(&rf);
	ck_assert_msg(windows == 10, "expected 10 windows of 1000 bytes, got %d", windows);
}
END_TEST

/* docs/protocol.md allows STUDENT_ID right after DONE: RESULT, then KEY, in that order. */
START_TEST(test_student_id_right_after_done_gets_result_then_key)
{
	static const char *const opts[] = { "--max-window", "64K", NULL };
	static uint8_t data[100000];
	char key[RCV_KEY_LEN + 1], line[1024];
	struct rf_receiver rf;
	struct rs_opts o;
	struct rs_result r;

	rf_fill(data, sizeof(data), 8);
	rf_start(&rf, opts);
	o = rf_sender(&rf, data, sizeof(data), "s-pipelined");
	o.misbehave = RS_ID_WITH_DONE;
	ck_assert_msg(rs_send_file(&o, &r) == 0 && r.got_result && r.good,
		      "expected RESULT good, then a key, got: %s", r.what);
	rf_expected_key(&rf, "s-pipelined", key);
	ck_assert_msg(!strcmp(r.key, key), "expected key %s, got %s", key, r.key);
	ck_assert_msg(rf_wait_line(&rf, r.peer, 0, line, sizeof(line)) &&
			      strstr(line, "\"step\":7,"),
		      "expected a line at step 7 for %s when the key arrived", r.peer);
	rf_stop(&rf);
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("receiver: transfers");
	TCase *tc = tcase_create("transfer");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_RDMA);
	tcase_add_test(tc, test_sender_gets_the_right_key_for_every_file_size);
	tcase_add_test(tc, test_tiny_fault_windows_still_give_the_key);
	tcase_add_test(tc, test_student_id_right_after_done_gets_result_then_key);
	suite_add_tcase(s, tc);
	return s;
}
