/*
 * say.c: the act's side of a graded test (tests/harness.h): what it tells
 * the parent, one record at a time, on the report pipe the runner gave it,
 * and the end of its failed assertions. The parent's side is case.c.
 *
 * A record: its kind (one byte), the name's length (2 bytes), the value's
 * length (4 bytes, both in this machine's order: the parent is the same
 * program), the name, the value.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graded.h"

struct rl_act_state rl_act = { .report_fd = -1, .release_fd = -1 };

/* Writes all N bytes of P to FD; false when it cannot. */
static bool rl_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	ssize_t w;

	while (n) {
		w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		c += w;
		n -= (size_t)w;
	}
	return true;
}

void rl_say_record(char kind, const char *name, const void *value, size_t len)
{
	unsigned char head[1 + 2 + 4];
	uint16_t nlen = (uint16_t)strlen(name);
	uint32_t vlen = (uint32_t)len;

	if (rl_act.report_fd < 0)
		return;
	head[0] = (unsigned char)kind;
	memcpy(head + 1, &nlen, sizeof(nlen));
	memcpy(head + 3, &vlen, sizeof(vlen));
	if (!rl_write_all(rl_act.report_fd, head, sizeof(head)) ||
	    !rl_write_all(rl_act.report_fd, name, nlen) ||
	    !rl_write_all(rl_act.report_fd, value, len))
		_exit(RL_ACT_LOST);
}

void rl_say_int(const char *name, long long v)
{
	rl_say_record(RL_REC_INT, name, &v, sizeof(v));
}

void rl_say_str(const char *name, const char *s)
{
	rl_say_record(RL_REC_STR, name, s, strlen(s));
}

void rl_say_bytes(const char *name, const void *p, size_t n)
{
	rl_say_record(RL_REC_BYTES, name, p, n);
}

void rl_hold(void)
{
	char go;

	rl_say_record(RL_REC_HOLD, "", NULL, 0);
	/* The parent writes one byte when it has looked, or dies. */
	while (read(rl_act.release_fd, &go, 1) < 0 && errno == EINTR)
		;
}

/*
 * Check's assertion macros (ck_assert_msg and the others) end here: the
 * graded programs do not link Check. In the act, the act's own set-up
 * failed: its message goes to the parent and the child ends (the test
 * fails with it). In the parent (a setup or a check), the test fails with
 * it and the runner takes over again.
 */
void _ck_assert_failed(const char *file, int line, const char *expr, const char *msg, ...)
{
	char text[2048];
	va_list ap;

	if (msg) {
		va_start(ap, msg);
		vsnprintf(text, sizeof(text), msg, ap);
		va_end(ap);
	} else {
		snprintf(text, sizeof(text), "%s (%s:%d)", expr, file, line);
	}
	if (rl_act.in_act) {
		rl_say_record(RL_REC_ABORT, "", text, strlen(text));
		_exit(RL_ACT_ABORTED);
	}
	rl_case_abort(text);
}

/* What Check's macros call on the way when an assertion holds. */
void _mark_point(const char *file, int line)
{
	(void)file;
	(void)line;
}
