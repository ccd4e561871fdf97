/* test_xverbs.c: Lab 4 step 2: ibv_qp_ex posts, ibv_cq_ex polls, hashing as chunks arrive. */
#include <endian.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

RL_TEST(post_chunk_writes_its_bytes_with_the_index_as_immediate_data, .step = 2, .points = 3)
{
	struct fx_pair p;
	struct ibv_wc wc;
	int ret;

	fx_pair_open(&p, 4 * 4096 + 100, 4096, false);
	ret = lab4_post_chunk(&p.s, 4, true);
	ck_assert_msg(ret == 0, "expected lab4_post_chunk to return 0, got %d (%s)", ret,
		      strerror(-ret));
	fx_send_wc(&p.s, &wc);
	ck_assert_msg(wc.status == IBV_WC_SUCCESS && wc.wr_id == 4,
		      "expected a good send completion with wr_id 4, got wr_id %llu (%s)",
		      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	fx_recv_wc(&p.r, &wc);
	ck_assert_msg(wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && be32toh(wc.imm_data) == 4 &&
			      wc.byte_len == 100,
		      "expected a write with immediate 4 of 100 bytes, got opcode %d imm %u, %u "
		      "bytes",
		      wc.opcode, be32toh(wc.imm_data), wc.byte_len);
	ck_assert_msg(!memcmp(p.r.buf + 4 * 4096, p.bytes + 4 * 4096, 100),
		      "expected the last chunk's 100 bytes at offset 16384, they differ");
	fx_pair_close(&p);
}
END_TEST

RL_TEST(post_chunk_unsignaled_gives_no_completion_of_its_own, .step = 2, .points = 1)
{
	struct fx_pair p;
	struct ibv_wc wc;
	int ret;

	fx_pair_open(&p, 2 * 4096, 4096, false);
	ret = lab4_post_chunk(&p.s, 0, false);
	ck_assert_msg(ret == 0, "chunk 0 unsignaled: expected 0, got %d (%s)", ret, strerror(-ret));
	ret = lab4_post_chunk(&p.s, 1, true);
	ck_assert_msg(ret == 0, "chunk 1 signaled: expected 0, got %d (%s)", ret, strerror(-ret));
	fx_send_wc(&p.s, &wc);
	ck_assert_msg(wc.wr_id == 1, "expected the only completion to be chunk 1's, got wr_id %llu",
		      (unsigned long long)wc.wr_id);
	usleep(200000);
	ck_assert_msg(ibv_poll_cq(p.s.cq, 1, &wc) == 0,
		      "expected no completion for the unsignaled chunk 0, got wr_id %llu",
		      (unsigned long long)wc.wr_id);
	fx_pair_close(&p);
}
END_TEST

RL_TEST(poll_arrivals_reads_index_and_length_from_the_extended_cq, .step = 2, .points = 3)
{
	struct fx_pair p;
	struct lab4_arrival arr[8];
	struct ibv_wc wc;
	int64_t deadline;
	uint32_t i;
	int n = 0, ret;

	fx_pair_open(&p, 4 * 4096 + 9, 4096, false);
	for (i = 0; i < 5; i++) {
		ck_assert_int_eq(fx_ref_post(&p.s, i, true), 0);
		fx_send_wc(&p.s, &wc);
	}
	deadline = lab4_now_ms() + FX_TIMEOUT_MS;
	while (n < 5 && lab4_now_ms() < deadline) {
		ret = lab4_poll_arrivals(&p.r, arr + n, 8 - n);
		ck_assert_msg(ret >= 0, "expected a count, got %d (%s)", ret, strerror(-ret));
		n += ret;
	}
	ck_assert_msg(n == 5, "expected 5 arrivals, got %d", n);
	for (i = 0; i < 5; i++)
		ck_assert_msg(arr[i].index == i && arr[i].len == (i < 4 ? 4096 : 9),
			      "arrival %u: expected chunk %u of %u bytes, got chunk %u of %u", i, i,
			      i < 4 ? 4096 : 9, arr[i].index, arr[i].len);
	fx_pair_close(&p);
}
END_TEST

RL_TEST(poll_arrivals_returns_zero_when_nothing_arrived, .step = 2, .points = 1)
{
	struct fx_pair p;
	struct lab4_arrival arr[4];
	int ret;

	fx_pair_open(&p, 4096, 4096, false);
	ret = lab4_poll_arrivals(&p.r, arr, 4);
	ck_assert_msg(ret == 0, "expected 0 arrivals, got %d", ret);
	fx_pair_close(&p);
}
END_TEST

/* Send SIZE bytes with the test's code in a thread, receive them with the lab's. */
static void receive_with_lab_code(uint64_t size, uint32_t chunk, bool flip, bool want_good)
{
	struct fx_pair p;
	int ret, sent;

	fx_pair_open(&p, size, chunk, flip);
	ck_assert_msg(p.r.nchunks <= 4096 || p.r.nchunks > p.r.recv_depth,
		      "fixture: expected more chunks (%u) than receives posted (%u)", p.r.nchunks,
		      p.r.recv_depth);
	fx_ref_send_start(&p, 16);
	ret = lab4_receive_file(&p.r);
	sent = fx_ref_send_join();
	ck_assert_msg(ret == 0, "%llu bytes: expected lab4_receive_file to return 0, got %d (%s)",
		      (unsigned long long)size, ret, strerror(-ret));
	ck_assert_msg(sent == 0, "%llu bytes: the test's sender failed (%s)",
		      (unsigned long long)size, strerror(-sent));
	ck_assert_msg(p.r.arrived == p.r.nchunks, "expected %u chunks arrived, got %u", p.r.nchunks,
		      p.r.arrived);
	ck_assert_msg(!memcmp(p.r.sha256, p.sha256, 32),
		      "%llu bytes: expected r->sha256 to be the SHA-256 of the bytes sent",
		      (unsigned long long)size);
	ck_assert_msg(p.r.good == want_good, "expected good %s, got %s",
		      want_good ? "true" : "false", p.r.good ? "true" : "false");
	fx_pair_close(&p);
}

RL_TEST(receive_file_hashes_every_chunk_as_it_arrives, .step = 2, .points = 3)
{
	receive_with_lab_code(1, 4096, false, true);
	receive_with_lab_code(300001, 65536, false, true);
}
END_TEST

RL_TEST(receive_file_posts_receives_again_for_more_chunks_than_the_queue_holds, .step = 2,
	.points = 2)
{
	/* 5000 chunks of 64 bytes; the receiver posts min(LAB4_RECV_DEPTH, max_qp_wr) at first. */
	receive_with_lab_code(5000 * 64 - 3, 64, false, true);
}
END_TEST

RL_TEST(receive_file_is_not_good_when_the_announced_hash_differs, .step = 2, .points = 1)
{
	receive_with_lab_code(100000, 4096, true, false);
}
END_TEST

RL_TEST(receive_file_of_an_empty_file_is_the_hash_of_nothing, .step = 2, .points = 1)
{
	receive_with_lab_code(0, 4096, false, true);
}
END_TEST

RL_TEST(receive_file_refuses_a_chunk_out_of_order, .step = 2, .points = 1)
{
	struct fx_pair p;
	struct ibv_wc wc;
	int ret;

	fx_pair_open(&p, 3 * 4096, 4096, false);
	ck_assert_int_eq(fx_ref_post(&p.s, 1, true), 0);
	fx_send_wc(&p.s, &wc);
	ret = lab4_receive_file(&p.r);
	ck_assert_msg(ret == -EPROTO, "chunk 1 first: expected -EPROTO, got %d (%s)", ret,
		      strerror(-ret));
	fx_pair_close(&p);
}
END_TEST
