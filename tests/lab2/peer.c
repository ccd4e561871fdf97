/*
 * peer.c: the reference peer's process. A test's setup forks it from the
 * test program's parent, before the act: it runs no student code, and the
 * act, a later fork, holds none of its descriptors. It tells the parent
 * what it saw on a pipe (its report, whole, at each stage) and stops
 * waiting when the parent closes the other pipe. Its random secret is
 * chosen here, after the fork: the parent reads it in the check only.
 */
#define _GNU_SOURCE /* close_range, pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"

/* The report goes out whole: one write of at most PIPE_BUF bytes is never split. */
_Static_assert(sizeof(struct fx_report) <= 4096, "a report must fit in one pipe write");

/* The descriptors the peer's process gets. */
#define FX_REPORT_FD 3
#define FX_STOP_FD 4

/* The parent's view of the peer it runs (one at a time). */
static struct {
	pid_t pid;
	int report; /* reports come here */
	int stop;   /* closed: the peer stops */
	struct fx_report last;
} fx_peer = { .report = -1, .stop = -1 };

long fx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --- in the peer's process --- */

void fx_note(struct fx_report *r, enum fx_stage stage)
{
	if (stage > r->stage)
		r->stage = stage;
	/* A parent that stopped reading has no use for it: nothing to do about it either. */
	(void)!write(FX_REPORT_FD, r, sizeof(*r));
}

bool fx_stopped(void)
{
	struct pollfd p = { .fd = FX_STOP_FD, .events = POLLIN };

	return poll(&p, 1, 0) != 0;
}

void fx_random_text(char *text, size_t size)
{
	static const char chars[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	size_t shortest = (size - 1) / 2, len, i;

	/* Not rl_test_random_text: its ck_assert belongs to the parent's test, not here. */
	if (getrandom(text, size, 0) != (ssize_t)size)
		_exit(1);
	len = shortest + (unsigned char)text[size - 1] % (size - shortest);
	for (i = 0; i < len; i++)
		text[i] = chars[(unsigned char)text[i] % (sizeof(chars) - 1)];
	text[len] = '\0';
}

/* The peer's process: descriptors 0-2 on /dev/null, its two pipes, nothing else; ROLE; exit. */
static void __attribute__((noreturn))
fx_peer_main(fx_role *role, const void *in, int report, int stop)
{
	struct fx_report r = { .failed_at = -1 };
	int null = open("/dev/null", O_RDWR);

	report = fcntl(report, F_DUPFD, 10);
	stop = fcntl(stop, F_DUPFD, 10);
	if (null < 0 || report < 0 || stop < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
	    dup2(null, 2) < 0 || dup2(report, FX_REPORT_FD) < 0 || dup2(stop, FX_STOP_FD) < 0)
		_exit(1);
	close_range(FX_STOP_FD + 1, ~0U, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGPIPE, SIG_IGN);
	alarm(60); /* every wait is bounded; this bounds them all */
	role(in, &r);
	fx_note(&r, FX_ENDED);
	_exit(0);
}

/* --- in the parent --- */

/* Reads one report into fx_peer.last before DEADLINE: 1, 0 at its end (EOF), -1 out of time. */
static int fx_peer_read(long deadline)
{
	struct pollfd p = { .fd = fx_peer.report, .events = POLLIN };
	struct fx_report r;
	size_t got = 0;
	ssize_t n;

	while (got < sizeof(r)) {
		long left = deadline - fx_now_ms();

		if (left <= 0 || poll(&p, 1, (int)left) == 0)
			return -1;
		n = read(fx_peer.report, (char *)&r + got, sizeof(r) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		got += (size_t)n;
	}
	fx_peer.last = r;
	return 1;
}

/* Ends the peer now (if any is left) and forgets it. */
static void fx_peer_reap(void)
{
	if (fx_peer.stop >= 0)
		close(fx_peer.stop);
	if (fx_peer.report >= 0)
		close(fx_peer.report);
	/* Not reaped yet, it is still ours: the runner may have killed and reaped it already. */
	if (fx_peer.pid > 0 && waitpid(fx_peer.pid, NULL, WNOHANG) == 0) {
		kill(fx_peer.pid, SIGKILL);
		waitpid(fx_peer.pid, NULL, 0);
	}
	fx_peer.pid = 0;
	fx_peer.report = fx_peer.stop = -1;
}

void fx_peer_start(fx_role *role, const void *in)
{
	int report[2], stop[2];

	/* A test whose act crashed never got to its check: its peer may be left. */
	fx_peer_reap();
	memset(&fx_peer.last, 0, sizeof(fx_peer.last));
	ck_assert_msg(pipe2(report, O_CLOEXEC) == 0 && pipe2(stop, O_CLOEXEC) == 0,
		      "reference peer: pipe2 failed: %s", strerror(errno));
	fx_peer.pid = fork();
	ck_assert_msg(fx_peer.pid >= 0, "reference peer: fork failed: %s", strerror(errno));
	if (fx_peer.pid == 0)
		fx_peer_main(role, in, report[1], stop[0]);
	close(report[1]);
	close(stop[0]);
	fx_peer.report = report[0];
	fx_peer.stop = stop[1];
}

uint16_t fx_peer_port(void)
{
	long deadline = fx_now_ms() + FX_TIMEOUT_MS;
	int got = 1;

	/* Its first report says it listens: nothing secret in it yet (see ref_accept). */
	while (fx_peer.last.stage < FX_LISTENING && got == 1)
		got = fx_peer_read(deadline);
	ck_assert_msg(fx_peer.last.stage >= FX_LISTENING && fx_peer.last.port,
		      "expected the reference peer to listen within %d ms, %s", FX_TIMEOUT_MS,
		      fx_peer.last.why[0] ? fx_peer.last.why : "it did not");
	return fx_peer.last.port;
}

const struct fx_report *fx_peer_end(struct rl_case *c, enum fx_stage until)
{
	long deadline = fx_now_ms() + 2 * FX_TIMEOUT_MS;
	int got = 1, i;

	if (fx_peer.pid <= 0)
		return &fx_peer.last;
	while (!rl_failed(c) && fx_peer.last.stage < until && got == 1)
		got = fx_peer_read(deadline);
	close(fx_peer.stop);
	fx_peer.stop = -1;
	/* Stopped, it gives up what it waits for, frees what it holds and says so. */
	deadline = fx_now_ms() + FX_TIMEOUT_MS;
	while (got != 0 && (got = fx_peer_read(deadline)) != -1)
		;
	for (i = 0; i < 100 && waitpid(fx_peer.pid, NULL, WNOHANG) == 0; i++)
		usleep(10000);
	if (i < 100)
		fx_peer.pid = 0; /* reaped */
	fx_peer_reap();
	return &fx_peer.last;
}
