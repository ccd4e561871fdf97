/*
 * graded.c: main() for a lab's test program. It runs the lab's graded tests
 * (RL_GRADED in tests/harness.h) step by step, each in case.c, and writes
 * one result record per test. This process runs no student code: a test's
 * act runs in a child of its own, locked down; this process reads what the
 * act said, checks it against what it computes itself, and is the only
 * writer of the results. It is not dumpable, so that a process of the same
 * user cannot read or write its memory or descriptors through /proc.
 *
 *   PROG [--step K] [--all] [--results FILE | --results-fd N]
 *       run the tests (of step K only), and write one JSON line per test to
 *       FILE (whole, or not at all), or to descriptor N (the grader's file,
 *       which no test process holds), else print them: lab, step, test,
 *       result (pass, FAIL, skipped), points (earned), max, message,
 *       skipped_because, said (what the test's processes printed, bounded),
 *       ms (how long it took).
 *       A test whose .needs step failed, or a test of the whole program
 *       (.whole) after a step none of whose tests passed, is skipped, not
 *       run, unless --all (make check-labs runs every test on the stubs).
 *       Exits 1 when a test did not pass, 2 on a usage error.
 *   PROG --rubric
 *       print the tests, one JSON line each: lab, step, test, max, needs
 *       (null for none), receiver (its options, or null).
 *   PROG --receivers
 *       print the tests that talk to a reference receiver, one per line:
 *       test, the receiver's options (the grader starts those receivers).
 *   PROG --hide-script
 *       print the program's hide script, the linker script that gathers
 *       what its acts must not hold into sections of their own (hide.c):
 *       the build writes it from a first link of the tests (the rubric's
 *       program) and links the test program with it.
 *   PROG --act-memory
 *       for each step, run an act that reads its own mappings, and check
 *       that none of the code it must not hold is there: one line per
 *       step; exits 1 when one is.
 */
#define _GNU_SOURCE /* asprintf */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "graded.h"
#include "rdmalab.h"

/* Each graded test's declaration, put in this section by RL_GRADED. */
extern const struct rl_graded *const __start_rl_graded[];
extern const struct rl_graded *const __stop_rl_graded[];

#define MAX_STEP 64 /* steps are numbered 1 to MAX_STEP - 1 */

struct options {
	int step;            /* 0: every step */
	int all;             /* run the tests of a failed step's dependents too */
	int rubric;          /* print the tests instead of running them */
	int receivers;       /* print the tests' receivers instead of running them */
	int hide_script;     /* print the hide script instead of running them */
	int act_memory;      /* check the acts' memory instead of running the tests */
	const char *results; /* NULL: results_fd, or stdout */
	int results_fd;      /* -1: none */
};

struct row {
	const struct rl_graded *g;
	struct rl_result r;
	const char *skipped_because; /* NULL unless skipped */
};

static int by_step(const void *a, const void *b)
{
	const struct rl_graded *x = *(const struct rl_graded *const *)a;
	const struct rl_graded *y = *(const struct rl_graded *const *)b;
	int c = strcmp(x->file, y->file);

	if (x->step != y->step)
		return x->step - y->step;
	return c ? c : x->line - y->line;
}

static void die(const char *what, const struct rl_graded *g)
{
	fprintf(stderr, "%s:%d: test %s %s\n", g->file, g->line, g->name, what);
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
		if (!t[i]->check)
			die("needs a .check: the parent decides every result", t[i]);
		for (j = 0; j < i; j++)
			if (strcmp(t[i]->name, t[j]->name) == 0)
				die("is declared twice", t[i]);
	}
	*n = count;
	return t;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--step K] [--all] [--results FILE | --results-fd N] | --rubric | "
		"--receivers | --hide-script | --act-memory\n",
		prog);
	exit(2);
}

/* A whole number from MIN to MAX in S, or a usage error that names OPT. */
static int number(const char *prog, const char *opt, const char *s, int min, int max)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < min || v > max) {
		fprintf(stderr, "%s: %s wants a %s, got \"%s\"\n", prog, opt,
			strcmp(opt, "--step") == 0 ? "step number" : "descriptor number", s);
		exit(2);
	}
	return (int)v;
}

static struct options parse(int argc, char **argv)
{
	struct options o = { .results_fd = -1 };
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--rubric") == 0)
			o.rubric = 1;
		else if (strcmp(argv[i], "--receivers") == 0)
			o.receivers = 1;
		else if (strcmp(argv[i], "--hide-script") == 0)
			o.hide_script = 1;
		else if (strcmp(argv[i], "--act-memory") == 0)
			o.act_memory = 1;
		else if (strcmp(argv[i], "--all") == 0)
			o.all = 1;
		else if (strcmp(argv[i], "--results") == 0 && i + 1 < argc)
			o.results = argv[++i];
		else if (strcmp(argv[i], "--results-fd") == 0 && i + 1 < argc)
			o.results_fd = number(argv[0], "--results-fd", argv[++i], 3, 1023);
		else if (strcmp(argv[i], "--step") == 0 && i + 1 < argc)
			o.step = number(argv[0], "--step", argv[++i], 1, MAX_STEP - 1);
		else
			usage(argv[0]);
	}
	return o;
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
		/* "PID (COMM) STATE PPID ...", where COMM may hold anything; a zombie is dead. */
		after = strrchr(stat, ')');
		if (after && after[2] != 'Z' && atoi(after + 4) == getpid())
			pid[n++] = atoi(d->d_name);
	}
	closedir(proc);
	return n;
}

/*
 * Kills whatever the test left running, daemons included: this process is
 * a subreaper, so every orphan of the test becomes its child. Bounded: 500
 * rounds of 10 ms. Returns how many processes it killed (each once: one
 * killed but not yet reaped is seen again in the next round).
 */
static int end_leftovers(void)
{
	pid_t pid[256], seen[256];
	int round, i, j, n, killed = 0;

	for (round = 0; round < 500; round++) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		n = children(pid, 256);
		if (n == 0)
			return killed;
		for (i = 0; i < n; i++) {
			for (j = 0; j < killed && seen[j] != pid[i]; j++)
				;
			if (kill(pid[i], SIGKILL) == 0 && j == killed && killed < 256)
				seen[killed++] = pid[i];
		}
		usleep(10000);
	}
	fprintf(stderr, "graded: processes left by the tests would not die\n");
	return killed;
}

/* Runs test G into R; what it left running is stopped and said. Returns whether it hung. */
static bool run_test(const struct rl_graded *g, bool after_a_hang, struct row *r)
{
	int left;
	char *said;

	r->g = g;
	rl_run_case(g, after_a_hang, &r->r);
	left = end_leftovers();
	if (left && asprintf(&said,
			     "%s%s(your code left %d process%s running after the test "
			     "ended; %s stopped)",
			     r->r.said, r->r.said[0] ? "\n" : "", left, left > 1 ? "es" : "",
			     left > 1 ? "they were" : "it was") > 0) {
		free(r->r.said);
		r->r.said = said;
	}
	return r->r.hung;
}

/* Writes R as one JSON line to F; false when it does not fit. */
static bool put_row(FILE *f, const struct row *r)
{
	static char line[64 * 1024];
	bool pass = strcmp(r->r.result, "pass") == 0;
	struct rl_json j;

	rl_json_start(&j, line, sizeof(line));
	rl_json_int(&j, "lab", r->g->lab);
	rl_json_int(&j, "step", r->g->step);
	rl_json_str(&j, "test", r->g->name);
	rl_json_str(&j, "result", r->r.result);
	rl_json_int(&j, "points", pass ? r->g->points : 0);
	rl_json_int(&j, "max", r->g->points);
	rl_json_str(&j, "message", r->r.message);
	rl_json_str(&j, "skipped_because", r->skipped_because);
	rl_json_str(&j, "said", r->r.said);
	rl_json_int(&j, "ms", r->r.ms);
	return rl_json_end(&j) > 0 && fputs(line, f) >= 0;
}

static bool put_rows(FILE *f, const struct row *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!put_row(f, &r[i]))
			return false;
	return fflush(f) == 0;
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
	if (!put_rows(f, r, n) || fclose(f) != 0 || rename(tmp, path) != 0) {
		fprintf(stderr, "graded: cannot write %s: %s\n", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Writes the results to descriptor FD (the grader's file). */
static int write_results_fd(int fd, const struct row *r, size_t n)
{
	FILE *f = fdopen(fd, "w");

	if (!f || !put_rows(f, r, n) || fclose(f) != 0) {
		fprintf(stderr, "graded: cannot write the results to descriptor %d: %s\n", fd,
			strerror(errno));
		return -1;
	}
	return 0;
}

static void print_rubric(const struct rl_graded **t, size_t n)
{
	char line[1024];
	struct rl_json j;
	size_t i;

	for (i = 0; i < n; i++) {
		rl_json_start(&j, line, sizeof(line));
		rl_json_int(&j, "lab", t[i]->lab);
		rl_json_int(&j, "step", t[i]->step);
		rl_json_str(&j, "test", t[i]->name);
		rl_json_int(&j, "max", t[i]->points);
		if (t[i]->needs)
			rl_json_int(&j, "needs", t[i]->needs);
		else
			rl_json_null(&j, "needs");
		rl_json_str(&j, "receiver", t[i]->receiver);
		if (rl_json_end(&j) > 0)
			fputs(line, stdout);
	}
}

static void print_receivers(const struct rl_graded **t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (t[i]->receiver)
			printf("%s\t%s\n", t[i]->name, t[i]->receiver);
}

static int print_hide_script(void)
{
	char why[512];

	if (rl_hide_script(stdout, why, sizeof(why)) || fflush(stdout)) {
		fprintf(stderr, "graded: --hide-script: %s\n", why);
		return 2;
	}
	return 0;
}

static int act_memory_hidden;

static void act_memory_check(struct rl_case *c)
{
	act_memory_hidden = rl_hide_check_maps(c);
}

/*
 * For each step of the lab's tests, an act of that step (the same child as
 * every test's, hidden and locked down) says its mappings, and the check
 * looks for what it must not hold there.
 */
static int check_act_memory(const struct rl_graded **t, size_t n)
{
	struct rl_graded g = { .name = "act_memory", .points = 1, .act = rl_hide_say_maps,
			       .check = act_memory_check };
	struct rl_result r;
	int bad = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (i > 0 && t[i]->step == t[i - 1]->step)
			continue;
		g.lab = t[i]->lab;
		g.step = t[i]->step;
		g.file = t[i]->file;
		g.line = t[i]->line;
		rl_run_case(&g, false, &r);
		end_leftovers();
		if (strcmp(r.result, "pass") == 0)
			printf("lab %d step %d: none of the %d functions its acts must not hold is in "
			       "their memory\n",
			       g.lab, g.step, act_memory_hidden);
		else
			printf("lab %d step %d: FAIL: %s\n", g.lab, g.step, r.message);
		bad |= strcmp(r.result, "pass") != 0;
		free(r.message);
		free(r.said);
	}
	return bad;
}

/* A row for test G, skipped because of step STEP: WHY ("step %d failed"). */
static struct row skipped(const struct rl_graded *g, const char *why, int step)
{
	struct row r = { .g = g, .r = { .result = "skipped" } };

	if (asprintf(&r.r.message, why, step) < 0 || !(r.r.said = strdup(""))) {
		perror("graded: asprintf");
		exit(2);
	}
	r.skipped_because = r.r.message;
	return r;
}

/*
 * The first step before STEP whose tests ran and none passed (RAN, PASSED:
 * by step), or 0: a whole program stops at such a step's "not
 * implemented", so its tests would say nothing new.
 */
static int undone_step(int step, const bool *ran, const bool *passed)
{
	int s;

	for (s = 1; s < step; s++)
		if (ran[s] && !passed[s])
			return s;
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = parse(argc, argv);
	int failed[MAX_STEP] = { 0 }, bad = 0, undone;
	bool hung[MAX_STEP] = { false }, ran[MAX_STEP] = { false }, passed[MAX_STEP] = { false };
	const struct rl_graded **t;
	struct row *r;
	size_t n, i, nr = 0;

	t = collect(&n);
	if (o.rubric || o.receivers) {
		(o.rubric ? print_rubric : print_receivers)(t, n);
		return 0;
	}
	if (o.hide_script)
		return print_hide_script();
	rl_harness_start(rl_running_test_name);
	/* The grader's way (--results-fd): locked down, whatever the environment says. */
	if (o.results_fd >= 0)
		unsetenv("RDMALAB_NO_LOCKDOWN");
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	prctl(PR_SET_DUMPABLE, 0);
	if (o.act_memory)
		return check_act_memory(t, n);
	r = calloc(n ? n : 1, sizeof(*r));
	if (!r) {
		perror("graded: calloc");
		return 2;
	}
	for (i = 0; i < n; i++) {
		if (o.step && t[i]->step != o.step)
			continue;
		undone = t[i]->whole ? undone_step(t[i]->step, ran, passed) : 0;
		if (!o.all && t[i]->needs && failed[t[i]->needs])
			r[nr] = skipped(t[i], "step %d failed", t[i]->needs);
		else if (!o.all && undone)
			r[nr] = skipped(t[i], "step %d is still to do: none of its tests passed",
					undone);
		else
			hung[t[i]->step] |= run_test(t[i], hung[t[i]->step], &r[nr]);
		ran[t[i]->step] = true;
		if (strcmp(r[nr].r.result, "pass") != 0)
			failed[t[i]->step] = bad = 1;
		else
			passed[t[i]->step] = true;
		nr++;
	}
	if (o.results         ? write_results(o.results, r, nr) :
	    o.results_fd >= 0 ? write_results_fd(o.results_fd, r, nr) :
				(put_rows(stdout, r, nr) ? 0 : -1))
		return 2;
	return bad;
}
