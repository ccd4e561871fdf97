/* test_cq.c: Lab 2 step 2: a CQ with a completion channel, and sleeping on it. */
#include <string.h>
#include <time.h>

#include "fixture.h"
#include "lab2.h"

/* Step 2 */

RL_TEST(create_cq_binds_a_new_cq_to_a_new_channel, .step = 2, .points = 2)
{
	struct fx_pair p;

	fx_pair_open(&p, true, 1);
	ck_assert_msg(p.c.cq->channel == p.c.comp,
		      "expected the CQ to wake c->comp (%p), it wakes %p", (void *)p.c.comp,
		      (void *)p.c.cq->channel);
	ck_assert_msg(p.c.cq->cqe >= LAB2_CQ_DEPTH, "expected at least %d CQ entries, got %d",
		      LAB2_CQ_DEPTH, p.c.cq->cqe);
	fx_pair_close(&p);
}
END_TEST

RL_TEST(wait_wc_returns_the_completion_that_arrives, .step = 2, .points = 2)
{
	struct ibv_wc wc;
	struct fx_pair p;
	int i;

	fx_pair_open(&p, false, 1);
	/* Twice: the second wait needs the CQ armed again and the first event acknowledged. */
	for (i = 0; i < 2; i++) {
		fx_peer_recv(&p);
		fx_ok(rl_post_send_msg(p.c.qp, p.c.msg_mr, p.c.bufs.send, 8, LAB2_WR_SEND + 10 * i),
		      "the fixture's SEND", 2);
		memset(&wc, 0, sizeof(wc));
		fx_ok(lab2_wait_wc(&p.c, &wc), "lab2_wait_wc", 2);
		ck_assert_msg(wc.wr_id == (uint64_t)(LAB2_WR_SEND + 10 * i) &&
				      wc.opcode == IBV_WC_SEND,
			      "expected the SEND's completion (wr_id %d), got wr_id %llu opcode %d",
			      LAB2_WR_SEND + 10 * i, (unsigned long long)wc.wr_id, wc.opcode);
	}
	fx_pair_close(&p);
}
END_TEST

RL_TEST(wait_wc_reports_a_failed_completion_with_eio, .step = 2, .points = 1)
{
	struct ibv_wc wc;
	struct fx_pair p;
	int ret;

	fx_pair_open(&p, false, 1);
	fx_ok(rl_post_write(p.c.qp, p.c.rdma_mr, p.c.rdma_buf, 16, (uintptr_t)p.peer_buf,
			    p.peer_mr->rkey ^ 0x5500, LAB2_WR_WRITE),
	      "the fixture's RDMA WRITE", 2);
	memset(&wc, 0, sizeof(wc));
	ret = lab2_wait_wc(&p.c, &wc);
	ck_assert_msg(ret == -EIO, "expected -EIO from lab2_wait_wc, got %d (%s)", ret,
		      strerror(-ret));
	ck_assert_msg(wc.status == IBV_WC_REM_ACCESS_ERR,
		      "expected \"%s\" in wc.status, got \"%s\"",
		      ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR), ibv_wc_status_str(wc.status));
	fx_pair_close(&p);
}
END_TEST

/* CPU time this process used, in ms. */
static long cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

RL_TEST(wait_wc_sleeps_on_the_channel_and_times_out, .step = 2, .points = 2)
{
	struct ibv_wc wc;
	struct fx_pair p;
	long start, cpu, took;
	int ret;

	fx_pair_open(&p, false, 1);
	p.c.timeout_ms = 600;
	start = fx_now_ms();
	cpu = cpu_ms();
	ret = lab2_wait_wc(&p.c, &wc);
	took = fx_now_ms() - start;
	cpu = cpu_ms() - cpu;
	ck_assert_msg(ret == -ETIMEDOUT,
		      "expected -ETIMEDOUT from lab2_wait_wc on an empty CQ, got %d (%s)", ret,
		      strerror(-ret));
	ck_assert_msg(took >= 500 && took < 3000, "expected to wait about 600 ms, waited %ld ms",
		      took);
	ck_assert_msg(
		cpu < took / 3,
		"expected to sleep on the completion channel, but %ld ms of CPU went in %ld ms "
		"(busy polling?)",
		cpu, took);
	fx_pair_close(&p);
}
END_TEST
