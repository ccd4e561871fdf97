/* e2e.c: Lab 3 end to end: the lab3 program against the test's reference receiver (e2e.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "../harness.h"
#include "e2e.h"
#include "reference.h"

#define E2E_MAX_WORDS 16
#define E2E_LINE_MS 1000 /* for the receiver to log a connection that ended */

/* The test's receiver: one the grader runs (pid 0, dir ours for the sender's output), or ours. */
struct e2e_receiver {
	struct rf_receiver rf;
	bool ours;
};

uint64_t e2e_random(uint64_t lo, uint64_t span)
{
	uint64_t r;

	ck_assert_msg(getrandom(&r, sizeof(r), 0) == sizeof(r), "getrandom: %s", strerror(errno));
	return lo + (span ? r % span : 0);
}

/* TEST's line of the grader's table at PATH: "TEST\tPORT\tRESULTS"; fills RF's port and results. */
static bool e2e_from_table(const char *path, const char *test, struct rf_receiver *rf)
{
	FILE *f = fopen(path, "r");
	char line[512], *name, *port, *results, *save;
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		name = strtok_r(line, "\t\n", &save);
		port = strtok_r(NULL, "\t\n", &save);
		results = strtok_r(NULL, "\t\n", &save);
		if (!name || !port || !results || strcmp(name, test) != 0)
			continue;
		rf->port = (uint16_t)atoi(port);
		snprintf(rf->results_path, sizeof(rf->results_path), "%s", results);
		found = rf->port != 0;
	}
	fclose(f);
	return found;
}

/* Split OPTS into words in BUF, pointed to by WORDS (NULL-terminated). */
static void e2e_words(const char *opts, char *buf, size_t size, const char **words)
{
	int n = 0;
	char *w, *save;

	snprintf(buf, size, "%s", opts);
	for (w = strtok_r(buf, " ", &save); w && n < E2E_MAX_WORDS; w = strtok_r(NULL, " ", &save))
		words[n++] = w;
	words[n] = NULL;
}

/* Start (or find) the receiver the running test declares. */
static void e2e_receiver_start(struct e2e_receiver *r)
{
	const struct rl_graded *g = rl_graded_test();
	const char *table = getenv("RDMALAB_RECEIVERS");
	const char *words[E2E_MAX_WORDS + 1];
	char buf[256];

	memset(r, 0, sizeof(*r));
	ck_assert_msg(g && g->receiver, "e2e_run() needs a graded test that declares .receiver");
	if (!table || !*table) {
		e2e_words(g->receiver, buf, sizeof(buf), words);
		ref_start(&r->rf, words);
		r->ours = true;
		return;
	}
	r->rf.addr = getenv("RDMALAB_ADDR");
	ck_assert_msg(r->rf.addr && *r->rf.addr,
		      "RDMALAB_ADDR is not set: run with 'make rdma-test'");
	ck_assert_msg(e2e_from_table(table, g->test->name, &r->rf),
		      "the grader started no receiver for %s (%s): the grader's fault, not yours",
		      g->test->name, table);
	snprintf(r->rf.dir, sizeof(r->rf.dir), "/tmp/rdmalab-e2e-XXXXXX");
	ck_assert_msg(mkdtemp(r->rf.dir), "mkdtemp: %s", strerror(errno));
}

static void e2e_receiver_stop(struct e2e_receiver *r)
{
	if (r->ours)
		rf_stop(&r->rf);
	else
		rmdir(r->rf.dir);
}

/*
 * The results line of the run that began when the log had SKIP lines: the
 * last new line for ID, else the last new line. Waits up to E2E_LINE_MS
 * (scaled) for one; "" if none came.
 */
static void e2e_line(const struct rf_receiver *rf, int skip, const char *id, char *line,
		     size_t size)
{
	char want[96], *all, *p, *end, *pick;
	int waited, n;

	snprintf(want, sizeof(want), "\"student_id\":\"%s\"", id);
	line[0] = '\0';
	for (waited = 0;; waited += 20) {
		all = rf_results(rf);
		pick = NULL;
		for (p = all, n = 0; *p; p = end + 1, n++) {
			end = strchr(p, '\n');
			if (!end)
				break;
			*end = '\0';
			if (n >= skip && (!pick || !strstr(pick, want) || strstr(p, want)))
				pick = p;
		}
		if (pick)
			snprintf(line, size, "%s", pick);
		free(all);
		if (pick || waited >= rf_timeout_ms(E2E_LINE_MS))
			return;
		usleep(20000);
	}
}

/* The last line of TEXT, at most 300 bytes, into OUT ("no message" if none). */
static void e2e_last_line(const char *text, char *out, size_t size)
{
	const char *end = text + strlen(text), *start;

	while (end > text && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	for (start = end; start > text && start[-1] != '\n'; start--)
		;
	snprintf(out, size, "%.*s", (int)(end - start > 300 ? 300 : end - start), start);
	if (!out[0])
		snprintf(out, size, "no message");
}

/* Whether LINE has "KEY":"VALUE". */
static bool e2e_has(const char *line, const char *key, const char *value)
{
	char want[160];

	snprintf(want, sizeof(want), "\"%s\":\"%s\"", key, value);
	return strstr(line, want) != NULL;
}

/* Say why into FAIL (SIZE bytes) and return false: the test fails once it has cleaned up. */
#define E2E_WRONG(fail, size, ...) (snprintf((fail), (size), __VA_ARGS__), false)

/* Whether the run ended with the key of ID for FILE, as the receiver logged it in LINE. */
static bool e2e_key_ok(const struct ref_run *run, const struct ref_file *file, const char *id,
		       const char *line, const char *why, char *fail, size_t fsize)
{
	char sha[65], key_sha[65];
	unsigned long long size = (unsigned long long)file->size;

	if (run->status != 0)
		return E2E_WRONG(fail, fsize,
				 "expected a key for a file of %llu bytes, got exit status %d: %s",
				 size, run->status, why);
	if (!run->key[0])
		return E2E_WRONG(
			fail, fsize,
			"expected \"key: ...\" on stdout for a file of %llu bytes, got: %.300s",
			size, run->out[0] ? run->out : "nothing");
	if (!line[0])
		return E2E_WRONG(fail, fsize,
				 "the receiver logged no connection from the sender (file of %llu "
				 "bytes)",
				 size);
	rcv_hex(file->sha256, sizeof(file->sha256), sha);
	if (!e2e_has(line, "sha256", sha))
		return E2E_WRONG(
			fail, fsize,
			"the hash the sender announced is not the file's SHA-256 (%s); the "
			"receiver logged: %s",
			sha, line);
	if (rcv_key_sha256(run->key, key_sha) || !e2e_has(line, "key_sha256", key_sha))
		return E2E_WRONG(fail, fsize,
				 "expected the key of '%s' (file of %llu bytes), got '%s'", id,
				 size, run->key);
	return true;
}

/* Whether the run ended non-zero, without a key, after reaching the step EXPECT needs. */
static bool e2e_failure_ok(const struct ref_run *run, enum e2e_expect expect, const char *line,
			   const char *why, char *fail, size_t fsize)
{
	const char *what = expect == E2E_BAD ? "said the hash was bad" : "dropped the connection";
	int step = line[0] ? ref_line_step(line) : 0;

	if (run->status == 0)
		return E2E_WRONG(fail, fsize,
				 "expected a non-zero exit (the receiver %s), got exit status 0",
				 what);
	if (run->key[0])
		return E2E_WRONG(fail, fsize, "the receiver %s, yet the sender printed a key: %s",
				 what, run->key);
	if (expect == E2E_BAD && step < 5)
		return E2E_WRONG(fail, fsize,
				 "expected the sender to send DONE and read the RESULT saying bad, "
				 "it stopped at step %d: %s",
				 step, why);
	if (expect == E2E_DROPPED && step < 4)
		return E2E_WRONG(fail, fsize,
				 "expected the sender to get as far as DONE before the drop, it "
				 "stopped at step %d: %s",
				 step, why);
	return true;
}

void e2e_run(uint64_t size, enum e2e_expect expect)
{
	struct e2e_receiver r;
	struct ref_file file;
	struct ref_run run;
	char id[16], server[96], line[2048], why[320], fail[1536];
	int attempt, skip;
	bool ok;

	e2e_receiver_start(&r);
	ref_make_file(&file, size);
	snprintf(id, sizeof(id), "s%08llu", (unsigned long long)e2e_random(0, 100000000));
	snprintf(server, sizeof(server), "%s:%u", r.rf.addr, r.rf.port);
	/*
	 * A run the receiver never heard of, that failed in rdma_cm (the
	 * framework's messages name the call, rdma_...), gets a second try: a
	 * loaded machine can lose a connection attempt.
	 */
	for (attempt = 1; attempt <= 2; attempt++) {
		const char *const args[] = { "--server", server, "--file",    file.path,
					     "--id",     id,     "--timeout", ref_sender_timeout(),
					     NULL };

		skip = rf_count_lines(&r.rf);
		/* No limit of its own: a sender that hangs runs into the test's (graded.c). */
		ref_run_sender(&r.rf, args, 24 * 3600 * 1000, &run);
		e2e_line(&r.rf, skip, id, line, sizeof(line));
		if (line[0] || !strstr(run.err, "rdma_"))
			break;
	}
	e2e_last_line(run.err, why, sizeof(why));
	ok = expect == E2E_KEY ? e2e_key_ok(&run, &file, id, line, why, fail, sizeof(fail)) :
				 e2e_failure_ok(&run, expect, line, why, fail, sizeof(fail));
	ref_drop_file(&file);
	e2e_receiver_stop(&r);
	ck_assert_msg(ok, "%s", fail);
}
