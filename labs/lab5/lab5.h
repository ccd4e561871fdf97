/* lab5.h: Lab 5, one to many: UD over rdma_cm, multicast, a shared receive queue (docs/lab5.md). Every function, by file. */
#ifndef RDMALAB_LAB5_H
#define RDMALAB_LAB5_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rdmalab.h"

#define RL_LAB 5
#include "../common/todo.h"

/* Macros */

#define LAB5_GRH_LEN 40         /* a UD receive starts with this many GRH bytes */
#define LAB5_HDR_LEN 12         /* struct lab5_hdr on the wire: lab5_hdr_encode() */
#define LAB5_MAX_PAYLOAD 4096   /* a payload buffer's size; the path MTU bounds a datagram */
#define LAB5_SLOTS 16           /* receives an endpoint keeps: GRH, header and payload each */
#define LAB5_SEND_SGES 2        /* a send gathers the header and the payload */
#define LAB5_RECV_SGES 3        /* a receive scatters the GRH, the header and the payload */
#define LAB5_MC_QPN 0xffffff    /* the QP number a datagram to a multicast group is sent to */
#define LAB5_TIMEOUT_MS 5000    /* default longest wait for one event or completion */
#define LAB5_SRQ_DEPTH 64       /* receives the shared queue holds */
#define LAB5_SRQ_LIMIT 16       /* the shared queue's low-water mark */
#define LAB5_SRQ_MSG 256        /* bytes a client's message may have (one SRQ slot) */
#define LAB5_MAX_CLIENTS 16     /* RC clients one server takes */
#define LAB5_MSG_HELLO 1        /* a member's "my receives are posted" (step 3) */
#define LAB5_MSG_DATA 2         /* a datagram of the stream */
#define LAB5_WR_SEND LAB5_SLOTS /* a send's wr_id; a receive's is its slot, below it */

/* Types */

/*
 * What every datagram starts with, in network byte order on the wire
 * (lab5_hdr_encode/decode, given): its kind, its number in the stream and
 * how many payload bytes follow.
 */
struct lab5_hdr {
	uint32_t kind; /* LAB5_MSG_* */
	uint32_t seq;  /* 0, 1, 2 ... per sender */
	uint32_t len;  /* payload bytes after the header */
};

/*
 * A UD endpoint over rdma_cm (ud.c, steps 1 to 3): one CM id and its
 * channel, the verbs objects on the id's device, and buffers in one
 * registered region, kept apart so that a send gathers and a receive
 * scatters (step 2).
 */
struct lab5_ud {
	struct rdma_event_channel *ch; /* the CM events of ID */
	struct rdma_cm_id *id;         /* RDMA_PS_UDP (step 1) */
	struct ibv_pd *pd;
	struct ibv_cq *cq; /* sends and receives complete here */
	struct ibv_qp *qp; /* the UD QP, made on ID (step 1) */
	struct ibv_mr *mr; /* covers BUF */
	uint8_t *buf;      /* the region below, LAB5_UD_BUF_LEN bytes */
	/* Inside BUF, disjoint: */
	uint8_t *tx_hdr;     /* LAB5_HDR_LEN: the header of the next send */
	uint8_t *tx_payload; /* LAB5_MAX_PAYLOAD: its payload */
	uint8_t *rx_grh;     /* LAB5_SLOTS x LAB5_GRH_LEN */
	uint8_t *rx_hdr;     /* LAB5_SLOTS x LAB5_HDR_LEN */
	uint8_t *rx_payload; /* LAB5_SLOTS x LAB5_MAX_PAYLOAD */
	/* Where sends go: the peer (step 1) or the group (step 3). */
	struct ibv_ah *ah;
	uint32_t remote_qpn;
	uint32_t remote_qkey;
	uint32_t mtu;      /* the port's active MTU in bytes: the largest datagram */
	int timeout_ms;    /* longest wait for one event or completion */
	uint32_t next_seq; /* lab5_send_msg() numbers its datagrams */
	/*
	 * Sends and receives complete on the one CQ: given.c's pollers keep here
	 * the completions of the other kind than the one awaited (a joined
	 * member receives its own datagrams while it waits for their sends).
	 */
	struct ibv_wc held[LAB5_SLOTS + 1];
	uint32_t nheld;
	/* Multicast (step 3): */
	struct sockaddr_storage group; /* the group joined, for the leave */
	bool joined;
	bool send_only;
};

#define LAB5_UD_BUF_LEN                                                                            \
	(LAB5_HDR_LEN + LAB5_MAX_PAYLOAD +                                                         \
	 LAB5_SLOTS * (LAB5_GRH_LEN + LAB5_HDR_LEN + LAB5_MAX_PAYLOAD))

/* One datagram an endpoint received (step 2): where its parts landed. */
struct lab5_msg {
	struct lab5_hdr hdr;
	const uint8_t *payload; /* inside the endpoint's rx_payload */
	uint32_t payload_len;
	uint32_t src_qp; /* the sender's QP number (wc.src_qp) */
	int slot;        /* the receive it took: post it again when done */
};

/* A shared receive queue and its buffers (srq.c, step 4). */
struct lab5_srq {
	struct ibv_srq *srq;
	struct ibv_mr *mr;
	uint8_t *buf;     /* DEPTH slots of LAB5_SRQ_MSG bytes */
	uint32_t depth;   /* receives it holds */
	uint32_t limit;   /* the low-water mark armed */
	uint32_t posted;  /* receives in the queue now */
	bool *free;       /* DEPTH flags: slot I is taken by no posted receive */
	uint32_t refills; /* limit events handled */
};

/* One client of the server (server.c, step 5). */
struct lab5_client {
	struct rdma_cm_id *id; /* NULL: none now (it left, or the slot was never used: qp_num 0) */
	uint32_t qp_num;
	uint32_t messages; /* received from it so far */
	uint64_t bytes;
	bool gone; /* it disconnected */
};

/*
 * The server (server.c, step 5): one listener, one CQ, one SRQ, an RC QP
 * per client; one thread waits on the CM channel, the completion channel
 * and the device's async events at once.
 */
struct lab5_server {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen;
	struct ibv_context *ctx; /* the listener's device, once bound */
	struct ibv_pd *pd;
	struct ibv_comp_channel *comp;
	struct ibv_cq *cq;
	struct lab5_srq srq;
	struct lab5_client clients[LAB5_MAX_CLIENTS];
	uint32_t expected; /* clients to serve before lab5_serve() returns */
	uint32_t served;   /* clients that connected and then disconnected */
	uint64_t messages; /* messages received in all */
	int timeout_ms;    /* longest wait with nothing happening */
};

/* given.c: events, buffers and the header (given) */
int lab5_wait_event(struct rdma_event_channel *ch, enum rdma_cm_event_type want,
		    struct rdma_cm_event *copy, int timeout_ms);
int lab5_resolve_addr(struct rdma_cm_id *id, struct rdma_event_channel *ch,
		      const struct sockaddr *src, const struct sockaddr *dst, int timeout_ms);
int lab5_resolve_route(struct rdma_cm_id *id, struct rdma_event_channel *ch, int timeout_ms);
int lab5_parse_addr(const char *host, uint16_t port, struct sockaddr_storage *out);
void lab5_hdr_encode(const struct lab5_hdr *h, uint8_t out[LAB5_HDR_LEN]);
void lab5_hdr_decode(const uint8_t in[LAB5_HDR_LEN], struct lab5_hdr *h);
int lab5_ud_buffers(struct lab5_ud *u);
void lab5_ud_close(struct lab5_ud *u);
int lab5_poll_recv(struct lab5_ud *u, struct ibv_wc *wc);
int lab5_poll_send(struct lab5_ud *u, struct ibv_wc *wc);
uint32_t lab5_port_mtu(struct rdma_cm_id *id);

/* ud.c: step 1, UD over rdma_cm */
int lab5_ud_create_qp(struct lab5_ud *u);
int lab5_ud_connect(struct lab5_ud *u, const char *host, uint16_t port);

/* sge.c: step 2, gather and scatter */
int lab5_post_send_gather(struct lab5_ud *u, const struct lab5_hdr *h, const void *payload);
int lab5_post_recv_scatter(struct lab5_ud *u, int slot);
int lab5_recv_msg(struct lab5_ud *u, struct lab5_msg *m);
int lab5_send_msg(struct lab5_ud *u, uint32_t kind, const void *payload, uint32_t len);

/* mcast.c: step 3, a multicast group */
int lab5_mc_join(struct lab5_ud *u, const char *local, const char *group, bool send_only);
int lab5_mc_leave(struct lab5_ud *u);

/* srq.c: step 4, a shared receive queue */
int lab5_srq_open(struct lab5_srq *s, struct ibv_pd *pd, uint32_t depth, uint32_t limit);
int lab5_srq_refill(struct lab5_srq *s);
void lab5_srq_close(struct lab5_srq *s);

/* server.c: step 5, many clients in one thread */
int lab5_server_open(struct lab5_server *s, uint16_t port, uint32_t expected);
int lab5_serve(struct lab5_server *s);
void lab5_server_close(struct lab5_server *s);

/* run_ud.c, run_mc.c, run_server.c: the program's commands (given; main.c picks one) */
int lab5_cmd_ud_serve(int argc, char **argv);
int lab5_cmd_ud_send(int argc, char **argv);
int lab5_cmd_mc_send(int argc, char **argv);
int lab5_cmd_mc_recv(int argc, char **argv);
int lab5_cmd_serve(int argc, char **argv);
int lab5_cmd_clients(int argc, char **argv);

#endif
