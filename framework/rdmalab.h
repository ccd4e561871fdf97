/*
 * rdmalab.h: the framework every lab, the receiver and the grader link.
 *
 * This header is the table of contents: every function another file may call
 * is listed here, grouped by the file that defines it. Error idiom: functions
 * return 0 (or a pointer, or a non-negative count) on success and a negative
 * errno (or NULL) on failure, after printing one stderr line that names the
 * verb and the object, with a hint when the cause is a known trap.
 */
#ifndef RDMALAB_H
#define RDMALAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/* Types */

/* How much the kit prints: errors always, info with -v, debug with -vv. */
enum rl_log_level {
	RL_LOG_ERROR = 0,
	RL_LOG_INFO = 1,
	RL_LOG_DEBUG = 2,
};

/* Known traps: causes of failure that deserve a hint on how to fix them. */
enum rl_trap {
	RL_TRAP_NONE = 0,
	RL_TRAP_MEMLOCK,       /* locked-memory limit too low for ibv_reg_mr */
	RL_TRAP_NO_DEVICE,     /* no RDMA device, or none with an ACTIVE port */
	RL_TRAP_GID_INDEX,     /* GID index wrong for this port (RoCE) */
	RL_TRAP_RNR,           /* peer had no receive posted in time */
	RL_TRAP_REMOTE_ACCESS, /* wrong rkey, or MR without remote access */
	RL_TRAP_CM_TIMEOUT,    /* rdma_cm event never came */
	RL_TRAP_TCP_REFUSED,   /* nobody listens on that address and port */
	RL_TRAP_RETRY_EXC,     /* peer QP gone or unreachable */
	RL_TRAP_QUEUE_FULL,    /* posted more work requests than the QP holds */
};

/* Options every program shares; see args.c for the flags and env fallbacks. */
struct rl_args {
	const char *prog; /* basename of argv[0], for messages */
	const char *dev;  /* -d: RDMA device name, NULL for the first active */
	int ib_port;      /* -i: port number on the device (1) */
	int gid_index;    /* -g: GID index, -1 to pick one */
	uint16_t port;    /* -p: TCP / rdma_cm port */
	const char *addr; /* first operand, else RDMALAB_ADDR, else NULL */
	int verbose;      /* -v count, at least RDMALAB_VERBOSE */
	bool help;        /* -h: the caller prints rl_usage() and exits */
	int nrest;        /* how many operands follow addr */
	char **rest;      /* those operands */
};

/* A bounded cursor over a byte buffer; see wire.c. */
struct rl_wire {
	uint8_t *out;      /* buffer being encoded, NULL when decoding */
	const uint8_t *in; /* buffer being decoded */
	size_t len;        /* bytes in the buffer */
	size_t pos;        /* bytes done so far */
	bool err;          /* sticky: set by the first overrun */
};

/* What one side tells the other to connect an RC QP by hand. */
struct rl_qp_dest {
	uint32_t qpn;
	uint32_t psn;
	uint16_t lid;
	union ibv_gid gid;
};

/* A copy of a CM event, taken before the event is acknowledged. */
struct rl_cm_event {
	enum rdma_cm_event_type type;
	int status;
	struct rdma_cm_id *id;     /* for CONNECT_REQUEST: the new connection */
	uint8_t private_data[196]; /* the most rdma_accept() can carry */
	size_t private_len;        /* may be padded: RoCE reports the maximum */
};

/* Macros */

#define RL_DEFAULT_PORT 7471
#define RL_GID_STR_LEN 46 /* INET6_ADDRSTRLEN */

/*
 * RNR: a responder with no receive posted asks the sender to wait
 * RL_MIN_RNR_TIMER (14: 1.28 ms) and retry, RL_RNR_RETRY times (7 would
 * retry for ever and hide the bug); then the send fails with
 * IBV_WC_RNR_RETRY_EXC_ERR.
 */
#define RL_MIN_RNR_TIMER 14
#define RL_RNR_RETRY 6

#define RL_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))

#define rl_err(...) rl_log(RL_LOG_ERROR, __VA_ARGS__)
#define rl_info(...) rl_log(RL_LOG_INFO, __VA_ARGS__)
#define rl_debug(...) rl_log(RL_LOG_DEBUG, __VA_ARGS__)

/* log.c: leveled logging to stderr */
/* Parse "0".."2" or "error", "info", "debug": the level or -EINVAL. */
int rl_log_parse_level(const char *s);
/* Set the level (clamped to error..debug); -v / RDMALAB_VERBOSE feed it. */
void rl_log_set_level(int level);
/* The current level; RDMALAB_VERBOSE decides until someone sets it. */
int rl_log_level(void);
/* Print one line at LEVEL if the current level allows; see rl_err() above. */
void rl_log(int level, const char *fmt, ...) RL_PRINTF(2, 3);

/* error.c: one-line failure reports and hints for known traps */
/* How to get out of TRAP, or NULL when there is no hint. */
const char *rl_hint(enum rl_trap trap);
/* The known trap behind VERB failing with errno ERR, or RL_TRAP_NONE. */
enum rl_trap rl_trap_of_errno(const char *verb, int err);
/* The known trap behind a failed work completion, or RL_TRAP_NONE. */
enum rl_trap rl_trap_of_wc(enum ibv_wc_status status);
/* Format "WHAT: REASON (hint: ...)" into BUF; pure. */
int rl_format_failure(char *buf, size_t size, const char *what, const char *reason,
		      enum rl_trap trap);
/* Print "WHAT: REASON (hint: ...)" as one error line. */
void rl_log_failure(const char *what, const char *reason, enum rl_trap trap);
/* Report "VERB object: strerror (hint)"; returns -ERR for the caller to return. */
int rl_fail(const char *verb, int err, const char *fmt, ...) RL_PRINTF(3, 4);
/* Report a failed work completion with its status string; returns -EIO. */
int rl_fail_wc(const char *what, const struct ibv_wc *wc);

/* args.c: the options every program shares */
/* Parse -d -g -i -p -v -h and the address operand, with env fallbacks. */
int rl_parse_args(int argc, char **argv, struct rl_args *a);
/* The same, looking variables up with ENV instead of getenv (for tests). */
int rl_parse_args_env(int argc, char **argv, char *(*env)(const char *), struct rl_args *a);
/* Print the -h text for the common options; OPERANDS follow them. */
void rl_usage(FILE *f, const char *prog, const char *operands);

/* wire.c: explicit wire formats, network byte order, bounds-checked */
/* Start encoding into BUF of LEN bytes. */
void rl_wire_writer(struct rl_wire *w, void *buf, size_t len);
/* Start decoding LEN bytes of BUF. */
void rl_wire_reader(struct rl_wire *w, const void *buf, size_t len);
/* Put one big-endian field; past the end, set the error and write nothing. */
void rl_wire_put_u8(struct rl_wire *w, uint8_t v);
void rl_wire_put_u16(struct rl_wire *w, uint16_t v);
void rl_wire_put_u32(struct rl_wire *w, uint32_t v);
void rl_wire_put_u64(struct rl_wire *w, uint64_t v);
/* Put N raw bytes (a GID, a hash) as they are. */
void rl_wire_put_bytes(struct rl_wire *w, const void *src, size_t n);
/* Get one big-endian field; past the end, set the error and return 0. */
uint8_t rl_wire_get_u8(struct rl_wire *w);
uint16_t rl_wire_get_u16(struct rl_wire *w);
uint32_t rl_wire_get_u32(struct rl_wire *w);
uint64_t rl_wire_get_u64(struct rl_wire *w);
/* Get N raw bytes into DST; past the end, set the error and zero DST. */
void rl_wire_get_bytes(struct rl_wire *w, void *dst, size_t n);
/* Bytes encoded or decoded so far. */
size_t rl_wire_used(const struct rl_wire *w);
/* Bytes left after the cursor. */
size_t rl_wire_left(const struct rl_wire *w);
/* 0 if every field fit, else -EMSGSIZE (sticky); check once at the end. */
int rl_wire_status(const struct rl_wire *w);

/* device.c: open a device, choose a GID */
/* Open NAME, else RDMALAB_DEVICE, else the first device with an ACTIVE port. */
struct ibv_context *rl_open_device(const char *name);
/* Score a GID of TYPE: 4 RoCE v2, 2 other, +1 IPv4-mapped, 0 empty/fe80::; pure. */
int rl_gid_score(const union ibv_gid *gid, uint32_t type);
/* The best-scoring gid_index of TABLE (ties: lowest), or -ENOENT; pure. */
int rl_gid_pick(const struct ibv_gid_entry *table, size_t n);
/* REQUESTED if >= 0, else RDMALAB_GID_INDEX, else the best GID of PORT. */
int rl_choose_gid_index(struct ibv_context *ctx, uint8_t port, int requested);
/* Write GID as IPv6 text ("::ffff:10.211.0.1") into BUF. */
void rl_gid_str(const union ibv_gid *gid, char buf[RL_GID_STR_LEN]);

/* verbs.c: resources and RC QP state transitions */
/* Allocate a protection domain. */
struct ibv_pd *rl_alloc_pd(struct ibv_context *ctx);
/* Create a CQ of DEPTH entries, waking CH (may be NULL) when armed. */
struct ibv_cq *rl_create_cq(struct ibv_context *ctx, int depth, struct ibv_comp_channel *ch);
/* Register LEN bytes at BUF with ACCESS (IBV_ACCESS_* flags). */
struct ibv_mr *rl_reg_mr(struct ibv_pd *pd, void *buf, size_t len, int access);
/* Create an RC QP with DEPTH send and receive slots, one SGE each. */
struct ibv_qp *rl_create_rc_qp(struct ibv_pd *pd, struct ibv_cq *send_cq, struct ibv_cq *recv_cq,
			       int depth);
/* Fill DEST with what the peer needs to reach QP: QPN, PSN, LID, GID. */
int rl_qp_local_dest(struct ibv_qp *qp, uint8_t port, int gid_index, uint32_t psn,
		     struct rl_qp_dest *dest);
/* RESET -> INIT on PORT, allowing the peer ACCESS. */
int rl_qp_to_init(struct ibv_qp *qp, uint8_t port, int access);
/* INIT -> RTR, aimed at REMOTE, with source GID_INDEX when REMOTE has a GID. */
int rl_qp_to_rtr(struct ibv_qp *qp, uint8_t port, int gid_index, const struct rl_qp_dest *remote);
/* RTR -> RTS, sending from PSN. */
int rl_qp_to_rts(struct ibv_qp *qp, uint32_t psn);

/* post.c: post one signaled work request over a buffer inside MR */
/* SEND LEN bytes at BUF; the peer must have a receive posted. */
int rl_post_send_msg(struct ibv_qp *qp, struct ibv_mr *mr, const void *buf, uint32_t len,
		     uint64_t wr_id);
/* Post a receive of up to LEN bytes into BUF. */
int rl_post_recv(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len, uint64_t wr_id);
/* RDMA WRITE LEN bytes at BUF to REMOTE_ADDR / RKEY. */
int rl_post_write(struct ibv_qp *qp, struct ibv_mr *mr, const void *buf, uint32_t len,
		  uint64_t remote_addr, uint32_t rkey, uint64_t wr_id);
/* RDMA READ LEN bytes from REMOTE_ADDR / RKEY into BUF. */
int rl_post_read(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len,
		 uint64_t remote_addr, uint32_t rkey, uint64_t wr_id);

/* cq.c: wait for completions (timeouts in ms, negative: for ever) */
/* Busy-poll one completion: 0, -EIO (failed; WC says why) or -ETIMEDOUT. */
int rl_poll_cq(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms);
/* Create a completion channel (a file descriptor CQs can wake). */
struct ibv_comp_channel *rl_create_comp_channel(struct ibv_context *ctx);
/* Arm CQ to raise one event on its channel at the next completion. */
int rl_req_notify_cq(struct ibv_cq *cq);
/* Sleep until CH has an event, take it and acknowledge it; *CQ is whose. */
int rl_get_cq_event(struct ibv_comp_channel *ch, int timeout_ms, struct ibv_cq **cq);
/* One completion of CQ, sleeping on CH between events; as rl_poll_cq(). */
int rl_wait_cq(struct ibv_comp_channel *ch, struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms);
/* Discard every completion left in CQ; returns how many. */
int rl_drain_cq(struct ibv_cq *cq);

/* oob.c: out-of-band TCP exchange */
/* Resolve HOST (NULL: any) and PORT to an IPv4 socket address. */
int rl_resolve_ipv4(const char *host, uint16_t port, struct sockaddr_in *sin);
/* Listen on HOST:PORT (PORT 0: any, reported in *BOUND_PORT); the socket. */
int rl_oob_listen(const char *host, uint16_t port, uint16_t *bound_port);
/* Accept one client on LFD within TIMEOUT_MS; its socket. */
int rl_oob_accept(int lfd, int timeout_ms);
/* Connect to HOST:PORT, retrying while refused, within TIMEOUT_MS; the socket. */
int rl_oob_connect(const char *host, uint16_t port, int timeout_ms);
/* Send exactly LEN bytes within TIMEOUT_MS. */
int rl_oob_send(int fd, const void *buf, size_t len, int timeout_ms);
/* Receive exactly LEN bytes within TIMEOUT_MS; -ECONNRESET if the peer closes. */
int rl_oob_recv(int fd, void *buf, size_t len, int timeout_ms);

/* cm.c: rdma_cm connection set-up and teardown (every event acknowledged) */
/* Create an event channel for CM events. */
struct rdma_event_channel *rl_cm_create_channel(void);
/* Wait for the next event on CH and require EXPECTED; copy it into EV. */
int rl_cm_wait_event(struct rdma_event_channel *ch, enum rdma_cm_event_type expected,
		     int timeout_ms, struct rl_cm_event *ev);
/* Client: create an id and resolve HOST:PORT to an address and a route. */
int rl_cm_resolve(struct rdma_event_channel *ch, const char *host, uint16_t port, int timeout_ms,
		  struct rdma_cm_id **id);
/* Create an RC QP on ID with DEPTH slots each way, completing on CQ. */
int rl_cm_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_cq *cq, int depth);
/* Client: connect with private data PRIV, wait ESTABLISHED (into EV). */
int rl_cm_connect(struct rdma_cm_id *id, const void *priv, uint8_t len, int timeout_ms,
		  struct rl_cm_event *ev);
/* Server: create an id, bind HOST:PORT (0: any, in *BOUND_PORT), listen. */
int rl_cm_listen(struct rdma_event_channel *ch, const char *host, uint16_t port,
		 struct rdma_cm_id **id, uint16_t *bound_port);
/* Server: wait for CONNECT_REQUEST; EV->id is the new connection. */
int rl_cm_get_request(struct rdma_event_channel *ch, int timeout_ms, struct rl_cm_event *ev);
/* Server: accept ID with private data PRIV, wait ESTABLISHED. */
int rl_cm_accept(struct rdma_cm_id *id, const void *priv, uint8_t len, int timeout_ms);
/* Disconnect ID and wait for its DISCONNECTED event. */
int rl_cm_disconnect(struct rdma_cm_id *id, int timeout_ms);
/* Destroy ID's QP (if any), then ID; NULL is fine. */
void rl_cm_destroy(struct rdma_cm_id *id);

#endif
