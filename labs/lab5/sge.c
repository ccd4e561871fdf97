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
	/* TODO step 2
	 * One send, two SGEs: in which order, how long each is, and which key lets the device
	 * read them. The header goes on the wire in the codec's form (docs/lab5.md#step-2).
	 * Read: man ibv_post_send (struct ibv_sge, wr.ud).
	 */
	return rl_todo(2);
}

/*
 * Step 2b. Post the receive of slot SLOT (0 to LAB5_SLOTS - 1) of U: its GRH,
 * header and payload buffers, in U's registered buffer, each of its own
 * size; its wr_id is SLOT. Returns 0 or a negative errno.
 */
int lab5_post_recv_scatter(struct lab5_ud *u, int slot)
{
	/* TODO step 2
	 * Three SGEs, one per part of the datagram as it arrives: what arrives first on a UD QP,
	 * whatever the sender sent, and how long is each part (docs/lab5.md#step-2)?
	 * Read: man ibv_post_recv, the GRH in man ibv_create_ah_from_wc.
	 */
	return rl_todo(2);
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
	/* TODO step 2
	 * Check the completion before its bytes: its status, and byte_len against what the
	 * header says followed it. Which bytes does byte_len count (docs/lab5.md#step-2)?
	 * Read: man ibv_poll_cq (byte_len, src_qp, wr_id); lab5_poll_recv() in given.c.
	 */
	return rl_todo(2);
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
	/* TODO step 2
	 * UD does not segment: which bytes count against the MTU? A send's buffers are the
	 * device's until its completion, and only a good one may advance the stream's number.
	 * Read: man ibv_post_send, docs/lab5.md#step-2.
	 */
	return rl_todo(2);
}
