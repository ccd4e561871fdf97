/*
 * test_program.c: the lab4 program as a whole: serve and send, run as child
 * processes, print the contract lines, and say "receiver bad" with exit 1
 * when the announced hash differs (step 2); send with each wait (step 5).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

/*
 * Serve and send a file of SIZE random bytes, the sender waiting as WAIT says
 * (NULL: its default) with EXTRA send options (NULL: none); both runs into
 * SERVE, SEND, and the file's SHA-256, computed by the test, into HEX.
 */
static void transfer(uint64_t size, const char *wait, const char *extra, struct fx_run *serve,
		     struct fx_run *send, char hex[65])
{
	char port[16], path[64];
	const char *serve_args[] = { "serve", "--verify", "-p", port, "--timeout", "30", NULL };
	const char *send_args[] = { "send",
				    "-p",
				    port,
				    "--timeout",
				    "30",
				    "--chunk",
				    "64K",
				    wait ? "--wait" : "-v",
				    wait ? wait : "-v",
				    extra ? extra : "-v",
				    rl_test_addr(),
				    path,
				    NULL };
	uint8_t sha256[32];
	int pid;

	snprintf(port, sizeof(port), "%u", rl_test_free_port());
	fx_make_file(path, sizeof(path), size, sha256);
	lab4_sha256_hex(sha256, hex);
	pid = fx_spawn(serve_args, "serve");
	fx_reap(fx_spawn(send_args, "send"), "send", 90000, send);
	fx_reap(pid, "serve", 10000, serve);
	unlink(path);
}

/*
 * The SHA-256 on SERVE's "verified" line (at most 64 digits), or "": serve
 * --verify hashes its buffer in main.c, outside the lab's steps, so a step
 * that says "good" without the bytes having arrived cannot pass.
 */
static void served_hash(const struct fx_run *serve, char hex[65])
{
	static const char tag[] = "lab4: verified SHA-256 ";
	const char *at = strstr(serve->out, tag);

	snprintf(hex, 65, "%.64s", at ? at + strlen(tag) : "");
}

/*
 * SEND printed the contract line for SIZE bytes in 64 KiB chunks, receiver
 * good, and SERVE printed the SHA-256 the test computed (HEX), not only its
 * own verdict.
 */
static void says_sent_and_good(uint64_t size, const char *how, const char *hex,
			       const struct fx_run *serve, const struct fx_run *send)
{
	unsigned long long n;
	unsigned chunks;
	double h, t, c, s;
	char verdict[16], served[65];

	ck_assert_msg(send->status == 0, "%llu bytes, %s: expected send to exit 0, got %d:\n%s%s",
		      (unsigned long long)size, how, send->status, send->out, send->err);
	ck_assert_msg(
		sscanf(send->out,
		       "lab4: sent %llu bytes in %u chunks: hash %lf s, transfer %lf s, cpu %lf "
		       "s, total %lf s, receiver %15s",
		       &n, &chunks, &h, &t, &c, &s, verdict) == 7,
		"%s: expected the contract line, got:\n%s", how, send->out);
	ck_assert_msg(n == size && chunks == lab4_nchunks(size, 65536) &&
			      !strcmp(verdict, "good") && t <= s && c >= 0,
		      "%llu bytes, %s: expected %llu bytes in %u chunks, receiver good, got:\n%s",
		      (unsigned long long)size, how, (unsigned long long)size,
		      lab4_nchunks(size, 65536), send->out);
	ck_assert_msg(serve->status == 0 && strstr(serve->out, "good"),
		      "%llu bytes, %s: expected serve to exit 0 saying good, got %d:\n%s%s",
		      (unsigned long long)size, how, serve->status, serve->out, serve->err);
	served_hash(serve, served);
	ck_assert_msg(
		strcmp(served, hex) == 0,
		"%llu bytes, %s: expected serve --verify to find the file's SHA-256 %s in its "
		"buffer, got \"%s\":\n%s",
		(unsigned long long)size, how, hex, served, serve->out);
}

RL_TEST(send_prints_the_contract_line_and_receiver_good, .step = 2, .points = 3, .needs = 1)
{
	static const uint64_t sizes[] = { 0, 1, (3 << 20) + 5 };
	struct fx_run serve, send;
	char hex[65];
	size_t i;

	/* The given busy wait: this step does not depend on step 5. */
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		transfer(sizes[i], "busy", NULL, &serve, &send, hex);
		says_sent_and_good(sizes[i], "--wait busy", hex, &serve, &send);
	}
}
END_TEST

RL_TEST(send_says_receiver_bad_and_exits_1_when_the_hash_differs, .step = 2, .points = 1,
	.needs = 1)
{
	struct fx_run serve, send;
	char hex[65];

	transfer(100000, "busy", "--fault-bad-hash", &serve, &send, hex);
	ck_assert_msg(send.status == 1 && strstr(send.out, "receiver bad"),
		      "expected exit 1 and \"receiver bad\", got %d:\n%s%s", send.status, send.out,
		      send.err);
	ck_assert_msg(serve.status == 1, "expected serve to exit 1 on a bad hash, got %d",
		      serve.status);
}
END_TEST

RL_TEST(send_delivers_the_file_with_every_wait_strategy, .step = 5, .points = 2, .needs = 2)
{
	static const char *const waits[] = { "event", "adaptive", NULL };
	const uint64_t size = (3 << 20) + 5;
	struct fx_run serve, send;
	char hex[65];
	size_t i;

	/* NULL: no --wait at all, the default (adaptive). */
	for (i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		transfer(size, waits[i], NULL, &serve, &send, hex);
		says_sent_and_good(size, waits[i] ? waits[i] : "the default wait", hex, &serve,
				   &send);
	}
}
END_TEST
