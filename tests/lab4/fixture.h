/*
 * fixture.h: what the Lab 4 tests share. A sender and a receiver in one
 * process, made and connected by the given code (setup.c), a reference
 * poster that logs what step 1 asks of it, the test's own plain-verbs UD
 * QPs, and a runner for the lab4 program itself.
 */
#ifndef RDMALAB_LAB4_FIXTURE_H
#define RDMALAB_LAB4_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "../harness.h"
#include "lab4.h"

#define FX_TIMEOUT_MS 5000
#define FX_MAX_LOG 4096

/* A connected sender S and receiver R over SIZE random bytes in chunks of CHUNK. */
struct fx_pair {
	struct ibv_context *ctx;
	struct lab4_sender s;
	struct lab4_receiver r;
	uint8_t *bytes; /* the "file" */
	uint64_t size;
	uint8_t sha256[32];
};

/* What fx_ref_post() saw: one entry per post, in order. */
struct fx_log {
	uint32_t posts;
	uint32_t index[FX_MAX_LOG];
	bool signaled[FX_MAX_LOG];
	uint32_t worst_outstanding; /* the most s->posted - s->completed before a post */
};
extern struct fx_log fx_log;

struct ibv_context *fx_open_ctx(void);
/*
 * Make and connect P; FLIP_HASH announces a hash that differs from the bytes'.
 * The sender posts with fx_ref_post() and waits busy (lab4_poll_busy, given).
 */
void fx_pair_open(struct fx_pair *p, uint64_t size, uint32_t chunk, bool flip_hash);
void fx_pair_close(struct fx_pair *p);
/* The test's own post: RDMA WRITE WITH IMM through ibv_post_send, logged in fx_log. */
int fx_ref_post(struct lab4_sender *s, uint32_t index, bool signaled);
/* One send completion of S within FX_TIMEOUT_MS, any status, or fail. */
void fx_send_wc(struct lab4_sender *s, struct ibv_wc *wc);
/* One receive completion of R through the plain ibv_poll_cq, or fail. */
void fx_recv_wc(struct lab4_receiver *r, struct ibv_wc *wc);
/* Send every chunk with the test's code in a thread, window WINDOW, all signaled. */
void fx_ref_send_start(struct fx_pair *p, uint32_t window);
int fx_ref_send_join(void);

/* A UD QP in RTS made with plain verbs (not the lab's step 3), every receive posted. */
void fx_ud_open(struct lab4_ud *u, struct ibv_context *ctx);
/* This port's GID at the environment's GID index. */
union ibv_gid fx_gid(struct ibv_context *ctx);

/* Run the lab4 program with ARGS (NULL-terminated) for at most LIMIT_MS. */
struct fx_run {
	int status; /* exit status, or -1 if killed after the limit */
	char out[4096];
	char err[4096];
};
/* Start the program in the background (its output in files); returns its pid. */
int fx_spawn(const char *const *args, const char *tag);
/* Wait for PID up to LIMIT_MS (then kill it) and collect its output. */
void fx_reap(int pid, const char *tag, int limit_ms, struct fx_run *run);
/*
 * A file of SIZE random bytes at PATH (of PATH_SIZE bytes), its SHA-256
 * computed here into SHA256; unlink it after.
 */
void fx_make_file(char *path, size_t path_size, uint64_t size, uint8_t sha256[32]);

#endif
