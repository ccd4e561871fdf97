/*
 * test_session.c: Lab 2 step 5 (disconnect and teardown) and step 6, the
 * whole session (.whole): the lab's client against the reference server,
 * the lab's server against the reference client, and a peer that leaves
 * early.
 */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "lab2.h"

/* Step 5 */

/* The inputs of a step 5 test, chosen by its setup. */
struct session_in {
	struct ref_opts o; /* the reference peer's */
	uint16_t port;     /* where the reference server listens, or the lab's server should */
	char text[FX_TEXT_SIZE]; /* what the lab's client writes */
};

/* A reference server with options O (a copy into the inputs). */
static void start_server(struct rl_case *c, struct ref_opts o)
{
	struct session_in *in = c->in;

	rl_test_random_text(in->text, sizeof(in->text));
	in->o = o;
	in->port = ref_server_start(&in->o);
}

/* A port for the lab's server, and a reference client with options O that comes to it. */
static void start_client(struct rl_case *c, struct ref_opts o)
{
	struct session_in *in = c->in;

	in->port = rl_test_free_port();
	in->o = o;
	strncpy(in->o.addr, rl_test_addr(), sizeof(in->o.addr) - 1);
	in->o.port = in->port;
	ref_client_start(&in->o);
}

/* No ping-pong: the server only waits for our DISCONNECT. */
static void server_waiting_for_the_end(struct rl_case *c)
{
	struct ref_opts o = ref_default();

	o.no_recv = true;
	start_server(c, o);
}

static void disconnects(struct rl_case *c)
{
	const struct session_in *in = c->in;
	struct lab2_conn k;

	fx_cm_client(&k, in->port);
	if (fx_say_ret("lab2_disconnect", lab2_disconnect(&k))) {
		fx_say_event_left(k.cm_ch);
		rl_hold();
	}
	/* The rest goes with the act's exit: fx_cm_close(), step 5's own work, is hidden here. */
}

/* The act took the DISCONNECTED event in FUNCTION (it did not leave it on the channel). */
static bool took_disconnected(struct rl_case *c, const char *function)
{
	return rl_expect(c, rl_said_int(c, "left_on_channel") != RDMA_CM_EVENT_DISCONNECTED,
			 "expected %s to wait for DISCONNECTED and take it, it was left on the "
			 "channel (see docs/lab2.md#step-5)",
			 function);
}

static void both_sides_saw_it(struct rl_case *c)
{
	const struct fx_report *r;

	if (fx_ok(c, "lab2_disconnect", 5) &&
	    fx_expect_act_qp(c, "ERR", 0, "rdma_disconnect() puts it there"))
		took_disconnected(c, "lab2_disconnect");
	r = fx_peer_end(c, FX_DONE);
	rl_expect(c, r->disconnected, "expected the reference server to see DISCONNECTED, %s",
		  r->why[0] ? r->why : "it did not");
}

RL_GRADED(disconnect_ends_the_connection_at_both_sides, .step = 5, .points = 2,
	  .setup = server_waiting_for_the_end, .act = disconnects, .check = both_sides_saw_it);

static void client_that_leaves(struct rl_case *c)
{
	struct ref_opts o = ref_default();

	o.quit_after = 0;
	start_client(c, o);
}

static void waits_for_the_disconnect(struct rl_case *c)
{
	const struct session_in *in = c->in;
	struct lab2_conn k;

	fx_say_start();
	fx_cm_server(&k, in->port);
	if (fx_say_ret("lab2_wait_disconnected", lab2_wait_disconnected(&k)))
		fx_say_event_left(k.cm_ch);
	rl_hold();
	/* The rest goes with the act's exit: fx_cm_close(), step 5's own work, is hidden here. */
}

static void returned_once_the_client_left(struct rl_case *c)
{
	long took = fx_took_ms(c), held_at = fx_now_ms();
	const struct fx_report *r;

	fx_ok(c, "lab2_wait_disconnected", 5);
	r = fx_peer_end(c, FX_LEFT);
	if (rl_failed(c) || !rl_expect(c, r->left_ms, "expected the reference client to leave, %s",
				       r->why[0] ? r->why : "it did not"))
		return;
	/* It held (it had returned) once the client had left, not before. */
	if (rl_expect(c, held_at >= r->left_ms,
		      "expected lab2_wait_disconnected to return once the client disconnected, "
		      "it returned %ld ms before",
		      r->left_ms - held_at) &&
	    rl_expect(c, took < FX_TIMEOUT_MS,
		      "expected DISCONNECTED well before the timeout, took %ld ms", took))
		took_disconnected(c, "lab2_wait_disconnected");
}

RL_GRADED(wait_disconnected_returns_once_the_client_disconnects, .step = 5, .points = 1,
	  .setup = client_that_leaves, .act = waits_for_the_disconnect,
	  .check = returned_once_the_client_left);

static void server_that_leaves(struct rl_case *c)
{
	struct ref_opts o = ref_default();

	o.quit_after = 0;
	start_server(c, o);
}

/* lab2_destroy() on a connection with every object: the kernel must list none of them after. */
static void destroys(struct rl_case *c)
{
	const struct session_in *in = c->in;
	int all = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct lab2_conn k;

	fx_cm_client(&k, in->port);
	k.rdma_buf = aligned_alloc(4096, LAB2_RDMA_SIZE);
	ck_assert(k.rdma_buf);
	k.rdma_mr = ibv_reg_mr(k.pd, k.rdma_buf, LAB2_RDMA_SIZE, all);
	ck_assert(k.rdma_mr);
	rl_say_int("lab2_destroy", lab2_destroy(&k));
	rl_say_int("qp", (long long)(uintptr_t)k.qp);
	rl_say_int("rdma_mr", (long long)(uintptr_t)k.rdma_mr);
	rl_say_int("msg_mr", (long long)(uintptr_t)k.msg_mr);
	rl_say_int("cq", (long long)(uintptr_t)k.cq);
	rl_say_int("comp", (long long)(uintptr_t)k.comp);
	rl_say_int("pd", (long long)(uintptr_t)k.pd);
	rl_say_int("id", (long long)(uintptr_t)k.id);
	rl_say_int("cm_ch", (long long)(uintptr_t)k.cm_ch);
	rl_hold();
	free(k.rdma_buf);
}

/* The kernel lists no object of KIND (NAME in the message) for the act. */
static bool none_left(struct rl_case *c, const char *kind, const char *name)
{
	struct rl_res res[4];
	int n = fx_act_res(c, kind, res, 4);

	return rl_expect(c, n == 0,
			 "expected lab2_destroy to free every %s, the kernel still lists %d of the "
			 "test's process",
			 name, n);
}

static void nothing_left(struct rl_case *c)
{
	long long ret = rl_said_int(c, "lab2_destroy");
	static const char *const ptr[] = { "qp",   "rdma_mr", "msg_mr", "cq",
					   "comp", "pd",      "id",     "cm_ch" };
	long long v[8];
	int i;

	fx_peer_end(c, FX_ESTABLISHED);
	if (!rl_expect(c, ret == 0, "expected lab2_destroy to return 0, got %lld (%s)%s", ret,
		       strerror((int)-ret),
		       ret == -EBUSY ? ": an object destroyed while another still used it; in "
				       "what order? see docs/lab2.md#step-5" :
				       ""))
		return;
	for (i = 0; i < 8; i++)
		v[i] = rl_said_int(c, ptr[i]);
	if (!rl_expect(c, !v[0] && !v[1] && !v[2] && !v[3] && !v[4] && !v[5] && !v[6] && !v[7],
		       "expected every pointer NULL, got qp %p rdma_mr %p msg_mr %p cq %p comp %p "
		       "pd %p id %p cm_ch %p",
		       (void *)(uintptr_t)v[0], (void *)(uintptr_t)v[1], (void *)(uintptr_t)v[2],
		       (void *)(uintptr_t)v[3], (void *)(uintptr_t)v[4], (void *)(uintptr_t)v[5],
		       (void *)(uintptr_t)v[6], (void *)(uintptr_t)v[7]))
		return;
	if (none_left(c, "qp", "QP") && none_left(c, "mr", "MR") && none_left(c, "cq", "CQ") &&
	    none_left(c, "pd", "PD"))
		none_left(c, "cm_id", "rdma_cm id");
}

RL_GRADED(destroy_frees_everything_and_clears_every_pointer, .step = 5, .points = 2,
	  .setup = server_that_leaves, .act = destroys, .check = nothing_left);

/* Step 6: the whole session, the steps in session.c's order */

/* The options a run takes, as the program would parse them. */
static struct rl_args run_args(uint16_t port, const char *addr)
{
	return (struct rl_args){ .prog = "lab2",
				 .ib_port = rl_test_ib_port(),
				 .gid_index = -1,
				 .port = port,
				 .addr = addr };
}

static void whole_server(struct rl_case *c)
{
	start_server(c, ref_default());
}

static void runs_the_client(struct rl_case *c)
{
	const struct session_in *in = c->in;
	struct rl_args args = run_args(in->port, rl_test_addr());
	struct lab2_result res;

	rl_say_int("lab2_run_client", lab2_run_client(&args, FX_TIMEOUT_MS, in->text, &res));
	rl_say_int("pongs", res.pongs);
	res.text[LAB2_TEXT_MAX - 1] = '\0';
	rl_say_str("text", res.text);
}

static void server_got_every_payload(struct rl_case *c)
{
	const struct session_in *in = c->in;
	long long ret = rl_said_int(c, "lab2_run_client"), pongs = rl_said_int(c, "pongs");
	const char *read = rl_said_str(c, "text");
	/* When the client failed, the server has nothing more to wait for: stop it now. */
	const struct fx_report *r = fx_peer_end(c, ret == 0 ? FX_DONE : FX_STARTED);

	if (rl_expect(c, ret == 0, "expected lab2_run_client to return 0, got %lld (%s)%s%s", ret,
		      strerror((int)-ret), r->why[0] ? "; " : "", r->why) &&
	    rl_expect(c, r->round_trips == LAB2_PINGS && pongs == LAB2_PINGS,
		      "expected %d pings checked by the server and %d pongs by the client, got %d "
		      "and %lld",
		      LAB2_PINGS, LAB2_PINGS, r->round_trips, pongs) &&
	    rl_expect(c, strcmp(r->text, in->text) == 0,
		      "expected \"%s\" RDMA-written into the server's buffer, got \"%s\"", in->text,
		      r->text) &&
	    rl_expect(c, strcmp(read, r->secret) == 0,
		      "expected the client to RDMA-read \"%s\", got \"%s\"", r->secret, read))
		rl_expect(c, r->disconnected,
			  "expected the client to disconnect, the server saw no DISCONNECTED");
}

RL_GRADED(lab2_client_against_the_reference_server_moves_every_payload, .step = 6, .points = 3,
	  .whole = true, .setup = whole_server, .act = runs_the_client,
	  .check = server_got_every_payload);

static void whole_client(struct rl_case *c)
{
	start_client(c, ref_default());
}

static void runs_the_server(struct rl_case *c)
{
	const struct session_in *in = c->in;
	struct rl_args args = run_args(in->port, NULL);
	struct lab2_result res;

	rl_say_int("lab2_run_server", lab2_run_server(&args, FX_TIMEOUT_MS, &res));
	rl_say_int("pongs", res.pongs);
	res.text[LAB2_TEXT_MAX - 1] = '\0';
	rl_say_str("text", res.text);
}

static void client_got_every_payload(struct rl_case *c)
{
	long long ret = rl_said_int(c, "lab2_run_server"), pongs = rl_said_int(c, "pongs");
	const char *written = rl_said_str(c, "text");
	const struct fx_report *r = fx_peer_end(c, ret == 0 ? FX_DONE : FX_STARTED);
	/* The client's RDMA comes after the ping-pong: its statuses say something only then. */
	bool rdma = r->round_trips == LAB2_PINGS;

	if (rl_expect(c, !rdma || r->write_status == IBV_WC_SUCCESS,
		      "expected the reference client's RDMA WRITE to succeed, got \"%s\"%s",
		      ibv_wc_status_str((enum ibv_wc_status)r->write_status),
		      r->write_status == IBV_WC_REM_ACCESS_ERR ?
			      ": was the rkey sent, and does the MR grant a remote write? see "
			      "docs/lab2.md#step-4" :
			      "") &&
	    rl_expect(c, !rdma || r->read_status == IBV_WC_SUCCESS,
		      "expected the reference client's RDMA READ to succeed, got \"%s\"%s",
		      ibv_wc_status_str((enum ibv_wc_status)r->read_status),
		      r->read_status == IBV_WC_REM_ACCESS_ERR ?
			      ": does the MR grant a remote read (docs/lab2.md#step-4)?" :
			      "") &&
	    rl_expect(c, ret == 0, "expected lab2_run_server to return 0, got %lld (%s)%s%s", ret,
		      strerror((int)-ret), r->why[0] ? "; " : "", r->why) &&
	    rl_expect(c, r->round_trips == LAB2_PINGS && pongs == LAB2_PINGS,
		      "expected %d pongs checked by the client and %d pings by the server, got %d "
		      "and %lld",
		      LAB2_PINGS, LAB2_PINGS, r->round_trips, pongs) &&
	    rl_expect(c, strcmp(written, r->secret) == 0,
		      "expected the server to find \"%s\" written into its buffer, got \"%s\"",
		      r->secret, written))
		rl_expect(c, strcmp(r->text, LAB2_SERVER_TEXT) == 0,
			  "expected the client to RDMA-read \"%s\", got \"%s\"", LAB2_SERVER_TEXT,
			  r->text);
}

RL_GRADED(lab2_server_against_the_reference_client_moves_every_payload, .step = 6, .points = 3,
	  .whole = true, .setup = whole_client, .act = runs_the_server,
	  .check = client_got_every_payload);

/* The reference leaves after 3 round trips: the lab's side must notice, soon. */
#define LEAVES_AFTER 3

static void server_leaving_early(struct rl_case *c)
{
	struct ref_opts o = ref_default();

	o.quit_after = LEAVES_AFTER;
	start_server(c, o);
}

static void runs_the_client_with_a_long_timeout(struct rl_case *c)
{
	const struct session_in *in = c->in;
	struct rl_args args = run_args(in->port, rl_test_addr());
	struct lab2_result res;

	fx_say_start();
	rl_say_int("ret", lab2_run_client(&args, 20000, in->text, &res));
	rl_hold();
}

static void client_leaving_early(struct rl_case *c)
{
	struct ref_opts o = ref_default();

	o.quit_after = LEAVES_AFTER;
	start_client(c, o);
}

static void runs_the_server_with_a_long_timeout(struct rl_case *c)
{
	const struct session_in *in = c->in;
	struct rl_args args = run_args(in->port, NULL);
	struct lab2_result res;

	fx_say_start();
	rl_say_int("ret", lab2_run_server(&args, 20000, &res));
	rl_hold();
}

/* The lab's side (WHO) returned -ECONNRESET soon after its PEER left, not at its timeout. */
static void reported_the_peer_gone(struct rl_case *c, const char *who, const char *peer)
{
	long took = fx_took_ms(c), held_at = fx_now_ms();
	long long ret = rl_said_int(c, "ret");
	const struct fx_report *r;

	rl_expect(c, ret == -ECONNRESET,
		  "expected -ECONNRESET once the %s disconnected after %d pings, got %lld (%s)%s",
		  peer, LEAVES_AFTER, ret, strerror((int)-ret),
		  ret == -ETIMEDOUT ? ": a peer that leaves shows only on the CM channel; does the "
				      "completion wait watch it? see docs/lab2.md#step-2" :
				      "");
	r = fx_peer_end(c, FX_LEFT);
	if (rl_failed(c) ||
	    !rl_expect(c, r->round_trips == LEAVES_AFTER && r->left_ms,
		       "expected the %s to answer %d pings and leave, it answered %d%s%s", peer,
		       LEAVES_AFTER, r->round_trips, r->why[0] ? "; " : "", r->why) ||
	    !rl_expect(c, held_at >= r->left_ms,
		       "expected lab2_run_%s to return once the %s left, it returned %ld ms before",
		       who, peer, r->left_ms - held_at))
		return;
	rl_expect(c, took < 8000,
		  "expected the error soon after the disconnect, not at the 20 s timeout; took "
		  "%ld ms (watch the CM channel while waiting for completions: see "
		  "docs/lab2.md#step-2)",
		  took);
}

static void client_reported_the_server_gone(struct rl_case *c)
{
	reported_the_peer_gone(c, "client", "server");
}

static void server_reported_the_client_gone(struct rl_case *c)
{
	reported_the_peer_gone(c, "server", "client");
}

RL_GRADED(lab2_client_reports_a_server_that_leaves_early_without_hanging, .step = 6, .points = 1,
	  .whole = true, .setup = server_leaving_early, .act = runs_the_client_with_a_long_timeout,
	  .check = client_reported_the_server_gone);

RL_GRADED(lab2_server_reports_a_client_that_leaves_early_without_hanging, .step = 6, .points = 1,
	  .whole = true, .setup = client_leaving_early, .act = runs_the_server_with_a_long_timeout,
	  .check = server_reported_the_client_gone);
