/*
 * receiver_fixture.h: what the receiver's RDMA tests share. Starts
 * rdmalab-receiver as a child on RDMALAB_ADDR with a free port, a fresh
 * secret and a fresh results log, and reads what it wrote.
 */
#ifndef RDMALAB_RECEIVER_FIXTURE_H
#define RDMALAB_RECEIVER_FIXTURE_H

#include <stdbool.h>
#include <pthread.h>
#include <sys/types.h>

#include "receiver.h"
#include "refsend.h"

/* Types */

/* One running receiver and its files. */
struct rf_receiver {
	pid_t pid;
	const char *addr;
	uint16_t port;
	char dir[64];
	char secret_path[96];
	char results_path[96];
	char log_path[96];
	uint8_t secret[32];
	size_t secret_len;
	int results_fd; /* a sealed receiver's log (O_TMPFILE); -1 otherwise */
};

/*
 * A sender run in a thread of the test. Threads, not processes: after a
 * fork() the child cannot use the verbs contexts librdmacm opened in the
 * parent (posting fails with EACCES).
 */
struct rf_job {
	struct rs_opts o;
	struct rs_result r;
	int ret;
	pthread_t thread;
};

/* receiver_fixture.c */
/* BASE_MS times CK_TIMEOUT_MULTIPLIER (default 1): rr_scaled_ms (receiver_launch.h). */
int rf_timeout_ms(int base_ms);
/*
 * Start a receiver with the options in EXTRA (NULL-terminated, at most
 * RR_MAX_EXTRA) and wait until it listens (receiver_launch.c, the
 * grader's code too); fails the test if it cannot.
 */
void rf_start(struct rf_receiver *rf, const char *const *extra);
/*
 * Start one sealed (a graded test's, in make check): --secret-random, a
 * secret nothing but the receiver ever holds, and its results log an
 * unnamed file (O_TMPFILE) on a descriptor of this process and the
 * receiver's; results_path names it for this process only
 * (/proc/self/fd/N). The receiver is not dumpable: a process of the same
 * user, a test's act, can reach neither. Keys are checked by their SHA-256
 * in the log.
 */
void rf_start_sealed(struct rf_receiver *rf, const char *const *extra);
/* Stop it (SIGTERM), wait for it, remove its files; its exit status. */
int rf_stop(struct rf_receiver *rf);
/* Options for a good sender of the N bytes at DATA as student ID. */
struct rs_opts rf_sender(const struct rf_receiver *rf, const uint8_t *data, uint64_t n,
			 const char *id);
/* The key the receiver must give ID. */
void rf_expected_key(const struct rf_receiver *rf, const char *id, char key[RCV_KEY_LEN + 1]);
/* Fill N bytes at BUF with a pattern that depends on SEED. */
void rf_fill(uint8_t *buf, size_t n, unsigned seed);
/* Wait up to TIMEOUT_MS for PEER's whole line in the results log; copy it into LINE. */
bool rf_wait_line(const struct rf_receiver *rf, const char *peer, int timeout_ms, char *line,
		  size_t size);
/* Lines in the results log now. */
int rf_count_lines(const struct rf_receiver *rf);
/* The receiver's stderr so far (malloc'd, never NULL). */
char *rf_log(const struct rf_receiver *rf);
/* The results log so far (malloc'd, never NULL). */
char *rf_results(const struct rf_receiver *rf);
/* How many times NEEDLE occurs in TEXT. */
int rf_count_in(const char *text, const char *needle);
/* A new unnamed file in DIR, read-write, close-on-exec; -1 with errno. */
int rf_unnamed_file(const char *dir);
/* Start JOB->o in a thread; rf_join() waits for it and returns JOB->ret. */
void rf_run(struct rf_job *job);
int rf_join(struct rf_job *job);

#endif
