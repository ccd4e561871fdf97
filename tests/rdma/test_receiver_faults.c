/*
 * test_receiver_faults.c: the test-only fault knobs do what docs/receiver.md
 * says, so grader tests can rely on them: a forced bad hash, a dropped
 * connection at a chosen step, a held-back reply.
 */
#include <string.h>
#include <time.h>

#include "../harness.h"
#include "receiver_fixture.h"

static uint8_t data[50000];

START_TEST(test_fault_bad_hash_answers_bad_and_gives_no_key)
{
	static const char *const opts[] = { "--fault-bad-hash", NULL };
	struct rf_receiver rf;
	struct rs_opts o;
	struct rs_result r;
	char line[1024];

	rf_fill(data, sizeof(data), 1);
	rf_start(&rf, opts);
	o = rf_sender(&rf, data, sizeof(data), "s-badhash");
	ck_assert_msg(rs_send_file(&o, &r) != 0, "expected no key, got %s", r.key);
	ck_assert_msg(r.got_result && !r.good, "expected RESULT bad, got: %s", r.what);
	ck_assert_msg(rf_wait_line(&rf, r.peer, rf_timeout_ms(5000), line, sizeof(line)),
		      "no results line for %s", r.peer);
	ck_assert_msg(strstr(line, "\"hash_ok\":false") && strstr(line, "\"step\":5,"),
		      "expected hash_ok false at step 5, got %s", line);
	rf_stop(&rf);
}
END_TEST

/* A loop test: one run per step k = 1..7, each with its own timeout. */
START_TEST(test_fault_drop_ends_the_connection_at_each_step)
{
	struct rf_receiver rf;
	struct rs_opts o;
	struct rs_result r;
	char line[1024], step[8], want[32];
	int k = _i;

	rf_fill(data, sizeof(data), 2);
	snprintf(step, sizeof(step), "%d", k);
	rf_start(&rf, (const char *const[]){ "--fault-drop", step, NULL });
	o = rf_sender(&rf, data, sizeof(data), "s-drop");
	ck_assert_msg(rs_send_file(&o, &r) != 0, "drop at %d: expected no key, got %s", k, r.key);
	ck_assert_msg(!r.got_error, "drop at %d: expected a bare disconnect, got: %s", k, r.what);
	ck_assert_msg(rf_wait_line(&rf, r.peer, rf_timeout_ms(5000), line, sizeof(line)),
		      "drop at %d: no results line for %s", k, r.peer);
	snprintf(want, sizeof(want), "dropped at step %d", k);
	ck_assert_msg(strstr(line, want) && strstr(line, "\"key_issued\":false"),
		      "drop at %d: expected '%s' and no key, got %s", k, want, line);
	rf_stop(&rf);
}
END_TEST

/* One receiver, a list of steps: each sender in turn is dropped at the next, the rest at the last. */
START_TEST(test_fault_drop_list_drops_each_sender_at_its_own_step)
{
	static const int steps[] = { 2, 5, 3, 3 };
	struct rf_receiver rf;
	struct rs_opts o;
	struct rs_result r;
	char line[1024], want[32];
	size_t i;

	rf_fill(data, sizeof(data), 3);
	rf_start(&rf, (const char *const[]){ "--fault-drop", "2:5:3", NULL });
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		o = rf_sender(&rf, data, sizeof(data), "s-drops");
		ck_assert_msg(rs_send_file(&o, &r) != 0, "sender %zu: expected no key, got %s", i,
			      r.key);
		ck_assert_msg(rf_wait_line(&rf, r.peer, rf_timeout_ms(5000), line, sizeof(line)),
			      "sender %zu: no results line for %s", i, r.peer);
		snprintf(want, sizeof(want), "dropped at step %d", steps[i]);
		ck_assert_msg(strstr(line, want), "sender %zu: expected '%s', got %s", i, want,
			      line);
	}
	rf_stop(&rf);
}
END_TEST

START_TEST(test_fault_delay_holds_the_reply_back)
{
	static const char *const opts[] = { "--fault-delay", "7:1500", NULL };
	char key[RCV_KEY_LEN + 1];
	struct rf_receiver rf;
	struct timespec t0, t1;
	struct rs_opts o;
	struct rs_result r;
	double took;

	rf_fill(data, sizeof(data), 3);
	rf_start(&rf, opts);
	o = rf_sender(&rf, data, sizeof(data), "s-delay");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_msg(rs_send_file(&o, &r) == 0, "expected a key, got: %s", r.what);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	took = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	rf_expected_key(&rf, "s-delay", key);
	ck_assert_msg(!strcmp(r.key, key), "expected key %s, got %s", key, r.key);
	ck_assert_msg(took >= 1.5, "expected the key to take at least 1.5 s, took %.2f s", took);
	rf_stop(&rf);
}
END_TEST

/* A held RESULT holds what follows it too: a pipelined STUDENT_ID's KEY never overtakes it. */
START_TEST(test_fault_delay_keeps_result_before_a_pipelined_key)
{
	static const char *const opts[] = { "--fault-delay", "5:1000", NULL };
	char key[RCV_KEY_LEN + 1];
	struct rf_receiver rf;
	struct rs_opts o;
	struct rs_result r;

	rf_fill(data, sizeof(data), 4);
	rf_start(&rf, opts);
	o = rf_sender(&rf, data, sizeof(data), "s-held");
	o.misbehave = RS_ID_WITH_DONE;
	ck_assert_msg(rs_send_file(&o, &r) == 0 && r.got_result && r.good,
		      "expected RESULT good, then a key, got: %s", r.what);
	rf_expected_key(&rf, "s-held", key);
	ck_assert_msg(!strcmp(r.key, key), "expected key %s, got %s", key, r.key);
	rf_stop(&rf);
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("receiver: fault knobs");
	TCase *tc = tcase_create("faults");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_RDMA);
	tcase_add_test(tc, test_fault_bad_hash_answers_bad_and_gives_no_key);
	tcase_add_loop_test(tc, test_fault_drop_ends_the_connection_at_each_step, 1, 8);
	tcase_add_test(tc, test_fault_drop_list_drops_each_sender_at_its_own_step);
	tcase_add_test(tc, test_fault_delay_holds_the_reply_back);
	tcase_add_test(tc, test_fault_delay_keeps_result_before_a_pipelined_key);
	suite_add_tcase(s, tc);
	return s;
}
