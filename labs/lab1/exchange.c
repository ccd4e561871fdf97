/* exchange.c: Lab 1 steps 8 and 9: what the peer needs, on the wire and over TCP. */
#include "lab1.h"

/*
 * Step 8. Fill DEST with what the peer needs to reach QP (its number, the
 * first PSN it will send, the LID of PORT and the GID at GID_INDEX) and to
 * write into MR (address, rkey, length). Returns 0, or a negative errno.
 */
int lab1_local_dest(struct ibv_qp *qp, uint8_t port, int gid_index, uint32_t psn, struct ibv_mr *mr,
		    struct lab1_dest *dest)
{
	/* TODO step 8
	 * The QPN is qp->qp_num; the GID comes from ibv_query_gid(), the LID from
	 * ibv_query_port(); a PSN has 24 bits. Send the rkey, never the lkey.
	 * Read: man ibv_query_gid, man ibv_query_port.
	 */
	return rl_todo(8);
}

/*
 * Step 8. Encode DEST into BUF (LEN bytes) in the wire format lab1.h
 * describes. Returns LAB1_DEST_WIRE_LEN, or -EMSGSIZE when BUF is too short.
 */
int lab1_encode_dest(const struct lab1_dest *dest, uint8_t *buf, size_t len)
{
	/* TODO step 8
	 * One field at a time at its fixed offset, big-endian: the two sides may
	 * differ in endianness and struct padding, so never send the struct itself.
	 * Read: framework/rdmalab.h (rl_wire_*), man htonl.
	 */
	return rl_todo(8);
}

/*
 * Step 8. Decode the first LAB1_DEST_WIRE_LEN bytes of BUF (LEN bytes) into
 * DEST. Returns 0, -EMSGSIZE when LEN is too short, or -EINVAL when the
 * QPN or PSN does not fit in 24 bits.
 */
int lab1_decode_dest(const uint8_t *buf, size_t len, struct lab1_dest *dest)
{
	/* TODO step 8
	 * The mirror of lab1_encode_dest(): the same fields in the same order.
	 * Bytes from the network are untrusted: check the length and the ranges.
	 * Read: framework/rdmalab.h (rl_wire_*), man ntohl.
	 */
	return rl_todo(8);
}

/*
 * Step 9. Swap descriptions with the peer on the connected TCP socket FD:
 * send LOCAL, receive the peer's into REMOTE. Returns 0, or a negative
 * errno (-ECONNRESET when the peer closes first) after printing why.
 */
int lab1_exchange_dest(int fd, const struct lab1_dest *local, struct lab1_dest *remote)
{
	/* TODO step 9
	 * Both sides send first and then receive: 42 bytes fit in any socket
	 * buffer, so neither blocks. rl_oob_send/rl_oob_recv move exact byte counts.
	 * Read: rl_oob_send() and rl_oob_recv() in framework/rdmalab.h, man 2 send, man 2 recv.
	 */
	return rl_todo(9);
}
