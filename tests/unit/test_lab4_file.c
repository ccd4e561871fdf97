/*
 * test_lab4_file.c: Lab 4's given file helpers on the host: the chunk the
 * sender picks when the user gives none, and how a file is cut with it.
 */
#include "../harness.h"
#include "lab4.h"

/* Whether X is a power of two. */
static int power_of_two(uint32_t x)
{
	return x && !(x & (x - 1));
}

START_TEST(test_pick_chunk_cuts_a_small_file_in_two)
{
	ck_assert_uint_eq(lab4_pick_chunk(1 << 20), 512 << 10);
	ck_assert_uint_eq(lab4_nchunks(1 << 20, lab4_pick_chunk(1 << 20)), LAB4_MIN_CHUNKS);
	ck_assert_uint_eq(lab4_pick_chunk(4 << 20), 2 << 20);
	ck_assert_uint_eq(lab4_pick_chunk((1 << 20) + 1), 512 << 10);
}
END_TEST

START_TEST(test_pick_chunk_keeps_the_default_for_a_big_file)
{
	ck_assert_uint_eq(lab4_pick_chunk((uint64_t)LAB4_DEFAULT_CHUNK * LAB4_MIN_CHUNKS),
			  LAB4_DEFAULT_CHUNK);
	ck_assert_uint_eq(lab4_pick_chunk((uint64_t)LAB4_MAX_FILE), LAB4_DEFAULT_CHUNK);
}
END_TEST

START_TEST(test_pick_chunk_stops_at_its_floor)
{
	ck_assert_uint_eq(lab4_pick_chunk(0), LAB4_MIN_PICKED_CHUNK);
	ck_assert_uint_eq(lab4_pick_chunk(100), LAB4_MIN_PICKED_CHUNK);
	ck_assert_uint_eq(lab4_pick_chunk(LAB4_MIN_PICKED_CHUNK * 2), LAB4_MIN_PICKED_CHUNK);
}
END_TEST

/* Every size from a byte to 64 MiB, in steps that cross each halving. */
START_TEST(test_pick_chunk_makes_enough_chunks_at_every_size)
{
	uint64_t size;
	uint32_t chunk;

	for (size = 1; size <= (64ULL << 20); size = size * 5 / 4 + 1) {
		chunk = lab4_pick_chunk(size);
		ck_assert_msg(power_of_two(chunk) && chunk >= LAB4_MIN_PICKED_CHUNK &&
				      chunk <= LAB4_DEFAULT_CHUNK,
			      "%llu bytes: chunk %u is not a power of two in [%u, %u]",
			      (unsigned long long)size, chunk, LAB4_MIN_PICKED_CHUNK,
			      LAB4_DEFAULT_CHUNK);
		if (size >= (uint64_t)LAB4_MIN_PICKED_CHUNK * LAB4_MIN_CHUNKS)
			ck_assert_msg(lab4_nchunks(size, chunk) >= LAB4_MIN_CHUNKS,
				      "%llu bytes: %u chunks of %u, expected at least %d",
				      (unsigned long long)size, lab4_nchunks(size, chunk), chunk,
				      LAB4_MIN_CHUNKS);
	}
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("lab4 file");
	TCase *tc = tcase_create("chunk");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_UNIT);
	tcase_add_test(tc, test_pick_chunk_cuts_a_small_file_in_two);
	tcase_add_test(tc, test_pick_chunk_keeps_the_default_for_a_big_file);
	tcase_add_test(tc, test_pick_chunk_stops_at_its_floor);
	tcase_add_test(tc, test_pick_chunk_makes_enough_chunks_at_every_size);
	suite_add_tcase(s, tc);
	return s;
}
