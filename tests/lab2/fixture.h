/*
 * fixture.h: what the Lab 2 tests share. Objects built with plain verbs and
 * the framework, so that a test fails only for its own step, and a reference
 * peer (reference.c) that runs the other side of the protocol in a thread:
 * verbs contexts do not survive fork(), threads share them safely.
 */
#ifndef RDMALAB_LAB2_FIXTURE_H
#define RDMALAB_LAB2_FIXTURE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "../harness.h"
#include "lab2.h"

#define FX_TIMEOUT_MS 5000
/* The random texts of a run (see rl_test_random_text), NUL included: within LAB2_TEXT_MAX. */
#define FX_TEXT_SIZE 64

/*
 * Fail with "expected WHAT to return 0, got RET (strerror) (step N: see
 * docs/lab2.md#step-N)", so an unfinished step gives a clean failure.
 */
#define fx_ok(ret, what, step)                                                                     \
	do {                                                                                       \
		int fx_ret_ = (ret);                                                               \
		ck_assert_msg(fx_ret_ == 0,                                                        \
			      "expected %s to return 0, got %d (%s) (step %d: see "                \
			      "docs/lab2.md#step-%d)",                                             \
			      what, fx_ret_, strerror(-fx_ret_), step, step);                      \
	} while (0)

/* The environment (port, GID index, address) and free ports: see ../harness.h. */
/* Milliseconds on a monotonic clock. */
long fx_now_ms(void);

/*
 * A lab2_conn C whose QP is connected by hand to a peer QP on the same
 * device: no rdma_cm (C.cm_ch is NULL). C gets a PD, a CQ with a channel
 * (made by the student's lab2_create_cq() when STUDENT_CQ, else here), its
 * QP, its message MR and an RDMA buffer with every access. The peer has its
 * own CQ (busy-polled) and a 4 KiB buffer with every access.
 */
struct fx_pair {
	struct ibv_context *ctx;
	struct lab2_conn c;
	struct ibv_cq *peer_cq;
	struct ibv_qp *peer_qp;
	struct ibv_mr *peer_mr;
	char *peer_buf;
};
/* Open P; C's QP resends RNR-NAKed SENDs RNR_RETRY times, the peer's once. */
void fx_pair_open(struct fx_pair *p, bool student_cq, int rnr_retry);
void fx_pair_close(struct fx_pair *p);
/* The peer posts a receive of its whole buffer / a SEND of LEN bytes of it. */
void fx_peer_recv(struct fx_pair *p);
void fx_peer_send(struct fx_pair *p, const void *msg, uint32_t len);
/* The peer posts an RDMA WRITE or READ of LEN bytes of its buffer to/from ADDR, RKEY. */
void fx_peer_rdma(struct fx_pair *p, enum ibv_wr_opcode op, uint32_t len, uint64_t addr,
		  uint32_t rkey);
/* One completion of CQ within FX_TIMEOUT_MS, whatever its status, or fail. */
void fx_wait(struct ibv_cq *cq, struct ibv_wc *wc);

/*
 * rdma_cm without the student's step 1: C (timeout FX_TIMEOUT_MS) is
 * connected to ADDR:PORT (client) or has accepted one client on PORT
 * (server), with the framework's rl_cm_*, a CQ with a channel, the QP, the
 * message MR and every receive posted. fx_cm_close() undoes it with plain calls.
 */
void fx_cm_client(struct lab2_conn *c, uint16_t port);
void fx_cm_server(struct lab2_conn *c, uint16_t port);
/* After step 1 made C's ids: the PD, CQ, QP, MR and receives, with plain verbs. */
void fx_cm_resources(struct lab2_conn *c);
void fx_cm_close(struct lab2_conn *c);

/* reference.c: the other side of the protocol, in a thread. */
struct ref_opts {
	bool no_recv;      /* post no receive: the peer's SEND meets RNR */
	int quit_after;    /* disconnect after this many round trips; -1: never */
	uint8_t rnr_retry; /* rnr_retry_count it connects or accepts with */
	bool no_remote;    /* server: register its buffer without remote access */
	/*
	 * Server: the text it exposes for the client's RDMA READ. Client: the
	 * text it RDMA-writes into the server's buffer. Random per run.
	 */
	char text[FX_TEXT_SIZE];
};

struct ref_peer {
	pthread_t thread;
	struct ref_opts o;
	uint16_t port;
	const char *addr;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id;
	bool stop;                       /* set by ref_join(): the test is done with it */
	int ret;                         /* 0, or the errno the reference failed with */
	char why[256];                   /* what went wrong at the reference */
	bool established;                /* the connection came up */
	bool disconnected;               /* it saw DISCONNECTED */
	int round_trips;                 /* pings answered and checked (either side) */
	uint8_t qp_rnr_retry;            /* its own QP's rnr_retry once connected */
	enum ibv_wc_status write_status; /* client: its RDMA WRITE */
	enum ibv_wc_status read_status;  /* client: its RDMA READ */
	char text[LAB2_TEXT_MAX];        /* server: what was written; client: what it read */
};

/* Listen on a free port (R->port) now, serve one client in a thread. */
void ref_server_start(struct ref_peer *r, const struct ref_opts *o);
/* Connect to PORT in a thread, retrying while refused, and run the protocol. */
void ref_client_start(struct ref_peer *r, uint16_t port, const struct ref_opts *o);
/*
 * Tell the thread the test is done (it stops waiting for anything that has
 * not arrived yet), wait for it, and free what it made.
 */
void ref_join(struct ref_peer *r);
/*
 * Default options: receives posted, all round trips, rnr_retry LAB2_RNR_RETRY,
 * and a fresh random text.
 */
struct ref_opts ref_default(void);

#endif
