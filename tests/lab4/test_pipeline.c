/*
 * test_pipeline.c: Lab 4 step 1: a window of RDMA writes in flight, every
 * k-th signaled. The act runs the lab's pipeline with the test's poster,
 * whose immediate data carries how many writes were outstanding before
 * each post: the peer, the receiver in a process of the test's own, sees
 * every write, and the check judges what it saw. The window test's sender
 * has a send queue and a CQ exactly the window deep, so the device itself
 * refuses a sender that goes past it; which writes were signaled is what
 * the sender's CQ gave back, not what the lab's code told the poster.
 */
#include <string.h>

#include "fixture.h"

/* The inputs: a file of random bytes to the peer, and how to pipeline it. */
struct pipeline_in {
	struct fx_peer_in peer;
	uint32_t window, k;
	uint32_t depth; /* the sender's send queue and CQ; 0: the given ones */
	bool bad_rkey;
};

/* Setup: a file of SIZE bytes in chunks of CHUNK, a window and k, and the peer that takes it. */
static void pipeline_setup(struct rl_case *c, uint64_t size, uint32_t chunk, uint32_t window,
			   uint32_t k)
{
	struct pipeline_in *in = c->in;

	in->peer.seed = fx_random();
	in->peer.size = size;
	in->peer.chunk = chunk;
	in->window = window;
	in->k = k;
	fx_peer_start(c, &in->peer, FX_RC_RECEIVER);
}

/*
 * The act: the lab's pipeline, what it returned and counted, and which
 * chunks had a completion in the sender's CQ.
 */
static void run_pipeline(struct rl_case *c)
{
	const struct pipeline_in *in = c->in;
	struct fx_send x;
	int ret;

	fx_send_open(&x, &in->peer, in->depth);
	x.s.window = in->window;
	x.s.signal_every = in->k;
	if (in->bad_rkey)
		x.s.rkey ^= 0x80;
	ret = lab4_pipeline(&x.s);
	rl_say_int("ret", ret);
	rl_say_int("posted", x.s.posted);
	rl_say_int("completed", x.s.completed);
	fx_send_say_signaled(&x, "signaled");
	fx_send_hangup(&x);
	fx_send_close(&x);
}

/* Whether chunk I had a completion in the sender's CQ: it was posted signaled. */
static bool signaled(struct rl_case *c, uint32_t i)
{
	size_t n;
	const uint8_t *had = rl_said_bytes(c, "signaled", &n);

	return i < n && had[i];
}

static uint32_t nchunks(const struct pipeline_in *in)
{
	return lab4_nchunks(in->peer.size, in->peer.chunk);
}

/* What a timeout of the pipeline means, for the messages of every test. */
static const char *stall_hint(long long ret)
{
	return ret != -ETIMEDOUT ?
		       "" :
		       ": it waited for a completion that never came, so either no write in "
		       "flight was signaled or s->completed fell behind what the completions "
		       "said (see docs/lab4.md#step-1)";
}

/*
 * The peer's report into REP (first: the peer has ended then, whatever the
 * check finds), and lab4_pipeline() returned 0.
 */
static bool returned_0_and_peer_saw(struct rl_case *c, const char *what, struct fx_report *rep)
{
	long long ret = rl_said_int(c, "ret");

	return fx_peer_report(c, 0, rep) &&
	       rl_expect(c, ret == 0, "%s: expected lab4_pipeline to return 0, got %lld (%s)%s",
			 what, ret, strerror((int)-ret), stall_hint(ret));
}

static void writes_every_chunk_setup(struct rl_case *c)
{
	/* 17 chunks of 64 KiB, the last of a random length. */
	pipeline_setup(c, (16 << 16) + fx_between(1, 65535), 65536, 8, 4);
}

static void writes_every_chunk_check(struct rl_case *c)
{
	const struct pipeline_in *in = c->in;
	uint32_t n = nchunks(in), i, got, len;
	struct fx_report rep;
	uint8_t want[32];

	if (!returned_0_and_peer_saw(c, "window 8, k 4", &rep))
		return;
	if (!rl_expect(c, rl_said_int(c, "posted") == n && rl_said_int(c, "completed") == n,
		       "expected posted and completed %u (both count chunks: see "
		       "docs/lab4.md#step-1), got %lld and %lld",
		       n, rl_said_int(c, "posted"), rl_said_int(c, "completed")))
		return;
	if (!rl_expect(c, rep.nseen == n, "expected %u writes at the receiver, got %u", n,
		       rep.nseen))
		return;
	for (i = 0; i < n; i++) {
		got = FX_IMM_INDEX(rep.seen[i].imm);
		len = lab4_chunk_len(in->peer.size, in->peer.chunk, i);
		if (!rl_expect(c,
			       rep.seen[i].status == IBV_WC_SUCCESS && got == i &&
				       rep.seen[i].byte_len == len,
			       "arrival %u: expected chunk %u of %u bytes, got chunk %u of %u bytes "
			       "(%s)",
			       i, i, len, got, rep.seen[i].byte_len,
			       ibv_wc_status_str(rep.seen[i].status)))
			return;
	}
	fx_file_sha256(in->peer.size, in->peer.seed, want);
	rl_expect(c, memcmp(rep.sha256, want, 32) == 0,
		  "expected the receiver's buffer to equal the file, it differs");
}

RL_GRADED(pipeline_writes_every_chunk_in_order_to_the_right_place, .step = 1, .points = 3,
	  .setup = writes_every_chunk_setup, .act = run_pipeline,
	  .check = writes_every_chunk_check);

static void window_setup(struct rl_case *c)
{
	struct pipeline_in *in = c->in;

	/* The device holds 3 writes and 3 completions: a 4th outstanding fails or is lost. */
	in->depth = 3;
	pipeline_setup(c, 40 * 4096 - fx_between(0, 4095), 4096, 3, 1);
}

static void window_check(struct rl_case *c)
{
	long long ret = rl_said_int(c, "ret");
	const char *why =
		ret == -ENOMEM || ret == -ETIMEDOUT ?
			": the sender's send queue and CQ hold 3 entries here, so a write "
			"posted past the window fails with ENOMEM, or its completion is lost" :
			"";
	struct fx_report rep;
	uint32_t i, worst = 0;

	if (!fx_peer_report(c, 0, &rep) ||
	    !rl_expect(c, ret == 0,
		       "window 3, k 1: expected lab4_pipeline to return 0, got %lld (%s)%s "
		       "(see docs/lab4.md#step-1)",
		       ret, strerror((int)-ret), why))
		return;
	if (!rl_expect(c, rep.nseen == 40, "expected 40 posts, got %u", rep.nseen))
		return;
	/* What was outstanding is the decision; a lost completion is what it costs. */
	for (i = 0; i < rep.nseen; i++)
		if (FX_IMM_OUT(rep.seen[i].imm) > worst)
			worst = FX_IMM_OUT(rep.seen[i].imm);
	if (!rl_expect(c, worst < 3,
		       "window 3: expected at most 2 writes outstanding before a post (the post "
		       "makes 3), got %u: see docs/lab4.md#step-1",
		       worst))
		return;
	for (i = 0; i < 40; i++)
		if (!rl_expect(c, signaled(c, i),
			       "window 3, k 1: expected every write signaled, chunk %u had no "
			       "completion in the sender's CQ (see docs/lab4.md#step-1)",
			       i))
			return;
}

RL_GRADED(pipeline_never_has_more_than_the_window_outstanding, .step = 1, .points = 2,
	  .setup = window_setup, .act = run_pipeline, .check = window_check);

static void signals_setup(struct rl_case *c)
{
	pipeline_setup(c, 30 * 4096 - fx_between(1, 4095), 4096, 8, 4);
}

/* Signaled or not, as the sender's CQ says: a write has a completion only when it was signaled. */
static void signals_check(struct rl_case *c)
{
	struct fx_report rep;
	uint32_t i;
	bool want, got;

	if (!returned_0_and_peer_saw(c, "window 8, k 4", &rep))
		return;
	if (!rl_expect(c, rep.nseen == 30, "expected 30 posts, got %u", rep.nseen))
		return;
	for (i = 0; i < 30; i++) {
		want = (i + 1) % 4 == 0 || i == 29;
		got = signaled(c, i);
		if (!rl_expect(c, FX_IMM_INDEX(rep.seen[i].imm) == i && got == want,
			       "window 8, k 4: chunk %u: expected %s, got %s (chunk %u): "
			       "--signal-every 4 asks for the 4th, 8th, ... chunk of the file, "
			       "counted from one, and the last (see docs/lab4.md#step-1)",
			       i, want ? "signaled" : "unsignaled", got ? "signaled" : "unsignaled",
			       FX_IMM_INDEX(rep.seen[i].imm)))
			return;
	}
}

RL_GRADED(pipeline_signals_every_kth_chunk_and_the_last, .step = 1, .points = 2,
	  .setup = signals_setup, .act = run_pipeline, .check = signals_check);

static void k_beyond_window_setup(struct rl_case *c)
{
	pipeline_setup(c, 20 * 4096 - fx_between(0, 4095), 4096, 2, 16);
}

static void k_beyond_window_check(struct rl_case *c)
{
	long long ret = rl_said_int(c, "ret"), completed = rl_said_int(c, "completed");
	struct fx_report rep;

	if (!fx_peer_report(c, 0, &rep) ||
	    !rl_expect(c, ret == 0,
		       "window 2, k 16: expected 0, got %lld (%s): with k larger than the "
		       "window, which write in flight asks for a completion? see "
		       "docs/lab4.md#step-1",
		       ret, strerror((int)-ret)) ||
	    !rl_expect(c, completed == 20, "expected 20 chunks completed, got %lld", completed))
		return;
	rl_expect(c, rep.nseen == 20, "expected 20 writes at the receiver, got %u", rep.nseen);
}

RL_GRADED(pipeline_finishes_when_k_is_larger_than_the_window, .step = 1, .points = 1,
	  .setup = k_beyond_window_setup, .act = run_pipeline, .check = k_beyond_window_check);

static void empty_setup(struct rl_case *c)
{
	pipeline_setup(c, 0, 4096, 8, 4);
}

static void empty_check(struct rl_case *c)
{
	long long ret = rl_said_int(c, "ret");
	struct fx_report rep;

	if (fx_peer_report(c, 0, &rep))
		rl_expect(c, ret == 0 && rep.nseen == 0,
			  "expected 0 and no post, got %lld and %u posts", ret, rep.nseen);
}

RL_GRADED(pipeline_of_an_empty_file_posts_nothing, .step = 1, .points = 1, .setup = empty_setup,
	  .act = run_pipeline, .check = empty_check);

static void bad_rkey_setup(struct rl_case *c)
{
	struct pipeline_in *in = c->in;

	in->bad_rkey = true;
	pipeline_setup(c, 8 * 4096, 4096, 4, 2);
}

/* A QP state's name, as rdma and the handouts spell it. */
static const char *qp_state_name(int state)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT", [IBV_QPS_RTR] = "RTR",
		[IBV_QPS_RTS] = "RTS",     [IBV_QPS_SQD] = "SQD",   [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	return state >= 0 && state <= IBV_QPS_ERR ? names[state] : "unknown";
}

/*
 * A write with a wrong rkey is refused by the receiver, whose QP goes to
 * the error state (a remote access error; its receives are flushed): the
 * test's peer says whether that happened, whatever lab4_pipeline()
 * returned and whatever it did to its own QP.
 */
static void bad_rkey_check(struct rl_case *c)
{
	long long ret = rl_said_int(c, "ret");
	struct fx_report rep;
	uint32_t i, landed = 0;

	if (!fx_peer_report(c, 0, &rep) ||
	    !rl_expect(c, ret == -EIO, "wrong rkey: expected -EIO, got %lld (%s)", ret,
		       strerror((int)-ret)))
		return;
	if (!rl_expect(c, rep.qp_state == IBV_QPS_ERR,
		       "wrong rkey: expected the write to reach the receiver, whose QP a remote "
		       "access error puts in ERR; its QP is in %s (was a write posted at all?)",
		       qp_state_name(rep.qp_state)))
		return;
	for (i = 0; i < rep.nseen && i < FX_MAX_SEEN; i++)
		landed += rep.seen[i].status == IBV_WC_SUCCESS;
	rl_expect(c, landed == 0, "wrong rkey: expected no write at the receiver, got %u", landed);
}

RL_GRADED(pipeline_returns_eio_for_a_failed_write_instead_of_hanging, .step = 1, .points = 1,
	  .setup = bad_rkey_setup, .act = run_pipeline, .check = bad_rkey_check);
