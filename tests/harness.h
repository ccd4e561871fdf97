/* harness.h: what every Check test program shares (see tests/harness.c). */
#ifndef RDMALAB_TEST_HARNESS_H
#define RDMALAB_TEST_HARNESS_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Each tests/{unit,rdma}/test_*.c defines this and nothing else global:
 * tests/main.c runs the suite it returns.
 */
Suite *rl_test_suite(void);

/*
 * Sets up what every test program needs: crash reports (naming the test
 * TEST_NAME returns), unbuffered stdout.
 */
void rl_harness_start(const char *(*test_name)(void));
/* In a graded act: crash reports give frames as offsets (exe+0x...), for the parent to resolve. */
void rl_crash_raw_frames(void);

/*
 * A lab's graded test (tests/labN/test_*.c) is three functions and one
 * declaration of its grade. The student's code acts; a process that runs
 * none of it judges (tests/graded.c):
 *
 *   setup (optional), in the test program's parent: chooses the test's
 *       inputs (at random, for this run) into c->in. Never an expected
 *       value: the act sees everything setup wrote.
 *   act (optional), in a child of its own, locked down (rl_lockdown()):
 *       calls the lab's code on c->in and says what it observed, with
 *       rl_say_*(): return values, buffers, sizes. It holds no expected
 *       value. rl_hold() keeps it, and what it made, alive while the
 *       parent looks at them from outside (rdma resource tracking).
 *   check, in the parent: computes what was expected from c->in, itself,
 *       and compares it with what the act said (rl_said_*()), with what the
 *       kernel or a peer saw, and with what the lab's programs did when the
 *       check ran them (a test of a whole program has no act). The first
 *       rl_expect() that fails is the test's message.
 *
 *   RL_GRADED(a_file_hashes_to_its_sha256, .step = 1, .points = 1,
 *             .setup = empty_file, .act = hash_it, .check = sha256sum_agrees)
 *
 * and, when it is only worth running once an earlier step passed every
 * test, `.needs = 6`. A test of the lab's whole program says so (`.whole =
 * true`): it is skipped while an earlier step passed none of its tests,
 * that is, while that step is still to do and the program would only stop
 * at its "not implemented". A test that needs less time than the RDMA tests'
 * limit says so (`.limit = 30`, seconds), and one that talks to a
 * reference receiver names the receiver's options (`.receiver =
 * "--fault-window 4096"`, "" for none): in the grader that receiver is one
 * the grader runs, with a secret out of the student's reach, and otherwise
 * the test's setup starts it (ref_setup, tests/lab3/reference.c). The
 * lab's test program collects these declarations from all of the lab's
 * test files, runs them step by
 * step and writes the results; nothing else lists the tests, their points or
 * their receivers (the program's --rubric and --receivers print them).
 * A child that fails a ck_assert (the act's own set-up failed), crashes,
 * hangs, ends before its act returns, or says more than RL_SAY_MAX bytes
 * fails the test.
 */
#define RL_CASE_IN 4096 /* bytes of inputs a test's setup may write */
#define RL_SAY_MAX (4 << 20)

struct rl_case;

struct rl_graded {
	const char *name;
	const char *file;
	int line;
	int lab;              /* RL_LAB, from the lab's header (labN.h) */
	int step;             /* make check LAB=N STEP=k runs the tests of step k */
	int points;           /* earned when the test passes */
	int needs;            /* skipped, not run, when this earlier step failed; 0: none */
	bool whole;           /* the whole program's: skipped while a step before passed none */
	int limit;            /* seconds before the multiplier, if under the RDMA limit; 0: it */
	const char *receiver; /* the reference receiver's options; NULL: no receiver */
	void (*setup)(struct rl_case *c);
	void (*act)(struct rl_case *c);
	void (*check)(struct rl_case *c);
};

/* One run of a graded test: its declaration and its inputs (the rest is the runner's). */
struct rl_case {
	const struct rl_graded *g;
	void *in;   /* RL_CASE_IN bytes, zeroed, written by setup, read by act and check */
	void *priv; /* the runner's */
};

#define RL_GRADED(name_, ...)                                                                      \
	static const struct rl_graded name_##_grade = {                                            \
		.name = #name_, .file = __FILE__, .line = __LINE__, .lab = RL_LAB, __VA_ARGS__     \
	};                                                                                         \
	static const struct rl_graded *const name_##_entry                                         \
		__attribute__((used, section("rl_graded"))) = &name_##_grade

/*
 * What the act holds. An act's process holds, when the lab's code first
 * runs in it:
 *   - the student's code;
 *   - the framework's functions (those the lab's rules let the student
 *     call, and those the fixtures call);
 *   - the fixtures' versions of the other steps;
 *   - the act itself, the runner's act side (act.c, say.c, hide.c,
 *     harness.c) and c->in.
 * It never holds the fixture's, the framework's or a reference's version
 * of the step under test, the code of any check or setup, code only checks
 * use, or the judge's runner (graded.c, case.c, res.c): the test program
 * is linked with its hide script, which gathers them into page-aligned
 * sections, and the act unmaps them before the lab's code runs (hide.c).
 * Checks and setups are found from RL_GRADED; the rest is declared, after
 * its definition: RL_HIDDEN(ref_send_file_info, 2) for the kit's version
 * of step 2, RL_HIDDEN(expected_gid_index, 0) for code only checks use. An
 * act that runs one anyway fails with a crash (it is not there), and one
 * that is not where the script put it stops every act of the program
 * (hide.c checks before it unmaps). `steps --act-memory` checks every
 * step's act from outside. Nor does the act hold a value any expectation
 * is derived from: setup writes into c->in only what the student's side
 * may know (a peer's secret goes to the peer by its own channel; see
 * docs/labs-howto.md). A test of step K whose act calls the kit's own step
 * K declares none (it would crash).
 */
struct rl_hidden {
	const void *fn;
	int step;
};
#define RL_HIDDEN(fn_, step_)                                                                      \
	static const struct rl_hidden fn_##_hidden = { (const void *)(fn_), (step_) };             \
	static const struct rl_hidden *const fn_##_hidden_entry                                    \
		__attribute__((used, section("rl_hidden"))) = &fn_##_hidden

/* The graded test running now (setup, act or check), in any process. */
const struct rl_graded *rl_graded_test(void);
/* Its time limit in seconds, before the multiplier: a quarter of it once a
 * test before it in its step hung (rl_graded_after_a_hang). */
double rl_graded_limit(void);
bool rl_graded_after_a_hang(void);
/* "" or, after a hang, the words that say why the limit was a quarter. */
const char *rl_graded_limit_note(void);
/* In a setup or check: a program it ran took the whole limit, so its step
 * counts as hung, as when an act does. */
void rl_graded_hung(void);

/* In the act: say what the lab's code did (each NAME once). */
void rl_say_int(const char *name, long long v);
void rl_say_str(const char *name, const char *s);
void rl_say_bytes(const char *name, const void *p, size_t n);
/* In the act: wait while the parent checks this process from outside. */
void rl_hold(void);

/* In the check: what the act said; a NAME it did not say fails the test. */
long long rl_said_int(struct rl_case *c, const char *name);
const char *rl_said_str(struct rl_case *c, const char *name);
const void *rl_said_bytes(struct rl_case *c, const char *name, size_t *n);
/* Whether the act said NAME. */
bool rl_said(struct rl_case *c, const char *name);
/* In the check: the act's process ID (while it holds), 0 when it has none. */
int rl_act_pid(struct rl_case *c);
/* In the check: OK, or the test fails with FMT (the first failure only). */
bool rl_expect(struct rl_case *c, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Whether an expectation failed already. */
bool rl_failed(struct rl_case *c);

/*
 * In a check (res.c): what the kernel's RDMA resource tracking says a
 * process holds, from `rdma -j -d res show KIND` (KIND: pd, cq, qp, mr):
 * each object's members as strings ("lqpn", "state", "rqpn", "sq-psn",
 * "rkey", "lkey", "mrlen", "cqe", "pdn", "pid", ...; keys in hex as rdma
 * prints them). Ask while the act holds (rl_hold), with rl_act_pid().
 */
#define RL_RES_MEMBERS 24
struct rl_res_member {
	char key[32];
	char val[64];
};
struct rl_res {
	int n;
	struct rl_res_member m[RL_RES_MEMBERS];
};
/* The objects of KIND that process PID holds (any process when PID is 0), at most MAX: their number, or -1. */
int rl_rdma_res(const char *kind, int pid, struct rl_res *out, int max);
/* TEXT (an array of flat JSON objects) into OUT, at most MAX: their number, or -1. */
int rl_res_parse(const char *text, struct rl_res *out, int max);
/* The value of member KEY of R, or NULL. */
const char *rl_res_get(const struct rl_res *r, const char *key);

/*
 * Per-test timeout in seconds for hang detection only. Check multiplies it
 * by CK_TIMEOUT_MULTIPLIER, the one knob for slow machines. The grader
 * shortens it with RDMALAB_TEST_TIMEOUT (seconds, before the multiplier), so
 * a student's hanging step costs seconds, not minutes.
 */
#define RL_TEST_TIMEOUT_UNIT rl_test_timeout(10)
#define RL_TEST_TIMEOUT_RDMA rl_test_timeout(120)
double rl_test_timeout(double seconds);

/*
 * The RDMA device the environment names (RDMALAB_DEVICE, set by vm/run-rdma).
 * Fails the calling test, never skips it, when no device is named.
 */
const char *rl_test_device(void);

/* The GID index the environment names (RDMALAB_GID_INDEX), or fails. */
int rl_test_gid_index(void);

/* The device port the environment names (RDMALAB_IB_PORT), else 1. */
uint8_t rl_test_ib_port(void);

/* The IPv4 address of the device (RDMALAB_ADDR), or fails. */
const char *rl_test_addr(void);

/* A TCP port free on this machine now, for a test's server to listen on. */
uint16_t rl_test_free_port(void);

/*
 * A fresh random payload for a test to send and check: between (SIZE - 1) / 2
 * and SIZE - 1 letters and digits, then a NUL. New on every run, so code
 * under test cannot know it in advance; printable, so a failure shows it.
 */
void rl_test_random_text(char *text, size_t size);

#endif
