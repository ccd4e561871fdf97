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
	/* TODO step 3
	 * The wr_id comes back in the completion: encode the slot in it, so you
	 * know which buffer the message landed in. Post before the peer can send.
	 * Read: man ibv_post_recv.
	 */
	return rl_todo(3);
}

/*
 * Step 3. Post a signaled SEND of the first LEN bytes of C->bufs.send, with
 * wr_id LAB2_WR_SEND. Returns 0, or a negative errno after printing why.
 */
int lab2_post_send(struct lab2_conn *c, uint32_t len)
{
	/* TODO step 3
	 * One SGE over the send buffer, opcode IBV_WR_SEND, IBV_SEND_SIGNALED so a
	 * completion says when the buffer may be reused (and whether it arrived).
	 * Read: man ibv_post_send.
	 */
	return rl_todo(3);
}

/*
 * Step 3. Send the first LEN bytes of C->bufs.send and wait until its
 * completion. A message received meanwhile is kept in C->ready for
 * lab2_recv_msg(). Returns 0, or a negative errno (-EIO: the SEND failed,
 * e.g. IBV_WC_RNR_RETRY_EXC_ERR when the peer had no receive posted).
 */
int lab2_send_msg(struct lab2_conn *c, uint32_t len)
{
	/* TODO step 3
	 * Completions come in any order between the two queues: the peer's answer
	 * may complete before our SEND does. Look at wc.wr_id; keep receives for later.
	 * Read: man ibv_poll_cq (wr_id, opcode, byte_len).
	 */
	return rl_todo(3);
}

/*
 * Step 3. Wait for the next message, copy it into BUF (SIZE bytes) and post
 * its receive again. Returns the message's length, or a negative errno
 * (-EMSGSIZE when it does not fit in BUF).
 */
int lab2_recv_msg(struct lab2_conn *c, void *buf, size_t size)
{
	/* TODO step 3
	 * A message kept by lab2_send_msg() comes first. Otherwise wait for a RECV
	 * completion; its wr_id names the slot. Copy out, then re-post that receive.
	 * Read: man ibv_poll_cq, man ibv_post_recv.
	 */
	return rl_todo(3);
}
