/*
 * graded_victim.c: a lab's test program in miniature, each of its tests
 * one way a test can end, run by tests/grader/test-graded to check
 * tests/graded.c. No RDMA.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../harness.h"

RL_TEST(passes, .step = 1, .points = 2)
{
	ck_assert_int_eq(1, 1);
}
END_TEST

RL_TEST(fails_an_assertion, .step = 1, .points = 1)
{
	ck_assert_msg(0, "expected 1, got 0");
}
END_TEST

RL_TEST(exits_with_status_0_before_its_end, .step = 2, .points = 1)
{
	exit(0);
}
END_TEST

/*
 * Passes, leaving a daemon (forked twice, in a session of its own) that
 * writes its PID to $VICTIM_DAEMON_PID and sleeps: the runner must kill it.
 */
RL_TEST(passes_and_leaves_a_daemon, .step = 2, .points = 1)
{
	const char *file = getenv("VICTIM_DAEMON_PID");
	FILE *f;

	if (fork() == 0) {
		setsid();
		if (fork() == 0) {
			f = file ? fopen(file, "w") : NULL;
			if (f) {
				fprintf(f, "%d\n", (int)getpid());
				fclose(f);
			}
			sleep(60);
		}
		_exit(0);
	}
	sleep(1);
}
END_TEST

RL_TEST(needs_step_2, .step = 3, .points = 1, .needs = 2)
{
	ck_assert_int_eq(2, 2);
}
END_TEST

/* Fails with a message that quotes a passing results line. */
RL_TEST(fails_quoting_a_results_line, .step = 3, .points = 3)
{
	ck_assert_msg(0, "the output was:\n3\tneeds_step_2\tpass\t1\t1\t\nand a \\ backslash");
}
END_TEST

RL_TEST(crashes, .step = 4, .points = 1)
{
	raise(SIGSEGV);
}
END_TEST

/* Step 5 never returns: the first test runs out its time limit... */
RL_TEST(hangs, .step = 5, .points = 1)
{
	for (;;)
		pause();
}
END_TEST

/* ...and the others of the step get a quarter of it, */
RL_TEST(hangs_too, .step = 5, .points = 1)
{
	for (;;)
		pause();
}
END_TEST

/* which is ample for a test that does not hang. */
RL_TEST(passes_after_the_hangs, .step = 5, .points = 1)
{
	ck_assert_int_eq(2 + 2, 4);
}
END_TEST

/*
 * Declares a limit under the RDMA tests' (test-graded sets that to 2 s) and
 * takes longer than it, though less than the RDMA tests' limit: it fails.
 */
RL_TEST(runs_past_its_own_limit, .step = 6, .points = 1, .limit = 1)
{
	const char *m = getenv("CK_TIMEOUT_MULTIPLIER");

	usleep((useconds_t)(1500000 * (m && atof(m) > 0 ? atof(m) : 1)));
}
END_TEST

/* Its child finds its own declaration, the receiver's options included. */
RL_TEST(finds_its_declaration, .step = 6, .points = 1, .receiver = "--fault-drop 4")
{
	const struct rl_graded *g = rl_graded_test();

	ck_assert_str_eq(g->test->name, "finds_its_declaration");
	ck_assert_str_eq(g->receiver, "--fault-drop 4");
}
END_TEST
