/*
 * test_transfer.c: Lab 1 step 10: a send, an RDMA write, their completions,
 * and a whole server and client. What crosses the wire is judged where it
 * lands: in the peer (peer.c), a process of the test's own, which chooses
 * the texts it sends and reports what reached it; the act's QP's error
 * state is read from the kernel (rdma res), the peer's from the peer.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture.h"
#include "lab1.h"

#define MAX_RES 8

struct transfer_in {
	char text[FX_TEXT_MAX / 2]; /* what the act sends or writes */
	char msg[64];               /* what the act's lab1 client sends */
	uint64_t wr_id;             /* of the fixture's write */
	int timeout_ms;             /* for the wait on an empty CQ */
	struct fx_peer_in peer;
};

/* When the setup ended, in the parent: the check measures the act's time from it. */
static long long setup_done_ms;

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Say status, opcode, wr_id and byte_len of one completion of CQ, or status -1 when none came. */
static void say_completion(const char *prefix, struct ibv_cq *cq)
{
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	char key[64];

	if (fx_poll(cq, &wc, FX_WC_TIMEOUT_MS)) {
		fx_say_wc(prefix, &wc);
		return;
	}
	snprintf(key, sizeof(key), "%s.status", prefix);
	rl_say_int(key, -1);
}

static bool returned_0(struct rl_case *c, const char *name, const char *fn)
{
	long long ret = rl_said_int(c, name);

	return rl_expect(c, ret == 0, "expected %s to return 0, got %lld (%s)", fn, ret,
			 strerror((int)-ret));
}

/* Step 10 */

static void peer_sends_and_receives(struct rl_case *c)
{
	struct transfer_in *in = c->in;

	rl_test_random_text(in->text, sizeof(in->text));
	fx_peer_start(&in->peer, FX_PEER_SEND | FX_PEER_RECV);
}

/* The fixture's QP of L to RTS, aimed at the peer: its numbers swapped first. */
static void link_to_rts(struct fx_link *l)
{
	fx_link_swap(l, l->mr, l->buf, FX_BUF_SIZE);
	fx_to_init(l->qp);
	fx_to_rtr_dest(l->qp, &l->peer);
	fx_to_rts(l->qp);
}

/*
 * The link up with plain verbs; the lab posts a receive for the peer's
 * SEND, then SENDs IN's text to the peer's receive. The act says both
 * completions (receive first: its CQ holds both) and what it received.
 */
static void send_and_receive(struct rl_case *c)
{
	const struct transfer_in *in = c->in;
	char *send_buf;
	struct fx_link l;
	bool said_recv = false, said_send = false;
	struct ibv_wc wc;
	int n, ret;

	fx_link_open(&l, &in->peer);
	send_buf = l.buf + 2048;
	strcpy(send_buf, in->text);
	link_to_rts(&l);
	rl_say_int("recv", lab1_post_recv(l.qp, l.mr, l.buf, 256));
	fx_link_ready(&l, true);
	fx_link_wait(&l, 'D');
	ret = lab1_post_send(l.qp, l.mr, send_buf, (uint32_t)strlen(send_buf) + 1);
	rl_say_int("send", ret);
	/* Two completions, unless the lab posted nothing to complete. */
	for (n = 0; n < (ret ? 1 : 2) && fx_poll(l.cq, &wc, FX_WC_TIMEOUT_MS); n++) {
		if (wc.opcode == IBV_WC_RECV && !said_recv)
			fx_say_wc("recv_wc", &wc);
		else if (wc.opcode != IBV_WC_RECV && !said_send)
			fx_say_wc("send_wc", &wc);
		said_recv |= wc.opcode == IBV_WC_RECV;
		said_send |= wc.opcode != IBV_WC_RECV;
	}
	if (!said_recv)
		rl_say_int("recv_wc.status", -1);
	if (!said_send)
		rl_say_int("send_wc.status", -1);
	l.buf[255] = '\0';
	rl_say_str("received", l.buf);
}

static void landed_both_ways(struct rl_case *c)
{
	const struct transfer_in *in = c->in;
	long long status = rl_said_int(c, "recv_wc.status");
	const char *received = rl_said_str(c, "received");
	struct fx_peer_log log;

	if (!returned_0(c, "recv", "lab1_post_recv") || !returned_0(c, "send", "lab1_post_send")) {
		fx_peer_stop();
		return;
	}
	if (!fx_peer_finish(c, &log))
		return;
	/* The peer's SEND into the receive lab1_post_recv posted. */
	if (!rl_expect(c, log.send_status == IBV_WC_SUCCESS,
		       "expected the peer's SEND to land in the receive lab1_post_recv posted, got "
		       "\"%s\" at the peer%s%s",
		       fx_status_str(log.send_status), log.error[0] ? "; the peer: " : "",
		       log.error) ||
	    !rl_expect(
		    c, status == IBV_WC_SUCCESS && rl_said_int(c, "recv_wc.opcode") == IBV_WC_RECV,
		    "expected a successful RECV completion, got \"%s\"", fx_status_str(status)) ||
	    !rl_expect(c, rl_said_int(c, "recv_wc.wr_id") == LAB1_WR_RECV,
		       "expected wr_id %d (LAB1_WR_RECV), got %lld", LAB1_WR_RECV,
		       rl_said_int(c, "recv_wc.wr_id")) ||
	    !rl_expect(c, rl_said_int(c, "recv_wc.byte_len") == (long long)strlen(log.sent) + 1,
		       "expected byte_len %zu, got %lld", strlen(log.sent) + 1,
		       rl_said_int(c, "recv_wc.byte_len")) ||
	    !rl_expect(c, strcmp(received, log.sent) == 0,
		       "expected \"%s\" (the peer's), got \"%.64s\"", log.sent, received))
		return;
	/* lab1_post_send's SEND into the peer's receive. */
	status = rl_said_int(c, "send_wc.status");
	if (rl_expect(c, log.recv_status == IBV_WC_SUCCESS && strcmp(log.received, in->text) == 0,
		      "expected the peer to receive \"%s\", got \"%s\" (\"%s\")", in->text,
		      log.received, fx_status_str(log.recv_status)))
		rl_expect(c,
			  status == IBV_WC_SUCCESS &&
				  rl_said_int(c, "send_wc.opcode") == IBV_WC_SEND,
			  "expected the sender's SEND completion, got \"%s\": a send request "
			  "completes only if it asks; see docs/lab1.md#step-10",
			  fx_status_str(status));
}

RL_GRADED(a_send_lands_in_the_receive_posted_for_it, .step = 10, .points = 2,
	  .setup = peer_sends_and_receives, .act = send_and_receive, .check = landed_both_ways);

static void peer_is_written(struct rl_case *c)
{
	struct transfer_in *in = c->in;

	rl_test_random_text(in->text, sizeof(in->text));
	fx_peer_start(&in->peer, FX_PEER_TARGET);
}

/* The lab's RDMA write of IN's text at IN's offset of the peer's buffer; its completion. */
static void write_to_the_peer(struct rl_case *c)
{
	const struct transfer_in *in = c->in;
	struct fx_link l;
	int ret;

	fx_link_open(&l, &in->peer);
	strcpy(l.buf, in->text);
	link_to_rts(&l);
	fx_link_ready(&l, true);
	fx_link_wait(&l, 'D');
	ret = lab1_post_write(l.qp, l.mr, l.buf, (uint32_t)strlen(l.buf) + 1,
			      l.peer.addr + in->peer.offset, l.peer.rkey);
	rl_say_int("ret", ret);
	if (ret == 0)
		say_completion("wc", l.cq);
	fx_link_tell(&l, 'F');
}

static void landed_in_the_peer(struct rl_case *c)
{
	const struct transfer_in *in = c->in;
	struct fx_peer_log log;
	long long status;

	if (!returned_0(c, "ret", "lab1_post_write")) {
		fx_peer_stop();
		return;
	}
	status = rl_said_int(c, "wc.status");
	if (!fx_peer_finish(c, &log) ||
	    !rl_expect(c,
		       status == IBV_WC_SUCCESS && rl_said_int(c, "wc.opcode") == IBV_WC_RDMA_WRITE,
		       "expected a successful RDMA_WRITE completion, got \"%s\": which key names "
		       "the peer's memory? see docs/lab1.md#step-10",
		       fx_status_str(status)) ||
	    !rl_expect(c, strcmp(log.target, in->text) == 0,
		       "expected \"%s\" at offset %u of the peer's buffer, got \"%.64s\"%s%s",
		       in->text, in->peer.offset, log.target, log.error[0] ? "; the peer: " : "",
		       log.error))
		return;
	rl_expect(c, log.target_completions == 0,
		  "expected no completion at the target of a write, got %d",
		  log.target_completions);
}

RL_GRADED(an_rdma_write_lands_in_the_peer_buffer_and_completes_only_at_the_writer, .step = 10,
	  .points = 2, .setup = peer_is_written, .act = write_to_the_peer,
	  .check = landed_in_the_peer);

static void peer_is_written_with_a_wrong_rkey(struct rl_case *c)
{
	fx_peer_start(&((struct transfer_in *)c->in)->peer, FX_PEER_TARGET);
}

/*
 * The lab's RDMA write into the peer's buffer with a key its MR does not
 * have, and the lab's wait for it. The responder is the peer's QP, out of
 * the lab's reach: only a real remote access error takes it to ERR.
 */
static void write_with_a_wrong_rkey(struct rl_case *c)
{
	const struct transfer_in *in = c->in;
	struct fx_link l;
	struct ibv_wc wc;

	fx_link_open(&l, &in->peer);
	link_to_rts(&l);
	fx_link_ready(&l, true);
	fx_link_wait(&l, 'D');
	rl_say_int("qpn", l.qp->qp_num);
	rl_say_int("ret", lab1_post_write(l.qp, l.mr, l.buf, 16, l.peer.addr + in->peer.offset,
					  l.peer.rkey ^ 0x5500));
	memset(&wc, 0, sizeof(wc));
	rl_say_int("wait", lab1_wait_completion(l.cq, FX_WC_TIMEOUT_MS, &wc));
	rl_say_int("wc.status", wc.status);
	fx_link_tell(&l, 'F');
	rl_hold();
}

static void remote_access_error(struct rl_case *c)
{
	long long wait = rl_said_int(c, "wait"), status = rl_said_int(c, "wc.status");
	struct rl_res all[MAX_RES];
	const struct rl_res *qp;
	struct fx_peer_log log;

	if (!returned_0(c, "ret", "lab1_post_write") ||
	    !rl_expect(c, wait == -EIO,
		       "expected lab1_wait_completion to return -EIO, got %lld (%s)", wait,
		       strerror((int)-wait)) ||
	    !rl_expect(c, status == IBV_WC_REM_ACCESS_ERR,
		       "expected \"%s\" in wc.status, got \"%s\"",
		       ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR), fx_status_str(status))) {
		fx_peer_stop();
		return;
	}
	/* A failed completion takes its QP to the error state: the kernel says it happened. */
	qp = fx_act_qp(c, "qpn", all, MAX_RES);
	if (!qp ||
	    !rl_expect(c, strcmp(fx_res_str(qp, "state"), "ERR") == 0,
		       "expected the writer's QP in state ERR after the failed write (rdma res "
		       "show qp), got %s",
		       fx_res_str(qp, "state"))) {
		fx_peer_stop();
		return;
	}
	/* And the peer's: a responder that refuses an rkey goes to ERR as well. */
	if (fx_peer_finish(c, &log))
		rl_expect(c, log.qp_state == IBV_QPS_ERR,
			  "expected the peer's QP in state ERR too (a responder that refuses an "
			  "rkey goes there), got %s%s%s",
			  fx_qp_state_str(log.qp_state), log.error[0] ? "; the peer: " : "",
			  log.error);
}

RL_GRADED(a_write_with_a_wrong_rkey_completes_with_a_remote_access_error, .step = 10, .points = 1,
	  .setup = peer_is_written_with_a_wrong_rkey, .act = write_with_a_wrong_rkey,
	  .check = remote_access_error);

static void choose_wr_id(struct rl_case *c)
{
	struct transfer_in *in = c->in;

	fx_random(&in->wr_id, sizeof(in->wr_id));
}

/*
 * A write with plain verbs, and the lab's wait for its completion. The
 * write is posted here, not by a function of the fixture's: that would be
 * step 10's own post, which its acts must not hold (RL_HIDDEN).
 */
static void wait_for_a_write(struct rl_case *c)
{
	const struct transfer_in *in = c->in;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct fx_pair p;

	fx_pair_open(&p);
	sge = (struct ibv_sge){ .addr = (uintptr_t)p.buf[0], .length = 8, .lkey = p.mr[0]->lkey };
	wr = (struct ibv_send_wr){
		.wr_id = in->wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)p.buf[1], .rkey = p.mr[1]->rkey },
	};
	ck_assert_msg(ibv_post_send(p.qp[0], &wr, &bad) == 0, "fixture: ibv_post_send failed");
	memset(&wc, 0, sizeof(wc));
	rl_say_int("ret", lab1_wait_completion(p.cq[0], FX_WC_TIMEOUT_MS, &wc));
	fx_say_wc("wc", &wc);
}

static void got_the_write(struct rl_case *c)
{
	const struct transfer_in *in = c->in;
	unsigned long long wr_id = (unsigned long long)rl_said_int(c, "wc.wr_id");
	long long opcode = rl_said_int(c, "wc.opcode");

	if (returned_0(c, "ret", "lab1_wait_completion"))
		rl_expect(
			c, wr_id == in->wr_id && opcode == IBV_WC_RDMA_WRITE,
			"expected the write's completion (wr_id %llu), got wr_id %llu opcode %lld",
			(unsigned long long)in->wr_id, wr_id, opcode);
}

RL_GRADED(wait_completion_returns_the_completion_that_arrives, .step = 10, .points = 1,
	  .setup = choose_wr_id, .act = wait_for_a_write, .check = got_the_write);

static void choose_timeout(struct rl_case *c)
{
	((struct transfer_in *)c->in)->timeout_ms = (int)fx_random_between(300, 600);
	setup_done_ms = now_ms();
}

static void wait_on_empty_cq(struct rl_case *c)
{
	const struct transfer_in *in = c->in;
	struct ibv_context *ctx = fx_open();
	struct ibv_cq *cq = fx_cq(ctx);
	struct ibv_wc wc;

	rl_say_int("ret", lab1_wait_completion(cq, in->timeout_ms, &wc));
}

static void timed_out(struct rl_case *c)
{
	const struct transfer_in *in = c->in;
	long long ret = rl_said_int(c, "ret"), took = now_ms() - setup_done_ms;

	/* The parent's clock: the whole act took at least the wait. */
	if (rl_expect(c, ret == -ETIMEDOUT, "expected -ETIMEDOUT (%d) after %d ms, got %lld (%s)",
		      -ETIMEDOUT, in->timeout_ms, ret, strerror((int)-ret)))
		rl_expect(
			c, took >= in->timeout_ms,
			"expected lab1_wait_completion to wait %d ms before -ETIMEDOUT, the whole "
			"test took %lld ms",
			in->timeout_ms, took);
}

RL_GRADED(waiting_on_an_empty_cq_times_out, .step = 10, .points = 1, .setup = choose_timeout,
	  .act = wait_on_empty_cq, .check = timed_out);

/* Random payloads, so the server must really receive them; well within the lab's limits. */
_Static_assert(sizeof(((struct transfer_in *)0)->msg) <= LAB1_MSG_MAX &&
		       sizeof(((struct transfer_in *)0)->text) <= LAB1_WRITE_MAX,
	       "the session's payloads must fit the lab's buffers");

static void peer_serves_then_connects(struct rl_case *c)
{
	struct transfer_in *in = c->in;

	rl_test_random_text(in->msg, sizeof(in->msg));
	rl_test_random_text(in->text, sizeof(in->text));
	fx_peer_start(&in->peer, FX_PEER_SESSIONS);
}

/*
 * The options the sessions take, as the program would parse them: the
 * environment's device, PORT, and the environment's address.
 */
static struct rl_args session_args(uint16_t port)
{
	return (struct rl_args){
		.prog = "lab1",
		.ib_port = rl_test_ib_port(),
		.gid_index = rl_test_gid_index(),
		.port = port,
		.addr = rl_test_addr(),
	};
}

/*
 * The lab's client, against the peer's reference server; then the lab's
 * server, for the peer's reference client (each in this process, in turn).
 */
static void client_then_server(struct rl_case *c)
{
	const struct transfer_in *in = c->in;
	struct rl_args client = session_args(in->peer.port),
		       server = session_args(in->peer.server_port);
	struct lab1_received got;

	rl_say_int("client", lab1_run_client(&client, in->msg, in->text));
	memset(&got, 0, sizeof(got));
	rl_say_int("server", lab1_run_server(&server, &got));
	got.msg[sizeof(got.msg) - 1] = '\0';
	got.written[sizeof(got.written) - 1] = '\0';
	rl_say_str("server.msg", got.msg);
	rl_say_str("server.written", got.written);
}

static void both_transferred(struct rl_case *c)
{
	const struct transfer_in *in = c->in;
	const char *msg = in->msg, *text = in->text;
	struct fx_peer_log log;

	/* Each returned 0 first: else the peer would only wait for them, to no end. */
	if (!returned_0(c, "client", "lab1_run_client") ||
	    !returned_0(c, "server", "lab1_run_server")) {
		fx_peer_stop();
		return;
	}
	if (!fx_peer_finish(c, &log) ||
	    !rl_expect(c, log.server_ret == 0,
		       "expected the reference server to serve lab1_run_client, it failed: %s",
		       strerror(-log.server_ret)) ||
	    !rl_expect(c, strcmp(log.server_got.msg, msg) == 0,
		       "expected the reference server to receive \"%s\" from lab1_run_client, got "
		       "\"%.64s\"",
		       msg, log.server_got.msg) ||
	    !rl_expect(c, strcmp(log.server_got.written, text) == 0,
		       "expected \"%s\" RDMA-written into the reference server's buffer by "
		       "lab1_run_client, got \"%.128s\"",
		       text, log.server_got.written) ||
	    !rl_expect(c, log.client_ret == 0,
		       "expected the reference client to reach lab1_run_server, it failed: %s",
		       strerror(-log.client_ret)) ||
	    !rl_expect(c, strcmp(rl_said_str(c, "server.msg"), log.client_msg) == 0,
		       "expected the server to receive \"%s\", got \"%.64s\"", log.client_msg,
		       rl_said_str(c, "server.msg")))
		return;
	rl_expect(c, strcmp(rl_said_str(c, "server.written"), log.client_text) == 0,
		  "expected \"%s\" RDMA-written into the server's buffer, got \"%.128s\"",
		  log.client_text, rl_said_str(c, "server.written"));
}

RL_GRADED(server_and_client_processes_connect_and_transfer, .step = 12, .points = 3, .whole = true,
	  .setup = peer_serves_then_connects, .act = client_then_server, .check = both_transferred);
