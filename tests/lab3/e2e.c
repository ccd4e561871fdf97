/* e2e.c: Lab 3 end to end: the lab3 program against the test's reference receiver (e2e.h). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "reference.h"
#include "e2e.h"

/* How a run must end. */
enum e2e_expect {
	E2E_KEY,     /* exit 0, the key of the student ID printed */
	E2E_BAD,     /* non-zero, after reading the RESULT that says the hash is bad */
	E2E_DROPPED, /* non-zero, after sending DONE, when the receiver drops the connection */
};

void e2e_setup(struct rl_case *c, uint64_t size)
{
	ref_setup(c, &size, 1);
}

/* Whether RUN ended non-zero, without a key, after reaching the step EXPECT needs (in L). */
static bool e2e_failure_ok(struct rl_case *c, const struct ref_run *run, enum e2e_expect expect,
			   const struct ref_line *l, const char *why)
{
	const char *what = expect == E2E_BAD ? "said the hash was bad" : "dropped the connection";
	int step = l->text[0] ? l->step : 0;

	if (!rl_expect(c, run->status != 0,
		       "expected a non-zero exit (the receiver %s), got exit status 0", what) ||
	    !rl_expect(c, !run->key[0], "the receiver %s, yet the sender printed a key: %s", what,
		       run->key))
		return false;
	if (expect == E2E_BAD)
		return rl_expect(c, step >= 5,
				 "expected the sender to send DONE and read the RESULT saying bad, "
				 "it stopped at step %d: %s",
				 step, why);
	return rl_expect(c, step >= 4,
			 "expected the sender to get as far as DONE before the drop, it stopped "
			 "at step %d: %s",
			 step, why);
}

/* Runs the lab3 program on the test's file as its student ID; it must end as EXPECT says. */
static void e2e_check(struct rl_case *c, enum e2e_expect expect)
{
	const struct ref_in *in = ref_in(c);
	struct ref_line line;
	struct ref_run run;
	char why[320];
	int attempt, skip;

	/*
	 * A run the receiver never heard of, that failed in rdma_cm (the
	 * framework's messages name the call, rdma_...), gets a second try: a
	 * loaded machine can lose a connection attempt.
	 */
	for (attempt = 1; attempt <= 2; attempt++) {
		skip = ref_count_lines();
		ref_run_sender(0, in->id, ref_sender_timeout(), ref_check_ms_left(), &run);
		ref_line_of_run(skip, in->id, &line);
		if (line.text[0] || !strstr(run.err, "rdma_"))
			break;
	}
	ref_last_line(run.err, why, sizeof(why));
	if (rl_expect(c, run.status != -1,
		      "expected the sender to end within the test's limit, it was still running "
		      "after %.0f s: killed%s",
		      run.seconds, rl_graded_limit_note())) {
		if (expect == E2E_KEY)
			ref_expect_key(c, &run, 0, in->id, &line);
		else
			e2e_failure_ok(c, &run, expect, &line, why);
	}
	ref_cleanup();
}

void e2e_earns_the_key(struct rl_case *c)
{
	e2e_check(c, E2E_KEY);
}

void e2e_reports_a_bad_hash(struct rl_case *c)
{
	e2e_check(c, E2E_BAD);
}

void e2e_ends_when_dropped(struct rl_case *c)
{
	e2e_check(c, E2E_DROPPED);
}
