/* test_crash_report.c: a test that crashes reports the signal, the function and the line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness.h"

/* What crash_victim (beside this program) printed, stdout and stderr, and how it ended. */
struct victim_run {
	char *out;
	int status;
};

static struct victim_run run_victim(void)
{
	struct victim_run run = { .out = NULL };
	char path[4096];
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd[2];
	pid_t pid;

	n = readlink("/proc/self/exe", path, sizeof(path) - sizeof("crash_victim"));
	ck_assert_msg(n > 0, "expected this program's path, got none");
	path[n] = '\0';
	strcpy(strrchr(path, '/') + 1, "crash_victim");
	ck_assert_msg(pipe(fd) == 0, "expected a pipe");
	pid = fork();
	ck_assert_msg(pid >= 0, "expected to fork");
	if (pid == 0) {
		/* As lab-check runs a lab's tests: forked, output to a pipe. */
		dup2(fd[1], STDOUT_FILENO);
		dup2(fd[1], STDERR_FILENO);
		close(fd[0]);
		close(fd[1]);
		setenv("CK_FORK", "yes", 1);
		setenv("CK_VERBOSITY", "normal", 1);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	do {
		if (cap - len < 1024) {
			cap = cap ? 2 * cap : 4096;
			run.out = realloc(run.out, cap);
			ck_assert_msg(run.out, "expected memory for the victim's output");
		}
		n = read(fd[0], run.out + len, cap - len - 1);
		len += n > 0 ? (size_t)n : 0;
	} while (n > 0);
	run.out[len] = '\0';
	close(fd[0]);
	ck_assert_msg(waitpid(pid, &run.status, 0) == pid, "expected the victim to exit");
	return run;
}

/* The line the victim says its crash is on, after "at crash_victim.c:" in WHAT. */
static int announced_line(const char *out, const char *what)
{
	const char *at = strstr(out, what);

	ck_assert_msg(at, "expected the victim's own output \"%s...\" before its crash, got:\n%s",
		      what, out);
	return atoi(at + strlen(what));
}

static void expect_in(const char *out, const char *want)
{
	ck_assert_msg(strstr(out, want), "expected \"%s\" in the victim's output, got:\n%s", want,
		      out);
}

START_TEST(test_null_dereference_names_signal_function_and_line)
{
	struct victim_run run = run_victim();
	char want[128];
	int line = announced_line(run.out, "dereferencing NULL at crash_victim.c:");

	expect_in(run.out, "crash in test reads_through_null: SIGSEGV (segmentation fault) at "
			   "address 0x0\n");
	snprintf(want, sizeof(want), "#0 victim_read_through_null (tests/unit/crash_victim.c:%d)\n",
		 line);
	expect_in(run.out, want);
	expect_in(run.out, "#1 reads_through_null_fn (tests/unit/crash_victim.c:");
	free(run.out);
}
END_TEST

START_TEST(test_abort_names_signal_and_the_caller_in_libc)
{
	struct victim_run run = run_victim();
	char want[128];
	int line = announced_line(run.out, "calling abort() at crash_victim.c:");

	expect_in(run.out, "crash in test aborts: SIGABRT");
	expect_in(run.out, "#0 in libc.so.6\n");
	snprintf(want, sizeof(want), "#1 victim_abort (tests/unit/crash_victim.c:%d)\n", line);
	expect_in(run.out, want);
	free(run.out);
}
END_TEST

START_TEST(test_check_still_fails_the_crashed_tests_by_their_signal)
{
	struct victim_run run = run_victim();

	expect_in(run.out, "reads_through_null:0: (after this point) Received signal 11");
	expect_in(run.out, "aborts:0: (after this point) Received signal 6");
	expect_in(run.out, "Checks: 3, Failures: 0, Errors: 2");
	ck_assert_msg(WIFEXITED(run.status) && WEXITSTATUS(run.status) == EXIT_FAILURE,
		      "expected the victim to exit with %d, got status 0x%x", EXIT_FAILURE,
		      run.status);
	free(run.out);
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("crash_report");
	TCase *tc = tcase_create("crash_report");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_UNIT);
	tcase_add_test(tc, test_null_dereference_names_signal_function_and_line);
	tcase_add_test(tc, test_abort_names_signal_and_the_caller_in_libc);
	tcase_add_test(tc, test_check_still_fails_the_crashed_tests_by_their_signal);
	suite_add_tcase(s, tc);
	return s;
}
