/* test_ud.c: Lab 4 step 3: UD QPs, address handles from GIDs, datagrams behind a GRH. */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

RL_TEST(ud_to_rts_leaves_the_qp_in_rts_with_the_qkey, .step = 3, .points = 2)
{
	struct ibv_context *ctx = fx_open_ctx();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UD,
	};
	struct ibv_qp *qp;
	struct ibv_qp_attr attr;
	int ret;

	ck_assert_msg(pd && cq, "fixture: PD and CQ");
	qp = ibv_create_qp(pd, &init);
	ck_assert_msg(qp, "fixture: UD QP");
	ret = lab4_ud_to_rts(qp, rl_test_ib_port(), 0x1234567);
	ck_assert_msg(ret == 0, "expected lab4_ud_to_rts to return 0, got %d (%s)", ret,
		      strerror(-ret));
	ck_assert_int_eq(ibv_query_qp(qp, &attr, IBV_QP_STATE | IBV_QP_QKEY | IBV_QP_PORT, &init),
			 0);
	ck_assert_msg(attr.qp_state == IBV_QPS_RTS && attr.qkey == 0x1234567,
		      "expected state RTS (%d) and Q_Key 0x1234567, got state %d and 0x%x",
		      IBV_QPS_RTS, attr.qp_state, attr.qkey);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
}
END_TEST

/* A datagram of LEN bytes from A (the lab's AH and send) to B; B's completion into WC. */
static int send_datagram(struct lab4_ud *a, struct lab4_ud *b, uint32_t len, struct ibv_wc *wc)
{
	union ibv_gid gid = fx_gid(b->ctx);
	struct lab4_ud_peer peer = { .qpn = b->qp->qp_num, .qkey = b->qkey, .gid = gid };
	uint8_t *msg = malloc(len + 1);
	int64_t deadline;
	uint32_t i;
	int ret, n;

	for (i = 0; i < len; i++)
		msg[i] = (uint8_t)(i * 7 + 1);
	peer.ah = lab4_ud_make_ah(a->pd, a->port, a->gid_index, &gid);
	ck_assert_msg(peer.ah, "expected lab4_ud_make_ah to return an AH, got NULL");
	ret = lab4_ud_send(a, &peer, msg, len, 77);
	if (ret == 0) {
		deadline = lab4_now_ms() + FX_TIMEOUT_MS;
		while ((n = ibv_poll_cq(b->cq, 1, wc)) == 0 && lab4_now_ms() < deadline)
			;
		ck_assert_msg(n == 1 && wc->status == IBV_WC_SUCCESS,
			      "expected the datagram to arrive at the peer QP within %d ms",
			      FX_TIMEOUT_MS);
		ck_assert_msg(wc->byte_len == LAB4_GRH_LEN + len,
			      "expected byte_len %u (40 GRH + %u), got %u", LAB4_GRH_LEN + len, len,
			      wc->byte_len);
		ck_assert_msg(!memcmp(lab4_ud_slot(b, (int)wc->wr_id) + LAB4_GRH_LEN, msg, len),
			      "expected the %u bytes sent after the GRH, they differ", len);
	}
	ibv_destroy_ah(peer.ah);
	free(msg);
	return ret;
}

RL_TEST(ud_ah_and_send_deliver_an_mtu_sized_datagram_to_the_peer, .step = 3, .points = 3)
{
	struct ibv_context *ctx = fx_open_ctx();
	struct lab4_ud a, b;
	struct ibv_wc wc;
	int ret;

	fx_ud_open(&a, ctx);
	fx_ud_open(&b, ctx);
	ret = send_datagram(&a, &b, a.mtu, &wc);
	ck_assert_msg(ret == 0, "expected lab4_ud_send to return 0, got %d (%s)", ret,
		      strerror(-ret));
	ret = send_datagram(&a, &b, 1, &wc);
	ck_assert_msg(ret == 0, "1 byte: expected 0, got %d (%s)", ret, strerror(-ret));
	lab4_ud_close(&a);
	lab4_ud_close(&b);
	ibv_close_device(ctx);
}
END_TEST

RL_TEST(ud_send_refuses_a_datagram_longer_than_the_mtu, .step = 3, .points = 1)
{
	struct ibv_context *ctx = fx_open_ctx();
	struct lab4_ud a, b;
	struct ibv_wc wc;
	int ret;

	fx_ud_open(&a, ctx);
	fx_ud_open(&b, ctx);
	ret = send_datagram(&a, &b, a.mtu + 1, &wc);
	ck_assert_msg(ret == -EMSGSIZE, "MTU %u + 1 bytes: expected -EMSGSIZE, got %d (%s)", a.mtu,
		      ret, strerror(-ret));
	ck_assert_msg(ibv_poll_cq(a.cq, 1, &wc) == 0, "expected nothing posted, got a completion");
	lab4_ud_close(&a);
	lab4_ud_close(&b);
	ibv_close_device(ctx);
}
END_TEST

RL_TEST(ud_payload_starts_after_the_40_byte_grh, .step = 3, .points = 1)
{
	uint8_t slot[100] = { 0 };
	const uint8_t *payload = NULL;
	uint32_t len = 0;
	int ret;

	ret = lab4_ud_payload(slot, 100, &payload, &len);
	ck_assert_msg(ret == 0 && payload == slot + 40 && len == 60,
		      "byte_len 100: expected the payload at +40, 60 bytes; got %d, +%td, %u", ret,
		      payload ? payload - slot : -1, len);
	ret = lab4_ud_payload(slot, 39, &payload, &len);
	ck_assert_msg(ret == -EPROTO, "byte_len 39: expected -EPROTO, got %d", ret);
}
END_TEST

RL_TEST(ud_ping_and_pong_echo_every_datagram, .step = 3, .points = 2)
{
	char port[16];
	const char *pong_args[] = { "ud-pong", "-p", port, "--timeout", "20", NULL };
	const char *ping_args[] = { "ud-ping",   "-p", port,           "--count", "20",
				    "--timeout", "20", rl_test_addr(), NULL };
	struct fx_run pong, ping;
	int pid;

	snprintf(port, sizeof(port), "%u", rl_test_free_port());
	pid = fx_spawn(pong_args, "pong");
	fx_reap(fx_spawn(ping_args, "ping"), "ping", 60000, &ping);
	fx_reap(pid, "pong", 10000, &pong);
	ck_assert_msg(ping.status == 0 && strstr(ping.out, "20 datagrams"),
		      "expected ud-ping to exit 0 with \"20 datagrams\", got %d:\n%s%s",
		      ping.status, ping.out, ping.err);
	ck_assert_msg(pong.status == 0, "expected ud-pong to exit 0, got %d:\n%s%s", pong.status,
		      pong.out, pong.err);
}
END_TEST
