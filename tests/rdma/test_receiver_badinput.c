/*
 * test_receiver_badinput.c: every way a sender can break the protocol ends
 * that sender's connection with an ERROR (or a disconnect) and a log line
 * at the step docs/protocol.md gives, while a good sender connected at the
 * same time still gets its key.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
	int step;           /* the step its results line must give */
	const char *logged; /* must appear in its results line too */
};

static const struct bad_case bad_cases[] = {
	{ "wrong magic", RS_BAD_MAGIC, 1000, 0, RL_PERR_BAD_MAGIC, 1, "bad-magic" },
	{ "wrong version", RS_BAD_VERSION, 1000, 0, RL_PERR_BAD_VERSION, 1, "version 2" },
	{ "truncated FILE_INFO", RS_TRUNCATED, 1000, 0, RL_PERR_MALFORMED, 1, "malformed" },
	{ "STUDENT_ID first", RS_ID_FIRST, 1000, 0, RL_PERR_BAD_STATE, 1, "bad-state" },
	{ "DONE before the data", RS_DONE_EARLY, 1000, 0, RL_PERR_BAD_STATE, 3, "before the data" },
	{ "file past --max-file-size", RS_GOOD, 300000, 0, RL_PERR_TOO_LARGE, 1,
	  "past this receiver's limit" },
	{ "file past 2^40 bytes", RS_HUGE_FILE, 1000, 0, RL_PERR_TOO_LARGE, 1,
	  "past the protocol's limit" },
	{ "FILE_INFO as a SEND with immediate", RS_SEND_IMM, 1000, 0, RL_PERR_MALFORMED, 1,
	  "SEND with immediate" },
	{ "window written with immediate", RS_WRITE_IMM, 1000, 0, RL_PERR_MALFORMED, 3,
	  "RDMA WRITE with immediate" },
	{ "ID with a space", RS_BAD_ID, 1000, 0, RL_PERR_BAD_ID, 5, "bad-id" },
	{ "ID of 65 characters", RS_LONG_ID, 1000, 0, RL_PERR_BAD_ID, 5, "bad-id" },
	{ "WINDOW_DONE for another window", RS_WRONG_WINDOW, 1000, 0, RL_PERR_BAD_WINDOW, 3,
	  "bad-window" },
	{ "wrong hash, then an ID", RS_WRONG_HASH, 1000, 0, RL_PERR_NOT_VERIFIED, 6,
	  "not-verified" },
	{ "silent after connecting", RS_SILENT, 1000, 0, RL_PERR_TIMEOUT, 1, "timeout" },
	{ "silent holding a window", RS_STALL, 100000, 0, RL_PERR_TIMEOUT, 3, "timeout" },
	{ "write with a wrong rkey", RS_BAD_RKEY, 1000, 0, 0, 3, "transfer-failed" },
	{ "write past the window", RS_PAST_WINDOW, 1000, 0, 0, 3, "transfer-failed" },
	{ "message of 300 bytes", RS_OVERSIZE, 1000, 0, 0, 1, "transfer-failed: receive" },
	{ "leaves after connecting", RS_LEAVE, 1000, 1, 0, 1, "disconnected" },
	{ "leaves after FILE_INFO", RS_LEAVE, 1000, 2, 0, 3, "disconnected" },
	{ "leaves after writing", RS_LEAVE, 100000, 3, 0, 3, "disconnected" },
	{ "leaves after DONE", RS_LEAVE, 1000, 4, 0, 5, "disconnected" },
	{ "leaves after RESULT", RS_LEAVE, 1000, 5, 0, 5, "disconnected" },
};

/* Run bad case C next to a good sender; check both outcomes. */
static void run_bad_case(struct rf_receiver *rf, const struct bad_case *c, int n)
{
	char good_id[32], key[RCV_KEY_LEN + 1], line[1024], want[64], step[16], *log;
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
	snprintf(step, sizeof(step), "\"step\":%d,", c->step);
	ck_assert_msg(strstr(line, c->logged) && strstr(line, step) &&
			      strstr(line, "\"key_issued\":false") &&
			      !strstr(line, "\"error\":null"),
		      "%s: expected a line with %s, %s key_issued false and an error, got %s "
		      "(the bad sender ended: %s)",
		      c->what, c->logged, step, line, r.what);
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
	/* Never connected: step 0. */
	ck_assert_msg(rf_wait_line(&rf, r.peer, rf_timeout_ms(5000), line, sizeof(line)),
		      "no results line for the rejected sender %s", r.peer);
	ck_assert_msg(strstr(line, "\"step\":0,") && strstr(line, "busy: receiver full"),
		      "expected the rejected sender at step 0 with busy, got %s", line);
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
	char line[1024];

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
	/* FILE_INFO was accepted (step 2) but no window granted (step 3). */
	ck_assert_msg(rf_wait_line(&rf, r.peer, rf_timeout_ms(5000), line, sizeof(line)),
		      "no results line for %s", r.peer);
	ck_assert_msg(strstr(line, "\"step\":2,") && strstr(line, "busy: memory budget"),
		      "expected the refused sender at step 2 (file-info) with busy, got %s", line);
	rf_join(&holder);
	rf_stop(&rf);
}
END_TEST

/*
 * A sender that keeps no receive posted: the receiver's first reply (WINDOW
 * 0) finds none. The sender's rnr_retry_count sets how often the receiver's
 * QP retries: 6 fails the reply after about 4 s (rdma_cm sets the RNR timer
 * to 655 ms); 7 retries for ever, so only the idle timeout, then the 5 s an
 * ERROR may take to go out, end the connection. Neither sender gets an ERROR.
 */
/* Run O to its end; the seconds it took. */
static double timed_send(const struct rs_opts *o, struct rs_result *r, int *ret)
{
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	*ret = rs_send_file(o, r);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
}

START_TEST(test_a_reply_that_finds_no_receive)
{
	int idle_ms = rf_timeout_ms(8000), ret; /* longer than 6 RNR retries of 655 ms */
	char idle[16], line[1024];
	struct rf_receiver rf;
	struct rs_opts o;
	struct rs_result r;
	uint8_t data[1000];
	double took;

	snprintf(idle, sizeof(idle), "%dms", idle_ms);
	rf_fill(data, sizeof(data), 7);
	rf_start(&rf, (const char *const[]){ "--idle-timeout", idle, NULL });
	o = rf_sender(&rf, data, sizeof(data), "no-recv");
	o.misbehave = RS_NO_RECV;
	took = timed_send(&o, &r, &ret);
	ck_assert_msg(ret != 0 && !r.got_error && took < idle_ms / 1000.0,
		      "rnr_retry_count 6: expected a bare disconnect before the idle timeout, "
		      "got after %.1f s: %s",
		      took, r.what);
	ck_assert_msg(rf_wait_line(&rf, r.peer, rf_timeout_ms(5000), line, sizeof(line)),
		      "rnr_retry_count 6: no results line for %s", r.peer);
	ck_assert_msg(strstr(line, "transfer-failed: send RNR retry counter exceeded") &&
			      strstr(line, "\"step\":3,"),
		      "rnr_retry_count 6: expected transfer-failed: send RNR at step 3, got %s",
		      line);

	o.rnr_forever = true;
	o.timeout_ms = idle_ms + rf_timeout_ms(RS_DEFAULT_TIMEOUT_MS);
	took = timed_send(&o, &r, &ret);
	ck_assert_msg(ret != 0 && !r.got_error && took >= idle_ms / 1000.0,
		      "rnr_retry_count 7: expected a bare disconnect after the idle timeout, got "
		      "after %.1f s: %s",
		      took, r.what);
	ck_assert_msg(rf_wait_line(&rf, r.peer, rf_timeout_ms(5000), line, sizeof(line)),
		      "rnr_retry_count 7: no results line for %s", r.peer);
	ck_assert_msg(strstr(line, "timeout: no WINDOW_DONE") && strstr(line, "\"step\":3,"),
		      "rnr_retry_count 7: expected timeout at step 3, got %s", line);
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
	tcase_add_test(tc, test_a_reply_that_finds_no_receive);
	suite_add_tcase(s, tc);
	return s;
}
