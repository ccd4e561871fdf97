/*
 * results.c: the results log, one JSON object per line per connection. A
 * line is written and fsynced before the key it records is sent, so a key
 * a student holds is always in the log, even if the receiver crashes.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "receiver.h"

static const char *const rcv_step_names[] = {
	"none", "connected", "file-info", "window", "done", "result", "student-id", "key",
};

/* "connected", "file-info" ... for step 0 to 7; "unknown" otherwise. */
const char *rcv_step_name(int step)
{
	if (step < 0 || step >= (int)(sizeof(rcv_step_names) / sizeof(rcv_step_names[0])))
		return "unknown";
	return rcv_step_names[step];
}

/* Open PATH for appending, creating it readable by its owner only. */
int rcv_results_open(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0)
		return rl_fail("open", errno, "results log %s (see --results)", path);
	return fd;
}

/* Append S to OUT as a JSON string, quotes included; false if it did not fit. */
static bool rcv_json_string(char **out, char *end, const char *s)
{
	char *p = *out;

	if (p >= end)
		return false;
	*p++ = '"';
	for (; *s && p < end; s++) {
		if (*s == '"' || *s == '\\') {
			*p++ = '\\';
			if (p >= end)
				return false;
			*p++ = *s;
		} else if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e) {
			if (end - p < 6)
				return false;
			p += snprintf(p, 7, "\\u%04x", (unsigned char)*s);
		} else {
			*p++ = *s;
		}
	}
	if (*s || p >= end)
		return false;
	*p++ = '"';
	*out = p;
	return true;
}

/* Append FMT's output to OUT; false if it did not fit. */
#define RCV_APPEND(out, end, ...)                                                                  \
	({                                                                                         \
		int n_ = snprintf(*(out), (size_t)((end) - *(out)), __VA_ARGS__);                  \
		bool ok_ = n_ >= 0 && n_ < (end) - *(out);                                         \
		if (ok_)                                                                           \
			*(out) += n_;                                                              \
		ok_;                                                                               \
	})

/* Append HEX as a JSON string, or null when it is empty; false if it did not fit. */
static bool rcv_json_hex(char **out, const char *end, const char *hex)
{
	if (!hex[0])
		return RCV_APPEND(out, end, "null");
	return RCV_APPEND(out, end, "\"%s\"", hex);
}

/* Format R as one JSON line ending in '\n' into BUF. */
int rcv_results_format(char *buf, size_t size, const struct rcv_result *r)
{
	static const char *const hash_ok[] = { "null", "false", "true" };
	char when[32], *p = buf, *end = buf + size;
	time_t t = (time_t)r->time;
	struct tm tm;
	bool ok;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	ok = RCV_APPEND(&p, end, "{\"time\":\"%s\",\"peer\":", when) &&
	     rcv_json_string(&p, end, r->peer) && RCV_APPEND(&p, end, ",\"student_id\":");
	if (ok && r->student_id[0])
		ok = rcv_json_string(&p, end, r->student_id);
	else if (ok)
		ok = RCV_APPEND(&p, end, "null");
	if (ok && r->has_file_size)
		ok = RCV_APPEND(&p, end, ",\"file_size\":%llu", (unsigned long long)r->file_size);
	else if (ok)
		ok = RCV_APPEND(&p, end, ",\"file_size\":null");
	ok = ok && RCV_APPEND(&p, end, ",\"sha256\":") && rcv_json_hex(&p, end, r->sha256);
	ok = ok &&
	     RCV_APPEND(&p, end,
			",\"bytes_received\":%llu,\"hash_ok\":%s,\"key_issued\":%s,"
			"\"key_sha256\":",
			(unsigned long long)r->bytes_received, hash_ok[r->hash_ok + 1],
			r->key_issued ? "true" : "false") &&
	     rcv_json_hex(&p, end, r->key_sha256);
	ok = ok && RCV_APPEND(&p, end, ",\"step\":%d,\"step_name\":\"%s\",\"error\":", r->step,
			      rcv_step_name(r->step));
	if (ok && r->error[0])
		ok = rcv_json_string(&p, end, r->error);
	else if (ok)
		ok = RCV_APPEND(&p, end, "null");
	ok = ok && RCV_APPEND(&p, end, ",\"self_study\":%s}\n", r->self_study ? "true" : "false");
	return ok ? (int)(p - buf) : -EMSGSIZE;
}

/* Append R to FD as one line, then fsync: the line is on disk when this returns 0. */
int rcv_results_append(int fd, const struct rcv_result *r)
{
	char line[2048];
	int len = rcv_results_format(line, sizeof(line), r);
	ssize_t n;

	if (len < 0) {
		rl_err("results log: line for %s does not fit in %zu bytes", r->peer, sizeof(line));
		return len;
	}
	n = write(fd, line, (size_t)len);
	if (n != len)
		return rl_fail("write", n < 0 ? errno : EIO, "results log line for %s", r->peer);
	if (fsync(fd))
		return rl_fail("fsync", errno, "results log");
	return 0;
}
