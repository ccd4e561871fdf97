/*
 * test_hash.c: Lab 3 step 1: the file's SHA-256. Setup writes files of
 * random bytes; the act hashes each with the lab's code and says the 32
 * bytes; the check hashes the bytes setup wrote, itself, and compares.
 */
#include <string.h>
#include <unistd.h>

#include "reference.h"

/* Hash every file of the test with the lab's code; from its end when FROM_END. */
static void hash_files(struct rl_case *c, bool from_end)
{
	const struct ref_in *in = ref_in(c);
	struct lab3_file f;
	char name[32];
	int i, ret;

	for (i = 0; i < in->nfiles; i++) {
		ret = lab3_open_file(&f, in->file[i].path);
		ck_assert_msg(ret == 0, "lab3_open_file(%s): %s", in->file[i].path, strerror(-ret));
		/* Someone read the file before: the hash is still of all of it. */
		if (from_end)
			ck_assert_msg(lseek(f.fd, 0, SEEK_END) == (off_t)f.size,
				      "the test could not seek to the end of %s", f.path);
		ret = lab3_hash_file(&f);
		snprintf(name, sizeof(name), "ret%d", i);
		rl_say_int(name, ret);
		snprintf(name, sizeof(name), "sha%d", i);
		rl_say_bytes(name, f.sha256, sizeof(f.sha256));
		lab3_close_file(&f);
		if (ret)
			break; /* the check stops at the first failure too */
	}
}

static void hash_from_the_start(struct rl_case *c)
{
	hash_files(c, false);
}

static void hash_from_the_end(struct rl_case *c)
{
	hash_files(c, true);
}

/* Each file's hash as the act said it is the SHA-256 of the bytes setup wrote (WHERE: of the offset). */
static void expect_sha256sum(struct rl_case *c, const char *where)
{
	const struct ref_in *in = ref_in(c);
	char name[32], want[65], got[65];
	unsigned long long size;
	const void *sha;
	long long ret;
	size_t len;
	int i;

	for (i = 0; i < in->nfiles && !rl_failed(c); i++) {
		size = in->file[i].size;
		snprintf(name, sizeof(name), "ret%d", i);
		ret = rl_said_int(c, name);
		if (!rl_expect(c, ret == 0,
			       "file of %llu bytes%s: expected lab3_hash_file to return 0, got %lld "
			       "(%s)",
			       size, where, ret, strerror((int)-ret)))
			break;
		snprintf(name, sizeof(name), "sha%d", i);
		sha = rl_said_bytes(c, name, &len);
		ref_sha256_hex(i, want);
		lab3_sha256_hex(len == 32 ? sha : (const uint8_t[32]){ 0 }, got);
		rl_expect(c, strcmp(want, got) == 0,
			  "file of %llu bytes%s: expected %s (sha256sum), got %s: the digest must "
			  "see every byte of the file once, and nothing else (docs/lab3.md#step-1)",
			  size, where, want, got);
	}
	ref_cleanup();
}

static void agrees_with_sha256sum(struct rl_case *c)
{
	expect_sha256sum(c, "");
}

static void covers_the_whole_file(struct rl_case *c)
{
	expect_sha256sum(c, ", its offset left at the end (your function does not own that offset: "
			    "docs/lab3.md#step-1)");
}

static void an_empty_file(struct rl_case *c)
{
	static const uint64_t sizes[] = { 0 };

	ref_setup(c, sizes, 1);
}

RL_GRADED(hash_of_an_empty_file_is_the_sha256_of_nothing, .step = 1, .points = 1,
	  .setup = an_empty_file, .act = hash_from_the_start, .check = agrees_with_sha256sum);

static void small_and_odd_sized_files(struct rl_case *c)
{
	static const uint64_t sizes[] = { 1, 4097, 65535 };

	ref_setup(c, sizes, 3);
}

RL_GRADED(hash_of_small_and_odd_sized_files_matches_sha256sum, .step = 1, .points = 2,
	  .setup = small_and_odd_sized_files, .act = hash_from_the_start,
	  .check = agrees_with_sha256sum);

static void a_file_of_many_pieces(struct rl_case *c)
{
	uint64_t size = (3 << 20) + ref_random(1, 65535);

	ref_setup(c, &size, 1);
}

RL_GRADED(hash_of_a_file_read_in_many_pieces_matches_sha256sum, .step = 1, .points = 2,
	  .setup = a_file_of_many_pieces, .act = hash_from_the_start,
	  .check = agrees_with_sha256sum);

static void a_file_of_100_kb(struct rl_case *c)
{
	uint64_t size = ref_random(100000, 10000);

	ref_setup(c, &size, 1);
}

RL_GRADED(hash_covers_the_whole_file_wherever_its_offset_is, .step = 1, .points = 1,
	  .setup = a_file_of_100_kb, .act = hash_from_the_end, .check = covers_the_whole_file);
