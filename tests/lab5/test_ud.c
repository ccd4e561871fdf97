/*
 * test_ud.c: Lab 5 step 1: a UD endpoint over rdma_cm. The lab's
 * lab5_ud_connect() meets the test's reference peer, a UD server in a
 * process of the test's own whose QP number (made after its fork, not on
 * the id) only its reply can tell; a datagram the test then sends
 * through the lab's AH, to the QP number and Q_Key the lab took, must reach
 * that peer, which reports it. The kernel describes the lab's id and QP
 * while the act holds.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "ud_fixture.h"

/* The inputs: where the peer listens, and the datagram the test sends through the lab's AH. */
struct conn_in {
	uint16_t port;
	uint32_t seed, len, seq;
};

static void conn_setup(struct rl_case *c)
{
	struct conn_in *in = c->in;
	const struct ud_peer_in peer = { .take = 1 };

	in->seed = ud_random();
	in->len = ud_between(1, 1000);
	in->seq = ud_random();
	in->port = ud_peer_start(&peer);
}

/*
 * The lab's connect; then, with plain verbs on the lab's QP and a buffer of
 * the test's own, a receive of 3 SGEs and a send of 2 (the header and the
 * payload) to where the lab aimed its sends; then the act holds.
 */
static void conn_act(struct rl_case *c)
{
	const struct conn_in *in = c->in;
	struct lab5_ud u = { .timeout_ms = UD_TIMEOUT_MS };
	struct lab5_hdr h = { .kind = LAB5_MSG_DATA, .seq = in->seq, .len = in->len };
	uint8_t *buf = calloc(1, 3 * LAB5_MAX_PAYLOAD);
	struct ibv_mr *mr = NULL;
	struct ibv_send_wr *bad_send;
	struct ibv_recv_wr *bad_recv;
	struct ibv_wc wc;
	int ret;

	ck_assert_ptr_nonnull(buf);
	ret = lab5_ud_connect(&u, rl_test_addr(), in->port);
	rl_say_int("lab5_ud_connect", ret);
	rl_say_int("remote_qpn", u.remote_qpn);
	rl_say_int("remote_qkey", u.remote_qkey);
	rl_say_int("mtu", u.mtu);
	rl_say_int("qpn", u.qp ? (long long)u.qp->qp_num : -1);
	rl_say_int("ah", u.ah != NULL);
	if (ret == 0 && u.qp && u.pd && u.ah) {
		mr = ibv_reg_mr(u.pd, buf, 3 * LAB5_MAX_PAYLOAD, IBV_ACCESS_LOCAL_WRITE);
		ck_assert_msg(mr, "fixture: an MR on the lab's PD: %s", strerror(errno));
		struct ibv_sge rsge[3] = {
			{ (uintptr_t)buf, LAB5_GRH_LEN, mr->lkey },
			{ (uintptr_t)buf + 64, LAB5_HDR_LEN, mr->lkey },
			{ (uintptr_t)buf + 128, 1024, mr->lkey },
		};
		struct ibv_sge ssge[2] = {
			{ (uintptr_t)buf + LAB5_MAX_PAYLOAD, LAB5_HDR_LEN, mr->lkey },
			{ (uintptr_t)buf + 2 * LAB5_MAX_PAYLOAD, in->len, mr->lkey },
		};
		struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = rsge, .num_sge = 3 };
		struct ibv_send_wr swr = { .wr_id = 2,
					   .sg_list = ssge,
					   .num_sge = 2,
					   .opcode = IBV_WR_SEND,
					   .send_flags = IBV_SEND_SIGNALED,
					   .wr.ud = { .ah = u.ah,
						      .remote_qpn = u.remote_qpn,
						      .remote_qkey = u.remote_qkey } };

		lab5_hdr_encode(&h, buf + LAB5_MAX_PAYLOAD);
		ud_fill(buf + 2 * LAB5_MAX_PAYLOAD, in->len, in->seed);
		rl_say_int("recv3", ibv_post_recv(u.qp, &rwr, &bad_recv));
		ret = ibv_post_send(u.qp, &swr, &bad_send);
		rl_say_int("send2", ret);
		rl_say_int("status", ret == 0 && ud_fx_poll(&u, &wc) ? (long long)wc.status : -1);
	}
	rl_hold();
	lab5_ud_close(&u);
	if (mr)
		ibv_dereg_mr(mr);
	free(buf);
}

/* The lab's connect returned 0; else the test fails with a hint for what it returned. */
static bool connected(struct rl_case *c)
{
	long long ret = rl_said_int(c, "lab5_ud_connect");

	return rl_expect(
		c, ret == 0, "expected lab5_ud_connect to return 0, got %lld (%s)%s", ret,
		strerror((int)-ret),
		ret == -EINVAL ?
			": is the id in the port space of datagrams, and the QP of the type "
			"that goes with it? (see docs/lab5.md#step-1)" :
		ret == -ECONNREFUSED || ret == -EPROTO ?
			": the server answers a UD id's request only (see docs/lab5.md#step-1)" :
			" (see docs/lab5.md#step-1)");
}

/* The member KEY of R as a string, "" when it has none. */
static const char *member(const struct rl_res *r, const char *key)
{
	const char *v = rl_res_get(r, key);

	return v ? v : "";
}

/* The act's QP QPN is a UD QP in RTS, as the kernel shows it while the act holds. */
static bool qp_in_rts(struct rl_case *c, long long qpn)
{
	struct rl_res res[8];
	int n = ud_act_res(c, "qp", res, 8), i, found = -1;

	for (i = 0; i < n && found < 0; i++)
		if (strtoll(member(&res[i], "lqpn"), NULL, 10) == qpn)
			found = i;
	if (n < 0 ||
	    !rl_expect(c, found >= 0,
		       "expected the kernel to list your QP %lld, it lists %d QPs of the act", qpn,
		       n))
		return false;
	return rl_expect(
		c,
		strcmp(member(&res[found], "type"), "UD") == 0 &&
			strcmp(member(&res[found], "state"), "RTS") == 0,
		"expected your QP %lld to be a UD QP in RTS, as rdma_create_qp() leaves one "
		"it made on the id, the kernel shows a %s QP in %s: see docs/lab5.md#step-1",
		qpn, member(&res[found], "type"), member(&res[found], "state"));
}

/* The test's own 2-SGE datagram went out of the lab's QP (else the QP's caps are at fault). */
static bool test_send_left(struct rl_case *c)
{
	long long send2 = rl_said_int(c, "send2"), status = rl_said_int(c, "status");

	if (!rl_expect(c, send2 == 0,
		       "expected the lab's QP to take a send of %d SGEs (header and payload), "
		       "ibv_post_send said %s: the QP's capabilities (see docs/lab5.md#step-1)",
		       LAB5_SEND_SGES, strerror((int)send2)))
		return false;
	return rl_expect(c, status == IBV_WC_SUCCESS,
			 "expected the test's send from the lab's QP to complete well, got %s",
			 status < 0 ? "no completion" :
				      ibv_wc_status_str((enum ibv_wc_status)status));
}

static void conn_reply_judge(struct rl_case *c)
{
	const struct conn_in *in = c->in;
	uint32_t qpn = (uint32_t)rl_said_int(c, "qpn");
	uint32_t rqpn = (uint32_t)rl_said_int(c, "remote_qpn");
	uint32_t rqkey = (uint32_t)rl_said_int(c, "remote_qkey");
	const struct ud_report *rep;
	const struct ud_seen *s;
	uint8_t *want, sha[32];

	if (!connected(c) || !(rep = ud_peer_accepted(c)))
		return;
	if (!rl_expect(c, rqpn == rep->qpn,
		       "expected u->remote_qpn to be the server's QP number, %u, which its reply "
		       "carries, got %u%s: see docs/lab5.md#step-1",
		       rep->qpn, rqpn, rqpn == qpn ? " (your own QP's)" : "") ||
	    !rl_expect(c, rqkey == rep->qkey,
		       "expected u->remote_qkey to be the Q_Key the server's reply carries, 0x%x, "
		       "got 0x%x: see docs/lab5.md#step-1",
		       rep->qkey, rqkey) ||
	    !rl_expect(c, rl_said_int(c, "ah") != 0,
		       "expected u->ah, an address handle to the server, got NULL: see "
		       "docs/lab5.md#step-1") ||
	    !qp_in_rts(c, qpn) || !test_send_left(c) || !(rep = ud_peer_end(c)))
		return;
	if (!rl_expect(c, rep->nseen == 1,
		       "expected the server to get the datagram the test sent through your AH, to "
		       "your QPN and Q_Key, got %u datagrams: UD drops a datagram whose QPN, Q_Key "
		       "or address is wrong without a word (see docs/lab5.md#step-1)",
		       rep->nseen))
		return;
	s = &rep->seen[0];
	want = malloc(in->len + 1);
	ck_assert_ptr_nonnull(want);
	ud_fill(want, in->len, in->seed);
	ud_sha256(want, in->len, sha);
	free(want);
	rl_expect(c,
		  s->status == IBV_WC_SUCCESS && s->src_qp == qpn &&
			  s->byte_len == LAB5_GRH_LEN + LAB5_HDR_LEN + in->len &&
			  s->hdr.seq == in->seq && s->hdr.len == in->len &&
			  memcmp(s->sha256, sha, 32) == 0,
		  "expected the server to get the test's datagram from QP %u, %u bytes (40 GRH + "
		  "12 + %u), got %u bytes from QP %u (a fault in the test)",
		  qpn, LAB5_GRH_LEN + LAB5_HDR_LEN + in->len, in->len, s->byte_len, s->src_qp);
}

static void conn_reply_check(struct rl_case *c)
{
	conn_reply_judge(c);
	ud_peer_stop();
}

RL_GRADED(ud_connect_aims_at_the_qpn_and_qkey_of_the_servers_reply, .step = 1, .points = 5,
	  .setup = conn_setup, .act = conn_act, .check = conn_reply_check);

static void conn_kinds_judge(struct rl_case *c)
{
	const struct conn_in *in = c->in;
	long long qpn = rl_said_int(c, "qpn"), recv3;
	struct rl_res res[8];
	char want_dst[64];
	int n, i, found = -1;

	if (!connected(c))
		return;
	n = ud_act_res(c, "cm_id", res, 8);
	if (n < 0)
		return;
	snprintf(want_dst, sizeof(want_dst), "%s:%u", rl_test_addr(), in->port);
	for (i = 0; i < n && found < 0; i++)
		if (strcmp(member(&res[i], "dst-addr"), want_dst) == 0)
			found = i;
	if (!rl_expect(c, found >= 0,
		       "expected the kernel to list an rdma_cm id of the act's to %s, it lists %d "
		       "ids (%s%s)",
		       want_dst, n, n ? member(&res[0], "ps") : "", n ? " port space" : "") ||
	    !rl_expect(c, strcmp(member(&res[found], "ps"), "UDP") == 0,
		       "expected the id to %s in the UDP port space, the kernel says %s: see "
		       "docs/lab5.md#step-1",
		       want_dst, member(&res[found], "ps")))
		return;
	if (!qp_in_rts(c, qpn))
		return;
	recv3 = rl_said(c, "recv3") ? rl_said_int(c, "recv3") : -1;
	if (!rl_expect(c, recv3 == 0,
		       "expected the lab's QP to take a receive of %d SGEs (GRH, header, payload), "
		       "ibv_post_recv said %s: the QP's capabilities (see docs/lab5.md#step-1)",
		       LAB5_RECV_SGES, recv3 < 0 ? "nothing" : strerror((int)recv3)) ||
	    !test_send_left(c))
		return;
	rl_expect(c, rl_said_int(c, "mtu") == ud_port_mtu(),
		  "expected u->mtu to be the port's active MTU, %u bytes, got %lld", ud_port_mtu(),
		  rl_said_int(c, "mtu"));
}

static void conn_kinds_check(struct rl_case *c)
{
	conn_kinds_judge(c);
	ud_peer_stop();
}

RL_GRADED(ud_connect_makes_a_ud_qp_on_a_udp_id_that_gathers_2_and_scatters_3, .step = 1,
	  .points = 5, .setup = conn_setup, .act = conn_act, .check = conn_kinds_check);

/* --- the server's side ------------------------------------------------------ */

/* The input: where the act listens (the peer, a client, connects there). */
struct serve_in {
	uint16_t port;
};

static void serve_setup(struct rl_case *c)
{
	struct serve_in *in = c->in;
	struct ud_peer_in peer = { 0 };

	in->port = rl_test_free_port();
	peer.client_of = in->port;
	ud_peer_start(&peer);
}

/*
 * A UD server as ud-serve is one, with plain rdma_cm around the lab's
 * lab5_ud_create_qp() on the client's request's id: the test posts every
 * receive, accepts (naming no QP: the id's is the one), and takes the
 * client's datagram; then the act holds.
 */
static void serve_act(struct rl_case *c)
{
	const struct serve_in *in = c->in;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(in->port) };
	struct lab5_ud u = { .timeout_ms = UD_TIMEOUT_MS };
	struct rdma_conn_param param = { 0 };
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen = NULL;
	struct rdma_cm_event ev;
	struct ibv_wc wc;
	int ret, slot;

	ck_assert_int_eq(inet_pton(AF_INET, rl_test_addr(), &sin.sin_addr), 1);
	ch = rdma_create_event_channel();
	ck_assert_msg(ch && rdma_create_id(ch, &listen, NULL, RDMA_PS_UDP) == 0 &&
			      rdma_bind_addr(listen, (struct sockaddr *)&sin) == 0 &&
			      rdma_listen(listen, 1) == 0,
		      "fixture: listening in RDMA_PS_UDP on port %u: %s", in->port,
		      strerror(errno));
	ck_assert_int_eq(lab5_wait_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST, &ev, 3 * UD_TIMEOUT_MS),
			 0);
	u.id = ev.id;
	ret = lab5_ud_create_qp(&u);
	rl_say_int("lab5_ud_create_qp", ret);
	rl_say_int("qpn", u.qp ? (long long)u.qp->qp_num : -1);
	rl_say_int("buffers", u.mr && u.buf);
	if (ret == 0 && u.qp && u.mr && u.buf) {
		for (slot = 0, ret = 0; slot < LAB5_SLOTS && !ret; slot++)
			ret = ud_fx_post_recv(&u, slot);
		rl_say_int("post", ret);
		rl_say_int("accept", ret ? -1 : rdma_accept(u.id, &param) ? errno : 0);
		if (ret == 0 && ud_fx_poll(&u, &wc)) {
			rl_say_int("status", wc.status);
			rl_say_int("byte_len", wc.byte_len);
			if (wc.status == IBV_WC_SUCCESS && wc.wr_id < LAB5_SLOTS &&
			    wc.byte_len >= LAB5_GRH_LEN + LAB5_HDR_LEN) {
				rl_say_bytes("hdr", u.rx_hdr + wc.wr_id * LAB5_HDR_LEN,
					     LAB5_HDR_LEN);
				rl_say_bytes("payload", u.rx_payload + wc.wr_id * LAB5_MAX_PAYLOAD,
					     wc.byte_len - LAB5_GRH_LEN - LAB5_HDR_LEN);
			}
		}
	}
	rl_hold();
	lab5_ud_close(&u);
	rdma_destroy_id(listen);
	rdma_destroy_event_channel(ch);
}

static void serve_judge(struct rl_case *c)
{
	long long ret = rl_said_int(c, "lab5_ud_create_qp"), qpn = rl_said_int(c, "qpn"), post,
		  accept, status;
	const struct ud_report *rep;
	const void *hdr = NULL, *payload = NULL;
	uint8_t want_hdr[LAB5_HDR_LEN], sha[32] = { 0 };
	size_t nhdr = 0, npayload = 0;

	if (!rl_expect(c, ret == 0,
		       "on a client's request's id: expected lab5_ud_create_qp to return 0, got "
		       "%lld (%s): see docs/lab5.md#step-1",
		       ret, strerror((int)-ret)) ||
	    !rl_expect(c, rl_said_int(c, "buffers") != 0,
		       "expected u->mr and u->buf made (lab5_ud_buffers, given), got none"))
		return;
	if (!qp_in_rts(c, qpn))
		return;
	post = rl_said_int(c, "post");
	accept = rl_said(c, "accept") ? rl_said_int(c, "accept") : -1;
	if (!rl_expect(c, post == 0,
		       "expected the test's receives of 3 SGEs to be taken by your QP, "
		       "ibv_post_recv said %s: the QP's capabilities (see docs/lab5.md#step-1)",
		       strerror((int)-post)) ||
	    !rl_expect(c, accept == 0, "expected rdma_accept on your id to succeed, got %s",
		       strerror((int)accept)) ||
	    !(rep = ud_peer_end(c)))
		return;
	if (!rl_expect(c, rep->act_qpn == (uint32_t)qpn,
		       "expected the reply to the client to carry your QP's number, %lld, it "
		       "carried %u: rdma_accept() names the QP made on the id (see "
		       "docs/lab5.md#step-1)",
		       qpn, rep->act_qpn))
		return;
	status = rl_said(c, "status") ? rl_said_int(c, "status") : -1;
	if (rl_said(c, "hdr"))
		hdr = rl_said_bytes(c, "hdr", &nhdr);
	if (rl_said(c, "payload"))
		payload = rl_said_bytes(c, "payload", &npayload);
	lab5_hdr_encode(&rep->sent[0], want_hdr);
	if (npayload)
		ud_sha256(payload, (uint32_t)npayload, sha);
	if (!rl_expect(c,
		       status == IBV_WC_SUCCESS && nhdr == LAB5_HDR_LEN &&
			       memcmp(hdr, want_hdr, LAB5_HDR_LEN) == 0 &&
			       npayload == rep->sent[0].len &&
			       memcmp(sha, rep->sent_sha256[0], 32) == 0,
		       "expected the client's datagram (12 + %u bytes) to reach your QP, got %s: is "
		       "the QP in RTS, with rdma_cm's Q_Key? (see docs/lab5.md#step-1)",
		       rep->sent[0].len,
		       status < 0               ? "nothing" :
		       status != IBV_WC_SUCCESS ? ibv_wc_status_str((enum ibv_wc_status)status) :
						  "other bytes"))
		return;
}

static void serve_check(struct rl_case *c)
{
	serve_judge(c);
	ud_peer_stop();
}

RL_GRADED(ud_create_qp_on_a_requests_id_serves_a_client, .step = 1, .points = 4,
	  .setup = serve_setup, .act = serve_act, .check = serve_check);
