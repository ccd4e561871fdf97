/*
 * receivers.c: rdmalab-receivers, the grader's reference receivers (a
 * lab's tests declare them: .receiver in tests/harness.h; Lab 3's, one per
 * test), started together as root and waited for together, with the code
 * make check's fixture starts its own with (receiver_launch.c).
 *
 *   rdmalab-receivers start LIST SLOT DIR ADDR
 *   rdmalab-receivers stop DIR
 *   rdmalab-receivers logs DIR RECORDS OUT
 *
 * Each receiver has a random secret only it ever holds (--secret-random),
 * so the student's code (under its own uid) never sees a secret: the test
 * checks the key its sender printed against the key's SHA-256 in the
 * receiver's results log, the one file here the student may read.
 * See grader/README.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "receiver_launch.h"

#define RV_MAX 99 /* receivers a slot has ports for: 30000 + SLOT * 100 + 1..99 */
#define RV_MAX_SLOT ((65535 - 30000 - RV_MAX) / 100)
#define RV_MAX_WORDS 16
#define RV_STOP_MS 5000 /* from SIGTERM to SIGKILL */

/* One line of LIST: "TEST<tab>OPTIONS", the test program's --receivers. */
struct rv_line {
	char text[512];
	char *test; /* in text */
	char *opts; /* in text, or "" */
};

static const char *prog = "rdmalab-receivers";

/* Write TEXT whole to PATH, mode MODE: a temporary file renamed over it. */
static int rv_write(const char *path, const char *text, mode_t mode)
{
	char tmp[PATH_MAX];
	size_t len = strlen(text);
	int fd, ok;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		goto fail;
	ok = write(fd, text, len) == (ssize_t)len && fchmod(fd, mode) == 0;
	if (close(fd) < 0 || !ok || rename(tmp, path) < 0) {
		unlink(tmp);
		goto fail;
	}
	return 0;
fail:
	fprintf(stderr, "%s: write %s: %s\n", prog, path, strerror(errno));
	return -errno;
}

/* DIR/NAME into BUF. */
static const char *rv_path(char *buf, size_t size, const char *dir, const char *name)
{
	snprintf(buf, size, "%s/%s", dir, name);
	return buf;
}

/* DIR/infra: why the receivers did not start, one line (FMT ...); exit status 1. */
static int rv_infra(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int rv_infra(const char *dir, const char *fmt, ...)
{
	char line[2048], path[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	strcat(line, "\n");
	rv_write(rv_path(path, sizeof(path), dir, "infra"), line, 0644);
	return 1;
}

/* LIST's lines into LINES; their count, or -ENOENT (no LIST) or -E2BIG (more than RV_MAX). */
static int rv_read_list(const char *list, struct rv_line *lines)
{
	FILE *f = fopen(list, "r");
	char *tab;
	int n = 0;

	if (!f)
		return -ENOENT;
	while (n <= RV_MAX && fgets(lines[n].text, sizeof(lines[n].text), f)) {
		lines[n].text[strcspn(lines[n].text, "\n")] = '\0';
		if (!lines[n].text[0])
			continue;
		lines[n].test = lines[n].text;
		tab = strchr(lines[n].text, '\t');
		lines[n].opts = tab ? tab + 1 : "";
		if (tab)
			*tab = '\0';
		n++;
	}
	fclose(f);
	return n <= RV_MAX ? n : -E2BIG;
}

/*
 * DIR/1 to DIR/N (mode 755), each with private/ (mode 700: the receiver's
 * log) and an empty results.jsonl the student may read (mode 644).
 */
static int rv_folders(const char *dir, int n)
{
	char path[PATH_MAX];
	int i, fd;

	for (i = 1; i <= n; i++) {
		snprintf(path, sizeof(path), "%s/%d", dir, i);
		if (mkdir(path, 0755) < 0 || chmod(path, 0755) < 0)
			return -errno;
		snprintf(path, sizeof(path), "%s/%d/private", dir, i);
		if (mkdir(path, 0700) < 0 || chmod(path, 0700) < 0)
			return -errno;
		snprintf(path, sizeof(path), "%s/%d/results.jsonl", dir, i);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || fchmod(fd, 0644) < 0 || close(fd) < 0)
			return -errno;
	}
	return 0;
}

/* Split OPTS into WORDS (NULL-terminated), in place. */
static void rv_words(char *opts, const char **words)
{
	int n = 0;
	char *w, *save;

	for (w = strtok_r(opts, " ", &save); w && n < RV_MAX_WORDS; w = strtok_r(NULL, " ", &save))
		words[n++] = w;
	words[n] = NULL;
}

/* Receiver I (from 1) of LINE on PORT, its files in DIR/I; its pid or -errno. */
static pid_t rv_spawn(const char *bin, struct rv_line *line, int i, uint16_t port, const char *dir,
		      const char *addr)
{
	const char *words[RV_MAX_WORDS + 1];
	char results[PATH_MAX], log[PATH_MAX];
	struct rr_spec spec = {
		.bin = bin,
		.addr = addr,
		.port = port,
		.results = results,
		.extra = words,
	};
	pid_t pid;

	snprintf(results, sizeof(results), "%s/%d/results.jsonl", dir, i);
	snprintf(log, sizeof(log), "%s/%d/private/receiver.log", dir, i);
	rv_words(line->opts, words);
	spec.log_fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (spec.log_fd < 0)
		return -errno;
	pid = rr_spawn(&spec);
	close(spec.log_fd);
	return pid;
}

static uint16_t rv_port(int slot, int i)
{
	return (uint16_t)(30000 + slot * 100 + i);
}

/*
 * start LIST SLOT DIR ADDR: a receiver on ADDR for each line of LIST, on
 * the slot's ports, all at once, then waited for together: in User-Mode
 * Linux each process started costs 0.1 to 0.2 s, and one at a time the 32
 * of Lab 3 took 80 s of every submission. DIR/table and DIR/pids as the
 * contract says (grader/README.md).
 */
static int rv_start(const char *list, int slot, const char *dir, const char *addr)
{
	static struct rv_line lines[RV_MAX + 1];
	static char logs[RV_MAX][PATH_MAX], table[RV_MAX * 512];
	const char *log_of[RV_MAX];
	char bin[PATH_MAX], path[PATH_MAX], pids_text[RV_MAX * 12] = "", why[1024];
	pid_t pids[RV_MAX];
	int n, i, failed;
	bool exited;

	if (rv_write(rv_path(path, sizeof(path), dir, "table"), "", 0644) ||
	    rv_write(rv_path(path, sizeof(path), dir, "pids"), "", 0644))
		return 1;
	n = rv_read_list(list, lines);
	if (n == -ENOENT)
		return rv_infra(
			dir,
			"no list of the receivers the tests need, %s: make grader-kit builds it",
			list);
	if (n < 0)
		return rv_infra(dir, "%s lists more than %d receivers, the ports of a slot", list,
				RV_MAX);
	if (n == 0)
		return 0;
	if (rv_folders(dir, n))
		return rv_infra(dir, "could not make the folders of the reference receivers in %s",
				dir);
	if (rr_receiver_path(bin, sizeof(bin)))
		return rv_infra(dir, "%s", bin);
	for (i = 0; i < n; i++) {
		pids[i] = rv_spawn(bin, &lines[i], i + 1, rv_port(slot, i + 1), dir, addr);
		if (pids[i] < 0)
			break;
		snprintf(pids_text + strlen(pids_text), sizeof(pids_text) - strlen(pids_text),
			 "%d\n", (int)pids[i]);
		snprintf(logs[i], sizeof(logs[i]), "%s/%d/private/receiver.log", dir, i + 1);
		log_of[i] = logs[i];
	}
	rv_write(rv_path(path, sizeof(path), dir, "pids"), pids_text, 0644);
	if (i < n)
		return rv_infra(dir, "the reference receiver for %s did not start: %s",
				lines[i].test, strerror(-pids[i]));
	failed = rr_wait(n, pids, log_of, rr_scaled_ms((10 + n / 2) * 1000), &exited);
	if (failed >= 0) {
		rr_last_line(logs[failed], why, sizeof(why));
		return rv_infra(dir, "the reference receiver for %s did not start: %s",
				lines[failed].test, why);
	}
	for (i = 0; i < n; i++)
		snprintf(table + strlen(table), sizeof(table) - strlen(table),
			 "%s\t%u\t%s/%d/results.jsonl\n", lines[i].test, rv_port(slot, i + 1), dir,
			 i + 1);
	return rv_write(rv_path(path, sizeof(path), dir, "table"), table, 0644) ? 1 : 0;
}

/* The pids in DIR/pids into PIDS (at most RV_MAX); their count. */
static int rv_read_pids(const char *dir, pid_t *pids)
{
	char path[PATH_MAX];
	FILE *f = fopen(rv_path(path, sizeof(path), dir, "pids"), "r");
	int n = 0, pid;

	while (f && n < RV_MAX && fscanf(f, "%d", &pid) == 1)
		if (pid > 0)
			pids[n++] = pid;
	if (f)
		fclose(f);
	return n;
}

/* stop DIR: SIGTERM to each receiver of DIR/pids, then SIGKILL to what is left after 5 s. */
static int rv_stop(const char *dir)
{
	char path[PATH_MAX];
	pid_t pids[RV_MAX];
	int n = rv_read_pids(dir, pids), i, waited, left = 0;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++)
		kill(pids[i], SIGTERM);
	for (waited = 0; waited <= RV_STOP_MS; waited += 100) {
		for (i = 0, left = 0; i < n; i++)
			left += !rr_ended(pids[i]);
		if (left == 0)
			break;
		usleep(100000);
	}
	for (i = 0; i < n && left > 0; i++)
		if (!rr_ended(pids[i]))
			kill(pids[i], SIGKILL);
	return rv_write(rv_path(path, sizeof(path), dir, "pids"), "", 0644) ? 1 : 0;
}

/*
 * Whether RECORDS (the test program's, one JSON object a line, written by
 * the kit's one writer) says TEST passed. Outside the members' own quotes
 * a quote is always escaped, so these strings match members only.
 */
static bool rv_passed(const char *records, const char *test)
{
	FILE *f = fopen(records, "r");
	char line[8192], want[PATH_MAX + 16];
	bool passed = false;

	snprintf(want, sizeof(want), "\"test\":\"%s\"", test);
	while (f && !passed && fgets(line, sizeof(line), f)) {
		passed = strstr(line, want) && strstr(line, "\"result\":\"pass\"");
	}
	if (f)
		fclose(f);
	return passed;
}

/* Copy FROM to TO whole (mode 644); quietly nothing when FROM is missing. */
static void rv_copy(const char *from, const char *to)
{
	FILE *f = fopen(from, "r");
	char *text = NULL;
	size_t size = 0;
	FILE *mem;
	int c;

	if (!f)
		return;
	mem = open_memstream(&text, &size);
	while (mem && (c = getc(f)) != EOF)
		putc(c, mem);
	fclose(f);
	if (mem && fclose(mem) == 0)
		rv_write(to, text, 0644);
	free(text);
}

/* logs DIR RECORDS OUT: the log of the receiver of each test that did not pass, as OUT/TEST.receiver.log. */
static int rv_logs(const char *dir, const char *records, const char *out)
{
	char path[PATH_MAX], line[PATH_MAX], from[PATH_MAX], to[PATH_MAX];
	FILE *f = fopen(rv_path(path, sizeof(path), dir, "table"), "r");
	int i = 0;

	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\t\n")] = '\0';
		i++;
		if (rv_passed(records, line))
			continue;
		snprintf(from, sizeof(from), "%s/%d/private/receiver.log", dir, i);
		if (snprintf(to, sizeof(to), "%s/%s.receiver.log", out, line) < (int)sizeof(to))
			rv_copy(from, to);
	}
	if (f)
		fclose(f);
	return 0;
}

static int rv_usage(void)
{
	fprintf(stderr, "usage: %s start LIST SLOT DIR ADDR | stop DIR | logs DIR RECORDS OUT\n",
		prog);
	return 2;
}

int main(int argc, char **argv)
{
	char *end;
	long slot;

	if (argc == 6 && !strcmp(argv[1], "start")) {
		slot = strtol(argv[3], &end, 10);
		if (*end || end == argv[3] || slot < 0 || slot > RV_MAX_SLOT) {
			fprintf(stderr, "%s: SLOT must be a number from 0 to %d, not '%s'\n", prog,
				RV_MAX_SLOT, argv[3]);
			return 2;
		}
		return rv_start(argv[2], (int)slot, argv[4], argv[5]);
	}
	if (argc == 3 && !strcmp(argv[1], "stop"))
		return rv_stop(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "logs"))
		return rv_logs(argv[2], argv[3], argv[4]);
	return rv_usage();
}
