/* test_cq.c: Lab 2 step 2: a CQ with a completion channel, and sleeping on it. */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"
#include "lab2.h"

/* Step 2 */

/* The inputs of a step 2 test, chosen by its setup. */
struct cq_in {
	struct ref_opts o; /* the reference peer's */
	uint16_t port;     /* where it listens */
	uint64_t wr_id[2]; /* the work requests the fixture posts */
	int timeout_ms;    /* the wait a test bounds */
	int delay_ms;      /* how long the peer waits, once told, before it sends */
};

/* Fresh wr_ids, none of them a lab2_wr_id. */
static void random_wr_ids(struct cq_in *in)
{
	uint32_t r[2];
	int i;

	ck_assert(getrandom(r, sizeof(r), 0) == sizeof(r));
	for (i = 0; i < 2; i++)
		in->wr_id[i] = 1000 + (uint64_t)r[i] * 2 + (uint64_t)i;
}

/* The peer's immediate number I: four letters of its secret, which only it knows. */
static uint32_t secret_imm(const char *secret, int i)
{
	uint32_t v;

	memcpy(&v, secret + 4 * i, sizeof(v));
	return v;
}

/* The peer: one message, once connected. */
static void sends_a_message(const void *in, struct fx_report *r)
{
	const struct cq_in *ci = in;
	struct ref_conn k;

	if (!ref_accept(&k, &ci->o, r)) {
		memcpy(k.buf + REF_SEND, "wake up", 8);
		ref_send(&k, r, 8, NULL);
	}
	ref_end(&k, r);
}

static void peer_sends_a_message(struct rl_case *c)
{
	struct cq_in *in = c->in;

	in->o = ref_default();
	fx_peer_start(sends_a_message, in);
	in->port = fx_peer_port();
}

/*
 * lab2_create_cq() makes the CQ of a connection; armed, it must wake
 * c->comp when the peer's message completes.
 */
static void waits_on_the_channel(struct rl_case *c)
{
	const struct cq_in *in = c->in;
	struct fx_pair_opts o = { .port = in->port,
				  .student_cq = true,
				  .recvs = 1,
				  .arm_cq = true,
				  .peer_rnr_retry = LAB2_RNR_RETRY };
	struct fx_pair p;
	struct pollfd pfd;
	struct ibv_cq *cq = NULL;
	void *cq_ctx;

	if (fx_pair_build(&p, &o)) {
		fx_pair_connect(&p, &o);
		pfd = (struct pollfd){ .fd = p.c.comp->fd, .events = POLLIN };
		if (poll(&pfd, 1, FX_TIMEOUT_MS) == 1 && !ibv_get_cq_event(p.c.comp, &cq, &cq_ctx))
			ibv_ack_cq_events(cq, 1);
		rl_say_int("woke", cq != NULL);
		rl_say_int("woke_our_cq", cq == p.c.cq);
		rl_hold();
	}
	fx_pair_close(&p);
}

static void cq_bound_to_its_channel(struct rl_case *c)
{
	const struct fx_report *r;
	struct rl_res cq[4];
	const char *cqe;
	int n;

	if (fx_ok(c, "lab2_create_cq", 2))
		rl_expect(c, rl_said_int(c, "made_cq"),
			  "expected lab2_create_cq to set c->comp and c->cq");
	r = fx_peer_end(c, FX_DONE);
	rl_expect(c, r->ret == 0, "expected the reference peer's message to arrive, %s", r->why);
	rl_expect(c, rl_said_int(c, "woke"),
		  "expected the completion of the peer's message to wake c->comp, it did not "
		  "(is the CQ made with that channel?)");
	rl_expect(c, rl_said_int(c, "woke_our_cq"),
		  "expected c->comp to wake for c->cq, it woke for another CQ");
	n = fx_act_res(c, "cq", cq, 4);
	if (n < 0 || !rl_expect(c, n == 1, "expected the kernel to list one CQ, got %d", n))
		return;
	cqe = rl_res_get(&cq[0], "cqe");
	rl_expect(c, cqe && atoi(cqe) >= LAB2_CQ_DEPTH, "expected at least %d CQ entries, got %s",
		  LAB2_CQ_DEPTH, cqe ? cqe : "none");
}

RL_GRADED(create_cq_binds_a_new_cq_to_a_new_channel, .step = 2, .points = 2,
	  .setup = peer_sends_a_message, .act = waits_on_the_channel,
	  .check = cq_bound_to_its_channel);

/*
 * The peer: two messages with its immediates, the second once the first
 * arrived and a while after, so that the second wait sleeps.
 */
static void sends_two_immediates(const void *in, struct fx_report *r)
{
	const struct cq_in *ci = in;
	struct ref_conn k;
	uint32_t imm;
	int i;

	if (!ref_accept(&k, &ci->o, r)) {
		for (i = 0; i < 2; i++) {
			if (i)
				usleep(300000);
			imm = secret_imm(r->secret, i);
			memcpy(k.buf + REF_SEND, "completion", 11);
			if (ref_send(&k, r, 11, &imm))
				break;
		}
	}
	ref_end(&k, r);
}

static void peer_sends_two_immediates(struct rl_case *c)
{
	struct cq_in *in = c->in;

	random_wr_ids(in);
	in->o = ref_default();
	fx_peer_start(sends_two_immediates, in);
	in->port = fx_peer_port();
}

static void waits_twice(struct rl_case *c)
{
	const struct cq_in *in = c->in;
	struct fx_pair_opts o = { .port = in->port,
				  .recvs = 2,
				  .recv_wr_id = in->wr_id,
				  .peer_rnr_retry = LAB2_RNR_RETRY };
	char name[32];
	struct ibv_wc wc;
	struct fx_pair p;
	int i;

	fx_pair_open(&p, &o);
	/* Twice: the second wait needs the CQ armed again and the first event acknowledged. */
	for (i = 0; i < 2; i++) {
		memset(&wc, 0, sizeof(wc));
		snprintf(name, sizeof(name), "lab2_wait_wc (%d)", i + 1);
		if (!fx_say_ret(name, lab2_wait_wc(&p.c, &wc)))
			break;
		snprintf(name, sizeof(name), "wr_id%d", i);
		rl_say_int(name, (long long)wc.wr_id);
		snprintf(name, sizeof(name), "opcode%d", i);
		rl_say_int(name, wc.opcode);
		snprintf(name, sizeof(name), "imm%d", i);
		rl_say_int(name,
			   wc.wc_flags & IBV_WC_WITH_IMM ? (long long)ntohl(wc.imm_data) : -1);
	}
	fx_pair_close_if_acked(&p, 0);
}

/* What the act said its I-th wait gave (NAME: "wr_id", "opcode", "imm"). */
static long long said_of(struct rl_case *c, const char *name, int i)
{
	char key[32];

	snprintf(key, sizeof(key), "%s%d", name, i);
	return rl_said_int(c, key);
}

static void each_wait_gave_its_completion(struct rl_case *c)
{
	const struct cq_in *in = c->in;
	const struct fx_report *r;
	uint32_t imm;
	long long got_imm;
	char name[32];
	int i;

	r = fx_peer_end(c, FX_DONE);
	for (i = 0; i < 2 && !rl_failed(c); i++) {
		snprintf(name, sizeof(name), "lab2_wait_wc (%d)", i + 1);
		if (!fx_ok(c, name, 2))
			break;
		imm = secret_imm(r->secret, i);
		got_imm = said_of(c, "imm", i);
		rl_expect(c,
			  (uint64_t)said_of(c, "wr_id", i) == in->wr_id[i] &&
				  said_of(c, "opcode", i) == IBV_WC_RECV && got_imm == imm,
			  "wait %d: expected the RECV completion of wr_id %llu, with the peer's "
			  "immediate 0x%08x; got wr_id %llu opcode %lld immediate %s0x%08x",
			  i + 1, (unsigned long long)in->wr_id[i], imm,
			  (unsigned long long)said_of(c, "wr_id", i), said_of(c, "opcode", i),
			  got_imm < 0 ? "(none) " : "", (uint32_t)got_imm);
	}
}

RL_GRADED(wait_wc_returns_the_completion_that_arrives, .step = 2, .points = 2,
	  .setup = peer_sends_two_immediates, .act = waits_twice,
	  .check = each_wait_gave_its_completion);

/* The peer: connected, and nothing more. */
static void stays_connected(const void *in, struct fx_report *r)
{
	const struct cq_in *ci = in;
	struct ref_conn k;

	ref_accept(&k, &ci->o, r);
	ref_end(&k, r);
}

static void quiet_peer(struct rl_case *c)
{
	struct cq_in *in = c->in;

	random_wr_ids(in);
	in->o = ref_default();
	fx_peer_start(stays_connected, in);
	in->port = fx_peer_port();
}

/* An RDMA WRITE to the peer with a wrong rkey: remote access error. */
static void waits_for_a_failed_write(struct rl_case *c)
{
	const struct cq_in *in = c->in;
	struct fx_pair_opts o = { .port = in->port, .peer_rnr_retry = LAB2_RNR_RETRY };
	struct ibv_wc wc = { 0 };
	struct fx_pair p;

	fx_pair_open(&p, &o);
	ck_assert_int_eq(rl_post_write(p.c.qp, p.c.rdma_mr, p.c.rdma_buf, 16, p.peer_addr,
				       p.peer_rkey ^ 0x5500, in->wr_id[0]),
			 0);
	rl_say_int("lab2_wait_wc", lab2_wait_wc(&p.c, &wc));
	rl_say_int("status", wc.status);
	rl_say_int("wr_id", (long long)wc.wr_id);
	fx_pair_close_if_acked(&p, 0);
}

static void failed_with_eio(struct rl_case *c)
{
	const struct cq_in *in = c->in;
	long long ret = rl_said_int(c, "lab2_wait_wc");
	int status = (int)rl_said_int(c, "status");

	fx_peer_end(c, FX_ESTABLISHED);
	if (rl_expect(c, ret == -EIO, "expected -EIO from lab2_wait_wc, got %lld (%s)", ret,
		      strerror((int)-ret)) &&
	    rl_expect(c, status == IBV_WC_REM_ACCESS_ERR,
		      "expected \"%s\" in wc.status, got \"%s\"",
		      ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR),
		      ibv_wc_status_str((enum ibv_wc_status)status)))
		rl_expect(c, (uint64_t)rl_said_int(c, "wr_id") == in->wr_id[0],
			  "expected the failed WRITE's wr_id %llu in wc.wr_id, got %llu",
			  (unsigned long long)in->wr_id[0],
			  (unsigned long long)rl_said_int(c, "wr_id"));
}

RL_GRADED(wait_wc_reports_a_failed_completion_with_eio, .step = 2, .points = 1, .setup = quiet_peer,
	  .act = waits_for_a_failed_write, .check = failed_with_eio);

/* Within this of the peer's SEND, a wait that sleeps on the channel has woken. */
#define PROMPT_MS 1000

/*
 * The arms of the act's CQ, counted through its context's req_notify_cq
 * (ibv_req_notify_cq() calls it), as tests/lab4/test_wait.c does.
 */
static struct ibv_cq *counted_cq;
static int (*real_req_notify_cq)(struct ibv_cq *cq, int solicited_only);
static int arms;
/* Set: the next arm first lets the peer's message complete (see slips_in). */
static struct fx_pair *slip_pair;

/*
 * A completion slips in between the wait's poll and its arm: tell the peer
 * to send, and wait (on the channel, armed by us, the event taken and
 * acknowledged) until its message is in the CQ. The arm that follows
 * raises no event for it: only a poll after arming finds it.
 */
static void slips_in(struct fx_pair *p)
{
	struct pollfd pfd = { .fd = p->c.comp->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *cq_ctx;

	fx_pair_tell(p, "go", 3);
	ck_assert(real_req_notify_cq(p->c.cq, 0) == 0);
	ck_assert_msg(poll(&pfd, 1, FX_TIMEOUT_MS) == 1 &&
			      !ibv_get_cq_event(p->c.comp, &cq, &cq_ctx),
		      "fixture: the peer's first message did not come");
	ibv_ack_cq_events(cq, 1);
}

static int counting_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct fx_pair *p = slip_pair;

	if (cq != counted_cq)
		return real_req_notify_cq(cq, solicited_only);
	arms++;
	slip_pair = NULL;
	if (p)
		slips_in(p);
	return real_req_notify_cq(cq, solicited_only);
}

/*
 * The peer: two messages with its immediates, each once the act says so:
 * the first at once, the second after a pause of delay_ms.
 */
static void sends_when_told(const void *in, struct fx_report *r)
{
	const struct cq_in *ci = in;
	struct ref_conn k;
	uint32_t imm;
	int i;

	if (ref_accept(&k, &ci->o, r))
		goto out;
	for (i = 0; i < 2 && ref_recv(&k, r) >= 0; i++) {
		if (i)
			usleep((useconds_t)ci->delay_ms * 1000);
		imm = secret_imm(r->secret, i);
		memcpy(k.buf + REF_SEND, "completion", 11);
		if (i)
			r->sent_ms = fx_now_ms();
		if (ref_send(&k, r, 11, &imm))
			break;
	}
out:
	ref_end(&k, r);
}

/* A pause of 100 to 400 ms before the peer's message, and a timeout of 400 to 800 ms, this run. */
static void peer_sends_when_told(struct rl_case *c)
{
	struct cq_in *in = c->in;
	uint16_t r[2] = { 0 };

	ck_assert(getrandom(r, sizeof(r), 0) == sizeof(r));
	random_wr_ids(in);
	in->delay_ms = 100 + r[0] % 301;
	in->timeout_ms = 400 + r[1] % 401;
	in->o = ref_default();
	fx_peer_start(sends_when_told, in);
	in->port = fx_peer_port();
}

/* This process's CPU time, in ns. */
static long long cpu_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Say what the wait PHASE returned as "lab2_wait_wc (PHASE)", and the completion as "PHASE.*". */
static void say_wait(const char *phase, int ret, const struct ibv_wc *wc)
{
	char key[48];

	snprintf(key, sizeof(key), "lab2_wait_wc (%s)", phase);
	rl_say_int(key, ret);
	snprintf(key, sizeof(key), "%s.arms", phase);
	rl_say_int(key, arms);
	snprintf(key, sizeof(key), "%s.wr_id", phase);
	rl_say_int(key, (long long)wc->wr_id);
	snprintf(key, sizeof(key), "%s.opcode", phase);
	rl_say_int(key, wc->opcode);
	snprintf(key, sizeof(key), "%s.imm", phase);
	rl_say_int(key, wc->wc_flags & IBV_WC_WITH_IMM ? (long long)ntohl(wc->imm_data) : -1);
}

/*
 * Three waits, the CQ's arms counted in each: one whose completion slips
 * in between its poll and its arm (slips_in); one for the peer's message,
 * which comes delay_ms in (the act says when the wait returned, and
 * whether the event is still on the channel); then on the empty CQ, which
 * must time out (the check reads the time and the CPU time it took).
 */
static void waits_for_a_message_then_for_nothing(struct rl_case *c)
{
	const struct cq_in *in = c->in;
	struct fx_pair_opts o = { .port = in->port,
				  .recvs = 2,
				  .recv_wr_id = in->wr_id,
				  .peer_rnr_retry = LAB2_RNR_RETRY };
	struct pollfd pfd;
	struct ibv_wc wc = { 0 };
	struct fx_pair p;
	unsigned int acked_before = 0;
	int ret;

	fx_pair_open(&p, &o);
	counted_cq = p.c.cq;
	real_req_notify_cq = p.c.cq->context->ops.req_notify_cq;
	p.c.cq->context->ops.req_notify_cq = counting_req_notify_cq;
	arms = 0;
	slip_pair = &p;
	p.c.timeout_ms = in->timeout_ms;
	ret = lab2_wait_wc(&p.c, &wc);
	slip_pair = NULL;
	say_wait("slipped", ret, &wc);
	/* Its completion is still in the CQ when that wait missed it: the next would take it. */
	if (ret)
		goto hold;
	acked_before = p.c.cq->comp_events_completed;
	rl_say_int("acked_before", acked_before);
	arms = 0;
	memset(&wc, 0, sizeof(wc));
	p.c.timeout_ms = FX_TIMEOUT_MS;
	fx_pair_tell(&p, "go", 3);
	ret = lab2_wait_wc(&p.c, &wc);
	rl_say_int("returned_ms", fx_now_ms());
	say_wait("message", ret, &wc);
	pfd = (struct pollfd){ .fd = p.c.comp->fd, .events = POLLIN };
	rl_say_int("event_left", poll(&pfd, 1, 0) == 1);
	rl_say_int("acked", p.c.cq->comp_events_completed);
	/* Nothing more comes: this one times out. */
	arms = 0;
	p.c.timeout_ms = in->timeout_ms;
	rl_say_int("cpu_ns", cpu_ns(CLOCK_PROCESS_CPUTIME_ID));
	fx_say_start();
	rl_say_int("lab2_wait_wc", lab2_wait_wc(&p.c, &wc));
	rl_say_int("arms", arms);
hold:
	rl_hold();
	p.c.cq->context->ops.req_notify_cq = real_req_notify_cq;
	if (acked_before)
		fx_pair_close_if_acked(&p, acked_before);
}

/* What the act said of the wait PHASE's completion NAME ("wr_id", "opcode", "imm"). */
static long long said_in(struct rl_case *c, const char *phase, const char *name)
{
	char key[48];

	snprintf(key, sizeof(key), "%s.%s", phase, name);
	return rl_said_int(c, key);
}

/* The wait PHASE gave the RECV completion of WR_ID with the peer's immediate IMM. */
static bool gave_the_recv(struct rl_case *c, const char *phase, uint64_t wr_id, uint32_t imm)
{
	long long got_imm = said_in(c, phase, "imm");

	return rl_expect(c,
			 (uint64_t)said_in(c, phase, "wr_id") == wr_id &&
				 said_in(c, phase, "opcode") == IBV_WC_RECV && got_imm == imm,
			 "expected the RECV completion of wr_id %llu, with the peer's immediate "
			 "0x%08x; got wr_id %llu opcode %lld immediate %s0x%08x",
			 (unsigned long long)wr_id, imm,
			 (unsigned long long)said_in(c, phase, "wr_id"),
			 said_in(c, phase, "opcode"), got_imm < 0 ? "(none) " : "",
			 (uint32_t)got_imm);
}

/* The first wait: its completion came between its poll and its arm, and it was not lost. */
static bool found_what_slipped_in(struct rl_case *c)
{
	long long ret = rl_said_int(c, "lab2_wait_wc (slipped)");

	if (!rl_expect(c, ret == 0 || said_in(c, "slipped", "arms") >= 1,
		       "expected the CQ armed (ibv_req_notify_cq) before sleeping, it never was, "
		       "and lab2_wait_wc returned %lld (%s) (see docs/lab2.md#step-2)",
		       ret, strerror((int)-ret)) ||
	    !rl_expect(c, ret == 0,
		       "expected lab2_wait_wc to return the completion that came after its first "
		       "poll and before its arm, got %lld (%s): an arm raises an event only for a "
		       "completion that comes after it, so a wait that sleeps right after arming "
		       "misses the one that came just before (a lost wakeup; see "
		       "docs/lab2.md#step-2)",
		       ret, strerror((int)-ret)))
		return false;
	return true;
}

/* The first wait gave its message; the second, the peer's message, soon after it was sent, the CQ armed, the event taken. */
static bool woke_for_the_message(struct rl_case *c, const struct fx_report *r)
{
	const struct cq_in *in = c->in;
	long long ret = rl_said_int(c, "lab2_wait_wc (message)");
	long long acked = rl_said_int(c, "acked") - rl_said_int(c, "acked_before");
	long late = (long)rl_said_int(c, "returned_ms") - r->sent_ms;

	if (!gave_the_recv(c, "slipped", in->wr_id[0], secret_imm(r->secret, 0)) ||
	    !rl_expect(c, r->sent_ms, "expected the reference peer to send its message, %s",
		       r->why[0] ? r->why : "it did not") ||
	    !rl_expect(c, ret == 0,
		       "expected lab2_wait_wc to return 0 for a message %d ms into a %d ms wait, "
		       "got %lld (%s)",
		       in->delay_ms, FX_TIMEOUT_MS, ret, strerror((int)-ret)) ||
	    !gave_the_recv(c, "message", in->wr_id[1], secret_imm(r->secret, 1)) ||
	    !rl_expect(c, late < PROMPT_MS,
		       "expected lab2_wait_wc to return as the peer's message came, it returned "
		       "%ld ms after it was sent (a %d ms wait: does it sleep until the timeout? "
		       "see docs/lab2.md#step-2)",
		       late, FX_TIMEOUT_MS) ||
	    !rl_expect(c, said_in(c, "message", "arms") >= 1,
		       "expected the CQ armed (ibv_req_notify_cq) before sleeping, it never was "
		       "(see docs/lab2.md#step-2)") ||
	    !rl_expect(c, !rl_said_int(c, "event_left"),
		       "expected the event the message raised to be taken from c->comp "
		       "(ibv_get_cq_event), it is still there: sleep in poll() on its fd (see "
		       "docs/lab2.md#step-2)"))
		return false;
	return rl_expect(
		c, acked >= 1,
		"expected the event it woke on to be acknowledged (ibv_ack_cq_events), got "
		"%lld acknowledged: ibv_destroy_cq() waits for ever on one that is not (see "
		"docs/lab2.md#step-2)",
		acked);
}

static void woke_for_the_message_then_slept_until_the_timeout(struct rl_case *c)
{
	const struct cq_in *in = c->in;
	long took, cpu = -1;
	long long ret;
	clockid_t clock;

	if (!found_what_slipped_in(c))
		return;
	took = fx_took_ms(c);
	/* The act's CPU time, from the kernel: the act cannot say less than it used. */
	if (rl_act_pid(c) > 0 && clock_getcpuclockid(rl_act_pid(c), &clock) == 0)
		cpu = (long)((cpu_ns(clock) - rl_said_int(c, "cpu_ns")) / 1000000);
	if (!woke_for_the_message(c, fx_peer_end(c, FX_DONE)))
		return;
	ret = rl_said_int(c, "lab2_wait_wc");
	if (rl_expect(c, ret == -ETIMEDOUT,
		      "expected -ETIMEDOUT from lab2_wait_wc on an empty CQ, got %lld (%s)", ret,
		      strerror((int)-ret)) &&
	    rl_expect(c, took >= in->timeout_ms - 100 && took < in->timeout_ms + 2400,
		      "expected to wait about %d ms, waited %ld ms", in->timeout_ms, took) &&
	    rl_expect(c, rl_said_int(c, "arms") >= 1,
		      "expected the empty CQ armed (ibv_req_notify_cq) before sleeping, it was not "
		      "armed in that wait"))
		rl_expect(c, cpu >= 0 && cpu < took / 3,
			  "expected to sleep on the completion channel, but %ld ms of CPU went in "
			  "%ld ms (busy polling? see docs/lab2.md#step-2)",
			  cpu, took);
}

RL_GRADED(wait_wc_sleeps_on_the_channel_and_times_out, .step = 2, .points = 2,
	  .setup = peer_sends_when_told, .act = waits_for_a_message_then_for_nothing,
	  .check = woke_for_the_message_then_slept_until_the_timeout);
