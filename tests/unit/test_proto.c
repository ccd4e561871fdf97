/* test_proto.c: every Lab 3 message round-trips, and every bad byte string is refused by name. */
#include <errno.h>
#include <string.h>

#include "../harness.h"
#include "rdmalab.h"

/* One valid message of each type, for the tests that walk them all. */
static struct rl_msg sample(enum rl_msg_type type)
{
	struct rl_msg m = { .type = type };

	switch (type) {
	case RL_MSG_FILE_INFO:
		m.u.file_info.size = 123456789;
		memset(m.u.file_info.sha256, 0xa5, 32);
		break;
	case RL_MSG_WINDOW:
		m.u.window = (struct rl_msg_window){ 3, 196608, 65536, 0x7f0012345000ULL, 0x1234 };
		break;
	case RL_MSG_WINDOW_DONE:
		m.u.window_done = (struct rl_msg_window_done){ 3, 65536 };
		break;
	case RL_MSG_DONE:
		break;
	case RL_MSG_RESULT:
		m.u.result.good = 1;
		m.u.result.received = 42;
		memset(m.u.result.sha256, 0x3c, 32);
		break;
	case RL_MSG_STUDENT_ID:
		strcpy(m.u.student_id.id, "s1234567");
		break;
	case RL_MSG_KEY:
		strcpy(m.u.key.key, "ABCD-EFGH-IJKL-MNOP");
		break;
	case RL_MSG_ERROR:
		m.u.error.code = RL_PERR_BUSY;
		strcpy(m.u.error.text, "receiver busy: 64 connections open");
		break;
	}
	return m;
}

/* Encode a valid message of TYPE into BUF; its length. */
static int encode_sample(enum rl_msg_type type, uint8_t *buf)
{
	struct rl_msg m = sample(type);
	int n = rl_proto_encode(buf, RL_PROTO_MAX_MSG, &m);

	ck_assert_msg(n >= RL_PROTO_HEADER_LEN, "%s: expected an encoded length, got %d",
		      rl_msg_type_name(type), n);
	return n;
}

/* A header with chosen fields, and BODY_LEN zero bytes of body. */
static size_t raw_message(uint8_t *buf, uint32_t magic, uint8_t version, uint8_t type,
			  uint16_t body_len_field, size_t body_len)
{
	struct rl_wire w;

	memset(buf, 0, RL_PROTO_MAX_MSG + 8);
	rl_wire_writer(&w, buf, RL_PROTO_MAX_MSG + 8);
	rl_wire_put_u32(&w, magic);
	rl_wire_put_u8(&w, version);
	rl_wire_put_u8(&w, type);
	rl_wire_put_u16(&w, body_len_field);
	return RL_PROTO_HEADER_LEN + body_len;
}

START_TEST(test_every_message_type_round_trips)
{
	uint8_t buf[RL_PROTO_MAX_MSG];
	struct rl_msg in, out;
	enum rl_proto_error err;
	int type, n;

	for (type = RL_MSG_FILE_INFO; type <= RL_MSG_ERROR; type++) {
		in = sample(type);
		n = encode_sample(type, buf);
		err = rl_proto_decode(buf, (size_t)n, &out);
		ck_assert_msg(err == RL_PERR_NONE, "%s: expected to decode, got %s",
			      rl_msg_type_name(type), rl_proto_error_name(err));
		ck_assert_msg(out.type == in.type, "%s: expected type %d, got %d",
			      rl_msg_type_name(type), in.type, out.type);
		ck_assert_msg(!memcmp(&out.u, &in.u, sizeof(in.u)),
			      "%s: decoded fields differ from the encoded ones",
			      rl_msg_type_name(type));
	}
}
END_TEST

START_TEST(test_file_info_has_the_documented_byte_layout)
{
	static const uint8_t head[] = {
		0x52, 0x4c, 0x30, 0x33,                         /* magic "RL03" */
		0x01,                                           /* version */
		0x01,                                           /* type FILE_INFO */
		0x00, 0x28,                                     /* body: 40 bytes */
		0x00, 0x00, 0x00, 0x00, 0x07, 0x5b, 0xcd, 0x15, /* size 123456789 */
	};
	uint8_t buf[RL_PROTO_MAX_MSG];
	int n = encode_sample(RL_MSG_FILE_INFO, buf);
	size_t i;

	ck_assert_msg(n == 48, "expected 48 bytes, got %d", n);
	for (i = 0; i < sizeof(head); i++)
		ck_assert_msg(buf[i] == head[i], "byte %zu: expected 0x%02x, got 0x%02x", i,
			      head[i], buf[i]);
	ck_assert_msg(buf[16] == 0xa5 && buf[47] == 0xa5, "expected the hash in bytes 16..47");
}
END_TEST

START_TEST(test_per_type_decoders_read_their_own_type)
{
	uint8_t buf[RL_PROTO_MAX_MSG];
	struct rl_msg_file_info fi;
	struct rl_msg_window win;
	struct rl_msg_window_done wd;
	struct rl_msg_result res;
	struct rl_msg_student_id sid;
	struct rl_msg_key key;
	struct rl_msg_error er;
	int n;

	n = encode_sample(RL_MSG_FILE_INFO, buf);
	ck_assert_int_eq(rl_proto_decode_file_info(buf, n, &fi), RL_PERR_NONE);
	ck_assert_msg(fi.size == 123456789, "expected size 123456789, got %llu",
		      (unsigned long long)fi.size);
	n = encode_sample(RL_MSG_WINDOW, buf);
	ck_assert_int_eq(rl_proto_decode_window(buf, n, &win), RL_PERR_NONE);
	ck_assert_msg(win.rkey == 0x1234 && win.addr == 0x7f0012345000ULL,
		      "expected rkey 0x1234 at 0x7f0012345000");
	n = encode_sample(RL_MSG_WINDOW_DONE, buf);
	ck_assert_int_eq(rl_proto_decode_window_done(buf, n, &wd), RL_PERR_NONE);
	n = encode_sample(RL_MSG_DONE, buf);
	ck_assert_int_eq(n, RL_PROTO_HEADER_LEN);
	ck_assert_int_eq(rl_proto_decode_done(buf, n), RL_PERR_NONE);
	n = encode_sample(RL_MSG_RESULT, buf);
	ck_assert_int_eq(rl_proto_decode_result(buf, n, &res), RL_PERR_NONE);
	n = encode_sample(RL_MSG_STUDENT_ID, buf);
	ck_assert_int_eq(rl_proto_decode_student_id(buf, n, &sid), RL_PERR_NONE);
	ck_assert_str_eq(sid.id, "s1234567");
	n = encode_sample(RL_MSG_KEY, buf);
	ck_assert_int_eq(rl_proto_decode_key(buf, n, &key), RL_PERR_NONE);
	ck_assert_str_eq(key.key, "ABCD-EFGH-IJKL-MNOP");
	n = encode_sample(RL_MSG_ERROR, buf);
	ck_assert_int_eq(rl_proto_decode_error(buf, n, &er), RL_PERR_NONE);
	ck_assert_int_eq(er.code, RL_PERR_BUSY);
}
END_TEST

START_TEST(test_a_valid_message_of_another_type_is_bad_state)
{
	uint8_t buf[RL_PROTO_MAX_MSG];
	struct rl_msg_window win;
	int n = encode_sample(RL_MSG_DONE, buf);
	enum rl_proto_error err = rl_proto_decode_window(buf, n, &win);

	ck_assert_msg(err == RL_PERR_BAD_STATE, "expected bad-state, got %s",
		      rl_proto_error_name(err));
}
END_TEST

START_TEST(test_header_errors_are_named)
{
	static const struct {
		const char *what;
		uint32_t magic;
		uint8_t version, type;
		uint16_t body_field;
		size_t body;
		enum rl_proto_error expected;
	} cases[] = {
		{ "wrong magic", 0x12345678, 1, RL_MSG_DONE, 0, 0, RL_PERR_BAD_MAGIC },
		{ "magic in little-endian", 0x33304c52, 1, RL_MSG_DONE, 0, 0, RL_PERR_BAD_MAGIC },
		{ "version 0", RL_PROTO_MAGIC, 0, RL_MSG_DONE, 0, 0, RL_PERR_BAD_VERSION },
		{ "version 2", RL_PROTO_MAGIC, 2, RL_MSG_DONE, 0, 0, RL_PERR_BAD_VERSION },
		{ "type 0", RL_PROTO_MAGIC, 1, 0, 0, 0, RL_PERR_BAD_TYPE },
		{ "type 9", RL_PROTO_MAGIC, 1, 9, 0, 0, RL_PERR_BAD_TYPE },
		{ "type 255", RL_PROTO_MAGIC, 1, 255, 0, 0, RL_PERR_BAD_TYPE },
		{ "body length says more than sent", RL_PROTO_MAGIC, 1, RL_MSG_DONE, 4, 0,
		  RL_PERR_MALFORMED },
		{ "body length says less than sent", RL_PROTO_MAGIC, 1, RL_MSG_DONE, 0, 4,
		  RL_PERR_MALFORMED },
		{ "DONE with a body", RL_PROTO_MAGIC, 1, RL_MSG_DONE, 4, 4, RL_PERR_MALFORMED },
		{ "FILE_INFO one byte short", RL_PROTO_MAGIC, 1, RL_MSG_FILE_INFO, 39, 39,
		  RL_PERR_MALFORMED },
		{ "WINDOW_DONE one byte long", RL_PROTO_MAGIC, 1, RL_MSG_WINDOW_DONE, 9, 9,
		  RL_PERR_MALFORMED },
		{ "longer than the largest message", RL_PROTO_MAGIC, 1, RL_MSG_ERROR, 249, 249,
		  RL_PERR_MALFORMED },
	};
	uint8_t buf[RL_PROTO_MAX_MSG + 8];
	enum rl_proto_error err;
	struct rl_msg m;
	size_t i, len;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		len = raw_message(buf, cases[i].magic, cases[i].version, cases[i].type,
				  cases[i].body_field, cases[i].body);
		err = rl_proto_decode(buf, len, &m);
		ck_assert_msg(err == cases[i].expected, "%s: expected %s, got %s", cases[i].what,
			      rl_proto_error_name(cases[i].expected), rl_proto_error_name(err));
	}
}
END_TEST

START_TEST(test_every_truncation_of_every_message_is_refused)
{
	uint8_t buf[RL_PROTO_MAX_MSG];
	enum rl_proto_error err;
	struct rl_msg m;
	int type, n, len;

	ck_assert_int_eq(rl_proto_decode(NULL, 0, &m), RL_PERR_MALFORMED);
	for (type = RL_MSG_FILE_INFO; type <= RL_MSG_ERROR; type++) {
		n = encode_sample(type, buf);
		for (len = 0; len < n; len++) {
			err = rl_proto_decode(buf, (size_t)len, &m);
			ck_assert_msg(err != RL_PERR_NONE,
				      "%s cut to %d of %d bytes: expected an error",
				      rl_msg_type_name(type), len, n);
		}
	}
}
END_TEST

/* Decode a body of BODY_LEN bytes (BODY) of TYPE behind a correct header. */
static enum rl_proto_error decode_body(uint8_t type, const void *body, size_t body_len)
{
	uint8_t buf[RL_PROTO_MAX_MSG + 8];
	struct rl_msg m;
	size_t len = raw_message(buf, RL_PROTO_MAGIC, RL_PROTO_VERSION, type, body_len, body_len);

	memcpy(buf + RL_PROTO_HEADER_LEN, body, body_len);
	return rl_proto_decode(buf, len, &m);
}

START_TEST(test_field_values_out_of_range_are_refused)
{
	uint8_t body[RL_PROTO_MAX_MSG];
	enum rl_proto_error err;
	struct rl_wire w;

	/* A file one byte over the protocol's largest. */
	rl_wire_writer(&w, body, sizeof(body));
	rl_wire_put_u64(&w, RL_PROTO_MAX_FILE + 1);
	err = decode_body(RL_MSG_FILE_INFO, body, 40);
	ck_assert_msg(err == RL_PERR_TOO_LARGE, "file past the limit: expected too-large, got %s",
		      rl_proto_error_name(err));

	/* A window of 0 bytes. */
	memset(body, 0, sizeof(body));
	err = decode_body(RL_MSG_WINDOW, body, 28);
	ck_assert_msg(err == RL_PERR_MALFORMED, "empty window: expected malformed, got %s",
		      rl_proto_error_name(err));

	/* A window that ends past the largest file. */
	rl_wire_writer(&w, body, sizeof(body));
	rl_wire_put_u32(&w, 0);
	rl_wire_put_u64(&w, RL_PROTO_MAX_FILE);
	rl_wire_put_u32(&w, 1);
	err = decode_body(RL_MSG_WINDOW, body, 28);
	ck_assert_msg(err == RL_PERR_MALFORMED, "window past the end: expected malformed, got %s",
		      rl_proto_error_name(err));

	/* A verdict that is neither 0 nor 1. */
	memset(body, 0, sizeof(body));
	body[0] = 2;
	err = decode_body(RL_MSG_RESULT, body, 41);
	ck_assert_msg(err == RL_PERR_MALFORMED, "verdict 2: expected malformed, got %s",
		      rl_proto_error_name(err));
}
END_TEST

START_TEST(test_student_ids_are_checked)
{
	static const struct {
		const char *what;
		uint8_t len_field;
		const char *bytes;
		size_t n;
		enum rl_proto_error expected;
	} cases[] = {
		{ "plain ID", 8, "s1234567", 8, RL_PERR_NONE },
		{ "empty ID", 0, "", 0, RL_PERR_BAD_ID },
		{ "ID with a space", 5, "ab cd", 5, RL_PERR_BAD_ID },
		{ "ID with a newline", 3, "ab\n", 3, RL_PERR_BAD_ID },
		{ "ID with a byte past ASCII", 3, "ab\xc3", 3, RL_PERR_BAD_ID },
		{ "ID of 65 characters", 65,
		  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 65,
		  RL_PERR_BAD_ID },
		{ "length field larger than the bytes", 9, "s1234567", 8, RL_PERR_MALFORMED },
		{ "length field smaller than the bytes", 7, "s1234567", 8, RL_PERR_MALFORMED },
	};
	uint8_t body[RL_PROTO_MAX_MSG];
	enum rl_proto_error err;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		body[0] = cases[i].len_field;
		memcpy(body + 1, cases[i].bytes, cases[i].n);
		err = decode_body(RL_MSG_STUDENT_ID, body, 1 + cases[i].n);
		ck_assert_msg(err == cases[i].expected, "%s: expected %s, got %s", cases[i].what,
			      rl_proto_error_name(cases[i].expected), rl_proto_error_name(err));
	}
	ck_assert_msg(rl_proto_id_valid("a", 1), "expected 'a' to be a valid ID");
	ck_assert_msg(!rl_proto_id_valid("a\tb", 3), "expected a tab to make the ID invalid");
}
END_TEST

START_TEST(test_keys_and_error_texts_are_checked)
{
	uint8_t body[RL_PROTO_MAX_MSG];
	enum rl_proto_error err;

	body[0] = 0;
	err = decode_body(RL_MSG_KEY, body, 1);
	ck_assert_msg(err == RL_PERR_MALFORMED, "empty key: expected malformed, got %s",
		      rl_proto_error_name(err));
	memcpy(body,
	       "\x03"
	       "a b",
	       4);
	err = decode_body(RL_MSG_KEY, body, 4);
	ck_assert_msg(err == RL_PERR_MALFORMED, "key with a space: expected malformed, got %s",
		      rl_proto_error_name(err));

	memcpy(body, "\x00\x07\x00", 3);
	err = decode_body(RL_MSG_ERROR, body, 3);
	ck_assert_msg(err == RL_PERR_NONE, "error without text: expected none, got %s",
		      rl_proto_error_name(err));
	memcpy(body,
	       "\x00\x07\x02"
	       "a\x01",
	       5);
	err = decode_body(RL_MSG_ERROR, body, 5);
	ck_assert_msg(err == RL_PERR_MALFORMED,
		      "error text with a control byte: expected "
		      "malformed, got %s",
		      rl_proto_error_name(err));
	memset(body, 'x', sizeof(body));
	memcpy(body, "\x00\x07\xa1", 3);
	err = decode_body(RL_MSG_ERROR, body, 3 + 161);
	ck_assert_msg(err == RL_PERR_MALFORMED,
		      "error text of 161 bytes: expected malformed, "
		      "got %s",
		      rl_proto_error_name(err));
}
END_TEST

START_TEST(test_unknown_error_codes_decode_as_they_are)
{
	uint8_t buf[RL_PROTO_MAX_MSG];
	struct rl_msg_error in = { .code = 999, .text = "from a newer receiver" }, out;
	int n = rl_proto_encode_error(buf, sizeof(buf), &in);

	ck_assert_int_eq(rl_proto_decode_error(buf, n, &out), RL_PERR_NONE);
	ck_assert_int_eq(out.code, 999);
	ck_assert_str_eq(rl_proto_error_name(out.code), "unknown");
}
END_TEST

START_TEST(test_encoders_refuse_small_buffers_and_bad_fields)
{
	struct rl_msg_file_info big = { .size = RL_PROTO_MAX_FILE + 1 };
	struct rl_msg_window empty = { .len = 0 };
	struct rl_msg_student_id space = { .id = "a b" };
	struct rl_msg_result verdict = { .good = 7 };
	struct rl_msg m = sample(RL_MSG_FILE_INFO);
	uint8_t buf[RL_PROTO_MAX_MSG];
	int n;

	n = rl_proto_encode(buf, 47, &m);
	ck_assert_msg(n == -EMSGSIZE, "47-byte buffer: expected -EMSGSIZE, got %d", n);
	ck_assert_int_eq(rl_proto_encode_file_info(buf, sizeof(buf), &big), -EINVAL);
	ck_assert_int_eq(rl_proto_encode_window(buf, sizeof(buf), &empty), -EINVAL);
	ck_assert_int_eq(rl_proto_encode_student_id(buf, sizeof(buf), &space), -EINVAL);
	ck_assert_int_eq(rl_proto_encode_result(buf, sizeof(buf), &verdict), -EINVAL);
	m.type = (enum rl_msg_type)42;
	ck_assert_int_eq(rl_proto_encode(buf, sizeof(buf), &m), -EINVAL);
}
END_TEST

START_TEST(test_errorf_cuts_and_cleans_its_text)
{
	uint8_t buf[RL_PROTO_MAX_MSG];
	struct rl_msg_error out;
	char longer[300];
	int n;

	memset(longer, 'y', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	n = rl_proto_encode_errorf(buf, sizeof(buf), RL_PERR_BAD_ID, "bad ID '%s'", "a\nb");
	ck_assert_int_eq(rl_proto_decode_error(buf, n, &out), RL_PERR_NONE);
	ck_assert_str_eq(out.text, "bad ID 'a?b'");
	n = rl_proto_encode_errorf(buf, sizeof(buf), RL_PERR_MALFORMED, "%s", longer);
	ck_assert_int_eq(rl_proto_decode_error(buf, n, &out), RL_PERR_NONE);
	ck_assert_msg(strlen(out.text) == RL_PROTO_MAX_TEXT, "expected %d characters, got %zu",
		      RL_PROTO_MAX_TEXT, strlen(out.text));
}
END_TEST

START_TEST(test_names_cover_every_value)
{
	ck_assert_str_eq(rl_msg_type_name(RL_MSG_WINDOW_DONE), "WINDOW_DONE");
	ck_assert_str_eq(rl_msg_type_name(0), "UNKNOWN");
	ck_assert_str_eq(rl_msg_type_name(9), "UNKNOWN");
	ck_assert_str_eq(rl_proto_error_name(RL_PERR_INTERNAL), "internal");
	ck_assert_str_eq(rl_proto_error_name(-1), "unknown");
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("Lab 3 protocol codec");
	TCase *tc = tcase_create("proto");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_UNIT);
	tcase_add_test(tc, test_every_message_type_round_trips);
	tcase_add_test(tc, test_file_info_has_the_documented_byte_layout);
	tcase_add_test(tc, test_per_type_decoders_read_their_own_type);
	tcase_add_test(tc, test_a_valid_message_of_another_type_is_bad_state);
	tcase_add_test(tc, test_header_errors_are_named);
	tcase_add_test(tc, test_every_truncation_of_every_message_is_refused);
	tcase_add_test(tc, test_field_values_out_of_range_are_refused);
	tcase_add_test(tc, test_student_ids_are_checked);
	tcase_add_test(tc, test_keys_and_error_texts_are_checked);
	tcase_add_test(tc, test_unknown_error_codes_decode_as_they_are);
	tcase_add_test(tc, test_encoders_refuse_small_buffers_and_bad_fields);
	tcase_add_test(tc, test_errorf_cuts_and_cleans_its_text);
	tcase_add_test(tc, test_names_cover_every_value);
	suite_add_tcase(s, tc);
	return s;
}
