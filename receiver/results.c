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

/* Member KEY: HEX as a string, or null when it is empty. */
static void rcv_json_hex(struct rl_json *j, const char *key, const char *hex)
{
	rl_json_str(j, key, hex[0] ? hex : NULL);
}

/* Format R as one JSON line ending in '\n' into BUF. */
int rcv_results_format(char *buf, size_t size, const struct rcv_result *r)
{
	char when[32];
	time_t t = (time_t)r->time;
	struct rl_json j;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	rl_json_start(&j, buf, size);
	rl_json_str(&j, "time", when);
	rl_json_str(&j, "peer", r->peer);
	rl_json_str(&j, "student_id", r->student_id[0] ? r->student_id : NULL);
	if (r->has_file_size)
		rl_json_int(&j, "file_size", (long long)r->file_size);
	else
		rl_json_null(&j, "file_size");
	rcv_json_hex(&j, "sha256", r->sha256);
	rl_json_int(&j, "bytes_received", (long long)r->bytes_received);
	if (r->hash_ok < 0)
		rl_json_null(&j, "hash_ok");
	else
		rl_json_bool(&j, "hash_ok", r->hash_ok);
	rl_json_bool(&j, "key_issued", r->key_issued);
	rcv_json_hex(&j, "key_sha256", r->key_sha256);
	rl_json_int(&j, "step", r->step);
	rl_json_str(&j, "step_name", rcv_step_name(r->step));
	rl_json_str(&j, "error", r->error[0] ? r->error : NULL);
	rl_json_bool(&j, "self_study", r->self_study);
	return rl_json_end(&j);
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
