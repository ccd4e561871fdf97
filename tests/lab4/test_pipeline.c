/* test_pipeline.c: Lab 4 step 1: a window of RDMA writes in flight, every k-th signaled. */
#include <endian.h>
#include <string.h>

#include "fixture.h"

/* Run the lab's pipeline over SIZE bytes; returns what it returned. */
static int run_pipeline(struct fx_pair *p, uint64_t size, uint32_t chunk, uint32_t window,
			uint32_t k)
{
	fx_pair_open(p, size, chunk, false);
	p->s.window = window;
	p->s.signal_every = k;
	return lab4_pipeline(&p->s);
}

RL_TEST(pipeline_writes_every_chunk_in_order_to_the_right_place, .step = 1, .points = 3)
{
	struct fx_pair p;
	struct ibv_wc wc;
	uint32_t i;
	int ret = run_pipeline(&p, (1 << 20) + 7, 65536, 8, 4);

	ck_assert_msg(ret == 0, "expected lab4_pipeline to return 0, got %d (%s)", ret,
		      strerror(-ret));
	ck_assert_msg(p.s.posted == 17 && p.s.completed == 17,
		      "expected posted and completed 17, got %u and %u", p.s.posted, p.s.completed);
	for (i = 0; i < 17; i++) {
		ck_assert_msg(fx_log.index[i] == i, "post %u: expected chunk %u, got chunk %u", i,
			      i, fx_log.index[i]);
		fx_recv_wc(&p.r, &wc);
		ck_assert_msg(wc.status == IBV_WC_SUCCESS && be32toh(wc.imm_data) == i,
			      "arrival %u: expected chunk %u, got imm %u (%s)", i, i,
			      be32toh(wc.imm_data), ibv_wc_status_str(wc.status));
	}
	ck_assert_msg(!memcmp(p.r.buf, p.bytes, p.size),
		      "expected the receiver's buffer to equal the file, it differs");
	fx_pair_close(&p);
}
END_TEST

RL_TEST(pipeline_never_has_more_than_the_window_outstanding, .step = 1, .points = 2)
{
	struct fx_pair p;
	int ret = run_pipeline(&p, 40 * 4096, 4096, 3, 1);

	ck_assert_msg(ret == 0, "expected 0, got %d (%s)", ret, strerror(-ret));
	ck_assert_msg(fx_log.posts == 40, "expected 40 posts, got %u", fx_log.posts);
	ck_assert_msg(fx_log.worst_outstanding < 3,
		      "window 3: expected at most 2 writes outstanding before a post, got %u",
		      fx_log.worst_outstanding);
	fx_pair_close(&p);
}
END_TEST

RL_TEST(pipeline_signals_every_kth_chunk_and_the_last, .step = 1, .points = 2)
{
	struct fx_pair p;
	uint32_t i;
	int ret = run_pipeline(&p, 30 * 4096 - 5, 4096, 8, 4);

	ck_assert_msg(ret == 0, "expected 0, got %d (%s)", ret, strerror(-ret));
	ck_assert_msg(fx_log.posts == 30, "expected 30 posts, got %u", fx_log.posts);
	for (i = 0; i < 30; i++) {
		bool want = (i + 1) % 4 == 0 || i == 29;

		ck_assert_msg(fx_log.signaled[i] == want,
			      "window 8, k 4: chunk %u: expected %s, got %s", i,
			      want ? "signaled" : "unsignaled",
			      fx_log.signaled[i] ? "signaled" : "unsignaled");
	}
	fx_pair_close(&p);
}
END_TEST

RL_TEST(pipeline_finishes_when_k_is_larger_than_the_window, .step = 1, .points = 1)
{
	struct fx_pair p;
	int ret = run_pipeline(&p, 20 * 4096, 4096, 2, 16);

	ck_assert_msg(ret == 0,
		      "window 2, k 16: expected 0 (signal the write that fills the window), "
		      "got %d (%s)",
		      ret, strerror(-ret));
	ck_assert_msg(p.s.completed == 20, "expected 20 chunks completed, got %u", p.s.completed);
	fx_pair_close(&p);
}
END_TEST

RL_TEST(pipeline_of_an_empty_file_posts_nothing, .step = 1, .points = 1)
{
	struct fx_pair p;
	int ret = run_pipeline(&p, 0, 4096, 8, 4);

	ck_assert_msg(ret == 0 && fx_log.posts == 0, "expected 0 and no post, got %d and %u posts",
		      ret, fx_log.posts);
	fx_pair_close(&p);
}
END_TEST

RL_TEST(pipeline_returns_eio_for_a_failed_write_instead_of_hanging, .step = 1, .points = 1)
{
	struct fx_pair p;
	int ret;

	fx_pair_open(&p, 8 * 4096, 4096, false);
	p.s.window = 4;
	p.s.signal_every = 2;
	p.s.rkey ^= 0x80;
	ret = lab4_pipeline(&p.s);
	ck_assert_msg(ret == -EIO, "wrong rkey: expected -EIO, got %d (%s)", ret, strerror(-ret));
	fx_pair_close(&p);
}
END_TEST
