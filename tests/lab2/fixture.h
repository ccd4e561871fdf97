/*
 * fixture.h: what the Lab 2 tests share. A graded test (tests/harness.h)
 * runs the student's code in its act, a locked-down child; the other side
 * of each connection is a reference peer (reference.c), a process the
 * test's setup starts (peer.c), which tells the check, never the act, what
 * it saw. What the act needs beyond the step under test is built with plain
 * verbs, rdma_cm and the framework (fixture.c), so that a test fails only
 * for its own step (what does a step is hidden in that step's acts:
 * RL_HIDDEN); check.c holds what the checks share.
 */
#ifndef RDMALAB_LAB2_FIXTURE_H
#define RDMALAB_LAB2_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "../harness.h"
#include "lab2.h"

#define FX_TIMEOUT_MS 5000
/* The random texts of a run (see rl_test_random_text), NUL included: within LAB2_TEXT_MAX. */
#define FX_TEXT_SIZE 64

/* Milliseconds since boot: the same clock in the act, the peer and the parent. */
long fx_now_ms(void);

/* --- peer.c: the reference peer's process, and what it tells the parent --- */

/* How far a reference peer got; each stage comes after the one before. */
enum fx_stage {
	FX_STARTED,
	FX_LISTENING,   /* a server: listening on its port */
	FX_ESTABLISHED, /* the connection is up */
	FX_LEFT,        /* it disconnected on its own, at left_ms */
	FX_DONE,        /* its part is over: what it saw is in the report */
	FX_ENDED,       /* it freed everything: its last report */
};

/*
 * What a reference peer saw, sent whole to the parent at each stage (the
 * same program reads it). The act never holds it: a peer is a process of
 * the test program's, forked before the act, and its secret is chosen in
 * that process, after the fork, so the act can learn it only over RDMA.
 */
struct fx_report {
	enum fx_stage stage;
	int ret;                  /* 0, or the errno it failed with */
	char why[256];            /* what went wrong at the peer */
	uint16_t port;            /* a server: where it listens */
	uint32_t qp_num;          /* its QP, once connected */
	uint8_t qp_rnr_retry;     /* its QP's rnr_retry, once connected */
	uint8_t qp_max_rd_atomic; /* its QP's RDMA READs in flight to the act, once connected */
	uint8_t qp_max_dest_rd_atomic; /* the act's READs its QP serves at once */
	bool disconnected;             /* it saw DISCONNECTED */
	long left_ms;                  /* when it disconnected on its own (fx_now_ms) */
	long sent_ms;                  /* when it posted the SEND a test waits for (fx_now_ms) */
	int round_trips;               /* pings answered and checked (either side) */
	int write_status;              /* its RDMA WRITE's enum ibv_wc_status */
	int read_status;               /* its RDMA READ's */
	int atomic_status;             /* its atomic fetch-and-add's */
	int failed_at;                 /* the message whose SEND failed, or -1 */
	int send_status;               /* that SEND's status */
	char secret[FX_TEXT_SIZE];     /* its own random text */
	char text[LAB2_TEXT_MAX];      /* what it found written, read or received */
	uint32_t text_len;             /* how many bytes of TEXT it received or read */
};

/* A peer's part: runs in the peer's process on IN (a copy), tells R as it goes. */
typedef void fx_role(const void *in, struct fx_report *r);

/* Setup: run ROLE on IN in a process of its own (a peer an earlier test left is ended first). */
void fx_peer_start(fx_role *role, const void *in);
/* Setup: wait for the peer to listen; its port (or the test fails). */
uint16_t fx_peer_port(void);
/*
 * Check: wait (bounded) until the peer reached stage UNTIL, unless the test
 * failed already; then stop it and wait for its end. Its last report.
 */
const struct fx_report *fx_peer_end(struct rl_case *c, enum fx_stage until);

/* In the peer: send R to the parent, at STAGE (a stage never goes back). */
void fx_note(struct fx_report *r, enum fx_stage stage);
/* In the peer: whether the parent is done with it (stop waiting for anything). */
bool fx_stopped(void);
/* In the peer: a random text of letters and digits, as rl_test_random_text makes. */
void fx_random_text(char *text, size_t size);

/* --- reference.c: the other side, run in the peer's process --- */

/* What a reference peer does; chosen by the test's setup, in c->in. */
struct ref_opts {
	char addr[64];         /* a client: the address to connect to */
	uint16_t port;         /* a client: the port to connect to */
	bool no_recv;          /* post no receive: the act's SEND meets RNR */
	int quit_after;        /* disconnect after this many round trips; -1: never */
	uint8_t rnr_retry;     /* the rnr_retry_count it connects or accepts with */
	uint8_t min_rnr_timer; /* its QP's, once connected (RNR NAKs it sends); 0: the CM's */
	int secret_at; /* where in its RDMA buffer its secret is from the start; -1: not there */
};

/* Defaults: receives posted, every round trip, LAB2_RNR_RETRY, its secret out of reach. */
struct ref_opts ref_default(void);
/*
 * Setup: start the reference server of the whole protocol (O, a copy), its
 * secret at LAB2_READ_OFFSET for the client to read; its port.
 */
uint16_t ref_server_start(const struct ref_opts *o);
/* Setup: start the reference client of the whole protocol, to O->addr, O->port. */
void ref_client_start(const struct ref_opts *o);

/* One connection of a reference peer (in the peer's process). */
struct ref_conn {
	const struct ref_opts *o;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *send_cq, *recv_cq;
	struct ibv_mr *mr;      /* the messages', [0, REF_RDMA): local access only */
	struct ibv_mr *rdma_mr; /* its RDMA buffer's, the rkey it tells: remote read and write */
	uint8_t *buf; /* REF_SEND, REF_RECV: one message each; REF_RDMA: its RDMA buffer */
};
#define REF_SEND 0
#define REF_RECV LAB2_MSG_MAX
#define REF_RDMA 1024 /* LAB2_RDMA_SIZE bytes from here, and nothing else, are the act's to reach */

/*
 * Listen on a free port (stage LISTENING), choose the secret and put it at
 * O->secret_at (if any), accept one client, telling it the RDMA buffer's address and
 * rkey (private data: u64, u32, big-endian), and wait for ESTABLISHED. 0, or
 * an errno (R says why).
 */
int ref_accept(struct ref_conn *k, const struct ref_opts *o, struct fx_report *r);
/* SEND LEN bytes at REF_SEND (with immediate IMM when not NULL) and wait for it: 0 or an errno. */
int ref_send(struct ref_conn *k, struct fx_report *r, uint32_t len, const uint32_t *imm);
/* Wait for one message (at REF_RECV; its receive is posted again): its length, or an errno. */
int ref_recv(struct ref_conn *k, struct fx_report *r);
/* RDMA WRITE or READ of LEN bytes at REF_RDMA + AT to or from ADDR, RKEY: its status. */
enum ibv_wc_status ref_rdma(struct ref_conn *k, enum ibv_wr_opcode op, uint32_t at, uint32_t len,
			    uint64_t addr, uint32_t rkey);
/* An atomic fetch-and-add of 1 at ADDR (8-byte aligned), RKEY, the old value into REF_RDMA: its status. */
enum ibv_wc_status ref_atomic_add(struct ref_conn *k, uint64_t addr, uint32_t rkey);
/* Stage DONE; wait for the act's disconnect (or the parent's stop); free what K holds. */
void ref_end(struct ref_conn *k, struct fx_report *r);

/* --- fixture.c: in the act --- */

/*
 * The act's QP connected to a reference peer (ref_accept, on PORT) with
 * rdma_cm: C gets a PD, a CQ with a channel, the QP, its message MR and an
 * RDMA buffer the NIC may write (a READ lands there). C.cm_ch stays NULL:
 * the connection's events are the fixture's.
 */
struct fx_pair {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct lab2_conn c;
	uint64_t peer_addr; /* the peer's RDMA buffer, from its private data */
	uint32_t peer_rkey;
	uint8_t tell[64]; /* what fx_pair_tell() sends, in TELL_MR */
	struct ibv_mr *tell_mr;
};

struct fx_pair_opts {
	uint16_t port;
	bool student_cq;            /* lab2_create_cq() makes the CQ (said as "lab2_create_cq") */
	int recvs;                  /* receives the fixture posts before connecting, slots 0.. */
	const uint64_t *recv_wr_id; /* their wr_ids; NULL: LAB2_WR_RECV + slot */
	bool arm_cq;                /* arm the CQ just before connecting */
	uint8_t peer_rnr_retry;     /* our rnr_retry_count: how often the PEER resends after RNR */
};

/* Everything up to the QP and its receives; false when lab2_create_cq() failed. */
bool fx_pair_build(struct fx_pair *p, const struct fx_pair_opts *o);
/* Connect to the peer and take its buffer's address and rkey. */
void fx_pair_connect(struct fx_pair *p, const struct fx_pair_opts *o);
/* Both; false when lab2_create_cq() failed. */
bool fx_pair_open(struct fx_pair *p, const struct fx_pair_opts *o);
/* An unsignaled SEND of LEN bytes of MSG to the peer (no completion unless it fails). */
void fx_pair_tell(struct fx_pair *p, const void *msg, uint32_t len);
void fx_pair_close(struct fx_pair *p);
/*
 * After the lab's lab2_wait_wc() ran on P: fx_pair_close() only when it
 * acknowledged more CQ events than the BEFORE the test's own made, since
 * ibv_destroy_cq() waits for ever on one taken and not acknowledged (the
 * act's exit then frees everything).
 */
void fx_pair_close_if_acked(struct fx_pair *p, unsigned int before);

/* One completion of CQ within FX_TIMEOUT_MS, whatever its status; false if none came. */
bool fx_poll(struct ibv_cq *cq, struct ibv_wc *wc);

/*
 * rdma_cm without the student's step 1: C (timeout FX_TIMEOUT_MS) is
 * connected to the reference server on PORT (client) or has accepted one
 * client on PORT (server), with the framework's rl_cm_*, a CQ with a
 * channel, the QP, the message MR and every receive posted. fx_cm_close()
 * undoes it with plain calls.
 */
void fx_cm_client(struct lab2_conn *c, uint16_t port);
void fx_cm_server(struct lab2_conn *c, uint16_t port);
/* After step 1 made C's ids: the PD, CQ, QP, MR and receives, with plain verbs. */
void fx_cm_resources(struct lab2_conn *c);
void fx_cm_close(struct lab2_conn *c);
/*
 * fx_cm_close(), with each rdma_destroy_id() given FX_ID_GONE_MS: whether
 * they all returned (one waits for ever on an event taken and never
 * acknowledged; then the act's exit frees what is left).
 */
#define FX_ID_GONE_MS 2000
bool fx_cm_close_bounded(struct lab2_conn *c);

/* In the act: say RET as NAME (the function that returned it); whether it is 0. */
bool fx_say_ret(const char *name, int ret);
/* In the act, before any student code: say the time as "start_ms". */
void fx_say_start(void);
/*
 * In the act: say as "left_on_channel" the type of the next event on CH
 * within 200 ms (one a step should have taken), or -1 for none.
 */
void fx_say_event_left(struct rdma_event_channel *ch);

/* --- check.c: in the check --- */

/*
 * What the act said NAME returned is 0, or the test fails with "expected
 * NAME to return 0, got RET (strerror) (step N: see docs/lab2.md#step-N)".
 */
bool fx_ok(struct rl_case *c, const char *name, int step);
/* Milliseconds from the act's "start_ms" to now. */
long fx_took_ms(struct rl_case *c);
/* The act's objects of KIND (qp, cq, mr, pd, cm_id) as the kernel lists them, while it holds. */
int fx_act_res(struct rl_case *c, const char *kind, struct rl_res *out, int max);
/*
 * The act holds one QP, in STATE, connected to QP number PEER_QPN (0: any);
 * else the test fails, saying WHY it should be in STATE when not NULL.
 */
bool fx_expect_act_qp(struct rl_case *c, const char *state, uint32_t peer_qpn, const char *why);

#endif
