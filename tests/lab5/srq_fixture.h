/*
 * srq_fixture.h: what the tests of Lab 5's steps 4 and 5 share (the
 * shared receive queue and the one-thread server). srq_peer.c: the
 * reference clients, a process of the test's own started by setup, that
 * connect to the act over rdma_cm (RC), send their messages and report to
 * the check what each sent and saw. srq_fixture.c: the act's own listener
 * and accept around step 4 (plain rdma_cm and verbs), and what the act
 * says. What does step 5 there is hidden in step 5's acts (RL_HIDDEN).
 */
#ifndef RDMALAB_LAB5_SRQ_FIXTURE_H
#define RDMALAB_LAB5_SRQ_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "lab5.h" /* first: it defines RL_LAB */
#include "../harness.h"

#define SRQ_FX_TIMEOUT_MS 5000
#define SRQ_FX_MAX_CLIENTS 6
#define SRQ_FX_WINDOW 8  /* sends a streaming client keeps in flight */
#define SRQ_FX_MSG_MIN 8 /* a message: its client's number and its sequence, then random bytes */

/* Milliseconds since boot: the same clock in the act, the peer and the parent. */
long srq_fx_now_ms(void);
/* A fresh random number from LO to HI, both included (getrandom). */
uint32_t srq_fx_between(uint32_t lo, uint32_t hi);

/* --- the reference clients (srq_peer.c) --- */

/* What the clients are told: in c->in, written by setup (the act reads the port). */
struct srq_fx_in {
	uint16_t port;     /* the act listens here, on rl_test_addr() */
	uint32_t clients;  /* streaming: how many */
	uint32_t messages; /* streaming: each sends this many */
	bool late;         /* the last connects once the others sent half their messages */
	int linger_ms;     /* the last waits this long after its last message before it leaves */
	/* Step 4: */
	uint32_t depth, limit; /* the SRQ the act opens */
	bool probe;            /* one client, one message at a time, until a send fails */
	uint32_t phase1;       /* probe: this many first, then wait for the act's go, then probe */
};

/* What one client sent and saw. */
struct srq_fx_client {
	bool established;    /* it was accepted */
	bool left;           /* it disconnected on its own, once its messages were sent */
	bool gone;           /* it saw its DISCONNECTED */
	uint32_t server_qpn; /* the server's QP for it (the CM's ESTABLISHED) */
	uint8_t rnr_retry;   /* its QP's, which it sets itself (6; probing, 0) */
	uint32_t sent;       /* messages whose send completed well (probe: before the go) */
	uint32_t sent2;      /* probe: after the go */
	uint64_t bytes;      /* their bytes */
	int status;          /* the first failed send's enum ibv_wc_status, or 0 */
	long connect_ms;     /* from its rdma_connect to ESTABLISHED */
	long others_sent;    /* messages the others had sent when it connected */
	long left_ms;        /* srq_fx_now_ms() at its rdma_disconnect */
};

enum srq_fx_stage { SRQ_FX_STARTED, SRQ_FX_DONE, SRQ_FX_ENDED };

/* The clients' report, sent whole to the parent at each stage. */
struct srq_fx_report {
	enum srq_fx_stage stage;
	int ret;       /* 0, or the errno the clients failed with */
	char why[256]; /* what went wrong */
	uint32_t n;
	struct srq_fx_client cl[SRQ_FX_MAX_CLIENTS];
};

/* Setup: start the clients on IN (a copy), to connect to the act's port. */
void srq_fx_peer_start(const struct srq_fx_in *in);
/* Check: wait (bounded) until the clients are done, stop them; their last report. */
const struct srq_fx_report *srq_fx_peer_end(struct rl_case *c);

/* --- the act's side of step 4 (srq_fixture.c) --- */

/* A listener on rl_test_addr():PORT with plain rdma_cm, its PD and a CQ for one client. */
struct srq_fx_server {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen, *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *go_mr;
	uint8_t go[8];
};

void srq_fx_listen(struct srq_fx_server *f, uint16_t port);
/* Accept one client, its QP on SRQ (RNR_RETRY for the accept: the client sets its own). */
void srq_fx_accept(struct srq_fx_server *f, struct ibv_srq *srq, uint8_t rnr_retry);
/* Send the client its go (probe: phase 2 begins). */
void srq_fx_go(struct srq_fx_server *f);
/*
 * What the act saw of the SRQ S while the client sent: completions polled
 * until WANT (0: until the client left), each slot (wr_id) marked free in
 * S as a server would. Said as PREFIX_completions, PREFIX_bad_slots
 * (a wr_id out of range, of a slot already free, or whose bytes are not
 * the message that completed there) and PREFIX_limit_events.
 */
void srq_fx_take(struct srq_fx_server *f, struct lab5_srq *s, uint32_t want, const char *prefix);
/* The client's QP and id destroyed (rdma res then lists the SRQ with no QP on it). */
void srq_fx_drop_client(struct srq_fx_server *f);
void srq_fx_close(struct srq_fx_server *f);
/* ibv_query_srq of SRQ, said as PREFIX_max_wr and PREFIX_limit (-1 when it failed). */
void srq_fx_say_srq(struct ibv_srq *srq, const char *prefix);

#endif
