/*
 * test_fw_loopback.c: two RC QPs on one device, connected to each other
 * through the framework, move data by SEND, RDMA WRITE and RDMA READ; the
 * known traps (RNR, remote access) fail with the status the hints expect.
 */
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "rdmalab.h"

#define BUF_SIZE 4096
#define TIMEOUT_MS 5000
#define IB_PORT 1

/* One side of the loopback: its own CQ, QP and buffer. */
struct side {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
	uint32_t psn;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct side a, b;
static int gid_index;

static void side_up(struct side *s, uint32_t psn, int mr_access)
{
	s->psn = psn;
	s->cq = rl_create_cq(ctx, 16, NULL);
	ck_assert_msg(s->cq, "rl_create_cq: expected a CQ, got NULL (see stderr)");
	s->qp = rl_create_rc_qp(pd, s->cq, s->cq, 8);
	ck_assert_msg(s->qp, "rl_create_rc_qp: expected a QP, got NULL (see stderr)");
	s->buf = calloc(1, BUF_SIZE);
	ck_assert_ptr_nonnull(s->buf);
	s->mr = rl_reg_mr(pd, s->buf, BUF_SIZE, mr_access);
	ck_assert_msg(s->mr, "rl_reg_mr: expected an MR, got NULL (see stderr)");
	ck_assert_int_eq(rl_qp_to_init(s->qp, IB_PORT,
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					       IBV_ACCESS_REMOTE_READ),
			 0);
}

/* Aim FROM at TO and make it ready to send. */
static void side_connect(struct side *from, struct side *to)
{
	struct rl_qp_dest dest;

	ck_assert_int_eq(rl_qp_local_dest(to->qp, IB_PORT, gid_index, to->psn, &dest), 0);
	ck_assert_msg(rl_qp_to_rtr(from->qp, IB_PORT, gid_index, &dest) == 0,
		      "INIT -> RTR: expected 0 (see stderr)");
	ck_assert_msg(rl_qp_to_rts(from->qp, from->psn) == 0, "RTR -> RTS: expected 0");
}

static void side_down(struct side *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

/* Bring up A and B with B's buffer registered with B_ACCESS, and connect them. */
static void loopback_up(int b_access)
{
	ctx = rl_open_device(rl_test_device());
	ck_assert_msg(ctx, "rl_open_device(%s): expected a device (see stderr)", rl_test_device());
	gid_index = rl_choose_gid_index(ctx, IB_PORT, rl_test_gid_index());
	ck_assert_msg(gid_index >= 0, "rl_choose_gid_index: expected >= 0, got %d", gid_index);
	pd = rl_alloc_pd(ctx);
	ck_assert_ptr_nonnull(pd);
	side_up(&a, 0x1000, IBV_ACCESS_LOCAL_WRITE);
	side_up(&b, 0x2000, b_access);
	side_connect(&a, &b);
	side_connect(&b, &a);
}

static void setup(void)
{
	loopback_up(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
}

static void teardown(void)
{
	side_down(&a);
	side_down(&b);
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
	pd = NULL;
	ctx = NULL;
}

/* Poll S's CQ for one successful completion with WR_ID; returns its WC. */
static struct ibv_wc expect_completion(struct side *s, uint64_t wr_id, const char *step)
{
	struct ibv_wc wc;
	int ret = rl_poll_cq(s->cq, &wc, TIMEOUT_MS);

	ck_assert_msg(ret == 0, "%s: expected a successful completion, got %d (%s)", step, ret,
		      ret == -EIO ? ibv_wc_status_str(wc.status) : "see stderr");
	ck_assert_msg(wc.wr_id == wr_id, "%s: expected wr_id %llu, got %llu", step,
		      (unsigned long long)wr_id, (unsigned long long)wc.wr_id);
	return wc;
}

START_TEST(test_send_arrives_in_posted_receive)
{
	static const char msg[] = "hello over RC";
	struct ibv_wc wc;

	ck_assert_int_eq(rl_post_recv(b.qp, b.mr, b.buf, BUF_SIZE, 7), 0);
	memcpy(a.buf, msg, sizeof(msg));
	ck_assert_int_eq(rl_post_send_msg(a.qp, a.mr, a.buf, sizeof(msg), 1), 0);
	wc = expect_completion(&a, 1, "send");
	ck_assert_msg(wc.opcode == IBV_WC_SEND, "send: expected opcode SEND, got %d", wc.opcode);
	wc = expect_completion(&b, 7, "receive");
	ck_assert_msg(wc.opcode == IBV_WC_RECV, "receive: expected opcode RECV, got %d", wc.opcode);
	ck_assert_msg(wc.byte_len == sizeof(msg), "receive: expected %zu bytes, got %u",
		      sizeof(msg), wc.byte_len);
	ck_assert_msg(!memcmp(b.buf, msg, sizeof(msg)), "receive: expected '%s', got '%.*s'", msg,
		      (int)sizeof(msg), b.buf);
}
END_TEST

START_TEST(test_rdma_write_lands_in_remote_buffer)
{
	size_t i;

	for (i = 0; i < BUF_SIZE; i++)
		a.buf[i] = (char)(i * 7 + 3);
	ck_assert_int_eq(
		rl_post_write(a.qp, a.mr, a.buf, BUF_SIZE, (uintptr_t)b.buf, b.mr->rkey, 2), 0);
	expect_completion(&a, 2, "RDMA write");
	for (i = 0; i < BUF_SIZE; i++)
		ck_assert_msg(b.buf[i] == a.buf[i], "byte %zu: expected 0x%02x, got 0x%02x", i,
			      (unsigned char)a.buf[i], (unsigned char)b.buf[i]);
}
END_TEST

START_TEST(test_rdma_read_fetches_remote_buffer)
{
	size_t i;

	for (i = 0; i < BUF_SIZE; i++)
		b.buf[i] = (char)(255 - i % 251);
	ck_assert_int_eq(rl_post_read(a.qp, a.mr, a.buf, BUF_SIZE, (uintptr_t)b.buf, b.mr->rkey, 3),
			 0);
	expect_completion(&a, 3, "RDMA read");
	for (i = 0; i < BUF_SIZE; i++)
		ck_assert_msg(a.buf[i] == b.buf[i], "byte %zu: expected 0x%02x, got 0x%02x", i,
			      (unsigned char)b.buf[i], (unsigned char)a.buf[i]);
}
END_TEST

START_TEST(test_send_without_receive_fails_with_rnr)
{
	struct ibv_wc wc;
	int ret;

	ck_assert_int_eq(rl_post_send_msg(a.qp, a.mr, a.buf, 64, 4), 0);
	ret = rl_poll_cq(a.cq, &wc, TIMEOUT_MS);
	ck_assert_msg(ret == -EIO, "expected -EIO (failed completion), got %d", ret);
	ck_assert_msg(wc.status == IBV_WC_RNR_RETRY_EXC_ERR, "expected %s, got %s",
		      ibv_wc_status_str(IBV_WC_RNR_RETRY_EXC_ERR), ibv_wc_status_str(wc.status));
}
END_TEST

START_TEST(test_write_to_mr_without_remote_write_fails_with_access_error)
{
	struct ibv_wc wc;
	int ret;

	teardown();
	loopback_up(IBV_ACCESS_LOCAL_WRITE); /* B's buffer: no remote access */
	ck_assert_int_eq(rl_post_write(a.qp, a.mr, a.buf, 64, (uintptr_t)b.buf, b.mr->rkey, 5), 0);
	ret = rl_poll_cq(a.cq, &wc, TIMEOUT_MS);
	ck_assert_msg(ret == -EIO, "expected -EIO (failed completion), got %d", ret);
	ck_assert_msg(wc.status == IBV_WC_REM_ACCESS_ERR, "expected %s, got %s",
		      ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR), ibv_wc_status_str(wc.status));
}
END_TEST

START_TEST(test_poll_cq_times_out_when_nothing_was_posted)
{
	struct ibv_wc wc;
	int ret = rl_poll_cq(a.cq, &wc, 100);

	ck_assert_msg(ret == -ETIMEDOUT, "expected -ETIMEDOUT, got %d", ret);
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("framework RC loopback");
	TCase *tc = tcase_create("loopback");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_RDMA);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_send_arrives_in_posted_receive);
	tcase_add_test(tc, test_rdma_write_lands_in_remote_buffer);
	tcase_add_test(tc, test_rdma_read_fetches_remote_buffer);
	tcase_add_test(tc, test_send_without_receive_fails_with_rnr);
	tcase_add_test(tc, test_write_to_mr_without_remote_write_fails_with_access_error);
	tcase_add_test(tc, test_poll_cq_times_out_when_nothing_was_posted);
	suite_add_tcase(s, tc);
	return s;
}
