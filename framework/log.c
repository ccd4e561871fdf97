/* log.c: leveled logging to stderr; quiet (errors only) unless asked. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rdmalab.h"

/* -1 until set: the first message then reads RDMALAB_VERBOSE. */
static int rl_level = -1;

/*
 * Parse a verbosity such as RDMALAB_VERBOSE: "0".."2" or "error", "info",
 * "debug". Larger numbers mean debug. Returns the level or -EINVAL.
 */
int rl_log_parse_level(const char *s)
{
	char *end;
	long n;

	if (!s || !*s)
		return -EINVAL;
	if (!strcmp(s, "error"))
		return RL_LOG_ERROR;
	if (!strcmp(s, "info"))
		return RL_LOG_INFO;
	if (!strcmp(s, "debug"))
		return RL_LOG_DEBUG;
	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || *end || n < 0)
		return -EINVAL;
	return n > RL_LOG_DEBUG ? RL_LOG_DEBUG : (int)n;
}

/* Set the level; values past debug mean debug, negative means error. */
void rl_log_set_level(int level)
{
	if (level < RL_LOG_ERROR)
		level = RL_LOG_ERROR;
	if (level > RL_LOG_DEBUG)
		level = RL_LOG_DEBUG;
	rl_level = level;
}

/* The current level, taken from RDMALAB_VERBOSE when nobody set it. */
int rl_log_level(void)
{
	int level;

	if (rl_level < 0) {
		level = rl_log_parse_level(getenv("RDMALAB_VERBOSE"));
		rl_level = level < 0 ? RL_LOG_ERROR : level;
	}
	return rl_level;
}

/* Print one line at LEVEL if the current level allows it. */
void rl_log(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > rl_log_level())
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
