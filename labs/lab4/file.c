/* file.c: the file to send, its hash, chunk arithmetic and clocks (given, not a step). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lab4.h"

/* Open PATH and map it read-only into F; a 0-byte file gets no mapping. */
int lab4_open_file(struct lab4_file *f, const char *path)
{
	struct stat st;
	void *data;
	int err;

	*f = (struct lab4_file){ .path = path, .fd = -1 };
	f->fd = open(path, O_RDONLY);
	if (f->fd < 0)
		return rl_fail("open", errno, "%s", path);
	if (fstat(f->fd, &st) < 0) {
		err = rl_fail("fstat", errno, "%s", path);
		goto clean_fd;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > LAB4_MAX_FILE) {
		rl_err("%s: not a regular file of at most %llu bytes", path,
		       (unsigned long long)LAB4_MAX_FILE);
		err = -EINVAL;
		goto clean_fd;
	}
	f->size = (uint64_t)st.st_size;
	if (f->size == 0)
		return 0;
	data = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, f->fd, 0);
	if (data == MAP_FAILED) {
		err = rl_fail("mmap", errno, "%s, %llu bytes", path, (unsigned long long)f->size);
		goto clean_fd;
	}
	f->data = data;
	return 0;

clean_fd:
	close(f->fd);
	f->fd = -1;
	return err;
}

/* The one line for an OpenSSL digest call that failed on F; -EIO. */
static int lab4_evp_failed(const struct lab4_file *f)
{
	rl_err("EVP SHA-256 of %s failed", f->path);
	return -EIO;
}

/* Feed CTX f's bytes, read into PIECE (LAB4_HASH_PIECE bytes), then finish into f->sha256. */
static int lab4_hash_pieces(struct lab4_file *f, EVP_MD_CTX *ctx, uint8_t *piece)
{
	uint64_t done = 0;
	unsigned int len = 0;
	ssize_t n;

	while (done < f->size) {
		n = pread(f->fd, piece, LAB4_HASH_PIECE, (off_t)done);
		if (n < 0)
			return rl_fail("pread", errno, "%s at offset %llu", f->path,
				       (unsigned long long)done);
		if (n == 0)
			return rl_fail("pread", EIO, "%s shrank to %llu bytes while read", f->path,
				       (unsigned long long)done);
		if (!EVP_DigestUpdate(ctx, piece, (size_t)n))
			return lab4_evp_failed(f);
		done += (uint64_t)n;
	}
	if (!EVP_DigestFinal_ex(ctx, f->sha256, &len) || len != sizeof(f->sha256))
		return lab4_evp_failed(f);
	return 0;
}

/*
 * The SHA-256 of the file into f->sha256 (Lab 3 step 1, given here), read
 * with pread() in LAB4_HASH_PIECE pieces rather than from the mapping: a
 * first touch of each page of a mapping is a page fault, and under
 * User-Mode Linux each costs a round trip to the host (hashing 256 MiB
 * through the mapping took 12 s there, through pread() 0.26 s).
 */
int lab4_hash_file(struct lab4_file *f)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	uint8_t *piece = malloc(LAB4_HASH_PIECE);
	int ret = -EIO;

	if (ctx && piece && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL))
		ret = lab4_hash_pieces(f, ctx, piece);
	else
		rl_err("SHA-256 of %s: out of memory or no SHA-256 in OpenSSL", f->path);
	free(piece);
	EVP_MD_CTX_free(ctx);
	return ret;
}

void lab4_close_file(struct lab4_file *f)
{
	if (f->data)
		munmap(f->data, f->size);
	if (f->fd >= 0)
		close(f->fd);
	f->data = NULL;
	f->fd = -1;
}

/* Write the 32 bytes of SHA256 as 64 lowercase hex digits and a NUL. */
void lab4_sha256_hex(const uint8_t sha256[32], char hex[65])
{
	int i;

	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", sha256[i]);
}

/* How many chunks of at most CHUNK bytes SIZE bytes make (0 for 0 bytes). */
uint32_t lab4_nchunks(uint64_t size, uint32_t chunk)
{
	return (uint32_t)((size + chunk - 1) / chunk);
}

/*
 * The chunk for a file of SIZE bytes when the user gave none: the default,
 * halved while the file would make fewer than LAB4_MIN_CHUNKS chunks, but
 * never below LAB4_MIN_PICKED_CHUNK.
 */
uint32_t lab4_pick_chunk(uint64_t size)
{
	uint32_t chunk = LAB4_DEFAULT_CHUNK;

	while (chunk / 2 >= LAB4_MIN_PICKED_CHUNK && size < (uint64_t)chunk * LAB4_MIN_CHUNKS)
		chunk /= 2;
	return chunk;
}

/* The length of chunk INDEX: CHUNK, except the last, which holds what is left. */
uint32_t lab4_chunk_len(uint64_t size, uint32_t chunk, uint32_t index)
{
	uint64_t start = (uint64_t)index * chunk;

	if (start >= size)
		return 0;
	return size - start < chunk ? (uint32_t)(size - start) : chunk;
}

/* Milliseconds on a clock that never jumps. */
int64_t lab4_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Microseconds on the same clock. */
int64_t lab4_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
