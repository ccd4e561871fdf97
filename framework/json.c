/*
 * json.c: one JSON object a line, written into a caller's buffer: the
 * receiver's results log and the graded tests' results. The kit's one place
 * that escapes a string for JSON, in C.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "rdmalab.h"

/* Appends N bytes of S, or sets the sticky error when they do not fit. */
static void rl_json_put(struct rl_json *j, const char *s, size_t n)
{
	if (j->err || n > j->size - j->len) {
		j->err = true;
		return;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
}

/* Appends FMT's output, as rl_json_put. */
static void rl_json_printf(struct rl_json *j, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void rl_json_printf(struct rl_json *j, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (j->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(j->buf + j->len, j->size - j->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= j->size - j->len)
		j->err = true;
	else
		j->len += (size_t)n;
}

/*
 * Appends S as a JSON string, in ASCII: quote and backslash escaped, and
 * every control byte and every byte past 0x7e as \u00XX (a message may hold
 * any bytes; the line stays valid JSON).
 */
static void rl_json_quoted(struct rl_json *j, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	char esc[7] = "\\u00";
	const char *run = s;

	rl_json_put(j, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			continue;
		rl_json_put(j, run, (size_t)(s - run));
		run = s + 1;
		if (c == '"' || c == '\\') {
			esc[1] = (char)c;
			rl_json_put(j, esc, 2);
		} else if (c == '\n') {
			rl_json_put(j, "\\n", 2);
		} else if (c == '\t') {
			rl_json_put(j, "\\t", 2);
		} else {
			esc[1] = 'u';
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 0xf];
			rl_json_put(j, esc, 6);
		}
	}
	rl_json_put(j, run, (size_t)(s - run));
	rl_json_put(j, "\"", 1);
}

/* The key of the next member, after a comma when it is not the first. */
static void rl_json_key(struct rl_json *j, const char *key)
{
	if (j->members++)
		rl_json_put(j, ",", 1);
	rl_json_quoted(j, key);
	rl_json_put(j, ":", 1);
}

void rl_json_start(struct rl_json *j, char *buf, size_t size)
{
	*j = (struct rl_json){ .buf = buf, .size = size };
	rl_json_put(j, "{", 1);
}

void rl_json_str(struct rl_json *j, const char *key, const char *s)
{
	rl_json_key(j, key);
	if (s)
		rl_json_quoted(j, s);
	else
		rl_json_put(j, "null", 4);
}

void rl_json_int(struct rl_json *j, const char *key, long long v)
{
	rl_json_key(j, key);
	rl_json_printf(j, "%lld", v);
}

void rl_json_bool(struct rl_json *j, const char *key, bool v)
{
	rl_json_key(j, key);
	rl_json_put(j, v ? "true" : "false", v ? 4 : 5);
}

void rl_json_null(struct rl_json *j, const char *key)
{
	rl_json_key(j, key);
	rl_json_put(j, "null", 4);
}

int rl_json_end(struct rl_json *j)
{
	rl_json_put(j, "}\n", 2);
	if (j->err || j->len >= j->size)
		return -EMSGSIZE;
	j->buf[j->len] = '\0';
	return (int)j->len;
}
