/* test_receiver_key.c: keys match a known vector, --verify agrees, and secret files are guarded. */
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

/*
 * The known vector, computed apart from this code:
 *   printf student42 | openssl dgst -sha256 -hmac 'correct horse battery staple' -binary |
 *   head -c 10 | base32
 */
#define VECTOR_SECRET "correct horse battery staple"
#define VECTOR_ID "student42"
#define VECTOR_KEY "IIBA-AIS7-RQ4N-P6RQ"
/* printf IIBAAIS7RQ4NP6RQ | sha256sum */
#define VECTOR_KEY_SHA256 "541451f5279eb50c3a18aece10094b48a4d20f9c9e4c291ba5fca289a7f95238"

static const uint8_t *vector_secret = (const uint8_t *)VECTOR_SECRET;
static const size_t vector_len = sizeof(VECTOR_SECRET) - 1;

START_TEST(test_key_matches_the_known_vector)
{
	char key[RCV_KEY_LEN + 1];

	ck_assert_int_eq(rcv_key_for(vector_secret, vector_len, VECTOR_ID, key), 0);
	ck_assert_msg(!strcmp(key, VECTOR_KEY), "expected %s, got %s", VECTOR_KEY, key);
}
END_TEST

START_TEST(test_keys_are_four_groups_of_base32)
{
	char key[RCV_KEY_LEN + 1];
	int i;

	ck_assert_int_eq(rcv_key_for(vector_secret, vector_len, "x", key), 0);
	ck_assert_msg(strlen(key) == RCV_KEY_LEN, "expected %d characters, got '%s'", RCV_KEY_LEN,
		      key);
	for (i = 0; i < RCV_KEY_LEN; i++) {
		if (i % 5 == 4)
			ck_assert_msg(key[i] == '-', "expected '-' at %d of %s", i, key);
		else
			ck_assert_msg((key[i] >= 'A' && key[i] <= 'Z') ||
					      (key[i] >= '2' && key[i] <= '7'),
				      "expected base32 at %d of %s", i, key);
	}
}
END_TEST

START_TEST(test_keys_depend_on_the_id_and_the_secret)
{
	char a[RCV_KEY_LEN + 1], b[RCV_KEY_LEN + 1], c[RCV_KEY_LEN + 1];

	rcv_key_for(vector_secret, vector_len, "student42", a);
	rcv_key_for(vector_secret, vector_len, "student43", b);
	rcv_key_for((const uint8_t *)RCV_SELF_STUDY_SECRET, sizeof(RCV_SELF_STUDY_SECRET) - 1,
		    "student42", c);
	ck_assert_msg(strcmp(a, b), "expected different keys for different IDs, both %s", a);
	ck_assert_msg(strcmp(a, c), "expected the self-study key to differ, both %s", a);
}
END_TEST

START_TEST(test_key_check_forgives_case_dashes_and_spaces_only)
{
	static const struct {
		const char *key;
		bool ok;
	} cases[] = {
		{ VECTOR_KEY, true },
		{ "iiba-ais7-rq4n-p6rq", true },
		{ "IIBAAIS7RQ4NP6RQ", true },
		{ "IIBA AIS7 RQ4N P6RQ", true },
		{ "IIBA-AIS7-RQ4N-P6RR", false },
		{ "IIBA-AIS7-RQ4N", false },
		{ "IIBA-AIS7-RQ4N-P6RQA", false },
		{ "IIBA-AIS7-RQ4N-P6RQ-IIBA-AIS7-RQ4N-P6RQ", false },
		{ "", false },
	};
	size_t i;
	bool ok;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ok = rcv_key_matches(vector_secret, vector_len, VECTOR_ID, cases[i].key);
		ck_assert_msg(ok == cases[i].ok, "key '%s': expected %s, got %s", cases[i].key,
			      cases[i].ok ? "a match" : "no match", ok ? "a match" : "no match");
	}
	ck_assert_msg(!rcv_key_matches(vector_secret, vector_len, "student43", VECTOR_KEY),
		      "expected another ID's key to be refused");
}
END_TEST

/* A temporary file holding TEXT with MODE; its path in BUF. */
static void temp_secret(char *buf, size_t size, const char *text, mode_t mode)
{
	int fd;

	snprintf(buf, size, "/tmp/rdmalab-secret-XXXXXX");
	fd = mkstemp(buf);
	ck_assert_msg(fd >= 0, "mkstemp: %s", strerror(errno));
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

START_TEST(test_secret_files_must_be_private_and_long_enough)
{
	static const struct {
		const char *what, *text;
		mode_t mode;
		int expected; /* a length, or -errno */
	} cases[] = {
		{ "mode 600", VECTOR_SECRET, 0600, (int)sizeof(VECTOR_SECRET) - 1 },
		{ "mode 400 with a newline", VECTOR_SECRET "\n", 0400,
		  (int)sizeof(VECTOR_SECRET) - 1 },
		{ "with a CR LF line end", VECTOR_SECRET "\r\n", 0600,
		  (int)sizeof(VECTOR_SECRET) - 1 },
		{ "readable by others", VECTOR_SECRET, 0604, -EPERM },
		{ "readable by the group", VECTOR_SECRET, 0640, -EPERM },
		{ "writable by the group", VECTOR_SECRET, 0620, -EPERM },
		{ "15 bytes", "123456789012345", 0600, -EINVAL },
		{ "empty", "", 0600, -EINVAL },
	};
	uint8_t secret[RCV_SECRET_MAX];
	char path[64];
	size_t i;
	int ret;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		temp_secret(path, sizeof(path), cases[i].text, cases[i].mode);
		ret = rcv_load_secret(path, secret, sizeof(secret));
		unlink(path);
		ck_assert_msg(ret == cases[i].expected, "%s: expected %d, got %d", cases[i].what,
			      cases[i].expected, ret);
		if (ret > 0)
			ck_assert_msg(!memcmp(secret, VECTOR_SECRET, (size_t)ret),
				      "%s: expected the secret's bytes back", cases[i].what);
	}
	/* Only a line end is dropped: a lone CR at the end is the secret's last byte. */
	temp_secret(path, sizeof(path), VECTOR_SECRET "\r", 0600);
	ret = rcv_load_secret(path, secret, sizeof(secret));
	unlink(path);
	ck_assert_msg(ret == (int)sizeof(VECTOR_SECRET) && secret[ret - 1] == '\r',
		      "a lone CR at the end: expected %d bytes ending in CR, got %d",
		      (int)sizeof(VECTOR_SECRET), ret);
	ret = rcv_load_secret("/nonexistent/secret", secret, sizeof(secret));
	ck_assert_msg(ret == -ENOENT, "missing file: expected %d, got %d", -ENOENT, ret);
	ret = rcv_load_secret("/tmp", secret, sizeof(secret));
	ck_assert_msg(ret == -EINVAL || ret == -EPERM, "a directory: expected an error, got %d",
		      ret);
}
END_TEST

/* Run rdmalab-receiver --secret-file PATH --verify ID KEY; its exit status, output in OUT. */
static int run_verify(const char *path, const char *id, const char *key, char *out, size_t size)
{
	char exe[PATH_MAX], bin[PATH_MAX + 32];
	int pipefd[2], status;
	ssize_t n;
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
		dup2(pipefd[1], STDERR_FILENO);
		execl(bin, bin, "--secret-file", path, "--verify", id, key, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	n = read(pipefd[0], out, size - 1);
	out[n > 0 ? n : 0] = '\0';
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

START_TEST(test_verify_checks_a_key_offline)
{
	char path[64], out[512];
	int rc;

	temp_secret(path, sizeof(path), VECTOR_SECRET, 0600);
	rc = run_verify(path, VECTOR_ID, VECTOR_KEY, out, sizeof(out));
	ck_assert_msg(rc == 0 && !strncmp(out, "OK:", 3),
		      "good key: expected exit 0 and 'OK:', "
		      "got %d and '%s'",
		      rc, out);
	rc = run_verify(path, VECTOR_ID, "AAAA-AAAA-AAAA-AAAA", out, sizeof(out));
	ck_assert_msg(rc == 1 && !strncmp(out, "BAD:", 4),
		      "wrong key: expected exit 1 and "
		      "'BAD:', got %d and '%s'",
		      rc, out);
	chmod(path, 0644);
	rc = run_verify(path, VECTOR_ID, VECTOR_KEY, out, sizeof(out));
	unlink(path);
	ck_assert_msg(rc == 2 && strstr(out, "chmod 600"),
		      "open secret file: expected exit 2 "
		      "and a chmod hint, got %d and '%s'",
		      rc, out);
}
END_TEST

START_TEST(test_the_logged_key_hash_is_that_of_its_letters)
{
	static const char *const spellings[] = { VECTOR_KEY, "iiba-ais7-rq4n-p6rq",
						 "IIBA AIS7 RQ4N P6RQ" };
	char hex[65];
	size_t i;

	for (i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
		ck_assert_int_eq(rcv_key_sha256(spellings[i], hex), 0);
		ck_assert_msg(!strcmp(hex, VECTOR_KEY_SHA256), "%s: expected %s, got %s",
			      spellings[i], VECTOR_KEY_SHA256, hex);
	}
	ck_assert_int_eq(rcv_key_sha256("IIBA-AIS7-RQ4N-P6RA", hex), 0);
	ck_assert_msg(strcmp(hex, VECTOR_KEY_SHA256), "another key, expected another hash");
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("receiver: keys and secrets");
	TCase *tc = tcase_create("key");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_UNIT);
	tcase_add_test(tc, test_key_matches_the_known_vector);
	tcase_add_test(tc, test_keys_are_four_groups_of_base32);
	tcase_add_test(tc, test_keys_depend_on_the_id_and_the_secret);
	tcase_add_test(tc, test_key_check_forgives_case_dashes_and_spaces_only);
	tcase_add_test(tc, test_secret_files_must_be_private_and_long_enough);
	tcase_add_test(tc, test_verify_checks_a_key_offline);
	tcase_add_test(tc, test_the_logged_key_hash_is_that_of_its_letters);
	suite_add_tcase(s, tc);
	return s;
}
