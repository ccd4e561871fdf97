/* test_cm.c: Lab 2 step 1: rdma_cm, against the reference peer. */
#define _GNU_SOURCE /* pthread_timedjoin_np */
#include <pthread.h>
#include <string.h>
#include <sys/random.h>

#include "fixture.h"
#include "lab2.h"

/* Step 1 */

/* The inputs of a step 1 test, chosen by its setup. */
struct cm_in {
	struct ref_opts o; /* the reference peer's */
	uint16_t port;     /* where the reference server listens, or the lab's server should */
	int timeout_ms;    /* the wait a test bounds */
};

/* A reference server that leaves once connected, asking for RNR_RETRY. */
static void start_a_server(struct rl_case *c, uint8_t rnr_retry)
{
	struct cm_in *in = c->in;

	in->o = ref_default();
	in->o.quit_after = 0;
	in->o.rnr_retry = rnr_retry; /* what the server asks of us: not what we ask of it */
	in->port = ref_server_start(&in->o);
}

static void server_that_leaves(struct rl_case *c)
{
	start_a_server(c, LAB2_RNR_RETRY);
}

/*
 * lab2_resolve() and lab2_connect() to the reference server, the rest by
 * the fixture; unless HOLD, whether the id then goes at once ("id_gone":
 * rdma_destroy_id() waits for ever on an event taken and not given back).
 */
static void resolve_and_connect(struct rl_case *c, bool hold)
{
	const struct cm_in *in = c->in;
	struct lab2_conn k = { .timeout_ms = FX_TIMEOUT_MS };
	bool connected = false;

	if (fx_say_ret("lab2_resolve", lab2_resolve(&k, rl_test_addr(), in->port))) {
		rl_say_int("resolved", k.cm_ch && k.id && k.id->verbs);
		if (k.cm_ch && k.id && k.id->verbs) {
			fx_cm_resources(&k);
			connected = fx_say_ret("lab2_connect", lab2_connect(&k));
			if (connected && hold)
				rl_hold();
		}
	}
	if (connected && !hold)
		rl_say_int("id_gone", fx_cm_close_bounded(&k));
	else
		fx_cm_close_bounded(&k);
}

static void connects_and_holds(struct rl_case *c)
{
	resolve_and_connect(c, true);
}

/* What resolve_and_connect() said lab2_resolve() and lab2_connect() did. */
static void resolved_and_connected(struct rl_case *c)
{
	if (fx_ok(c, "lab2_resolve", 1))
		rl_expect(c, rl_said_int(c, "resolved"),
			  "expected lab2_resolve to set c->cm_ch and c->id, with id->verbs the "
			  "device");
	if (!rl_failed(c))
		fx_ok(c, "lab2_connect", 1);
}

static void server_saw_the_connection(struct rl_case *c)
{
	const struct fx_report *r;

	resolved_and_connected(c);
	r = fx_peer_end(c, FX_ESTABLISHED);
	if (rl_expect(c, r->stage >= FX_ESTABLISHED,
		      "expected the reference server to see the connection, %s",
		      r->why[0] ? r->why : "it did not"))
		fx_expect_act_qp(c, "RTS", r->qp_num, NULL);
}

RL_GRADED(client_resolves_and_connects_to_the_reference_server, .step = 1, .points = 2,
	  .setup = server_that_leaves, .act = connects_and_holds,
	  .check = server_saw_the_connection);

/* The server asks for 3 resends of us: its own QP's count must come from our request. */
static void server_asking_for_3(struct rl_case *c)
{
	start_a_server(c, 3);
}

static void connects(struct rl_case *c)
{
	resolve_and_connect(c, false);
}

static void server_qp_resends_6_times(struct rl_case *c)
{
	const struct fx_report *r;

	resolved_and_connected(c);
	r = fx_peer_end(c, FX_ESTABLISHED);
	if (!rl_expect(c, r->stage >= FX_ESTABLISHED,
		       "expected the reference server to see the connection, %s",
		       r->why[0] ? r->why : "it did not"))
		return;
	/* rnr_retry_count is what the PEER's QP uses (man rdma_connect). */
	if (!rl_expect(c, rl_said_int(c, "id_gone"),
		       "expected rdma_destroy_id() of the connected id to return at once, it still "
		       "waited after %d ms: a CM event of that id was taken and never given back "
		       "(see docs/lab2.md#step-1)",
		       FX_ID_GONE_MS))
		return;
	rl_expect(c, r->qp_rnr_retry == LAB2_RNR_RETRY,
		  "expected the server's QP to resend RNR-NAKed SENDs %d times "
		  "(LAB2_RNR_RETRY), got %u%s: the count you connect with is the one the "
		  "peer's QP uses (see docs/lab2.md#step-1)",
		  LAB2_RNR_RETRY, r->qp_rnr_retry,
		  r->qp_rnr_retry == 7 ? " (7: for ever, a missing receive becomes a hang)" :
		  r->qp_rnr_retry == 3 ? " (3: what the server asked, not what we asked)" :
					 "");
}

RL_GRADED(connect_gives_back_every_event_and_asks_a_finite_rnr_retry, .step = 1, .points = 1,
	  .setup = server_asking_for_3, .act = connects, .check = server_qp_resends_6_times);

/* A port for the lab's server, and a reference client that comes to it and leaves. */
static void client_that_comes(struct rl_case *c)
{
	struct cm_in *in = c->in;

	in->port = rl_test_free_port();
	in->o = ref_default();
	in->o.quit_after = 0;
	strncpy(in->o.addr, rl_test_addr(), sizeof(in->o.addr) - 1);
	in->o.port = in->port;
	ref_client_start(&in->o);
}

static void listens_and_accepts(struct rl_case *c)
{
	const struct cm_in *in = c->in;
	struct lab2_conn k = { .timeout_ms = FX_TIMEOUT_MS };

	if (fx_say_ret("lab2_listen", lab2_listen(&k, in->port)) &&
	    fx_say_ret("lab2_get_request", lab2_get_request(&k))) {
		rl_say_int("got_id", k.id != NULL);
		if (k.id) {
			fx_cm_resources(&k);
			if (fx_say_ret("lab2_accept", lab2_accept(&k)))
				rl_hold();
		}
	}
	fx_cm_close_bounded(&k);
}

static void client_saw_the_connection(struct rl_case *c)
{
	const struct fx_report *r;

	if (fx_ok(c, "lab2_listen", 1) && fx_ok(c, "lab2_get_request", 1) &&
	    rl_expect(c, rl_said_int(c, "got_id"),
		      "expected lab2_get_request to set c->id to the new connection, got NULL"))
		fx_ok(c, "lab2_accept", 1);
	r = fx_peer_end(c, FX_ESTABLISHED);
	if (rl_expect(c, r->stage >= FX_ESTABLISHED, "expected the reference client to connect, %s",
		      r->why[0] ? r->why : "it did not") &&
	    fx_expect_act_qp(c, "RTS", r->qp_num, NULL))
		/* What the server accepts with is what both QPs get (the client's is a request). */
		rl_expect(
			c, r->qp_max_rd_atomic >= 1,
			"expected the reference client's QP to get at least 1 RDMA READ in flight "
			"to your server, got %u: the client reads the server's buffer, and its "
			"READs never complete without room for them (which rdma_conn_param field "
			"says how many READs the server serves at once? see docs/lab2.md#step-1)",
			r->qp_max_rd_atomic);
}

RL_GRADED(server_listens_and_accepts_the_reference_client, .step = 1, .points = 2,
	  .setup = client_that_comes, .act = listens_and_accepts,
	  .check = client_saw_the_connection);

/* A port nobody listens on, this run. */
static void free_port(struct rl_case *c)
{
	struct cm_in *in = c->in;

	in->port = rl_test_free_port();
}

static void connects_to_nobody(struct rl_case *c)
{
	const struct cm_in *in = c->in;
	struct lab2_conn k = { .timeout_ms = FX_TIMEOUT_MS };

	fx_say_start();
	if (fx_say_ret("lab2_resolve", lab2_resolve(&k, rl_test_addr(), in->port))) {
		fx_cm_resources(&k);
		rl_say_int("lab2_connect", lab2_connect(&k));
		/* Taken, the REJECTED event is not on the channel any more. */
		if (k.cm_ch)
			fx_say_event_left(k.cm_ch);
		rl_hold();
	}
	fx_cm_close_bounded(&k);
}

/*
 * The kernel lists the act's connecting rdma_cm id in state CONNECT (a
 * connection request went out: the kernel's CM rejected it, and keeps the
 * id there), and the act found no event left on its channel after
 * lab2_connect() returned: it took the REJECTED, not just returned.
 */
static bool took_the_rejection(struct rl_case *c)
{
	const char *state = NULL;
	struct rl_res id[4];
	int i, n = fx_act_res(c, "cm_id", id, 4);
	long long left;

	for (i = 0; i < n && i < 4 && !state; i++)
		state = rl_res_get(&id[i], "state");
	if (!rl_expect(c, state && strcmp(state, "CONNECT") == 0,
		       "expected the kernel to list the test's rdma_cm id in state CONNECT (a "
		       "connection request sent, with rdma_connect), got %s%s",
		       state ? "one in state " : "none", state ? state : ""))
		return false;
	left = rl_said_int(c, "left_on_channel");
	return rl_expect(c, left < 0,
			 "expected lab2_connect to take the REJECTED event (rdma_get_cm_event), "
			 "event %lld (%s) was still on c->cm_ch after it returned",
			 left, rdma_event_str((enum rdma_cm_event_type)left));
}

static void refused_in_time(struct rl_case *c)
{
	long took = fx_took_ms(c);
	long long ret;

	if (!fx_ok(c, "lab2_resolve", 1))
		return;
	ret = rl_said_int(c, "lab2_connect");
	if (rl_expect(c, ret == -ECONNREFUSED,
		      "expected -ECONNREFUSED (%d) from lab2_connect, got %lld (%s)", -ECONNREFUSED,
		      ret, strerror((int)-ret)) &&
	    rl_expect(c, took < FX_TIMEOUT_MS + 1000,
		      "expected the refusal within the %d ms timeout, took %ld ms", FX_TIMEOUT_MS,
		      took) &&
	    took_the_rejection(c))
		fx_expect_act_qp(
			c, "ERR", 0,
			"librdmacm puts it there when lab2_connect takes the REJECTED event");
}

RL_GRADED(connecting_where_nobody_listens_is_refused_in_bounded_time, .step = 1, .points = 1,
	  .setup = free_port, .act = connects_to_nobody, .check = refused_in_time);

/* A port nobody comes to, and a timeout of 300 to 700 ms, this run. */
static void free_port_and_timeout(struct rl_case *c)
{
	struct cm_in *in = c->in;
	uint16_t r = 0;

	ck_assert(getrandom(&r, sizeof(r), 0) == sizeof(r));
	in->port = rl_test_free_port();
	in->timeout_ms = 300 + r % 401;
}

/* Beyond its timeout, a wait that has not returned is taken for one with no bound. */
#define STILL_WAITING_MS 3000

/* lab2_get_request() on K, in a thread of its own: its return. */
struct request_wait {
	struct lab2_conn *k;
	int ret;
};

static void *get_request(void *arg)
{
	struct request_wait *w = arg;

	w->ret = lab2_get_request(w->k);
	return NULL;
}

/* What lab2_get_request(K) returned, or 1 when it still waited STILL_WAITING_MS past its timeout. */
static int get_request_within(struct lab2_conn *k)
{
	/* Static: a wait with no bound goes on, in its thread, after the act returns. */
	static struct request_wait w;
	struct timespec until;
	pthread_t t;

	w = (struct request_wait){ .k = k, .ret = 1 };
	ck_assert(pthread_create(&t, NULL, get_request, &w) == 0);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (k->timeout_ms + STILL_WAITING_MS) / 1000 + 1;
	return pthread_timedjoin_np(t, NULL, &until) == 0 ? w.ret : 1;
}

static void waits_for_a_request(struct rl_case *c)
{
	const struct cm_in *in = c->in;
	static struct lab2_conn k;

	k = (struct lab2_conn){ .timeout_ms = in->timeout_ms };
	fx_say_start();
	if (fx_say_ret("lab2_listen", lab2_listen(&k, in->port))) {
		rl_say_int("lab2_get_request", get_request_within(&k));
		rl_hold();
	}
	fx_cm_close_bounded(&k);
}

/* The kernel lists an rdma_cm id of the act's listening on PORT. */
static bool listens_on(struct rl_case *c, uint16_t port)
{
	const char *state = NULL, *addr;
	struct rl_res id[4];
	char want[16];
	int i, n = fx_act_res(c, "cm_id", id, 4);

	snprintf(want, sizeof(want), ":%u", port);
	for (i = 0; i < n && i < 4 && !state; i++) {
		addr = rl_res_get(&id[i], "src-addr");
		if (addr && strlen(addr) > strlen(want) &&
		    strcmp(addr + strlen(addr) - strlen(want), want) == 0)
			state = rl_res_get(&id[i], "state");
	}
	return rl_expect(
		c, state && strcmp(state, "LISTEN") == 0,
		"expected the kernel to list an rdma_cm id of the test's process listening "
		"on port %u, got %s%s",
		port, state ? "one in state " : "none", state ? state : "");
}

static void timed_out_in_time(struct rl_case *c)
{
	const struct cm_in *in = c->in;
	long took = fx_took_ms(c);
	long long ret;

	if (!fx_ok(c, "lab2_listen", 1) || !listens_on(c, in->port))
		return;
	ret = rl_said_int(c, "lab2_get_request");
	if (!rl_expect(c, ret != 1,
		       "expected lab2_get_request to return -ETIMEDOUT after about %d ms, it was "
		       "still waiting after %ld ms: rdma_get_cm_event() blocks for ever, how is "
		       "the wait bounded? (see docs/lab2.md#step-1)",
		       in->timeout_ms, took))
		return;
	if (rl_expect(c, ret == -ETIMEDOUT,
		      "expected -ETIMEDOUT (%d) from lab2_get_request, got %lld (%s)", -ETIMEDOUT,
		      ret, strerror((int)-ret)))
		rl_expect(c, took >= in->timeout_ms - 50 && took < in->timeout_ms + 1700,
			  "expected to wait about %d ms, waited %ld ms", in->timeout_ms, took);
}

RL_GRADED(get_request_times_out_when_no_client_comes, .step = 1, .points = 1,
	  .setup = free_port_and_timeout, .act = waits_for_a_request, .check = timed_out_in_time);

static void resolves_a_name(struct rl_case *c)
{
	struct lab2_conn k = { .timeout_ms = 300 };

	(void)c;
	rl_say_int("lab2_resolve", lab2_resolve(&k, "not-an-address", 7471));
	fx_cm_close_bounded(&k);
}

static void failed_cleanly(struct rl_case *c)
{
	long long ret = rl_said_int(c, "lab2_resolve");

	rl_expect(
		c, ret < 0 && ret != -ENOSYS,
		"expected a negative errno other than -ENOSYS (a step not done) from lab2_resolve, "
		"got %lld (%s)",
		ret, strerror((int)-ret));
}

RL_GRADED(resolving_an_address_that_is_not_an_ip_fails_cleanly, .step = 1, .points = 1,
	  .act = resolves_a_name, .check = failed_cleanly);
