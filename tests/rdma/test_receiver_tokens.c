/*
 * test_receiver_tokens.c: a class receiver (--tokens) refuses a sender
 * without its token or with another's, with ERROR bad-id, and gives the
 * key of the ID alone to the sender that sends ID:TOKEN.
 */
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "receiver_fixture.h"

/* Send a small file as SENT; R says how it ended. */
static int send_as(struct rf_receiver *rf, const char *sent, struct rs_result *r)
{
	static uint8_t data[5000];
	struct rs_opts o;

	rf_fill(data, sizeof(data), 42);
	o = rf_sender(rf, data, sizeof(data), sent);
	return rs_send_file(&o, r);
}

/* Expect R to have been refused with ERROR bad-id saying WHY, logged at step 6 for ID. */
static void expect_refused(struct rf_receiver *rf, const struct rs_result *r, const char *what,
			   const char *why, const char *id)
{
	char line[1024], want[96];

	ck_assert_msg(r->got_error && r->error_code == RL_PERR_BAD_ID && strstr(r->error_text, why),
		      "%s: expected ERROR bad-id saying '%s', got: %s", what, why, r->what);
	ck_assert_msg(rf_wait_line(rf, r->peer, rf_timeout_ms(5000), line, sizeof(line)),
		      "%s: no results line for %s", what, r->peer);
	snprintf(want, sizeof(want), "\"student_id\":\"%s\",", id);
	ck_assert_msg(strstr(line, want) && strstr(line, "\"step\":6,") &&
			      strstr(line, "\"key_issued\":false"),
		      "%s: expected a line for %s at step 6 with no key, got %s", what, id, line);
}

START_TEST(test_only_the_right_token_earns_the_key)
{
	static const char *const opts[] = { "--tokens", NULL };
	char token[RCV_TOKEN_LEN + 1], other[RCV_TOKEN_LEN + 1], sent[RL_PROTO_MAX_ID + 1];
	char key[RCV_KEY_LEN + 1], line[1024], *results;
	struct rf_receiver rf;
	struct rs_result r;

	rf_start(&rf, opts);
	ck_assert_int_eq(rcv_token_for(rf.secret, rf.secret_len, "s-class", token), 0);
	ck_assert_int_eq(rcv_token_for(rf.secret, rf.secret_len, "s-friend", other), 0);

	ck_assert_msg(send_as(&rf, "s-class", &r) != 0, "no token: expected no key, got %s", r.key);
	expect_refused(&rf, &r, "no token", "no token: send ID:TOKEN", "s-class");

	snprintf(sent, sizeof(sent), "s-class:%s", other);
	ck_assert_msg(send_as(&rf, sent, &r) != 0, "a friend's token: expected no key, got %s",
		      r.key);
	expect_refused(&rf, &r, "a friend's token", "wrong token for 's-class'", "s-class");

	snprintf(sent, sizeof(sent), "s-class:%s", token);
	ck_assert_msg(send_as(&rf, sent, &r) == 0, "its own token: expected a key, got: %s",
		      r.what);
	rf_expected_key(&rf, "s-class", key);
	ck_assert_msg(!strcmp(r.key, key), "expected the key of the ID alone, %s, got %s", key,
		      r.key);
	ck_assert_msg(rf_wait_line(&rf, r.peer, 0, line, sizeof(line)) &&
			      strstr(line, "\"student_id\":\"s-class\",") &&
			      strstr(line, "\"key_issued\":true"),
		      "expected a line for s-class with the key issued when it arrived");
	results = rf_results(&rf);
	ck_assert_msg(!strstr(results, token), "expected no token in the results log");
	free(results);
	rf_stop(&rf);
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("receiver: class mode tokens");
	TCase *tc = tcase_create("tokens");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_RDMA);
	tcase_add_test(tc, test_only_the_right_token_earns_the_key);
	suite_add_tcase(s, tc);
	return s;
}
