/*
 * test_receiver_roster.c: --make-tokens keeps a roster's columns beside
 * each token, --verify-file gives every verdict and its exit status, and
 * both refuse a line they cannot read, naming it, and print nothing then.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness.h"
#include "receiver.h"

/* The vectors of test_receiver_key.c and test_receiver_tokens.c. */
#define VECTOR_SECRET "correct horse battery staple"
#define KEY_42 "IIBA-AIS7-RQ4N-P6RQ" /* the key of student42 */
#define TOKEN_S1 "3f4357792960"
#define TOKEN_S2 "af56a025af5d"

static const uint8_t *vector_secret = (const uint8_t *)VECTOR_SECRET;
static const size_t vector_len = sizeof(VECTOR_SECRET) - 1;

/* What one run of a reader printed and said. */
struct run {
	int status;
	char *out;     /* stdout, malloc'd */
	char err[512]; /* stderr */
};

/*
 * Run --make-tokens (VERIFY false) or --verify-file over INPUT, stdout
 * into R->out and stderr into R->err.
 */
static void run(bool verify, bool self_study, const char *input, struct run *r)
{
	FILE *in = fmemopen((void *)input, strlen(input), "r"), *err = tmpfile();
	size_t len = 0, n;
	FILE *out = open_memstream(&r->out, &len);
	int saved = dup(STDERR_FILENO);

	ck_assert(in && err && out && saved >= 0);
	fflush(stderr);
	dup2(fileno(err), STDERR_FILENO);
	if (verify)
		r->status =
			rcv_verify_file(in, "keys.csv", out, vector_secret, vector_len, self_study);
	else
		r->status = rcv_make_tokens(in, "roster.csv", out, vector_secret, vector_len);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	fclose(out);
	fclose(in);
	rewind(err);
	n = fread(r->err, 1, sizeof(r->err) - 1, err);
	r->err[n] = '\0';
	fclose(err);
}

/* Expect R to have exited STATUS with exactly OUT on stdout. */
static void expect(struct run *r, const char *what, int status, const char *out)
{
	ck_assert_msg(r->status == status, "%s: expected status %d, got %d (stderr: %s)", what,
		      status, r->status, r->err);
	ck_assert_msg(!strcmp(r->out, out), "%s: expected output\n%s\ngot\n%s", what, out, r->out);
	free(r->out);
}

/* Expect R to have refused its input (status 2, no output) with an error naming LINE. */
static void expect_refused(struct run *r, const char *what, const char *line)
{
	ck_assert_msg(r->status == 2 && r->out[0] == '\0',
		      "%s: expected status 2 and no output, got %d and '%s'", what, r->status,
		      r->out);
	ck_assert_msg(strstr(r->err, line) && strchr(r->err, '\n') == strrchr(r->err, '\n'),
		      "%s: expected one error line naming '%s', got '%s'", what, line, r->err);
	free(r->out);
}

START_TEST(test_make_tokens_keeps_the_other_columns)
{
	struct run r;

	run(false, false,
	    "\xef\xbb\xbfname,ID,email\r\n\"Doe, Jane\",s1,j@x\r\n\r\n# a comment\nBob,s2,b@x\n",
	    &r);
	expect(&r, "a roster with a BOM, CRLF, a quoted name, the id second", 0,
	       "id,token,name,email\n"
	       "s1," TOKEN_S1 ",\"Doe, Jane\",j@x\n"
	       "s2," TOKEN_S2 ",Bob,b@x\n");
	run(false, false, "id,token,name\ns1,stale,Jane\n", &r);
	expect(&r, "a roster that has tokens already", 0, "id,token,name\ns1," TOKEN_S1 ",Jane\n");
	run(false, false, "id\n", &r);
	expect(&r, "a roster with no students", 0, "id,token\n");
}
END_TEST

START_TEST(test_make_tokens_takes_ids_up_to_51_characters)
{
	char roster[128], id[RCV_CLASS_MAX_ID + 2], token[RCV_TOKEN_LEN + 1], want[128];
	struct run r;

	memset(id, 'x', sizeof(id) - 1);
	id[RCV_CLASS_MAX_ID] = '\0';
	ck_assert_int_eq(rcv_token_for(vector_secret, vector_len, id, token), 0);
	snprintf(roster, sizeof(roster), "id\n%s\n", id);
	snprintf(want, sizeof(want), "id,token\n%s,%s\n", id, token);
	run(false, false, roster, &r);
	expect(&r, "an ID of 51 characters", 0, want);
	id[RCV_CLASS_MAX_ID] = 'x';
	id[RCV_CLASS_MAX_ID + 1] = '\0';
	snprintf(roster, sizeof(roster), "id\n%s\n", id);
	run(false, false, roster, &r);
	expect_refused(&r, "an ID of 52 characters: no room for its token", "roster.csv line 2:");
}
END_TEST

START_TEST(test_make_tokens_refuses_what_it_cannot_read)
{
	static const struct {
		const char *what, *input, *line;
	} cases[] = {
		{ "an empty file", "", "roster.csv: no header line" },
		{ "no id column", "name,email\nJane,j@x\n", "roster.csv line 1:" },
		{ "an empty ID", "id,name\n,Jane\n", "roster.csv line 2:" },
		{ "a missing ID column", "name,id\nJane\n", "roster.csv line 2:" },
		{ "an ID with a space", "id\ns 1\n", "roster.csv line 2:" },
		{ "a quote that never closes", "id,name\ns1,\"Jane\ns2,Bob\n",
		  "roster.csv line 2:" },
		{ "a misplaced quote in the ID", "id\n\"s1\"x\n", "roster.csv line 2:" },
	};
	struct run r;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		run(false, false, cases[i].input, &r);
		expect_refused(&r, cases[i].what, cases[i].line);
	}
}
END_TEST

START_TEST(test_verify_file_gives_every_verdict)
{
	struct run r;

	run(true, false,
	    "id,key\n"
	    "student42," KEY_42 "\n"
	    "\n# late submissions\n"
	    "s2,\n"
	    "s3,AAAA-AAAA-AAAA-AAAA\n"
	    "s4,not a key at all\n"
	    "\"a,b\",\"iiba aais7 rq4n p6rq\"\n"
	    " student42 , iiba-ais7-rq4n-p6rq \r\n",
	    &r);
	expect(&r, "OK, MISSING, BAD, a quoted ID", 1,
	       "id,verdict,detail\n"
	       "student42,OK,the key of this ID\n"
	       "s2,MISSING,no key given\n"
	       "s3,BAD,not the key of this ID\n"
	       "s4,BAD,not the key of this ID\n"
	       "\"a,b\",BAD,not the key of this ID\n"
	       "student42,OK,the key of this ID\n");
}
END_TEST

START_TEST(test_verify_file_is_0_only_when_every_key_is_ok)
{
	struct run r;

	run(true, false, "student42," KEY_42 "\n", &r);
	expect(&r, "one good key, no header", 0,
	       "id,verdict,detail\nstudent42,OK,the key of this ID\n");
	run(true, false, "student42,\n", &r);
	expect(&r, "one missing key", 1, "id,verdict,detail\nstudent42,MISSING,no key given\n");
	run(true, false, "# nothing yet\n", &r);
	expect(&r, "no keys", 0, "id,verdict,detail\n");
	run(true, true, "student42," KEY_42 "\n", &r);
	expect(&r, "the self-study secret is said", 0,
	       "id,verdict,detail\nstudent42,OK,the key of this ID (self-study secret)\n");
}
END_TEST

START_TEST(test_verify_file_refuses_a_malformed_line_naming_it)
{
	static const struct {
		const char *what, *input, *line;
	} cases[] = {
		{ "one field", "id,key\nstudent42\n", "keys.csv line 2:" },
		{ "three fields", "student42," KEY_42 ",\n", "keys.csv line 1:" },
		{ "an empty ID", "id,key\n\n,KEY\n", "keys.csv line 3:" },
		{ "an ID with a space", "s 1,KEY\n", "keys.csv line 1:" },
		{ "an ID of 65",
		  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx,K\n",
		  "keys.csv line 1:" },
		{ "a misplaced quote in the key", "s1,\"KEY\"x\n", "keys.csv line 1:" },
		{ "a quote that never closes", "s1," KEY_42 "\ns2,\"KEY\n", "keys.csv line 2:" },
	};
	struct run r;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		run(true, false, cases[i].input, &r);
		expect_refused(&r, cases[i].what, cases[i].line);
	}
}
END_TEST

/* Run rdmalab-receiver --secret-file SECRET MODE FILE; its exit status, stdout into OUT. */
static int run_binary(const char *secret, const char *mode, const char *file, char *out,
		      size_t size)
{
	char exe[PATH_MAX], bin[PATH_MAX + 32];
	int pipefd[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ck_assert(n > 0);
	exe[n] = '\0';
	snprintf(bin, sizeof(bin), "%s/../../bin/rdmalab-receiver", dirname(exe));
	ck_assert_int_eq(pipe(pipefd), 0);
	pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		dup2(pipefd[1], STDOUT_FILENO);
		execl(bin, bin, "--secret-file", secret, mode, file, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	while (got < (ssize_t)size - 1 && (n = read(pipefd[0], out + got, size - 1 - got)) > 0)
		got += n;
	out[got] = '\0';
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A file in /tmp holding TEXT, mode MODE; its path in PATH. */
static void temp_file(char path[64], const char *text, mode_t mode)
{
	int fd;

	snprintf(path, 64, "/tmp/rdmalab-roster-XXXXXX");
	fd = mkstemp(path);
	ck_assert_msg(fd >= 0, "mkstemp: %s", strerror(errno));
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

START_TEST(test_the_program_exits_0_1_or_2)
{
	char secret[64], good[64], bad[64], roster[64], out[512];
	int rc;

	temp_file(secret, VECTOR_SECRET, 0600);
	temp_file(good, "id,key\nstudent42," KEY_42 "\n", 0644);
	temp_file(bad, "student42," KEY_42 "\ns3,\n", 0644);
	temp_file(roster, "id,name\ns1,Jane\n", 0644);
	rc = run_binary(secret, "--verify-file", good, out, sizeof(out));
	ck_assert_msg(rc == 0 &&
			      !strcmp(out, "id,verdict,detail\nstudent42,OK,the key of this ID\n"),
		      "every key OK: expected exit 0 and one OK row, got %d and '%s'", rc, out);
	rc = run_binary(secret, "--verify-file", bad, out, sizeof(out));
	ck_assert_msg(rc == 1 && strstr(out, "s3,MISSING,"),
		      "a key missing: expected exit 1 and a MISSING row, got %d and '%s'", rc, out);
	rc = run_binary(secret, "--verify-file", "/nonexistent/keys.csv", out, sizeof(out));
	ck_assert_msg(rc == 2 && !out[0],
		      "no such file: expected exit 2 and no output, got %d and '%s'", rc, out);
	rc = run_binary(secret, "--make-tokens", roster, out, sizeof(out));
	ck_assert_msg(rc == 0 && !strcmp(out, "id,token,name\ns1," TOKEN_S1 ",Jane\n"),
		      "--make-tokens: expected exit 0 and s1's token, got %d and '%s'", rc, out);
	unlink(secret);
	unlink(good);
	unlink(bad);
	unlink(roster);
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("receiver: rosters and batches of keys");
	TCase *tc = tcase_create("roster");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_UNIT);
	tcase_add_test(tc, test_make_tokens_keeps_the_other_columns);
	tcase_add_test(tc, test_make_tokens_takes_ids_up_to_51_characters);
	tcase_add_test(tc, test_make_tokens_refuses_what_it_cannot_read);
	tcase_add_test(tc, test_verify_file_gives_every_verdict);
	tcase_add_test(tc, test_verify_file_is_0_only_when_every_key_is_ok);
	tcase_add_test(tc, test_verify_file_refuses_a_malformed_line_naming_it);
	tcase_add_test(tc, test_the_program_exits_0_1_or_2);
	suite_add_tcase(s, tc);
	return s;
}
