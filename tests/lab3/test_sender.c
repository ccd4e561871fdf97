/*
 * test_sender.c: the lab3 program as a whole, run as a child process against
 * the reference receiver: the key for every kind of file, and a clear
 * non-zero exit, never a hang, when the receiver says bad, sends an ERROR,
 * drops the connection or goes silent.
 */
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "reference.h"

/* Run the program on a file of SIZE bytes as ID, with --timeout TIMEOUT (seconds). */
static void run_on_file(const struct rf_receiver *rf, uint64_t size, const char *id,
			const char *timeout, struct ref_run *run)
{
	struct ref_file rfile;
	char server[96];

	ref_make_file(&rfile, size);
	snprintf(server, sizeof(server), "%s:%u", rf->addr, rf->port);
	{
		const char *const args[] = { "--server", server,      "--file", rfile.path, "--id",
					     id,         "--timeout", timeout,  NULL };

		ref_run_sender(rf, args, rf_timeout_ms(40000), run);
	}
	ref_drop_file(&rfile);
}

/* Fail unless RUN ended non-zero in time, with WANT on stderr. */
static void expect_failure(const struct ref_run *run, const char *what, const char *want)
{
	ck_assert_msg(run->status != -1,
		      "%s: expected an exit, the sender was still running after "
		      "%.0f s",
		      what, run->seconds);
	ck_assert_msg(run->status != 0, "%s: expected a non-zero exit, got 0; stdout:\n%s", what,
		      run->out);
	ck_assert_msg(strstr(run->err, want), "%s: expected \"%s\" on stderr, got:\n%s", what, want,
		      run->err);
	ck_assert_msg(!run->key[0], "%s: expected no key printed, got %s", what, run->key);
}

RL_TEST(sender_prints_the_key_for_empty_small_odd_and_many_window_files, .step = 7, .points = 3,
	.needs = 6, .limit = 30)
{
	static const char *const opts[] = { "--fault-window", "64K", NULL };
	static const uint64_t sizes[] = { 0, 1, 4097, 300001 };
	char want[RCV_KEY_LEN + 1];
	struct rf_receiver rf;
	struct ref_run run;
	size_t i;

	ref_start(&rf, opts);
	rf_expected_key(&rf, "s1234567", want);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		run_on_file(&rf, sizes[i], "s1234567", ref_sender_timeout(), &run);
		ck_assert_msg(run.status == 0,
			      "file of %llu bytes: expected exit 0, got %d; "
			      "stderr:\n%s",
			      (unsigned long long)sizes[i], run.status, run.err);
		ck_assert_msg(!strcmp(run.key, want),
			      "file of %llu bytes: expected \"key: %s\", "
			      "got stdout:\n%s",
			      (unsigned long long)sizes[i], want, run.out);
	}
	if (rf.secret[rf.secret_len - 1] != '\n')
		ck_assert_msg(ref_verify(&rf, "s1234567", run.key) == 0,
			      "expected rdmalab-receiver --verify to accept %s", run.key);
	ck_assert_msg(rf_count_lines(&rf) == 4, "expected 4 results lines, got %d",
		      rf_count_lines(&rf));
	rf_stop(&rf);
}
END_TEST

RL_TEST(sender_exits_non_zero_and_says_bad_when_the_hash_differs, .step = 7, .points = 1,
	.needs = 6, .limit = 30)
{
	static const char *const opts[] = { "--fault-bad-hash", NULL };
	struct rf_receiver rf;
	struct ref_run run;

	ref_start(&rf, opts);
	run_on_file(&rf, 4097, "s1234567", ref_sender_timeout(), &run);
	expect_failure(&run, "--fault-bad-hash", "BAD");
	rf_stop(&rf);
}
END_TEST

RL_TEST(sender_prints_the_code_and_text_of_an_error, .step = 7, .points = 1, .needs = 6,
	.limit = 30)
{
	static const char *const opts[] = { "--max-file-size", "4K", NULL };
	struct rf_receiver rf;
	struct ref_run run;

	ref_start(&rf, opts);
	run_on_file(&rf, 4097, "s1234567", ref_sender_timeout(), &run);
	expect_failure(&run, "a file past --max-file-size", "too-large (6)");
	rf_stop(&rf);
}
END_TEST

RL_TEST(sender_exits_non_zero_when_the_receiver_drops_the_connection, .step = 7, .points = 2,
	.needs = 6, .limit = 30)
{
	static const char *const steps[] = { "2", "3", "5", "7" };
	struct rf_receiver rf;
	struct ref_run run;
	char what[64];
	size_t i;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const char *const opts[] = { "--fault-drop", steps[i], "--fault-window", "64K",
					     NULL };

		ref_start(&rf, opts);
		run_on_file(&rf, 300001, "s1234567", ref_sender_timeout(), &run);
		snprintf(what, sizeof(what), "--fault-drop %s", steps[i]);
		expect_failure(&run, what, "connection lost");
		ck_assert_msg(run.seconds < 15,
			      "%s: expected the sender to notice at once, it took "
			      "%.1f s",
			      what, run.seconds);
		rf_stop(&rf);
	}
}
END_TEST

RL_TEST(sender_times_out_instead_of_waiting_for_ever, .step = 7, .points = 1, .needs = 6,
	.limit = 30)
{
	static const char *const opts[] = { "--fault-delay", "5:30000", NULL };
	struct rf_receiver rf;
	struct ref_run run;

	ref_start(&rf, opts);
	run_on_file(&rf, 4097, "s1234567", "2", &run);
	expect_failure(&run, "RESULT held for 30 s, --timeout 2", "timed out");
	rf_stop(&rf);
}
END_TEST
