/*
 * graded.h: the graded runner's own parts (tests/graded.c, case.c, act.c, say.c, hide.c);
 * a lab's tests see tests/harness.h only.
 */
#ifndef RDMALAB_TEST_GRADED_H
#define RDMALAB_TEST_GRADED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

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

/* Why a test had a quarter of its limit, after "Test timeout expired" and the like. */
#define RL_AFTER_A_HANG_NOTE                                                                       \
	" (a test before it in this step hung, so it had a quarter of the time limit)"

/* case.c: run test G (a quarter of its limit AFTER_A_HANG in its step). */
void rl_run_case(const struct rl_graded *g, bool after_a_hang, struct rl_result *r);
/* case.c: in a setup or a check, fail the running test with TEXT and return to the runner. */
void rl_case_abort(const char *text) __attribute__((noreturn));
/*
 * hide.c: unmaps, in the act of a test of step STEP, the sections the
 * program's hide script made (rl_hide_0: the judge's code, every check and
 * setup, what only checks use; rl_hide_STEP: the kit's own version of
 * STEP), after checking that each function that must be hidden lies in
 * one. 0, or -1 with the reason in WHY (of SIZE bytes).
 */
int rl_hide_steps(int step, char *why, size_t size);
/* hide.c: writes the program's hide script (a linker script) to F: 0, or -1 with the reason in WHY. */
int rl_hide_script(FILE *f, char *why, size_t size);
/* hide.c: the act of --act-memory: says /proc/self/maps as "maps". */
void rl_hide_say_maps(struct rl_case *c);
/*
 * hide.c: the check of --act-memory: no function the act of this step must
 * not hold is mapped, nor the judge's code. Returns how many it looked for.
 */
int rl_hide_check_maps(struct rl_case *c);

/* act.c: the test running now (the parent sets it before the act's fork). */
void rl_act_set_running(const struct rl_graded *g, bool after_a_hang);
/* act.c: in the act's child (case.c forks it): never returns. */
void rl_act_main(struct rl_case *c, int out, int report, int release) __attribute__((noreturn));
/* act.c: the name of the test running now, or NULL (for crash reports). */
const char *rl_running_test_name(void);
/* act.c: the seconds test G may take (before the multiplier), a quarter after a hang. */
double rl_case_limit(const struct rl_graded *g, bool after_a_hang);

#endif
