/*
 * test_teardown.c: Lab 1 step 11: nothing left behind, and the lab1
 * programs end to end. After the lab's teardown the act holds, and the
 * check counts what the kernel still lists for its process (rdma res).
 * The programs run from the check, each with the reference client or
 * server (peer.c) on the other end, which chooses what it sends and
 * reports what reached it.
 */
#define _GNU_SOURCE /* close_range */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "lab1.h"

#define MAX_RES 8

/* What the kernel lists for the act's process: its PDs, MRs, CQs and QPs. */
struct counts {
	int pd, mr, cq, qp;
};

static struct counts count_now(struct rl_case *c)
{
	struct rl_res r[MAX_RES];

	return (struct counts){
		.pd = fx_res(c, "pd", r, MAX_RES),
		.mr = fx_res(c, "mr", r, MAX_RES),
		.cq = fx_res(c, "cq", r, MAX_RES),
		.qp = fx_res(c, "qp", r, MAX_RES),
	};
}

/* Nothing left: the act's process holds no PD, MR, CQ or QP any more. */
static void expect_none_left(struct rl_case *c)
{
	struct counts got = count_now(c);

	rl_expect(c, !got.pd && !got.mr && !got.cq && !got.qp,
		  "expected pd 0 mr 0 cq 0 qp 0 (rdma resource show, as before), got pd %d mr %d "
		  "cq %d qp %d: see docs/lab1.md#step-11",
		  got.pd, got.mr, got.cq, got.qp);
}

/* A full set built with plain verbs on CTX, the QP in RTS like the program's. */
static struct lab1_res full_set(struct ibv_context *ctx)
{
	struct lab1_res res;

	res.pd = fx_pd(ctx);
	res.mr = fx_mr(res.pd, FX_BUF_SIZE);
	res.cq = fx_cq(ctx);
	res.qp = fx_qp(res.pd, res.cq);
	fx_to_init(res.qp);
	fx_to_rtr(res.qp, res.qp);
	fx_to_rts(res.qp);
	return res;
}

static bool returned_0(struct rl_case *c, const char *what)
{
	long long ret = rl_said_int(c, "ret");

	return rl_expect(c, ret == 0,
			 "expected lab1_teardown%s to return 0, got %lld (%s)%s: see "
			 "docs/lab1.md#step-11",
			 what, ret, strerror((int)-ret),
			 ret == -EBUSY ? " (an object destroyed while another still uses it)" : "");
}

/* Step 11 */

/* The lab's teardown of a full set; the pointers it leaves. */
static void teardown(struct rl_case *c)
{
	struct lab1_res res = full_set(fx_open());

	(void)c;
	rl_say_int("ret", lab1_teardown(&res));
	rl_say_int("pd", (long long)(uintptr_t)res.pd);
	rl_say_int("mr", (long long)(uintptr_t)res.mr);
	rl_say_int("cq", (long long)(uintptr_t)res.cq);
	rl_say_int("qp", (long long)(uintptr_t)res.qp);
	rl_hold();
}

static void cleared_and_gone(struct rl_case *c)
{
	long long pd = rl_said_int(c, "pd"), mr = rl_said_int(c, "mr"), cq = rl_said_int(c, "cq"),
		  qp = rl_said_int(c, "qp");

	if (returned_0(c, "") &&
	    rl_expect(c, !pd && !mr && !cq && !qp,
		      "expected every pointer NULL afterwards, got pd %#llx mr %#llx cq %#llx qp "
		      "%#llx",
		      pd, mr, cq, qp))
		expect_none_left(c); /* NULL pointers, and the objects gone too */
}

RL_GRADED(teardown_returns_0_and_clears_every_pointer, .step = 11, .points = 2, .act = teardown,
	  .check = cleared_and_gone);

static void nothing_left(struct rl_case *c)
{
	if (returned_0(c, ""))
		expect_none_left(c);
}

RL_GRADED(teardown_leaves_no_pd_mr_cq_or_qp_behind, .step = 11, .points = 2, .act = teardown,
	  .check = nothing_left);

/* The lab's teardown of a full set whose PD it is not given; then ibv_dealloc_pd of that PD. */
static void teardown_keeping_the_pd(struct rl_case *c)
{
	struct lab1_res res = full_set(fx_open());
	struct ibv_pd *pd = res.pd;

	(void)c;
	res.pd = NULL; /* keep the PD: ibv_dealloc_pd fails (EBUSY) while it holds anything */
	rl_say_int("ret", lab1_teardown(&res));
	rl_say_int("dealloc", ibv_dealloc_pd(pd));
	rl_hold();
}

static void pd_could_go(struct rl_case *c)
{
	long long ret = rl_said_int(c, "dealloc");

	if (returned_0(c, "") &&
	    rl_expect(c, ret == 0,
		      "expected ibv_dealloc_pd to succeed after teardown, got %lld (%s)", ret,
		      strerror((int)ret)))
		expect_none_left(c);
}

RL_GRADED(teardown_frees_everything_in_the_pd_so_it_can_go, .step = 11, .points = 1,
	  .act = teardown_keeping_the_pd, .check = pd_could_go);

/* The lab's teardown of a PD and a CQ, nothing else. */
static void teardown_half(struct rl_case *c)
{
	struct ibv_context *ctx = fx_open();
	struct lab1_res res = { .pd = fx_pd(ctx), .cq = fx_cq(ctx) };

	(void)c;
	rl_say_int("ret", lab1_teardown(&res));
	rl_hold();
}

static void half_gone(struct rl_case *c)
{
	if (returned_0(c, " of a PD and a CQ"))
		expect_none_left(c);
}

RL_GRADED(teardown_of_a_half_built_set_destroys_what_is_there, .step = 11, .points = 1,
	  .act = teardown_half, .check = half_gone);

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

/* Start PROG -p PORT [ADDR] with its output in the file OUT, MSG and TEXT in its environment. */
static pid_t start(const char *prog, uint16_t port, const char *addr, const char *out,
		   const char *msg, const char *text)
{
	char port_arg[16];
	pid_t pid = fork();
	int fd;

	ck_assert_msg(pid >= 0, "expected fork to work, got %s", strerror(errno));
	if (pid > 0)
		return pid;
	snprintf(port_arg, sizeof(port_arg), "%u", port);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	close_range(3, ~0U, 0); /* none of the runner's descriptors */
	signal(SIGTERM, SIG_DFL);
	alarm(50);
	if (msg && text) {
		setenv("LAB1_MSG", msg, 1);
		setenv("LAB1_TEXT", text, 1);
	}
	execl(prog, "lab1", "-p", port_arg, addr, (char *)NULL);
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

/* FILE's text into BUF of LEN bytes; FILE removed. */
static void slurp(const char *file, char *buf, size_t len)
{
	FILE *f = fopen(file, "r");
	size_t n = f ? fread(buf, 1, len - 1, f) : 0;

	buf[n] = '\0';
	if (f)
		fclose(f);
	unlink(file);
}

/* Whether PID runs yet; once it ended, it is reaped, its exit status (-1: a signal) in *STATUS. */
static bool running(pid_t pid, int *status)
{
	int st;

	if (waitpid(pid, &st, WNOHANG) != pid)
		return true;
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return false;
}

/*
 * Whether a socket listens on TCP PORT, as the kernel lists them
 * (/proc/net/tcp: "sl local_address rem_address st", LISTEN is 0A). A test
 * connection would take the place of the client the server waits for.
 */
static bool listening(uint16_t port)
{
	FILE *f = fopen("/proc/net/tcp", "r");
	unsigned local_port, state;
	char line[256];
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f))
		found = sscanf(line, " %*d: %*x:%x %*x:%*x %x", &local_port, &state) == 2 &&
			local_port == port && state == 0x0A;
	if (f)
		fclose(f);
	return found;
}

/* The lab1 server program, and the reference client sending it random texts. */
static void server_program(struct rl_case *c, const char *prog)
{
	char out[] = "/tmp/lab1-server-XXXXXX", printed[4096], msg[64], text[128], want[160];
	uint16_t port = rl_test_free_port();
	int ref = -ECONNREFUSED, status = -1, i;
	bool ended = false;
	pid_t server;

	rl_test_random_text(msg, sizeof(msg));
	rl_test_random_text(text, sizeof(text));
	close(mkstemp(out));
	server = start(prog, port, NULL, out, NULL, NULL);
	/* Connect once it listens, unless it ends first. */
	for (i = 0; i < 400 && !(ended = !running(server, &status)) && !listening(port); i++)
		usleep(50000);
	if (!ended && listening(port))
		ref = fx_ref_client(rl_test_addr(), port, msg, text);
	if (!ended) {
		if (ref)
			kill(server, SIGKILL);
		status = finish(server, 10);
	}
	slurp(out, printed, sizeof(printed));
	if (!rl_expect(c, status == 0, "expected the server to exit 0, got %d; it printed:\n%s",
		       status, printed) ||
	    !rl_expect(c, ref == 0,
		       "expected the reference client to send to the server, it failed: %s; the "
		       "server printed:\n%s",
		       strerror(-ref), printed))
		return;
	snprintf(want, sizeof(want), "\"%s\"", msg);
	if (rl_expect(c, strstr(printed, want),
		      "expected the server to print the message %s, it printed:\n%s", want,
		      printed)) {
		snprintf(want, sizeof(want), "\"%s\"", text);
		rl_expect(c, strstr(printed, want),
			  "expected the server to print the written text %s, it printed:\n%s", want,
			  printed);
	}
}

/* The lab1 client program, with random texts, and the reference server taking them. */
static void client_program(struct rl_case *c, const char *prog)
{
	char out[] = "/tmp/lab1-client-XXXXXX", printed[4096], msg[64], text[128];
	struct pollfd pfd = { .events = POLLIN };
	struct lab1_received got = { 0 };
	uint16_t port = 0;
	int ref = -ENOTCONN, status = -1, fd = -1, i;
	bool ended = false;
	pid_t client;

	pfd.fd = rl_oob_listen(NULL, 0, &port);
	ck_assert_msg(pfd.fd >= 0, "expected to listen for the client, got %s", strerror(-pfd.fd));
	rl_test_random_text(msg, sizeof(msg));
	rl_test_random_text(text, sizeof(text));
	close(mkstemp(out));
	client = start(prog, port, rl_test_addr(), out, msg, text);
	/* Accept the client, unless it ends first. */
	for (i = 0; i < 400 && fd < 0 && !(ended = !running(client, &status)); i++)
		if (poll(&pfd, 1, 50) > 0)
			fd = rl_oob_accept(pfd.fd, 0);
	close(pfd.fd);
	if (fd >= 0) {
		ref = fx_ref_server(fd, &got);
		close(fd);
	}
	if (!ended)
		status = finish(client, 10);
	slurp(out, printed, sizeof(printed));
	if (rl_expect(c, status == 0, "expected the client to exit 0, got %d; it printed:\n%s",
		      status, printed) &&
	    rl_expect(c, ref == 0,
		      "expected the reference server to take the client's message, it failed: %s; "
		      "the client printed:\n%s",
		      strerror(-ref), printed) &&
	    rl_expect(
		    c, strcmp(got.msg, msg) == 0,
		    "expected the reference server to receive \"%s\" from the client, got \"%.64s\"",
		    msg, got.msg))
		rl_expect(c, strcmp(got.written, text) == 0,
			  "expected \"%s\" RDMA-written into the reference server's buffer, got "
			  "\"%.128s\"",
			  text, got.written);
}

/* No act: the check runs the programs (locked down by their main.c) against the references. */
static void programs_end_to_end(struct rl_case *c)
{
	char prog[PATH_MAX + 16];

	program_path(prog, sizeof(prog));
	client_program(c, prog);
	if (!rl_failed(c))
		server_program(c, prog);
}

RL_GRADED(lab1_server_and_client_programs_run_end_to_end, .step = 12, .points = 2, .whole = true,
	  .check = programs_end_to_end);
