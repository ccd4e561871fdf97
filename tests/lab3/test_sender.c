/*
 * test_sender.c: Lab 3 end to end, step 8, when the receiver fails the
 * sender: the lab3 program as a whole, run by the check against the test's
 * reference receiver, must end with a clear non-zero exit and no key,
 * never a hang, when the receiver says bad, sends an ERROR, drops the
 * connection or goes silent. Each failure counts only once the receiver's
 * results log shows the sender got as far as the step that makes it
 * happen: printing the words is not enough. (test_e2e.c: the key.)
 *
 * Step 8 is the only step that grades the whole program: steps 1 to 7 test
 * each step between the test's own versions of the others, so one fact,
 * a run that ends as it should, earns its points once (docs/lab3.md).
 */
#include <string.h>

#include "reference.h"

/* Run the program on file I as a fresh ID (TIMEOUT: its --timeout); the line it logged into L. */
static void run_on_file(int i, const char *timeout, struct ref_run *run, struct ref_line *l)
{
	char id[RL_PROTO_MAX_ID + 1];
	int skip = ref_count_lines();

	ref_random_id(id);
	ref_run_sender(i, id, timeout, ref_check_ms_left(), run);
	ref_line_of_run(skip, id, l);
}

/* Whether the receiver logged the run (WHAT: the case). */
static bool expect_logged(struct rl_case *c, const struct ref_line *l, const char *what)
{
	return rl_expect(c, l->text[0], "%s: the receiver logged no connection from the sender",
			 what);
}

static void a_file_of_4_kib(struct rl_case *c)
{
	uint64_t size = 2 * ref_random(2048, 2048) + 1;

	ref_setup(c, &size, 1);
}

static void says_bad(struct rl_case *c)
{
	struct ref_line l;
	struct ref_run run;

	run_on_file(0, ref_sender_timeout(), &run, &l);
	if (ref_expect_failure(c, &run, "--fault-bad-hash", "BAD") &&
	    expect_logged(c, &l, "--fault-bad-hash"))
		rl_expect(c, l.step == 5 && l.hash_ok == 0,
			  "--fault-bad-hash: expected the sender to send DONE and get the RESULT "
			  "saying bad (step 5), the receiver logged: %s",
			  l.text);
	ref_cleanup();
}

RL_GRADED(sender_exits_non_zero_and_says_bad_when_the_hash_differs, .step = 8, .points = 2,
	  .whole = true, .limit = 30, .receiver = "--fault-bad-hash", .setup = a_file_of_4_kib,
	  .check = says_bad);

/* A file past the receiver's --max-file-size 4K. */
static void a_file_over_4_kib(struct rl_case *c)
{
	uint64_t size = ref_random(4097, 4096);

	ref_setup(c, &size, 1);
}

static void prints_the_error(struct rl_case *c)
{
	unsigned long long size = ref_in(c)->file[0].size;
	struct ref_line l;
	struct ref_run run;

	run_on_file(0, ref_sender_timeout(), &run, &l);
	if (ref_expect_failure(c, &run, "a file past --max-file-size", "too-large (6)") &&
	    expect_logged(c, &l, "a file past --max-file-size"))
		rl_expect(c, l.file_size == (long long)size && !strncmp(l.error, "too-large", 9),
			  "a file past --max-file-size: expected the sender to announce its %llu "
			  "bytes and get ERROR too-large, the receiver logged: %s",
			  size, l.text);
	ref_cleanup();
}

RL_GRADED(sender_prints_the_code_and_text_of_an_error, .step = 8, .points = 1, .whole = true,
	  .limit = 30, .receiver = "--max-file-size 4K", .setup = a_file_over_4_kib,
	  .check = prints_the_error);

static void a_file_of_300_kb(struct rl_case *c)
{
	uint64_t size = 2 * ref_random(100000, 100000) + 1;

	ref_setup(c, &size, 1);
}

/*
 * The receiver drops its first sender at step 2 (after FILE_INFO), the
 * next at 3 (a window due), then 4 (after DONE), 5 (the RESULT due) and 7
 * (the key due): its options, in the declaration, say so.
 */
static const int drop_steps[] = { 2, 3, 4, 5, 7 };

static void notices_each_drop(struct rl_case *c)
{
	char what[64], want[64];
	struct ref_line l;
	struct ref_run run;
	size_t i;

	for (i = 0; i < sizeof(drop_steps) / sizeof(drop_steps[0]) && !rl_failed(c); i++) {
		snprintf(what, sizeof(what), "--fault-drop %d", drop_steps[i]);
		snprintf(want, sizeof(want), "fault-drop: dropped at step %d", drop_steps[i]);
		run_on_file(0, ref_sender_timeout(), &run, &l);
		if (ref_expect_failure(c, &run, what, "connection lost") &&
		    rl_expect(c, run.seconds < 15,
			      "%s: expected the sender to notice at once, it took %.1f s", what,
			      run.seconds) &&
		    expect_logged(c, &l, what))
			rl_expect(c, strstr(l.error, want),
				  "%s: expected the sender to get as far as step %d, where the "
				  "receiver drops it, the receiver logged: %s",
				  what, drop_steps[i], l.text);
	}
	ref_cleanup();
}

RL_GRADED(sender_exits_non_zero_when_the_receiver_drops_the_connection, .step = 8, .points = 2,
	  .whole = true, .limit = 30, .receiver = "--fault-drop 2:3:4:5:7 --fault-window 64K",
	  .setup = a_file_of_300_kb, .check = notices_each_drop);

static void times_out(struct rl_case *c)
{
	const char *what = "RESULT held for 30 s, --timeout 2";
	struct ref_line l;
	struct ref_run run;

	run_on_file(0, "2", &run, &l);
	if (ref_expect_failure(c, &run, what, "timed out") &&
	    rl_expect(c, run.seconds >= 1.9,
		      "%s: expected the sender to wait 2 s for the RESULT, it gave up after %.1f s",
		      what, run.seconds) &&
	    expect_logged(c, &l, what))
		rl_expect(c, l.step >= 4,
			  "%s: expected the sender to send DONE and wait for the RESULT, the "
			  "receiver logged: %s",
			  what, l.text);
	ref_cleanup();
}

RL_GRADED(sender_times_out_instead_of_waiting_for_ever, .step = 8, .points = 1, .whole = true,
	  .limit = 30, .receiver = "--fault-delay 5:30000", .setup = a_file_of_4_kib,
	  .check = times_out);
