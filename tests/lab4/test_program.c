/*
 * test_program.c: the lab4 program as a whole, run by the check: serve and
 * send print the contract lines, and say "receiver bad" with exit 1 when
 * the announced hash differs (step 2); send with each wait (step 5). The
 * lab's code runs in those two processes, locked down by their main.c; the
 * check made the file, computed its SHA-256, and compares it with the one
 * serve --verify finds in its buffer (main.c's code, not the lab's).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

/*
 * Serve and send a file of SIZE random bytes, the sender waiting as WAIT says
 * (NULL: its default) with EXTRA send options (NULL: none); both runs into
 * SERVE, SEND, and the file's SHA-256, computed here, into HEX.
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
 * The SHA-256 on SERVE's last "verified" line (at most 64 digits), or "":
 * serve --verify hashes its buffer in main.c, after the lab's steps, so a
 * step that says "good" without the bytes having arrived cannot pass, nor
 * one that prints a "verified" line of its own before it.
 */
static void served_hash(const struct fx_run *serve, char hex[65])
{
	static const char tag[] = "lab4: verified SHA-256 ";
	const char *at = fx_last_line(serve->out, tag);

	snprintf(hex, 65, "%.64s", at ? at + strlen(tag) : "");
}

/* Serve found the file's SHA-256 (HEX) in its buffer: the bytes arrived. */
static bool served_the_file(struct rl_case *c, uint64_t size, const char *how, const char *hex,
			    const struct fx_run *serve)
{
	char served[65];

	served_hash(serve, served);
	return rl_expect(c, strcmp(served, hex) == 0,
			 "%llu bytes, %s: expected serve --verify to find the file's SHA-256 %s "
			 "in its buffer, got \"%s\":\n%s",
			 (unsigned long long)size, how, hex, served, serve->out);
}

/*
 * SEND printed the contract line for SIZE bytes in 64 KiB chunks, receiver
 * good, and SERVE printed the SHA-256 the check computed (HEX), not only
 * its own verdict.
 */
static bool says_sent_and_good(struct rl_case *c, uint64_t size, const char *how, const char *hex,
			       const struct fx_run *serve, const struct fx_run *send)
{
	const char *line = fx_last_line(send->out, "lab4: sent ");
	unsigned long long n;
	unsigned chunks;
	double h, t, cpu, s;
	char verdict[16];

	if (!rl_expect(c, send->status == 0,
		       "%llu bytes, %s: expected send to exit 0, got %d:\n%s%s",
		       (unsigned long long)size, how, send->status, send->out, send->err) ||
	    !rl_expect(c,
		       line && sscanf(line,
				      "lab4: sent %llu bytes in %u chunks: hash %lf s, transfer %lf "
				      "s, cpu %lf s, total %lf s, receiver %15s",
				      &n, &chunks, &h, &t, &cpu, &s, verdict) == 7,
		       "%s: expected the contract line, got:\n%s", how, send->out) ||
	    !rl_expect(c,
		       n == size && chunks == lab4_nchunks(size, 65536) &&
			       !strcmp(verdict, "good") && t <= s && cpu >= 0,
		       "%llu bytes, %s: expected %llu bytes in %u chunks, receiver good, got:\n%s",
		       (unsigned long long)size, how, (unsigned long long)size,
		       lab4_nchunks(size, 65536), send->out))
		return false;
	line = fx_last_line(serve->out, "lab4: received ");
	if (!rl_expect(c, serve->status == 0 && line && strstr(line, ", good"),
		       "%llu bytes, %s: expected serve to exit 0 saying good, got %d:\n%s%s",
		       (unsigned long long)size, how, serve->status, serve->out, serve->err))
		return false;
	return served_the_file(c, size, how, hex, serve);
}

static void sent_and_good(struct rl_case *c)
{
	/* Nothing, a few bytes, and a few MiB: sizes of this run's. */
	const uint64_t sizes[] = { 0, fx_between(1, 4096), (3 << 20) + fx_between(1, 65535) };
	struct fx_run serve, send;
	char hex[65];
	size_t i;

	/* The given busy wait: this step does not depend on step 5. */
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		transfer(sizes[i], "busy", NULL, &serve, &send, hex);
		if (!says_sent_and_good(c, sizes[i], "--wait busy", hex, &serve, &send))
			return;
	}
}

RL_GRADED(send_prints_the_contract_line_and_receiver_good, .step = 2, .points = 3, .needs = 1,
	  .check = sent_and_good);

static void says_bad(struct rl_case *c)
{
	uint64_t size = fx_between(50000, 150000);
	struct fx_run serve, send;
	const char *line;
	char hex[65];

	transfer(size, "busy", "--fault-bad-hash", &serve, &send, hex);
	line = fx_last_line(send.out, "lab4: sent ");
	if (!rl_expect(c, send.status == 1 && line && strstr(line, "receiver bad"),
		       "expected exit 1 and \"receiver bad\", got %d:\n%s%s", send.status, send.out,
		       send.err) ||
	    !rl_expect(c, serve.status == 1, "expected serve to exit 1 on a bad hash, got %d",
		       serve.status))
		return;
	/* Only the announcement was wrong: the bytes themselves arrived. */
	served_the_file(c, size, "--fault-bad-hash", hex, &serve);
}

RL_GRADED(send_says_receiver_bad_and_exits_1_when_the_hash_differs, .step = 2, .points = 1,
	  .needs = 1, .check = says_bad);

static void every_wait(struct rl_case *c)
{
	static const char *const waits[] = { "event", "adaptive", NULL };
	const uint64_t size = (3 << 20) + fx_between(1, 65535);
	struct fx_run serve, send;
	char hex[65];
	size_t i;

	/* NULL: no --wait at all, the default (adaptive). */
	for (i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		transfer(size, waits[i], NULL, &serve, &send, hex);
		if (!says_sent_and_good(c, size, waits[i] ? waits[i] : "the default wait", hex,
					&serve, &send))
			return;
	}
}

RL_GRADED(send_delivers_the_file_with_every_wait_strategy, .step = 5, .points = 2, .needs = 2,
	  .check = every_wait);
