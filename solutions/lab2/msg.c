/* msg.c: Lab 2 step 3: post receives and sends, match their completions by wr_id. */
#include <string.h>

#include "lab2.h"

/*
 * Step 3. Post a receive of up to LAB2_MSG_MAX bytes into receive buffer
 * SLOT of C->bufs (inside C->msg_mr), with wr_id LAB2_WR_RECV + SLOT.
 * Returns 0, or a negative errno after printing why.
 */
int lab2_post_recv(struct lab2_conn *c, int slot)
{
	/* BEGIN SOLUTION step 3
	 * The wr_id comes back in the completion: encode the slot in it, so you
	 * know which buffer the message landed in. Post before the peer can send.
	 * Read: man ibv_post_recv.
	 * stub: return rl_todo(3);
	 */
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->bufs.recv[slot],
		.length = LAB2_MSG_MAX,
		.lkey = c->msg_mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = LAB2_WR_RECV + slot,
		.sg_list = &sge,
		.num_sge = 1,
	};
	struct ibv_recv_wr *bad_wr;
	int ret = ibv_post_recv(c->qp, &wr, &bad_wr);

	if (ret)
		return rl_fail("ibv_post_recv", ret, "slot %d on QP 0x%x", slot, c->qp->qp_num);
	return 0;
	/* END SOLUTION */
}

/*
 * Step 3. Post a signaled SEND of the first LEN bytes of C->bufs.send, with
 * wr_id LAB2_WR_SEND. Returns 0, or a negative errno after printing why.
 */
int lab2_post_send(struct lab2_conn *c, uint32_t len)
{
	/* BEGIN SOLUTION step 3
	 * One SGE over the send buffer, opcode IBV_WR_SEND, IBV_SEND_SIGNALED so a
	 * completion says when the buffer may be reused (and whether it arrived).
	 * Read: man ibv_post_send.
	 * stub: return rl_todo(3);
	 */
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->bufs.send,
		.length = len,
		.lkey = c->msg_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = LAB2_WR_SEND,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad_wr;
	int ret = ibv_post_send(c->qp, &wr, &bad_wr);

	if (ret)
		return rl_fail("ibv_post_send", ret, "SEND of %u bytes on QP 0x%x", len,
			       c->qp->qp_num);
	return 0;
	/* END SOLUTION */
}

/*
 * Step 3. Send the first LEN bytes of C->bufs.send and wait until its
 * completion. A message received meanwhile is kept in C->ready for
 * lab2_recv_msg(). Returns 0, or a negative errno (-EIO: the SEND failed,
 * e.g. IBV_WC_RNR_RETRY_EXC_ERR when the peer had no receive posted).
 */
int lab2_send_msg(struct lab2_conn *c, uint32_t len)
{
	/* BEGIN SOLUTION step 3
	 * Completions come in any order between the two queues: the peer's answer
	 * may complete before our SEND does. Look at wc.wr_id; keep receives for later.
	 * Read: man ibv_poll_cq (wr_id, opcode, byte_len).
	 * stub: return rl_todo(3);
	 */
	struct ibv_wc wc;
	int ret = lab2_post_send(c, len);

	while (!ret) {
		ret = lab2_wait_wc(c, &wc);
		if (ret || wc.wr_id == LAB2_WR_SEND)
			break;
		if (wc.wr_id < LAB2_WR_RECV || c->nready == LAB2_RECV_SLOTS) {
			rl_err("unexpected completion: %s", lab2_wr_name(wc.wr_id));
			return -EPROTO;
		}
		c->ready[c->nready++] = (struct lab2_ready){ .slot = (int)(wc.wr_id - LAB2_WR_RECV),
							     .len = wc.byte_len };
	}
	return ret;
	/* END SOLUTION */
}

/*
 * Step 3. Wait for the next message, copy it into BUF (SIZE bytes) and post
 * its receive again. Returns the message's length, or a negative errno
 * (-EMSGSIZE when it does not fit in BUF).
 */
int lab2_recv_msg(struct lab2_conn *c, void *buf, size_t size)
{
	/* BEGIN SOLUTION step 3
	 * A message kept by lab2_send_msg() comes first. Otherwise wait for a RECV
	 * completion; its wr_id names the slot. Copy out, then re-post that receive.
	 * Read: man ibv_poll_cq, man ibv_post_recv.
	 * stub: return rl_todo(3);
	 */
	struct lab2_ready got;
	struct ibv_wc wc;
	int ret;

	while (c->nready == 0) {
		ret = lab2_wait_wc(c, &wc);
		if (ret)
			return ret;
		if (wc.wr_id < LAB2_WR_RECV || wc.wr_id >= LAB2_WR_RECV + LAB2_RECV_SLOTS)
			continue; /* a SEND, WRITE or READ that succeeded: nothing to keep */
		c->ready[c->nready++] = (struct lab2_ready){ .slot = (int)(wc.wr_id - LAB2_WR_RECV),
							     .len = wc.byte_len };
	}
	got = c->ready[0];
	c->nready--;
	memmove(c->ready, c->ready + 1, c->nready * sizeof(c->ready[0]));
	if (got.len > size) {
		rl_err("received %u bytes, more than the %zu expected", got.len, size);
		return -EMSGSIZE;
	}
	memcpy(buf, c->bufs.recv[got.slot], got.len);
	ret = lab2_post_recv(c, got.slot);
	return ret ? ret : (int)got.len;
	/* END SOLUTION */
}
