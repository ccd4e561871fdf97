/* test_result.c: Lab 3 steps 5 to 7: DONE and RESULT, the student ID, the key. */
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "reference.h"

static const char *const small_windows[] = { "--fault-window", "64K", NULL };
static const char *const bad_hash[] = { "--fault-bad-hash", NULL };

/* Step 5 */

/* Send SIZE bytes by the test's steps (FLIP: a wrong hash), then finish with the lab's code. */
static int finish_with_lab_code(const char *const *opts, uint64_t size, bool flip,
				struct rl_msg_result *result, char *line, size_t len)
{
	struct rf_receiver rf;
	struct ref_file rfile;
	struct lab3_conn c;
	int ret;

	ref_start(&rf, opts);
	ref_make_file(&rfile, size);
	ref_connect(&c, &rf);
	ref_send_file_info(&c, &rfile, flip);
	ref_register(&c, &rfile);
	ref_send_windows(&c, &rfile);
	memcpy(rfile.f.sha256, rfile.sha256, 32);
	memset(result, 0xee, sizeof(*result));
	ret = lab3_finish(&c, &rfile.f, result);
	ref_finish_line(&rf, &c, &rfile, line, len);
	ref_drop_file(&rfile);
	rf_stop(&rf);
	return ret;
}

RL_TEST(finish_reports_good_when_every_byte_arrived, .step = 5, .points = 2)
{
	static const uint64_t sizes[] = { 0, 1, 300001 };
	struct rl_msg_result result;
	char line[1024];
	size_t i;
	int ret;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		ret = finish_with_lab_code(small_windows, sizes[i], false, &result, line,
					   sizeof(line));
		ck_assert_msg(ret == 0, "file of %llu bytes: expected 0, got %d (%s)",
			      (unsigned long long)sizes[i], ret, strerror(-ret));
		ck_assert_msg(
			result.good == 1 && result.received == sizes[i],
			"file of %llu bytes: expected the RESULT copied out (good, %llu bytes), "
			"got good %u, %llu bytes",
			(unsigned long long)sizes[i], (unsigned long long)sizes[i], result.good,
			(unsigned long long)result.received);
		ck_assert_msg(ref_line_step(line) == 5 && strstr(line, "\"hash_ok\":true"),
			      "expected step 5 (result) and hash_ok true, got %s", line);
	}
}
END_TEST

RL_TEST(finish_reports_bad_with_ebadmsg_when_the_hashes_differ, .step = 5, .points = 2)
{
	struct rl_msg_result result;
	char line[1024];
	int ret = finish_with_lab_code(NULL, 4097, true, &result, line, sizeof(line));

	ck_assert_msg(ret == -EBADMSG,
		      "expected -EBADMSG after a wrong FILE_INFO hash, got %d (%s)", ret,
		      strerror(-ret));
	ck_assert_msg(result.good == 0 && result.received == 4097,
		      "expected the RESULT copied out (bad, 4097 bytes), got good %u, %llu bytes",
		      result.good, (unsigned long long)result.received);
	ck_assert_msg(strstr(line, "\"hash_ok\":false"), "expected hash_ok false, got %s", line);
}
END_TEST

RL_TEST(finish_reports_bad_when_the_receiver_says_bad, .step = 5, .points = 1)
{
	struct rl_msg_result result;
	char line[1024];
	int ret = finish_with_lab_code(bad_hash, 4097, false, &result, line, sizeof(line));

	ck_assert_msg(ret == -EBADMSG, "expected -EBADMSG under --fault-bad-hash, got %d (%s)", ret,
		      strerror(-ret));
}
END_TEST

/* Step 6 */

RL_TEST(student_id_is_the_one_the_receiver_logs, .step = 6, .points = 2)
{
	struct rf_receiver rf;
	struct ref_file rfile;
	struct lab3_conn c;
	struct rl_msg_result result;
	struct rl_msg m;
	char line[1024];
	int ret;

	ref_start(&rf, NULL);
	ref_make_file(&rfile, 4097);
	ref_connect(&c, &rf);
	ref_transfer(&c, &rfile);
	ref_done(&c, &result);
	ret = lab3_send_student_id(&c, "s1234567");
	ck_assert_msg(ret == 0, "expected lab3_send_student_id to return 0, got %d (%s)", ret,
		      strerror(-ret));
	ck_assert_msg(lab3_wait_msg(&c, RL_MSG_KEY, &m) == 0, "expected a KEY after STUDENT_ID");
	ref_finish_line(&rf, &c, &rfile, line, sizeof(line));
	ck_assert_msg(strstr(line, "\"student_id\":\"s1234567\"") && ref_line_step(line) == 7,
		      "expected student_id s1234567 and step 7, got %s", line);
	ref_drop_file(&rfile);
	rf_stop(&rf);
}
END_TEST

RL_TEST(an_id_the_receiver_would_refuse_is_not_sent, .step = 6, .points = 1)
{
	static const char *const bad[] = {
		"",
		"ab cd",
		"tab\there",
		"x23456789012345678901234567890123456789012345678901234567890123456",
	};
	struct rf_receiver rf;
	struct ref_file rfile;
	struct lab3_conn c;
	struct rl_msg_result result;
	char line[1024];
	size_t i;
	int ret;

	ref_start(&rf, NULL);
	ref_make_file(&rfile, 1);
	ref_connect(&c, &rf);
	ref_transfer(&c, &rfile);
	ref_done(&c, &result);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ret = lab3_send_student_id(&c, bad[i]);
		ck_assert_msg(ret == -EINVAL, "ID \"%s\": expected -EINVAL, got %d (%s)", bad[i],
			      ret, strerror(-ret));
	}
	ref_finish_line(&rf, &c, &rfile, line, sizeof(line));
	ck_assert_msg(ref_line_step(line) == 5,
		      "expected step 5 (nothing sent after RESULT), got %s", line);
	ref_drop_file(&rfile);
	rf_stop(&rf);
}
END_TEST

/* Step 7 */

RL_TEST(key_is_the_one_the_receiver_computes_for_the_id, .step = 7, .points = 2)
{
	struct rf_receiver rf;
	struct ref_file rfile;
	struct lab3_conn c;
	struct rl_msg_result result;
	char key[RL_PROTO_MAX_KEY + 1] = "", want[RCV_KEY_LEN + 1], line[1024];
	int ret;

	ref_start(&rf, small_windows);
	ref_make_file(&rfile, 300001);
	ref_connect(&c, &rf);
	ref_transfer(&c, &rfile);
	ref_done(&c, &result);
	ref_send_id(&c, "s7654321");
	ret = lab3_wait_key(&c, key);
	ck_assert_msg(ret == 0, "expected lab3_wait_key to return 0, got %d (%s)", ret,
		      strerror(-ret));
	rf_expected_key(&rf, "s7654321", want);
	ck_assert_msg(!strcmp(key, want), "expected key %s, got \"%s\"", want, key);
	/* --verify drops one trailing newline of the secret file: skip it for such a secret. */
	if (rf.secret[rf.secret_len - 1] != '\n')
		ck_assert_msg(ref_verify(&rf, "s7654321", key) == 0,
			      "expected rdmalab-receiver --verify to accept %s", key);
	ref_finish_line(&rf, &c, &rfile, line, sizeof(line));
	ck_assert_msg(strstr(line, "\"key_issued\":true"), "expected key_issued true, got %s",
		      line);
	ref_drop_file(&rfile);
	rf_stop(&rf);
}
END_TEST

RL_TEST(wait_key_reports_the_receivers_error_instead_of_a_key, .step = 7, .points = 1)
{
	struct rf_receiver rf;
	struct ref_file rfile;
	struct lab3_conn c;
	struct rl_msg_result result;
	char key[RL_PROTO_MAX_KEY + 1] = "", line[1024];
	int ret;

	ref_start(&rf, bad_hash);
	ref_make_file(&rfile, 4097);
	ref_connect(&c, &rf);
	ref_transfer(&c, &rfile);
	ref_done(&c, &result);
	/* Asking anyway after RESULT bad: the receiver answers ERROR not-verified. */
	ref_send_id(&c, "s7654321");
	ret = lab3_wait_key(&c, key);
	ck_assert_msg(ret == -ECONNABORTED, "expected -ECONNABORTED (an ERROR came), got %d (%s)",
		      ret, strerror(-ret));
	ck_assert_msg(key[0] == '\0', "expected no key, got \"%s\"", key);
	ref_finish_line(&rf, &c, &rfile, line, sizeof(line));
	ref_drop_file(&rfile);
	rf_stop(&rf);
}
END_TEST
