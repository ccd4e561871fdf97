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
	RL_TRAP_QP_ATTR,       /* a QP transition refused its state, mask or values */
};

/* Options every program shares; see args.c for the flags and env fallbacks. */
struct rl_args {
	const char *prog; /* basename of argv[0], for messages */
	const char *dev;  /* -d: RDMA device name, NULL for the first active */
	int ib_port;      /* -i: port number on the device (1) */
	int gid_index;    /* -g: GID index, -1 to pick one */
	uint16_t port;    /* -p: TCP / rdma_cm port */
	const char *addr; /* first operand, else RDMALAB_ADDR, else NULL */
	bool addr_given;  /* addr came from the command line, not the environment */
	int verbose;      /* -v count, at least RDMALAB_VERBOSE */
	bool help;        /* -h: the caller prints rl_usage() and exits */
	int nrest;        /* how many operands follow addr */
	char **rest;      /* those operands */
};

/* One JSON object being written into a caller's buffer; see json.c. */
struct rl_json {
	char *buf;
	size_t size, len;
	int members; /* written so far: a comma goes before the next */
	bool err;    /* sticky: the object did not fit */
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

/*
 * Lab 3 protocol (docs/protocol.md). Its limits come first, as the message
 * structs below are sized by them.
 */
#define RL_PROTO_MAGIC 0x524c3033u /* "RL03" */
#define RL_PROTO_VERSION 1
#define RL_PROTO_HEADER_LEN 8
#define RL_PROTO_MAX_MSG 256 /* no message is longer; post receives this big */
#define RL_PROTO_MAX_FILE (1ULL << 40)
#define RL_PROTO_MAX_ID 64
#define RL_PROTO_MAX_KEY 64
#define RL_PROTO_MAX_TEXT 160

/*
 * The messages a sender and the receiver
 * exchange over SEND/RECV. Each decoded message is one of these structs.
 */
enum rl_msg_type {
	RL_MSG_FILE_INFO = 1,   /* sender: the file's size and SHA-256 */
	RL_MSG_WINDOW = 2,      /* receiver: write file bytes here */
	RL_MSG_WINDOW_DONE = 3, /* sender: that window is written */
	RL_MSG_DONE = 4,        /* sender: the whole file is written */
	RL_MSG_RESULT = 5,      /* receiver: the hash matched or not */
	RL_MSG_STUDENT_ID = 6,  /* sender: who is asking for a key */
	RL_MSG_KEY = 7,         /* receiver: the secret key for that ID */
	RL_MSG_ERROR = 8,       /* either side: why the connection ends */
};

/* Why a message was refused: the code an ERROR carries, and what decoding returns. */
enum rl_proto_error {
	RL_PERR_NONE = 0,
	RL_PERR_BAD_MAGIC = 1,     /* the first 4 bytes are not RL_PROTO_MAGIC */
	RL_PERR_BAD_VERSION = 2,   /* a version this side does not speak */
	RL_PERR_BAD_TYPE = 3,      /* a message type that does not exist */
	RL_PERR_MALFORMED = 4,     /* wrong length, or a field out of its range */
	RL_PERR_BAD_STATE = 5,     /* a valid message at the wrong time */
	RL_PERR_TOO_LARGE = 6,     /* file larger than the receiver accepts */
	RL_PERR_BUSY = 7,          /* too many connections, or memory budget spent */
	RL_PERR_TIMEOUT = 8,       /* the peer was idle too long at one step */
	RL_PERR_BAD_ID = 9,        /* ID empty, too long, unprintable, or token wrong */
	RL_PERR_NOT_VERIFIED = 10, /* ID sent without a good hash first */
	RL_PERR_BAD_WINDOW = 11,   /* WINDOW_DONE for a window that was not granted */
	RL_PERR_TRANSFER = 12,     /* the RDMA transfer failed (e.g. remote access) */
	RL_PERR_INTERNAL = 13,     /* the receiver failed on its own side */
};

struct rl_msg_file_info {
	uint64_t size;
	uint8_t sha256[32];
};

struct rl_msg_window {
	uint32_t index;  /* 0, 1, 2 ... in file order */
	uint64_t offset; /* where in the file the window starts */
	uint32_t len;    /* bytes to write, at least 1 */
	uint64_t addr;   /* remote address of the first byte */
	uint32_t rkey;
};

struct rl_msg_window_done {
	uint32_t index; /* the window written */
	uint32_t len;   /* bytes written: the window's len */
};

struct rl_msg_result {
	uint8_t good;       /* 1 if the hash matched, else 0 */
	uint64_t received;  /* bytes the receiver hashed */
	uint8_t sha256[32]; /* what it computed */
};

struct rl_msg_student_id {
	char id[RL_PROTO_MAX_ID + 1]; /* graphic ASCII, NUL-terminated */
};

struct rl_msg_key {
	char key[RL_PROTO_MAX_KEY + 1]; /* graphic ASCII, NUL-terminated */
};

struct rl_msg_error {
	uint16_t code; /* enum rl_proto_error; unknown codes are kept as they are */
	char text[RL_PROTO_MAX_TEXT + 1]; /* printable ASCII, NUL-terminated */
};

/* Any one message: TYPE says which member of the union is valid. */
struct rl_msg {
	enum rl_msg_type type;
	union {
		struct rl_msg_file_info file_info;
		struct rl_msg_window window;
		struct rl_msg_window_done window_done;
		struct rl_msg_result result;
		struct rl_msg_student_id student_id;
		struct rl_msg_key key;
		struct rl_msg_error error;
	} u;
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

/* json.c: one JSON object a line, the kit's one JSON string escaper in C */
/* Start an object ("{") in BUF of SIZE bytes. */
void rl_json_start(struct rl_json *j, char *buf, size_t size);
/* Add a member: a string (NULL: null), a number, a boolean, null. */
void rl_json_str(struct rl_json *j, const char *key, const char *s);
void rl_json_int(struct rl_json *j, const char *key, long long v);
void rl_json_bool(struct rl_json *j, const char *key, bool v);
void rl_json_null(struct rl_json *j, const char *key);
/* End it with "}\n" and a NUL: its length, or -EMSGSIZE when it did not fit. */
int rl_json_end(struct rl_json *j);

/* lockdown.c: what a process running a student's code may not do */
/* Refuse, for good, exec mappings, execve, ptrace, memfd_create, process_vm_*. */
int rl_lockdown(void);

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
/* The attributes of an RC QP with DEPTH send and receive slots, one SGE each. */
struct ibv_qp_init_attr rl_rc_qp_init_attr(struct ibv_cq *send_cq, struct ibv_cq *recv_cq,
					   int depth);
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
/* Server: rl_cm_listen() with BACKLOG requests waiting at most (many senders at once). */
int rl_cm_listen_backlog(struct rdma_event_channel *ch, const char *host, uint16_t port,
			 int backlog, struct rdma_cm_id **id, uint16_t *bound_port);
/* Server: wait for CONNECT_REQUEST; EV->id is the new connection. */
int rl_cm_get_request(struct rdma_event_channel *ch, int timeout_ms, struct rl_cm_event *ev);
/* Server: accept ID with private data PRIV, wait ESTABLISHED. */
int rl_cm_accept(struct rdma_cm_id *id, const void *priv, uint8_t len, int timeout_ms);
/* Disconnect ID and wait for its DISCONNECTED event. */
int rl_cm_disconnect(struct rdma_cm_id *id, int timeout_ms);
/* Destroy ID's QP (if any), then ID; NULL is fine. */
void rl_cm_destroy(struct rdma_cm_id *id);

/* proto.c: the Lab 3 messages (docs/protocol.md), one encode/decode pair each */
/*
 * Encoders write one whole message (header and body) into BUF of SIZE bytes
 * and return its length, or -EMSGSIZE (BUF too small) or -EINVAL (a field
 * out of its range). Decoders accept any LEN bytes at BUF and return
 * RL_PERR_NONE with the fields filled in, or the reason the bytes are not
 * that message; they never read outside BUF.
 */
int rl_proto_encode_file_info(void *buf, size_t size, const struct rl_msg_file_info *m);
enum rl_proto_error rl_proto_decode_file_info(const void *buf, size_t len,
					      struct rl_msg_file_info *m);
int rl_proto_encode_window(void *buf, size_t size, const struct rl_msg_window *m);
enum rl_proto_error rl_proto_decode_window(const void *buf, size_t len, struct rl_msg_window *m);
int rl_proto_encode_window_done(void *buf, size_t size, const struct rl_msg_window_done *m);
enum rl_proto_error rl_proto_decode_window_done(const void *buf, size_t len,
						struct rl_msg_window_done *m);
int rl_proto_encode_done(void *buf, size_t size);
enum rl_proto_error rl_proto_decode_done(const void *buf, size_t len);
int rl_proto_encode_result(void *buf, size_t size, const struct rl_msg_result *m);
enum rl_proto_error rl_proto_decode_result(const void *buf, size_t len, struct rl_msg_result *m);
int rl_proto_encode_student_id(void *buf, size_t size, const struct rl_msg_student_id *m);
enum rl_proto_error rl_proto_decode_student_id(const void *buf, size_t len,
					       struct rl_msg_student_id *m);
int rl_proto_encode_key(void *buf, size_t size, const struct rl_msg_key *m);
enum rl_proto_error rl_proto_decode_key(const void *buf, size_t len, struct rl_msg_key *m);
int rl_proto_encode_error(void *buf, size_t size, const struct rl_msg_error *m);
enum rl_proto_error rl_proto_decode_error(const void *buf, size_t len, struct rl_msg_error *m);
/* Encode MSG by its type with the matching encoder above. */
int rl_proto_encode(void *buf, size_t size, const struct rl_msg *msg);
/* Decode any message: check the header, then decode the body its type names. */
enum rl_proto_error rl_proto_decode(const void *buf, size_t len, struct rl_msg *msg);
/* Encode an ERROR of CODE with a printf-style text (cut to RL_PROTO_MAX_TEXT). */
int rl_proto_encode_errorf(void *buf, size_t size, enum rl_proto_error code, const char *fmt, ...)
	RL_PRINTF(4, 5);
/* "FILE_INFO", "WINDOW" ...; "UNKNOWN" for other values. */
const char *rl_msg_type_name(int type);
/* "bad-magic", "busy" ...; "unknown" for other values. */
const char *rl_proto_error_name(int code);
/* True if S (LEN bytes) is a valid student ID: 1..RL_PROTO_MAX_ID graphic ASCII. */
bool rl_proto_id_valid(const char *s, size_t len);

#endif
