/*
 * graded.c: main() for a lab's test program. It runs the lab's graded tests
 * (RL_TEST in tests/harness.h), each in a child of its own, and writes the
 * results. The process running this file is the only writer of the
 * results and runs no student code: student functions run only in the test
 * children (the grader refuses constructors, see grader/README.md).
 *
 *   PROG [--step K] [--all] [--results FILE]
 *       run the tests (of step K only), and write one line per test to FILE
 *       (else print them): step, test, result (pass, FAIL, skipped), points
 *       earned, points, message (newlines written \n, tabs \t, backslashes
 *       \\). A test whose .needs step failed is skipped, not run, unless
 *       --all (make check-labs runs every test on the stubs). Exits 1 when
 *       a test did not pass, 2 on a usage error.
 *   PROG --rubric
 *       print the tests, one per line: step, test, points, needs (- for none).
 *   PROG --receivers
 *       print the tests that talk to a reference receiver, one per line:
 *       test, the receiver's options (the grader starts those receivers).
 */
#define _GNU_SOURCE /* pipe2 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

/* Each graded test's declaration, put in this section by RL_TEST. */
extern const struct rl_graded *const __start_rl_graded[];
extern const struct rl_graded *const __stop_rl_graded[];

#define MAX_STEP 64 /* steps are numbered 1 to MAX_STEP - 1 */

struct options {
	int step;            /* 0: every step */
	int all;             /* run the tests of a failed step's dependents too */
	int rubric;          /* print the tests instead of running them */
	int receivers;       /* print the tests' receivers instead of running them */
	const char *results; /* NULL: print the results */
};

struct row {
	const struct rl_graded *g;
	const char *result; /* "pass", "FAIL" or "skipped" */
	char *message;      /* malloc'd, "" when none */
};

/*
 * The test being run. A child that runs the test body to its last line
 * writes TOKEN, drawn afresh for each test, on the pipe: a child that
 * ends early (exit(0) in code under test) cannot have written it, and a
 * process left over from an earlier test never knew it.
 */
static struct {
	const struct rl_graded *g;
	unsigned char token[16];
	int done_fd;
} current;

static int by_step(const void *a, const void *b)
{
	const struct rl_graded *x = *(const struct rl_graded *const *)a;
	const struct rl_graded *y = *(const struct rl_graded *const *)b;
	int c = strcmp(x->test->file, y->test->file);

	if (x->step != y->step)
		return x->step - y->step;
	return c ? c : x->test->line - y->test->line;
}

static void die(const char *what, const struct rl_graded *g)
{
	fprintf(stderr, "%s:%d: test %s %s\n", g->test->file, g->test->line, g->test->name, what);
	exit(2);
}

/* The lab's tests in step order, checked; their number in *N. */
static const struct rl_graded **collect(size_t *n)
{
	size_t i, j, count = (size_t)(__stop_rl_graded - __start_rl_graded);
	const struct rl_graded **t = calloc(count ? count : 1, sizeof(*t));

	if (!t) {
		perror("graded: calloc");
		exit(2);
	}
	memcpy(t, __start_rl_graded, count * sizeof(*t));
	qsort(t, count, sizeof(*t), by_step);
	for (i = 0; i < count; i++) {
		if (t[i]->step < 1 || t[i]->step >= MAX_STEP)
			die("needs .step = 1 to 63", t[i]);
		if (t[i]->points < 1)
			die("needs .points = 1 or more", t[i]);
		if (t[i]->needs < 0 || t[i]->needs >= t[i]->step)
			die("can only need an earlier step (.needs)", t[i]);
		if (t[i]->limit < 0)
			die("needs .limit = 1 or more seconds, or none", t[i]);
		for (j = 0; j < i; j++)
			if (strcmp(t[i]->test->name, t[j]->test->name) == 0)
				die("is declared twice", t[i]);
	}
	*n = count;
	return t;
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [--step K] [--all] [--results FILE] | --rubric | --receivers\n",
		prog);
	exit(2);
}

static struct options parse(int argc, char **argv)
{
	struct options o = { 0 };
	char *end;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--rubric") == 0) {
			o.rubric = 1;
		} else if (strcmp(argv[i], "--receivers") == 0) {
			o.receivers = 1;
		} else if (strcmp(argv[i], "--all") == 0) {
			o.all = 1;
		} else if (strcmp(argv[i], "--results") == 0 && i + 1 < argc) {
			o.results = argv[++i];
		} else if (strcmp(argv[i], "--step") == 0 && i + 1 < argc) {
			o.step = (int)strtol(argv[++i], &end, 10);
			if (*end || o.step < 1 || o.step >= MAX_STEP) {
				fprintf(stderr, "%s: --step wants a step number, got \"%s\"\n",
					argv[0], argv[i]);
				exit(2);
			}
		} else {
			usage(argv[0]);
		}
	}
	return o;
}

const struct rl_graded *rl_graded_test(void)
{
	return current.g;
}

/* In the test's child: the test body, then the token that says it ended. */
static void run_body(int _i)
{
	(void)_i;
	current.g->test->fn(0);
	if (write(current.done_fd, current.token, sizeof(current.token)) < 0)
		ck_abort_msg("could not say the test ended: %s", strerror(errno));
}

/* Whether the child wrote this test's token, and nothing else, on FD. */
static int body_ended(int fd)
{
	unsigned char got[2 * sizeof(current.token)];
	ssize_t n = read(fd, got, sizeof(got));

	return n == (ssize_t)sizeof(current.token) &&
	       memcmp(got, current.token, sizeof(current.token)) == 0;
}

/* The PIDs of this process's children, at most MAX, from /proc. */
static int children(pid_t *pid, int max)
{
	DIR *proc = opendir("/proc");
	struct dirent *d;
	char path[300], stat[512], *after;
	int n = 0, fd;
	ssize_t len;

	if (!proc)
		return 0;
	while (n < max && (d = readdir(proc))) {
		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", d->d_name);
		fd = open(path, O_RDONLY);
		len = fd < 0 ? -1 : read(fd, stat, sizeof(stat) - 1);
		if (fd >= 0)
			close(fd);
		if (len <= 0)
			continue;
		stat[len] = '\0';
		/* "PID (COMM) STATE PPID ...", where COMM may hold anything. */
		after = strrchr(stat, ')');
		if (after && atoi(after + 4) == getpid())
			pid[n++] = atoi(d->d_name);
	}
	closedir(proc);
	return n;
}

/*
 * Kills whatever the test left running, daemons included: this process is
 * a subreaper, so every orphan of the test becomes its child. Bounded: 500
 * rounds of 10 ms. Returns how many processes it killed.
 */
static int end_leftovers(void)
{
	pid_t pid[256];
	int round, i, n, killed = 0;

	for (round = 0; round < 500; round++) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		n = children(pid, 256);
		if (n == 0)
			return killed;
		for (i = 0; i < n; i++)
			killed += kill(pid[i], SIGKILL) == 0;
		usleep(10000);
	}
	fprintf(stderr, "graded: processes left by the tests would not die\n");
	return killed;
}

static char *copy(const char *s)
{
	char *c = strdup(s);

	if (!c) {
		perror("graded: strdup");
		exit(2);
	}
	return c;
}

/*
 * Once a test of a step hangs to its limit, the step's other tests get this
 * share of it: a step whose function never returns costs its limit about
 * once, not once per test, and a test that does not hang still has many
 * times the seconds it needs (the slowest, Lab 3's programs, take a few).
 */
#define RL_AFTER_A_HANG 4.0
#define SHORT_TIMEOUT                                                                              \
	"Test timeout expired (a test before it in this step hung, so it had a quarter of the "    \
	"time limit)"

/* The seconds test G may take (before the multiplier): a quarter after a hang in its step. */
static double limit_of(const struct rl_graded *g, bool after_a_hang)
{
	double limit = RL_TEST_TIMEOUT_RDMA;

	if (g->limit && g->limit < limit)
		limit = g->limit;
	return after_a_hang ? limit / RL_AFTER_A_HANG : limit;
}

/* Check's message for a test it stopped at its timeout. */
static bool timed_out(TestResult *tr)
{
	return tr_rtype(tr) == CK_ERROR && strcmp(tr_msg(tr), "Test timeout expired") == 0;
}

/*
 * Grades the one test SR ran into R: its result, or why it failed. ENDED
 * says whether the child ran the body to its last line, AFTER_A_HANG
 * whether it had the shorter limit. Returns whether it ran out of time.
 */
static bool verdict(SRunner *sr, bool ended, bool after_a_hang, struct row *r)
{
	TestResult **tr = srunner_results(sr);
	bool hung = false;

	if (srunner_ntests_run(sr) != 1) {
		r->message = copy("did not run (is CK_RUN_CASE or CK_RUN_SUITE set?)");
	} else if (timed_out(tr[0])) {
		hung = true;
		r->message = copy(after_a_hang ? SHORT_TIMEOUT : tr_msg(tr[0]));
	} else if (tr_rtype(tr[0]) != CK_PASS) {
		r->message = copy(tr_msg(tr[0]));
	} else if (!ended) {
		r->message = copy(
			"the test ended before its last line, with exit status 0: "
			"code under test called exit() or _exit(); a step returns to its caller");
	} else {
		r->result = "pass";
		r->message = copy("");
	}
	free(tr);
	return hung;
}

/*
 * Runs test G in a child of its own (Check's fork mode), for at most its
 * limit (limit_of(), times CK_TIMEOUT_MULTIPLIER), and grades it. Returns
 * whether it ran out of time.
 */
static bool run_test(const struct rl_graded *g, bool after_a_hang, struct row *r)
{
	static TTest body = { .fn = run_body };
	Suite *s = suite_create("graded");
	TCase *tc = tcase_create("step");
	SRunner *sr = srunner_create(s);
	int fd[2], left;
	bool ended, hung;

	body.name = g->test->name; /* Check's name for the test, and the crash report's */
	body.file = g->test->file;
	body.line = g->test->line;
	current.g = g;
	if (getrandom(current.token, sizeof(current.token), 0) != sizeof(current.token) ||
	    pipe2(fd, O_CLOEXEC | O_NONBLOCK) < 0) {
		perror("graded: getrandom or pipe2");
		exit(2);
	}
	current.done_fd = fd[1];
	tcase_set_timeout(tc, limit_of(g, after_a_hang));
	_tcase_add_test(tc, &body, 0, 0, 0, 1);
	suite_add_tcase(s, tc);
	srunner_run_all(sr, CK_SILENT);
	close(fd[1]);
	left = end_leftovers();
	ended = body_ended(fd[0]);
	close(fd[0]);
	*r = (struct row){ .g = g, .result = "FAIL" };
	hung = verdict(sr, ended, after_a_hang, r);
	if (left)
		fprintf(stderr, "graded: test %s left %d process(es) running: killed\n",
			g->test->name, left);
	srunner_free(sr);
	return hung;
}

/* Writes S on one line: backslash, tab and newline escaped, CR dropped. */
static void put_field(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\t')
			fputs("\\t", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (*s != '\r')
			fputc(*s, f);
	}
}

static void put_rows(FILE *f, const struct row *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		fprintf(f, "%d\t%s\t%s\t%d\t%d\t", r[i].g->step, r[i].g->test->name, r[i].result,
			strcmp(r[i].result, "pass") == 0 ? r[i].g->points : 0, r[i].g->points);
		put_field(f, r[i].message);
		fputc('\n', f);
	}
}

/*
 * Writes the results to PATH whole or not at all: into a new file beside
 * it, then renamed over it (over anything a test wrote there, too).
 */
static int write_results(const char *path, const struct row *r, size_t n)
{
	char tmp[4096];
	FILE *f;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkstemp(tmp);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		fprintf(stderr, "graded: cannot write %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	put_rows(f, r, n);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		fprintf(stderr, "graded: cannot write %s: %s\n", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

static void print_rubric(const struct rl_graded **t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		printf("%d\t%s\t%d\t", t[i]->step, t[i]->test->name, t[i]->points);
		if (t[i]->needs)
			printf("%d\n", t[i]->needs);
		else
			printf("-\n");
	}
}

static void print_receivers(const struct rl_graded **t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (t[i]->receiver)
			printf("%s\t%s\n", t[i]->test->name, t[i]->receiver);
}

int main(int argc, char **argv)
{
	struct options o = parse(argc, argv);
	int failed[MAX_STEP] = { 0 }, bad = 0;
	bool hung[MAX_STEP] = { false };
	const struct rl_graded **t;
	struct row *r;
	size_t n, i, nr = 0;
	char why[64];

	t = collect(&n);
	if (o.rubric || o.receivers) {
		(o.rubric ? print_rubric : print_receivers)(t, n);
		return 0;
	}
	rl_harness_start();
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	r = calloc(n ? n : 1, sizeof(*r));
	if (!r) {
		perror("graded: calloc");
		return 2;
	}
	for (i = 0; i < n; i++) {
		if (o.step && t[i]->step != o.step)
			continue;
		if (!o.all && t[i]->needs && failed[t[i]->needs]) {
			snprintf(why, sizeof(why), "step %d failed", t[i]->needs);
			r[nr] = (struct row){ t[i], "skipped", copy(why) };
		} else {
			hung[t[i]->step] |= run_test(t[i], hung[t[i]->step], &r[nr]);
		}
		if (strcmp(r[nr].result, "pass") != 0)
			failed[t[i]->step] = bad = 1;
		nr++;
	}
	if (o.results ? write_results(o.results, r, nr) < 0 : (put_rows(stdout, r, nr), 0))
		return 2;
	return bad;
}
