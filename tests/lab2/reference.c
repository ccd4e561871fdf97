/*
 * reference.c: the other side of Lab 2's protocol, written with the
 * framework (rl_cm_*, rl_post_*, ibv_poll_cq) and its own wire encoding, so
 * that the tests compare the student's code with something outside it. Each
 * peer runs in a thread; every wait is bounded by FX_TIMEOUT_MS.
 */
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

/* Everything one reference connection owns. */
struct ref_res {
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *send_cq, *recv_cq;
	struct ibv_mr *mr;
	uint8_t *buf; /* [0, MSG): send; [MSG, 2 MSG): receive; from 1024: RDMA */
};
#define REF_SEND 0
#define REF_RECV LAB2_MSG_MAX
#define REF_RDMA 1024
#define REF_BUF_SIZE (REF_RDMA + LAB2_RDMA_SIZE)

/* True once ref_join() has been called: nothing more is coming from the test. */
static bool ref_stopped(struct ref_peer *r)
{
	return __atomic_load_n(&r->stop, __ATOMIC_ACQUIRE);
}

/*
 * Wait for CM event WANT like rl_cm_wait_event(), in slices of 50 ms, giving
 * up at FX_TIMEOUT_MS or as soon as the test stopped us with nothing pending.
 */
static int ref_cm_wait(struct ref_peer *r, enum rdma_cm_event_type want, struct rl_cm_event *ev)
{
	struct pollfd pfd = { .fd = r->ch->fd, .events = POLLIN };
	long end = fx_now_ms() + FX_TIMEOUT_MS;

	while (poll(&pfd, 1, 50) == 0) {
		if (ref_stopped(r) || fx_now_ms() > end)
			return -ETIMEDOUT;
	}
	return rl_cm_wait_event(r->ch, want, 0, ev);
}

/* One completion of CQ into WC, with the same limits: 0, -EIO (WC says why) or -ETIMEDOUT. */
static int ref_poll(struct ref_peer *r, struct ibv_cq *cq, struct ibv_wc *wc)
{
	long end = fx_now_ms() + FX_TIMEOUT_MS, check = 0;
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0) {
		if (++check % 1024)
			continue;
		if (ref_stopped(r) || fx_now_ms() > end)
			return -ETIMEDOUT;
	}
	if (n < 0)
		return -EIO;
	return wc->status == IBV_WC_SUCCESS ? 0 : -EIO;
}

struct ref_opts ref_default(void)
{
	struct ref_opts o = { .quit_after = -1, .rnr_retry = LAB2_RNR_RETRY };

	rl_test_random_text(o.text, sizeof(o.text));
	return o;
}

/* Record why the reference stopped (the first reason only); returns -EPROTO or RET. */
static int ref_fail(struct ref_peer *r, int ret, const char *fmt, ...)
{
	va_list ap;

	if (!r->why[0]) {
		va_start(ap, fmt);
		vsnprintf(r->why, sizeof(r->why), fmt, ap);
		va_end(ap);
	}
	return ret ? ret : -EPROTO;
}

static int ref_build(struct ref_peer *r, struct ref_res *res)
{
	struct ibv_context *ctx = res->id->verbs;
	int access = IBV_ACCESS_LOCAL_WRITE;
	struct ibv_qp_init_attr init;

	if (!r->o.no_remote)
		access |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	res->pd = ibv_alloc_pd(ctx);
	res->send_cq = ibv_create_cq(ctx, LAB2_CQ_DEPTH, NULL, NULL, 0);
	res->recv_cq = ibv_create_cq(ctx, LAB2_CQ_DEPTH, NULL, NULL, 0);
	res->buf = aligned_alloc(4096, REF_BUF_SIZE);
	if (!res->pd || !res->send_cq || !res->recv_cq || !res->buf)
		return ref_fail(r, -ENOMEM, "reference: could not make its PD, CQs or buffer");
	memset(res->buf, 0, REF_BUF_SIZE);
	strcpy((char *)res->buf + REF_RDMA + LAB2_READ_OFFSET, r->o.text);
	res->mr = ibv_reg_mr(res->pd, res->buf, REF_BUF_SIZE, access);
	init = (struct ibv_qp_init_attr){
		.send_cq = res->send_cq,
		.recv_cq = res->recv_cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	if (!res->mr || rdma_create_qp(res->id, res->pd, &init))
		return ref_fail(r, -ENOMEM, "reference: could not make its MR or QP");
	if (r->o.no_recv)
		return 0;
	return rl_post_recv(res->id->qp, res->mr, res->buf + REF_RECV, LAB2_MSG_MAX, 1);
}

static void ref_free(struct ref_res *res)
{
	if (res->id && res->id->qp)
		rdma_destroy_qp(res->id);
	if (res->mr)
		ibv_dereg_mr(res->mr);
	if (res->send_cq)
		ibv_destroy_cq(res->send_cq);
	if (res->recv_cq)
		ibv_destroy_cq(res->recv_cq);
	if (res->pd)
		ibv_dealloc_pd(res->pd);
	free(res->buf);
	if (res->id)
		rdma_destroy_id(res->id);
	memset(res, 0, sizeof(*res));
}

/* The conn_param the reference connects and accepts with. */
static struct rdma_conn_param ref_param(const struct ref_peer *r)
{
	return (struct rdma_conn_param){
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = r->o.rnr_retry,
	};
}

/* Remember its own QP's rnr_retry once connected. */
static void ref_established(struct ref_peer *r, struct ref_res *res)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	if (!ibv_query_qp(res->id->qp, &attr, IBV_QP_RNR_RETRY, &init))
		r->qp_rnr_retry = attr.rnr_retry;
	r->established = true;
}

/* Send LEN bytes of the send buffer and wait for the send's completion. */
static int ref_send(struct ref_peer *r, struct ref_res *res, uint32_t len)
{
	struct ibv_wc wc;
	int ret = rl_post_send_msg(res->id->qp, res->mr, res->buf + REF_SEND, len, 2);

	if (!ret)
		ret = ref_poll(r, res->send_cq, &wc);
	if (ret)
		return ref_fail(r, ret, "reference: its SEND failed (%s)",
				ret == -EIO ? ibv_wc_status_str(wc.status) : strerror(-ret));
	return 0;
}

/* Wait for one message; its length (and the receive re-posted), or an error. */
static int ref_recv(struct ref_peer *r, struct ref_res *res)
{
	struct ibv_wc wc;
	int ret = ref_poll(r, res->recv_cq, &wc);

	if (ret)
		return ref_fail(r, ret, "reference: no message from the lab's side (%s)",
				ret == -EIO ? ibv_wc_status_str(wc.status) : strerror(-ret));
	ret = rl_post_recv(res->id->qp, res->mr, res->buf + REF_RECV, LAB2_MSG_MAX, 1);
	return ret ? ret : (int)wc.byte_len;
}

/* Put a PING or PONG into the send buffer; its length. */
static uint32_t ref_put_ping(struct ref_res *res, uint32_t type, uint32_t seq)
{
	char text[LAB2_PAYLOAD] = { 0 };
	struct rl_wire w;

	snprintf(text, sizeof(text),
		 type == LAB2_MSG_PING ? "ping %u from the client" : "pong %u from the server",
		 seq);
	rl_wire_writer(&w, res->buf + REF_SEND, LAB2_MSG_MAX);
	rl_wire_put_u32(&w, type);
	rl_wire_put_u32(&w, seq);
	rl_wire_put_bytes(&w, text, sizeof(text));
	return (uint32_t)rl_wire_used(&w);
}

/* Check the received LEN bytes are PING or PONG number SEQ with its text. */
static int ref_check_ping(struct ref_peer *r, struct ref_res *res, int len, uint32_t type,
			  uint32_t seq)
{
	uint8_t want[LAB2_MSG_MAX];
	uint32_t want_len = ref_put_ping(res, type, seq);

	memcpy(want, res->buf + REF_SEND, want_len);
	if (len != (int)want_len || memcmp(want, res->buf + REF_RECV, want_len))
		return ref_fail(
			r, -EBADMSG,
			"reference: expected %s %u \"%s\" (%u bytes), got %d bytes \"%.*s\"",
			type == LAB2_MSG_PING ? "PING" : "PONG", seq, want + 8, want_len, len,
			LAB2_PAYLOAD, (char *)res->buf + REF_RECV + 8);
	return 0;
}

/* Wait for the lab's side to disconnect (or disconnect first when it will not). */
static void ref_wait_disconnect(struct ref_peer *r)
{
	if (ref_cm_wait(r, RDMA_CM_EVENT_DISCONNECTED, NULL) == 0)
		r->disconnected = true;
}

static void *ref_server_main(void *arg)
{
	struct ref_peer *r = arg;
	struct rdma_conn_param param = ref_param(r);
	struct ref_res res = { 0 };
	struct rl_cm_event ev;
	struct rl_wire w;
	int i, len;

	r->ret = ref_cm_wait(r, RDMA_CM_EVENT_CONNECT_REQUEST, &ev);
	if (r->ret) {
		ref_fail(r, r->ret, "reference server: no connection request came");
		goto out;
	}
	res.id = ev.id;
	r->ret = ref_build(r, &res);
	if (r->ret)
		goto out;
	if (rdma_accept(res.id, &param)) {
		r->ret = ref_fail(r, -errno, "reference server: rdma_accept failed");
		goto out;
	}
	r->ret = ref_cm_wait(r, RDMA_CM_EVENT_ESTABLISHED, NULL);
	if (r->ret) {
		ref_fail(r, r->ret, "reference server: the connection was not established");
		goto out;
	}
	ref_established(r, &res);
	for (i = 0; i < LAB2_PINGS && !r->o.no_recv; i++) {
		if (i == r->o.quit_after) {
			rdma_disconnect(res.id);
			break;
		}
		len = ref_recv(r, &res);
		r->ret = len < 0 ? len : ref_check_ping(r, &res, len, LAB2_MSG_PING, i);
		if (!r->ret)
			r->ret = ref_send(r, &res, ref_put_ping(&res, LAB2_MSG_PONG, i));
		if (r->ret)
			goto out;
		r->round_trips++;
	}
	if (r->round_trips == LAB2_PINGS) {
		rl_wire_writer(&w, res.buf + REF_SEND, LAB2_MSG_MAX);
		rl_wire_put_u32(&w, LAB2_MSG_MR);
		rl_wire_put_u64(&w, (uintptr_t)res.buf + REF_RDMA);
		rl_wire_put_u32(&w, res.mr->rkey);
		rl_wire_put_u32(&w, LAB2_RDMA_SIZE);
		r->ret = ref_send(r, &res, (uint32_t)rl_wire_used(&w));
		len = r->ret ? r->ret : ref_recv(r, &res);
		if (len != LAB2_DONE_WIRE_LEN) {
			r->ret = ref_fail(r, len < 0 ? len : -EBADMSG,
					  "reference server: expected DONE (4 bytes), got %d", len);
			goto out;
		}
		memcpy(r->text, res.buf + REF_RDMA + LAB2_WRITE_OFFSET, LAB2_TEXT_MAX - 1);
	}
	ref_wait_disconnect(r);
out:
	ref_free(&res);
	return NULL;
}

void ref_server_start(struct ref_peer *r, const struct ref_opts *o)
{
	memset(r, 0, sizeof(*r));
	r->o = *o;
	r->ch = rl_cm_create_channel();
	ck_assert_msg(r->ch, "reference: no rdma_cm channel");
	ck_assert_msg(rl_cm_listen(r->ch, NULL, 0, &r->listen_id, &r->port) == 0,
		      "reference server: could not listen");
	ck_assert_int_eq(pthread_create(&r->thread, NULL, ref_server_main, r), 0);
}

/* Connect to the lab's server, retrying while it is not listening yet. */
static int ref_client_connect(struct ref_peer *r, struct ref_res *res)
{
	struct rdma_conn_param param = ref_param(r);
	long end = fx_now_ms() + FX_TIMEOUT_MS;
	int ret;

	for (;;) {
		ret = rl_cm_resolve(r->ch, r->addr, r->port, FX_TIMEOUT_MS, &res->id);
		if (!ret)
			ret = ref_build(r, res);
		if (!ret && rdma_connect(res->id, &param))
			ret = -errno;
		if (!ret)
			ret = ref_cm_wait(r, RDMA_CM_EVENT_ESTABLISHED, NULL);
		if (ret != -ECONNREFUSED && ret != -EPROTO && ret != -ECONNRESET)
			return ret;
		ref_free(res);
		if (fx_now_ms() > end || ref_stopped(r))
			return ret;
		usleep(50000);
	}
}

/* The client's RDMA WRITE or READ: its status. */
static enum ibv_wc_status ref_rdma(struct ref_peer *r, struct ref_res *res, enum ibv_wr_opcode op,
				   uint64_t addr, uint32_t rkey)
{
	uint8_t *local = res->buf + REF_RDMA + (op == IBV_WR_RDMA_READ ? LAB2_READ_OFFSET : 0);
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	int ret = op == IBV_WR_RDMA_READ ?
			  rl_post_read(res->id->qp, res->mr, local, LAB2_TEXT_MAX, addr, rkey, 3) :
			  rl_post_write(res->id->qp, res->mr, local,
					(uint32_t)strlen(r->o.text) + 1, addr, rkey, 3);

	if (!ret)
		ref_poll(r, res->send_cq, &wc);
	return wc.status;
}

static void *ref_client_main(void *arg)
{
	struct ref_peer *r = arg;
	struct ref_res res = { 0 };
	uint64_t addr;
	uint32_t rkey, mlen, type;
	struct rl_wire w;
	int i, len;

	r->ret = ref_client_connect(r, &res);
	if (r->ret) {
		ref_fail(r, r->ret, "reference client: could not connect to port %u", r->port);
		goto out;
	}
	ref_established(r, &res);
	/*
	 * Leaving at once: give the server time to see ESTABLISHED first. The
	 * RTU that completes the handshake and the DREQ are separate CM messages,
	 * and a DREQ that overtakes the RTU is only answered after a CM timeout.
	 */
	if (r->o.quit_after == 0)
		usleep(200000);
	for (i = 0; i < LAB2_PINGS; i++) {
		if (i == r->o.quit_after)
			goto bye;
		r->ret = ref_send(r, &res, ref_put_ping(&res, LAB2_MSG_PING, i));
		len = r->ret ? r->ret : ref_recv(r, &res);
		r->ret = len < 0 ? len : ref_check_ping(r, &res, len, LAB2_MSG_PONG, i);
		if (r->ret)
			goto out;
		r->round_trips++;
	}
	len = ref_recv(r, &res);
	rl_wire_reader(&w, res.buf + REF_RECV, len < 0 ? 0 : (size_t)len);
	type = rl_wire_get_u32(&w);
	addr = rl_wire_get_u64(&w);
	rkey = rl_wire_get_u32(&w);
	mlen = rl_wire_get_u32(&w);
	if (len != LAB2_MR_WIRE_LEN || type != LAB2_MSG_MR || mlen < LAB2_RDMA_SIZE) {
		r->ret =
			ref_fail(r, -EBADMSG,
				 "reference client: expected MSG_MR (20 bytes, type 3, len >= %d), "
				 "got %d bytes, type %u, len %u",
				 LAB2_RDMA_SIZE, len, type, mlen);
		goto out;
	}
	strcpy((char *)res.buf + REF_RDMA, r->o.text);
	memset(res.buf + REF_RDMA + LAB2_READ_OFFSET, 0, LAB2_TEXT_MAX);
	r->write_status = ref_rdma(r, &res, IBV_WR_RDMA_WRITE, addr + LAB2_WRITE_OFFSET, rkey);
	if (r->write_status == IBV_WC_SUCCESS)
		r->read_status = ref_rdma(r, &res, IBV_WR_RDMA_READ, addr + LAB2_READ_OFFSET, rkey);
	if (r->write_status != IBV_WC_SUCCESS || r->read_status != IBV_WC_SUCCESS) {
		r->ret = ref_fail(r, -EIO, "reference client: RDMA %s failed: %s",
				  r->write_status ? "WRITE" : "READ",
				  ibv_wc_status_str(r->write_status ? r->write_status :
								      r->read_status));
		goto bye;
	}
	memcpy(r->text, res.buf + REF_RDMA + LAB2_READ_OFFSET, LAB2_TEXT_MAX - 1);
	rl_wire_writer(&w, res.buf + REF_SEND, LAB2_MSG_MAX);
	rl_wire_put_u32(&w, LAB2_MSG_DONE);
	r->ret = ref_send(r, &res, (uint32_t)rl_wire_used(&w));
bye:
	if (rdma_disconnect(res.id) == 0 && ref_cm_wait(r, RDMA_CM_EVENT_DISCONNECTED, NULL) == 0)
		r->disconnected = true;
out:
	ref_free(&res);
	return NULL;
}

void ref_client_start(struct ref_peer *r, uint16_t port, const struct ref_opts *o)
{
	memset(r, 0, sizeof(*r));
	r->o = *o;
	r->port = port;
	r->addr = rl_test_addr();
	r->ch = rl_cm_create_channel();
	ck_assert_msg(r->ch, "reference: no rdma_cm channel");
	ck_assert_int_eq(pthread_create(&r->thread, NULL, ref_client_main, r), 0);
}

void ref_join(struct ref_peer *r)
{
	__atomic_store_n(&r->stop, true, __ATOMIC_RELEASE);
	pthread_join(r->thread, NULL);
	if (r->listen_id)
		rdma_destroy_id(r->listen_id);
	rdma_destroy_event_channel(r->ch);
	r->listen_id = NULL;
	r->ch = NULL;
}
