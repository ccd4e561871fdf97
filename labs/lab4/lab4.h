/* lab4.h: Lab 4, fast and EFA-style transfers (docs/lab4.md). Every function, by file. */
#ifndef RDMALAB_LAB4_H
#define RDMALAB_LAB4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <openssl/evp.h>

#include "rdmalab.h"

#define RL_LAB 4
#include "../common/todo.h"

/* Types */

/* How the two QPs talk: RC everywhere, SRD on AWS EFA only (docs/efa.md). */
enum lab4_transport {
	LAB4_RC = 0,
	LAB4_SRD = 1,
};

/* How the sender waits for its completions (wait.c, step 5; --wait). */
enum lab4_wait {
	LAB4_WAIT_BUSY = 0,     /* poll in a loop: sees a completion at once, spends a whole CPU */
	LAB4_WAIT_EVENT = 1,    /* sleep on the completion channel whenever the CQ is empty */
	LAB4_WAIT_ADAPTIVE = 2, /* poll for spin_us, then sleep as EVENT does (the default) */
};

/* The file being sent, mapped read-only (file.c). */
struct lab4_file {
	const char *path;
	int fd;
	uint64_t size;
	uint8_t *data;      /* the mapping; NULL for 0 bytes */
	uint8_t sha256[32]; /* lab4_hash_file() */
};

/* The sending side of a transfer (setup.c makes it; steps 1 and 2 drive it). */
struct lab4_sender {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *comp; /* wakes the sender when a write completes */
	struct ibv_cq *cq;             /* send completions: a plain CQ, armed only to sleep */
	struct ibv_qp *qp;             /* RC (or SRD), made with ibv_create_qp_ex() */
	struct ibv_qp_ex *qpx;         /* the same QP, for ibv_wr_*() (step 2) */
	struct ibv_mr *mr;             /* the file, access 0; NULL for 0 bytes */
	const uint8_t *data;           /* the bytes to send */
	uint64_t size;                 /* how many */
	uint64_t remote_addr;          /* where the receiver's buffer starts */
	uint32_t rkey;                 /* and its key */
	struct ibv_ah *ah;             /* SRD only: where the peer is; NULL for RC */
	uint32_t remote_qpn;           /* SRD only: the peer's QP number */
	uint32_t chunk;                /* bytes per RDMA write, the last chunk may be shorter */
	uint32_t nchunks;              /* lab4_nchunks(size, chunk) */
	uint32_t window;               /* most writes posted and not known complete */
	uint32_t signal_every;         /* k: ask for a completion on every k-th write */
	int timeout_ms;                /* longest wait for any one completion */
	enum lab4_wait wait;           /* how lab4_poll_sends() waits */
	uint32_t spin_us;              /* adaptive: how long to poll before sleeping */
	/* Step 1 keeps these two up to date. */
	uint32_t posted;    /* chunks posted so far: 0, 1, 2 ... in order */
	uint32_t completed; /* chunks known complete: every one before a signaled completion */
	/* Posts chunk INDEX; main.c sets lab4_post_chunk (step 2), tests their own. */
	int (*post)(struct lab4_sender *s, uint32_t index, bool signaled);
};

/* One chunk the receiver learned about from a completion (step 2). */
struct lab4_arrival {
	uint32_t index; /* the immediate data, in host order */
	uint32_t len;   /* the completion's byte_len */
};

/* The receiving side of a transfer (setup.c makes it; step 2 drives it). */
struct lab4_receiver {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *comp; /* wakes the receiver when a chunk lands */
	struct ibv_cq_ex *cq;          /* receive completions: the extended CQ */
	struct ibv_qp *qp;
	struct ibv_mr *mr;     /* the buffer, local and remote write; NULL for 0 bytes */
	uint8_t *buf;          /* where the file lands, SIZE bytes */
	uint64_t size;         /* the file's size, as announced */
	uint32_t chunk;        /* as announced */
	uint32_t nchunks;      /* lab4_nchunks(size, chunk) */
	uint32_t recv_depth;   /* receives the QP holds; each write with immediate takes one */
	uint32_t recvs_posted; /* receives posted so far, never more than nchunks */
	int watch_fd;          /* a socket whose EOF means the sender is gone, or -1 */
	int timeout_ms;        /* longest wait for the next chunk */
	EVP_MD_CTX *hash;      /* SHA-256 of the chunks so far, started by setup.c */
	uint8_t announced[32]; /* the sender's SHA-256 */
	/* Step 2 fills these. */
	uint32_t arrived;   /* chunks whose completion came, checked, in order */
	uint32_t hashed;    /* chunks hashed so far: never more than arrived */
	uint8_t sha256[32]; /* the hash of every byte received */
	bool good;          /* sha256 equals announced */
};

/* What one side tells the other over TCP before RDMA runs (wire.c, docs/lab4.md). */
struct lab4_hello {
	uint8_t transport;  /* enum lab4_transport */
	uint64_t size;      /* file bytes */
	uint32_t chunk;     /* bytes per write */
	uint8_t sha256[32]; /* the file's hash */
	struct rl_qp_dest dest;
};

struct lab4_accept {
	uint16_t status; /* 0, or an errno saying why the receiver refuses */
	struct rl_qp_dest dest;
	uint32_t qkey;    /* SRD only */
	uint64_t addr;    /* the buffer's address, 0 for 0 bytes */
	uint32_t rkey;    /* its rkey, 0 for 0 bytes */
	uint32_t credits; /* receives posted: the sender's window may not exceed it */
};

struct lab4_result {
	uint8_t good;
	uint64_t received;
	uint8_t sha256[32];
};

/* What UD ping and pong tell each other: where to send, and what is coming. */
struct lab4_ud_hello {
	uint32_t qpn;
	uint32_t qkey;
	union ibv_gid gid;
	uint32_t count; /* datagrams the ping sends */
	uint32_t size;  /* bytes in each */
};

/* A UD queue pair and its buffers (ud.c, step 3). */
struct lab4_ud {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;      /* the receives' completions */
	struct ibv_cq *send_cq; /* the sends'; NULL: cq has them too */
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf; /* LAB4_UD_SLOTS receive slots of LAB4_GRH_LEN + mtu, then the send slot */
	uint32_t mtu; /* the port's active MTU in bytes: the largest datagram */
	uint8_t port;
	int gid_index;
	uint32_t qkey;
};

/* Where a UD datagram goes: the peer's address handle, QP number and Q_Key. */
struct lab4_ud_peer {
	struct ibv_ah *ah;
	uint32_t qpn;
	uint32_t qkey;
	union ibv_gid gid;
};

/* Macros */

/*
 * Bytes per write. 4 MiB chunks were among the fastest in the sweep of
 * docs/lab4.md ("Measured: window and chunk size", User-Mode Linux): 1 MiB
 * chunks were 5 to 8% slower in the same rounds, 256 KiB ones 15%; 16 MiB
 * ones were no faster and leave a 64 MiB file only 4 writes to pipeline.
 */
#define LAB4_DEFAULT_CHUNK (4U << 20)
/*
 * Without --chunk, a small file is cut into at least this many chunks
 * (lab4_pick_chunk()): one write leaves nothing to pipeline. In User-Mode
 * Linux a 1 MiB file went 3.0 Gb/s as one write, 3.8 as two (medians of
 * 7, docs/lab4.md); at 2 and 4 MiB the split changed nothing measurable.
 */
#define LAB4_MIN_CHUNKS 2
#define LAB4_MIN_PICKED_CHUNK (64U << 10) /* lab4_pick_chunk() halves no lower */
#define LAB4_DEFAULT_WINDOW 16            /* writes outstanding */
#define LAB4_DEFAULT_SIGNAL 4             /* a completion every 4th write */
#define LAB4_MAX_WINDOW 256               /* the send queue's depth */
#define LAB4_MAX_CHUNK (1U << 30)
#define LAB4_MAX_FILE (1ULL << 32) /* the receiver holds the file in memory */
/*
 * Receives posted at the start (each chunk takes one): a file of up to this
 * many chunks (any file serve takes, LAB4_MAX_FILE, in chunks of 1 MiB or
 * more) needs none posted again, so the receiver, which hashes at the
 * lowest priority (main.c), has nothing urgent to do while the chunks land.
 */
#define LAB4_RECV_DEPTH 4096
#define LAB4_POLL_BATCH 32            /* completions taken at once */
#define LAB4_WARM_UP_WR_ID UINT32_MAX /* lab4_warm_up()'s write: no chunk's index */
#define LAB4_HASH_PIECE (1U << 20)    /* bytes read at once to hash the file */
/*
 * Adaptive wait: poll this long before sleeping. About what a sleep and a
 * wake-up cost on an ordinary Linux machine (tens of us: two context
 * switches through a pipe took 13.5 us on the build machine), so spinning
 * first never costs more than twice the better of busy and event, however
 * long the wait turns out to be. On rxe it is under 1% of the gap between
 * two signaled completions (docs/lab4.md#step-5).
 */
#define LAB4_SPIN_BUDGET_US 50
#define LAB4_SPIN_CHECK 64        /* empty polls between two reads of the clock */
#define LAB4_TIMEOUT_MS 30000     /* default longest wait (--timeout) */
#define LAB4_QKEY 0x11111111      /* UD and SRD: the Q_Key both sides agree on */
#define LAB4_GRH_LEN 40           /* a UD receive starts with this many GRH bytes */
#define LAB4_UD_SLOTS 16          /* UD receives kept posted */
#define LAB4_UD_RESEND_MS 200     /* ud-ping sends a datagram again when its echo takes longer */
#define LAB4_UD_TRIES 10          /* ... and gives up after this many sends */
#define LAB4_EFA_VENDOR_ID 0x1d0f /* Amazon: ibv_device_attr.vendor_id of EFA */

/* file.c: the file to send (given) */
int lab4_open_file(struct lab4_file *f, const char *path);
int lab4_hash_file(struct lab4_file *f);
void lab4_close_file(struct lab4_file *f);
void lab4_sha256_hex(const uint8_t sha256[32], char hex[65]);
uint32_t lab4_nchunks(uint64_t size, uint32_t chunk);
uint32_t lab4_pick_chunk(uint64_t size);
uint32_t lab4_chunk_len(uint64_t size, uint32_t chunk, uint32_t index);
int64_t lab4_now_ms(void);
int64_t lab4_now_us(void);

/* setup.c: devices, QPs, buffers, connection (given) */
struct ibv_qp *lab4_create_qp(struct ibv_pd *pd, struct ibv_cq *send_cq, struct ibv_cq *recv_cq,
			      uint32_t send_depth, uint32_t recv_depth,
			      enum lab4_transport transport);
int lab4_qp_connect(struct ibv_qp *qp, uint8_t port, int gid_index, enum lab4_transport transport,
		    const struct rl_qp_dest *remote);
int lab4_sender_open(struct lab4_sender *s, struct ibv_context *ctx, const struct lab4_file *f,
		     enum lab4_transport transport);
void lab4_sender_close(struct lab4_sender *s);
int lab4_warm_up(struct lab4_sender *s);
int lab4_receiver_open(struct lab4_receiver *r, struct ibv_context *ctx, uint64_t size,
		       uint32_t chunk, const uint8_t announced[32], enum lab4_transport transport);
int lab4_receiver_connect(struct lab4_receiver *r, uint8_t port, int gid_index,
			  enum lab4_transport transport, const struct rl_qp_dest *remote);
void lab4_receiver_close(struct lab4_receiver *r);
int lab4_post_recvs(struct lab4_receiver *r, uint32_t n);
int lab4_wait_arrivals(struct lab4_receiver *r);

/* wire.c: the TCP messages before and after the transfer (given) */
int lab4_send_hello(int fd, const struct lab4_hello *h, int timeout_ms);
int lab4_recv_hello(int fd, struct lab4_hello *h, int timeout_ms);
int lab4_send_accept(int fd, const struct lab4_accept *a, int timeout_ms);
int lab4_recv_accept(int fd, struct lab4_accept *a, int timeout_ms);
int lab4_send_result(int fd, const struct lab4_result *res, int timeout_ms);
int lab4_recv_result(int fd, struct lab4_result *res, int timeout_ms);
int lab4_send_ud_hello(int fd, const struct lab4_ud_hello *h, int timeout_ms);
int lab4_recv_ud_hello(int fd, struct lab4_ud_hello *h, int timeout_ms);

/* pipeline.c: step 1 */
int lab4_pipeline(struct lab4_sender *s);

/* xverbs.c: step 2 */
int lab4_post_chunk(struct lab4_sender *s, uint32_t index, bool signaled);
int lab4_poll_arrivals(struct lab4_receiver *r, struct lab4_arrival *out, int max);
int lab4_receive_file(struct lab4_receiver *r);

/* ud.c: step 3, and the UD queue pair around it (given) */
int lab4_ud_to_rts(struct ibv_qp *qp, uint8_t port, uint32_t qkey);
struct ibv_ah *lab4_ud_make_ah(struct ibv_pd *pd, uint8_t port, int gid_index,
			       const union ibv_gid *peer);
int lab4_ud_send(struct lab4_ud *u, const struct lab4_ud_peer *peer, const void *msg, uint32_t len,
		 uint64_t wr_id);
int lab4_ud_payload(const uint8_t *slot, uint32_t byte_len, const uint8_t **payload, uint32_t *len);
int lab4_ud_open(struct lab4_ud *u, struct ibv_context *ctx, uint8_t port, int gid_index);
void lab4_ud_close(struct lab4_ud *u);
int lab4_ud_post_recv(struct lab4_ud *u, int slot);
uint8_t *lab4_ud_slot(struct lab4_ud *u, int slot);

/* wait.c: step 5, and the strategies around it (busy given) */
const char *lab4_wait_name(enum lab4_wait wait);
int lab4_wait_parse(const char *name, enum lab4_wait *out);
int lab4_spin_sends(struct lab4_sender *s, struct ibv_wc *wc, int max, int64_t until_us);
int lab4_sleep_sends(struct lab4_sender *s, int64_t deadline_ms);
int lab4_poll_busy(struct lab4_sender *s, struct ibv_wc *wc, int max);
int lab4_poll_event(struct lab4_sender *s, struct ibv_wc *wc, int max);
int lab4_poll_adaptive(struct lab4_sender *s, struct ibv_wc *wc, int max);
int lab4_poll_sends(struct lab4_sender *s, struct ibv_wc *wc, int max);

/* transport.c: step 4 */
int lab4_check_transport(struct ibv_context *ctx, enum lab4_transport transport);
const char *lab4_transport_name(enum lab4_transport transport);

#endif
