/*
 * receiver_launch.h: starting reference receivers (rdmalab-receiver) and
 * waiting until they listen: the one owner of both, for the RDMA tests'
 * fixture (make check) and for rdmalab-receivers (the grader's).
 */
#ifndef RDMALAB_RECEIVER_LAUNCH_H
#define RDMALAB_RECEIVER_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Types */

/* How to start one receiver (rr_spawn). */
struct rr_spec {
	const char *bin;          /* the rdmalab-receiver program (rr_receiver_path) */
	const char *addr;         /* where it listens */
	uint16_t port;            /* ... on which port */
	const char *secret_file;  /* NULL: --secret-random, a secret only it ever holds */
	const char *results;      /* --results PATH; NULL: the descriptor results_fd */
	int results_fd;           /* its results log as descriptor 3 (results NULL) */
	int log_fd;               /* its stdout and stderr */
	bool verbose;             /* -v */
	bool die_with_parent;     /* SIGTERM when the process that started it ends */
	const char *const *extra; /* more options, NULL-terminated (or NULL) */
};

/* Macros */

/* The line a receiver logs once it listens (receiver/server.c). */
#define RR_LISTENING "listening on"
#define RR_MAX_EXTRA 24

/* receiver_launch.c */
/* BASE_MS times CK_TIMEOUT_MULTIPLIER (default 1): every wait that only catches a hang. */
int rr_scaled_ms(int base_ms);
/*
 * The receiver program into BUF: $RDMALAB_RECEIVER, else bin/rdmalab-receiver
 * in the nearest folder above this program that has one. 0, or -ENOENT
 * with what was looked for in BUF.
 */
int rr_receiver_path(char *buf, size_t size);
/* Start the receiver SPEC describes; its pid, or -errno (with one line on stderr). */
pid_t rr_spawn(const struct rr_spec *spec);
/*
 * Wait until each of the N receivers PIDS[i] logged, in LOGS[i], that it
 * listens, for at most LIMIT_MS: -1 when all do, else the index of the
 * first that does not, with *EXITED set when it ended first (and is
 * reaped, its pid set to 0) rather than ran out of time.
 */
int rr_wait(int n, pid_t *pids, const char *const *logs, int limit_ms, bool *exited);
/* Whether PID has ended (gone, or a zombie nobody reaped yet). */
bool rr_ended(pid_t pid);
/* The last line of the file at PATH, at most SIZE - 1 bytes, into OUT ("" if none). */
void rr_last_line(const char *path, char *out, size_t size);

#endif
