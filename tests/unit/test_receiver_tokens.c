/*
 * test_receiver_tokens.c: in class mode a key is only for "ID:TOKEN" with
 * ID's own token; tokens match a known vector, and fit IDs up to the limit.
 */
#include <errno.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "../harness.h"
#include "receiver.h"

/*
 * The known vector, computed apart from this code:
 *   printf 'token s1' | openssl dgst -sha256 -hmac 'correct horse battery staple' | cut -c1-12
 * (after openssl's "SHA2-256(stdin)= " prefix).
 */
#define VECTOR_SECRET "correct horse battery staple"
#define VECTOR_ID "s1"
#define VECTOR_TOKEN "3f4357792960"

static const uint8_t *vector_secret = (const uint8_t *)VECTOR_SECRET;
static const size_t vector_len = sizeof(VECTOR_SECRET) - 1;

/* rcv_token_check() of SENT under the vector's secret; the ID it found in ID. */
static int check(const char *sent, char id[RL_PROTO_MAX_ID + 1])
{
	return rcv_token_check(vector_secret, vector_len, sent, id);
}

START_TEST(test_token_matches_the_known_vector)
{
	char token[RCV_TOKEN_LEN + 1];

	ck_assert_int_eq(rcv_token_for(vector_secret, vector_len, VECTOR_ID, token), 0);
	ck_assert_msg(!strcmp(token, VECTOR_TOKEN), "expected %s, got %s", VECTOR_TOKEN, token);
}
END_TEST

START_TEST(test_the_right_token_is_accepted_in_either_case)
{
	char id[RL_PROTO_MAX_ID + 1];
	int ret;

	ret = check(VECTOR_ID ":" VECTOR_TOKEN, id);
	ck_assert_msg(ret == 0, "s1 with its token: expected 0, got %d", ret);
	ck_assert_msg(!strcmp(id, VECTOR_ID), "expected the ID alone, 's1', got '%s'", id);
	ret = check(VECTOR_ID ":3F4357792960", id);
	ck_assert_msg(ret == 0, "s1 with its token in upper case: expected 0, got %d", ret);
}
END_TEST

START_TEST(test_a_missing_token_is_refused_as_missing)
{
	static const char *const cases[] = { "s1", "s1:", (":" VECTOR_TOKEN), ":" };
	char id[RL_PROTO_MAX_ID + 1];
	size_t i;
	int ret;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ret = check(cases[i], id);
		ck_assert_msg(ret == -ENOKEY, "'%s': expected -ENOKEY (no token), got %d", cases[i],
			      ret);
	}
	check("s1", id);
	ck_assert_msg(!strcmp(id, "s1"), "no token: expected the ID 's1' for the log, got '%s'",
		      id);
}
END_TEST

START_TEST(test_a_wrong_token_is_refused)
{
	char token[RCV_TOKEN_LEN + 1], sent[RL_PROTO_MAX_ID + 1], id[RL_PROTO_MAX_ID + 1];
	static const char *const cases[] = {
		"s1:3f4357792961",                   /* one digit off */
		"s1:3f435779296",                    /* one digit short */
		"s1:3f43577929600",                  /* one digit more */
		"s1:3f435779296g",                   /* not hex */
		"s2:" VECTOR_TOKEN,                  /* another student's ID with s1's token */
		"s1:" VECTOR_TOKEN ":" VECTOR_TOKEN, /* the last ':' splits: ID 's1:3f43...' */
	};
	size_t i;
	int ret;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ret = check(cases[i], id);
		ck_assert_msg(ret == -EKEYREJECTED, "'%s': expected -EKEYREJECTED, got %d",
			      cases[i], ret);
	}
	check("s2:" VECTOR_TOKEN, id);
	ck_assert_msg(!strcmp(id, "s2"), "expected the ID claimed, 's2', for the log, got '%s'",
		      id);
	/* Under another secret, s1's token is another. */
	ck_assert_int_eq(rcv_token_for((const uint8_t *)"another secret, 16+", 19, "s1", token), 0);
	snprintf(sent, sizeof(sent), "s1:%s", token);
	ret = check(sent, id);
	ck_assert_msg(ret == -EKEYREJECTED,
		      "a token made under another secret: expected %d, got %d", -EKEYREJECTED, ret);
}
END_TEST

START_TEST(test_the_last_separator_splits_so_ids_may_hold_one)
{
	char token[RCV_TOKEN_LEN + 1], sent[RL_PROTO_MAX_ID + 1], id[RL_PROTO_MAX_ID + 1];
	int ret;

	ck_assert_int_eq(rcv_token_for(vector_secret, vector_len, "cs101:s1", token), 0);
	snprintf(sent, sizeof(sent), "cs101:s1:%s", token);
	ret = check(sent, id);
	ck_assert_msg(ret == 0 && !strcmp(id, "cs101:s1"),
		      "'%s': expected 0 and the ID 'cs101:s1', got %d and '%s'", sent, ret, id);
}
END_TEST

START_TEST(test_an_id_at_the_limit_fits_with_its_token)
{
	char longest[RCV_CLASS_MAX_ID + 1], token[RCV_TOKEN_LEN + 1];
	char sent[RL_PROTO_MAX_ID + 1], id[RL_PROTO_MAX_ID + 1];
	int ret;

	ck_assert_int_eq(RCV_CLASS_MAX_ID, 51);
	memset(longest, 'x', RCV_CLASS_MAX_ID);
	longest[RCV_CLASS_MAX_ID] = '\0';
	ck_assert_int_eq(rcv_token_for(vector_secret, vector_len, longest, token), 0);
	ret = snprintf(sent, sizeof(sent), "%s:%s", longest, token);
	ck_assert_msg(ret == RL_PROTO_MAX_ID && rl_proto_id_valid(sent, strlen(sent)),
		      "an ID of 51 with its token: expected a valid STUDENT_ID of 64, got %d", ret);
	ret = check(sent, id);
	ck_assert_msg(ret == 0 && !strcmp(id, longest),
		      "an ID of 51 with its token: expected 0 and the ID, got %d", ret);
}
END_TEST

START_TEST(test_a_key_does_not_give_away_the_token)
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	char hex[RCV_TOKEN_LEN + 1];
	unsigned int n = 0;

	/*
	 * A key is the first 80 bits of HMAC of the ID: a token cut from the same
	 * HMAC would be in every key a receiver without --tokens hands out. A
	 * token is HMAC of "token ID", and no ID holds a space.
	 */
	ck_assert_ptr_nonnull(HMAC(EVP_sha256(), vector_secret, (int)vector_len,
				   (const unsigned char *)VECTOR_ID, 2, mac, &n));
	rcv_hex(mac, RCV_TOKEN_LEN / 2, hex);
	ck_assert_msg(strcmp(hex, VECTOR_TOKEN) != 0,
		      "expected the token to differ from the head of the key's HMAC, %s", hex);
	ck_assert_msg(!rl_proto_id_valid("token s1", 8), "expected no ID to hold a space");
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("receiver: tokens");
	TCase *tc = tcase_create("token");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_UNIT);
	tcase_add_test(tc, test_token_matches_the_known_vector);
	tcase_add_test(tc, test_the_right_token_is_accepted_in_either_case);
	tcase_add_test(tc, test_a_missing_token_is_refused_as_missing);
	tcase_add_test(tc, test_a_wrong_token_is_refused);
	tcase_add_test(tc, test_the_last_separator_splits_so_ids_may_hold_one);
	tcase_add_test(tc, test_an_id_at_the_limit_fits_with_its_token);
	tcase_add_test(tc, test_a_key_does_not_give_away_the_token);
	suite_add_tcase(s, tc);
	return s;
}
