/*
 * test_fw_comp_channel.c: completions can be awaited by sleeping on a
 * completion channel instead of busy polling, and an idle channel times out.
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "rdmalab.h"

#define BUF_SIZE 256
#define TIMEOUT_MS 5000
#define IB_PORT 1

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_comp_channel *ch;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static char *buf;

/* One QP connected to itself: what it sends, it receives. */
static void setup(void)
{
	struct rl_qp_dest self;
	int gid_index;

	ctx = rl_open_device(rl_test_device());
	ck_assert_msg(ctx, "expected to open %s (see stderr)", rl_test_device());
	gid_index = rl_choose_gid_index(ctx, IB_PORT, rl_test_gid_index());
	pd = rl_alloc_pd(ctx);
	ch = rl_create_comp_channel(ctx);
	ck_assert_msg(pd && ch, "expected a PD and a completion channel (see stderr)");
	cq = rl_create_cq(ctx, 16, ch);
	ck_assert_ptr_nonnull(cq);
	qp = rl_create_rc_qp(pd, cq, cq, 8);
	ck_assert_ptr_nonnull(qp);
	buf = calloc(1, 2 * BUF_SIZE);
	mr = rl_reg_mr(pd, buf, 2 * BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(mr);
	ck_assert_int_eq(rl_qp_to_init(qp, IB_PORT, IBV_ACCESS_LOCAL_WRITE), 0);
	ck_assert_int_eq(rl_qp_local_dest(qp, IB_PORT, gid_index, 42, &self), 0);
	ck_assert_int_eq(rl_qp_to_rtr(qp, IB_PORT, gid_index, &self), 0);
	ck_assert_int_eq(rl_qp_to_rts(qp, 42), 0);
}

static void teardown(void)
{
	if (cq)
		rl_drain_cq(cq);
	if (qp)
		ibv_destroy_qp(qp);
	if (mr)
		ibv_dereg_mr(mr);
	if (cq)
		ibv_destroy_cq(cq);
	if (ch)
		ibv_destroy_comp_channel(ch);
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
	free(buf);
	qp = NULL, mr = NULL, cq = NULL, ch = NULL, pd = NULL, ctx = NULL, buf = NULL;
}

START_TEST(test_wait_cq_sleeps_until_send_and_receive_complete)
{
	static const char msg[] = "woken by an event";
	struct ibv_wc wc;
	int seen_send = 0, seen_recv = 0, i, ret;

	ck_assert_int_eq(rl_post_recv(qp, mr, buf + BUF_SIZE, BUF_SIZE, 2), 0);
	memcpy(buf, msg, sizeof(msg));
	ck_assert_int_eq(rl_post_send_msg(qp, mr, buf, sizeof(msg), 1), 0);
	for (i = 0; i < 2; i++) {
		ret = rl_wait_cq(ch, cq, &wc, TIMEOUT_MS);
		ck_assert_msg(ret == 0, "completion %d: expected 0, got %d (see stderr)", i + 1,
			      ret);
		seen_send += wc.wr_id == 1;
		seen_recv += wc.wr_id == 2;
	}
	ck_assert_msg(seen_send == 1 && seen_recv == 1,
		      "expected one send (wr_id 1) and one receive (wr_id 2), got %d and %d",
		      seen_send, seen_recv);
	ck_assert_msg(!strcmp(buf + BUF_SIZE, msg), "expected '%s', got '%s'", msg, buf + BUF_SIZE);
}
END_TEST

START_TEST(test_armed_cq_raises_one_event_on_its_channel)
{
	struct ibv_cq *ev_cq = NULL;
	struct ibv_wc wc;
	int ret;

	ck_assert_int_eq(rl_req_notify_cq(cq), 0);
	ck_assert_int_eq(rl_post_recv(qp, mr, buf + BUF_SIZE, BUF_SIZE, 2), 0);
	ck_assert_int_eq(rl_post_send_msg(qp, mr, buf, 8, 1), 0);
	ret = rl_get_cq_event(ch, TIMEOUT_MS, &ev_cq);
	ck_assert_msg(ret == 0, "expected an event, got %d", ret);
	ck_assert_msg(ev_cq == cq, "expected the event for our CQ %p, got %p", (void *)cq,
		      (void *)ev_cq);
	ck_assert_msg(rl_poll_cq(cq, &wc, TIMEOUT_MS) == 0,
		      "expected a completion after the event");
}
END_TEST

START_TEST(test_idle_channel_times_out)
{
	struct ibv_wc wc;
	int ret = rl_wait_cq(ch, cq, &wc, 200);

	ck_assert_msg(ret == -ETIMEDOUT, "expected -ETIMEDOUT, got %d", ret);
}
END_TEST

START_TEST(test_drain_discards_every_leftover_completion)
{
	int total = 0, tries, n;

	ck_assert_int_eq(rl_post_recv(qp, mr, buf + BUF_SIZE, BUF_SIZE, 2), 0);
	ck_assert_int_eq(rl_post_send_msg(qp, mr, buf, 8, 1), 0);
	/* Both completions land within a few milliseconds; allow 5 s. */
	for (tries = 0; tries < 500 && total < 2; tries++) {
		total += rl_drain_cq(cq);
		poll(NULL, 0, 10);
	}
	ck_assert_msg(total == 2, "expected 2 completions drained, got %d", total);
	n = rl_drain_cq(cq);
	ck_assert_msg(n == 0, "expected an empty CQ after draining, got %d more", n);
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("framework completion channel");
	TCase *tc = tcase_create("channel");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_RDMA);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_wait_cq_sleeps_until_send_and_receive_complete);
	tcase_add_test(tc, test_armed_cq_raises_one_event_on_its_channel);
	tcase_add_test(tc, test_idle_channel_times_out);
	tcase_add_test(tc, test_drain_discards_every_leftover_completion);
	suite_add_tcase(s, tc);
	return s;
}
