/* test_transfer.c: Lab 1 step 10: a send, an RDMA write, their completions, and two processes. */
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "lab1.h"

/* Step 10 */

RL_TEST(a_send_lands_in_the_receive_posted_for_it, .step = 10, .points = 2)
{
	struct ibv_wc wc;
	struct fx_pair p;
	int ret;

	fx_pair_open(&p);
	ret = lab1_post_recv(p.qp[1], p.mr[1], p.buf[1], 256);
	ck_assert_msg(ret == 0, "expected lab1_post_recv to return 0, got %d (%s)", ret,
		      strerror(-ret));
	strcpy(p.buf[0], "one message");
	ret = lab1_post_send(p.qp[0], p.mr[0], p.buf[0], 12);
	ck_assert_msg(ret == 0, "expected lab1_post_send to return 0, got %d (%s)", ret,
		      strerror(-ret));
	fx_wait(p.cq[1], &wc);
	ck_assert_msg(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV,
		      "expected a successful RECV completion, got opcode %d, \"%s\"", wc.opcode,
		      ibv_wc_status_str(wc.status));
	ck_assert_msg(wc.wr_id == LAB1_WR_RECV, "expected wr_id %d (LAB1_WR_RECV), got %llu",
		      LAB1_WR_RECV, (unsigned long long)wc.wr_id);
	ck_assert_msg(wc.byte_len == 12, "expected byte_len 12, got %u", wc.byte_len);
	ck_assert_msg(strcmp(p.buf[1], "one message") == 0,
		      "expected \"one message\", got \"%.12s\"", p.buf[1]);
	fx_wait(p.cq[0], &wc);
	ck_assert_msg(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND,
		      "expected the sender's SEND completion (signaled), got opcode %d, \"%s\"",
		      wc.opcode, ibv_wc_status_str(wc.status));
	fx_pair_close(&p);
}
END_TEST

RL_TEST(an_rdma_write_lands_in_the_peer_buffer_and_completes_only_at_the_writer, .step = 10,
	.points = 2)
{
	struct ibv_wc wc;
	struct fx_pair p;
	int ret, n;

	fx_pair_open(&p);
	strcpy(p.buf[0], "remote text");
	ret = lab1_post_write(p.qp[0], p.mr[0], p.buf[0], 12, (uintptr_t)p.buf[1] + 100,
			      p.mr[1]->rkey);
	ck_assert_msg(ret == 0, "expected lab1_post_write to return 0, got %d (%s)", ret,
		      strerror(-ret));
	fx_wait(p.cq[0], &wc);
	ck_assert_msg(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_WRITE,
		      "expected a successful RDMA_WRITE completion, got opcode %d, \"%s\"",
		      wc.opcode, ibv_wc_status_str(wc.status));
	ck_assert_msg(strcmp(p.buf[1] + 100, "remote text") == 0,
		      "expected \"remote text\" at offset 100 of the peer's buffer, got \"%.12s\"",
		      p.buf[1] + 100);
	n = ibv_poll_cq(p.cq[1], 1, &wc);
	ck_assert_msg(n == 0, "expected no completion at the target of a write, got %d", n);
	fx_pair_close(&p);
}
END_TEST

RL_TEST(a_write_with_a_wrong_rkey_completes_with_a_remote_access_error, .step = 10, .points = 1)
{
	struct ibv_wc wc;
	struct fx_pair p;
	int ret;

	fx_pair_open(&p);
	ret = lab1_post_write(p.qp[0], p.mr[0], p.buf[0], 16, (uintptr_t)p.buf[1],
			      p.mr[1]->rkey ^ 0x5500);
	ck_assert_msg(ret == 0, "expected lab1_post_write to return 0, got %d (%s)", ret,
		      strerror(-ret));
	memset(&wc, 0, sizeof(wc));
	ret = lab1_wait_completion(p.cq[0], FX_WC_TIMEOUT_MS, &wc);
	ck_assert_msg(ret == -EIO, "expected lab1_wait_completion to return -EIO, got %d (%s)", ret,
		      strerror(-ret));
	ck_assert_msg(wc.status == IBV_WC_REM_ACCESS_ERR,
		      "expected \"%s\" in wc.status, got \"%s\"",
		      ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR), ibv_wc_status_str(wc.status));
	fx_pair_close(&p);
}
END_TEST

RL_TEST(wait_completion_returns_the_completion_that_arrives, .step = 10, .points = 1)
{
	struct ibv_wc wc;
	struct fx_pair p;
	int ret;

	fx_pair_open(&p);
	fx_post_rdma(&p, 0, IBV_WR_RDMA_WRITE, 8, (uintptr_t)p.buf[1], p.mr[1]->rkey);
	memset(&wc, 0, sizeof(wc));
	ret = lab1_wait_completion(p.cq[0], FX_WC_TIMEOUT_MS, &wc);
	ck_assert_msg(ret == 0, "expected lab1_wait_completion to return 0, got %d (%s)", ret,
		      strerror(-ret));
	ck_assert_msg(wc.wr_id == 300 && wc.opcode == IBV_WC_RDMA_WRITE,
		      "expected the write's completion (wr_id 300), got wr_id %llu opcode %d",
		      (unsigned long long)wc.wr_id, wc.opcode);
	fx_pair_close(&p);
}
END_TEST

RL_TEST(waiting_on_an_empty_cq_times_out, .step = 10, .points = 1)
{
	struct ibv_context *ctx = fx_open();
	struct ibv_cq *cq = fx_cq(ctx);
	struct ibv_wc wc;
	int ret = lab1_wait_completion(cq, 200, &wc);

	ck_assert_msg(ret == -ETIMEDOUT, "expected -ETIMEDOUT (%d) after 200 ms, got %d (%s)",
		      -ETIMEDOUT, ret, strerror(-ret));
}
END_TEST

/* The options the session takes, as the program would parse them: PORT on this device. */
static struct rl_args session_args(uint16_t port, const char *addr)
{
	return (struct rl_args){
		.prog = "lab1",
		.ib_port = rl_test_ib_port(),
		.gid_index = rl_test_gid_index(),
		.port = port,
		.addr = addr,
	};
}

/* The exit status of PID if it has ended, else -1; *DONE tells which. */
static int reap(pid_t pid, bool *done)
{
	int status;

	if (*done || waitpid(pid, &status, WNOHANG) != pid)
		return -1;
	*done = true;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

/* Random payloads, so the server must really receive them; well within the lab's limits. */
#define SESSION_MSG_SIZE 64
#define SESSION_TEXT_SIZE 128
_Static_assert(SESSION_MSG_SIZE <= LAB1_MSG_MAX && SESSION_TEXT_SIZE <= LAB1_WRITE_MAX,
	       "the session's payloads must fit the lab's buffers");

RL_TEST(server_and_client_processes_connect_and_transfer, .step = 10, .points = 3, .needs = 9)
{
	char msg[SESSION_MSG_SIZE], text[SESSION_TEXT_SIZE];
	struct rl_args args = session_args(rl_test_free_port(), rl_test_addr());
	bool server_done = false, client_done = false;
	int pipefd[2], ret, i, server_status = -1, client_status = -1, status;
	struct lab1_received got;
	pid_t server, client;
	ssize_t n;

	rl_test_random_text(msg, sizeof(msg));
	rl_test_random_text(text, sizeof(text));
	ck_assert_int_eq(pipe(pipefd), 0);
	server = fork();
	ck_assert_msg(server >= 0, "expected fork to work, got %s", strerror(errno));
	if (server == 0) {                /* the server: report what it got on the pipe */
		signal(SIGTERM, SIG_DFL); /* Check's handler would stop the whole group */
		alarm(50);
		close(pipefd[0]);
		ret = lab1_run_server(&args, &got);
		n = write(pipefd[1], &got, sizeof(got));
		_exit(ret == 0 && n == sizeof(got) ? 0 : 1);
	}
	close(pipefd[1]);
	client = fork();
	ck_assert_msg(client >= 0, "expected fork to work, got %s", strerror(errno));
	if (client == 0) { /* the client: its exit status is the errno it failed with */
		signal(SIGTERM, SIG_DFL);
		alarm(50);
		ret = lab1_run_client(&args, msg, text);
		_exit(ret < 0 && ret > -255 ? -ret : ret ? 255 : 0);
	}
	/* Wait for both; when one fails, the other would only wait for it: stop it. */
	for (i = 0; i < 500 && !(server_done && client_done); i++) {
		status = reap(server, &server_done);
		if (status >= 0)
			server_status = status;
		status = reap(client, &client_done);
		if (status >= 0)
			client_status = status;
		if (server_status > 0 && !client_done)
			kill(client, SIGKILL);
		if (client_status > 0 && !server_done)
			kill(server, SIGKILL);
		usleep(100000);
	}
	if (!server_done && kill(server, SIGKILL) == 0)
		waitpid(server, NULL, 0);
	if (!client_done && kill(client, SIGKILL) == 0)
		waitpid(client, NULL, 0);
	memset(&got, 0, sizeof(got));
	n = read(pipefd[0], &got, sizeof(got));
	ck_assert_msg(client_status == 0, "expected lab1_run_client to return 0, got %s",
		      client_status == 255 ? "no answer (stopped once the server had failed)" :
		      client_status > 0    ? strerror(client_status) :
					     "no answer in 50 s");
	ck_assert_msg(n == sizeof(got),
		      "expected the server to report what it received, it did not");
	ck_assert_msg(strcmp(got.msg, msg) == 0,
		      "expected the server to receive \"%s\", got \"%s\"", msg, got.msg);
	ck_assert_msg(strcmp(got.written, text) == 0,
		      "expected \"%s\" RDMA-written into the server's buffer, got \"%s\"", text,
		      got.written);
}
END_TEST
