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
	/* BEGIN SOLUTION step 8
	 * The QPN is qp->qp_num; the GID comes from ibv_query_gid(), the LID from
	 * ibv_query_port(); a PSN has 24 bits. Send the rkey, never the lkey.
	 * Read: man ibv_query_gid, man ibv_query_port.
	 * stub: return rl_todo(8);
	 */
	struct ibv_port_attr port_attr;
	int ret;

	ret = ibv_query_port(qp->context, port, &port_attr);
	if (ret)
		return rl_fail("ibv_query_port", ret, "port %u", port);
	*dest = (struct lab1_dest){
		.qpn = qp->qp_num,
		.psn = psn & 0xffffff,
		.lid = port_attr.lid,
		.addr = (uintptr_t)mr->addr,
		.rkey = mr->rkey,
		.len = (uint32_t)mr->length,
	};
	if (ibv_query_gid(qp->context, port, gid_index, &dest->gid))
		return rl_fail("ibv_query_gid", EINVAL, "index %d on port %u", gid_index, port);
	return 0;
	/* END SOLUTION */
}

/*
 * Step 8. Encode DEST into BUF (LEN bytes) in the wire format lab1.h
 * describes. Returns LAB1_DEST_WIRE_LEN, or -EMSGSIZE when BUF is too short.
 */
int lab1_encode_dest(const struct lab1_dest *dest, uint8_t *buf, size_t len)
{
	/* BEGIN SOLUTION step 8
	 * One field at a time at its fixed offset, big-endian: the two sides may
	 * differ in endianness and struct padding, so never send the struct itself.
	 * Read: framework/rdmalab.h (rl_wire_*), man htonl.
	 * stub: return rl_todo(8);
	 */
	struct rl_wire w;

	rl_wire_writer(&w, buf, len);
	rl_wire_put_u32(&w, dest->qpn);
	rl_wire_put_u32(&w, dest->psn);
	rl_wire_put_bytes(&w, dest->gid.raw, sizeof(dest->gid.raw));
	rl_wire_put_u64(&w, dest->addr);
	rl_wire_put_u32(&w, dest->rkey);
	rl_wire_put_u32(&w, dest->len);
	rl_wire_put_u16(&w, dest->lid);
	if (rl_wire_status(&w))
		return -EMSGSIZE;
	return (int)rl_wire_used(&w);
	/* END SOLUTION */
}

/*
 * Step 8. Decode the first LAB1_DEST_WIRE_LEN bytes of BUF (LEN bytes) into
 * DEST. Returns 0, -EMSGSIZE when LEN is too short, or -EINVAL when the
 * QPN or PSN does not fit in 24 bits.
 */
int lab1_decode_dest(const uint8_t *buf, size_t len, struct lab1_dest *dest)
{
	/* BEGIN SOLUTION step 8
	 * The mirror of lab1_encode_dest(): the same fields in the same order.
	 * Bytes from the network are untrusted: check the length and the ranges.
	 * Read: framework/rdmalab.h (rl_wire_*), man ntohl.
	 * stub: return rl_todo(8);
	 */
	struct rl_wire w;

	rl_wire_reader(&w, buf, len);
	dest->qpn = rl_wire_get_u32(&w);
	dest->psn = rl_wire_get_u32(&w);
	rl_wire_get_bytes(&w, dest->gid.raw, sizeof(dest->gid.raw));
	dest->addr = rl_wire_get_u64(&w);
	dest->rkey = rl_wire_get_u32(&w);
	dest->len = rl_wire_get_u32(&w);
	dest->lid = rl_wire_get_u16(&w);
	if (rl_wire_status(&w))
		return -EMSGSIZE;
	if (dest->qpn > 0xffffff || dest->psn > 0xffffff)
		return -EINVAL;
	return 0;
	/* END SOLUTION */
}

/*
 * Step 9. Swap descriptions with the peer on the connected TCP socket FD:
 * send LOCAL, receive the peer's into REMOTE. Returns 0, or a negative
 * errno (-ECONNRESET when the peer closes first) after printing why.
 */
int lab1_exchange_dest(int fd, const struct lab1_dest *local, struct lab1_dest *remote)
{
	/* BEGIN SOLUTION step 9
	 * Both sides send first and then receive: 42 bytes fit in any socket
	 * buffer, so neither blocks. rl_oob_send/rl_oob_recv move exact byte counts.
	 * Read: rl_oob_send() and rl_oob_recv() in framework/rdmalab.h, man 2 send, man 2 recv.
	 * stub: return rl_todo(9);
	 */
	uint8_t buf[LAB1_DEST_WIRE_LEN];
	int ret;

	ret = lab1_encode_dest(local, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	ret = rl_oob_send(fd, buf, sizeof(buf), LAB1_OOB_TIMEOUT_MS);
	if (ret)
		return ret;
	ret = rl_oob_recv(fd, buf, sizeof(buf), LAB1_OOB_TIMEOUT_MS);
	if (ret)
		return ret;
	ret = lab1_decode_dest(buf, sizeof(buf), remote);
	if (ret)
		rl_err("peer's QP description: %s",
		       ret == -EINVAL ? "QPN or PSN wider than 24 bits" : "too short");
	return ret;
	/* END SOLUTION */
}
