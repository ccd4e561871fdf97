/*
 * graded.h: the graded runner's own parts (tests/graded.c, case.c, say.c);
 * a lab's tests see tests/harness.h only.
 */
#ifndef RDMALAB_TEST_GRADED_H
#define RDMALAB_TEST_GRADED_H

#include <stdbool.h>
#include <stddef.h>

#include "harness.h"

/* The kinds of record an act sends (say.c) and the parent reads (case.c). */
#define RL_REC_INT 'I'
#define RL_REC_STR 'S'
#define RL_REC_BYTES 'B'
#define RL_REC_HOLD 'H'  /* the act waits while the parent checks */
#define RL_REC_END 'E'   /* the act returned */
#define RL_REC_ABORT 'A' /* the act's own set-up failed: the value says how */

/* The act's exit statuses of its own (the parent tells them apart). */
#define RL_ACT_ABORTED 97
#define RL_ACT_LOST 98 /* the report pipe broke */

/* In the act's child: where it reports, where it waits while held. */
struct rl_act_state {
	int report_fd;
	int release_fd;
	bool in_act;
};
extern struct rl_act_state rl_act;

/* say.c: one record to the parent. */
void rl_say_record(char kind, const char *name, const void *value, size_t len);

/* How one test ended, as the parent decided. */
struct rl_result {
	const char *result; /* "pass", "FAIL" or "skipped" */
	char *message;      /* malloc'd: why not pass; "" when it passed */
	char *said;         /* malloc'd: what the test's processes printed (bounded) */
	long long ms;       /* how long it took */
	bool hung;          /* it ran out of its time limit */
};

/* case.c: run test G (a quarter of its limit AFTER_A_HANG in its step). */
void rl_run_case(const struct rl_graded *g, bool after_a_hang, struct rl_result *r);
/* case.c: in a setup or a check, fail the running test with TEXT and return to the runner. */
void rl_case_abort(const char *text) __attribute__((noreturn));
/* hide.c: trap every RL_HIDDEN function of step STEP (and of step 0): 0 or a negative errno. */
int rl_hide_steps(int step);
/* case.c: the name of the test running now, or NULL (for crash reports). */
const char *rl_running_test_name(void);
/* case.c: the seconds test G may take (before the multiplier), a quarter after a hang. */
double rl_case_limit(const struct rl_graded *g, bool after_a_hang);

#endif
