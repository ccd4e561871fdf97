/*
 * test_hide.c: tests/hide.c on the host's kernel, which enforces no-execute
 * (User-Mode Linux does not: there a page made read+write still runs, which
 * hid Lab 2's crash on every real kernel). hide.c is compiled into this file,
 * so that the functions it hides sit in the same section as the code that
 * hides them, as they did in Lab 2's test program: a page then holds both.
 * Each test hides in a child of its own, whose copy of the pages alone is
 * overwritten, so that the tests hold under valgrind (no fork) too.
 */
#include "../hide.c" /* first: it defines _GNU_SOURCE */

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>

#include "../harness.h"

/* A step's own version, and a check's code, as a fixture declares them. */
__attribute__((noinline)) int hide_test_step_one(int x)
{
	return x + 1;
}
RL_HIDDEN(hide_test_step_one, 1);

__attribute__((noinline)) int hide_test_check_only(int x)
{
	return x * 2;
}
RL_HIDDEN(hide_test_check_only, 0);

static uintptr_t page_of(const void *p)
{
	return (uintptr_t)p & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);
}

/*
 * In a child of its own (whatever Check's fork mode, valgrind's included):
 * hides STEP's functions, then calls FN(41) when FN is given. Returns the
 * signal that ended the child, 0 when it exited and FN gave 42 (or there was
 * no FN), -1 otherwise. This process never runs a hidden function.
 */
static int hide_then_call(int step, int (*fn)(int))
{
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (rl_hide_steps(step))
			_exit(1);
		_exit(fn == NULL || fn(41) == 42 ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		return WTERMSIG(status);
	return WEXITSTATUS(status) == 0 ? 0 : -1;
}

START_TEST(hiding_runs_on_a_page_it_shares_with_a_hidden_function)
{
	/* The case that crashed: the writer's own page made non-executable. */
	ck_assert_msg(page_of((const void *)rl_hide_steps) == page_of((const void *)hide_test_step_one),
		      "premise: rl_hide_steps (%p) and hide_test_step_one (%p) should share a page",
		      (void *)rl_hide_steps, (void *)hide_test_step_one);
	ck_assert_int_eq(hide_then_call(1, NULL), 0);
}
END_TEST

START_TEST(a_hidden_step_traps_when_called)
{
	ck_assert_int_eq(hide_then_call(1, hide_test_step_one), SIGILL);
}
END_TEST

START_TEST(a_check_only_function_traps_in_every_step)
{
	ck_assert_int_eq(hide_then_call(3, hide_test_check_only), SIGILL);
}
END_TEST

START_TEST(another_steps_version_still_runs)
{
	ck_assert_int_eq(hide_then_call(2, hide_test_step_one), 0);
}
END_TEST

/* In a child: after hiding, the hidden function's page is r-xp again. */
static void hidden_page_is_read_and_execute(void)
{
	char line[512], perms[5] = "";
	uintptr_t page = page_of((const void *)hide_test_step_one), lo, hi;
	FILE *maps;

	if (rl_hide_steps(1))
		_exit(1);
	maps = fopen("/proc/self/maps", "r");
	if (maps == NULL)
		_exit(1);
	while (fgets(line, sizeof(line), maps))
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 && page >= lo && page < hi)
			break;
	fclose(maps);
	_exit(strcmp(perms, "r-xp") == 0 ? 0 : 1);
}

START_TEST(hidden_pages_are_executable_again_and_not_writable)
{
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		hidden_page_is_read_and_execute();
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the hidden function's page should be r-xp after rl_hide_steps");
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("hide");
	TCase *tc = tcase_create("no_execute");

	tcase_add_test(tc, hiding_runs_on_a_page_it_shares_with_a_hidden_function);
	tcase_add_test(tc, a_hidden_step_traps_when_called);
	tcase_add_test(tc, a_check_only_function_traps_in_every_step);
	tcase_add_test(tc, another_steps_version_still_runs);
	tcase_add_test(tc, hidden_pages_are_executable_again_and_not_writable);
	suite_add_tcase(s, tc);
	return s;
}
