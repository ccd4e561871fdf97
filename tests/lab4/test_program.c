/*
 * test_program.c: the lab4 program as a whole, run by the check, each side
 * against a peer of the test's own (peer.c): lab4 send against a receiver
 * that hashes what landed in its buffer and answers RESULT as serve does,
 * lab4 serve against a sender that writes a file of its own and reads
 * serve's RESULT. Step 2: the contract lines, and "receiver bad" with exit
 * 1 when the announced hash differs; step 5: send with each wait. The
 * check makes each file and computes its SHA-256 itself; a line the
 * program prints counts only with what its peer saw.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

#define CHUNK 65536 /* --chunk 64K */

/* A run of the program, what its peer saw, and the SHA-256 of the file, computed here. */
struct side {
	struct fx_run run;
	struct fx_report peer;
	uint8_t sha256[32];
	char hex[65];
};

/*
 * lab4 send of a file of SIZE random bytes to a peer receiver, waiting as
 * WAIT says (NULL: its default) with EXTRA options (NULL: none), into S.
 * False when the peer itself failed (the test fails then).
 */
static bool send_to_peer(struct rl_case *c, uint64_t size, const char *wait, const char *extra,
			 struct side *s)
{
	struct fx_peer_in in = { .result = true };
	char port[16], path[64];
	const char *args[] = { "send",
			       "-p",
			       port,
			       "--timeout",
			       "30",
			       "--chunk",
			       "64K",
			       wait ? "--wait" : "-v",
			       wait ? wait : "-v",
			       extra ? extra : "-v",
			       "127.0.0.1",
			       path,
			       NULL };
	struct fx_proc p;
	int peer;

	fx_make_file(path, sizeof(path), size, s->sha256);
	lab4_sha256_hex(s->sha256, s->hex);
	peer = fx_peer_start(c, &in, FX_RC_RECEIVER);
	snprintf(port, sizeof(port), "%u", in.port);
	fx_spawn(args, &p);
	fx_reap(&p, 90000, &s->run);
	unlink(path);
	return fx_peer_report_of(c, peer, &s->peer, "send", &s->run);
}

/*
 * lab4 serve of a file of SIZE random bytes that a peer sender writes in
 * 64 KiB chunks, announced with its SHA-256 or, when FLIP, another, into S.
 */
static bool serve_from_peer(struct rl_case *c, uint64_t size, bool flip, struct side *s)
{
	struct fx_peer_in in = {
		.size = size,
		.chunk = CHUNK,
		.count = lab4_nchunks(size, CHUNK),
		.window = 16,
		.flip_hash = flip,
		.result = true,
	};
	char port[16];
	const char *args[] = { "serve", "-p", port, "--timeout", "30", "127.0.0.1", NULL };
	struct fx_proc p;
	int peer;

	in.connect = rl_test_free_port();
	snprintf(port, sizeof(port), "%u", in.connect);
	fx_spawn(args, &p);
	peer = fx_peer_start(c, &in, FX_RC_SENDER);
	fx_reap(&p, 60000, &s->run);
	if (!fx_peer_report_of(c, peer, &s->peer, "serve", &s->run))
		return false;
	/* The file is the peer's own: its SHA-256 comes in its report. */
	memcpy(s->sha256, s->peer.file_sha256, 32);
	lab4_sha256_hex(s->sha256, s->hex);
	return true;
}

/*
 * The peer receiver has the file: every chunk landed (it sent its RESULT
 * only then), and its buffer hashes to the file's SHA-256.
 */
static bool receiver_has_the_file(struct rl_case *c, uint64_t size, const char *how,
				  const struct side *s)
{
	unsigned long long n = size;

	if (!rl_expect(c, s->peer.result_sent,
		       "%llu bytes, %s: expected all %u chunks at the test's receiver, it got %u "
		       "writes; send exited %d:\n%s%s",
		       n, how, lab4_nchunks(size, CHUNK), s->peer.nseen, s->run.status, s->run.out,
		       s->run.err))
		return false;
	return rl_expect(c, memcmp(s->peer.sha256, s->sha256, 32) == 0,
			 "%llu bytes, %s: expected the test's receiver to find the file (SHA-256 "
			 "%s) in its buffer, it holds other bytes:\n%s%s",
			 n, how, s->hex, s->run.out, s->run.err);
}

/*
 * SEND got the file to the peer and printed the contract line for SIZE
 * bytes in 64 KiB chunks, receiver good, and exited 0.
 */
static bool sent_and_said_good(struct rl_case *c, uint64_t size, const char *how,
			       const struct side *s)
{
	const char *line = fx_last_line(s->run.out, "lab4: sent ");
	unsigned long long n;
	unsigned chunks;
	double h, t, cpu, total;
	char verdict[16];

	if (!receiver_has_the_file(c, size, how, s) ||
	    !rl_expect(c, s->run.status == 0,
		       "%llu bytes, %s: expected send to exit 0, got %d:\n%s%s",
		       (unsigned long long)size, how, s->run.status, s->run.out, s->run.err) ||
	    !rl_expect(c,
		       line && sscanf(line,
				      "lab4: sent %llu bytes in %u chunks: hash %lf s, transfer %lf "
				      "s, cpu %lf s, total %lf s, receiver %15s",
				      &n, &chunks, &h, &t, &cpu, &total, verdict) == 7,
		       "%s: expected the contract line, got:\n%s", how, s->run.out))
		return false;
	return rl_expect(
		c,
		n == size && chunks == lab4_nchunks(size, CHUNK) && !strcmp(verdict, "good") &&
			t <= total && cpu >= 0,
		"%llu bytes, %s: expected %llu bytes in %u chunks, receiver good, got:\n%s",
		(unsigned long long)size, how, (unsigned long long)size, lab4_nchunks(size, CHUNK),
		s->run.out);
}

/*
 * SERVE took every write of the peer sender and answered RESULT: the file's
 * SHA-256, computed here, and good unless the announcement was FLIPPED;
 * and it said so and exited 0 (1 when flipped).
 */
static bool served(struct rl_case *c, uint64_t size, bool flipped, const struct side *s)
{
	const char *how = flipped ? "announced with another SHA-256" : "announced right";
	const struct lab4_result *res = &s->peer.result;
	const char *line = fx_last_line(s->run.out, "lab4: received ");
	unsigned long long n = size;
	char hex[65];

	if (!rl_expect(c, s->peer.sent == 0 && s->peer.completed == lab4_nchunks(size, CHUNK),
		       "%llu bytes, %s: the test's sender wrote %u of %u chunks to serve (%s); "
		       "serve exited %d:\n%s%s",
		       n, how, s->peer.completed, lab4_nchunks(size, CHUNK),
		       strerror(-s->peer.sent), s->run.status, s->run.out, s->run.err) ||
	    !rl_expect(c, s->peer.got_result,
		       "%llu bytes, %s: expected serve to send RESULT after the last chunk, it sent "
		       "none; it exited %d:\n%s%s",
		       n, how, s->run.status, s->run.out, s->run.err))
		return false;
	lab4_sha256_hex(res->sha256, hex);
	if (!rl_expect(c,
		       res->received == size && memcmp(res->sha256, s->sha256, 32) == 0 &&
			       res->good == !flipped,
		       "%llu bytes, %s: expected serve's RESULT to say %s, %llu bytes, SHA-256 %s; "
		       "it says %s, %llu bytes, SHA-256 %s",
		       n, how, flipped ? "bad" : "good", n, s->hex, res->good ? "good" : "bad",
		       (unsigned long long)res->received, hex))
		return false;
	return rl_expect(c,
			 s->run.status == (flipped ? 1 : 0) && line &&
				 strstr(line, flipped ? ", BAD" : ", good"),
			 "%llu bytes, %s: expected serve to exit %d saying %s, got %d:\n%s%s", n,
			 how, flipped ? 1 : 0, flipped ? "BAD" : "good", s->run.status, s->run.out,
			 s->run.err);
}

static void sent_and_good(struct rl_case *c)
{
	/* Nothing, a few bytes, and a few MiB: sizes of this run's. */
	const uint64_t sizes[] = { 0, fx_between(1, 4096), (3 << 20) + fx_between(1, 65535) };
	struct side s;
	size_t i;

	/* The given busy wait: this step does not depend on step 5. */
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		if (!send_to_peer(c, sizes[i], "busy", NULL, &s) ||
		    !sent_and_said_good(c, sizes[i], "send --wait busy", &s) ||
		    !serve_from_peer(c, sizes[i], false, &s) || !served(c, sizes[i], false, &s))
			return;
	}
}

RL_GRADED(send_prints_the_contract_line_and_receiver_good, .step = 2, .points = 3, .needs = 1,
	  .check = sent_and_good);

static void says_bad(struct rl_case *c)
{
	uint64_t size = fx_between(50000, 150000);
	const char *line;
	struct side s;

	if (!send_to_peer(c, size, "busy", "--fault-bad-hash", &s) ||
	    !receiver_has_the_file(c, size, "send --fault-bad-hash", &s))
		return;
	/* Only the announcement was wrong: the bytes themselves arrived. */
	line = fx_last_line(s.run.out, "lab4: sent ");
	if (!rl_expect(c, s.run.status == 1 && line && strstr(line, "receiver bad"),
		       "expected exit 1 and \"receiver bad\", got %d:\n%s%s", s.run.status,
		       s.run.out, s.run.err))
		return;
	if (serve_from_peer(c, size, true, &s))
		served(c, size, true, &s);
}

RL_GRADED(send_says_receiver_bad_and_exits_1_when_the_hash_differs, .step = 2, .points = 1,
	  .needs = 1, .check = says_bad);

static void every_wait(struct rl_case *c)
{
	static const char *const waits[] = { "event", "adaptive", NULL };
	const uint64_t size = (3 << 20) + fx_between(1, 65535);
	char how[64];
	struct side s;
	size_t i;

	/* NULL: no --wait at all, the default (adaptive). */
	for (i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		snprintf(how, sizeof(how), "send %s%s", waits[i] ? "--wait " : "(the default wait)",
			 waits[i] ? waits[i] : "");
		if (!send_to_peer(c, size, waits[i], NULL, &s) ||
		    !sent_and_said_good(c, size, how, &s))
			return;
	}
}

RL_GRADED(send_delivers_the_file_with_every_wait_strategy, .step = 5, .points = 2, .needs = 2,
	  .check = every_wait);
