/*
 * act.c: the act's side of the graded runner, the code a test's act runs
 * before and around the lab's code: the test it belongs to, its time
 * limit, and rl_act_main(), which readies the child and calls the act.
 * Everything else of the runner (graded.c, case.c, res.c) is the judge's:
 * it is unmapped in the act (tests/harness.h, "What the act holds").
 */
#define _GNU_SOURCE /* close_range */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "graded.h"
#include "rdmalab.h"

/* The test running now, set by the parent before its act's fork. */
static const struct rl_graded *running_test;
static bool running_after_a_hang;

void rl_act_set_running(const struct rl_graded *g, bool after_a_hang)
{
	running_test = g;
	running_after_a_hang = after_a_hang;
}

const struct rl_graded *rl_graded_test(void)
{
	return running_test;
}

bool rl_graded_after_a_hang(void)
{
	return running_after_a_hang;
}

double rl_graded_limit(void)
{
	return rl_case_limit(running_test, running_after_a_hang);
}

const char *rl_graded_limit_note(void)
{
	return running_after_a_hang ? RL_AFTER_A_HANG_NOTE : "";
}

const char *rl_running_test_name(void)
{
	return running_test ? running_test->name : NULL;
}

/*
 * Once a test of a step hangs to its limit, the step's other tests get this
 * share of it: a step whose function never returns costs its limit about
 * once, not once per test, and a test that does not hang still has many
 * times the seconds it needs (the slowest, Lab 3's programs, take a few).
 */
#define RL_AFTER_A_HANG 4.0

double rl_case_limit(const struct rl_graded *g, bool after_a_hang)
{
	double limit = RL_TEST_TIMEOUT_RDMA;

	if (g->limit && g->limit < limit)
		limit = g->limit;
	return after_a_hang ? limit / RL_AFTER_A_HANG : limit;
}

/* Ends the act before its code ran: WHY goes to the parent as the test's message. */
static void __attribute__((noreturn)) act_abort(const char *why)
{
	rl_say_record(RL_REC_ABORT, "", why, strlen(why));
	_exit(RL_ACT_ABORTED);
}

/*
 * In the child: stdout and stderr to OUT, the report pipe on fd 3 and the
 * release pipe on fd 4, every other descriptor closed; the judge's code
 * and the kit's own version of this step unmapped (hide.c); locked down;
 * then the act, and the record that says it returned.
 */
void rl_act_main(struct rl_case *c, int out, int report, int release)
{
	int null = open("/dev/null", O_RDONLY);
	char why[512];

	report = fcntl(report, F_DUPFD, 10);
	release = fcntl(release, F_DUPFD, 10);
	if (null < 0 || report < 0 || release < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 ||
	    dup2(out, 2) < 0 || dup2(report, 3) < 0 || dup2(release, 4) < 0)
		_exit(RL_ACT_LOST);
	close_range(5, ~0U, 0);
	rl_act = (struct rl_act_state){ .report_fd = 3, .release_fd = 4, .in_act = true };
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	rl_crash_raw_frames();
	if (rl_hide_steps(c->g->step, why, sizeof(why)))
		act_abort(why);
	if (rl_lockdown())
		act_abort("could not lock the test's process down (seccomp)");
	c->g->act(c);
	rl_say_record(RL_REC_END, "", NULL, 0);
	_exit(0);
}
