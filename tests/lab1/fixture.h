/*
 * fixture.h: objects built with plain verbs for the Lab 1 tests, so that a
 * test only fails for its own step, and references from outside the lab's
 * code (rdma resource, ibv_query_qp). Every helper fails the test, with a
 * message, instead of returning an error.
 */
#ifndef RDMALAB_LAB1_FIXTURE_H
#define RDMALAB_LAB1_FIXTURE_H

#include <stdint.h>

#include <infiniband/verbs.h>

#include "../harness.h"
#include "rdmalab.h"

#define FX_DEPTH 8
#define FX_BUF_SIZE 4096
#define FX_WC_TIMEOUT_MS 5000

/* Two RC QPs on one device, one PD, each QP with its own CQ and buffer. */
struct fx_pair {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
	struct ibv_mr *mr[2];
	char *buf[2];
};

/*
 * Fail the test with "expected WHAT, got NULL (step N: see docs/lab1.md#step-N)"
 * when PTR is NULL, so an unfinished step gives a clean failure, not a crash.
 */
#define fx_need(ptr, what, step)                                                                   \
	ck_assert_msg((ptr) != NULL, "expected %s, got NULL (step %d: see docs/lab1.md#step-%d)",  \
		      what, step, step)

/* The environment (port, GID index, address) and free ports: see ../harness.h. */

/* Open the environment's device, allocate a PD, create a CQ or an RC QP. */
struct ibv_context *fx_open(void);
struct ibv_pd *fx_pd(struct ibv_context *ctx);
struct ibv_cq *fx_cq(struct ibv_context *ctx);
struct ibv_qp *fx_qp(struct ibv_pd *pd, struct ibv_cq *cq);

/* Move QP with plain verbs: to INIT; to RTR aimed at PEER (same device); to RTS. */
void fx_to_init(struct ibv_qp *qp);
void fx_to_rtr(struct ibv_qp *qp, struct ibv_qp *peer);
void fx_to_rts(struct ibv_qp *qp);
/* The PSN QP sends from once fx_to_rts() has run (the peer's fx_to_rtr expects it). */
uint32_t fx_psn(const struct ibv_qp *qp);

/* ibv_query_qp with every attribute; the state alone; the state's name. */
void fx_query(struct ibv_qp *qp, struct ibv_qp_attr *attr, struct ibv_qp_init_attr *init);
enum ibv_qp_state fx_state(struct ibv_qp *qp);
const char *fx_state_str(enum ibv_qp_state s);

/* Two QPs connected to each other (RTS both), with a registered buffer each. */
void fx_pair_open(struct fx_pair *p);
void fx_pair_close(struct fx_pair *p);

/* Post with plain verbs on P's QP I: a receive into / a SEND, WRITE or READ from its buffer. */
void fx_post_recv(struct fx_pair *p, int i, struct ibv_mr *mr, void *buf, uint32_t len);
void fx_post_send(struct fx_pair *p, int i, uint32_t len);
void fx_post_rdma(struct fx_pair *p, int i, enum ibv_wr_opcode op, uint32_t len, uint64_t addr,
		  uint32_t rkey);
/* One completion of CQ within FX_WC_TIMEOUT_MS, whatever its status, or fail. */
void fx_wait(struct ibv_cq *cq, struct ibv_wc *wc);

/* How many KIND ("pd", "mr", "cq", "qp") this process has on the device, per `rdma resource show`. */
int fx_res_count(const char *kind);
/* The rkey and lkey `rdma resource show mr` lists for an MR of LEN bytes of this process. */
int fx_res_mr_keys(size_t len, uint32_t *rkey, uint32_t *lkey);

#endif
