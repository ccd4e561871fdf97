/* test_teardown.c: Lab 1 step 11: nothing left behind, and the lab1 programs end to end. */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"
#include "lab1.h"

/* This process's PD, MR, CQ and QP counts on the device, per `rdma resource show`. */
struct counts {
	int pd, mr, cq, qp;
};

static struct counts count_now(void)
{
	return (struct counts){
		.pd = fx_res_count("pd"),
		.mr = fx_res_count("mr"),
		.cq = fx_res_count("cq"),
		.qp = fx_res_count("qp"),
	};
}

static void expect_counts(struct counts want)
{
	struct counts got = count_now();

	ck_assert_msg(got.pd == want.pd && got.mr == want.mr && got.cq == want.cq &&
			      got.qp == want.qp,
		      "expected pd %d mr %d cq %d qp %d (rdma resource show, as before), got pd %d "
		      "mr %d cq %d qp %d",
		      want.pd, want.mr, want.cq, want.qp, got.pd, got.mr, got.cq, got.qp);
}

/* A full set built with plain verbs on CTX, the QP in RTS like the program's. */
static struct lab1_res full_set(struct ibv_context *ctx, char *buf)
{
	struct lab1_res res;

	res.pd = fx_pd(ctx);
	res.mr = ibv_reg_mr(res.pd, buf, FX_BUF_SIZE,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ck_assert_msg(res.mr, "fixture: ibv_reg_mr failed");
	res.cq = fx_cq(ctx);
	res.qp = fx_qp(res.pd, res.cq);
	fx_to_init(res.qp);
	fx_to_rtr(res.qp, res.qp);
	fx_to_rts(res.qp);
	return res;
}

/* Step 11 */

RL_TEST(teardown_returns_0_and_clears_every_pointer, .step = 11, .points = 2)
{
	struct ibv_context *ctx = fx_open();
	char *buf = calloc(1, FX_BUF_SIZE);
	struct lab1_res res = full_set(ctx, buf);
	int ret = lab1_teardown(&res);

	ck_assert_msg(ret == 0, "expected lab1_teardown to return 0, got %d (%s)", ret,
		      strerror(-ret));
	ck_assert_msg(!res.pd && !res.mr && !res.cq && !res.qp,
		      "expected every pointer NULL afterwards, got pd %p mr %p cq %p qp %p",
		      (void *)res.pd, (void *)res.mr, (void *)res.cq, (void *)res.qp);
	ibv_close_device(ctx);
	free(buf);
}
END_TEST

RL_TEST(teardown_leaves_no_pd_mr_cq_or_qp_behind, .step = 11, .points = 2)
{
	struct ibv_context *ctx = fx_open();
	char *buf = calloc(1, FX_BUF_SIZE);
	struct counts before = count_now();
	struct lab1_res res = full_set(ctx, buf);
	int ret = lab1_teardown(&res);

	ck_assert_msg(ret == 0, "expected lab1_teardown to return 0, got %d (%s)", ret,
		      strerror(-ret));
	expect_counts(before);
	ibv_close_device(ctx);
	free(buf);
}
END_TEST

RL_TEST(teardown_frees_everything_in_the_pd_so_it_can_go, .step = 11, .points = 1)
{
	struct ibv_context *ctx = fx_open();
	char *buf = calloc(1, FX_BUF_SIZE);
	struct lab1_res res = full_set(ctx, buf);
	struct ibv_pd *pd = res.pd;
	int ret;

	res.pd = NULL; /* keep the PD: ibv_dealloc_pd fails (EBUSY) while it holds anything */
	ret = lab1_teardown(&res);
	ck_assert_msg(ret == 0, "expected lab1_teardown to return 0, got %d (%s)", ret,
		      strerror(-ret));
	ret = ibv_dealloc_pd(pd);
	ck_assert_msg(ret == 0, "expected ibv_dealloc_pd to succeed after teardown, got %d (%s)",
		      ret, strerror(ret));
	ibv_close_device(ctx);
	free(buf);
}
END_TEST

RL_TEST(teardown_of_a_half_built_set_destroys_what_is_there, .step = 11, .points = 1)
{
	struct ibv_context *ctx = fx_open();
	struct counts before = count_now();
	struct lab1_res res = { .pd = fx_pd(ctx), .cq = fx_cq(ctx) };
	int ret = lab1_teardown(&res);

	ck_assert_msg(ret == 0, "expected lab1_teardown of a PD and a CQ to return 0, got %d (%s)",
		      ret, strerror(-ret));
	expect_counts(before);
	ibv_close_device(ctx);
}
END_TEST

/* The lab1 program next to this test program: build/TREE/lab1/lab1. */
static void program_path(char *path, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	ck_assert_msg(n > 0, "expected /proc/self/exe, got %s", strerror(errno));
	self[n] = '\0';
	slash = strrchr(self, '/');
	*slash = '\0';
	snprintf(path, len, "%s/../lab1", self);
	ck_assert_msg(access(path, X_OK) == 0, "expected the lab1 program at %s, it is not there",
		      path);
}

/* Start PROG -p PORT [ADDR] with its output in the file OUT. */
static pid_t start(const char *prog, const char *port, const char *addr, const char *out,
		   const char *msg, const char *text)
{
	pid_t pid = fork();
	int fd;

	ck_assert_msg(pid >= 0, "expected fork to work, got %s", strerror(errno));
	if (pid > 0)
		return pid;
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	alarm(50);
	if (msg && text) {
		setenv("LAB1_MSG", msg, 1);
		setenv("LAB1_TEXT", text, 1);
	}
	execl(prog, "lab1", "-p", port, addr, (char *)NULL);
	_exit(127);
}

/* Wait for PID up to SECONDS, then kill it; its exit status, or -1. */
static int finish(pid_t pid, int seconds)
{
	int status, i;

	for (i = 0; i < seconds * 10; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		usleep(100000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

static void slurp(const char *file, char *buf, size_t len)
{
	FILE *f = fopen(file, "r");
	size_t n = f ? fread(buf, 1, len - 1, f) : 0;

	buf[n] = '\0';
	if (f)
		fclose(f);
}

RL_TEST(lab1_server_and_client_programs_run_end_to_end, .step = 11, .points = 2, .needs = 10)
{
	char srv_out[] = "/tmp/lab1-server-XXXXXX", cli_out[] = "/tmp/lab1-client-XXXXXX";
	char prog[PATH_MAX + 16], port[16], srv[4096], cli[4096], msg[64], text[128], want[160];
	int srv_status, cli_status;
	pid_t server, client;

	/* Random, so that the server prints them only when they really arrived. */
	rl_test_random_text(msg, sizeof(msg));
	rl_test_random_text(text, sizeof(text));
	program_path(prog, sizeof(prog));
	snprintf(port, sizeof(port), "%u", rl_test_free_port());
	close(mkstemp(srv_out));
	close(mkstemp(cli_out));
	server = start(prog, port, NULL, srv_out, NULL, NULL);
	client = start(prog, port, rl_test_addr(), cli_out, msg, text);
	cli_status = finish(client, 45);
	if (cli_status != 0)
		kill(server, SIGKILL);
	srv_status = finish(server, 10);
	slurp(srv_out, srv, sizeof(srv));
	slurp(cli_out, cli, sizeof(cli));
	unlink(srv_out);
	unlink(cli_out);
	ck_assert_msg(cli_status == 0, "expected the client to exit 0, got %d; it printed:\n%s",
		      cli_status, cli);
	ck_assert_msg(srv_status == 0, "expected the server to exit 0, got %d; it printed:\n%s",
		      srv_status, srv);
	snprintf(want, sizeof(want), "\"%s\"", msg);
	ck_assert_msg(strstr(srv, want),
		      "expected the server to print the message %s, it printed:\n%s", want, srv);
	snprintf(want, sizeof(want), "\"%s\"", text);
	ck_assert_msg(strstr(srv, want),
		      "expected the server to print the written text %s, it printed:\n%s", want,
		      srv);
}
END_TEST
