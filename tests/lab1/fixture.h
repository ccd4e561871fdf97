/*
 * fixture.h: what the Lab 1 tests build with plain verbs, so that a test
 * only fails for its own step, and what their checks trust instead of the
 * act: the kernel, the device, and a peer process of the test's own.
 *
 * Which process runs what (tests/harness.h):
 *   fixture.c, in the act: objects and transitions with plain verbs, and
 *       the act's end of the link to the peer. Each helper fails the act's
 *       set-up, with a message, instead of returning an error. One that
 *       does a step is hidden in that step's acts (RL_HIDDEN).
 *   peer.c, started by a setup and read by its check: the peer, a process
 *       that runs no student code; it connects an RC QP to the act's,
 *       reads, writes and sends to it, and reports what really arrived.
 *       Also the reference Lab 1 server and client, and the reference wire
 *       format of struct lab1_dest. What does a step is hidden in the acts.
 *   facts.c, in a check: what the kernel says the act holds (rdma res)
 *       and what the device says (port, GID, limits).
 */
#ifndef RDMALAB_LAB1_FIXTURE_H
#define RDMALAB_LAB1_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "lab1.h"
#include "../harness.h"
#include "rdmalab.h"

#define FX_DEPTH 8
#define FX_BUF_SIZE 4096
#define FX_WC_TIMEOUT_MS 5000
#define FX_OOB_TIMEOUT_MS 20000
#define FX_TEXT_MAX 256 /* a random text the peer or a setup chooses, NUL included */

/* Two RC QPs on one device, one PD, each QP with its own CQ and buffer. */
struct fx_pair {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
	struct ibv_mr *mr[2];
	char *buf[2];
};

/* What a setup tells the act about the peer it started: where it listens. */
struct fx_peer_in {
	uint16_t port;        /* the peer's TCP port on 127.0.0.1 */
	uint16_t server_port; /* FX_PEER_SESSIONS: where the act's lab1 server listens */
	uint32_t offset;      /* FX_PEER_TARGET: where in its buffer the act writes */
};

/* The act's end of the link to the peer: one RC QP, a CQ, a buffer and its MR. */
struct fx_link {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
	int fd;                /* TCP to the peer */
	struct lab1_dest peer; /* the peer's QP and buffer */
};

/* What the peer does, in this order (after connecting its QP to the act's). */
enum fx_peer_do {
	FX_PEER_WRITE = 1 << 0, /* RDMA-write a text of its own into the act's buffer */
	FX_PEER_READ = 1 << 1,  /* RDMA-read 64 bytes of the act's buffer */
	FX_PEER_SEND = 1 << 2,  /* SEND a text of its own into the act's receive */
	FX_PEER_RECV = 1 << 3,  /* take the act's SEND into a receive of its own */
	/* Let the act RDMA-write its buffer (its rkey reaches no more); report it at offset. */
	FX_PEER_TARGET = 1 << 4,
	/* No link: the reference server of the act's lab1 client, then the client of its server. */
	FX_PEER_SESSIONS = 1 << 5,
};

/* What the peer saw; a status is an enum ibv_wc_status, or -1 when not done. */
struct fx_peer_log {
	char error[256]; /* why the peer stopped early, or "" */
	int write_status, read_status, send_status, recv_status;
	uint32_t act_rkey;          /* the rkey the act gave it (what it wrote and read with) */
	int qp_state;               /* its QP's at the end (enum ibv_qp_state), or -1 */
	uint32_t recv_len;          /* bytes of the act's SEND */
	char sent[FX_TEXT_MAX];     /* the text it wrote or sent */
	char received[FX_TEXT_MAX]; /* the act's SEND */
	char target[FX_TEXT_MAX];   /* its buffer at offset, once the act had written */
	int target_completions;     /* completions on its CQ by then (a write makes none) */
	int server_ret, client_ret; /* its sessions: 0, or a negative errno */
	struct lab1_received server_got; /* its server's, from the act's lab1 client */
	char client_msg[LAB1_MSG_MAX], client_text[LAB1_WRITE_MAX]; /* its client's, sent */
};

/*
 * Fail the act's set-up with "expected WHAT, got NULL (step N: see
 * docs/lab1.md#step-N)" when PTR is NULL. Only for the fixture's own
 * objects: what the lab's code returns is said, and the check judges it.
 */
#define fx_need(ptr, what, step)                                                                   \
	ck_assert_msg((ptr) != NULL, "expected %s, got NULL (step %d: see docs/lab1.md#step-%d)",  \
		      what, step, step)

/* fixture.c: in the act */
/* Open the environment's device, allocate a PD, create a CQ or an RC QP. */
struct ibv_context *fx_open(void);
struct ibv_pd *fx_pd(struct ibv_context *ctx);
struct ibv_cq *fx_cq(struct ibv_context *ctx);
struct ibv_qp *fx_qp(struct ibv_pd *pd, struct ibv_cq *cq);
/* A zeroed buffer of LEN bytes registered in PD for local write, remote write and read. */
struct ibv_mr *fx_mr(struct ibv_pd *pd, size_t len);
/* Move QP with plain verbs: to INIT; to RTR aimed at PEER (same device) or at REMOTE; to RTS. */
void fx_to_init(struct ibv_qp *qp);
void fx_to_rtr(struct ibv_qp *qp, struct ibv_qp *peer);
void fx_to_rtr_dest(struct ibv_qp *qp, const struct lab1_dest *remote);
void fx_to_rts(struct ibv_qp *qp);
/* The PSN QP sends from once fx_to_rts() has run (the peer's fx_to_rtr expects it). */
uint32_t fx_psn(const struct ibv_qp *qp);
/* ibv_query_qp with every attribute. */
void fx_query(struct ibv_qp *qp, struct ibv_qp_attr *attr, struct ibv_qp_init_attr *init);
/* Say what ibv_query_qp says of QP, as "PREFIX.state", "PREFIX.port" ... (see facts.c). */
void fx_say_qp(const char *prefix, struct ibv_qp *qp);
/* Say the completion WC as "PREFIX.status", "PREFIX.opcode", "PREFIX.wr_id", "PREFIX.byte_len". */
void fx_say_wc(const char *prefix, const struct ibv_wc *wc);
/* Two QPs connected to each other (RTS both), with a registered buffer each. */
void fx_pair_open(struct fx_pair *p);
/* A receive of LEN bytes at BUF in MR, posted with plain verbs on QP. */
void fx_post_recv(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len);
/* A signaled SEND of LEN bytes at BUF, named by LKEY, posted with plain verbs on QP. */
void fx_post_send(struct ibv_qp *qp, uint32_t lkey, void *buf, uint32_t len);
/* One completion of CQ within TIMEOUT_MS into WC: 1, or 0 when none came. */
int fx_poll(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms);
/* Open L: its objects (QP in RESET), and TCP to the peer IN names. */
void fx_link_open(struct fx_link *l, const struct fx_peer_in *in);
/* Tell the peer L's QP and the buffer BUF of LEN bytes in MR; get the peer's into l->peer. */
void fx_link_swap(struct fx_link *l, struct ibv_mr *mr, void *buf, size_t len);
/* Tell the peer to go on (L's QP is ready: OK) or to give up; wait for its news (a byte). */
void fx_link_ready(struct fx_link *l, bool ok);
void fx_link_wait(struct fx_link *l, char what);
void fx_link_tell(struct fx_link *l, char what);

/* peer.c: in the parent (setup, check) and the peer */
/* Setup: start the peer, to do WHAT (enum fx_peer_do); IN says the act where it is. */
void fx_peer_start(struct fx_peer_in *in, unsigned what);
/* Check: what the peer saw (fails the test when it said nothing); the peer ends. */
bool fx_peer_finish(struct rl_case *c, struct fx_peer_log *log);
/* Check: end the peer without asking it anything (an earlier expectation failed). */
void fx_peer_stop(void);
/* The reference wire format of lab1.h: LAB1_DEST_WIRE_LEN bytes; decode: 0 or -EINVAL. */
void fx_encode_dest(const struct lab1_dest *d, uint8_t out[LAB1_DEST_WIRE_LEN]);
int fx_decode_dest(const uint8_t in[LAB1_DEST_WIRE_LEN], struct lab1_dest *d);
/* The reference lab1 server, for a client connected on FD; client, of HOST:PORT (as session.c). */
int fx_ref_server(int fd, struct lab1_received *got);
int fx_ref_client(const char *host, uint16_t port, const char *msg, const char *text);

/* facts.c: in a check, or a setup */
/* N random bytes into P (getrandom), or fail. */
void fx_random(void *p, size_t n);
/* A random whole number from LO to HI. */
uint32_t fx_random_between(uint32_t lo, uint32_t hi);
/* What the device and its port say (opened in the parent, closed again). */
struct fx_device {
	int max_cqe;
	enum ibv_mtu active_mtu;
	uint16_t lid;
	union ibv_gid gid; /* at RDMALAB_GID_INDEX */
};
struct fx_device fx_device(void);
/* How many of KIND ("pd", "mr", "cq", "qp") the act holds (MAX kept in OUT); -1: failed. */
int fx_res(struct rl_case *c, const char *kind, struct rl_res *out, int max);
/* The one of R[0..N) whose KEY is VALUE (a number, compared as one), or NULL. */
const struct rl_res *fx_res_with(const struct rl_res *r, int n, const char *key,
				 unsigned long long value);
/*
 * Member KEY of R as a number, or -1 when absent. Never ask for "rkey" or
 * "lkey": the kernel shows them only to CAP_NET_ADMIN, and the grader's
 * checks run without it. A key is proven by using it.
 */
long long fx_res_num(const struct rl_res *r, const char *key);
/* Member KEY of R, or "(none)". */
const char *fx_res_str(const struct rl_res *r, const char *key);
/* The QP whose lqpn the act said as NAME, as the kernel sees it; NULL and a failure if none. */
const struct rl_res *fx_act_qp(struct rl_case *c, const char *name, struct rl_res *buf, int max);
/* Whether the act made WHAT (it said NAME non-zero), else fail like fx_need. */
bool fx_made(struct rl_case *c, const char *name, const char *what, int step);
/* The name of a completion status, or "no completion" for -1. */
const char *fx_status_str(long long status);
/* The name of a QP state as rdma res prints it ("RTS", "ERR"), or "unknown" for -1. */
const char *fx_qp_state_str(long long state);

#endif
