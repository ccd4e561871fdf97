/* test_msg.c: Lab 2 step 3: receives, sends, wr_id matching, re-posting, RNR. */
#include <string.h>

#include "fixture.h"
#include "lab2.h"

/* Step 3 */

RL_TEST(post_recv_puts_a_send_in_its_slot_with_its_wr_id, .step = 3, .points = 2)
{
	struct ibv_wc wc;
	struct fx_pair p;

	fx_pair_open(&p, false, 1);
	fx_ok(lab2_post_recv(&p.c, 2), "lab2_post_recv", 3);
	fx_peer_send(&p, "into slot 2", 12);
	fx_wait(p.c.cq, &wc);
	ck_assert_msg(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV,
		      "expected a successful RECV completion, got opcode %d, \"%s\"", wc.opcode,
		      ibv_wc_status_str(wc.status));
	ck_assert_msg(wc.wr_id == LAB2_WR_RECV + 2,
		      "expected wr_id %d (LAB2_WR_RECV + 2), got %llu", LAB2_WR_RECV + 2,
		      (unsigned long long)wc.wr_id);
	ck_assert_msg(strcmp((char *)p.c.bufs.recv[2], "into slot 2") == 0,
		      "expected \"into slot 2\" in c->bufs.recv[2], got \"%.12s\"",
		      p.c.bufs.recv[2]);
	fx_pair_close(&p);
}
END_TEST

RL_TEST(post_send_sends_the_send_buffer_signaled, .step = 3, .points = 1)
{
	struct ibv_wc wc;
	struct fx_pair p;

	fx_pair_open(&p, false, 1);
	fx_peer_recv(&p);
	strcpy((char *)p.c.bufs.send, "from the send buffer");
	fx_ok(lab2_post_send(&p.c, 21), "lab2_post_send", 3);
	fx_wait(p.peer_cq, &wc);
	ck_assert_msg(wc.status == IBV_WC_SUCCESS && wc.byte_len == 21 &&
			      strcmp(p.peer_buf, "from the send buffer") == 0,
		      "expected the peer to receive \"from the send buffer\" (21 bytes), got %u "
		      "bytes \"%.21s\" (%s)",
		      wc.byte_len, p.peer_buf, ibv_wc_status_str(wc.status));
	fx_wait(p.c.cq, &wc);
	ck_assert_msg(
		wc.opcode == IBV_WC_SEND && wc.wr_id == LAB2_WR_SEND,
		"expected a SEND completion with wr_id %d (signaled), got opcode %d wr_id %llu",
		LAB2_WR_SEND, wc.opcode, (unsigned long long)wc.wr_id);
	fx_pair_close(&p);
}
END_TEST

RL_TEST(recv_msg_returns_messages_in_order_and_posts_each_receive_again, .step = 3, .points = 2,
	.needs = 2)
{
	char msg[32], got[LAB2_MSG_MAX];
	struct ibv_wc wc;
	struct fx_pair p;
	int i, len;

	fx_pair_open(&p, false, 1);
	for (i = 0; i < LAB2_RECV_SLOTS; i++)
		fx_ok(rl_post_recv(p.c.qp, p.c.msg_mr, p.c.bufs.recv[i], LAB2_MSG_MAX,
				   LAB2_WR_RECV + i),
		      "the fixture's receive", 3);
	/* Three times as many messages as slots: each slot must be posted again. */
	for (i = 0; i < 3 * LAB2_RECV_SLOTS; i++) {
		len = snprintf(msg, sizeof(msg), "message %d", i) + 1;
		fx_peer_send(&p, msg, (uint32_t)len);
		fx_wait(p.peer_cq, &wc);
		ck_assert_msg(wc.status == IBV_WC_SUCCESS,
			      "message %d: expected the peer's SEND to find a receive, got \"%s\" "
			      "(did lab2_recv_msg post the receive again?)",
			      i, ibv_wc_status_str(wc.status));
		memset(got, 0, sizeof(got));
		len = lab2_recv_msg(&p.c, got, sizeof(got));
		ck_assert_msg(
			len == (int)strlen(msg) + 1 && strcmp(got, msg) == 0,
			"expected lab2_recv_msg to return \"%s\" (%zu bytes), got %d, \"%.32s\"",
			msg, strlen(msg) + 1, len, got);
	}
	fx_pair_close(&p);
}
END_TEST

RL_TEST(send_msg_keeps_a_message_that_completes_before_its_send, .step = 3, .points = 1, .needs = 2)
{
	char got[LAB2_MSG_MAX] = { 0 };
	struct ibv_wc wc;
	struct fx_pair p;
	int len;

	fx_pair_open(&p, false, 1);
	fx_ok(rl_post_recv(p.c.qp, p.c.msg_mr, p.c.bufs.recv[0], LAB2_MSG_MAX, LAB2_WR_RECV),
	      "the fixture's receive", 3);
	fx_peer_send(&p, "early", 6);
	fx_wait(p.peer_cq, &wc);
	fx_peer_recv(&p);
	/* The RECV completion is in the CQ before the SEND is even posted. */
	strcpy((char *)p.c.bufs.send, "ours");
	fx_ok(lab2_send_msg(&p.c, 5), "lab2_send_msg", 3);
	len = lab2_recv_msg(&p.c, got, sizeof(got));
	ck_assert_msg(len == 6 && strcmp(got, "early") == 0,
		      "expected the message that came during lab2_send_msg, \"early\" (6 bytes), "
		      "got %d, \"%.8s\" (match completions by wr_id)",
		      len, got);
	fx_pair_close(&p);
}
END_TEST

RL_TEST(a_send_with_no_receive_posted_fails_with_rnr_retry_exceeded, .step = 3, .points = 1)
{
	struct ibv_wc wc;
	struct fx_pair p;
	int ret;

	fx_pair_open(&p, false, 1); /* our QP resends once after an RNR NAK, then gives up */
	strcpy((char *)p.c.bufs.send, "nobody listens");
	ret = lab2_post_send(&p.c, 15);
	fx_ok(ret, "lab2_post_send", 3);
	memset(&wc, 0, sizeof(wc));
	fx_wait(p.c.cq, &wc);
	ck_assert_msg(wc.status == IBV_WC_RNR_RETRY_EXC_ERR && wc.wr_id == LAB2_WR_SEND,
		      "expected the SEND (wr_id %d) to fail with \"%s\", got wr_id %llu \"%s\"",
		      LAB2_WR_SEND, ibv_wc_status_str(IBV_WC_RNR_RETRY_EXC_ERR),
		      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	fx_pair_close(&p);
}
END_TEST

RL_TEST(send_msg_reports_the_rnr_failure_with_eio, .step = 3, .points = 1, .needs = 2)
{
	struct fx_pair p;
	int ret;

	fx_pair_open(&p, false, 1);
	ret = lab2_send_msg(&p.c, 15);
	ck_assert_msg(ret == -EIO,
		      "expected -EIO from lab2_send_msg with no receive at the peer, "
		      "got %d (%s)",
		      ret, strerror(-ret));
	fx_pair_close(&p);
}
END_TEST
