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
 * Step 2a. Post chunk INDEX of the file: bytes [INDEX * s->chunk, + its
 * length) to s->remote_addr plus the same offset, with s->rkey, as an RDMA
 * write with immediate data INDEX (big-endian on the wire), wr_id INDEX,
 * asking for a completion when SIGNALED. Returns 0 or a negative errno.
 */
int lab4_post_chunk(struct lab4_sender *s, uint32_t index, bool signaled)
{
	/* TODO step 2
	 * ibv_wr_start(), set qpx->wr_id and qpx->wr_flags, ibv_wr_rdma_write_imm(),
	 * ibv_wr_set_sge() with the file MR's lkey, then ibv_wr_complete(): it
	 * posts, and returns an errno. SRD (s->ah set) also needs ibv_wr_set_ud_addr().
	 * Read: man ibv_wr_post (ibv_wr_start, ibv_wr_rdma_write_imm), docs/lab4.md#step-2.
	 */
	return rl_todo(2);
}

/*
 * Step 2b. Take up to MAX completions from the receiver's extended CQ
 * without waiting: for each, the chunk index (its immediate data, in host
 * order) and byte_len into OUT. Returns how many (0: none yet), or -EIO
 * after one line when a completion failed or is not a write with immediate.
 */
int lab4_poll_arrivals(struct lab4_receiver *r, struct lab4_arrival *out, int max)
{
	/* TODO step 2
	 * Per completion: ibv_start_poll() (ENOENT: nothing there), read status,
	 * opcode, imm_data and byte_len with ibv_wc_read_*(), then ibv_end_poll().
	 * Not ibv_next_poll() on rxe: see docs/lab4.md#step-2. Read: man ibv_create_cq_ex.
	 */
	return rl_todo(2);
}

/*
 * Step 2c. Receive the whole file: until every chunk is hashed, take the
 * arrivals (sleeping with lab4_wait_arrivals() only when there are none and
 * nothing is left to hash), post as many receives again at once, check each
 * is chunk r->arrived with its right length, and hash arrived chunks in
 * order, ONE between two polls. Then finish the hash into r->sha256 and set
 * r->good. Returns 0 (good or not), -EPROTO for a chunk out of order or of
 * the wrong length, or the errors of the calls above.
 */
int lab4_receive_file(struct lab4_receiver *r)
{
	/* TODO step 2
	 * Hashing can be slower than the link: poll and re-post between chunks, or
	 * the receives run out and the sender's writes fail (RNR). EVP_DigestUpdate()
	 * per chunk, EVP_DigestFinal_ex() at the end (0 bytes have a hash too).
	 * Read: lab4_wait_arrivals() and lab4_post_recvs() in setup.c; man EVP_DigestUpdate.
	 */
	return rl_todo(2);
}
