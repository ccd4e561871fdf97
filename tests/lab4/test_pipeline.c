/*
 * test_pipeline.c: Lab 4 step 1: a window of RDMA writes in flight, every
 * k-th signaled. The act runs the lab's pipeline with the test's poster,
 * whose immediate data carries what the step asked of each post (signaled
 * or not, and how many writes were outstanding): the peer, the receiver in
 * a process of the test's own, sees every write, and the check judges what
 * it saw.
 */
#include <string.h>

#include "fixture.h"

/* The inputs: a file of random bytes to the peer, and how to pipeline it. */
struct pipeline_in {
	struct fx_peer_in peer;
	uint32_t window, k;
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

/* The act: the lab's pipeline, and what it returned and counted. */
static void run_pipeline(struct rl_case *c)
{
	const struct pipeline_in *in = c->in;
	struct fx_send x;
	int ret;

	fx_send_open(&x, &in->peer);
	x.s.window = in->window;
	x.s.signal_every = in->k;
	if (in->bad_rkey)
		x.s.rkey ^= 0x80;
	ret = lab4_pipeline(&x.s);
	rl_say_int("ret", ret);
	rl_say_int("posted", x.s.posted);
	rl_say_int("completed", x.s.completed);
	rl_say_int("qpn", x.s.qp->qp_num);
	fx_send_hangup(&x);
	if (in->bad_rkey)
		rl_hold(); /* the check asks the kernel about the sender's QP */
	fx_send_close(&x);
}

static uint32_t nchunks(const struct pipeline_in *in)
{
	return lab4_nchunks(in->peer.size, in->peer.chunk);
}

/*
 * The peer's report into REP (first: the peer has ended then, whatever the
 * check finds), and lab4_pipeline() returned 0.
 */
static bool returned_0_and_peer_saw(struct rl_case *c, const char *what, struct fx_report *rep)
{
	long long ret = rl_said_int(c, "ret");

	return fx_peer_report(c, 0, rep) &&
	       rl_expect(c, ret == 0, "%s: expected lab4_pipeline to return 0, got %lld (%s)", what,
			 ret, strerror((int)-ret));
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
		       "expected posted and completed %u, got %lld and %lld", n,
		       rl_said_int(c, "posted"), rl_said_int(c, "completed")))
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
	pipeline_setup(c, 40 * 4096 - fx_between(0, 4095), 4096, 3, 1);
}

static void window_check(struct rl_case *c)
{
	struct fx_report rep;
	uint32_t i, worst = 0;

	if (!returned_0_and_peer_saw(c, "window 3, k 1", &rep))
		return;
	if (!rl_expect(c, rep.nseen == 40, "expected 40 posts, got %u", rep.nseen))
		return;
	for (i = 0; i < rep.nseen; i++)
		if (FX_IMM_OUT(rep.seen[i].imm) > worst)
			worst = FX_IMM_OUT(rep.seen[i].imm);
	rl_expect(c, worst < 3,
		  "window 3: expected at most 2 writes outstanding before a post, got %u", worst);
}

RL_GRADED(pipeline_never_has_more_than_the_window_outstanding, .step = 1, .points = 2,
	  .setup = window_setup, .act = run_pipeline, .check = window_check);

static void signals_setup(struct rl_case *c)
{
	pipeline_setup(c, 30 * 4096 - fx_between(1, 4095), 4096, 8, 4);
}

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
		got = (rep.seen[i].imm & FX_IMM_SIGNALED) != 0;
		if (!rl_expect(c, FX_IMM_INDEX(rep.seen[i].imm) == i && got == want,
			       "window 8, k 4: chunk %u: expected %s, got %s (chunk %u)", i,
			       want ? "signaled" : "unsignaled", got ? "signaled" : "unsignaled",
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
		       "window 2, k 16: expected 0 (signal the write that fills the window), "
		       "got %lld (%s)",
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

/*
 * A failed write leaves the sender's QP in the error state: the kernel says
 * whether a write was posted at all, whatever lab4_pipeline() returned.
 */
static void bad_rkey_check(struct rl_case *c)
{
	long long ret = rl_said_int(c, "ret");
	struct fx_report rep;
	uint32_t i, landed = 0;
	char state[64];

	if (!fx_peer_report(c, 0, &rep) ||
	    !rl_expect(c, ret == -EIO, "wrong rkey: expected -EIO, got %lld (%s)", ret,
		       strerror((int)-ret)))
		return;
	fx_res_qp(c, (uint32_t)rl_said_int(c, "qpn"), "state", state, sizeof(state));
	if (!rl_expect(c, strcmp(state, "ERR") == 0,
		       "wrong rkey: expected the failed write to leave the sender's QP in ERR, the "
		       "kernel says %s (was a write posted at all?)",
		       state[0] ? state : "there is no such QP"))
		return;
	for (i = 0; i < rep.nseen && i < FX_MAX_SEEN; i++)
		landed += rep.seen[i].status == IBV_WC_SUCCESS;
	rl_expect(c, landed == 0, "wrong rkey: expected no write at the receiver, got %u", landed);
}

RL_GRADED(pipeline_returns_eio_for_a_failed_write_instead_of_hanging, .step = 1, .points = 1,
	  .setup = bad_rkey_setup, .act = run_pipeline, .check = bad_rkey_check);
