/*
 * case.c: one graded test, run by the test program's parent, which runs no
 * student code (tests/harness.h): setup, then the act in a child of its
 * own, locked down, whose records (say.c) the parent reads while it
 * watches the clock, then the check, then the verdict.
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "graded.h"
#include "rdmalab.h"

#define RL_MESSAGE_MAX 8192
#define RL_OUTPUT_MAX (64 * 1024) /* of the act's output, kept */
#define RL_SAID_LINES 20          /* of it, shown under a failure */
#define RL_LINE_MAX 400

/* What the act said: one record. */
struct rl_said {
	char kind;
	char *name;
	char *value; /* NUL-ended copy, LEN bytes before the NUL */
	size_t len;
};

/* The runner's part of a case (c->priv). */
struct rl_case_priv {
	struct rl_said *said;
	size_t nsaid;
	char message[RL_MESSAGE_MAX];
	bool failed;
	int pid;            /* the act's, while it holds; 0 otherwise */
	bool hung;          /* a program the setup or check ran took the whole limit */
	sigjmp_buf *escape; /* where rl_case_abort() returns to, in a setup or check */
};

/* The running case, for rl_case_abort() and rl_graded_hung(). */
static struct rl_case *running;

static struct rl_case_priv *priv(struct rl_case *c)
{
	return c->priv;
}

void rl_graded_hung(void)
{
	if (running)
		priv(running)->hung = true;
}

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		perror("graded: malloc");
		exit(2);
	}
	return p;
}

/* Records the first failure of C: FMT's text. */
static void vfail(struct rl_case *c, const char *fmt, va_list ap)
{
	struct rl_case_priv *p = priv(c);

	if (p->failed)
		return;
	p->failed = true;
	vsnprintf(p->message, sizeof(p->message), fmt, ap);
}

static void case_fail(struct rl_case *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void case_fail(struct rl_case *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(c, fmt, ap);
	va_end(ap);
}

bool rl_expect(struct rl_case *c, bool ok, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return true;
	va_start(ap, fmt);
	vfail(c, fmt, ap);
	va_end(ap);
	return false;
}

bool rl_failed(struct rl_case *c)
{
	return priv(c)->failed;
}

int rl_act_pid(struct rl_case *c)
{
	return priv(c)->pid;
}

void rl_case_abort(const char *text)
{
	if (!running || !priv(running)->escape) {
		fprintf(stderr, "graded: %s\n", text);
		exit(2);
	}
	case_fail(running, "%s", text);
	siglongjmp(*priv(running)->escape, 1);
}

/* What the act said as NAME, or NULL. */
static const struct rl_said *find(struct rl_case *c, const char *name)
{
	struct rl_case_priv *p = priv(c);
	size_t i;

	for (i = 0; i < p->nsaid; i++)
		if (strcmp(p->said[i].name, name) == 0)
			return &p->said[i];
	return NULL;
}

bool rl_said(struct rl_case *c, const char *name)
{
	return find(c, name) != NULL;
}

/* NAME as KIND, or a failure of the test (the act is the kit's: a bug). */
static const struct rl_said *said_as(struct rl_case *c, const char *name, char kind)
{
	const struct rl_said *s = find(c, name);

	if (!s || s->kind != kind || (kind == RL_REC_INT && s->len != sizeof(long long))) {
		case_fail(
			c,
			"the test's act did not say %s (a fault in the test: tell the kit's authors)",
			name);
		return NULL;
	}
	return s;
}

long long rl_said_int(struct rl_case *c, const char *name)
{
	const struct rl_said *s = said_as(c, name, RL_REC_INT);
	long long v = 0;

	if (s)
		memcpy(&v, s->value, sizeof(v));
	return v;
}

const char *rl_said_str(struct rl_case *c, const char *name)
{
	const struct rl_said *s = said_as(c, name, RL_REC_STR);

	return s ? s->value : "";
}

const void *rl_said_bytes(struct rl_case *c, const char *name, size_t *n)
{
	const struct rl_said *s = said_as(c, name, RL_REC_BYTES);

	*n = s ? s->len : 0;
	return s ? s->value : "";
}

/* Runs FN (a setup or a check) on C; a ck_assert in it fails the test and returns here. */
static void guarded(void (*fn)(struct rl_case *), struct rl_case *c)
{
	sigjmp_buf escape;

	if (sigsetjmp(escape, 1) == 0) {
		priv(c)->escape = &escape;
		fn(c);
	}
	priv(c)->escape = NULL;
}

/* --- the act's child ------------------------------------------------------ */

/* The act's run, as the parent sees it. */
struct act_run {
	int pid;
	int report, release, output; /* the parent's ends */
	char *rep;                   /* records not parsed yet */
	size_t rep_len, rep_total;
	char output_buf[RL_OUTPUT_MAX + 1];
	size_t output_len;
	bool ended, held, garbage, eof_report, eof_output;
	char *abort_text;
};

static void start_act(struct rl_case *c, struct act_run *a)
{
	int rep[2], rel[2], out[2];

	if (pipe2(rep, O_CLOEXEC) || pipe2(rel, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
		perror("graded: pipe2");
		exit(2);
	}
	a->pid = fork();
	if (a->pid < 0) {
		perror("graded: fork");
		exit(2);
	}
	if (a->pid == 0)
		rl_act_main(c, out[1], rep[1], rel[0]);
	close(rep[1]);
	close(rel[0]);
	close(out[1]);
	a->report = rep[0];
	a->release = rel[1];
	a->output = out[0];
}

/* Keeps record R (a copy); a name said twice, or an unknown kind, is garbage. */
static void keep(struct rl_case *c, struct act_run *a, char kind, const char *name, size_t nlen,
		 const char *value, size_t vlen)
{
	struct rl_case_priv *p = priv(c);
	struct rl_said *s;
	char *n = xmalloc(nlen + 1);

	memcpy(n, name, nlen);
	n[nlen] = '\0';
	if (find(c, n)) {
		a->garbage = true;
		free(n);
		return;
	}
	p->said = realloc(p->said, (p->nsaid + 1) * sizeof(*p->said));
	if (!p->said) {
		perror("graded: realloc");
		exit(2);
	}
	s = &p->said[p->nsaid++];
	*s = (struct rl_said){ .kind = kind, .name = n, .value = xmalloc(vlen + 1), .len = vlen };
	memcpy(s->value, value, vlen);
	s->value[vlen] = '\0';
}

/* The act holds: the check looks at it now, then it may go on. */
static void hold(struct rl_case *c, struct act_run *a)
{
	if (a->held || !c->g->check) {
		a->garbage = a->held;
	} else {
		a->held = true;
		priv(c)->pid = a->pid;
		guarded(c->g->check, c);
		priv(c)->pid = 0;
	}
	if (write(a->release, "g", 1) < 0)
		a->garbage = true;
}

/* Parses the complete records in a->rep. */
static void parse(struct rl_case *c, struct act_run *a)
{
	size_t at = 0, nlen, vlen;
	uint16_t n16;
	uint32_t v32;
	char kind;

	while (!a->garbage && a->rep_len - at >= 7) {
		kind = a->rep[at];
		memcpy(&n16, a->rep + at + 1, 2);
		memcpy(&v32, a->rep + at + 3, 4);
		nlen = n16;
		vlen = v32;
		if (vlen > RL_SAY_MAX) {
			a->garbage = true;
			break;
		}
		if (a->rep_len - at - 7 < nlen + vlen)
			break;
		const char *name = a->rep + at + 7, *value = name + nlen;

		if (a->ended)
			a->garbage = true;
		else if (kind == RL_REC_INT || kind == RL_REC_STR || kind == RL_REC_BYTES)
			keep(c, a, kind, name, nlen, value, vlen);
		else if (kind == RL_REC_HOLD)
			hold(c, a);
		else if (kind == RL_REC_END)
			a->ended = true;
		else if (kind == RL_REC_ABORT && !a->abort_text)
			a->abort_text = strndup(value, vlen);
		else
			a->garbage = true;
		at += 7 + nlen + vlen;
	}
	memmove(a->rep, a->rep + at, a->rep_len - at);
	a->rep_len -= at;
}

/* Reads what is there on FD: the report (records) or the output (kept, bounded). */
static void drain(struct rl_case *c, struct act_run *a, int fd)
{
	char buf[65536];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n <= 0) {
		if (n == 0 || (errno != EINTR && errno != EAGAIN))
			*(fd == a->report ? &a->eof_report : &a->eof_output) = true;
		return;
	}
	if (fd == a->output) {
		size_t take = (size_t)n;

		if (take > RL_OUTPUT_MAX - a->output_len)
			take = RL_OUTPUT_MAX - a->output_len;
		memcpy(a->output_buf + a->output_len, buf, take);
		a->output_len += take;
		return;
	}
	a->rep_total += (size_t)n;
	if (a->rep_total > 2 * (size_t)RL_SAY_MAX) {
		a->garbage = true;
		return;
	}
	a->rep = realloc(a->rep, a->rep_len + (size_t)n);
	if (!a->rep) {
		perror("graded: realloc");
		exit(2);
	}
	memcpy(a->rep + a->rep_len, buf, (size_t)n);
	a->rep_len += (size_t)n;
	parse(c, a);
}

/*
 * Watches the act until it exits (or for DEADLINE, in ms of now_ms()):
 * reads its records and output. Returns its wait status, or -1 when it ran
 * out of time (it is killed then, with its process group).
 */
static int watch(struct rl_case *c, struct act_run *a, long long deadline)
{
	struct pollfd fds[2];
	int status, nfds;
	bool exited = false;

	fcntl(a->report, F_SETFL, O_NONBLOCK);
	fcntl(a->output, F_SETFL, O_NONBLOCK);
	for (;;) {
		nfds = 0;
		if (!a->eof_report)
			fds[nfds++] = (struct pollfd){ .fd = a->report, .events = POLLIN };
		if (!a->eof_output)
			fds[nfds++] = (struct pollfd){ .fd = a->output, .events = POLLIN };
		if (exited && (nfds == 0 || poll(fds, (nfds_t)nfds, 0) <= 0))
			return status;
		if (!exited && waitpid(a->pid, &status, WNOHANG) == a->pid) {
			exited = true;
			continue;
		}
		if (now_ms() >= deadline || a->garbage) {
			kill(-a->pid, SIGKILL);
			kill(a->pid, SIGKILL);
			waitpid(a->pid, &status, 0);
			return a->garbage ? status : -1;
		}
		if (nfds == 0) {
			usleep(20000);
			continue;
		}
		if (poll(fds, (nfds_t)nfds, 50) > 0)
			for (int i = 0; i < nfds; i++)
				if (fds[i].revents)
					drain(c, a, fds[i].fd);
	}
}

/* --- the verdict ---------------------------------------------------------- */

/* Appends FMT's text to BUF (of SIZE), cut when full. */
static void append(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

static double multiplier(void)
{
	const char *m = getenv("CK_TIMEOUT_MULTIPLIER");
	double v = m ? atof(m) : 1;

	return v > 0 ? v : 1;
}

/* Appends frame *K of a resolved LINE ("function at file:line") to OUT; false at the runner's frames. */
static bool put_frame(char *out, size_t size, int *k, char *line, const char *cwd)
{
	char *fn = strncmp(line, " (inlined by) ", 14) == 0 ? line + 14 : line;
	char *at = strstr(fn, " at ");
	const char *loc = at ? at + 4 : "??";

	if (at)
		*at = '\0';
	if (strcmp(fn, "rl_act_main") == 0)
		return false;
	if (cwd[0] && strncmp(loc, cwd, strlen(cwd)) == 0)
		loc += strlen(cwd);
	append(out, size, "    #%d %s (%.*s)\n", (*k)++, fn, (int)strcspn(loc, " \n"), loc);
	return true;
}

/*
 * The crash report of the act's child, CRASH, with each "#K exe+0xOFF"
 * frame (raw: the child may not run addr2line) resolved to "function
 * (file:line)" by addr2line here, inlined calls included, down to the
 * runner's own frames. Into OUT of SIZE bytes.
 */
static void resolve_crash(const char *crash, char *out, size_t size)
{
	char cmd[8192], exe[4096], cwd[4096] = "";
	char *answer = NULL, *line, *save = NULL;
	const char *p, *raw;
	unsigned long long off;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t cap = 0;
	int k = 0;
	FILE *a;

	exe[n > 0 ? n : 0] = '\0';
	/* The program's path goes to a shell: it is the kit's, quoted all the same. */
	snprintf(cmd, sizeof(cmd), "addr2line -f -i -p -e '%s' 2>/dev/null", exe);
	for (p = crash; (p = strstr(p, " exe+0x")); p++)
		if (sscanf(p + 5, "%llx", &off) == 1)
			append(cmd, sizeof(cmd), " 0x%llx", off);
	a = strstr(crash, " exe+0x") ? popen(cmd, "r") : NULL;
	if (a && getdelim(&answer, &cap, '\0', a) < 0) {
		free(answer);
		answer = NULL;
	}
	if (a)
		pclose(a);
	if (getcwd(cwd, sizeof(cwd) - 1))
		strcat(cwd, "/");
	line = answer ? strtok_r(answer, "\n", &save) : NULL;
	out[0] = '\0';
	for (p = crash; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n')) {
		int len = (int)strcspn(p, "\n");

		raw = strncmp(p, "    #", 5) == 0 ? p + 5 + strcspn(p + 5, " ") : NULL;
		if (!raw) {
			append(out, size, "%.*s\n", len, p);
		} else if (strncmp(raw, " exe+0x", 7) != 0 || !line) {
			append(out, size, "    #%d%.*s\n", k++, (int)(p + len - raw), raw);
		} else {
			/* One address: its line, then one per call inlined into it. */
			do {
				if (!put_frame(out, size, &k, line, cwd))
					goto done;
				line = strtok_r(NULL, "\n", &save);
			} while (line && strncmp(line, " (inlined by) ", 14) == 0);
		}
	}
done:
	free(answer);
}

/* Why the act's child ended as it did, when it did not return: into C's message. */
static void ended_badly(struct rl_case *c, struct act_run *a, int status, const char *output)
{
	const char *crash = strstr(output, "\ncrash in test ");

	if (a->garbage) {
		case_fail(
			c,
			"the test's process wrote what the test did not ask for (more than %d MiB, a "
			"name twice, or records after its end): it fails",
			RL_SAY_MAX >> 20);
	} else if (a->abort_text) {
		case_fail(c, "%s", a->abort_text);
	} else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS) {
		case_fail(
			c,
			"the test's process was killed for a system call graded code may not make "
			"(an executable mapping or one at a fixed address, execve, ptrace, "
			"memfd_create, a way into a process's memory, io_uring or userfaultfd; see "
			"docs/rules.md)");
	} else if (WIFSIGNALED(status)) {
		char report[4096] = "";

		if (crash)
			resolve_crash(crash + 1, report, sizeof(report));
		case_fail(c, "Received signal %d (%s)%s%s", WTERMSIG(status),
			  strsignal(WTERMSIG(status)), report[0] ? "\n" : "", report);
	} else {
		case_fail(
			c,
			"the test ended before its last line, with exit status %d: code under test "
			"called exit() or _exit(); a step returns to its caller",
			WEXITSTATUS(status));
	}
}

/*
 * What the act printed, for the record: at most RL_SAID_LINES lines of at
 * most RL_LINE_MAX characters, without a crash report (it is in the
 * message) and noting what was left out. "step N not implemented: see ..."
 * lines go to the message instead (a stub's).
 */
static char *said_lines(struct rl_case *c, char *output)
{
	size_t size = RL_SAID_LINES * (RL_LINE_MAX + 8) + 64;
	char *out = xmalloc(size), *line, *save, *see;
	int shown = 0, more = 0;

	out[0] = '\0';
	for (line = output ? strtok_r(output, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "crash in test ", 14) == 0)
			break;
		see = strncmp(line, "step ", 5) == 0 ? strstr(line, " not implemented: see ") :
						       NULL;
		if (see) {
			/* "step N not implemented", and its link unless the message gives it; once. */
			see = strstr(see, ": see ");
			if (priv(c)->failed && !strstr(priv(c)->message, line) &&
			    !(strstr(priv(c)->message, see + 6) &&
			      memmem(priv(c)->message, strlen(priv(c)->message), line,
				     (size_t)(see - line))))
				append(priv(c)->message, RL_MESSAGE_MAX, "\n%.*s",
				       strstr(priv(c)->message, see + 6) ? (int)(see - line) :
									   RL_LINE_MAX,
				       line);
			continue;
		}
		if (shown == RL_SAID_LINES) {
			more++;
			continue;
		}
		append(out, size, "%s%.*s%s", shown ? "\n" : "", RL_LINE_MAX, line,
		       strlen(line) > RL_LINE_MAX ? "..." : "");
		shown++;
	}
	if (more)
		append(out, size, "\n... (%d more lines)", more);
	return out;
}

/* Runs the act of C and judges it; its output into *OUTPUT (malloc'd). Returns whether it hung. */
static bool run_act(struct rl_case *c, bool after_a_hang, char **output)
{
	struct act_run a = { 0 };
	long long deadline =
		now_ms() + (long long)(rl_case_limit(c->g, after_a_hang) * multiplier() * 1000);
	int status;

	start_act(c, &a);
	status = watch(c, &a, deadline);
	close(a.report);
	close(a.release);
	close(a.output);
	a.output_buf[a.output_len] = '\0';
	*output = strdup(a.output_buf);
	if (status == -1)
		case_fail(c, "Test timeout expired%s", after_a_hang ? RL_AFTER_A_HANG_NOTE : "");
	else if (!a.ended || a.garbage || a.abort_text || !WIFEXITED(status) || WEXITSTATUS(status))
		ended_badly(c, &a, status, a.output_buf);
	else if (!a.held && c->g->check)
		guarded(c->g->check, c);
	free(a.rep);
	free(a.abort_text);
	return status == -1;
}

void rl_run_case(const struct rl_graded *g, bool after_a_hang, struct rl_result *r)
{
	struct rl_case_priv p = { 0 };
	struct rl_case c = { .g = g, .in = calloc(1, RL_CASE_IN), .priv = &p };
	long long t0 = now_ms();
	char *output = NULL;
	bool hung = false;
	size_t i;

	if (!c.in) {
		perror("graded: calloc");
		exit(2);
	}
	running = &c;
	rl_act_set_running(g, after_a_hang);
	if (g->setup)
		guarded(g->setup, &c);
	if (!p.failed && g->act)
		hung = run_act(&c, after_a_hang, &output);
	else if (!p.failed && g->check)
		guarded(g->check, &c);
	*r = (struct rl_result){
		.result = p.failed ? "FAIL" : "pass",
		.hung = hung || p.hung,
	};
	r->said = said_lines(&c, output);
	r->message = strdup(p.message);
	r->ms = now_ms() - t0;
	free(output);
	for (i = 0; i < p.nsaid; i++) {
		free(p.said[i].name);
		free(p.said[i].value);
	}
	free(p.said);
	free(c.in);
	running = NULL;
	rl_act_set_running(NULL, false);
}
