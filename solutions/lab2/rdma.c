/* rdma.c: Lab 2 step 4: a region the peer may write and read, its MSG_MR, RDMA write and read. */
#include "lab2.h"

/*
 * Step 4. Register LEN bytes at BUF in PD so that the peer may RDMA-write
 * into them and RDMA-read them. Returns the MR, or NULL after printing why.
 */
struct ibv_mr *lab2_reg_remote_mr(struct ibv_pd *pd, void *buf, size_t len)
{
	/* BEGIN SOLUTION step 4
	 * The access flags say what the PEER may do: grant what the client does
	 * to this buffer, no more, and what one of those needs with it.
	 * Read: man ibv_reg_mr, docs/lab2.md#step-4.
	 * stub: rl_todo(4);
	 * stub: return NULL;
	 */
	int access = IBV_ACCESS_LOCAL_WRITE |  /* required with REMOTE_WRITE */
		     IBV_ACCESS_REMOTE_WRITE | /* the client writes its text */
		     IBV_ACCESS_REMOTE_READ;   /* the client reads ours */

	return rl_reg_mr(pd, buf, len, access);
	/* END SOLUTION */
}

/*
 * Step 4. Fill M with what the peer needs to name MR remotely: its address,
 * its rkey and its length.
 */
void lab2_describe_mr(const struct ibv_mr *mr, struct lab2_mr_msg *m)
{
	/* BEGIN SOLUTION step 4
	 * The lkey is for our own work requests; the peer names our memory with
	 * the rkey. Send only these three numbers, never the struct ibv_mr.
	 * Read: man ibv_reg_mr (lkey, rkey).
	 * stub: rl_todo(4);
	 * stub: *m = (struct lab2_mr_msg){ 0 };
	 */
	*m = (struct lab2_mr_msg){
		.addr = (uintptr_t)mr->addr,
		.rkey = mr->rkey,
		.len = (uint32_t)mr->length,
	};
	/* END SOLUTION */
}

/*
 * Step 4. Encode M as a MSG_MR (wire format in lab2.h) into BUF of LEN
 * bytes. Returns LAB2_MR_WIRE_LEN, or -EMSGSIZE when BUF is too short.
 */
int lab2_encode_mr(const struct lab2_mr_msg *m, uint8_t *buf, size_t len)
{
	/* BEGIN SOLUTION step 4
	 * Fixed-width fields, big-endian, in order: type, addr, rkey, len. The two
	 * hosts may differ in byte order and struct padding.
	 * Read: framework/rdmalab.h (rl_wire_*).
	 * stub: return rl_todo(4);
	 */
	struct rl_wire w;

	rl_wire_writer(&w, buf, len);
	rl_wire_put_u32(&w, LAB2_MSG_MR);
	rl_wire_put_u64(&w, m->addr);
	rl_wire_put_u32(&w, m->rkey);
	rl_wire_put_u32(&w, m->len);
	if (rl_wire_status(&w))
		return -EMSGSIZE;
	return (int)rl_wire_used(&w);
	/* END SOLUTION */
}

/*
 * Step 4. Decode a MSG_MR of LEN bytes at BUF into M. Returns 0, -EMSGSIZE
 * when LEN is not LAB2_MR_WIRE_LEN, or -EPROTO when it is another message.
 */
int lab2_decode_mr(const uint8_t *buf, size_t len, struct lab2_mr_msg *m)
{
	/* BEGIN SOLUTION step 4
	 * The mirror of lab2_encode_mr(). The bytes come from the network: check
	 * the length and the type before trusting a field.
	 * Read: framework/rdmalab.h (rl_wire_*).
	 * stub: return rl_todo(4);
	 */
	struct rl_wire w;
	uint32_t type;

	if (len != LAB2_MR_WIRE_LEN)
		return -EMSGSIZE;
	rl_wire_reader(&w, buf, len);
	type = rl_wire_get_u32(&w);
	m->addr = rl_wire_get_u64(&w);
	m->rkey = rl_wire_get_u32(&w);
	m->len = rl_wire_get_u32(&w);
	if (rl_wire_status(&w))
		return -EMSGSIZE;
	return type == LAB2_MSG_MR ? 0 : -EPROTO;
	/* END SOLUTION */
}

/*
 * Step 4. Post a signaled RDMA WRITE (OP IBV_WR_RDMA_WRITE, wr_id
 * LAB2_WR_WRITE) of LEN bytes at LOCAL to REMOTE_ADDR, or an RDMA READ
 * (IBV_WR_RDMA_READ, LAB2_WR_READ) of LEN bytes at REMOTE_ADDR into LOCAL.
 * LOCAL is inside C->rdma_mr; RKEY names the remote region. Returns 0, or
 * a negative errno after printing why.
 */
int lab2_post_rdma(struct lab2_conn *c, enum ibv_wr_opcode op, void *local, uint32_t len,
		   uint64_t remote_addr, uint32_t rkey)
{
	/* BEGIN SOLUTION step 4
	 * Both are one-sided: the peer posts nothing and sees no completion. For
	 * each part of the work request, whose memory does it name, with whose key?
	 * Read: man ibv_post_send (IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ).
	 * stub: return rl_todo(4);
	 */
	struct ibv_sge sge = {
		.addr = (uintptr_t)local,
		.length = len,
		.lkey = c->rdma_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = op == IBV_WR_RDMA_READ ? LAB2_WR_READ : LAB2_WR_WRITE,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = {
			.remote_addr = remote_addr,
			.rkey = rkey,
		},
	};
	struct ibv_send_wr *bad_wr;
	int ret = ibv_post_send(c->qp, &wr, &bad_wr);

	if (ret)
		return rl_fail("ibv_post_send", ret, "%s of %u bytes on QP 0x%x",
			       lab2_wr_name(wr.wr_id), len, c->qp->qp_num);
	return 0;
	/* END SOLUTION */
}
