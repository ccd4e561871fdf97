/* e2e.c: Lab 3 end to end: the lab3 program against the test's reference receiver (e2e.h). */
#include <string.h>

#include "reference.h"
#include "e2e.h"

void e2e_setup(struct rl_case *c, uint64_t size)
{
	ref_setup(c, &size, 1);
}

/* Runs the lab3 program on the test's file as its student ID; it must print the key. */
void e2e_earns_the_key(struct rl_case *c)
{
	const struct ref_in *in = ref_in(c);
	struct ref_line line;
	struct ref_run run;
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
	if (rl_expect(c, run.status != -1,
		      "expected the sender to end within the test's limit, it was still running "
		      "after %.0f s: killed%s",
		      run.seconds, rl_graded_limit_note()))
		ref_expect_key(c, &run, 0, in->id, &line);
	ref_cleanup();
}
