/* test_msg.c: Lab 2 step 3: receives, sends, wr_id matching, re-posting, RNR. */
#include <poll.h>
#include <string.h>
#include <sys/random.h>

#include "fixture.h"
#include "lab2.h"

/* Step 3 */

/* The inputs of a step 3 test, chosen by its setup. */
struct msg_in {
	struct ref_opts o;       /* the reference peer's */
	uint16_t port;           /* where it listens */
	int slot;                /* the receive slot a test posts */
	char text[FX_TEXT_SIZE]; /* what the act sends */
};

/* The bytes of a message the act said it got: LEN of them, matching WANT (NUL included)? */
static bool said_text(struct rl_case *c, const char *name, const char *want, long long len)
{
	size_t n;
	const char *got = rl_said_bytes(c, name, &n);

	return len == (long long)strlen(want) + 1 && n >= (size_t)len &&
	       memcmp(got, want, (size_t)len) == 0;
}

/* The peer: its secret, once connected. */
static void sends_its_secret(const void *in, struct fx_report *r)
{
	const struct msg_in *mi = in;
	struct ref_conn k;

	if (!ref_accept(&k, &mi->o, r)) {
		strcpy((char *)k.buf + REF_SEND, r->secret);
		ref_send(&k, r, (uint32_t)strlen(r->secret) + 1, NULL);
	}
	ref_end(&k, r);
}

/* A receive slot, this run; a peer that sends once connected. */
static void random_slot(struct rl_case *c)
{
	struct msg_in *in = c->in;
	uint8_t r = 0;

	ck_assert(getrandom(&r, sizeof(r), 0) == sizeof(r));
	in->slot = r % LAB2_RECV_SLOTS;
	in->o = ref_default();
	fx_peer_start(sends_its_secret, in);
	in->port = fx_peer_port();
}

/* lab2_post_recv() before connecting: the peer sends the moment it is connected. */
static void posts_one_receive(struct rl_case *c)
{
	const struct msg_in *in = c->in;
	struct fx_pair_opts o = { .port = in->port, .peer_rnr_retry = LAB2_RNR_RETRY };
	struct ibv_wc wc = { 0 };
	struct fx_pair p;

	fx_pair_build(&p, &o);
	if (fx_say_ret("lab2_post_recv", lab2_post_recv(&p.c, in->slot))) {
		fx_pair_connect(&p, &o);
		rl_say_int("completed", fx_poll(p.c.cq, &wc));
		rl_say_int("status", wc.status);
		rl_say_int("opcode", wc.opcode);
		rl_say_int("wr_id", (long long)wc.wr_id);
		rl_say_int("byte_len", wc.byte_len);
		rl_say_bytes("slot", p.c.bufs.recv[in->slot], LAB2_MSG_MAX);
	}
	fx_pair_close(&p);
}

static void landed_in_its_slot(struct rl_case *c)
{
	const struct msg_in *in = c->in;
	const struct fx_report *r;
	size_t n;
	int status;

	fx_ok(c, "lab2_post_recv", 3);
	r = fx_peer_end(c, FX_DONE);
	if (rl_failed(c))
		return;
	status = (int)rl_said_int(c, "status");
	if (!rl_expect(c, rl_said_int(c, "completed"),
		       "expected the peer's SEND to complete in the receive of slot %d, no "
		       "completion came within %d ms%s%s",
		       in->slot, FX_TIMEOUT_MS, r->why[0] ? "; " : "", r->why) ||
	    !rl_expect(c, status == IBV_WC_SUCCESS && rl_said_int(c, "opcode") == IBV_WC_RECV,
		       "expected a successful RECV completion, got opcode %lld, \"%s\"",
		       rl_said_int(c, "opcode"), ibv_wc_status_str((enum ibv_wc_status)status)) ||
	    !rl_expect(c, rl_said_int(c, "wr_id") == LAB2_WR_RECV + in->slot,
		       "expected wr_id %d (LAB2_WR_RECV + %d), got %llu", LAB2_WR_RECV + in->slot,
		       in->slot, (unsigned long long)rl_said_int(c, "wr_id")))
		return;
	rl_expect(c, said_text(c, "slot", r->secret, (long long)strlen(r->secret) + 1),
		  "expected \"%s\" in c->bufs.recv[%d], got \"%.*s\"", r->secret, in->slot,
		  (int)strlen(r->secret), (const char *)rl_said_bytes(c, "slot", &n));
}

RL_GRADED(post_recv_puts_a_send_in_its_slot_with_its_wr_id, .step = 3, .points = 2,
	  .setup = random_slot, .act = posts_one_receive, .check = landed_in_its_slot);

/* The peer: keeps the one message it receives. */
static void receives_a_message(const void *in, struct fx_report *r)
{
	const struct msg_in *mi = in;
	struct ref_conn k;
	int len;

	if (!ref_accept(&k, &mi->o, r) && (len = ref_recv(&k, r)) >= 0) {
		r->text_len = (uint32_t)len;
		memcpy(r->text, k.buf + REF_RECV, len < LAB2_MSG_MAX ? (size_t)len : LAB2_MSG_MAX);
	}
	ref_end(&k, r);
}

/* A text to send, this run, and a peer that receives it. */
static void peer_receives_a_text(struct rl_case *c)
{
	struct msg_in *in = c->in;

	rl_test_random_text(in->text, sizeof(in->text));
	in->o = ref_default();
	fx_peer_start(receives_a_message, in);
	in->port = fx_peer_port();
}

static void posts_a_send(struct rl_case *c)
{
	const struct msg_in *in = c->in;
	struct fx_pair_opts o = { .port = in->port, .peer_rnr_retry = LAB2_RNR_RETRY };
	uint32_t len = (uint32_t)strlen(in->text) + 1;
	struct ibv_wc wc = { 0 };
	struct fx_pair p;

	fx_pair_open(&p, &o);
	memcpy(p.c.bufs.send, in->text, len);
	if (fx_say_ret("lab2_post_send", lab2_post_send(&p.c, len))) {
		rl_say_int("completed", fx_poll(p.c.cq, &wc));
		rl_say_int("opcode", wc.opcode);
		rl_say_int("wr_id", (long long)wc.wr_id);
	}
	fx_pair_close(&p);
}

static void peer_got_it_and_it_completed(struct rl_case *c)
{
	const struct msg_in *in = c->in;
	uint32_t len = (uint32_t)strlen(in->text) + 1;
	const struct fx_report *r;

	fx_ok(c, "lab2_post_send", 3);
	r = fx_peer_end(c, FX_DONE);
	if (rl_failed(c) ||
	    !rl_expect(c, r->text_len == len && memcmp(r->text, in->text, len) == 0,
		       "expected the peer to receive \"%s\" (%u bytes), got %u bytes \"%.*s\"%s%s",
		       in->text, len, r->text_len, (int)len, r->text, r->why[0] ? "; " : "",
		       r->why))
		return;
	rl_expect(c,
		  rl_said_int(c, "completed") && rl_said_int(c, "opcode") == IBV_WC_SEND &&
			  rl_said_int(c, "wr_id") == LAB2_WR_SEND,
		  "expected a SEND completion with wr_id %d (signaled), got %s opcode %lld wr_id "
		  "%llu (see docs/lab2.md#step-3)",
		  LAB2_WR_SEND, rl_said_int(c, "completed") ? "one with" : "none within 5 s:",
		  rl_said_int(c, "opcode"), (unsigned long long)rl_said_int(c, "wr_id"));
}

RL_GRADED(post_send_sends_the_send_buffer_signaled, .step = 3, .points = 1,
	  .setup = peer_receives_a_text, .act = posts_a_send,
	  .check = peer_got_it_and_it_completed);

/* Three times as many messages as slots: each slot must be posted again. */
#define MANY_MESSAGES (3 * LAB2_RECV_SLOTS)

/* Message I of the peer's: made from its secret, so only it (and then the parent) knows it. */
static uint32_t nth_message(const char *secret, int i, char *out, size_t size)
{
	return (uint32_t)snprintf(out, size, "message %d: %s", i, secret + i) + 1;
}

/* The peer: MANY_MESSAGES, each once the act said it took the one before. */
static void sends_many(const void *in, struct fx_report *r)
{
	const struct msg_in *mi = in;
	struct ref_conn k;
	uint32_t len;
	int i;

	if (!ref_accept(&k, &mi->o, r)) {
		for (i = 0; i < MANY_MESSAGES; i++) {
			len = nth_message(r->secret, i, (char *)k.buf + REF_SEND, LAB2_MSG_MAX);
			if (ref_send(&k, r, len, NULL)) {
				r->failed_at = i;
				break;
			}
			if (i + 1 < MANY_MESSAGES && ref_recv(&k, r) < 0)
				break;
		}
	}
	ref_end(&k, r);
}

static void peer_sends_many(struct rl_case *c)
{
	struct msg_in *in = c->in;

	in->o = ref_default();
	fx_peer_start(sends_many, in);
	in->port = fx_peer_port();
}

static void receives_many(struct rl_case *c)
{
	const struct msg_in *in = c->in;
	/* The peer resends once after RNR: a receive not posted again shows fast. */
	struct fx_pair_opts o = { .port = in->port, .recvs = LAB2_RECV_SLOTS, .peer_rnr_retry = 1 };
	char got[LAB2_MSG_MAX], name[16];
	struct fx_pair p;
	int i, len;

	fx_pair_open(&p, &o);
	for (i = 0; i < MANY_MESSAGES; i++) {
		memset(got, 0, sizeof(got));
		len = lab2_recv_msg(&p.c, got, sizeof(got));
		snprintf(name, sizeof(name), "len%d", i);
		rl_say_int(name, len);
		if (len < 0)
			break;
		snprintf(name, sizeof(name), "msg%d", i);
		rl_say_bytes(name, got, (size_t)len < sizeof(got) ? (size_t)len : sizeof(got));
		/* Tell the peer it may send the next: one message in flight at a time. */
		if (i + 1 < MANY_MESSAGES)
			fx_pair_tell(&p, "took it", 8);
	}
	fx_pair_close_if_acked(&p, 0);
}

static void each_in_order(struct rl_case *c)
{
	const struct fx_report *r;
	char want[LAB2_MSG_MAX], name[16];
	long long len;
	size_t n;
	int i, failed = -1;

	for (i = 0; i < MANY_MESSAGES && failed < 0; i++) {
		snprintf(name, sizeof(name), "len%d", i);
		if (rl_said_int(c, name) < 0)
			failed = i;
	}
	/* When the act gave up, the peer has nothing more to do: stop it now. */
	r = fx_peer_end(c, failed < 0 ? FX_DONE : FX_STARTED);
	for (i = 0; i < MANY_MESSAGES && !rl_failed(c); i++) {
		if (r->failed_at == i) {
			rl_expect(c, false,
				  "message %d: expected the peer's SEND to find a receive, got "
				  "\"%s\" (when does lab2_recv_msg post the receive again? see "
				  "docs/lab2.md#step-3)",
				  i, ibv_wc_status_str((enum ibv_wc_status)r->send_status));
			break;
		}
		nth_message(r->secret, i, want, sizeof(want));
		snprintf(name, sizeof(name), "len%d", i);
		len = rl_said_int(c, name);
		snprintf(name, sizeof(name), "msg%d", i);
		rl_expect(
			c, len >= 0 && said_text(c, name, want, len),
			"expected lab2_recv_msg to return \"%s\" (%zu bytes), got %lld, \"%.32s\"",
			want, strlen(want) + 1, len,
			len >= 0 ? (const char *)rl_said_bytes(c, name, &n) : "");
	}
}

RL_GRADED(recv_msg_returns_messages_in_order_and_posts_each_receive_again, .step = 3, .points = 2,
	  .needs = 2, .setup = peer_sends_many, .act = receives_many, .check = each_in_order);

/* The peer: its secret at once, then it receives the act's message. */
static void sends_early_then_receives(const void *in, struct fx_report *r)
{
	const struct msg_in *mi = in;
	struct ref_conn k;
	int len;

	if (!ref_accept(&k, &mi->o, r)) {
		strcpy((char *)k.buf + REF_SEND, r->secret);
		if (!ref_send(&k, r, (uint32_t)strlen(r->secret) + 1, NULL) &&
		    (len = ref_recv(&k, r)) >= 0) {
			r->text_len = (uint32_t)len;
			memcpy(r->text, k.buf + REF_RECV,
			       len < LAB2_MSG_MAX ? (size_t)len : LAB2_MSG_MAX);
		}
	}
	ref_end(&k, r);
}

static void peer_sends_early(struct rl_case *c)
{
	struct msg_in *in = c->in;

	rl_test_random_text(in->text, sizeof(in->text));
	in->o = ref_default();
	fx_peer_start(sends_early_then_receives, in);
	in->port = fx_peer_port();
}

static void sends_after_a_message_came(struct rl_case *c)
{
	const struct msg_in *in = c->in;
	struct fx_pair_opts o = {
		.port = in->port, .recvs = 1, .arm_cq = true, .peer_rnr_retry = LAB2_RNR_RETRY
	};
	uint32_t len = (uint32_t)strlen(in->text) + 1;
	char got[LAB2_MSG_MAX] = { 0 };
	struct ibv_cq *cq;
	struct pollfd pfd;
	struct fx_pair p;
	void *cq_ctx;
	int n;

	fx_pair_open(&p, &o);
	/* The RECV completion is in the CQ before the SEND is even posted. */
	pfd = (struct pollfd){ .fd = p.c.comp->fd, .events = POLLIN };
	ck_assert_msg(poll(&pfd, 1, FX_TIMEOUT_MS) == 1 &&
			      !ibv_get_cq_event(p.c.comp, &cq, &cq_ctx),
		      "fixture: the peer's early message did not come");
	ibv_ack_cq_events(cq, 1);
	memcpy(p.c.bufs.send, in->text, len);
	if (fx_say_ret("lab2_send_msg", lab2_send_msg(&p.c, len))) {
		n = lab2_recv_msg(&p.c, got, sizeof(got));
		rl_say_int("len", n);
		rl_say_bytes("msg", got, n > 0 && n < (int)sizeof(got) ? (size_t)n : sizeof(got));
	}
	fx_pair_close_if_acked(&p, 1);
}

static void kept_the_early_message(struct rl_case *c)
{
	const struct msg_in *in = c->in;
	uint32_t len = (uint32_t)strlen(in->text) + 1;
	const struct fx_report *r;
	long long got;
	size_t n;

	fx_ok(c, "lab2_send_msg", 3);
	r = fx_peer_end(c, FX_DONE);
	if (rl_failed(c))
		return;
	got = rl_said_int(c, "len");
	if (rl_expect(c, said_text(c, "msg", r->secret, got),
		      "expected the message that came during lab2_send_msg, \"%s\" (%zu bytes), "
		      "got %lld, \"%.*s\" (match completions by wr_id: see "
		      "docs/lab2.md#step-3)",
		      r->secret, strlen(r->secret) + 1, got, (int)strlen(r->secret),
		      (const char *)rl_said_bytes(c, "msg", &n)))
		rl_expect(c, r->text_len == len && memcmp(r->text, in->text, len) == 0,
			  "expected the peer to receive \"%s\" from lab2_send_msg, got \"%.*s\"",
			  in->text, (int)len, r->text);
}

RL_GRADED(send_msg_keeps_a_message_that_completes_before_its_send, .step = 3, .points = 1,
	  .needs = 2, .setup = peer_sends_early, .act = sends_after_a_message_came,
	  .check = kept_the_early_message);

/* The peer: connected, with no receive posted. */
static void posts_no_receive(const void *in, struct fx_report *r)
{
	const struct msg_in *mi = in;
	struct ref_conn k;

	ref_accept(&k, &mi->o, r);
	ref_end(&k, r);
}

/* A text to send, and a peer with no receive that lets our QP resend once after an RNR NAK. */
static void peer_without_receives(struct rl_case *c)
{
	struct msg_in *in = c->in;

	rl_test_random_text(in->text, sizeof(in->text));
	in->o = ref_default();
	in->o.no_recv = true;
	in->o.rnr_retry = 1;
	in->o.min_rnr_timer = RL_MIN_RNR_TIMER;
	fx_peer_start(posts_no_receive, in);
	in->port = fx_peer_port();
}

static void posts_a_send_nobody_receives(struct rl_case *c)
{
	const struct msg_in *in = c->in;
	struct fx_pair_opts o = { .port = in->port, .peer_rnr_retry = LAB2_RNR_RETRY };
	uint32_t len = (uint32_t)strlen(in->text) + 1;
	struct ibv_wc wc = { 0 };
	struct fx_pair p;

	fx_pair_open(&p, &o);
	memcpy(p.c.bufs.send, in->text, len);
	if (fx_say_ret("lab2_post_send", lab2_post_send(&p.c, len))) {
		rl_say_int("completed", fx_poll(p.c.cq, &wc));
		rl_say_int("status", wc.status);
		rl_say_int("wr_id", (long long)wc.wr_id);
		rl_hold();
	}
	fx_pair_close(&p);
}

static void send_failed_with_rnr(struct rl_case *c)
{
	int status = fx_ok(c, "lab2_post_send", 3) ? (int)rl_said_int(c, "status") : -1;

	if (!rl_failed(c) &&
	    rl_expect(c, rl_said_int(c, "completed"),
		      "expected the SEND (wr_id %d) to complete, failed, within %d ms: no "
		      "completion came",
		      LAB2_WR_SEND, FX_TIMEOUT_MS) &&
	    rl_expect(c,
		      status == IBV_WC_RNR_RETRY_EXC_ERR && rl_said_int(c, "wr_id") == LAB2_WR_SEND,
		      "expected the SEND (wr_id %d) to fail with \"%s\", got wr_id %llu \"%s\"",
		      LAB2_WR_SEND, ibv_wc_status_str(IBV_WC_RNR_RETRY_EXC_ERR),
		      (unsigned long long)rl_said_int(c, "wr_id"),
		      ibv_wc_status_str((enum ibv_wc_status)status)))
		/* The kernel's word that a SEND really went and failed. */
		fx_expect_act_qp(c, "ERR", 0, "a SEND that fails puts its QP there");
	fx_peer_end(c, FX_ESTABLISHED);
}

RL_GRADED(a_send_with_no_receive_posted_fails_with_rnr_retry_exceeded, .step = 3, .points = 1,
	  .setup = peer_without_receives, .act = posts_a_send_nobody_receives,
	  .check = send_failed_with_rnr);

static void sends_a_message_nobody_receives(struct rl_case *c)
{
	const struct msg_in *in = c->in;
	struct fx_pair_opts o = { .port = in->port, .peer_rnr_retry = LAB2_RNR_RETRY };
	uint32_t len = (uint32_t)strlen(in->text) + 1;
	struct fx_pair p;

	fx_pair_open(&p, &o);
	memcpy(p.c.bufs.send, in->text, len);
	rl_say_int("lab2_send_msg", lab2_send_msg(&p.c, len));
	rl_hold();
	fx_pair_close_if_acked(&p, 0);
}

static void send_msg_said_eio(struct rl_case *c)
{
	long long ret = rl_said_int(c, "lab2_send_msg");

	if (rl_expect(c, ret == -EIO,
		      "expected -EIO from lab2_send_msg with no receive at the peer, "
		      "got %lld (%s)",
		      ret, strerror((int)-ret)))
		fx_expect_act_qp(c, "ERR", 0, "a SEND that fails puts its QP there");
	fx_peer_end(c, FX_ESTABLISHED);
}

RL_GRADED(send_msg_reports_the_rnr_failure_with_eio, .step = 3, .points = 1, .needs = 2,
	  .setup = peer_without_receives, .act = sends_a_message_nobody_receives,
	  .check = send_msg_said_eio);
