/*
 * reference.h: what Lab 3's tests share. Temporary files of random bytes, a
 * receiver started by tests/rdma/receiver_fixture.c, and the test's own
 * version of each protocol step, so that a test of step K runs the
 * student's step K between reference steps and fails only for its own step.
 */
#ifndef RDMALAB_LAB3_REFERENCE_H
#define RDMALAB_LAB3_REFERENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "lab3.h"
#include "receiver_fixture.h"

/* A temporary file of random bytes, opened with lab3_open_file(). */
struct ref_file {
	char path[128];
	uint8_t *bytes; /* a copy of its content */
	uint64_t size;
	uint8_t sha256[32]; /* computed here, with EVP_Digest() in one call */
	struct lab3_file f;
};

/* What a run of the lab3 program did. */
struct ref_run {
	int status; /* exit status, or -1 if it was killed after the time limit */
	char out[4096];
	char err[4096];
	char key[RL_PROTO_MAX_KEY + 1]; /* from its "key: " line, or "" */
	double seconds;
};

/*
 * The longest any one wait for the reference receiver may take, before the
 * multiplier (rf_timeout_ms): the connection's waits, and the lab3
 * program's --timeout. The receiver answers in milliseconds; a sender that
 * never sends what the receiver waits for costs this much a test.
 */
#define REF_WAIT_MS 10000

/* Start a receiver with the options in EXTRA (NULL-terminated, may be NULL). */
void ref_start(struct rf_receiver *rf, const char *const *extra);
/* Make a file of SIZE random bytes and open it; ref_drop_file() removes it. */
void ref_make_file(struct ref_file *rfile, uint64_t size);
void ref_drop_file(struct ref_file *rfile);
/* Connect C to RF (given code); fails the test if it cannot. */
void ref_connect(struct lab3_conn *c, const struct rf_receiver *rf);
/* Disconnect C (after closing F's registration) and return C's results line in LINE. */
void ref_finish_line(const struct rf_receiver *rf, struct lab3_conn *c, struct ref_file *rfile,
		     char *line, size_t size);
/* The "step" number in a results line, or -1. */
int ref_line_step(const char *line);

/* The test's own steps, each failing the test when it does not work. */
void ref_send_file_info(struct lab3_conn *c, const struct ref_file *rfile, bool flip_hash);
void ref_register(struct lab3_conn *c, struct ref_file *rfile);
void ref_wait_window(struct lab3_conn *c, struct rl_msg_window *w);
void ref_write_window(struct lab3_conn *c, struct ref_file *rfile, const struct rl_msg_window *w);
void ref_window_done(struct lab3_conn *c, struct ref_file *rfile, const struct rl_msg_window *w);
void ref_send_windows(struct lab3_conn *c, struct ref_file *rfile);
void ref_done(struct lab3_conn *c, struct rl_msg_result *result);
void ref_send_id(struct lab3_conn *c, const char *id);
/* Steps 2 to 4 by the test, up to the DONE still to be sent. */
void ref_transfer(struct lab3_conn *c, struct ref_file *rfile);

/* REF_WAIT_MS, scaled, in whole seconds: the lab3 program's --timeout. */
const char *ref_sender_timeout(void);
/* Run the lab3 program with ARGS (NULL-terminated), for at most LIMIT_MS. */
void ref_run_sender(const struct rf_receiver *rf, const char *const *args, int limit_ms,
		    struct ref_run *run);
/* Run "rdmalab-receiver --verify ID KEY" with RF's secret: its exit status. */
int ref_verify(const struct rf_receiver *rf, const char *id, const char *key);

#endif
