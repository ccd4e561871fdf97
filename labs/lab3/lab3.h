/* lab3.h: Lab 3, sending a file with RDMA WRITE (docs/protocol.md). Every function, by file. */
#ifndef RDMALAB_LAB3_H
#define RDMALAB_LAB3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rdmalab.h"

#define RL_LAB 3
#include "../common/todo.h"

/* Types */

/* The file being sent: what step 1 learns about it and what step 3 registers. */
struct lab3_file {
	const char *path;
	int fd;
	uint64_t size;      /* bytes, from fstat() */
	uint8_t sha256[32]; /* step 1: the SHA-256 of the whole file */
	uint8_t *data;      /* step 3: the file mapped in memory; NULL for 0 bytes */
	struct ibv_mr *mr;  /* step 3: its registration; NULL for 0 bytes */
	uint64_t written;   /* step 4: bytes written to the receiver so far */
	uint32_t windows;   /* step 4: windows written so far (the next index) */
	bool progress;      /* draw a progress bar on stderr */
};

/* A message the receiver sent, decoded but not yet taken by lab3_wait_msg(). */
struct lab3_pending {
	enum rl_proto_error err; /* RL_PERR_NONE, or why the bytes did not decode */
	struct rl_msg msg;
};

/* One connection to the receiver and everything hanging off it (conn.c). */
struct lab3_conn {
	struct rdma_event_channel *cm_ch; /* CM events: the receiver's disconnect */
	struct rdma_cm_id *id;            /* id->qp is the RC QP */
	struct ibv_pd *pd;
	struct ibv_comp_channel *comp;
	struct ibv_cq *cq; /* sends, writes and receives all complete here */
	struct ibv_mr *msg_mr;
	struct {
		uint8_t recv[2][RL_PROTO_MAX_MSG];
		uint8_t send[RL_PROTO_MAX_MSG];
	} bufs; /* registered as msg_mr: local access only */
	struct lab3_pending pending[4];
	int npending;
	bool gone;      /* the receiver ended the connection (a CM event said so) */
	int timeout_ms; /* the longest any one wait may take */
	char peer[64];  /* our address as the receiver logs it, "10.0.0.1:4242" */
};

/* Work request ids: a completion says what it completes. */
enum lab3_wr_id {
	LAB3_WR_SEND = 1,
	LAB3_WR_WRITE = 2,
	LAB3_WR_RECV = 16, /* + the receive buffer's slot */
};

/* Macros */

#define LAB3_RECV_SLOTS 2              /* receives kept posted: a reply and an ERROR */
#define LAB3_QP_DEPTH 16               /* work requests each queue of the QP holds */
#define LAB3_CQ_DEPTH 64               /* room for both queues' completions */
#define LAB3_MAX_INFLIGHT 8            /* RDMA WRITEs posted and not yet completed */
#define LAB3_CHUNK (256 * 1024)        /* bytes per RDMA WRITE at most */
#define LAB3_TIMEOUT_MS 30000          /* default for each wait (--timeout) */
#define LAB3_PROGRESS_MIN (4ULL << 20) /* files larger than this get a progress bar */

/* file.c: open and close the file, the progress bar (given) */
int lab3_open_file(struct lab3_file *f, const char *path);
void lab3_close_file(struct lab3_file *f);
void lab3_progress(const struct lab3_file *f);
void lab3_sha256_hex(const uint8_t sha256[32], char hex[65]);

/* conn.c: connect and disconnect with rdma_cm (given) */
int lab3_connect(struct lab3_conn *c, const char *addr, uint16_t port, int timeout_ms);
int lab3_post_recv_slot(struct lab3_conn *c, int slot);
void lab3_disconnect(struct lab3_conn *c);

/* msg.c: one message at a time, always watching the CM channel too (given) */
int lab3_wait_completion(struct lab3_conn *c, struct ibv_wc *wc);
int lab3_send_msg(struct lab3_conn *c, const struct rl_msg *m);
int lab3_wait_msg(struct lab3_conn *c, enum rl_msg_type want, struct rl_msg *m);

/* hash.c: step 1 */
int lab3_hash_file(struct lab3_file *f);

/* exchange.c: steps 2, 5, 6 and 7 */
int lab3_send_file_info(struct lab3_conn *c, const struct lab3_file *f);
int lab3_finish(struct lab3_conn *c, const struct lab3_file *f, struct rl_msg_result *result);
int lab3_send_student_id(struct lab3_conn *c, const char *id);
int lab3_wait_key(struct lab3_conn *c, char key[RL_PROTO_MAX_KEY + 1]);

/* transfer.c: steps 3 and 4 */
int lab3_register_file(struct ibv_pd *pd, struct lab3_file *f);
int lab3_wait_window(struct lab3_conn *c, const struct lab3_file *f, struct rl_msg_window *w);
int lab3_write_window(struct lab3_conn *c, const struct lab3_file *f,
		      const struct rl_msg_window *w);
int lab3_send_windows(struct lab3_conn *c, struct lab3_file *f);

#endif
