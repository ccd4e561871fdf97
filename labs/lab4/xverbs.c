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
	/* TODO step 2
	 * One work request in an ibv_wr_start() .. ibv_wr_complete() batch: its wr_id,
	 * flags, builder and local bytes; the immediate's byte order is yours to
	 * decide. SRD (s->ah set) also names its peer (docs/efa.md).
	 * Read: man ibv_wr_post, docs/lab4.md#step-2.
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
	 * A poll session on the extended CQ: check each completion before you
	 * believe its immediate, and shape the session so that it is right on rxe
	 * too (docs/lab4.md#step-2). Read: man ibv_create_cq_ex.
	 */
	return rl_todo(2);
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
	/* TODO step 2
	 * Hashing can be as slow as the link, and every write takes a posted
	 * receive: decide the loop's order (docs/lab4.md#step-2). EVP_DigestUpdate()
	 * per chunk, EVP_DigestFinal_ex() at the end (0 bytes have a hash too).
	 * Read: lab4_wait_arrivals() and lab4_post_recvs() in setup.c; man EVP_DigestUpdate.
	 */
	return rl_todo(2);
}
