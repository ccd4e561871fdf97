/* test_resources.c: Lab 1 steps 1 to 4: the PD, the MR, the CQ and the QP, checked from outside. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "lab1.h"

/* Step 1 */

RL_TEST(pd_is_allocated_on_the_given_context, .step = 1, .points = 2)
{
	struct ibv_context *ctx = fx_open();
	struct ibv_pd *pd = lab1_alloc_pd(ctx);

	fx_need(pd, "a PD from lab1_alloc_pd", 1);
	ck_assert_msg(pd->context == ctx, "expected pd->context %p (the context given), got %p",
		      (void *)ctx, (void *)pd->context);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	ibv_close_device(ctx);
}
END_TEST

RL_TEST(pd_is_counted_by_rdma_resource_until_deallocated, .step = 1, .points = 1)
{
	struct ibv_context *ctx = fx_open();
	int before = fx_res_count("pd"), got;
	struct ibv_pd *pd = lab1_alloc_pd(ctx);

	fx_need(pd, "a PD from lab1_alloc_pd", 1);
	got = fx_res_count("pd");
	ck_assert_msg(got == before + 1, "expected %d PDs in 'rdma resource show', got %d",
		      before + 1, got);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	got = fx_res_count("pd");
	ck_assert_msg(got == before, "expected %d PDs after ibv_dealloc_pd, got %d", before, got);
	ibv_close_device(ctx);
}
END_TEST

/* Step 2 */

RL_TEST(mr_covers_exactly_the_buffer_given, .step = 2, .points = 2)
{
	struct ibv_context *ctx = fx_open();
	struct ibv_pd *pd = fx_pd(ctx);
	char *buf = calloc(1, FX_BUF_SIZE);
	struct ibv_mr *mr = lab1_reg_mr(pd, buf + 64, 1000);

	fx_need(mr, "an MR from lab1_reg_mr", 2);
	ck_assert_msg(mr->addr == buf + 64, "expected mr->addr %p, got %p", (void *)(buf + 64),
		      mr->addr);
	ck_assert_msg(mr->length == 1000, "expected mr->length 1000, got %zu", mr->length);
	ck_assert_msg(mr->pd == pd, "expected mr->pd to be the PD given, got another");
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	free(buf);
}
END_TEST

RL_TEST(mr_keys_match_rdma_resource, .step = 2, .points = 1)
{
	struct ibv_context *ctx = fx_open();
	struct ibv_pd *pd = fx_pd(ctx);
	char *buf = calloc(1, FX_BUF_SIZE);
	struct ibv_mr *mr = lab1_reg_mr(pd, buf, 3072);
	uint32_t rkey, lkey;
	int ret;

	fx_need(mr, "an MR from lab1_reg_mr", 2);
	ret = fx_res_mr_keys(3072, &rkey, &lkey);
	ck_assert_msg(ret == 0 || ret == -EPERM,
		      "expected 'rdma resource show mr' to list a 3072-byte MR of this process, "
		      "it does not");
	if (ret == -EPERM) {
		/* Keys hidden from unprivileged users: the MR listed is ours, check it is the one returned. */
		ck_assert_msg(
			mr->pd == pd && mr->addr == buf && mr->length == 3072,
			"expected the MR of the 3072 bytes at %p in the given PD, got %zu bytes at %p",
			(void *)buf, mr->length, mr->addr);
	} else {
		ck_assert_msg(
			mr->rkey == rkey && mr->lkey == lkey,
			"expected rkey 0x%x lkey 0x%x (rdma resource), got rkey 0x%x lkey 0x%x",
			rkey, lkey, mr->rkey, mr->lkey);
	}
	free(buf);
}
END_TEST

RL_TEST(mr_lets_the_peer_rdma_write_into_it, .step = 2, .points = 2)
{
	struct fx_pair p;
	char *buf = calloc(1, FX_BUF_SIZE);
	struct ibv_mr *mr;
	struct ibv_wc wc;

	fx_pair_open(&p);
	mr = lab1_reg_mr(p.pd, buf, FX_BUF_SIZE);
	fx_need(mr, "an MR from lab1_reg_mr", 2);
	strcpy(p.buf[0], "written from the peer");
	fx_post_rdma(&p, 0, IBV_WR_RDMA_WRITE, 22, (uintptr_t)buf, mr->rkey);
	fx_wait(p.cq[0], &wc);
	ck_assert_msg(wc.status == IBV_WC_SUCCESS,
		      "expected the peer's RDMA write to succeed, got \"%s\" (is "
		      "IBV_ACCESS_REMOTE_WRITE granted?)",
		      ibv_wc_status_str(wc.status));
	ck_assert_msg(strcmp(buf, "written from the peer") == 0,
		      "expected \"written from the peer\" in the buffer, got \"%.22s\"", buf);
	ibv_dereg_mr(mr);
	fx_pair_close(&p);
	free(buf);
}
END_TEST

RL_TEST(mr_takes_a_send_into_a_posted_receive, .step = 2, .points = 1)
{
	struct fx_pair p;
	char *buf = calloc(1, FX_BUF_SIZE);
	struct ibv_mr *mr;
	struct ibv_wc wc;

	fx_pair_open(&p);
	mr = lab1_reg_mr(p.pd, buf, FX_BUF_SIZE);
	fx_need(mr, "an MR from lab1_reg_mr", 2);
	fx_post_recv(&p, 1, mr, buf, FX_BUF_SIZE);
	strcpy(p.buf[0], "sent to you");
	fx_post_send(&p, 0, 12);
	fx_wait(p.cq[1], &wc);
	ck_assert_msg(wc.status == IBV_WC_SUCCESS,
		      "expected the receive into the MR to succeed, got \"%s\" (is "
		      "IBV_ACCESS_LOCAL_WRITE granted?)",
		      ibv_wc_status_str(wc.status));
	ck_assert_msg(strcmp(buf, "sent to you") == 0, "expected \"sent to you\", got \"%.12s\"",
		      buf);
	ibv_dereg_mr(mr);
	fx_pair_close(&p);
	free(buf);
}
END_TEST

RL_TEST(mr_does_not_let_the_peer_rdma_read_it, .step = 2, .points = 1)
{
	struct fx_pair p;
	char *buf = calloc(1, FX_BUF_SIZE);
	struct ibv_mr *mr;
	struct ibv_wc wc;

	fx_pair_open(&p);
	mr = lab1_reg_mr(p.pd, buf, FX_BUF_SIZE);
	fx_need(mr, "an MR from lab1_reg_mr", 2);
	fx_post_rdma(&p, 0, IBV_WR_RDMA_READ, 64, (uintptr_t)buf, mr->rkey);
	fx_wait(p.cq[0], &wc);
	ck_assert_msg(wc.status == IBV_WC_REM_ACCESS_ERR,
		      "expected the peer's RDMA read to fail with \"%s\" (the lab only needs "
		      "remote write), got \"%s\"",
		      ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR), ibv_wc_status_str(wc.status));
	ibv_dereg_mr(mr);
	fx_pair_close(&p);
	free(buf);
}
END_TEST

/* Step 3 */

RL_TEST(cq_holds_at_least_the_entries_asked_for, .step = 3, .points = 2)
{
	struct ibv_context *ctx = fx_open();
	struct ibv_cq *cq = lab1_create_cq(ctx, 100);

	fx_need(cq, "a CQ from lab1_create_cq", 3);
	ck_assert_msg(cq->cqe >= 100, "expected cq->cqe >= 100, got %d", cq->cqe);
	ck_assert_msg(cq->context == ctx, "expected the CQ on the context given, got another");
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
	ibv_close_device(ctx);
}
END_TEST

RL_TEST(cq_deeper_than_the_device_allows_is_refused, .step = 3, .points = 1)
{
	struct ibv_context *ctx = fx_open();
	struct ibv_device_attr attr;
	struct ibv_cq *cq = lab1_create_cq(ctx, 4);

	fx_need(cq, "a CQ of 4 entries from lab1_create_cq", 3);
	ibv_destroy_cq(cq);
	ck_assert_int_eq(ibv_query_device(ctx, &attr), 0);
	cq = lab1_create_cq(ctx, attr.max_cqe + 1);
	ck_assert_msg(!cq, "expected NULL for %d entries (max_cqe is %d), got a CQ",
		      attr.max_cqe + 1, attr.max_cqe);
	ibv_close_device(ctx);
}
END_TEST

RL_TEST(cq_is_empty_when_created, .step = 3, .points = 1)
{
	struct ibv_context *ctx = fx_open();
	struct ibv_cq *cq = lab1_create_cq(ctx, 8);
	struct ibv_wc wc;
	int n;

	fx_need(cq, "a CQ from lab1_create_cq", 3);
	n = ibv_poll_cq(cq, 1, &wc);
	ck_assert_msg(n == 0, "expected ibv_poll_cq to find 0 completions, got %d", n);
	ibv_destroy_cq(cq);
	ibv_close_device(ctx);
}
END_TEST

/* Step 4 */

/* A QP made by the lab's code, and the objects it was made with. */
static struct ibv_qp *create_qp(struct ibv_pd **pd, struct ibv_cq **cq)
{
	struct ibv_context *ctx = fx_open();
	struct ibv_qp *qp;

	*pd = fx_pd(ctx);
	*cq = fx_cq(ctx);
	qp = lab1_create_qp(*pd, *cq, 8);
	fx_need(qp, "a QP from lab1_create_qp", 4);
	return qp;
}

RL_TEST(qp_is_reliable_connected_and_starts_in_reset, .step = 4, .points = 2)
{
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp = create_qp(&pd, &cq);
	enum ibv_qp_state state = fx_state(qp);

	ck_assert_msg(qp->qp_type == IBV_QPT_RC, "expected qp_type IBV_QPT_RC (%d), got %d",
		      IBV_QPT_RC, qp->qp_type);
	ck_assert_msg(state == IBV_QPS_RESET, "expected state RESET (ibv_query_qp), got %s",
		      fx_state_str(state));
}
END_TEST

RL_TEST(qp_holds_the_work_requests_asked_for_each_way, .step = 4, .points = 1)
{
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp = create_qp(&pd, &cq);
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	fx_query(qp, &attr, &init);
	ck_assert_msg(init.cap.max_send_wr >= 8 && init.cap.max_recv_wr >= 8,
		      "expected at least 8 send and 8 receive work requests (ibv_query_qp), got %u "
		      "and %u",
		      init.cap.max_send_wr, init.cap.max_recv_wr);
	ck_assert_msg(init.cap.max_send_sge >= 1 && init.cap.max_recv_sge >= 1,
		      "expected at least 1 SGE each way, got %u and %u", init.cap.max_send_sge,
		      init.cap.max_recv_sge);
}
END_TEST

RL_TEST(qp_completes_on_the_given_cq_in_the_given_pd, .step = 4, .points = 1)
{
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp = create_qp(&pd, &cq);

	ck_assert_msg(qp->send_cq == cq, "expected send_cq to be the CQ given, got another");
	ck_assert_msg(qp->recv_cq == cq, "expected recv_cq to be the CQ given, got another");
	ck_assert_msg(qp->pd == pd, "expected the QP in the PD given, got another");
}
END_TEST
