/*
 * test_session.c: Lab 2 step 5 (disconnect and teardown) and the whole
 * programs: the lab's client against the reference server, the lab's server
 * against the reference client, and a peer that leaves early.
 */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "lab2.h"

/* Step 5 */

RL_TEST(disconnect_ends_the_connection_at_both_sides, .step = 5, .points = 2)
{
	struct ref_opts o = ref_default();
	struct lab2_conn c;
	struct ref_peer r;
	int ret;

	o.no_recv = true; /* no ping-pong: the server only waits for our DISCONNECT */
	ref_server_start(&r, &o);
	fx_cm_client(&c, r.port);
	ret = lab2_disconnect(&c);
	ref_join(&r);
	fx_ok(ret, "lab2_disconnect", 5);
	ck_assert_msg(r.disconnected, "expected the reference server to see DISCONNECTED, %s",
		      r.why[0] ? r.why : "it did not");
	fx_cm_close(&c);
}
END_TEST

RL_TEST(wait_disconnected_returns_once_the_client_disconnects, .step = 5, .points = 1)
{
	struct ref_opts o = ref_default();
	uint16_t port = rl_test_free_port();
	struct lab2_conn c;
	struct ref_peer r;
	long start;
	int ret;

	o.quit_after = 0;
	ref_client_start(&r, port, &o);
	fx_cm_server(&c, port);
	start = fx_now_ms();
	ret = lab2_wait_disconnected(&c);
	ref_join(&r);
	fx_ok(ret, "lab2_wait_disconnected", 5);
	ck_assert_msg(fx_now_ms() - start < FX_TIMEOUT_MS,
		      "expected DISCONNECTED well before the timeout, took %ld ms",
		      fx_now_ms() - start);
	fx_cm_close(&c);
}
END_TEST

RL_TEST(destroy_frees_everything_and_clears_every_pointer, .step = 5, .points = 2)
{
	struct ref_opts o = ref_default();
	struct lab2_conn c;
	struct ref_peer r;
	int ret, all = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

	o.quit_after = 0;
	ref_server_start(&r, &o);
	fx_cm_client(&c, r.port);
	ref_join(&r);
	c.rdma_buf = aligned_alloc(4096, LAB2_RDMA_SIZE);
	c.rdma_mr = ibv_reg_mr(c.pd, c.rdma_buf, LAB2_RDMA_SIZE, all);
	ck_assert(c.rdma_mr);
	ret = lab2_destroy(&c);
	free(c.rdma_buf);
	c.rdma_buf = NULL;
	ck_assert_msg(ret == 0, "expected lab2_destroy to return 0, got %d (%s)", ret,
		      strerror(-ret));
	ck_assert_msg(!c.qp && !c.rdma_mr && !c.msg_mr && !c.cq && !c.comp && !c.pd && !c.id &&
			      !c.cm_ch,
		      "expected every pointer NULL, got qp %p rdma_mr %p msg_mr %p cq %p comp %p "
		      "pd %p id %p cm_ch %p",
		      (void *)c.qp, (void *)c.rdma_mr, (void *)c.msg_mr, (void *)c.cq,
		      (void *)c.comp, (void *)c.pd, (void *)c.id, (void *)c.cm_ch);
}
END_TEST

/* The options a run takes, as the program would parse them. */
static struct rl_args run_args(uint16_t port, const char *addr)
{
	return (struct rl_args){ .prog = "lab2",
				 .ib_port = rl_test_ib_port(),
				 .gid_index = -1,
				 .port = port,
				 .addr = addr };
}

RL_TEST(lab2_client_against_the_reference_server_moves_every_payload, .step = 5, .points = 3,
	.needs = 4)
{
	struct ref_opts o = ref_default();
	char text[FX_TEXT_SIZE];
	struct lab2_result res;
	struct rl_args args;
	struct ref_peer r;
	int ret;

	rl_test_random_text(text, sizeof(text));
	ref_server_start(&r, &o);
	args = run_args(r.port, rl_test_addr());
	ret = lab2_run_client(&args, FX_TIMEOUT_MS, text, &res);
	ref_join(&r);
	ck_assert_msg(ret == 0, "expected lab2_run_client to return 0, got %d (%s)%s%s", ret,
		      strerror(-ret), r.why[0] ? "; " : "", r.why);
	ck_assert_msg(r.round_trips == LAB2_PINGS && res.pongs == LAB2_PINGS,
		      "expected %d pings checked by the server and %d pongs by the client, got %d "
		      "and %d",
		      LAB2_PINGS, LAB2_PINGS, r.round_trips, res.pongs);
	ck_assert_msg(strcmp(r.text, text) == 0,
		      "expected \"%s\" RDMA-written into the server's buffer, got \"%s\"", text,
		      r.text);
	ck_assert_msg(strcmp(res.text, o.text) == 0,
		      "expected the client to RDMA-read \"%s\", got \"%s\"", o.text, res.text);
	ck_assert_msg(r.disconnected, "expected the client to disconnect, the server saw no "
				      "DISCONNECTED");
}
END_TEST

RL_TEST(lab2_server_against_the_reference_client_moves_every_payload, .step = 5, .points = 3,
	.needs = 4)
{
	struct ref_opts o = ref_default();
	uint16_t port = rl_test_free_port();
	struct lab2_result res;
	struct rl_args args = run_args(port, NULL);
	struct ref_peer r;
	int ret;

	ref_client_start(&r, port, &o);
	ret = lab2_run_server(&args, FX_TIMEOUT_MS, &res);
	ref_join(&r);
	ck_assert_msg(
		r.write_status == IBV_WC_SUCCESS,
		"expected the reference client's RDMA WRITE to succeed, got \"%s\"%s",
		ibv_wc_status_str(r.write_status),
		r.write_status == IBV_WC_REM_ACCESS_ERR ?
			": expected rkey, got lkey? or an MR without IBV_ACCESS_REMOTE_WRITE" :
			"");
	ck_assert_msg(r.read_status == IBV_WC_SUCCESS,
		      "expected the reference client's RDMA READ to succeed, got \"%s\"%s",
		      ibv_wc_status_str(r.read_status),
		      r.read_status == IBV_WC_REM_ACCESS_ERR ?
			      ": an MR without IBV_ACCESS_REMOTE_READ, or responder_resources 0?" :
			      "");
	ck_assert_msg(ret == 0, "expected lab2_run_server to return 0, got %d (%s)%s%s", ret,
		      strerror(-ret), r.why[0] ? "; " : "", r.why);
	ck_assert_msg(r.round_trips == LAB2_PINGS && res.pongs == LAB2_PINGS,
		      "expected %d pongs checked by the client and %d pings by the server, got %d "
		      "and %d",
		      LAB2_PINGS, LAB2_PINGS, r.round_trips, res.pongs);
	ck_assert_msg(strcmp(res.text, o.text) == 0,
		      "expected the server to find \"%s\" written into its buffer, got \"%s\"",
		      o.text, res.text);
	ck_assert_msg(strcmp(r.text, LAB2_SERVER_TEXT) == 0,
		      "expected the client to RDMA-read \"%s\", got \"%s\"", LAB2_SERVER_TEXT,
		      r.text);
}
END_TEST

RL_TEST(lab2_client_reports_a_server_that_leaves_early_without_hanging, .step = 5, .points = 1,
	.needs = 3)
{
	struct ref_opts o = ref_default();
	char text[FX_TEXT_SIZE];
	struct lab2_result res;
	struct rl_args args;
	struct ref_peer r;
	long start, took;
	int ret;

	rl_test_random_text(text, sizeof(text));
	o.quit_after = 3;
	ref_server_start(&r, &o);
	args = run_args(r.port, rl_test_addr());
	start = fx_now_ms();
	ret = lab2_run_client(&args, 20000, text, &res);
	took = fx_now_ms() - start;
	ref_join(&r);
	ck_assert_msg(
		ret == -ECONNRESET,
		"expected -ECONNRESET once the server disconnected after 3 pings, got %d (%s)", ret,
		strerror(-ret));
	ck_assert_msg(took < 8000,
		      "expected the error soon after the disconnect, not at the 20 s timeout; took "
		      "%ld ms (watch the CM channel while waiting for completions)",
		      took);
}
END_TEST

RL_TEST(lab2_server_reports_a_client_that_leaves_early_without_hanging, .step = 5, .points = 1,
	.needs = 3)
{
	struct ref_opts o = ref_default();
	uint16_t port = rl_test_free_port();
	struct rl_args args = run_args(port, NULL);
	struct lab2_result res;
	struct ref_peer r;
	long start, took;
	int ret;

	o.quit_after = 3;
	ref_client_start(&r, port, &o);
	start = fx_now_ms();
	ret = lab2_run_server(&args, 20000, &res);
	took = fx_now_ms() - start;
	ref_join(&r);
	ck_assert_msg(
		ret == -ECONNRESET,
		"expected -ECONNRESET once the client disconnected after 3 pings, got %d (%s)", ret,
		strerror(-ret));
	ck_assert_msg(took < 8000,
		      "expected the error soon after the disconnect, not at the 20 s timeout; took "
		      "%ld ms (watch the CM channel while waiting for completions)",
		      took);
}
END_TEST
