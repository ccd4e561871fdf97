/*
 * test_xverbs.c: Lab 4 step 2: ibv_qp_ex posts, ibv_cq_ex polls, hashing
 * as chunks arrive. The lab's posts go to a peer receiver, which reports
 * every write it took and the bytes in its buffer; the lab's receiver takes
 * the writes of a peer sender, which announces the file's SHA-256 as lab4
 * send does. The check computes what should have arrived from the file's
 * seed.
 */
#include <byteswap.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

/* --- step 2a: lab4_post_chunk() --------------------------------------------- */

/* The inputs: a file to the peer, and the chunks to post (A, and A + 1 for the second test). */
struct post_in {
	struct fx_peer_in peer;
	uint32_t a;
};

/* The SHA-256 of a buffer of SIZE zeros but for chunk INDEX of the file IN names. */
static void one_chunk_sha256(const struct fx_peer_in *in, uint32_t index, uint8_t sha256[32])
{
	uint8_t *file = malloc(in->size + 1), *buf = calloc(1, in->size + 1);
	uint64_t off = (uint64_t)index * in->chunk;

	ck_assert_msg(file && buf, "expected memory for the expected buffer, got none");
	fx_fill(file, in->size, in->seed);
	memcpy(buf + off, file + off, lab4_chunk_len(in->size, in->chunk, index));
	EVP_Digest(buf, in->size, sha256, NULL, EVP_sha256(), NULL);
	free(file);
	free(buf);
}

static void post_last_chunk_setup(struct rl_case *c)
{
	struct post_in *in = c->in;
	uint32_t n = fx_between(3, 6);

	/* The last chunk, of a random length: its offset and its length both count. */
	in->peer.seed = fx_random();
	in->peer.chunk = 4096;
	in->peer.size = (uint64_t)(n - 1) * 4096 + fx_between(1, 4095);
	in->a = n - 1;
	fx_peer_start(c, &in->peer, FX_RC_RECEIVER);
}

static void post_last_chunk(struct rl_case *c)
{
	const struct post_in *in = c->in;
	struct fx_send x;
	struct ibv_wc wc;
	int ret;

	fx_send_open(&x, &in->peer, 0);
	ret = lab4_post_chunk(&x.s, in->a, true);
	rl_say_int("ret", ret);
	if (ret == 0 && fx_poll_one(x.s.cq, &wc, FX_TIMEOUT_MS)) {
		rl_say_int("wr_id", (long long)wc.wr_id);
		rl_say_int("status", wc.status);
	}
	fx_send_close(&x);
}

/* Why an immediate GOT where WANT was expected, when its bytes are WANT's reversed. */
static const char *imm_hint(uint32_t got, uint32_t want)
{
	return got != want && got == bswap_32(want) ?
		       ": the immediate is big-endian on the wire and the verbs leave its "
		       "bytes as they are, so one end converted and the other did not (see "
		       "docs/lab4.md#step-2)" :
		       "";
}

static void post_last_chunk_check(struct rl_case *c)
{
	const struct post_in *in = c->in;
	uint32_t len = lab4_chunk_len(in->peer.size, in->peer.chunk, in->a);
	long long ret = rl_said_int(c, "ret");
	const struct fx_seen *s;
	struct fx_report rep;
	uint8_t want[32];

	if (!fx_peer_report(c, 0, &rep) ||
	    !rl_expect(c, ret == 0, "expected lab4_post_chunk to return 0, got %lld (%s)", ret,
		       strerror((int)-ret)))
		return;
	if (!rl_expect(c, rl_said(c, "wr_id"), "expected a send completion within %d ms, got none",
		       FX_TIMEOUT_MS))
		return;
	if (!rl_expect(c,
		       rl_said_int(c, "status") == IBV_WC_SUCCESS &&
			       rl_said_int(c, "wr_id") == in->a,
		       "expected a good send completion with wr_id %u, got wr_id %lld (%s)", in->a,
		       rl_said_int(c, "wr_id"),
		       ibv_wc_status_str((enum ibv_wc_status)rl_said_int(c, "status"))))
		return;
	s = &rep.seen[0];
	if (!rl_expect(c,
		       rep.nseen == 1 && s->status == IBV_WC_SUCCESS &&
			       s->opcode == IBV_WC_RECV_RDMA_WITH_IMM && s->imm == in->a &&
			       s->byte_len == len,
		       "expected one write with immediate %u of %u bytes, got %u writes, the first "
		       "opcode %d imm %u, %u bytes (%s)%s",
		       in->a, len, rep.nseen, s->opcode, s->imm, s->byte_len,
		       ibv_wc_status_str(s->status), imm_hint(s->imm, in->a)))
		return;
	one_chunk_sha256(&in->peer, in->a, want);
	rl_expect(c, memcmp(rep.sha256, want, 32) == 0,
		  "expected the last chunk's %u bytes at offset %u of the peer's buffer, they "
		  "differ: which bytes of the file, and where they go, see docs/lab4.md#step-2",
		  len, in->a * in->peer.chunk);
}

RL_GRADED(post_chunk_writes_its_bytes_with_the_index_as_immediate_data, .step = 2, .points = 3,
	  .setup = post_last_chunk_setup, .act = post_last_chunk, .check = post_last_chunk_check);

static void unsignaled_setup(struct rl_case *c)
{
	struct post_in *in = c->in;

	in->peer.seed = fx_random();
	in->peer.chunk = 4096;
	in->peer.size = 4 * 4096;
	in->a = fx_between(0, 2);
	fx_peer_start(c, &in->peer, FX_RC_RECEIVER);
}

/* Chunk A unsignaled, then A + 1 signaled: the completions that come. */
static void post_unsignaled(struct rl_case *c)
{
	const struct post_in *in = c->in;
	struct fx_send x;
	struct ibv_wc wc;
	int ret0, ret1;

	fx_send_open(&x, &in->peer, 0);
	ret0 = lab4_post_chunk(&x.s, in->a, false);
	rl_say_int("ret0", ret0);
	ret1 = ret0 ? 0 : lab4_post_chunk(&x.s, in->a + 1, true);
	rl_say_int("ret1", ret1);
	if (ret0 == 0 && ret1 == 0 && fx_poll_one(x.s.cq, &wc, FX_TIMEOUT_MS)) {
		rl_say_int("wr_id", (long long)wc.wr_id);
		usleep(200000);
		rl_say_int("more", fx_poll_one(x.s.cq, &wc, 0));
		rl_say_int("more_wr_id", (long long)wc.wr_id);
	}
	fx_send_close(&x);
}

static void unsignaled_check(struct rl_case *c)
{
	const struct post_in *in = c->in;
	long long ret0 = rl_said_int(c, "ret0"), ret1 = rl_said_int(c, "ret1");
	struct fx_report rep;

	if (!fx_peer_report(c, 0, &rep) ||
	    !rl_expect(c, ret0 == 0, "chunk %u unsignaled: expected 0, got %lld (%s)", in->a, ret0,
		       strerror((int)-ret0)) ||
	    !rl_expect(c, ret1 == 0, "chunk %u signaled: expected 0, got %lld (%s)", in->a + 1,
		       ret1, strerror((int)-ret1)) ||
	    !rl_expect(c, rl_said(c, "wr_id"), "expected a send completion within %d ms, got none",
		       FX_TIMEOUT_MS))
		return;
	if (!rl_expect(c, rl_said_int(c, "wr_id") == in->a + 1,
		       "expected the only completion to be chunk %u's, got wr_id %lld", in->a + 1,
		       rl_said_int(c, "wr_id")) ||
	    !rl_expect(c, rl_said_int(c, "more") == 0,
		       "expected no completion for the unsignaled chunk %u, got wr_id %lld", in->a,
		       rl_said_int(c, "more_wr_id")))
		return;
	rl_expect(c, rep.nseen == 2 && rep.seen[0].imm == in->a && rep.seen[1].imm == in->a + 1,
		  "expected chunks %u and %u at the receiver, got %u writes (imm %u, %u)", in->a,
		  in->a + 1, rep.nseen, rep.seen[0].imm, rep.seen[1].imm);
}

RL_GRADED(post_chunk_unsignaled_gives_no_completion_of_its_own, .step = 2, .points = 1,
	  .setup = unsignaled_setup, .act = post_unsignaled, .check = unsignaled_check);

/* --- step 2b: lab4_poll_arrivals() ------------------------------------------ */

#define MAX_ARRIVALS 8

static void poll_all_setup(struct rl_case *c)
{
	struct fx_peer_in *in = c->in;
	uint32_t n = fx_between(3, 7);

	in->chunk = 4096;
	in->size = (uint64_t)(n - 1) * 4096 + fx_between(1, 4095);
	in->first = 0;
	in->count = n;
	in->window = 16;
	fx_peer_start(c, in, FX_RC_SENDER);
}

/* The arrivals of the peer's writes, taken with the lab's code until all came. */
static void poll_all(struct rl_case *c)
{
	const struct fx_peer_in *in = c->in;
	struct lab4_arrival arr[MAX_ARRIVALS];
	uint32_t index[MAX_ARRIVALS], len[MAX_ARRIVALS];
	int64_t deadline = lab4_now_ms() + FX_TIMEOUT_MS;
	struct fx_recv x;
	int n = 0, ret = 0, i;

	fx_recv_open(&x, in);
	while (n < (int)in->count && lab4_now_ms() < deadline) {
		ret = lab4_poll_arrivals(&x.r, arr + n, MAX_ARRIVALS - n);
		if (ret < 0)
			break;
		n += ret;
	}
	for (i = 0; i < n; i++) {
		index[i] = arr[i].index;
		len[i] = arr[i].len;
	}
	rl_say_int("ret", ret < 0 ? ret : 0);
	rl_say_int("n", n);
	rl_say_bytes("index", index, (size_t)n * sizeof(index[0]));
	rl_say_bytes("len", len, (size_t)n * sizeof(len[0]));
	fx_recv_close(&x);
}

static void poll_all_check(struct rl_case *c)
{
	const struct fx_peer_in *in = c->in;
	long long ret = rl_said_int(c, "ret"), n = rl_said_int(c, "n");
	const uint32_t *index, *len;
	struct fx_report rep;
	size_t index_size, len_size;
	uint32_t i, want;

	if (!fx_peer_report(c, 0, &rep) ||
	    !rl_expect(c, ret >= 0, "expected a count, got %lld (%s)", ret, strerror((int)-ret)) ||
	    !rl_expect(c, n == in->count, "expected %u arrivals, got %lld", in->count, n))
		return;
	index = rl_said_bytes(c, "index", &index_size);
	len = rl_said_bytes(c, "len", &len_size);
	/* What the act said is read only as far as it goes: N was said apart from the arrays. */
	if (!rl_expect(c,
		       index_size == in->count * sizeof(*index) &&
			       len_size == in->count * sizeof(*len),
		       "expected the act to say %u indexes and lengths, it said %zu and %zu bytes",
		       in->count, index_size, len_size))
		return;
	for (i = 0; i < in->count; i++) {
		want = lab4_chunk_len(in->size, in->chunk, i);
		if (!rl_expect(c, index[i] == i && len[i] == want,
			       "arrival %u: expected chunk %u of %u bytes, got chunk %u of %u%s", i,
			       i, want, index[i], len[i], imm_hint(index[i], i)))
			return;
	}
	rl_expect(c, rep.sent == 0 && rep.completed == in->count,
		  "the test's sender wrote %u of %u chunks: %s", rep.completed, in->count,
		  strerror(-rep.sent));
}

RL_GRADED(poll_arrivals_reads_index_and_length_from_the_extended_cq, .step = 2, .points = 3,
	  .setup = poll_all_setup, .act = poll_all, .check = poll_all_check);

static void poll_nothing_setup(struct rl_case *c)
{
	struct fx_peer_in *in = c->in;

	/* One chunk, written only once the act has polled and says go. */
	in->chunk = 4096;
	in->size = 4 * 4096 - fx_between(1, 4095);
	in->first = fx_between(0, 3);
	in->count = 1;
	in->window = 1;
	in->wait_go = true;
	fx_peer_start(c, in, FX_RC_SENDER);
}

/*
 * Nothing was written yet: the lab's poll returns what? Then the peer
 * writes one chunk: that one must come, so a poll that always says 0 fails.
 */
static void poll_nothing(struct rl_case *c)
{
	const struct fx_peer_in *in = c->in;
	int64_t deadline = lab4_now_ms() + FX_TIMEOUT_MS;
	struct lab4_arrival arr[4] = { 0 };
	struct fx_recv x;
	int ret;

	fx_recv_open(&x, in);
	ret = lab4_poll_arrivals(&x.r, arr, 4);
	rl_say_int("first", ret);
	fx_recv_go(&x);
	do
		ret = lab4_poll_arrivals(&x.r, arr, 4);
	while (ret == 0 && lab4_now_ms() < deadline);
	rl_say_int("then", ret);
	rl_say_int("index", arr[0].index);
	rl_say_int("len", arr[0].len);
	fx_recv_close(&x);
}

static void poll_nothing_check(struct rl_case *c)
{
	const struct fx_peer_in *in = c->in;
	uint32_t len = lab4_chunk_len(in->size, in->chunk, in->first);
	long long first = rl_said_int(c, "first"), then = rl_said_int(c, "then");
	struct fx_report rep;

	if (!fx_peer_report(c, 0, &rep) ||
	    !rl_expect(c, first == 0, "expected 0 arrivals, got %lld", first))
		return;
	rl_expect(c,
		  then == 1 && rl_said_int(c, "index") == in->first && rl_said_int(c, "len") == len,
		  "then chunk %u of %u bytes was written: expected it as the one arrival, got %lld "
		  "(chunk %lld of %lld bytes)",
		  in->first, len, then, rl_said_int(c, "index"), rl_said_int(c, "len"));
}

RL_GRADED(poll_arrivals_returns_zero_when_nothing_arrived, .step = 2, .points = 1,
	  .setup = poll_nothing_setup, .act = poll_nothing, .check = poll_nothing_check);

/* --- step 2c: lab4_receive_file() ------------------------------------------- */

/*
 * The inputs: up to two files, each from its own peer sender (window 16,
 * every chunk), each announced with its SHA-256 or, when FLIP, another.
 */
struct receive_in {
	struct fx_peer_in peer[2];
	int runs;
};

static void receive_setup(struct rl_case *c, int run, uint64_t size, uint32_t chunk, bool flip)
{
	struct receive_in *in = c->in;
	struct fx_peer_in *p = &in->peer[run];

	p->size = size;
	p->chunk = chunk;
	p->first = 0;
	p->count = lab4_nchunks(size, chunk);
	p->window = 16;
	p->flip_hash = flip;
	in->runs = run + 1;
	fx_peer_start(c, p, FX_RC_SENDER);
}

/* The act: each file received with the lab's code; what it returned and found. */
static void receive_with_lab_code(struct rl_case *c)
{
	const struct receive_in *in = c->in;
	struct fx_recv x;
	char name[32];
	int run, ret;

	for (run = 0; run < in->runs; run++) {
		fx_recv_open(&x, &in->peer[run]);
		ck_assert_msg(x.r.nchunks <= 4096 || x.r.nchunks > x.r.recv_depth,
			      "fixture: expected more chunks (%u) than receives posted (%u)",
			      x.r.nchunks, x.r.recv_depth);
		ret = lab4_receive_file(&x.r);
		snprintf(name, sizeof(name), "ret%d", run);
		rl_say_int(name, ret);
		snprintf(name, sizeof(name), "arrived%d", run);
		rl_say_int(name, x.r.arrived);
		snprintf(name, sizeof(name), "sha256_%d", run);
		rl_say_bytes(name, x.r.sha256, sizeof(x.r.sha256));
		snprintf(name, sizeof(name), "good%d", run);
		rl_say_int(name, x.r.good);
		fx_recv_close(&x);
	}
}

/* Why lab4_receive_file() returned RET, as far as the test's sender REP can tell. */
static const char *receive_hint(long long ret, const struct fx_report *rep)
{
	if (ret == -EIO)
		return ": it read a completion that was failed or not a write with immediate "
		       "(then the test's sender's writes fail too): how a poll session reads the "
		       "CQ, see docs/lab4.md#step-2";
	if (rep->sent)
		return ", and the test's sender's writes failed: each write with immediate takes a "
		       "posted receive, and one that finds none fails (see docs/lab4.md#step-2)";
	return "";
}

/*
 * Run RUN received the file whole, hashed it, and judged it as its
 * announcement says; REP is its peer's report.
 */
static bool received(struct rl_case *c, int run, const struct fx_report *rep)
{
	const struct fx_peer_in *p = &((const struct receive_in *)c->in)->peer[run];
	unsigned long long size = p->size;
	uint32_t n = p->count;
	const uint8_t *sha256;
	uint8_t want[32], flipped[32];
	long long ret, arrived;
	bool good;
	size_t len;
	char name[32];

	snprintf(name, sizeof(name), "ret%d", run);
	ret = rl_said_int(c, name);
	snprintf(name, sizeof(name), "arrived%d", run);
	arrived = rl_said_int(c, name);
	snprintf(name, sizeof(name), "sha256_%d", run);
	sha256 = rl_said_bytes(c, name, &len);
	snprintf(name, sizeof(name), "good%d", run);
	good = rl_said_int(c, name) != 0;
	if (!rl_expect(c, ret == 0,
		       "%llu bytes: expected lab4_receive_file to return 0, got %lld (%s)%s", size,
		       ret, strerror((int)-ret), receive_hint(ret, rep)) ||
	    !rl_expect(c, rep->sent == 0, "%llu bytes: the test's sender failed (%s)", size,
		       strerror(-rep->sent)) ||
	    !rl_expect(c, arrived == n, "expected %u chunks arrived, got %lld", n, arrived))
		return false;
	memcpy(want, rep->file_sha256, 32);
	memcpy(flipped, want, 32);
	flipped[0] ^= 0xff;
	if (!rl_expect(c, len == 32 && memcmp(sha256, want, 32) == 0,
		       "%llu bytes: expected r->sha256 to be the SHA-256 of the bytes sent%s", size,
		       len == 32 && p->flip_hash && memcmp(sha256, flipped, 32) == 0 ?
			       ", got the one announced (r->announced): hash the chunks" :
			       ""))
		return false;
	return rl_expect(c, good == !p->flip_hash, "expected good %s, got %s",
			 p->flip_hash ? "false" : "true", good ? "true" : "false");
}

static void receive_all_runs_check(struct rl_case *c)
{
	const struct receive_in *in = c->in;
	struct fx_report rep[2];
	int run;

	for (run = 0; run < in->runs; run++)
		if (!fx_peer_report(c, run, &rep[run]))
			return;
	for (run = 0; run < in->runs && received(c, run, &rep[run]); run++)
		;
}

/*
 * One byte, then about 300 KB in 64 KiB chunks announced with a SHA-256
 * that is not theirs: r->sha256 must be the hash of what arrived, not a
 * copy of what was announced.
 */
static void hashes_setup(struct rl_case *c)
{
	receive_setup(c, 0, 1, 4096, false);
	receive_setup(c, 1, 300001 - fx_between(0, 50000), 65536, true);
}

RL_GRADED(receive_file_hashes_every_chunk_as_it_arrives, .step = 2, .points = 3,
	  .setup = hashes_setup, .act = receive_with_lab_code, .check = receive_all_runs_check);

static void reposts_setup(struct rl_case *c)
{
	/* 5000 chunks of 64 bytes; the receiver posts min(LAB4_RECV_DEPTH, max_qp_wr) at first. */
	receive_setup(c, 0, 5000 * 64 - fx_between(1, 63), 64, false);
}

RL_GRADED(receive_file_posts_receives_again_for_more_chunks_than_the_queue_holds, .step = 2,
	  .points = 2, .setup = reposts_setup, .act = receive_with_lab_code,
	  .check = receive_all_runs_check);

static void not_good_setup(struct rl_case *c)
{
	receive_setup(c, 0, 100000 - fx_between(0, 20000), 4096, true);
}

RL_GRADED(receive_file_is_not_good_when_the_announced_hash_differs, .step = 2, .points = 1,
	  .setup = not_good_setup, .act = receive_with_lab_code, .check = receive_all_runs_check);

/* An empty file announced right, then one announced wrong: the hash of nothing both times. */
static void empty_setup(struct rl_case *c)
{
	receive_setup(c, 0, 0, 4096, false);
	receive_setup(c, 1, 0, 4096, true);
}

RL_GRADED(receive_file_of_an_empty_file_is_the_hash_of_nothing, .step = 2, .points = 1,
	  .setup = empty_setup, .act = receive_with_lab_code, .check = receive_all_runs_check);

static void out_of_order_setup(struct rl_case *c)
{
	struct fx_peer_in *in = c->in;

	/* Chunk 1 of 3, first and alone, a random while after the act says go. */
	in->chunk = 4096;
	in->size = 3 * 4096 - fx_between(0, 4095);
	in->first = 1;
	in->count = 1;
	in->window = 1;
	in->wait_go = true;
	in->delay_ms = (int)fx_between(250, 600);
	fx_peer_start(c, in, FX_RC_SENDER);
}

static void receive_out_of_order(struct rl_case *c)
{
	struct fx_recv x;
	int64_t t0;
	int ret;

	fx_recv_open(&x, c->in);
	t0 = lab4_now_ms();
	fx_recv_go(&x);
	ret = lab4_receive_file(&x.r);
	rl_say_int("ms", lab4_now_ms() - t0);
	rl_say_int("ret", ret);
	fx_recv_close(&x);
}

/* -EPROTO, and not before chunk 1 was even written: a refusal on sight, not a guess. */
static void out_of_order_check(struct rl_case *c)
{
	const struct fx_peer_in *in = c->in;
	long long ret = rl_said_int(c, "ret"), ms = rl_said_int(c, "ms");
	struct fx_report rep;

	if (!fx_peer_report(c, 0, &rep) ||
	    !rl_expect(c, ret == -EPROTO, "chunk 1 first: expected -EPROTO, got %lld (%s)", ret,
		       strerror((int)-ret)))
		return;
	rl_expect(c, ms >= in->delay_ms - 20,
		  "chunk 1 first, %d ms after the call: expected -EPROTO once it arrived, got it "
		  "after %lld ms, before it was written",
		  in->delay_ms, ms);
}

RL_GRADED(receive_file_refuses_a_chunk_out_of_order, .step = 2, .points = 1,
	  .setup = out_of_order_setup, .act = receive_out_of_order, .check = out_of_order_check);
