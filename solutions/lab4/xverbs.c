/*
 * xverbs.c: Lab 4 step 2: the extended verbs. The sender posts each chunk
 * with ibv_qp_ex as an RDMA write with immediate data (the chunk's index);
 * the receiver learns of each chunk from its completion on an ibv_cq_ex
 * and hashes it as it arrives, with no message besides the writes.
 */
#include <endian.h>
#include <string.h>

#include "lab4.h"

/*
 * Step 2a. Post chunk INDEX of the file to the same place in the peer's
 * buffer (s->remote_addr, s->rkey) as one RDMA write with immediate data
 * INDEX (big-endian on the wire), wr_id INDEX, asking for a completion when
 * SIGNALED. Returns 0 or a negative errno.
 */
int lab4_post_chunk(struct lab4_sender *s, uint32_t index, bool signaled)
{
	/* BEGIN SOLUTION step 2
	 * One work request in an ibv_wr_start() .. ibv_wr_complete() batch: its wr_id,
	 * flags, builder and local bytes; the immediate's byte order is yours to
	 * decide. SRD (s->ah set) also names its peer (docs/efa.md).
	 * Read: man ibv_wr_post, docs/lab4.md#step-2.
	 * stub: return rl_todo(2);
	 */
	uint64_t offset = (uint64_t)index * s->chunk;
	uint32_t len = lab4_chunk_len(s->size, s->chunk, index);
	int ret;

	ibv_wr_start(s->qpx);
	s->qpx->wr_id = index;
	s->qpx->wr_flags = signaled ? IBV_SEND_SIGNALED : 0;
	ibv_wr_rdma_write_imm(s->qpx, s->rkey, s->remote_addr + offset, htobe32(index));
	ibv_wr_set_sge(s->qpx, s->mr->lkey, (uintptr_t)(s->data + offset), len);
	if (s->ah)
		ibv_wr_set_ud_addr(s->qpx, s->ah, s->remote_qpn, LAB4_QKEY);
	ret = ibv_wr_complete(s->qpx);
	if (ret)
		return rl_fail("ibv_wr_complete", ret, "RDMA WRITE WITH IMM of chunk %u, %u bytes",
			       index, len);
	return 0;
	/* END SOLUTION */
}

/*
 * Step 2b. Take up to MAX completions from the receiver's extended CQ
 * without waiting: for each, the chunk index (its immediate data, in host
 * order) and byte_len into OUT. Returns how many (0: none yet), or -EIO
 * after one line when a completion failed or is not a write with immediate.
 */
int lab4_poll_arrivals(struct lab4_receiver *r, struct lab4_arrival *out, int max)
{
	/* BEGIN SOLUTION step 2
	 * A poll session on the extended CQ: check each completion before you
	 * believe its immediate, and shape the session so that it is right on rxe
	 * too (docs/lab4.md#step-2). Read: man ibv_create_cq_ex.
	 * stub: return rl_todo(2);
	 */
	struct ibv_poll_cq_attr attr = { 0 };
	enum ibv_wc_opcode opcode;
	enum ibv_wc_status status;
	uint64_t wr_id;
	int n, ret;

	for (n = 0; n < max; n++) {
		ret = ibv_start_poll(r->cq, &attr);
		if (ret == ENOENT)
			break;
		if (ret)
			return rl_fail("ibv_start_poll", ret, "on the receiver's CQ");
		status = r->cq->status;
		wr_id = r->cq->wr_id;
		opcode = ibv_wc_read_opcode(r->cq);
		out[n].index = be32toh(ibv_wc_read_imm_data(r->cq));
		out[n].len = ibv_wc_read_byte_len(r->cq);
		ibv_end_poll(r->cq);
		if (status != IBV_WC_SUCCESS) {
			rl_err("receive completion (wr_id %llu) failed: %s",
			       (unsigned long long)wr_id, ibv_wc_status_str(status));
			return -EIO;
		}
		if (opcode != IBV_WC_RECV_RDMA_WITH_IMM) {
			rl_err("expected an RDMA write with immediate, got completion opcode %d",
			       opcode);
			return -EIO;
		}
	}
	return n;
	/* END SOLUTION */
}

/*
 * Step 2c. Receive the whole file: until every chunk is hashed, take the
 * arrivals, keep receives posted, check each is chunk r->arrived of its
 * right length, and hash the chunks in order (when to poll, re-post, hash
 * and sleep: docs/lab4.md#step-2). Then finish the hash into r->sha256 and
 * set r->good. Returns 0 (good or not), -EPROTO for a chunk out of order or of
 * the wrong length, or the errors of the calls above.
 */
int lab4_receive_file(struct lab4_receiver *r)
{
	/* BEGIN SOLUTION step 2
	 * Hashing can be as slow as the link, and every write takes a posted
	 * receive: decide the loop's order (docs/lab4.md#step-2). EVP_DigestUpdate()
	 * per chunk, EVP_DigestFinal_ex() at the end (0 bytes have a hash too).
	 * Read: lab4_wait_arrivals() and lab4_post_recvs() in setup.c; man EVP_DigestUpdate.
	 * stub: return rl_todo(2);
	 */
	struct lab4_arrival arr[LAB4_POLL_BATCH];
	uint32_t want;
	unsigned int len = 0;
	int i, n, ret;

	while (r->hashed < r->nchunks) {
		n = lab4_poll_arrivals(r, arr, LAB4_POLL_BATCH);
		if (n < 0)
			return n;
		ret = lab4_post_recvs(r, (uint32_t)n);
		if (ret)
			return ret;
		for (i = 0; i < n; i++, r->arrived++) {
			want = lab4_chunk_len(r->size, r->chunk, r->arrived);
			if (arr[i].index != r->arrived || arr[i].len != want) {
				rl_err("chunk %u of %u bytes arrived, expected chunk %u of %u bytes",
				       arr[i].index, arr[i].len, r->arrived, want);
				return -EPROTO;
			}
		}
		if (r->hashed < r->arrived) {
			if (!EVP_DigestUpdate(r->hash, r->buf + (uint64_t)r->hashed * r->chunk,
					      lab4_chunk_len(r->size, r->chunk, r->hashed))) {
				rl_err("EVP_DigestUpdate failed");
				return -EIO;
			}
			r->hashed++;
		} else if (n == 0) {
			ret = lab4_wait_arrivals(r);
			if (ret)
				return ret;
		}
	}
	if (!EVP_DigestFinal_ex(r->hash, r->sha256, &len) || len != sizeof(r->sha256)) {
		rl_err("EVP_DigestFinal_ex failed");
		return -EIO;
	}
	r->good = memcmp(r->sha256, r->announced, sizeof(r->sha256)) == 0;
	return 0;
	/* END SOLUTION */
}
