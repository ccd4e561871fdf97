/*
 * reference.c: Lab 3's test helpers (reference.h). The parent's: the
 * receiver, the files, the results log, the lab3 program. The act's: the
 * test's own protocol steps.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "reference.h"

#define REF_MAX_WORDS 16
#define REF_LINE_MS 10000    /* for the receiver to log a connection the act ended */
#define REF_RUN_LINE_MS 2000 /* ... one a run of the lab3 program ended */

/* --- the parent ----------------------------------------------------------- */

/*
 * The running test's receiver and files, in the parent. The act, a fork,
 * sees a copy: nothing here is an expected value, and the grader's
 * receiver's secret is never here.
 */
static struct {
	pid_t owner;           /* the process that set this up (0: nothing set up) */
	bool ours;             /* started here (make check), not the grader's */
	struct rf_receiver rf; /* the grader's: addr, port and results_path only */
	int skip;              /* lines in its results log before the test */
	long long deadline_ms; /* the end of the test's limit, for the programs a check runs */
	int nfiles;
	struct {
		char path[64];
		uint64_t size;
		uint8_t *bytes; /* what setup wrote: the check hashes these */
	} file[REF_MAX_FILES];
} ref;

static long long ref_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t ref_random(uint64_t lo, uint64_t span)
{
	uint64_t r;

	ck_assert_msg(getrandom(&r, sizeof(r), 0) == sizeof(r), "getrandom: %s", strerror(errno));
	return lo + (span ? r % span : 0);
}

void ref_random_id(char id[RL_PROTO_MAX_ID + 1])
{
	snprintf(id, RL_PROTO_MAX_ID + 1, "s%08llu", (unsigned long long)ref_random(0, 100000000));
}

/* build/TREE/lab3/tests/steps -> build/TREE/lab3/NAME or build/bin/NAME (UP: "..", "../../.."). */
static void ref_build_path(const char *up, const char *name, char *buf, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	ck_assert_msg(n > 0, "readlink /proc/self/exe: %s", strerror(errno));
	exe[n] = '\0';
	snprintf(buf, size, "%s/%s/%s", dirname(exe), up, name);
}

/* TEST's line of the grader's table at PATH: "TEST\tPORT\tRESULTS"; fills RF's port and results. */
static bool ref_from_table(const char *path, const char *test, struct rf_receiver *rf)
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
static void ref_words(const char *opts, char *buf, size_t size, const char **words)
{
	int n = 0;
	char *w, *save;

	snprintf(buf, size, "%s", opts);
	for (w = strtok_r(buf, " ", &save); w && n < REF_MAX_WORDS; w = strtok_r(NULL, " ", &save))
		words[n++] = w;
	words[n] = NULL;
}

/*
 * The receiver test G declares: under the grader (RDMALAB_RECEIVERS names
 * its table) the one the grader runs, as root, with a secret the test
 * cannot read; elsewhere one started here, with G's options, sealed
 * (rf_start_sealed): its secret its own, its log on a descriptor with no
 * path, the process not dumpable, so that the act, a process of the same
 * user, can neither forge a key nor write the log the check reads.
 */
static void ref_receiver_start(const struct rl_graded *g)
{
	const char *table = getenv("RDMALAB_RECEIVERS");
	const char *words[REF_MAX_WORDS + 1];
	char buf[256], path[PATH_MAX];

	if (!table || !*table) {
		/* The fixture finds the receiver from tests/rdma/: tell it where it is from here. */
		if (!getenv("RDMALAB_RECEIVER")) {
			ref_build_path("../../..", "bin/rdmalab-receiver", path, sizeof(path));
			setenv("RDMALAB_RECEIVER", path, 1);
		}
		ref_words(g->receiver, buf, sizeof(buf), words);
		rf_start_sealed(&ref.rf, words);
		ref.ours = true;
		return;
	}
	memset(&ref.rf, 0, sizeof(ref.rf));
	ref.rf.results_fd = -1;
	ref.rf.addr = getenv("RDMALAB_ADDR");
	ck_assert_msg(ref.rf.addr && *ref.rf.addr,
		      "RDMALAB_ADDR is not set: run with 'make check LAB=3'");
	ck_assert_msg(ref_from_table(table, g->name, &ref.rf),
		      "the grader started no receiver for %s (%s): the grader's fault, not yours",
		      g->name, table);
}

void ref_cleanup(void)
{
	int i;

	if (ref.owner != getpid())
		return;
	/* A receiver whose check did not run was killed with the test's leftovers. */
	if (ref.ours && ref.rf.pid > 0 && waitpid(ref.rf.pid, NULL, WNOHANG) != 0)
		ref.rf.pid = 0;
	if (ref.ours)
		rf_stop(&ref.rf);
	for (i = 0; i < ref.nfiles; i++) {
		unlink(ref.file[i].path);
		free(ref.file[i].bytes);
	}
	memset(&ref, 0, sizeof(ref));
}

static void ref_cleanup_at_exit(void)
{
	ref_cleanup();
}

/* File I of SIZE random bytes, written and kept. */
static void ref_make_file(struct ref_in *in, int i, uint64_t size)
{
	uint8_t *bytes = malloc(size + 1);
	uint64_t done = 0;
	ssize_t n;
	int fd;

	ck_assert_msg(bytes, "out of memory for a file of %llu bytes", (unsigned long long)size);
	rf_fill(bytes, size, (unsigned)ref_random(0, 1ULL << 32));
	ref.file[i].bytes = bytes;
	ref.file[i].size = size;
	snprintf(ref.file[i].path, sizeof(ref.file[i].path), "/tmp/rdmalab-lab3-XXXXXX");
	ref.nfiles = i + 1;
	fd = mkstemp(ref.file[i].path);
	ck_assert_msg(fd >= 0, "mkstemp: %s", strerror(errno));
	while (done < size) {
		n = write(fd, bytes + done, size - done);
		ck_assert_msg(n > 0, "write %s: %s", ref.file[i].path, strerror(errno));
		done += (uint64_t)n;
	}
	close(fd);
	snprintf(in->file[i].path, sizeof(in->file[i].path), "%s", ref.file[i].path);
	in->file[i].size = size;
	in->nfiles = i + 1;
}

void ref_setup(struct rl_case *c, const uint64_t *sizes, int n)
{
	static bool registered;
	const struct rl_graded *g = rl_graded_test();
	struct ref_in *in = c->in;
	int i;

	ref_cleanup();
	if (!registered)
		registered = atexit(ref_cleanup_at_exit) == 0;
	ref.owner = getpid();
	ck_assert_msg(n <= REF_MAX_FILES, "a test of at most %d files, not %d", REF_MAX_FILES, n);
	if (g->receiver) {
		ref_receiver_start(g);
		ref.skip = rf_count_lines(&ref.rf);
		snprintf(in->addr, sizeof(in->addr), "%s", ref.rf.addr);
		in->port = ref.rf.port;
	}
	for (i = 0; i < n; i++)
		ref_make_file(in, i, sizes[i]);
	ref_random_id(in->id);
	/* The runner's limit: a quarter once its step hung, in an act or a check. */
	ref.deadline_ms = ref_now_ms() + rf_timeout_ms((int)(rl_graded_limit() * 1000));
}

void ref_sha256_hex(int i, char hex[65])
{
	uint8_t md[32];

	ck_assert_msg(i < ref.nfiles, "the test has no file %d", i);
	EVP_Digest(ref.file[i].bytes, ref.file[i].size, md, NULL, EVP_sha256(), NULL);
	rcv_hex(md, sizeof(md), hex);
}

int ref_count_lines(void)
{
	return rf_count_lines(&ref.rf);
}

/*
 * A JSON string at P (its opening quote) into OUT, unescaped (characters
 * past ASCII as '?'), cut to SIZE; returns what follows its closing quote,
 * or NULL.
 */
static const char *ref_json_string(const char *p, char *out, size_t size)
{
	size_t n = 0;
	char ch;

	for (p++; *p && *p != '"'; p++) {
		ch = *p;
		if (ch == '\\') {
			ch = *++p;
			if (!ch)
				return NULL;
			if (ch == 'n' || ch == 't' || ch == 'r' || ch == 'b' || ch == 'f')
				ch = ' ';
			else if (ch == 'u') {
				unsigned v;

				if (sscanf(p + 1, "%4x", &v) != 1 || strlen(p + 1) < 4)
					return NULL;
				ch = v < 0x80 && v >= 0x20 ? (char)v : '?';
				p += 4;
			}
		}
		if (n + 1 < size)
			out[n++] = ch;
	}
	if (size)
		out[n] = '\0';
	return *p == '"' ? p + 1 : NULL;
}

/* What ref_json_member() found. */
enum ref_json {
	REF_JSON_NONE,   /* no such member */
	REF_JSON_STRING, /* a string, unquoted */
	REF_JSON_OTHER,  /* null, true, false or a number, as written */
};

/*
 * Member KEY of the flat JSON object TEXT into OUT (SIZE bytes). Walks the
 * members one by one: a key's name inside another member's string (an
 * error's text) is not a key.
 */
static enum ref_json ref_json_member(const char *text, const char *key, char *out, size_t size)
{
	const char *p = strchr(text, '{');
	enum ref_json kind;
	char name[64];
	size_t len;

	if (!p)
		return REF_JSON_NONE;
	for (p++;;) {
		p += strspn(p, " \t");
		if (*p != '"' || !(p = ref_json_string(p, name, sizeof(name))))
			return REF_JSON_NONE;
		p += strspn(p, " \t");
		if (*p++ != ':')
			return REF_JSON_NONE;
		p += strspn(p, " \t");
		if (*p == '"') {
			kind = REF_JSON_STRING;
			if (!(p = ref_json_string(p, out, size)))
				return REF_JSON_NONE;
		} else {
			kind = REF_JSON_OTHER;
			len = strcspn(p, ",} \t\n");
			snprintf(out, size, "%.*s", (int)len, p);
			p += len;
		}
		if (strcmp(name, key) == 0)
			return kind;
		p += strspn(p, " \t");
		if (*p++ != ',')
			return REF_JSON_NONE;
	}
}

/* String member KEY of TEXT into OUT, or "" when it is null or missing. */
static void ref_json_str(const char *text, const char *key, char *out, size_t size)
{
	if (ref_json_member(text, key, out, size) != REF_JSON_STRING)
		out[0] = '\0';
}

/* Number member KEY of TEXT, or NONE when it is null or missing. */
static long long ref_json_num(const char *text, const char *key, long long none)
{
	char v[32];

	return ref_json_member(text, key, v, sizeof(v)) == REF_JSON_OTHER && strcmp(v, "null") ?
		       atoll(v) :
		       none;
}

/* Boolean member KEY of TEXT: 1, 0, or -1 when it is null or missing. */
static int ref_json_bool(const char *text, const char *key)
{
	char v[8];

	if (ref_json_member(text, key, v, sizeof(v)) != REF_JSON_OTHER)
		return -1;
	return !strcmp(v, "true") ? 1 : !strcmp(v, "false") ? 0 : -1;
}

/* TEXT, one results line, into L. */
static void ref_parse_line(const char *text, struct ref_line *l)
{
	memset(l, 0, sizeof(*l));
	snprintf(l->text, sizeof(l->text), "%s", text);
	ref_json_str(text, "peer", l->peer, sizeof(l->peer));
	ref_json_str(text, "student_id", l->student_id, sizeof(l->student_id));
	l->file_size = ref_json_num(text, "file_size", -1);
	ref_json_str(text, "sha256", l->sha256, sizeof(l->sha256));
	l->bytes_received = ref_json_num(text, "bytes_received", -1);
	l->hash_ok = ref_json_bool(text, "hash_ok");
	l->key_issued = ref_json_bool(text, "key_issued") == 1;
	ref_json_str(text, "key_sha256", l->key_sha256, sizeof(l->key_sha256));
	l->step = (int)ref_json_num(text, "step", -1);
	ref_json_str(text, "error", l->error, sizeof(l->error));
}

/*
 * The lines of the results log after the first SKIP, one at a time: PICK
 * is called on each and says whether to keep it (the last kept wins).
 * Waits up to MS (scaled) for one to be kept. Whether one was.
 */
static bool ref_find_line(int skip, int ms, bool (*pick)(const struct ref_line *, const void *),
			  const void *arg, struct ref_line *out)
{
	struct ref_line l;
	char *all, *p, *end;
	bool found;
	int waited, n;

	for (waited = 0;; waited += 20) {
		all = rf_results(&ref.rf);
		found = false;
		for (p = all, n = 0; (end = strchr(p, '\n')); p = end + 1, n++) {
			*end = '\0';
			if (n < skip)
				continue;
			ref_parse_line(p, &l);
			if (pick(&l, arg)) {
				*out = l;
				found = true;
			}
		}
		free(all);
		if (found || waited >= rf_timeout_ms(ms))
			return found;
		usleep(20000);
	}
}

static bool ref_is_peer(const struct ref_line *l, const void *peer)
{
	return strcmp(l->peer, peer) == 0;
}

bool ref_line(struct rl_case *c, const char *name, struct ref_line *l)
{
	const char *peer;

	memset(l, 0, sizeof(*l));
	if (!rl_expect(c, rl_said(c, name),
		       "the test ended before it connected to the receiver (see the output)"))
		return false;
	peer = rl_said_str(c, name);
	return rl_expect(c, ref_find_line(ref.skip, REF_LINE_MS, ref_is_peer, peer, l),
			 "expected a line for %s in the receiver's results log, there is none",
			 peer);
}

/* Any line; ID's when there is one (a run that sent no ID logs none). */
static bool ref_is_run(const struct ref_line *l, const void *id)
{
	(void)l;
	(void)id;
	return true;
}

static bool ref_is_id(const struct ref_line *l, const void *id)
{
	return strcmp(l->student_id, id) == 0;
}

void ref_line_of_run(int skip, const char *id, struct ref_line *l)
{
	memset(l, 0, sizeof(*l));
	if (!ref_find_line(skip, 0, ref_is_id, id, l))
		ref_find_line(skip, REF_RUN_LINE_MS, ref_is_run, id, l);
}

bool ref_expect_received(struct rl_case *c, const struct ref_line *l, int i, int step)
{
	unsigned long long size = ref.file[i].size;
	char sha[65];

	ref_sha256_hex(i, sha);
	if (!rl_expect(c, l->file_size == (long long)size && !strcmp(l->sha256, sha),
		       "file of %llu bytes: expected the receiver to be told its size and its "
		       "SHA-256, %s; the receiver logged: %s",
		       size, sha, l->text))
		return false;
	return rl_expect(c,
			 l->hash_ok == 1 && l->bytes_received == (long long)size && l->step == step,
			 "file of %llu bytes: expected the receiver to get all of it, hash_ok "
			 "true, and step %d (%s); the receiver logged: %s",
			 size, step, rcv_step_name(step), l->text);
}

/* --- the parent: the lab3 program ------------------------------------------ */

const char *ref_sender_timeout(void)
{
	static char s[16];

	snprintf(s, sizeof(s), "%d", rf_timeout_ms(REF_WAIT_MS) / 1000);
	return s;
}

int ref_check_ms_left(void)
{
	long long left = ref.deadline_ms - ref_now_ms();

	return left > 0 ? (int)left : 0;
}

/* Read up to SIZE - 1 bytes of FD, from its start, into BUF, NUL-terminated. */
static void ref_slurp(int fd, char *buf, size_t size)
{
	ssize_t n = fd >= 0 ? pread(fd, buf, size - 1, 0) : 0;

	buf[n > 0 ? n : 0] = '\0';
}

static double ref_seconds(void)
{
	return ref_now_ms() / 1000.0;
}

void ref_run_sender(int i, const char *id, const char *timeout, int limit_ms, struct ref_run *run)
{
	char prog[PATH_MAX], server[96];
	const char *argv[] = { prog,   "--server", server,      "--file", ref.file[i].path,
			       "--id", id,         "--timeout", timeout,  NULL };
	double start = ref_seconds();
	int out = rf_unnamed_file("/tmp");
	int err = rf_unnamed_file("/tmp");
	int status = -1;
	const char *k;
	pid_t pid;

	ck_assert_msg(out >= 0 && err >= 0, "an unnamed file in /tmp: %s", strerror(errno));
	ref_build_path("..", "lab3", prog, sizeof(prog));
	snprintf(server, sizeof(server), "%s:%u", ref.rf.addr, ref.rf.port);
	memset(run, 0, sizeof(*run));
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		/* Only its output: none of the parent's descriptors (the results file). */
		int null = open("/dev/null", O_RDONLY);

		dup2(null, STDIN_FILENO);
		dup2(out, STDOUT_FILENO);
		dup2(err, STDERR_FILENO);
		close_range(3, ~0U, 0);
		execv(prog, (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", prog, strerror(errno));
		_exit(127);
	}
	run->status = -1;
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if ((ref_seconds() - start) * 1000 > limit_ms) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			status = -1;
			rl_graded_hung();
			break;
		}
		usleep(20000);
	}
	if (status != -1 && WIFEXITED(status))
		run->status = WEXITSTATUS(status);
	run->seconds = ref_seconds() - start;
	ref_slurp(out, run->out, sizeof(run->out));
	ref_slurp(err, run->err, sizeof(run->err));
	close(out);
	close(err);
	k = strstr(run->out, "key: ");
	if (k)
		sscanf(k + 5, "%64s", run->key);
}

void ref_last_line(const char *text, char *out, size_t size)
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

bool ref_expect_key(struct rl_case *c, const struct ref_run *run, int i, const char *id,
		    const struct ref_line *l)
{
	unsigned long long size = ref.file[i].size;
	char sha[65], key_sha[65], why[320];

	ref_last_line(run->err, why, sizeof(why));
	if (!rl_expect(c, run->status == 0,
		       "expected a key for a file of %llu bytes, got exit status %d: %s", size,
		       run->status, why) ||
	    !rl_expect(c, run->key[0],
		       "expected \"key: ...\" on stdout for a file of %llu bytes, got: %.300s",
		       size, run->out[0] ? run->out : "nothing") ||
	    !rl_expect(c, l->text[0],
		       "the receiver logged no connection from the sender (file of %llu bytes)",
		       size))
		return false;
	ref_sha256_hex(i, sha);
	if (!rl_expect(c, !strcmp(l->sha256, sha),
		       "the hash the sender announced is not the file's SHA-256 (%s); the "
		       "receiver logged: %s",
		       sha, l->text))
		return false;
	return rl_expect(c,
			 !rcv_key_sha256(run->key, key_sha) && !strcmp(l->key_sha256, key_sha) &&
				 !strcmp(l->student_id, id),
			 "expected the key of '%s' (file of %llu bytes), got '%s'", id, size,
			 run->key);
}

bool ref_expect_failure(struct rl_case *c, const struct ref_run *run, const char *what,
			const char *want)
{
	return rl_expect(c, run->status != -1,
			 "%s: expected an exit, the sender was still running after %.0f s%s", what,
			 run->seconds, rl_graded_limit_note()) &&
	       rl_expect(c, run->status != 0, "%s: expected a non-zero exit, got 0; stdout:\n%s",
			 what, run->out) &&
	       rl_expect(c, strstr(run->err, want), "%s: expected \"%s\" on stderr, got:\n%s", what,
			 want, run->err) &&
	       rl_expect(c, !run->key[0], "%s: expected no key printed, got %s", what, run->key);
}

/* --- the act: the test's own steps ----------------------------------------- */

const struct ref_in *ref_in(const struct rl_case *c)
{
	return c->in;
}

void ref_open(const struct rl_case *c, int i, struct ref_file *rfile)
{
	const struct ref_in *in = ref_in(c);
	uint8_t buf[65536];
	EVP_MD_CTX *ctx;
	ssize_t n;
	int ret;

	memset(rfile, 0, sizeof(*rfile));
	ret = lab3_open_file(&rfile->f, in->file[i].path);
	ck_assert_msg(ret == 0, "lab3_open_file(%s): %s", in->file[i].path, strerror(-ret));
	ctx = EVP_MD_CTX_new();
	ck_assert_msg(ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL),
		      "the test's SHA-256 failed");
	while ((n = read(rfile->f.fd, buf, sizeof(buf))) > 0)
		EVP_DigestUpdate(ctx, buf, (size_t)n);
	ck_assert_msg(n == 0 && EVP_DigestFinal_ex(ctx, rfile->sha256, NULL),
		      "the test could not hash %s", in->file[i].path);
	EVP_MD_CTX_free(ctx);
	lseek(rfile->f.fd, 0, SEEK_SET);
	memcpy(rfile->f.sha256, rfile->sha256, sizeof(rfile->sha256));
}

void ref_connect(const struct rl_case *c, struct lab3_conn *conn, const char *name)
{
	const struct ref_in *in = ref_in(c);
	int ret = lab3_connect(conn, in->addr, in->port, rf_timeout_ms(REF_WAIT_MS));

	/* A loaded machine can lose a connection attempt: one more. */
	if (ret)
		ret = lab3_connect(conn, in->addr, in->port, rf_timeout_ms(REF_WAIT_MS));
	ck_assert_msg(ret == 0, "expected to connect to the receiver at %s:%u, got %s", in->addr,
		      in->port, strerror(-ret));
	rl_say_str(name, conn->peer);
}

void ref_close(struct lab3_conn *conn, struct ref_file *rfile)
{
	if (rfile)
		lab3_close_file(&rfile->f);
	lab3_disconnect(conn);
}

void ref_send_file_info(struct lab3_conn *conn, const struct ref_file *rfile, bool flip_hash)
{
	struct rl_msg m = { .type = RL_MSG_FILE_INFO, .u.file_info.size = rfile->f.size };

	memcpy(m.u.file_info.sha256, rfile->sha256, 32);
	if (flip_hash)
		m.u.file_info.sha256[31] ^= 1;
	ck_assert_msg(lab3_send_msg(conn, &m) == 0, "the test could not send FILE_INFO");
}
RL_HIDDEN(ref_send_file_info, 2);

/*
 * The test's own version of each step, run around the student's step in an
 * act. Each is declared hidden (RL_HIDDEN, tests/harness.h) in the acts of
 * the step it does, so that the student's code cannot call it there,
 * except where an act of the same step needs it: ref_register and
 * ref_wait_window run in step 3's acts (each tests one of the step's two
 * functions with the kit's other), ref_window_done in step 4's; each is a
 * few lines of the calls the step allows anyway.
 */

/* A private, writable copy-on-write mapping: not what the lab asks for, but enough to read from. */
void ref_register(struct lab3_conn *conn, struct ref_file *rfile)
{
	struct lab3_file *f = &rfile->f;

	if (!f->size)
		return;
	f->data = mmap(NULL, f->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, f->fd, 0);
	ck_assert_msg(f->data != MAP_FAILED, "mmap %s: %s", f->path, strerror(errno));
	f->mr = rl_reg_mr(conn->pd, f->data, f->size, IBV_ACCESS_LOCAL_WRITE);
	ck_assert_msg(f->mr, "the test could not register %llu bytes", (unsigned long long)f->size);
}

void ref_wait_window(struct lab3_conn *conn, struct rl_msg_window *w)
{
	struct rl_msg m;

	ck_assert_msg(lab3_wait_msg(conn, RL_MSG_WINDOW, &m) == 0,
		      "expected a WINDOW from the receiver (see the output above)");
	*w = m.u.window;
}

void ref_write_window(struct lab3_conn *conn, struct ref_file *rfile, const struct rl_msg_window *w)
{
	struct ibv_wc wc;

	ck_assert_msg(rl_post_write(conn->id->qp, rfile->f.mr, rfile->f.data + w->offset, w->len,
				    w->addr, w->rkey, LAB3_WR_WRITE) == 0,
		      "the test could not post the RDMA WRITE of window %u", w->index);
	ck_assert_msg(lab3_wait_completion(conn, &wc) == 0 && wc.wr_id == LAB3_WR_WRITE,
		      "the test's RDMA WRITE of window %u failed (see the output above)", w->index);
}
RL_HIDDEN(ref_write_window, 4);

void ref_window_done(struct lab3_conn *conn, struct ref_file *rfile, const struct rl_msg_window *w)
{
	struct rl_msg m = { .type = RL_MSG_WINDOW_DONE };

	m.u.window_done.index = w->index;
	m.u.window_done.len = w->len;
	ck_assert_msg(lab3_send_msg(conn, &m) == 0, "the test could not send WINDOW_DONE");
	rfile->f.written += w->len;
	rfile->f.windows++;
}

void ref_send_windows(struct lab3_conn *conn, struct ref_file *rfile)
{
	struct rl_msg_window w;

	while (rfile->f.written < rfile->f.size) {
		ref_wait_window(conn, &w);
		ref_write_window(conn, rfile, &w);
		ref_window_done(conn, rfile, &w);
	}
}
RL_HIDDEN(ref_send_windows, 4);

void ref_done(struct lab3_conn *conn, struct rl_msg_result *result)
{
	struct rl_msg m = { .type = RL_MSG_DONE };

	ck_assert_msg(lab3_send_msg(conn, &m) == 0, "the test could not send DONE");
	ck_assert_msg(lab3_wait_msg(conn, RL_MSG_RESULT, &m) == 0,
		      "expected a RESULT after DONE (see the output above)");
	*result = m.u.result;
}
RL_HIDDEN(ref_done, 5);

void ref_send_id(struct lab3_conn *conn, const char *id)
{
	struct rl_msg m = { .type = RL_MSG_STUDENT_ID };

	snprintf(m.u.student_id.id, sizeof(m.u.student_id.id), "%s", id);
	ck_assert_msg(lab3_send_msg(conn, &m) == 0, "the test could not send STUDENT_ID");
}
RL_HIDDEN(ref_send_id, 6);

void ref_wait_key(struct lab3_conn *conn)
{
	struct rl_msg m;

	ck_assert_msg(lab3_wait_msg(conn, RL_MSG_KEY, &m) == 0,
		      "expected a KEY after STUDENT_ID (see the output above)");
}
RL_HIDDEN(ref_wait_key, 7);

void ref_transfer(struct lab3_conn *conn, struct ref_file *rfile)
{
	ref_send_file_info(conn, rfile, false);
	ref_register(conn, rfile);
	ref_send_windows(conn, rfile);
}

int ref_unread(struct lab3_conn *conn)
{
	struct ibv_wc wc;
	struct rl_msg m;
	int waited;

	if (conn->npending)
		return conn->pending[0].err ? -1 : (int)conn->pending[0].msg.type;
	for (waited = 0; waited <= rf_timeout_ms(REF_UNREAD_MS); waited += 10) {
		while (ibv_poll_cq(conn->cq, 1, &wc) > 0) {
			if (wc.wr_id < LAB3_WR_RECV || wc.status != IBV_WC_SUCCESS)
				continue;
			if (rl_proto_decode(conn->bufs.recv[wc.wr_id - LAB3_WR_RECV], wc.byte_len,
					    &m))
				return -1;
			return (int)m.type;
		}
		usleep(10000);
	}
	return 0;
}
