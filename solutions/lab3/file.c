/* file.c: open and close the file to send, and the progress bar (given, not a step). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lab3.h"

/* Open PATH for reading into F and learn its size; it must be a regular file. */
int lab3_open_file(struct lab3_file *f, const char *path)
{
	struct stat st;

	*f = (struct lab3_file){ .path = path, .fd = -1 };
	f->fd = open(path, O_RDONLY);
	if (f->fd < 0)
		return rl_fail("open", errno, "%s", path);
	if (fstat(f->fd, &st) < 0) {
		int err = rl_fail("fstat", errno, "%s", path);

		close(f->fd);
		f->fd = -1;
		return err;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > RL_PROTO_MAX_FILE) {
		rl_err("%s: not a regular file of at most 2^40 bytes", path);
		close(f->fd);
		f->fd = -1;
		return -EINVAL;
	}
	f->size = (uint64_t)st.st_size;
	return 0;
}

/* Undo lab3_open_file() and lab3_register_file(); call it before the PD goes. */
void lab3_close_file(struct lab3_file *f)
{
	if (f->mr)
		ibv_dereg_mr(f->mr);
	if (f->data)
		munmap(f->data, f->size);
	if (f->fd >= 0)
		close(f->fd);
	f->mr = NULL;
	f->data = NULL;
	f->fd = -1;
}

/* Draw "[#####.....]  45%  12.0 / 27.0 MiB" over the previous bar; a newline at the end. */
void lab3_progress(const struct lab3_file *f)
{
	const int width = 40;
	int filled, percent;

	if (!f->progress || f->size == 0)
		return;
	percent = (int)(f->written * 100 / f->size);
	filled = (int)(f->written * width / f->size);
	fprintf(stderr, "\r[%.*s%*s] %3d%%  %.1f / %.1f MiB", filled,
		"########################################", width - filled, "", percent,
		f->written / 1048576.0, f->size / 1048576.0);
	if (f->written == f->size)
		fputc('\n', stderr);
	fflush(stderr);
}

/* Write the 32 bytes of SHA256 as 64 lowercase hex digits and a NUL. */
void lab3_sha256_hex(const uint8_t sha256[32], char hex[65])
{
	int i;

	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", sha256[i]);
}
