/*
 * sge.c: Lab 5 step 2: gather and scatter. A send takes the header and the
 * payload from two places; a receive puts the GRH, the header and the
 * payload each into its own buffer, so that nothing is copied to be sent or
 * to be read.
 */
#include <string.h>

#include "lab5.h"

/*
 * Step 2a. Post one signaled send of a datagram to where U's sends go
 * (U->ah, U->remote_qpn, U->remote_qkey): H, encoded into U->tx_hdr, then
 * the H->len bytes at PAYLOAD, which lie in U's registered buffer (its
 * tx_payload, or a receive slot's payload, sent on without a copy); for
 * H->len 0, the header alone.
 * Returns 0 or a negative errno.
 */
int lab5_post_send_gather(struct lab5_ud *u, const struct lab5_hdr *h, const void *payload)
{
	/* BEGIN SOLUTION step 2
	 * One send, two SGEs: in which order, how long each is, and which key lets the device
	 * read them. The header goes on the wire in the codec's form (docs/lab5.md#step-2).
	 * Read: man ibv_post_send (struct ibv_sge, wr.ud).
	 * stub: return rl_todo(2);
	 */
	struct ibv_sge sge[LAB5_SEND_SGES] = {
		{ .addr = (uintptr_t)u->tx_hdr, .length = LAB5_HDR_LEN, .lkey = u->mr->lkey },
		{ .addr = (uintptr_t)payload, .length = h->len, .lkey = u->mr->lkey },
	};
	struct ibv_send_wr wr = {
		.wr_id = LAB5_WR_SEND,
		.sg_list = sge,
		.num_sge = h->len ? 2 : 1, /* no payload, no second SGE */
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = {
			.ah = u->ah,
			.remote_qpn = u->remote_qpn,
			.remote_qkey = u->remote_qkey,
		},
	};
	struct ibv_send_wr *bad;
	int ret;

	lab5_hdr_encode(h, u->tx_hdr);
	ret = ibv_post_send(u->qp, &wr, &bad);
	if (ret)
		return rl_fail("ibv_post_send", ret, "UD datagram of %u + %u bytes", LAB5_HDR_LEN,
			       h->len);
	return 0;
	/* END SOLUTION */
}

/*
 * Step 2b. Post the receive of slot SLOT (0 to LAB5_SLOTS - 1) of U: its GRH,
 * header and payload buffers, in U's registered buffer, each of its own
 * size; its wr_id is SLOT. Returns 0 or a negative errno.
 */
int lab5_post_recv_scatter(struct lab5_ud *u, int slot)
{
	/* BEGIN SOLUTION step 2
	 * Three SGEs, one per part of the datagram as it arrives: what arrives first on a UD QP,
	 * whatever the sender sent, and how long is each part (docs/lab5.md#step-2)?
	 * Read: man ibv_post_recv, the GRH in man ibv_create_ah_from_wc.
	 * stub: return rl_todo(2);
	 */
	struct ibv_sge sge[LAB5_RECV_SGES] = {
		{ .addr = (uintptr_t)(u->rx_grh + slot * LAB5_GRH_LEN),
		  .length = LAB5_GRH_LEN,
		  .lkey = u->mr->lkey },
		{ .addr = (uintptr_t)(u->rx_hdr + slot * LAB5_HDR_LEN),
		  .length = LAB5_HDR_LEN,
		  .lkey = u->mr->lkey },
		{ .addr = (uintptr_t)(u->rx_payload + slot * LAB5_MAX_PAYLOAD),
		  .length = LAB5_MAX_PAYLOAD,
		  .lkey = u->mr->lkey },
	};
	struct ibv_recv_wr wr = {
		.wr_id = (uint64_t)slot,
		.sg_list = sge,
		.num_sge = LAB5_RECV_SGES,
	};
	struct ibv_recv_wr *bad;
	int ret;

	ret = ibv_post_recv(u->qp, &wr, &bad);
	if (ret)
		return rl_fail("ibv_post_recv", ret, "UD receive slot %d", slot);
	return 0;
	/* END SOLUTION */
}

/*
 * Step 2c. Take one receive completion of U (waiting at most U->timeout_ms)
 * and describe its datagram in M: the header decoded from its slot, where
 * its payload landed, its sender's QP. A datagram whose length disagrees
 * with its header is -EPROTO, a failed completion -EIO, each after one
 * line (M->slot still names the receive it took, to post again);
 * -ETIMEDOUT when none came.
 */
int lab5_recv_msg(struct lab5_ud *u, struct lab5_msg *m)
{
	/* BEGIN SOLUTION step 2
	 * Check the completion before its bytes: its status, and byte_len against what the
	 * header says followed it. Which bytes does byte_len count (docs/lab5.md#step-2)?
	 * Read: man ibv_poll_cq (byte_len, src_qp, wr_id); lab5_poll_recv() in given.c.
	 * stub: return rl_todo(2);
	 */
	struct ibv_wc wc;
	int n;

	n = lab5_poll_recv(u, &wc);
	if (n < 0)
		return n;
	if (n == 0) {
		rl_err("lab5: no datagram within %d ms", u->timeout_ms);
		return -ETIMEDOUT;
	}
	m->slot = (int)wc.wr_id; /* lab5_poll_recv() gives receives only: a slot */
	if (wc.status != IBV_WC_SUCCESS)
		return rl_fail_wc("UD receive", &wc);
	m->src_qp = wc.src_qp;
	if (wc.byte_len < LAB5_GRH_LEN + LAB5_HDR_LEN) {
		rl_err("lab5: a datagram of %u bytes: shorter than the GRH and a header",
		       wc.byte_len);
		return -EPROTO;
	}
	lab5_hdr_decode(u->rx_hdr + m->slot * LAB5_HDR_LEN, &m->hdr);
	if (wc.byte_len != LAB5_GRH_LEN + LAB5_HDR_LEN + m->hdr.len) {
		rl_err("lab5: a datagram of %u bytes whose header says %u payload bytes "
		       "(expected %u bytes in all)",
		       wc.byte_len, m->hdr.len, LAB5_GRH_LEN + LAB5_HDR_LEN + m->hdr.len);
		return -EPROTO;
	}
	m->payload = u->rx_payload + m->slot * LAB5_MAX_PAYLOAD;
	m->payload_len = m->hdr.len;
	return 0;
	/* END SOLUTION */
}

/*
 * Step 2d. Send LEN bytes of PAYLOAD (copied into U->tx_payload; NULL
 * when LEN is 0: a header alone, as a hello is) as the
 * next datagram of U's stream, of kind KIND, numbered U->next_seq, and wait
 * for its completion (at most U->timeout_ms); then count it. A datagram
 * that would not fit the path MTU (U->mtu) is refused, -EMSGSIZE, before
 * anything is posted. Returns 0 or a negative errno.
 */
int lab5_send_msg(struct lab5_ud *u, uint32_t kind, const void *payload, uint32_t len)
{
	/* BEGIN SOLUTION step 2
	 * UD does not segment: which bytes count against the MTU? A send's buffers are the
	 * device's until its completion, and only a good one may advance the stream's number.
	 * Read: man ibv_post_send, docs/lab5.md#step-2.
	 * stub: return rl_todo(2);
	 */
	struct lab5_hdr h = { .kind = kind, .seq = u->next_seq, .len = len };
	struct ibv_wc wc;
	int ret, n;

	if (len > LAB5_MAX_PAYLOAD || LAB5_HDR_LEN + len > u->mtu) {
		rl_err("lab5: a datagram of %u + %u bytes does not fit the path MTU of %u bytes",
		       LAB5_HDR_LEN, len, u->mtu);
		return -EMSGSIZE;
	}
	if (len && payload != u->tx_payload)
		memcpy(u->tx_payload, payload, len);
	ret = lab5_post_send_gather(u, &h, u->tx_payload);
	if (ret)
		return ret;
	n = lab5_poll_send(u, &wc);
	if (n < 0)
		return n;
	if (n == 0) {
		rl_err("lab5: datagram %u: no send completion within %d ms", h.seq, u->timeout_ms);
		return -ETIMEDOUT;
	}
	if (wc.status != IBV_WC_SUCCESS)
		return rl_fail_wc("UD send", &wc);
	u->next_seq++;
	return 0;
	/* END SOLUTION */
}
