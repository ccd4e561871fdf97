/* lab1.h: Lab 1, bring-up and the QP state machine. Every function of the lab, by file. */
#ifndef RDMALAB_LAB1_H
#define RDMALAB_LAB1_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>

#include "rdmalab.h"

#define RL_LAB 1
#include "../common/todo.h"

/*
 * The registered buffer, one per side: a receive lands at offset 0, the
 * client's RDMA write at LAB1_WRITE_OFFSET. Both hold NUL-terminated text.
 */
#define LAB1_BUF_SIZE 4096
#define LAB1_MSG_MAX 256
#define LAB1_WRITE_OFFSET 1024
#define LAB1_WRITE_MAX 1024

#define LAB1_QP_DEPTH 8 /* work requests each queue of the QP holds */
#define LAB1_OOB_TIMEOUT_MS 30000
#define LAB1_WC_TIMEOUT_MS 10000

/* What the peer needs to reach our QP and write into our buffer. */
struct lab1_dest {
	uint32_t qpn;      /* QP number, 24 bits */
	uint32_t psn;      /* first packet sequence number we send, 24 bits */
	uint16_t lid;      /* port LID: 0 and unused on RoCE */
	union ibv_gid gid; /* the GID we send from: RoCE addresses peers by GID */
	uint64_t addr;     /* virtual address of our registered buffer */
	uint32_t rkey;     /* the key the peer names that buffer with */
	uint32_t len;      /* its length in bytes */
};

/*
 * Its wire format: 42 bytes, every number big-endian (network byte order).
 *   offset  0  u32  qpn
 *   offset  4  u32  psn
 *   offset  8  u8[16] gid (as it is: already network order)
 *   offset 24  u64  addr
 *   offset 32  u32  rkey
 *   offset 36  u32  len
 *   offset 40  u16  lid
 */
#define LAB1_DEST_WIRE_LEN 42

/* Every object the lab creates, in the order it creates them. */
struct lab1_res {
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

/* Work request ids, so a completion says what it completes. */
enum lab1_wr_id {
	LAB1_WR_RECV = 1,
	LAB1_WR_SEND = 2,
	LAB1_WR_WRITE = 3,
};

/* What the server got: the message sent to it and the text written into it. */
struct lab1_received {
	char msg[LAB1_MSG_MAX];
	char written[LAB1_WRITE_MAX];
};

/* resources.c: steps 1 to 4 */
struct ibv_pd *lab1_alloc_pd(struct ibv_context *ctx);
struct ibv_mr *lab1_reg_mr(struct ibv_pd *pd, void *buf, size_t len);
struct ibv_cq *lab1_create_cq(struct ibv_context *ctx, int qp_depth);
struct ibv_qp *lab1_create_qp(struct ibv_pd *pd, struct ibv_cq *cq, int depth);

/* qp_states.c: steps 5 to 7 */
int lab1_qp_to_init(struct ibv_qp *qp, uint8_t port);
int lab1_qp_to_rtr(struct ibv_qp *qp, uint8_t port, int gid_index, const struct lab1_dest *remote);
int lab1_qp_to_rts(struct ibv_qp *qp, uint32_t psn);

/* exchange.c: steps 8 and 9 */
int lab1_local_dest(struct ibv_qp *qp, uint8_t port, int gid_index, uint32_t psn, struct ibv_mr *mr,
		    struct lab1_dest *dest);
int lab1_encode_dest(const struct lab1_dest *dest, uint8_t *buf, size_t len);
int lab1_decode_dest(const uint8_t *buf, size_t len, struct lab1_dest *dest);
int lab1_exchange_dest(int fd, const struct lab1_dest *local, struct lab1_dest *remote);

/* transfer.c: step 10 */
int lab1_post_recv(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len);
int lab1_post_send(struct ibv_qp *qp, struct ibv_mr *mr, const void *buf, uint32_t len);
int lab1_post_write(struct ibv_qp *qp, struct ibv_mr *mr, const void *buf, uint32_t len,
		    uint64_t remote_addr, uint32_t rkey);
int lab1_wait_completion(struct ibv_cq *cq, int timeout_ms, struct ibv_wc *wc);

/* teardown.c: step 11 */
int lab1_teardown(struct lab1_res *res);

/* session.c: one whole run of each side, calling the steps in order (given, not a step) */
int lab1_run_server(const struct rl_args *args, struct lab1_received *got);
int lab1_run_client(const struct rl_args *args, const char *msg, const char *text);

#endif
