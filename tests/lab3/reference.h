/*
 * reference.h: what Lab 3's graded tests share (tests/harness.h).
 *
 * The parent (setup and check) has the test's reference receiver, the
 * grader's or one it starts (.receiver), and files of random bytes it keeps
 * a copy of, to hash them itself after the act. It gives the act only where
 * the receiver is, the files' paths and sizes and a fresh student ID
 * (struct ref_in, in c->in), and judges by what the receiver logged.
 *
 * The act has the test's own version of each protocol step, so that a test
 * of step K runs the student's step K between reference steps and fails
 * only for its own step.
 */
#ifndef RDMALAB_LAB3_REFERENCE_H
#define RDMALAB_LAB3_REFERENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "lab3.h"
#include "../harness.h"
#include "receiver_fixture.h"

/* Types */

#define REF_MAX_FILES 4

/* What setup gives the act (c->in): the receiver, the files, a student ID. */
struct ref_in {
	char addr[64]; /* the receiver's; "" when the test declares none */
	uint16_t port;
	char id[RL_PROTO_MAX_ID + 1]; /* fresh for this run */
	int nfiles;
	struct ref_in_file {
		char path[64];
		uint64_t size;
	} file[REF_MAX_FILES];
};

/* One line of the receiver's results log (docs/receiver.md), read. */
struct ref_line {
	char text[2048]; /* the whole line, for messages */
	char peer[64];
	char student_id[RL_PROTO_MAX_ID + 1];
	long long file_size; /* -1: null */
	char sha256[65];     /* "" when null */
	long long bytes_received;
	int hash_ok; /* 1, 0, or -1 when null */
	bool key_issued;
	char key_sha256[65];
	int step;
	char error[512]; /* "" when null */
};

/* In the act: a file of the test, opened, and its hash by the test's own step 1. */
struct ref_file {
	struct lab3_file f;
	uint8_t sha256[32];
};

/* What a run of the lab3 program did (the check runs it). */
struct ref_run {
	int status; /* exit status, or -1 if it was killed after its time limit */
	char out[4096];
	char err[4096];
	char key[RL_PROTO_MAX_KEY + 1]; /* from its "key: " line, or "" */
	double seconds;
};

/* Macros */

/*
 * The longest any one wait for the reference receiver may take, before the
 * multiplier (rf_timeout_ms): the connection's waits, and the lab3
 * program's --timeout. The receiver answers in milliseconds; a sender that
 * never sends what the receiver waits for costs this much a test.
 */
#define REF_WAIT_MS 10000

/*
 * How long the act waits, after the student's step returned, for a message
 * that step should have read (before the multiplier): the receiver sends it
 * within milliseconds.
 */
#define REF_UNREAD_MS 300

/* The parent: setup and check (reference.c) */

/*
 * Setup: the test's receiver when it declares one (the grader's, from
 * RDMALAB_RECEIVERS, else one started here with its options), files of
 * SIZES[0..N-1] random bytes and a fresh student ID, all into c->in.
 * Cleans up what an earlier test's check did not.
 */
void ref_setup(struct rl_case *c, const uint64_t *sizes, int n);
/* Check: the SHA-256 of file I as setup wrote it, computed now, in hex. */
void ref_sha256_hex(int i, char hex[65]);
/* Check: stop the receiver setup started, remove the files. */
void ref_cleanup(void);
/* Check: the results line of the connection the act said as NAME ("peer"), logged since setup. */
bool ref_line(struct rl_case *c, const char *name, struct ref_line *l);
/* Check: the line the run of ID logged once the log had SKIP lines ("" in L->text if none). */
void ref_line_of_run(int skip, const char *id, struct ref_line *l);
/* Check: the lines in the receiver's results log now. */
int ref_count_lines(void);
/* Check: whether L says the receiver got file I whole, its hash right, and reached STEP. */
bool ref_expect_received(struct rl_case *c, const struct ref_line *l, int i, int step);
/* A random number from LO to LO + SPAN - 1. */
uint64_t ref_random(uint64_t lo, uint64_t span);
/* A fresh student ID, "s" and 8 digits. */
void ref_random_id(char id[RL_PROTO_MAX_ID + 1]);

/*
 * Check: the milliseconds left of the running test's limit (.limit, or the
 * RDMA tests' limit, scaled; a quarter of it once a test of the step hung, in its act
 * or a program its check ran: rl_graded_limit), counted from the end of setup.
 */
int ref_check_ms_left(void);
/* Check: run the lab3 program on file I as ID with --timeout TIMEOUT (seconds), for at most LIMIT_MS. */
void ref_run_sender(int i, const char *id, const char *timeout, int limit_ms, struct ref_run *run);
/* REF_WAIT_MS, scaled, in whole seconds: the lab3 program's --timeout. */
const char *ref_sender_timeout(void);
/* The last line of TEXT, at most 300 bytes, into OUT ("no message" if none). */
void ref_last_line(const char *text, char *out, size_t size);
/* Check: whether RUN ended with the key the receiver logged for ID in L, for file I. */
bool ref_expect_key(struct rl_case *c, const struct ref_run *run, int i, const char *id,
		    const struct ref_line *l);
/* Check: whether RUN ended non-zero, in time, with WANT on stderr and no key (WHAT: the case). */
bool ref_expect_failure(struct rl_case *c, const struct ref_run *run, const char *what,
			const char *want);

/* The act: the test's own steps, each failing the test when it does not work */

/* The act's inputs. */
const struct ref_in *ref_in(const struct rl_case *c);
/* Open file I of the test (given code) and hash it (the test's own step 1). */
void ref_open(const struct rl_case *c, int i, struct ref_file *rfile);
/* Connect to the test's receiver (given code) and say our address as NAME. */
void ref_connect(const struct rl_case *c, struct lab3_conn *conn, const char *name);
/* Close RFILE (its registration first), then the connection. */
void ref_close(struct lab3_conn *conn, struct ref_file *rfile);
void ref_send_file_info(struct lab3_conn *conn, const struct ref_file *rfile, bool flip_hash);
void ref_register(struct lab3_conn *conn, struct ref_file *rfile);
void ref_wait_window(struct lab3_conn *conn, struct rl_msg_window *w);
void ref_write_window(struct lab3_conn *conn, struct ref_file *rfile,
		      const struct rl_msg_window *w);
void ref_window_done(struct lab3_conn *conn, struct ref_file *rfile, const struct rl_msg_window *w);
void ref_send_windows(struct lab3_conn *conn, struct ref_file *rfile);
void ref_done(struct lab3_conn *conn, struct rl_msg_result *result);
void ref_send_id(struct lab3_conn *conn, const char *id);
void ref_wait_key(struct lab3_conn *conn);
/* Steps 2 to 4 by the test, up to the DONE still to be sent. */
void ref_transfer(struct lab3_conn *conn, struct ref_file *rfile);
/*
 * After a student's step returned: the type of a message from the receiver
 * that step should have read and did not (within REF_UNREAD_MS), -1 for one
 * that does not decode, 0 for none.
 */
int ref_unread(struct lab3_conn *conn);

#endif
