/*
 * ud_fixture.h: what the tests of Lab 5's steps 1 and 2 share. ud_peer.c:
 * the reference peer, a UD server over rdma_cm in a process of the test's
 * own (forked by setup, before the act), which accepts with a QP of its
 * own (made with plain verbs, not on the id), takes datagrams or sends its own,
 * and reports what it saw to the check. ud_fixture.c: the act's endpoint
 * made without the lab's steps (plain rdma_cm and verbs), and what the
 * checks share. What does a step is hidden in that step's acts (RL_HIDDEN).
 */
#ifndef RDMALAB_LAB5_UD_FIXTURE_H
#define RDMALAB_LAB5_UD_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "lab5.h" /* first: it defines RL_LAB, which harness.h would otherwise default */
#include "../harness.h"

/* The longest wait for one thing (a hang, not a judgement): 5 s times CK_TIMEOUT_MULTIPLIER. */
#define UD_TIMEOUT_MS ud_timeout_ms()
int ud_timeout_ms(void);
#define UD_MAX_SEEN 24   /* datagrams a peer reports one by one */
#define UD_PEER_SLOTS 32 /* receives the peer keeps posted */
#define UD_CANARY 0xa5   /* what the act's receive buffers hold before a datagram lands */

/* --- inputs, chosen by setup in the parent ---------------------------------- */

/* A fresh random number (getrandom): seeds and sizes no submission can know. */
uint32_t ud_random(void);
/* A random number from LO to HI, both included. */
uint32_t ud_between(uint32_t lo, uint32_t hi);
/* N bytes made from SEED, the same in every process. */
void ud_fill(uint8_t *buf, uint32_t n, uint32_t seed);
/* The SHA-256 of N bytes at P. */
void ud_sha256(const void *p, uint32_t n, uint8_t sha256[32]);

/* --- ud_peer.c: the reference peer ------------------------------------------- */

/* What the peer does once a client's request is accepted. */
struct ud_peer_in {
	uint32_t take; /* take datagrams: DONE once this many came (it takes more until stopped) */
	/* Or: wait for the act's hello (kind LAB5_MSG_HELLO, the act's Q_Key as payload), then */
	uint32_t send; /* send this many datagrams of its own random bytes to the act, */
	bool bad_last; /* and one more whose header claims 1 to 8 bytes more than it carries */
	/*
	 * Or, nonzero: be a client instead, of the act's UD server on this
	 * port: connect (again while nobody listens there yet), then send one
	 * datagram of its own random bytes to the QP and Q_Key of the reply.
	 */
	uint16_t client_of;
};

/* One datagram the peer took: the completion, and what came after the GRH. */
struct ud_seen {
	int status; /* enum ibv_wc_status */
	uint32_t byte_len, src_qp;
	struct lab5_hdr hdr; /* the first LAB5_HDR_LEN bytes after the GRH, decoded */
	uint8_t sha256[32];  /* of the bytes after the header (byte_len - 52 of them) */
};

enum ud_stage { UD_STARTED, UD_LISTENING, UD_ACCEPTED, UD_DONE, UD_ENDED };

/* What the peer reports, whole, at each stage (one pipe write: at most 4096 bytes). */
struct ud_report {
	enum ud_stage stage;
	int ret;       /* 0, or the errno it failed with */
	char why[160]; /* what went wrong at the peer */
	uint16_t port; /* where it listens (rdma_cm, RDMA_PS_UDP) */
	uint32_t qpn;  /* its UD QP, as it accepted with */
	uint32_t qkey; /* its QP's Q_Key, the one its reply carries */
	uint32_t mtu;  /* its port's active MTU, in bytes */
	uint32_t nseen;
	struct ud_seen seen[UD_MAX_SEEN];
	/* Sending: the hello it answered (a client: the reply it got), and each datagram it sent. */
	uint32_t act_qpn, act_qkey;
	uint32_t nsent;
	struct lab5_hdr sent[UD_MAX_SEEN + 1];
	uint8_t sent_sha256[UD_MAX_SEEN + 1][32]; /* of each payload it sent */
};

/*
 * Setup: start the peer on IN (a copy) in a process of its own; wait for
 * it to listen: its port (a client: IN->client_of, at once).
 */
uint16_t ud_peer_start(const struct ud_peer_in *in);
/*
 * Check: wait (bounded) until the peer is DONE, unless the test failed
 * already; then stop it (it takes what is left on its CQ) and wait for its
 * last report, which it returns. NULL (the test failed, saying why) when
 * the peer failed itself.
 */
const struct ud_report *ud_peer_end(struct rl_case *c);
/* Check: the peer's report once it accepted the act's request (its QP number), or NULL after failing the test. */
const struct ud_report *ud_peer_accepted(struct rl_case *c);
/* Check: stop the peer if it still runs (a check that judged without it), and wait for its end. */
void ud_peer_stop(void);

/* --- ud_fixture.c: the act's side --------------------------------------------- */

/*
 * The kit's step 1: U connected to the peer on PORT (channel, id, QP,
 * buffers, AH, the peer's QPN and Q_Key), made with plain rdma_cm and
 * verbs; the act's set-up fails when it cannot be.
 */
void ud_fx_connect(struct lab5_ud *u, uint16_t port);
/* Fill U's receive buffers (GRHs, headers, payloads) with UD_CANARY. */
void ud_fx_canary(struct lab5_ud *u);
/* Post receive slot SLOT of U as the lab's step 2 lays it out, with plain verbs: 0 or -errno. */
int ud_fx_post_recv(struct lab5_ud *u, int slot);
/*
 * Send N bytes at P (copied into U->tx_payload) in one SGE; WAIT: take its
 * completion (the first U's CQ gives: nothing else is due before it).
 */
void ud_fx_send(struct lab5_ud *u, const void *p, uint32_t n, bool wait);
/* Send the peer the hello it waits for: a header of kind LAB5_MSG_HELLO and U's QP's Q_Key. */
void ud_fx_hello(struct lab5_ud *u, bool wait);
/* One completion of U's CQ within UD_TIMEOUT_MS into WC: whether one came. */
bool ud_fx_poll(struct lab5_ud *u, struct ibv_wc *wc);
/* The same within MS ms. */
bool ud_fx_poll_ms(struct lab5_ud *u, struct ibv_wc *wc, int ms);

/* --- ud_fixture.c: the check's side ------------------------------------------ */

/* The act's objects of KIND ("qp", "cm_id") as the kernel lists them, while it holds: their number, or -1. */
int ud_act_res(struct rl_case *c, const char *kind, struct rl_res *out, int max);
/* The port's active MTU in bytes, asked in the parent. */
uint32_t ud_port_mtu(void);
/* What the act said NAME returned is 0; else the test fails, naming the step's row. */
bool ud_ok(struct rl_case *c, const char *name, int step);

#endif
