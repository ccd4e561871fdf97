/* harness.h: what every Check test program shares (see tests/harness.c). */
#ifndef RDMALAB_TEST_HARNESS_H
#define RDMALAB_TEST_HARNESS_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Each tests/{unit,rdma}/test_*.c defines this and nothing else global:
 * tests/main.c runs the suite it returns.
 */
Suite *rl_test_suite(void);

/* Sets up what every test program needs: crash reports, unbuffered stdout. */
void rl_harness_start(void);

/*
 * A lab's graded test declares its grade where its body is, in place of
 * START_TEST:
 *
 *   RL_TEST(opening_a_device_by_its_name_gives_that_device, .step = 3, .points = 2)
 *   {
 *           ...
 *   }
 *   END_TEST
 *
 * and, when it is only worth running once an earlier step passed every
 * test, `.needs = 6`. A test that needs less time than the RDMA tests'
 * limit says so (`.limit = 30`, seconds), and one that talks to a
 * reference receiver names the receiver's options (`.receiver =
 * "--fault-window 4096"`, "" for none): in the grader that receiver is one
 * the grader runs, with a secret out of the student's reach, and otherwise
 * the test starts it (tests/lab3/e2e.c). The lab's test program
 * (tests/graded.c) collects these declarations from all of the lab's test
 * files, runs them step by step and writes the results; nothing else lists
 * the tests, their points or their receivers (scripts/rubric reads the
 * same declarations).
 */
struct rl_graded {
	const TTest *test;
	int step;             /* make check LAB=N STEP=k runs the tests of step k */
	int points;           /* earned when the test passes */
	int needs;            /* skipped, not run, when this earlier step failed; 0: none */
	int limit;            /* seconds before the multiplier, if under the RDMA limit; 0: it */
	const char *receiver; /* the reference receiver's options; NULL: no receiver */
};

/* In a graded test's child: the test's declaration. */
const struct rl_graded *rl_graded_test(void);

#define RL_TEST(name_, ...)                                                                        \
	static void name_##_fn(int _i CK_ATTRIBUTE_UNUSED);                                        \
	static const TTest name_##_ttest = { #name_, name_##_fn, __FILE__, __LINE__ };             \
	static const struct rl_graded name_##_grade = { .test = &name_##_ttest, __VA_ARGS__ };     \
	static const struct rl_graded *const name_##_entry                                         \
		__attribute__((used, section("rl_graded"))) = &name_##_grade;                      \
	static void name_##_fn(int _i CK_ATTRIBUTE_UNUSED)

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
