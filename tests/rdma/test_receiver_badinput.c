/*
 * test_receiver_badinput.c: every way a sender can break the protocol ends
 * that sender's connection with an ERROR (or a disconnect) and a log line,
 * while a good sender connected at the same time still gets its key.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness.h"
#include "receiver_fixture.h"

#define GOOD_SIZE 200000
#define MAX_FILE "256K"

/* One bad sender: what it does, and what the receiver must answer and log. */
struct bad_case {
	const char *what;
	enum rs_misbehave misbehave;
	uint64_t size;
	int leave_at;
	int code;           /* the ERROR expected, or 0 when a disconnect is enough */
	const char *logged; /* must appear in its results line */
};

static const struct bad_case bad_cases[] = {
	{ "wrong magic", RS_BAD_MAGIC, 1000, 0, RL_PERR_BAD_MAGIC, "bad-magic" },
	{ "wrong version", RS_BAD_VERSION, 1000, 0, RL_PERR_BAD_VERSION, "bad-version" },
	{ "truncated FILE_INFO", RS_TRUNCATED, 1000, 0, RL_PERR_MALFORMED, "malformed" },
	{ "STUDENT_ID first", RS_ID_FIRST, 1000, 0, RL_PERR_BAD_STATE, "bad-state" },
	{ "DONE before the data", RS_DONE_EARLY, 1000, 0, RL_PERR_BAD_STATE, "before the data" },
	{ "file past --max-file-size", RS_GOOD, 300000, 0, RL_PERR_TOO_LARGE, "too-large" },
	{ "ID with a space", RS_BAD_ID, 1000, 0, RL_PERR_BAD_ID, "bad-id" },
	{ "ID of 65 characters", RS_LONG_ID, 1000, 0, RL_PERR_BAD_ID, "bad-id" },
	{ "WINDOW_DONE for another window", RS_WRONG_WINDOW, 1000, 0, RL_PERR_BAD_WINDOW,
	  "bad-window" },
	{ "wrong hash, then an ID", RS_WRONG_HASH, 1000, 0, RL_PERR_NOT_VERIFIED, "not-verified" },
	{ "silent after connecting", RS_SILENT, 1000, 0, RL_PERR_TIMEOUT, "timeout" },
	{ "silent holding a window", RS_STALL, 100000, 0, RL_PERR_TIMEOUT, "timeout" },
	{ "write with a wrong rkey", RS_BAD_RKEY, 1000, 0, 0, "\"key_issued\":false" },
	{ "write past the window", RS_PAST_WINDOW, 1000, 0, 0, "\"key_issued\":false" },
	{ "message of 300 bytes", RS_OVERSIZE, 1000, 0, 0, "\"key_issued\":false" },
	{ "leaves after connecting", RS_LEAVE, 1000, 1, 0, "\"step\":1," },
	{ "leaves after FILE_INFO", RS_LEAVE, 1000, 2, 0, "\"step\":3," },
	{ "leaves after writing", RS_LEAVE, 100000, 3, 0, "\"step\":3," },
	{ "leaves after DONE", RS_LEAVE, 1000, 4, 0, "\"step\":5," },
	{ "leaves after RESULT", RS_LEAVE, 1000, 5, 0, "\"step\":5," },
};

/* Run bad case C next to a good sender; check both outcomes. */
static void run_bad_case(struct rf_receiver *rf, const struct bad_case *c, int n)
{
	char good_id[32], key[RCV_KEY_LEN + 1], line[1024], want[64], *log;
	static uint8_t data[300000], good_data[GOOD_SIZE];
	struct rf_job good;
	struct rs_opts o;
	struct rs_result r;
	int ret;

	snprintf(good_id, sizeof(good_id), "good-%d", n);
	rf_expected_key(rf, good_id, key);
	rf_fill(good_data, sizeof(good_data), 99);
	good.o = rf_sender(rf, good_data, sizeof(good_data), good_id);
	rf_run(&good);

	rf_fill(data, c->size, (unsigned)n);
	o = rf_sender(rf, data, c->size, "bad-sender");
	o.misbehave = c->misbehave;
	o.leave_at = c->leave_at;
	ret = rs_send_file(&o, &r);
	ck_assert_msg(ret != 0, "%s: expected no key, got %s", c->what, r.key);
	if (c->code)
		ck_assert_msg(r.got_error && r.error_code == c->code,
			      "%s: expected ERROR %s, got: %s", c->what,
			      rl_proto_error_name(c->code), r.what);
	ck_assert_msg(r.peer[0], "%s: expected to connect, got: %s", c->what, r.what);
	ck_assert_msg(rf_wait_line(rf, r.peer, rf_timeout_ms(10000), line, sizeof(line)),
		      "%s: no results line for %s", c->what, r.peer);
	ck_assert_msg(strstr(line, c->logged) && strstr(line, "\"key_issued\":false") &&
			      !strstr(line, "\"error\":null"),
		      "%s: expected a line with %s, key_issued false and an error, got %s", c->what,
		      c->logged, line);
	if (c->code) {
		snprintf(want, sizeof(want), "ERROR %s", rl_proto_error_name(c->code));
		log = rf_log(rf);
		ck_assert_msg(strstr(log, want), "%s: expected '%s' in the receiver's log", c->what,
			      want);
		free(log);
	}
	ck_assert_msg(rf_join(&good) == 0 && !strcmp(good.r.key, key),
		      "%s: the good sender next to it: expected key %s, got '%s' (%s)", c->what,
		      key, good.r.key, good.r.what);
}

START_TEST(test_each_bad_sender_is_refused_while_a_good_one_gets_its_key)
{
	static const char *const opts[] = {
		"--max-window", "64K", "--max-file-size", MAX_FILE, "--idle-timeout", "3s", NULL
	};
	struct rf_receiver rf;
	size_t i;

	rf_start(&rf, opts);
	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++)
		run_bad_case(&rf, &bad_cases[i], (int)i);
	ck_assert_msg(rf_stop(&rf) == 0, "expected the receiver to survive and exit 0");
}
END_TEST

START_TEST(test_a_full_receiver_rejects_with_error_busy)
{
	static const char *const opts[] = { "--max-conns", "1", "--idle-timeout", "4s", NULL };
	char key[RCV_KEY_LEN + 1], line[1024], *log;
	struct rf_receiver rf;
	struct rf_job holder;
	struct rs_opts o;
	struct rs_result r;
	uint8_t data[100];

	rf_fill(data, sizeof(data), 5);
	rf_start(&rf, opts);
	holder.o = rf_sender(&rf, data, sizeof(data), "holder");
	holder.o.misbehave = RS_SILENT;
	rf_run(&holder);
	sleep(1);
	o = rf_sender(&rf, data, sizeof(data), "second");
	ck_assert_msg(rs_send_file(&o, &r) != 0, "expected the second sender to be refused");
	ck_assert_msg(r.rejected && r.got_error && r.error_code == RL_PERR_BUSY,
		      "expected a REJECT carrying ERROR busy, got: %s", r.what);
	rf_join(&holder);
	ck_assert_msg(holder.r.got_error && holder.r.error_code == RL_PERR_TIMEOUT,
		      "expected the holder to get ERROR timeout, got: %s", holder.r.what);
	/* Once the holder's line is logged, its slot is free again. */
	ck_assert_msg(rf_wait_line(&rf, holder.r.peer, rf_timeout_ms(5000), line, sizeof(line)),
		      "no results line for the holder %s", holder.r.peer);
	rf_expected_key(&rf, "third", key);
	o = rf_sender(&rf, data, sizeof(data), "third");
	ck_assert_msg(rs_send_file(&o, &r) == 0 && !strcmp(r.key, key),
		      "expected the third sender to get %s, got: %s", key, r.what);
	log = rf_log(&rf);
	ck_assert_msg(strstr(log, "rejected"), "expected a 'rejected' line in the receiver's log");
	free(log);
	rf_stop(&rf);
}
END_TEST

START_TEST(test_a_spent_memory_budget_answers_error_busy)
{
	static const char *const opts[] = {
		"--max-window", "64K", "--mem-budget", "64K", "--idle-timeout", "4s", NULL
	};
	static uint8_t data[100000];
	struct rf_receiver rf;
	struct rf_job holder;
	struct rs_opts o;
	struct rs_result r;

	rf_fill(data, sizeof(data), 6);
	rf_start(&rf, opts);
	holder.o = rf_sender(&rf, data, sizeof(data), "holder");
	holder.o.misbehave = RS_STALL;
	rf_run(&holder);
	sleep(1);
	o = rf_sender(&rf, data, sizeof(data), "second");
	ck_assert_msg(rs_send_file(&o, &r) != 0, "expected the second sender to be refused");
	ck_assert_msg(r.got_error && r.error_code == RL_PERR_BUSY,
		      "expected ERROR busy while the budget is spent, got: %s", r.what);
	rf_join(&holder);
	rf_stop(&rf);
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("receiver: bad input");
	TCase *tc = tcase_create("badinput");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_RDMA * 3);
	tcase_add_test(tc, test_each_bad_sender_is_refused_while_a_good_one_gets_its_key);
	tcase_add_test(tc, test_a_full_receiver_rejects_with_error_busy);
	tcase_add_test(tc, test_a_spent_memory_budget_answers_error_busy);
	suite_add_tcase(s, tc);
	return s;
}
