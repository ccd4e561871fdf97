/*
 * ud.c: Lab 4 step 3: UD-style addressing, the model of EFA's SRD. A UD QP
 * is connected to nobody: each send names its peer with an address handle
 * (built from the peer's GID), the peer's QP number and a Q_Key. Datagrams
 * are at most one MTU, arrive behind a 40-byte GRH, and RDMA is not there.
 */
#include <stdlib.h>
#include <string.h>

#include "lab4.h"

/*
 * Step 3a. Bring the UD QP QP from RESET to RTS on PORT, QKEY the key a
 * sender must quote to reach it; which attributes each transition takes for
 * UD is the step's question (docs/lab4.md#step-3). Returns 0 or a negative errno.
 */
int lab4_ud_to_rts(struct ibv_qp *qp, uint8_t port, uint32_t qkey)
{
	/* TODO step 3
	 * Three ibv_modify_qp() calls. Compare with RC, attribute by attribute:
	 * what does a QP bound to nobody still need?
	 * Read: man ibv_modify_qp (the UD column of its table of required attributes).
	 */
	return rl_todo(3);
}

/*
 * Step 3b. An address handle for the peer whose GID is PEER, reached from
 * PORT with our GID GID_INDEX as source. Returns the AH, or NULL after one
 * line.
 */
struct ibv_ah *lab4_ud_make_ah(struct ibv_pd *pd, uint8_t port, int gid_index,
			       const union ibv_gid *peer)
{
	/* TODO step 3
	 * Which fields of a struct ibv_ah_attr matter on RoCE, where packets are
	 * routed by GID: docs/lab4.md#step-3. Read: man ibv_create_ah.
	 */
	rl_todo(3);
	return NULL;
}

/*
 * Step 3c. Send LEN bytes of MSG as one datagram to PEER (copied into u's
 * send slot first), signaled, with WR_ID. A datagram longer than u->mtu is
 * refused with -EMSGSIZE and one line: UD does not split messages.
 */
int lab4_ud_send(struct lab4_ud *u, const struct lab4_ud_peer *peer, const void *msg, uint32_t len,
		 uint64_t wr_id)
{
	/* TODO step 3
	 * An IBV_WR_SEND whose wr.ud names the peer: ah, remote_qpn, remote_qkey.
	 * The payload goes from the send slot, after the receive slots, with u->mr.
	 * Read: man ibv_post_send (the UD fields).
	 */
	return rl_todo(3);
}

/*
 * Step 3d. A UD receive of BYTE_LEN bytes landed in SLOT: point *PAYLOAD at
 * the datagram and set *LEN to its length, past the GRH that always comes
 * first. Returns 0, or -EPROTO when BYTE_LEN is shorter than a GRH.
 */
int lab4_ud_payload(const uint8_t *slot, uint32_t byte_len, const uint8_t **payload, uint32_t *len)
{
	/* TODO step 3
	 * The first LAB4_GRH_LEN (40) bytes of every UD receive are the GRH, present
	 * or not, and byte_len counts them. Read: man ibv_post_recv, man ibv_poll_cq.
	 */
	return rl_todo(3);
}

/* Slot SLOT of u's buffer: 0 .. LAB4_UD_SLOTS-1 receive, LAB4_UD_SLOTS send. */
uint8_t *lab4_ud_slot(struct lab4_ud *u, int slot)
{
	return u->buf + (size_t)slot * (LAB4_GRH_LEN + u->mtu);
}

/* Post a receive into slot SLOT: room for the GRH and one MTU. */
int lab4_ud_post_recv(struct lab4_ud *u, int slot)
{
	return rl_post_recv(u->qp, u->mr, lab4_ud_slot(u, slot), LAB4_GRH_LEN + u->mtu,
			    (uint64_t)slot);
}

/*
 * A UD QP on CTX's PORT, in RTS (step 3a), with its PD, a CQ for receives
 * and one for sends, registered slots and every receive slot posted. The
 * MTU is the port's active MTU.
 */
int lab4_ud_open(struct lab4_ud *u, struct ibv_context *ctx, uint8_t port, int gid_index)
{
	struct ibv_port_attr pattr;
	struct ibv_qp_init_attr init = {
		.cap = {
			.max_send_wr = 4,
			.max_recv_wr = LAB4_UD_SLOTS,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_UD,
	};
	size_t size;
	int i;

	*u = (struct lab4_ud){ .ctx = ctx, .port = port, .gid_index = gid_index, .qkey = LAB4_QKEY };
	if (ibv_query_port(ctx, port, &pattr))
		return rl_fail("ibv_query_port", errno, "port %u", port);
	u->mtu = 128u << pattr.active_mtu; /* IBV_MTU_256 is 1 */
	size = (size_t)(LAB4_UD_SLOTS + 1) * (LAB4_GRH_LEN + u->mtu);
	u->buf = calloc(1, size);
	if (!u->buf)
		return -ENOMEM;
	u->pd = rl_alloc_pd(ctx);
	if (!u->pd)
		goto clean;
	u->cq = rl_create_cq(ctx, LAB4_UD_SLOTS, NULL);
	u->send_cq = u->cq ? rl_create_cq(ctx, init.cap.max_send_wr, NULL) : NULL;
	if (!u->send_cq)
		goto clean;
	init.send_cq = u->send_cq;
	init.recv_cq = u->cq;
	u->qp = ibv_create_qp(u->pd, &init);
	if (!u->qp) {
		rl_fail("ibv_create_qp", errno, "UD QP");
		goto clean;
	}
	u->mr = rl_reg_mr(u->pd, u->buf, size, IBV_ACCESS_LOCAL_WRITE);
	if (!u->mr)
		goto clean;
	if (lab4_ud_to_rts(u->qp, port, u->qkey))
		goto clean;
	for (i = 0; i < LAB4_UD_SLOTS; i++)
		if (lab4_ud_post_recv(u, i))
			goto clean;
	return 0;

clean:
	lab4_ud_close(u);
	return -EIO;
}

void lab4_ud_close(struct lab4_ud *u)
{
	if (u->qp)
		ibv_destroy_qp(u->qp);
	if (u->mr)
		ibv_dereg_mr(u->mr);
	if (u->send_cq)
		ibv_destroy_cq(u->send_cq);
	if (u->cq)
		ibv_destroy_cq(u->cq);
	if (u->pd)
		ibv_dealloc_pd(u->pd);
	free(u->buf);
	*u = (struct lab4_ud){ 0 };
}
