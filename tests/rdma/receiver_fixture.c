#define _GNU_SOURCE /* O_TMPFILE */
/* receiver_fixture.c: start, watch and stop rdmalab-receiver for the RDMA tests. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "receiver_fixture.h"
#include "receiver_launch.h"

int rf_timeout_ms(int base_ms)
{
	return rr_scaled_ms(base_ms);
}

/*
 * A port nobody listens on: bind an rdma_cm id to port 0 and let it go. In
 * a child of its own, so that the caller opens no verbs context: a graded
 * test's parent starts receivers, and the acts it forks later could not use
 * a context it opened (their verbs calls fail with EACCES).
 */
static uint16_t rf_free_port(const char *addr)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	uint16_t port = 0;
	int fd[2], status;
	pid_t pid;

	ck_assert_msg(pipe(fd) == 0, "pipe: %s", strerror(errno));
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(fd[0]);
		ch = rl_cm_create_channel();
		if (ch && !rl_cm_listen(ch, addr, 0, &id, &port))
			rl_cm_destroy(id);
		if (ch)
			rdma_destroy_event_channel(ch);
		_exit(write(fd[1], &port, sizeof(port)) == sizeof(port) ? 0 : 1);
	}
	close(fd[1]);
	if (read(fd[0], &port, sizeof(port)) != sizeof(port))
		port = 0;
	close(fd[0]);
	waitpid(pid, &status, 0);
	ck_assert_msg(port, "could not bind an rdma_cm id to %s:0 (see stderr)", addr);
	return port;
}

/* Write the secret file, mode 600. */
static void rf_write_secret(struct rf_receiver *rf)
{
	int fd;

	rf_fill(rf->secret, sizeof(rf->secret), (unsigned)getpid());
	rf->secret_len = sizeof(rf->secret);
	/* The receiver drops one trailing newline from a secret file: end on another byte. */
	if (rf->secret[rf->secret_len - 1] == '\n')
		rf->secret[rf->secret_len - 1] = 'n';
	snprintf(rf->secret_path, sizeof(rf->secret_path), "%s/secret", rf->dir);
	fd = open(rf->secret_path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_msg(fd >= 0, "create %s: %s", rf->secret_path, strerror(errno));
	ck_assert_int_eq(write(fd, rf->secret, rf->secret_len), (ssize_t)rf->secret_len);
	close(fd);
}

/* Read all of PATH (malloc'd, NUL-terminated; empty if missing). */
static char *rf_read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t len = 0, cap = 4096, n;
	char *buf = malloc(cap);

	ck_assert_ptr_nonnull(buf);
	while (f && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len < 2048) {
			cap *= 2;
			buf = realloc(buf, cap);
			ck_assert_ptr_nonnull(buf);
		}
	}
	buf[len] = '\0';
	if (f)
		fclose(f);
	return buf;
}

char *rf_log(const struct rf_receiver *rf)
{
	return rf_read_file(rf->log_path);
}

char *rf_results(const struct rf_receiver *rf)
{
	return rf_read_file(rf->results_path);
}

/*
 * A new unnamed file in DIR: O_TMPFILE, or, where DIR's file system has
 * none (overlayfs before Linux 6.6: a container's /tmp, the 6.1 guest's),
 * a file mkostemp makes and unlink removes at once, in DIR (the callers'
 * own mkdtemp folder or /tmp), so that only its descriptor names it.
 */
int rf_unnamed_file(const char *dir)
{
	char path[PATH_MAX];
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
	if (snprintf(path, sizeof(path), "%s/.unnamed-XXXXXX", dir) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	return fd;
}

int rf_count_in(const char *text, const char *needle)
{
	int n = 0;

	while ((text = strstr(text, needle))) {
		n++;
		text += strlen(needle);
	}
	return n;
}

/*
 * Fork and exec the receiver (rr_spawn), its output into the log file.
 * Sealed (results_fd set): a secret of its own, its results log on
 * descriptor 3, no path; else the secret file and the results log at
 * their paths.
 */
static void rf_spawn(struct rf_receiver *rf, const char *const *extra)
{
	char path[PATH_MAX];
	int log = open(rf->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	struct rr_spec spec = {
		.bin = path,
		.addr = rf->addr,
		.port = rf->port,
		.secret_file = rf->results_fd >= 0 ? NULL : rf->secret_path,
		.results = rf->results_fd >= 0 ? NULL : rf->results_path,
		.results_fd = rf->results_fd,
		.log_fd = log,
		.verbose = true,
		.die_with_parent = true,
		.extra = extra,
	};
	pid_t pid;

	ck_assert_msg(log >= 0, "create %s: %s", rf->log_path, strerror(errno));
	ck_assert_msg(rr_receiver_path(path, sizeof(path)) == 0, "%s", path);
	pid = rr_spawn(&spec);
	close(log);
	ck_assert_msg(pid > 0, "could not start %s: %s", path, strerror(-pid));
	rf->pid = pid;
}

/* Start a receiver: SEALED, with a secret and a log no path leads to (see rf_start_sealed). */
static void rf_start_as(struct rf_receiver *rf, const char *const *extra, bool sealed)
{
	const char *logs[] = { rf->log_path };
	int limit = rf_timeout_ms(10000);
	bool exited;
	char *log;

	memset(rf, 0, sizeof(*rf));
	rf->results_fd = -1;
	rf->addr = getenv("RDMALAB_ADDR");
	ck_assert_msg(rf->addr && *rf->addr, "RDMALAB_ADDR is not set: run with 'make rdma-test'");
	snprintf(rf->dir, sizeof(rf->dir), "/tmp/rdmalab-receiver-XXXXXX");
	ck_assert_msg(mkdtemp(rf->dir), "mkdtemp: %s", strerror(errno));
	if (sealed) {
		rf->results_fd = rf_unnamed_file(rf->dir);
		ck_assert_msg(rf->results_fd >= 0, "an unnamed file in %s: %s", rf->dir,
			      strerror(errno));
		snprintf(rf->results_path, sizeof(rf->results_path), "/proc/self/fd/%d",
			 rf->results_fd);
	} else {
		rf_write_secret(rf);
		snprintf(rf->results_path, sizeof(rf->results_path), "%s/results.jsonl", rf->dir);
	}
	snprintf(rf->log_path, sizeof(rf->log_path), "%s/receiver.log", rf->dir);
	rf->port = rf_free_port(rf->addr);
	rf_spawn(rf, extra);
	if (rr_wait(1, &rf->pid, logs, limit, &exited) < 0)
		return;
	log = rf_log(rf);
	if (exited)
		ck_abort_msg("receiver exited before listening; its output:\n%s", log);
	ck_abort_msg("receiver did not say '" RR_LISTENING "' within %d ms; its output:\n%s", limit,
		     log);
}

void rf_start(struct rf_receiver *rf, const char *const *extra)
{
	rf_start_as(rf, extra, false);
}

void rf_start_sealed(struct rf_receiver *rf, const char *const *extra)
{
	rf_start_as(rf, extra, true);
}

int rf_stop(struct rf_receiver *rf)
{
	char path[128];
	int status = -1;

	if (rf->pid > 0) {
		int limit = rf_timeout_ms(10000), waited = 0;
		pid_t pid = rf->pid, done;

		rf->pid = 0;
		kill(pid, SIGTERM);
		while ((done = waitpid(pid, &status, WNOHANG)) == 0 && waited < limit) {
			usleep(20000);
			waited += 20;
		}
		if (done == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			ck_abort_msg(
				"expected the receiver to exit within %d ms of SIGTERM, it did not",
				limit);
		}
	}
	if (rf->results_fd >= 0) {
		close(rf->results_fd);
		rf->results_fd = -1;
		rf->results_path[0] = '\0';
	}
	if (getenv("RDMALAB_KEEP_TEST_FILES"))
		return status;
	if (rf->secret_path[0])
		unlink(rf->secret_path);
	if (rf->results_path[0])
		unlink(rf->results_path);
	unlink(rf->log_path);
	snprintf(path, sizeof(path), "%s", rf->dir);
	rmdir(path);
	return status;
}

struct rs_opts rf_sender(const struct rf_receiver *rf, const uint8_t *data, uint64_t n,
			 const char *id)
{
	return (struct rs_opts){
		.addr = rf->addr,
		.port = rf->port,
		.data = data,
		.size = n,
		.id = id,
		.timeout_ms = rf_timeout_ms(RS_DEFAULT_TIMEOUT_MS),
	};
}

void rf_expected_key(const struct rf_receiver *rf, const char *id, char key[RCV_KEY_LEN + 1])
{
	ck_assert_int_eq(rcv_key_for(rf->secret, rf->secret_len, id, key), 0);
}

void rf_fill(uint8_t *buf, size_t n, unsigned seed)
{
	uint32_t x = seed * 2654435761u + 1;
	size_t i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (uint8_t)x;
	}
}

bool rf_wait_line(const struct rf_receiver *rf, const char *peer, int timeout_ms, char *line,
		  size_t size)
{
	char needle[96], *all, *hit, *end;
	int waited;

	snprintf(needle, sizeof(needle), "\"peer\":\"%s\"", peer);
	for (waited = 0;; waited += 20) {
		all = rf_read_file(rf->results_path);
		hit = strstr(all, needle);
		/* A whole line only: a reader may see a write that crosses a
		 * page of the file half done (Linux makes no read atomic with
		 * a write), as a loaded run of this test once did. */
		end = hit ? strchr(hit, '\n') : NULL;
		if (end) {
			while (hit > all && hit[-1] != '\n')
				hit--;
			snprintf(line, size, "%.*s", (int)(end - hit), hit);
			free(all);
			return true;
		}
		free(all);
		if (waited >= timeout_ms)
			return false;
		usleep(20000);
	}
}

int rf_count_lines(const struct rf_receiver *rf)
{
	char *all = rf_read_file(rf->results_path), *p;
	int n = 0;

	for (p = all; *p; p++)
		n += *p == '\n';
	free(all);
	return n;
}

static void *rf_job_main(void *arg)
{
	struct rf_job *job = arg;

	job->ret = rs_send_file(&job->o, &job->r);
	return NULL;
}

void rf_run(struct rf_job *job)
{
	ck_assert_msg(!pthread_create(&job->thread, NULL, rf_job_main, job),
		      "pthread_create failed");
}

int rf_join(struct rf_job *job)
{
	pthread_join(job->thread, NULL);
	return job->ret;
}
