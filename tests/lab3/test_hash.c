/* test_hash.c: Lab 3 step 1: the file's SHA-256, checked against sha256sum. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness.h"
#include "reference.h"

/* Hash a fresh file of SIZE random bytes with the lab's code; compare with sha256sum. */
static void expect_sha256sum(uint64_t size)
{
	char cmd[256], want[65] = "", got[65];
	struct ref_file rfile;
	FILE *p;
	int ret;

	ref_make_file(&rfile, size);
	snprintf(cmd, sizeof(cmd), "sha256sum '%s'", rfile.path);
	p = popen(cmd, "r");
	ck_assert_msg(p && fscanf(p, "%64s", want) == 1, "expected '%s' to print a hash", cmd);
	pclose(p);
	ret = lab3_hash_file(&rfile.f);
	ck_assert_msg(ret == 0,
		      "file of %llu bytes: expected lab3_hash_file to return 0, got %d (%s)",
		      (unsigned long long)size, ret, strerror(-ret));
	lab3_sha256_hex(rfile.f.sha256, got);
	ck_assert_msg(strcmp(want, got) == 0, "file of %llu bytes: expected %s (sha256sum), got %s",
		      (unsigned long long)size, want, got);
	ref_drop_file(&rfile);
}

RL_TEST(hash_of_an_empty_file_is_the_sha256_of_nothing, .step = 1, .points = 1)
{
	expect_sha256sum(0);
}
END_TEST

RL_TEST(hash_of_small_and_odd_sized_files_matches_sha256sum, .step = 1, .points = 2)
{
	expect_sha256sum(1);
	expect_sha256sum(4097);
	expect_sha256sum(65535);
}
END_TEST

RL_TEST(hash_of_a_file_read_in_many_pieces_matches_sha256sum, .step = 1, .points = 2)
{
	expect_sha256sum((3 << 20) + 12345);
}
END_TEST

RL_TEST(hash_covers_the_whole_file_wherever_its_offset_is, .step = 1, .points = 1)
{
	struct ref_file rfile;
	char want[65], got[65];
	int ret;

	ref_make_file(&rfile, 100003);
	/* Someone read the file before: the hash is still of all of it. */
	ck_assert_int_eq(lseek(rfile.f.fd, 0, SEEK_END), 100003);
	ret = lab3_hash_file(&rfile.f);
	ck_assert_msg(ret == 0,
		      "offset at the end: expected lab3_hash_file to return 0, got %d (%s)", ret,
		      strerror(-ret));
	lab3_sha256_hex(rfile.sha256, want);
	lab3_sha256_hex(rfile.f.sha256, got);
	ck_assert_msg(strcmp(want, got) == 0, "expected %s (all 100003 bytes), got %s", want, got);
	ref_drop_file(&rfile);
}
END_TEST
