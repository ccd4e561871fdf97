/* test_fw_wire.c: the wire cursor encodes in network order and never overruns. */
#include <string.h>

#include "../harness.h"
#include "rdmalab.h"

START_TEST(test_wire_encodes_fields_big_endian)
{
	static const uint8_t expected[] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
					    0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f };
	uint8_t buf[sizeof(expected)];
	struct rl_wire w;
	size_t i;

	rl_wire_writer(&w, buf, sizeof(buf));
	rl_wire_put_u8(&w, 0x01);
	rl_wire_put_u16(&w, 0x0203);
	rl_wire_put_u32(&w, 0x04050607);
	rl_wire_put_u64(&w, 0x08090a0b0c0d0e0fULL);
	ck_assert_msg(rl_wire_status(&w) == 0, "expected status 0, got %d", rl_wire_status(&w));
	ck_assert_msg(rl_wire_used(&w) == 15, "expected 15 bytes used, got %zu", rl_wire_used(&w));
	for (i = 0; i < sizeof(expected); i++)
		ck_assert_msg(buf[i] == expected[i], "byte %zu: expected 0x%02x, got 0x%02x", i,
			      expected[i], buf[i]);
}
END_TEST

START_TEST(test_wire_decode_round_trips_every_width)
{
	uint8_t buf[64], gid[16], gid_back[16];
	struct rl_wire w;

	memset(gid, 0xab, sizeof(gid));
	rl_wire_writer(&w, buf, sizeof(buf));
	rl_wire_put_u8(&w, 0xfe);
	rl_wire_put_u16(&w, 0xbeef);
	rl_wire_put_u32(&w, 0xdeadbeef);
	rl_wire_put_u64(&w, 0x0123456789abcdefULL);
	rl_wire_put_bytes(&w, gid, sizeof(gid));
	ck_assert_int_eq(rl_wire_status(&w), 0);

	rl_wire_reader(&w, buf, rl_wire_used(&w));
	ck_assert_msg(rl_wire_get_u8(&w) == 0xfe, "u8: expected 0xfe");
	ck_assert_msg(rl_wire_get_u16(&w) == 0xbeef, "u16: expected 0xbeef");
	ck_assert_msg(rl_wire_get_u32(&w) == 0xdeadbeef, "u32: expected 0xdeadbeef");
	ck_assert_msg(rl_wire_get_u64(&w) == 0x0123456789abcdefULL,
		      "u64: expected 0x0123456789abcdef");
	rl_wire_get_bytes(&w, gid_back, sizeof(gid_back));
	ck_assert_msg(!memcmp(gid, gid_back, sizeof(gid)), "bytes: expected the GID back");
	ck_assert_msg(rl_wire_status(&w) == 0, "expected status 0, got %d", rl_wire_status(&w));
	ck_assert_msg(rl_wire_left(&w) == 0, "expected 0 bytes left, got %zu", rl_wire_left(&w));
}
END_TEST

START_TEST(test_wire_decode_rejects_truncated_u32)
{
	/* Three bytes where a u32 is due: the get fails and reads nothing. */
	const uint8_t buf[3] = { 0x11, 0x22, 0x33 };
	struct rl_wire w;
	uint32_t v;

	rl_wire_reader(&w, buf, sizeof(buf));
	v = rl_wire_get_u32(&w);
	ck_assert_msg(v == 0, "expected 0 from a truncated u32, got 0x%x", v);
	ck_assert_msg(rl_wire_status(&w) == -EMSGSIZE, "expected -EMSGSIZE, got %d",
		      rl_wire_status(&w));
	ck_assert_msg(rl_wire_used(&w) == 0, "expected the cursor to stay at 0, got %zu",
		      rl_wire_used(&w));
}
END_TEST

START_TEST(test_wire_error_is_sticky_after_first_overrun)
{
	const uint8_t buf[4] = { 0, 0, 0, 7 };
	struct rl_wire w;
	uint8_t after;

	rl_wire_reader(&w, buf, sizeof(buf));
	(void)rl_wire_get_u64(&w);
	after = rl_wire_get_u8(&w); /* would fit on its own, but the cursor is in error */
	ck_assert_msg(after == 0, "expected 0 after an overrun, got %u", after);
	ck_assert_msg(rl_wire_status(&w) == -EMSGSIZE, "expected -EMSGSIZE, got %d",
		      rl_wire_status(&w));
}
END_TEST

START_TEST(test_wire_decode_rejects_truncated_bytes_and_zeroes_them)
{
	const uint8_t buf[5] = { 1, 2, 3, 4, 5 };
	uint8_t out[16];
	struct rl_wire w;
	size_t i;

	memset(out, 0x5a, sizeof(out));
	rl_wire_reader(&w, buf, sizeof(buf));
	rl_wire_get_bytes(&w, out, sizeof(out));
	ck_assert_int_eq(rl_wire_status(&w), -EMSGSIZE);
	for (i = 0; i < sizeof(out); i++)
		ck_assert_msg(out[i] == 0, "byte %zu: expected 0, got 0x%02x", i, out[i]);
}
END_TEST

START_TEST(test_wire_encode_rejects_overflow_without_writing_past_end)
{
	uint8_t buf[8];
	struct rl_wire w;

	memset(buf, 0xcc, sizeof(buf));
	rl_wire_writer(&w, buf, 6); /* the last two bytes are a guard */
	rl_wire_put_u32(&w, 0x01020304);
	rl_wire_put_u32(&w, 0x05060708);
	ck_assert_int_eq(rl_wire_status(&w), -EMSGSIZE);
	ck_assert_msg(buf[4] == 0xcc && buf[5] == 0xcc && buf[6] == 0xcc && buf[7] == 0xcc,
		      "expected bytes 4..7 untouched (0xcc), got %02x %02x %02x %02x", buf[4],
		      buf[5], buf[6], buf[7]);
}
END_TEST

START_TEST(test_wire_reader_refuses_to_encode)
{
	uint8_t buf[8] = { 0 };
	struct rl_wire w;

	rl_wire_reader(&w, buf, sizeof(buf));
	rl_wire_put_u16(&w, 0xffff);
	ck_assert_int_eq(rl_wire_status(&w), -EMSGSIZE);
	ck_assert_msg(buf[0] == 0 && buf[1] == 0, "expected the buffer untouched");
}
END_TEST

START_TEST(test_wire_empty_buffer_decodes_nothing)
{
	struct rl_wire w;

	rl_wire_reader(&w, NULL, 0);
	ck_assert_int_eq(rl_wire_get_u8(&w), 0);
	ck_assert_int_eq(rl_wire_status(&w), -EMSGSIZE);
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("framework wire");
	TCase *tc = tcase_create("wire");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_UNIT);
	tcase_add_test(tc, test_wire_encodes_fields_big_endian);
	tcase_add_test(tc, test_wire_decode_round_trips_every_width);
	tcase_add_test(tc, test_wire_decode_rejects_truncated_u32);
	tcase_add_test(tc, test_wire_error_is_sticky_after_first_overrun);
	tcase_add_test(tc, test_wire_decode_rejects_truncated_bytes_and_zeroes_them);
	tcase_add_test(tc, test_wire_encode_rejects_overflow_without_writing_past_end);
	tcase_add_test(tc, test_wire_reader_refuses_to_encode);
	tcase_add_test(tc, test_wire_empty_buffer_decodes_nothing);
	suite_add_tcase(s, tc);
	return s;
}
