/*
 * test_server.c: Lab 5 step 5, many RC clients served by one thread on one
 * SRQ (docs/lab5.md#step-5). The act runs the lab's server; the reference
 * clients (srq_peer.c), started by setup, connect, send more messages in
 * all than the SRQ holds several times over, and leave; they report what
 * each sent and when, and the check compares that with what the server
 * counted, per client, and with what the kernel says the act still holds.
 */
#include <string.h>

#include "srq_fixture.h"

#define STEP5 "(see docs/lab5.md#step-5)"

/* What the act says of one client of the server. */
struct said_client {
	uint32_t qp_num;
	uint32_t messages;
	uint64_t bytes;
};

/* The clients: how many, how many messages each (the SRQ filled several times over). */
static void clients_in(struct rl_case *c, bool late, int linger_ms)
{
	struct srq_fx_in *in = c->in;

	in->port = rl_test_free_port();
	in->clients = srq_fx_between(3, 5);
	in->messages = srq_fx_between(3 * LAB5_SRQ_DEPTH / in->clients + 8, 2 * LAB5_SRQ_DEPTH);
	in->late = late;
	in->linger_ms = linger_ms;
	srq_fx_peer_start(in);
}

static void streaming_clients(struct rl_case *c)
{
	clients_in(c, false, 0);
}

static void a_late_client(struct rl_case *c)
{
	clients_in(c, true, 0);
}

static void a_lingering_client(struct rl_case *c)
{
	clients_in(c, false, (int)srq_fx_between(300, 800));
}

/* The lab's server, open, serving until it returns; what it counted; held, then closed. */
static void serve(struct rl_case *c)
{
	const struct srq_fx_in *in = c->in;
	struct said_client said[LAB5_MAX_CLIENTS];
	struct lab5_server s;
	int ret, n = 0;

	ret = lab5_server_open(&s, in->port, in->clients);
	rl_say_int("open", ret);
	if (ret) {
		lab5_server_close(&s);
		return;
	}
	ret = lab5_serve(&s);
	rl_say_int("returned_ms", srq_fx_now_ms());
	rl_say_int("serve", ret);
	rl_say_int("served", s.served);
	for (int i = 0; i < LAB5_MAX_CLIENTS; i++)
		if (s.clients[i].qp_num)
			said[n++] = (struct said_client){ s.clients[i].qp_num,
							  s.clients[i].messages,
							  s.clients[i].bytes };
	rl_say_bytes("clients", said, (size_t)n * sizeof(said[0]));
	rl_hold();
	lab5_server_close(&s);
}

/* Whether every client saw its DISCONNECTED: the server destroyed its id, or disconnected it. */
static bool all_gone(struct rl_case *c, const struct srq_fx_report *r)
{
	for (uint32_t i = 0; i < r->n; i++)
		if (!rl_expect(
			    c, r->cl[i].gone,
			    "client %u (server QP 0x%x) sent %u of its %u messages and never saw its "
			    "DISCONNECTED, which comes once the server destroys its id: did "
			    "lab5_serve return before every client left, or keep a client's id "
			    "after it left? " STEP5,
			    i, r->cl[i].server_qpn, r->cl[i].sent,
			    ((const struct srq_fx_in *)c->in)->messages))
			return false;
	return true;
}

/* Whether the act's open and serve returned 0, and (GONE) every client was seen out. */
static bool served(struct rl_case *c, const struct srq_fx_report *r, bool gone)
{
	long long ret = rl_said_int(c, "open");

	if (!rl_expect(c, ret == 0, "expected lab5_server_open to return 0, got %lld (%s) " STEP5,
		       ret, strerror((int)-ret)))
		return false;
	if (!rl_expect(c, r->ret == 0, "the reference clients failed: %s " STEP5, r->why))
		return false;
	ret = rl_said_int(c, "serve");
	if (!rl_expect(c, ret == 0,
		       "expected lab5_serve to return 0 once the %u clients came and went, got "
		       "%lld (%s), %lld served " STEP5,
		       r->n, ret, strerror((int)-ret), rl_said_int(c, "served")))
		return false;
	/* A client whose send failed (its six RNR retries spent) sent less than it meant to. */
	for (uint32_t i = 0; i < r->n; i++)
		if (!rl_expect(c, r->cl[i].status == 0,
			       "client %u (server QP 0x%x) sent %u of its %u messages, then a send "
			       "failed: %s " STEP5,
			       i, r->cl[i].server_qpn, r->cl[i].sent,
			       ((const struct srq_fx_in *)c->in)->messages,
			       ibv_wc_status_str(r->cl[i].status)))
			return false;
	return !gone || all_gone(c, r);
}

/* The act's count for the client whose server QP is QPN, or NULL. */
static const struct said_client *said_for(struct rl_case *c, uint32_t qpn)
{
	size_t len, i;
	const struct said_client *said = rl_said_bytes(c, "clients", &len);

	for (i = 0; said && i < len / sizeof(*said); i++)
		if (said[i].qp_num == qpn)
			return &said[i];
	return NULL;
}

static void each_clients_messages_counted(struct rl_case *c)
{
	const struct srq_fx_report *r = srq_fx_peer_end(c);

	if (!served(c, r, true))
		return;
	rl_expect(c, rl_said_int(c, "served") == r->n,
		  "expected %u clients served, got %lld " STEP5, r->n, rl_said_int(c, "served"));
	for (uint32_t i = 0; i < r->n && !rl_failed(c); i++) {
		const struct srq_fx_client *cl = &r->cl[i];
		const struct said_client *s = said_for(c, cl->server_qpn);

		rl_expect(c, s != NULL,
			  "client %u (server QP 0x%x) sent %u messages; the server has no client "
			  "of that QP " STEP5,
			  i, cl->server_qpn, cl->sent);
		if (s)
			rl_expect(c, s->messages == cl->sent && s->bytes == cl->bytes,
				  "client %u (server QP 0x%x): expected %u messages, %llu bytes "
				  "counted (what it sent), got %u, %llu: each completion is one "
				  "message, found by its QP number " STEP5,
				  i, cl->server_qpn, cl->sent, (unsigned long long)cl->bytes,
				  s->messages, (unsigned long long)s->bytes);
	}
}
RL_GRADED(server_serves_every_client_and_counts_each_ones_messages, .step = 5, .points = 5,
	  .needs = 4, .setup = streaming_clients, .act = serve,
	  .check = each_clients_messages_counted);

static void late_client_accepted(struct rl_case *c)
{
	const struct srq_fx_report *r = srq_fx_peer_end(c);
	const struct srq_fx_client *late = &r->cl[r->n ? r->n - 1 : 0];

	if (!rl_expect(c, rl_said_int(c, "open") == 0,
		       "expected lab5_server_open to return 0, got %lld " STEP5,
		       rl_said_int(c, "open")))
		return;
	rl_expect(c, late->established,
		  "the client that connected while %u others streamed was never accepted (%s): "
		  "does the loop look at the CM channel while messages come? " STEP5,
		  r->n - 1, r->why[0] ? r->why : "no reason given");
	served(c, r, true);
}
RL_GRADED(a_client_that_connects_while_others_stream_is_accepted, .step = 5, .points = 3,
	  .needs = 4, .setup = a_late_client, .act = serve, .check = late_client_accepted);

static void returned_after_the_last_left(struct rl_case *c)
{
	const struct srq_fx_report *r = srq_fx_peer_end(c);
	long last = 0;

	if (!served(c, r, true))
		return;
	for (uint32_t i = 0; i < r->n; i++)
		if (r->cl[i].left_ms > last)
			last = r->cl[i].left_ms;
	rl_expect(
		c, rl_said_int(c, "returned_ms") >= last,
		"expected lab5_serve to return once the last client left (it stayed %d ms after "
		"its last message), got its return %lld ms before that: what ends the loop? " STEP5,
		((const struct srq_fx_in *)c->in)->linger_ms, last - rl_said_int(c, "returned_ms"));
	rl_expect(c, rl_said_int(c, "served") == r->n,
		  "expected %u clients served, got %lld " STEP5, r->n, rl_said_int(c, "served"));
}
RL_GRADED(serve_returns_only_after_the_last_client_left, .step = 5, .points = 2, .needs = 4,
	  .setup = a_lingering_client, .act = serve, .check = returned_after_the_last_left);

static void clients_freed_as_they_left(struct rl_case *c)
{
	struct rl_res res[LAB5_MAX_CLIENTS + 2];
	int qps = -1, ids = -1;
	const struct srq_fx_report *r;

	if (rl_said(c, "serve") && rl_act_pid(c)) {
		qps = rl_rdma_res("qp", rl_act_pid(c), res, LAB5_MAX_CLIENTS + 2);
		ids = rl_rdma_res("cm_id", rl_act_pid(c), res, LAB5_MAX_CLIENTS + 2);
		/* The listener (one per device, bound to any address) stays: the others count. */
		for (int i = 0, n = ids; i < n && i < LAB5_MAX_CLIENTS + 2; i++) {
			const char *state = rl_res_get(&res[i], "state");

			ids -= state && strcmp(state, "LISTEN") == 0;
		}
	}
	r = srq_fx_peer_end(c);
	if (!served(c, r, false))
		return;
	rl_expect(
		c, qps == 0,
		"after lab5_serve returned, expected no QP of the act's left (rdma res show qp: "
		"the %u clients are gone), got %d: a client's QP is destroyed when it leaves " STEP5,
		r->n, qps);
	rl_expect(
		c, ids == 0,
		"after lab5_serve returned, expected no cm_id of the act's but the listener's "
		"(rdma res show cm_id), got %d more: a client's id is destroyed when it leaves " STEP5,
		ids);
	all_gone(c, r);
}
RL_GRADED(served_clients_leave_no_qp_or_cm_id_behind, .step = 5, .points = 2, .needs = 4,
	  .setup = streaming_clients, .act = serve, .check = clients_freed_as_they_left);
