/* lab2.h: Lab 2, rdma_cm, completion channels, send/recv, RDMA write and read. Every function, by file. */
#ifndef RDMALAB_LAB2_H
#define RDMALAB_LAB2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rdmalab.h"

#define RL_LAB 2
#include "../common/todo.h"

#define LAB2_TIMEOUT_MS 10000 /* the longest any one wait may take */
#define LAB2_CQ_DEPTH 16      /* completions the CQ holds */
#define LAB2_QP_DEPTH 8       /* work requests each queue of the QP holds */
#define LAB2_RECV_SLOTS 4     /* receives kept posted, one per message buffer */
#define LAB2_MSG_MAX 128      /* no message is longer */
#define LAB2_PINGS 10         /* ping-pong round trips */
#define LAB2_PAYLOAD 64       /* text bytes in a PING or PONG */

/*
 * rnr_retry_count in rdma_conn_param: how often the PEER resends a SEND
 * that found no receive posted here (man rdma_connect). 7 means for ever
 * and hides the bug; 6 gives up after a few ms with IBV_WC_RNR_RETRY_EXC_ERR.
 */
#define LAB2_RNR_RETRY 6

/*
 * The server's RDMA buffer: the client writes its text at LAB2_WRITE_OFFSET
 * and reads the server's text at LAB2_READ_OFFSET. Both are NUL-terminated.
 */
#define LAB2_RDMA_SIZE 4096
#define LAB2_WRITE_OFFSET 0
#define LAB2_READ_OFFSET 2048
#define LAB2_TEXT_MAX 1024
#define LAB2_SERVER_TEXT "the server's own text, fetched by the client with RDMA READ"

/*
 * Messages. Every message starts with a u32 type; every number is
 * big-endian (network byte order), encoded with rl_wire_*:
 *   PING, PONG  u32 type, u32 seq, u8[LAB2_PAYLOAD] text (NUL-padded)  72 bytes
 *   MR          u32 type, u64 addr, u32 rkey, u32 len                    20 bytes
 *   DONE        u32 type                                                  4 bytes
 */
enum lab2_msg_type {
	LAB2_MSG_PING = 1, /* client: a numbered ping */
	LAB2_MSG_PONG = 2, /* server: the answer to the ping of the same number */
	LAB2_MSG_MR = 3,   /* server: where the client may write and read */
	LAB2_MSG_DONE = 4, /* client: the write and the read are done */
};
#define LAB2_PING_WIRE_LEN (8 + LAB2_PAYLOAD)
#define LAB2_MR_WIRE_LEN 20
#define LAB2_DONE_WIRE_LEN 4

/* What a MSG_MR carries: a remote buffer, named by its address and rkey. */
struct lab2_mr_msg {
	uint64_t addr; /* virtual address of its first byte, in the server */
	uint32_t rkey; /* the key the client names it with: never the lkey */
	uint32_t len;  /* its length in bytes */
};

/* Work request ids: a completion's wr_id says what it completes. */
enum lab2_wr_id {
	LAB2_WR_SEND = 1,
	LAB2_WR_WRITE = 2,
	LAB2_WR_READ = 3,
	LAB2_WR_RECV = 100, /* + the receive slot, 0 .. LAB2_RECV_SLOTS - 1 */
};

/* The registered message buffers: one to send from, one per posted receive. */
struct lab2_bufs {
	uint8_t send[LAB2_MSG_MAX];
	uint8_t recv[LAB2_RECV_SLOTS][LAB2_MSG_MAX];
};

/* A receive that completed but nobody has asked for yet. */
struct lab2_ready {
	int slot;
	uint32_t len;
};

/* One side of a connection: everything it creates, in the order it does. */
struct lab2_conn {
	int timeout_ms;                   /* bound on every wait */
	struct rdma_event_channel *cm_ch; /* where CM events arrive; may be NULL in tests */
	struct rdma_cm_id *listen_id;     /* server: the id that listens */
	struct rdma_cm_id *id;            /* the connection's id */
	struct ibv_pd *pd;
	struct ibv_comp_channel *comp; /* wakes us when the CQ has a completion */
	struct ibv_cq *cq;             /* sends and receives both complete here */
	struct ibv_qp *qp;             /* id->qp once rdma_create_qp() made it */
	struct ibv_mr *msg_mr;         /* over bufs */
	struct ibv_mr *rdma_mr;        /* over rdma_buf */
	struct lab2_bufs bufs;
	char *rdma_buf;                           /* LAB2_RDMA_SIZE bytes */
	struct lab2_ready ready[LAB2_RECV_SLOTS]; /* received while waiting for a send */
	int nready;
	bool gone; /* the peer disconnected (a CM event said so) */
};

/* What a run got from its peer, for the tests. */
struct lab2_result {
	int pongs;                /* client: pongs checked; server: pings checked */
	char text[LAB2_TEXT_MAX]; /* server: what the client wrote; client: what it read */
};

/* cm.c: step 1 */
int lab2_wait_cm_event(struct lab2_conn *c, enum rdma_cm_event_type want,
		       struct rdma_cm_id **new_id);
int lab2_resolve(struct lab2_conn *c, const char *addr, uint16_t port);
int lab2_listen(struct lab2_conn *c, uint16_t port);
int lab2_get_request(struct lab2_conn *c);
int lab2_connect(struct lab2_conn *c);
int lab2_accept(struct lab2_conn *c);

/* cq.c: step 2 */
int lab2_create_cq(struct lab2_conn *c, struct ibv_context *ctx);
int lab2_wait_wc(struct lab2_conn *c, struct ibv_wc *wc);

/* msg.c: step 3 */
int lab2_post_recv(struct lab2_conn *c, int slot);
int lab2_post_send(struct lab2_conn *c, uint32_t len);
int lab2_send_msg(struct lab2_conn *c, uint32_t len);
int lab2_recv_msg(struct lab2_conn *c, void *buf, size_t size);

/* rdma.c: step 4 */
struct ibv_mr *lab2_reg_remote_mr(struct ibv_pd *pd, void *buf, size_t len);
void lab2_describe_mr(const struct ibv_mr *mr, struct lab2_mr_msg *m);
int lab2_encode_mr(const struct lab2_mr_msg *m, uint8_t *buf, size_t len);
int lab2_decode_mr(const uint8_t *buf, size_t len, struct lab2_mr_msg *m);
int lab2_post_rdma(struct lab2_conn *c, enum ibv_wr_opcode op, void *local, uint32_t len,
		   uint64_t remote_addr, uint32_t rkey);

/* teardown.c: step 5 */
int lab2_disconnect(struct lab2_conn *c);
int lab2_wait_disconnected(struct lab2_conn *c);
int lab2_destroy(struct lab2_conn *c);

/* session.c: one whole run of each side, calling the steps in order (given, not a step) */
const char *lab2_wr_name(uint64_t wr_id);
int lab2_encode_ping(uint8_t *buf, size_t size, enum lab2_msg_type type, uint32_t seq,
		     const char *text);
int lab2_check_ping(const uint8_t *buf, int len, enum lab2_msg_type type, uint32_t seq);
int lab2_setup(struct lab2_conn *c, bool server);
int lab2_run_server(const struct rl_args *args, int timeout_ms, struct lab2_result *res);
int lab2_run_client(const struct rl_args *args, int timeout_ms, const char *text,
		    struct lab2_result *res);

#endif
