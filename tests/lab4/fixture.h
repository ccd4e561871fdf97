/*
 * fixture.h: what the Lab 4 tests share, by the file that defines it.
 * peer.c: a peer for the act, a process of the test's own, started by
 * setup, that meets the act over TCP, plays the RC receiver, the RC sender
 * or a UD QP, and reports what it saw to the check. fixture.c: the act's
 * own sender, receiver and UD QP around the lab's steps, a poster whose
 * writes carry what the step asked of it, a connected pair in one process
 * (step 5), the kernel's view of a QP, and a runner for the lab4 program.
 * What does a step, in either file, is hidden in that step's acts
 * (RL_HIDDEN, tests/harness.h).
 */
#ifndef RDMALAB_LAB4_FIXTURE_H
#define RDMALAB_LAB4_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "lab4.h" /* first: it defines RL_LAB, which harness.h would otherwise default */
#include "../harness.h"

#define FX_TIMEOUT_MS 5000
#define FX_MAX_SEEN 64 /* completions or datagrams a peer reports one by one */

/* How a run of the lab4 program ended (fx_reap), for a check and its messages. */
struct fx_run {
	int status; /* exit status, or -1 if killed after the limit */
	char out[4096];
	char err[4096];
};

/* --- inputs, chosen by setup in the parent -------------------------------- */

/* A fresh random number (getrandom): seeds and sizes no submission can know. */
uint32_t fx_random(void);
/* A random number from LO to HI, both included. */
uint32_t fx_between(uint32_t lo, uint32_t hi);
/* N bytes of the file SEED names, the same in every process. */
void fx_fill(uint8_t *buf, uint64_t n, uint32_t seed);
/* The SHA-256 of SIZE bytes of the file SEED names (in the check). */
void fx_file_sha256(uint64_t size, uint32_t seed, uint8_t sha256[32]);

/* --- peer.c: the peer ------------------------------------------------------ */

enum fx_role {
	FX_RC_RECEIVER, /* takes the writes with immediate of the act (or of lab4 send) into a buffer */
	FX_RC_SENDER, /* writes a file to the act's receiver (or to lab4 serve), as lab4 send does */
	FX_UD, /* a UD QP: takes datagrams (and echoes them), or sends its own and waits for echoes */
};

/*
 * What a peer is told. It lies in c->in, written by setup (the act reads
 * it too, to know the port and the file), or in a check that runs the lab4
 * program: inputs only.
 */
struct fx_peer_in {
	uint16_t port;    /* TCP, on 127.0.0.1: fx_peer_start() writes it */
	uint16_t connect; /* nonzero: connect to 127.0.0.1:CONNECT instead (a program that listens) */
	uint32_t seed;    /* RC receiver: of the act's file (the act sends it); an RC sender */
			  /* makes its own, which only it knows, and reports its SHA-256 */
	uint64_t size;    /* RC: the file's bytes */
	uint32_t chunk;   /* RC: bytes per write */
	bool result; /* RC: end as lab4 does: the receiver sends RESULT, the sender waits for it */
	/* RC sender: */
	uint32_t first, count; /* write chunks FIRST .. FIRST + COUNT - 1 */
	uint32_t window;       /* at most this many in flight */
	bool wait_go;          /* write only once the act says go (fx_recv_go) */
	int delay_ms;          /* then wait this long first */
	bool flip_hash;        /* announce a SHA-256 that is not the file's */
	/* UD: */
	bool probe; /* send one datagram with Q_Key QKEY, again until the act hangs up */
	uint32_t qkey;
	bool echo;         /* echo every datagram back, as ud-pong does */
	uint32_t pings;    /* send PINGS datagrams of PING_LEN bytes, each until it echoes, */
	uint32_t ping_len; /* numbered in their first 4 bytes as ud-ping numbers its own */
};

/* One completion (RC receiver) or datagram (UD) the peer saw. */
struct fx_seen {
	int status;         /* enum ibv_wc_status */
	int opcode;         /* enum ibv_wc_opcode */
	uint32_t imm;       /* RC: the immediate data, in host order */
	uint32_t byte_len;  /* as the completion says (UD: the GRH included) */
	uint8_t sha256[32]; /* UD: of the payload after the GRH */
};

/* What a peer reports to the check when it is done. */
struct fx_report {
	int ret;         /* 0: it did its part; else a negative errno, ERROR says why */
	char error[256]; /* the peer's own failure, for the message */
	uint32_t mtu;    /* the port's active MTU, in bytes */
	uint32_t nseen;  /* completions or datagrams seen (the first FX_MAX_SEEN in SEEN) */
	struct fx_seen seen[FX_MAX_SEEN];
	/* RC receiver: */
	uint8_t sha256[32]; /* of its whole buffer at the end */
	int qp_state; /* its QP's at the end (enum ibv_qp_state): ERR after a remote access error */
	bool result_sent; /* RESULT went to the sender, once every chunk had arrived */
	/* RC sender: */
	uint8_t file_sha256[32];   /* of the file it wrote (its own random bytes), unflipped */
	int sent;                  /* 0, or why its writes failed */
	uint32_t completed;        /* writes completed */
	bool got_result;           /* the act's RESULT came, into RESULT */
	struct lab4_result result; /* good, received and the SHA-256 the act says it found */
	/* UD: */
	uint8_t probe_sha256[32]; /* probe: of the datagram it sent */
	uint32_t echoes;          /* echo: echoes sent; pings: datagrams that came back whole */
};

/*
 * In setup, or in a check that runs the lab4 program: start a peer playing
 * ROLE as IN says, and write its port into IN. It is a fork of the parent,
 * made before the act's: it runs none of the student's code, and the act
 * cannot reach its memory. At most FX_MAX_PEERS a test: returns the
 * peer's number, the first 0.
 */
#define FX_MAX_PEERS 8
int fx_peer_start(struct rl_case *c, struct fx_peer_in *in, enum fx_role role);
/* In the check: peer number I's report (within 30 s), or the test fails: false. */
bool fx_peer_report(struct rl_case *c, int i, struct fx_report *rep);
/*
 * The same once the lab4 program PROG it met has ended (RUN): the report
 * comes within seconds, and a peer the program never met, or could not
 * finish with, is the program's failure (the message shows RUN).
 */
bool fx_peer_report_of(struct rl_case *c, int i, struct fx_report *rep, const char *prog,
		       const struct fx_run *run);

/* --- fixture.c: the act's side (and what the peer shares with it) ---------- */

struct ibv_context *fx_open_ctx(void);
/* One completion of CQ within MS ms into WC: 1, or 0 when none came. */
int fx_poll_one(struct ibv_cq *cq, struct ibv_wc *wc, int ms);
/* Whether the other side closed the TCP connection FD: it is done, and says so that way. */
bool fx_hung_up(int fd);

/* The given sender over the file IN names, connected to an FX_RC_RECEIVER peer. */
struct fx_send {
	struct ibv_context *ctx;
	struct lab4_sender s;
	uint8_t *bytes;
	int fd; /* to the peer; -1 once hung up */
};
/*
 * Posts through fx_log_post(), waits busy (steps 1 and 2 do not need step
 * 5). DEPTH, unless 0: the sender's send queue and CQ hold DEPTH entries,
 * so that the device itself refuses a post beyond them (ENOMEM) and drops
 * a completion beyond them.
 */
void fx_send_open(struct fx_send *x, const struct fx_peer_in *in, uint32_t depth);
/* Tell the peer the act is done (it reports then). */
void fx_send_hangup(struct fx_send *x);
/*
 * Takes what the sender's CQ still holds (a settled drain), then says
 * SIGNALED: for each chunk, 1 if a completion of it was taken from the CQ,
 * by the lab's code or by this drain, else 0 (an RC write has a completion
 * only when it was posted signaled).
 */
void fx_send_say_signaled(struct fx_send *x, const char *name);
void fx_send_close(struct fx_send *x);

/*
 * The immediate data fx_log_post() writes: the index, and how many writes
 * were outstanding just before the post (posted by it, and not before a
 * good completion the sender took from its CQ: counted by the test, not
 * from s->completed).
 */
#define FX_IMM_OUT_SHIFT 20
#define FX_IMM_OUT_MAX 0x7ffU
#define FX_IMM_INDEX(imm) ((imm) & ((1U << FX_IMM_OUT_SHIFT) - 1))
#define FX_IMM_OUT(imm) (((imm) >> FX_IMM_OUT_SHIFT) & FX_IMM_OUT_MAX)
/*
 * The test's post for step 1: RDMA WRITE WITH IMM through ibv_post_send, imm
 * as above. It and the next do step 2a's work: hidden in step 2's acts.
 */
int fx_log_post(struct lab4_sender *s, uint32_t index, bool signaled);
/* The same with the index alone as immediate data, as the lab's receiver expects. */
int fx_ref_post(struct lab4_sender *s, uint32_t index, bool signaled);

/* The given receiver, for the file an FX_RC_SENDER peer announces, connected to it. */
struct fx_recv {
	struct ibv_context *ctx;
	struct lab4_receiver r;
	int fd;
};
void fx_recv_open(struct fx_recv *x, const struct fx_peer_in *in);
/* Tell a peer that waits (wait_go) to write now. */
void fx_recv_go(struct fx_recv *x);
void fx_recv_close(struct fx_recv *x);

/*
 * A UD QP made with plain verbs, laid out as lab4_ud_open() lays it out,
 * without a function of ud.c (the lab's step 3, and the given helpers in
 * the student's file): the act's and the peer's.
 */
enum fx_ud_state {
	FX_UD_RESET, /* left in RESET, no receive posted: the lab's step 3a goes on */
	FX_UD_RTS,   /* in RTS with Q_Key LAB4_QKEY, every receive slot posted */
};
/* 0 or a negative errno (the peer's); fx_ud_open() fails the act's set-up instead. */
int fx_ud_make(struct lab4_ud *u, struct ibv_context *ctx, uint8_t port, int gid_index,
	       enum fx_ud_state state);
void fx_ud_open(struct lab4_ud *u, struct ibv_context *ctx, uint8_t port, int gid_index,
		enum fx_ud_state state);
/* Receive slot SLOT of U, or its send slot (LAB4_UD_SLOTS). */
uint8_t *fx_ud_slot(struct lab4_ud *u, int slot);
/* Post the receive of slot SLOT, or every slot; 0 or a negative errno. */
int fx_ud_post_recv(struct lab4_ud *u, int slot);
int fx_ud_post_recvs(struct lab4_ud *u);
/*
 * LEN bytes of MSG to QPN/QKEY through AH, from U's send slot; waits for the
 * send: 0 or -EIO. The peer's (step 3c's work: hidden in step 3's acts).
 */
int fx_ud_send(struct lab4_ud *u, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey, const void *msg,
	       uint32_t len);
void fx_ud_close(struct lab4_ud *u);
/* Connect to an FX_UD peer and swap UD_HELLOs: the socket, the peer's in *PEER. */
int fx_ud_meet(struct lab4_ud *u, const struct fx_peer_in *in, struct lab4_ud_hello *peer);
/* An address handle to GID made with plain verbs: the peer's (step 3b: hidden in step 3's acts). */
struct ibv_ah *fx_ud_ah(struct lab4_ud *u, const union ibv_gid *gid);

/* A sender and a receiver in the act, connected (step 5: the sender's waits). */
struct fx_pair {
	struct ibv_context *ctx;
	struct lab4_sender s;
	struct lab4_receiver r;
	uint8_t *bytes;
};
void fx_pair_open(struct fx_pair *p, uint64_t size, uint32_t chunk);
void fx_pair_close(struct fx_pair *p);
/* One receive completion of R within FX_TIMEOUT_MS (step 2b's work: hidden in its acts), or fail. */
void fx_recv_wc(struct lab4_receiver *r, struct ibv_wc *wc);

/* --- fixture.c: the check's side ------------------------------------------- */

/*
 * In the check, while the act holds: member KEY ("state", "type", "port")
 * of the QP numbered QPN the act holds, as the kernel says, into VAL (""
 * when it holds no such QP). Returns whether it found the QP.
 */
bool fx_res_qp(struct rl_case *c, uint32_t qpn, const char *key, char *val, size_t size);

/* The port's active MTU in bytes, asked in the parent. */
uint32_t fx_port_mtu(void);

/* The lab4 program, run by a check: its output goes to files no other process can name. */
struct fx_proc {
	int pid;
	int out, err; /* unlinked temporary files */
};
/* Start the lab4 program with ARGS (NULL-terminated) in the background, as P. */
void fx_spawn(const char *const *args, struct fx_proc *p);
/* Wait for P up to LIMIT_MS (then kill it) and collect its output into RUN. */
void fx_reap(struct fx_proc *p, int limit_ms, struct fx_run *run);
/* The last line of TEXT that starts with PREFIX, or NULL (a step cannot print after main.c). */
const char *fx_last_line(const char *text, const char *prefix);
/*
 * A file of SIZE random bytes at PATH (of PATH_SIZE bytes, made by
 * mkstemp), its SHA-256 computed here into SHA256; unlink it after.
 */
void fx_make_file(char *path, size_t path_size, uint64_t size, uint8_t sha256[32]);

#endif
