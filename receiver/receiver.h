/*
 * receiver.h: the Lab 3 reference receiver's own table of contents. The
 * receiver serves many senders from one poll() loop (server.c); each
 * connection is a state machine (conn.c) that speaks docs/protocol.md.
 */
#ifndef RDMALAB_RECEIVER_H
#define RDMALAB_RECEIVER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rdmalab.h"

/* Types */

/* Test-only fault knobs for the grader's tests; all off by default. */
#define RCV_MAX_DROPS 8 /* steps --fault-drop takes, one per sender in turn */
struct rcv_faults {
	bool bad_hash;  /* --fault-bad-hash: always answer RESULT bad */
	int delay_step; /* --fault-delay STEP:MS: hold the reply at STEP (3, 5 or 7) */
	int delay_ms;   /*   ... for this long */
	int drop_step[RCV_MAX_DROPS]; /* --fault-drop STEP[:STEP...]: the Nth sender to connect is
				       * disconnected when it reaches the Nth STEP, later ones at
				       * the last STEP */
	int drop_steps;               /* how many STEPs were given; 0: off */
	uint64_t window; /* --fault-window SIZE: grant windows of SIZE bytes (0: off) */
};

/* Everything the command line decides. */
struct rcv_config {
	struct rl_args common;    /* -d -g -i -p -v, and the address to listen on */
	int max_conns;            /* connections served at once */
	uint64_t max_file;        /* largest file accepted */
	uint64_t max_window;      /* largest window registered at once */
	uint64_t mem_budget;      /* registered window bytes across all connections */
	int idle_timeout_ms;      /* longest a sender may stay silent at one step */
	const char *secret_file;  /* the instructor's secret, mode 600 */
	bool self_study;          /* use the fixed practice secret instead */
	bool secret_random;       /* a random secret of its own, held nowhere else */
	const char *results_path; /* JSON lines, one per connection */
	bool tokens;              /* --tokens: class mode, a key only for "ID:TOKEN" (token.c) */
	const char *verify_id;    /* --verify ID KEY: check a key and exit */
	const char *verify_key;
	const char *verify_file; /* --verify-file FILE: check "id,key" lines and exit */
	const char *make_tokens; /* --make-tokens ROSTER: print the roster's tokens and exit */
	struct rcv_faults faults;
};

/* One line of the results log: how far one sender got. */
struct rcv_result {
	int64_t time;  /* seconds since the epoch, at logging */
	char peer[64]; /* "10.211.0.1:51234" */
	char student_id[RL_PROTO_MAX_ID + 1];
	bool has_file_size;
	uint64_t file_size;
	uint64_t bytes_received; /* bytes hashed */
	int hash_ok;             /* 1, 0, or -1 when no hash was compared */
	bool key_issued;
	char sha256[65];     /* the hash FILE_INFO announced, in hex; empty before it */
	char key_sha256[65]; /* the SHA-256 of the key issued, in hex; empty if none */
	int step;            /* 0 to 7, see docs/protocol.md */
	char error[RL_PROTO_MAX_TEXT + 32]; /* "code-name: text", empty if none */
	bool self_study;
};

/* Macros */

#define RCV_RECV_DEPTH 4 /* receives posted per connection (docs/protocol.md) */
#define RCV_SEND_SLOTS 4 /* replies in flight per connection, at most */

#define RCV_KEY_LEN 19    /* "ABCD-EFGH-IJKL-MNOP" */
#define RCV_TOKEN_LEN 12  /* hex digits: 48 bits of HMAC-SHA256 */
#define RCV_TOKEN_SEP ':' /* the sender sends "ID:TOKEN" in class mode */
/* The longest ID that has a token: ID, ':' and the token fit in a STUDENT_ID. */
#define RCV_CLASS_MAX_ID (RL_PROTO_MAX_ID - 1 - RCV_TOKEN_LEN)
#define RCV_SECRET_MIN 16
#define RCV_SECRET_MAX 4096
#define RCV_SELF_STUDY_SECRET "rdmalab self-study secret: keys made with it are not graded"

/*
 * Connection events are always shown (at the level errors use); details of
 * each step with -v, and every message with -vv.
 */
#define rcv_note(...) rl_log(RL_LOG_ERROR, __VA_ARGS__)

/* Server internals, shared by server.c and conn.c. */
/* Where one connection is in the protocol (docs/protocol.md, receiver side). */
enum rcv_state {
	RCV_WAIT_FILE_INFO,
	RCV_WAIT_WINDOW_DONE,
	RCV_WAIT_DONE,
	RCV_WAIT_ID,
	RCV_FINISHED, /* key sent: waiting for the sender to disconnect */
	RCV_CLOSING, /* ERROR posted: disconnect once it is out and the sender hung up, or soon after */
	RCV_DEAD, /* ended: the loop destroys it */
};

/* What the loop shares with every connection. */
struct rcv_server {
	const struct rcv_config *cfg;
	const uint8_t *secret;
	size_t secret_len;
	struct rdma_event_channel *cm_ch;
	struct rdma_cm_id *listen_id;
	struct ibv_context *ctx;          /* the device every connection is on */
	struct ibv_comp_channel *comp_ch; /* wakes the loop for any connection's CQ */
	int results_fd;
	struct rcv_conn *conns; /* every connection not yet destroyed */
	int nconns;             /* those not yet ended, against --max-conns */
	uint64_t mem_used;      /* window bytes registered now, against --mem-budget */
	unsigned long conns_seen;
};

/* Message buffers of one connection: one memory region, local access only. */
struct rcv_msg_bufs {
	uint8_t recv[RCV_RECV_DEPTH][RL_PROTO_MAX_MSG];
	uint8_t send[RCV_SEND_SLOTS][RL_PROTO_MAX_MSG];
};

/* One sender: its verbs resources (its own PD), protocol state and result. */
struct rcv_conn {
	struct rcv_conn *next;
	struct rcv_server *srv;
	unsigned long no; /* for log lines: "conn 3" */
	int drop_step;    /* --fault-drop: the step this sender is dropped at; 0: none */
	bool ending; /* a failed transfer or --fault-drop: silent until deadline_ms, then ended */
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *msg_mr;
	struct rcv_msg_bufs bufs;
	bool send_busy[RCV_SEND_SLOTS];
	int sends_out;
	enum rcv_state state;
	int64_t deadline_ms; /* idle timeout of the current step */
	/* The file. */
	uint8_t want_sha256[32];
	void *sha;             /* EVP_MD_CTX: the hash so far */
	uint8_t *win_buf;      /* reused by every window */
	struct ibv_mr *win_mr; /* the granted window, NULL between windows */
	uint32_t win_index, win_len;
	bool hash_good;
	/* --fault-delay: replies held back, in the order they were made, until held_until. */
	bool delay_used; /* the one delay of this connection has started */
	bool holding;    /* replies are held now */
	int64_t held_until;
	int nheld;
	struct {
		int slot;
		uint32_t len;
	} held[RCV_SEND_SLOTS];
	struct rcv_result result;
	bool logged; /* the results line is written */
};

/* config.c: the command line */
/* Parse ARGV (with env lookups through ENV) into CFG; 0, or -EINVAL after one line. */
int rcv_parse_args(int argc, char **argv, char *(*env)(const char *), struct rcv_config *cfg);
/* Parse "4096", "64K", "1M", "2G" (binary units) into *OUT; 0 or -EINVAL. */
int rcv_parse_size(const char *s, uint64_t *out);
/* Parse "30", "30s", "500ms" into milliseconds (1 ms to 1 day); 0 or -EINVAL. */
int rcv_parse_duration(const char *s, int *ms);
/* Print the --help text. */
void rcv_usage(FILE *f, const char *prog);

/* key.c: secret keys */
/* Read the secret in PATH into BUF (SIZE bytes); its length, or -errno after one line. */
int rcv_load_secret(const char *path, uint8_t *buf, size_t size);
/* The key for ID under SECRET: base32 of HMAC-SHA256, "ABCD-EFGH-IJKL-MNOP". */
int rcv_key_for(const uint8_t *secret, size_t secret_len, const char *id,
		char key[RCV_KEY_LEN + 1]);
/* True if KEY (any case, dashes and spaces ignored) is the key for ID. */
bool rcv_key_matches(const uint8_t *secret, size_t secret_len, const char *id, const char *key);
/* The N bytes at IN in lower-case hex into OUT (2N + 1 bytes). */
void rcv_hex(const uint8_t *in, size_t n, char *out);
/*
 * The SHA-256, in hex, of KEY's letters and digits (upper-cased, no dashes
 * or spaces): the results log's "key_sha256", by which a key a student
 * shows can be checked without the secret. 0, or -EIO.
 */
int rcv_key_sha256(const char *key, char hex[65]);

/* token.c: tokens, which make an ID count in class mode */
/* The token of ID under SECRET: RCV_TOKEN_LEN hex digits of HMAC-SHA256 of "token " ID. */
int rcv_token_for(const uint8_t *secret, size_t secret_len, const char *id,
		  char token[RCV_TOKEN_LEN + 1]);
/*
 * Check SENT, "ID:TOKEN" (split at the last ':'), putting the ID alone in
 * ID: 0 if TOKEN is its token, -ENOKEY if no token was sent, -EKEYREJECTED
 * if it is the wrong one, -EIO if OpenSSL failed.
 */
int rcv_token_check(const uint8_t *secret, size_t secret_len, const char *sent,
		    char id[RL_PROTO_MAX_ID + 1]);

/* roster.c: the course's files (CSV): tokens from a roster, keys checked in a batch */
/*
 * --make-tokens: read a roster (a header with a column "id", one student a
 * line) from IN, named NAME in messages, and write to OUT the CSV
 * "id,token,<the other columns>". 0, or 2 after one line naming the line.
 */
int rcv_make_tokens(FILE *in, const char *name, FILE *out, const uint8_t *secret,
		    size_t secret_len);
/*
 * --verify-file: read "id,key" lines from IN and write to OUT the CSV
 * "id,verdict,detail", verdict OK, BAD or MISSING. 0 if every key is OK,
 * 1 if not, 2 after one line naming a malformed line (OUT gets nothing).
 */
int rcv_verify_file(FILE *in, const char *name, FILE *out, const uint8_t *secret, size_t secret_len,
		    bool self_study);

/* results.c: the results log */
/* Open PATH for appending (created mode 600); the fd, or -errno after one line. */
int rcv_results_open(const char *path);
/* Format R as one JSON line (with '\n') into BUF; the length, or -EMSGSIZE. */
int rcv_results_format(char *buf, size_t size, const struct rcv_result *r);
/* Append R to FD and fsync it; 0, or -errno after one line. */
int rcv_results_append(int fd, const struct rcv_result *r);
/* "connected", "file-info" ... for step 0 to 7. */
const char *rcv_step_name(int step);

/* conn.c: one connection's state machine */
/* Milliseconds on a clock that never jumps. */
int64_t rcv_now_ms(void);
/* Set up a connection for the request on ID and accept it; NULL if it failed. */
struct rcv_conn *rcv_conn_accept(struct rcv_server *srv, struct rdma_cm_id *id);
/* Handle a CM event of TYPE (with STATUS) for CONN. */
void rcv_conn_cm_event(struct rcv_conn *conn, enum rdma_cm_event_type type, int status);
/* Handle CONN's completion event: re-arm its CQ and handle every completion. */
void rcv_conn_cq_event(struct rcv_conn *conn);
/* Fire CONN's timers that are due at NOW; the next one due, or INT64_MAX. */
int64_t rcv_conn_timers(struct rcv_conn *conn, int64_t now);
/* End CONN: log its result (once), release its window, disconnect; ERROR is not sent. */
void rcv_conn_end(struct rcv_conn *conn, const char *why);
/* Free everything CONN holds (after rcv_conn_end()). */
void rcv_conn_destroy(struct rcv_conn *conn);
/* Write the address of ID's peer into BUF, as "10.0.0.1:4242". */
void rcv_peer_name(struct rdma_cm_id *id, char *buf, size_t size);

/* server.c: the event loop */
/* Serve senders with CFG and SECRET until SIGINT or SIGTERM; 0 or -errno. */
int rcv_serve(const struct rcv_config *cfg, const uint8_t *secret, size_t secret_len);

#endif
