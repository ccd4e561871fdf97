/* reference.c: Lab 3 test helpers: files, the receiver, the test's own protocol steps, the program. */
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "../harness.h"
#include "reference.h"

/* build/TREE/lab3/tests/test_x -> build/TREE/lab3/NAME or build/bin/NAME (UP: "..", "../../.."). */
static void ref_build_path(const char *up, const char *name, char *buf, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	ck_assert_msg(n > 0, "readlink /proc/self/exe: %s", strerror(errno));
	exe[n] = '\0';
	snprintf(buf, size, "%s/%s/%s", dirname(exe), up, name);
}

void ref_start(struct rf_receiver *rf, const char *const *extra)
{
	char path[PATH_MAX];

	/* The fixture finds the receiver from tests/rdma/: tell it where it is from here. */
	if (!getenv("RDMALAB_RECEIVER")) {
		ref_build_path("../../..", "bin/rdmalab-receiver", path, sizeof(path));
		setenv("RDMALAB_RECEIVER", path, 1);
	}
	rf_start(rf, extra);
}

void ref_make_file(struct ref_file *rfile, uint64_t size)
{
	static unsigned count;
	int fd, ret;

	memset(rfile, 0, sizeof(*rfile));
	rfile->size = size;
	rfile->bytes = malloc(size + 1);
	ck_assert_ptr_nonnull(rfile->bytes);
	rf_fill(rfile->bytes, size, (unsigned)time(NULL) ^ (unsigned)getpid() ^ ++count);
	EVP_Digest(rfile->bytes, size, rfile->sha256, NULL, EVP_sha256(), NULL);
	snprintf(rfile->path, sizeof(rfile->path), "/tmp/rdmalab-lab3-XXXXXX");
	fd = mkstemp(rfile->path);
	ck_assert_msg(fd >= 0, "mkstemp: %s", strerror(errno));
	ck_assert_msg(write(fd, rfile->bytes, size) == (ssize_t)size, "write %s: %s", rfile->path,
		      strerror(errno));
	close(fd);
	ret = lab3_open_file(&rfile->f, rfile->path);
	ck_assert_msg(ret == 0, "lab3_open_file(%s): %s", rfile->path, strerror(-ret));
}

void ref_drop_file(struct ref_file *rfile)
{
	lab3_close_file(&rfile->f);
	unlink(rfile->path);
	free(rfile->bytes);
	rfile->bytes = NULL;
}

const char *ref_sender_timeout(void)
{
	static char s[16];

	snprintf(s, sizeof(s), "%d", rf_timeout_ms(REF_WAIT_MS) / 1000);
	return s;
}

void ref_connect(struct lab3_conn *c, const struct rf_receiver *rf)
{
	int ret = lab3_connect(c, rf->addr, rf->port, rf_timeout_ms(REF_WAIT_MS));

	ck_assert_msg(ret == 0, "expected to connect to the receiver at %s:%u, got %s", rf->addr,
		      rf->port, strerror(-ret));
}

void ref_finish_line(const struct rf_receiver *rf, struct lab3_conn *c, struct ref_file *rfile,
		     char *line, size_t size)
{
	lab3_close_file(&rfile->f);
	lab3_disconnect(c);
	ck_assert_msg(rf_wait_line(rf, c->peer, rf_timeout_ms(10000), line, size),
		      "expected a line for %s in the receiver's results log, there is none",
		      c->peer);
}

int ref_line_step(const char *line)
{
	const char *s = strstr(line, "\"step\":");

	return s ? atoi(s + 7) : -1;
}

void ref_send_file_info(struct lab3_conn *c, const struct ref_file *rfile, bool flip_hash)
{
	struct rl_msg m = { .type = RL_MSG_FILE_INFO, .u.file_info.size = rfile->size };

	memcpy(m.u.file_info.sha256, rfile->sha256, 32);
	if (flip_hash)
		m.u.file_info.sha256[31] ^= 1;
	ck_assert_msg(lab3_send_msg(c, &m) == 0, "the test could not send FILE_INFO");
}

/* A private, writable copy-on-write mapping: not what the lab asks for, but enough to read from. */
void ref_register(struct lab3_conn *c, struct ref_file *rfile)
{
	struct lab3_file *f = &rfile->f;

	if (!f->size)
		return;
	f->data = mmap(NULL, f->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, f->fd, 0);
	ck_assert_msg(f->data != MAP_FAILED, "mmap %s: %s", f->path, strerror(errno));
	f->mr = rl_reg_mr(c->pd, f->data, f->size, IBV_ACCESS_LOCAL_WRITE);
	ck_assert_msg(f->mr, "the test could not register %llu bytes", (unsigned long long)f->size);
}

void ref_wait_window(struct lab3_conn *c, struct rl_msg_window *w)
{
	struct rl_msg m;

	ck_assert_msg(lab3_wait_msg(c, RL_MSG_WINDOW, &m) == 0,
		      "expected a WINDOW from the receiver (see the output above)");
	*w = m.u.window;
}

void ref_write_window(struct lab3_conn *c, struct ref_file *rfile, const struct rl_msg_window *w)
{
	struct ibv_wc wc;

	ck_assert_int_eq(rl_post_write(c->id->qp, rfile->f.mr, rfile->f.data + w->offset, w->len,
				       w->addr, w->rkey, LAB3_WR_WRITE),
			 0);
	ck_assert_msg(lab3_wait_completion(c, &wc) == 0 && wc.wr_id == LAB3_WR_WRITE,
		      "the test's RDMA WRITE of window %u failed", w->index);
}

void ref_window_done(struct lab3_conn *c, struct ref_file *rfile, const struct rl_msg_window *w)
{
	struct rl_msg m = { .type = RL_MSG_WINDOW_DONE };

	m.u.window_done.index = w->index;
	m.u.window_done.len = w->len;
	ck_assert_msg(lab3_send_msg(c, &m) == 0, "the test could not send WINDOW_DONE");
	rfile->f.written += w->len;
	rfile->f.windows++;
}

void ref_send_windows(struct lab3_conn *c, struct ref_file *rfile)
{
	struct rl_msg_window w;

	while (rfile->f.written < rfile->size) {
		ref_wait_window(c, &w);
		ref_write_window(c, rfile, &w);
		ref_window_done(c, rfile, &w);
	}
}

void ref_done(struct lab3_conn *c, struct rl_msg_result *result)
{
	struct rl_msg m = { .type = RL_MSG_DONE };

	ck_assert_msg(lab3_send_msg(c, &m) == 0, "the test could not send DONE");
	ck_assert_msg(lab3_wait_msg(c, RL_MSG_RESULT, &m) == 0,
		      "expected a RESULT after DONE (see the output above)");
	*result = m.u.result;
}

void ref_send_id(struct lab3_conn *c, const char *id)
{
	struct rl_msg m = { .type = RL_MSG_STUDENT_ID };

	snprintf(m.u.student_id.id, sizeof(m.u.student_id.id), "%s", id);
	ck_assert_msg(lab3_send_msg(c, &m) == 0, "the test could not send STUDENT_ID");
}

void ref_transfer(struct lab3_conn *c, struct ref_file *rfile)
{
	ref_send_file_info(c, rfile, false);
	ref_register(c, rfile);
	ref_send_windows(c, rfile);
}

/* Read up to SIZE - 1 bytes of PATH into BUF, NUL-terminated. */
static void ref_slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : 0;

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
}

static double ref_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void ref_run_sender(const struct rf_receiver *rf, const char *const *args, int limit_ms,
		    struct ref_run *run)
{
	char prog[PATH_MAX], out[128], err[128];
	const char *argv[32];
	double start = ref_now();
	int n = 0, status;
	const char *k;
	pid_t pid;

	ref_build_path("..", "lab3", prog, sizeof(prog));
	snprintf(out, sizeof(out), "%s/sender.out", rf->dir);
	snprintf(err, sizeof(err), "%s/sender.err", rf->dir);
	argv[n++] = prog;
	while (*args && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;
	memset(run, 0, sizeof(*run));
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(fo, STDOUT_FILENO);
		dup2(fe, STDERR_FILENO);
		execv(prog, (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", prog, strerror(errno));
		_exit(127);
	}
	run->status = -1;
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if ((ref_now() - start) * 1000 > limit_ms) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			status = -1;
			break;
		}
		usleep(20000);
	}
	if (status != -1 && WIFEXITED(status))
		run->status = WEXITSTATUS(status);
	run->seconds = ref_now() - start;
	ref_slurp(out, run->out, sizeof(run->out));
	ref_slurp(err, run->err, sizeof(run->err));
	unlink(out);
	unlink(err);
	k = strstr(run->out, "key: ");
	if (k)
		sscanf(k + 5, "%64s", run->key);
}

int ref_verify(const struct rf_receiver *rf, const char *id, const char *key)
{
	char cmd[PATH_MAX + 512];
	int status;

	snprintf(cmd, sizeof(cmd), "'%s' --secret-file '%s' --verify '%s' '%s' >/dev/null 2>&1",
		 getenv("RDMALAB_RECEIVER"), rf->secret_path, id, key);
	status = system(cmd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
