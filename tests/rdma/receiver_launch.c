/* receiver_launch.c: start reference receivers and wait until they listen (receiver_launch.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "receiver_launch.h"

#define RR_NAP_US 20000   /* between looks at the logs */
#define RR_LOG_LOOK 65536 /* how much of a log a look reads: "listening" comes first */

int rr_scaled_ms(int base_ms)
{
	const char *s = getenv("CK_TIMEOUT_MULTIPLIER");
	double m = s && *s ? atof(s) : 1.0;

	return (int)(base_ms * (m > 0 ? m : 1.0));
}

/*
 * The receiver's tests live at build/tests/rdma/ and at
 * build/{labs,solutions}/labN/tests/, rdmalab-receivers at build/bin/: a
 * few folders up from each is build/, which has bin/rdmalab-receiver.
 */
int rr_receiver_path(char *buf, size_t size)
{
	const char *env = getenv("RDMALAB_RECEIVER");
	char exe[PATH_MAX], *dir = exe;
	ssize_t n;

	if (env && *env) {
		snprintf(buf, size, "%s", env);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		snprintf(buf, size, "readlink /proc/self/exe: %s", strerror(errno));
		return -ENOENT;
	}
	exe[n] = '\0';
	for (int up = 0; up < 5; up++) {
		dir = dirname(dir); /* cuts EXE at its last slash, in place */
		if (snprintf(buf, size, "%s/bin/rdmalab-receiver", dir) >= (int)size)
			break;
		if (access(buf, X_OK) == 0)
			return 0;
	}
	snprintf(buf, size, "expected build/bin/rdmalab-receiver above %s (run make), found none",
		 dir);
	return -ENOENT;
}

/* SPEC as the receiver's command line, into ARGV (RR_MAX_EXTRA + 16 slots). */
static void rr_argv(const struct rr_spec *spec, char port[8], const char **argv)
{
	const char *const *extra = spec->extra;
	int n = 0;

	snprintf(port, 8, "%u", spec->port);
	argv[n++] = spec->bin;
	if (spec->secret_file) {
		argv[n++] = "--secret-file";
		argv[n++] = spec->secret_file;
	} else {
		argv[n++] = "--secret-random";
	}
	argv[n++] = "--results";
	argv[n++] = spec->results ? spec->results : "/dev/fd/3";
	argv[n++] = "-p";
	argv[n++] = port;
	if (spec->verbose)
		argv[n++] = "-v";
	while (extra && *extra && n < RR_MAX_EXTRA + 12)
		argv[n++] = *extra++;
	argv[n++] = spec->addr;
	argv[n] = NULL;
}

/* In the child: its descriptors as SPEC says, then the receiver; never returns. */
static void rr_exec(const struct rr_spec *spec, const char *const *argv)
{
	int null = open("/dev/null", O_RDONLY);

	if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(spec->log_fd, STDOUT_FILENO) < 0 ||
	    dup2(spec->log_fd, STDERR_FILENO) < 0)
		_exit(127);
	/* The log first: descriptor 3 may have been the log's. */
	if (!spec->results &&
	    (spec->results_fd == 3 ? fcntl(3, F_SETFD, 0) : dup2(spec->results_fd, 3)) < 0)
		_exit(127);
	if (spec->die_with_parent)
		prctl(PR_SET_PDEATHSIG, SIGTERM);
	execv(spec->bin, (char *const *)argv);
	fprintf(stderr, "exec %s: %s\n", spec->bin, strerror(errno));
	_exit(127);
}

pid_t rr_spawn(const struct rr_spec *spec)
{
	const char *argv[RR_MAX_EXTRA + 16];
	char port[8];
	pid_t pid;

	rr_argv(spec, port, argv);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "fork for %s: %s\n", spec->bin, strerror(errno));
		return -errno;
	}
	if (pid == 0)
		rr_exec(spec, argv);
	return pid;
}

/* Whether the file at PATH holds TEXT in its first RR_LOG_LOOK bytes. */
static bool rr_file_has(const char *path, const char *text)
{
	static char buf[RR_LOG_LOOK + 1];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, RR_LOG_LOOK);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return strstr(buf, text) != NULL;
}

bool rr_ended(pid_t pid)
{
	char path[64], stat[256], *state;
	int fd;
	ssize_t n;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return true;
	/* Someone else's child, ended and not yet reaped: "PID (NAME) Z ...". */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	n = read(fd, stat, sizeof(stat) - 1);
	close(fd);
	stat[n > 0 ? n : 0] = '\0';
	state = strrchr(stat, ')');
	return state && state[1] == ' ' && state[2] == 'Z';
}

/* Whether *PID has ended: reaped (and *PID set to 0) when it is ours. */
static bool rr_reap(pid_t *pid)
{
	int status;
	pid_t r = waitpid(*pid, &status, WNOHANG);

	if (r == *pid) {
		*pid = 0;
		return true;
	}
	return r < 0 && rr_ended(*pid);
}

static long long rr_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int rr_wait(int n, pid_t *pids, const char *const *logs, int limit_ms, bool *exited)
{
	long long end = rr_now_ms() + limit_ms;
	int i = 0;

	*exited = false;
	while (i < n) {
		if (rr_file_has(logs[i], RR_LISTENING)) {
			i++;
			continue;
		}
		if (rr_reap(&pids[i])) {
			*exited = true;
			return i;
		}
		if (rr_now_ms() >= end)
			return i;
		usleep(RR_NAP_US);
	}
	return -1;
}

void rr_last_line(const char *path, char *out, size_t size)
{
	FILE *f = fopen(path, "r");
	char line[1024];

	if (size)
		out[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0])
			snprintf(out, size, "%s", line);
	}
	if (f)
		fclose(f);
}
