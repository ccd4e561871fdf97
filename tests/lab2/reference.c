/*
 * reference.c: the other side of Lab 2's protocol, written with the
 * framework (rl_cm_*, rl_post_*, ibv_poll_cq) and its own wire encoding, so
 * that the tests compare the student's code with something outside it. It
 * runs in the reference peer's process (peer.c); every wait is bounded by
 * FX_TIMEOUT_MS and ends early when the parent stops it.
 */
#include <arpa/inet.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

#define REF_BUF_SIZE (REF_RDMA + LAB2_RDMA_SIZE)

/*
 * Wait for CM event WANT like rl_cm_wait_event(), in slices of 50 ms, giving
 * up at FX_TIMEOUT_MS or as soon as the parent stopped us with nothing pending.
 */
static int ref_cm_wait(struct ref_conn *k, enum rdma_cm_event_type want, struct rl_cm_event *ev)
{
	struct pollfd pfd = { .fd = k->ch->fd, .events = POLLIN };
	long end = fx_now_ms() + FX_TIMEOUT_MS;

	while (poll(&pfd, 1, 50) == 0) {
		if (fx_stopped() || fx_now_ms() > end)
			return -ETIMEDOUT;
	}
	return rl_cm_wait_event(k->ch, want, 0, ev);
}

/*
 * One completion of CQ into WC, with the same limits: 0, -EIO (WC says why)
 * or -ETIMEDOUT. It spins a little, then naps: the act may need the CPU.
 */
static int ref_poll(struct ibv_cq *cq, struct ibv_wc *wc)
{
	long end = fx_now_ms() + FX_TIMEOUT_MS, spins = 0;
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0) {
		if (++spins < 1000)
			continue;
		if (fx_stopped() || fx_now_ms() > end)
			return -ETIMEDOUT;
		usleep(100);
	}
	if (n < 0)
		return -EIO;
	return wc->status == IBV_WC_SUCCESS ? 0 : -EIO;
}

struct ref_opts ref_default(void)
{
	return (struct ref_opts){
		.quit_after = -1,
		.rnr_retry = LAB2_RNR_RETRY,
		.secret_at = -1,
	};
}

/* Record why the reference stopped (the first reason only); returns RET, or -EPROTO. */
static int ref_fail(struct fx_report *r, int ret, const char *fmt, ...)
{
	va_list ap;

	if (!r->why[0]) {
		va_start(ap, fmt);
		vsnprintf(r->why, sizeof(r->why), fmt, ap);
		va_end(ap);
	}
	ret = ret ? ret : -EPROTO;
	if (!r->ret)
		r->ret = ret;
	return ret;
}

/*
 * Its PD, CQs, buffer (the secret at secret_at), MRs, QP and a receive, on
 * K->id's device. Two MRs: the messages' is local only, so that the act,
 * which holds the rkey of the RDMA one, cannot read a message it was sent
 * and dropped, nor one it was not sent yet.
 */
static int ref_build(struct ref_conn *k, struct fx_report *r)
{
	struct ibv_context *ctx = k->id->verbs;
	int remote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_qp_init_attr init;

	k->pd = ibv_alloc_pd(ctx);
	k->send_cq = ibv_create_cq(ctx, LAB2_CQ_DEPTH, NULL, NULL, 0);
	k->recv_cq = ibv_create_cq(ctx, LAB2_CQ_DEPTH, NULL, NULL, 0);
	k->buf = aligned_alloc(4096, REF_BUF_SIZE);
	if (!k->pd || !k->send_cq || !k->recv_cq || !k->buf)
		return ref_fail(r, -ENOMEM, "reference: could not make its PD, CQs or buffer");
	memset(k->buf, 0, REF_BUF_SIZE);
	if (k->o->secret_at >= 0)
		memcpy(k->buf + REF_RDMA + k->o->secret_at, r->secret, sizeof(r->secret));
	k->mr = ibv_reg_mr(k->pd, k->buf, REF_RDMA, IBV_ACCESS_LOCAL_WRITE);
	k->rdma_mr = ibv_reg_mr(k->pd, k->buf + REF_RDMA, LAB2_RDMA_SIZE, remote);
	init = (struct ibv_qp_init_attr){
		.send_cq = k->send_cq,
		.recv_cq = k->recv_cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	if (!k->mr || !k->rdma_mr || rdma_create_qp(k->id, k->pd, &init))
		return ref_fail(r, -ENOMEM, "reference: could not make its MRs or QP");
	if (k->o->no_recv)
		return 0;
	return rl_post_recv(k->id->qp, k->mr, k->buf + REF_RECV, LAB2_MSG_MAX, 1);
}

static void ref_free(struct ref_conn *k)
{
	if (k->id && k->id->qp)
		rdma_destroy_qp(k->id);
	if (k->rdma_mr)
		ibv_dereg_mr(k->rdma_mr);
	if (k->mr)
		ibv_dereg_mr(k->mr);
	if (k->send_cq)
		ibv_destroy_cq(k->send_cq);
	if (k->recv_cq)
		ibv_destroy_cq(k->recv_cq);
	if (k->pd)
		ibv_dealloc_pd(k->pd);
	free(k->buf);
	if (k->id)
		rdma_destroy_id(k->id);
	k->id = NULL;
	k->pd = NULL;
	k->send_cq = k->recv_cq = NULL;
	k->mr = k->rdma_mr = NULL;
	k->buf = NULL;
}

/* The conn_param the reference connects and accepts with, carrying LEN bytes of PRIV. */
static struct rdma_conn_param ref_param(const struct ref_conn *k, const void *priv, uint8_t len)
{
	return (struct rdma_conn_param){
		.private_data = priv,
		.private_data_len = len,
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = k->o->rnr_retry,
	};
}

/* Connected: its QP's number, rnr_retry and READ depths into R, its RNR timer set; stage ESTABLISHED. */
static void ref_established(struct ref_conn *k, struct fx_report *r)
{
	struct ibv_qp_attr attr = { .min_rnr_timer = k->o->min_rnr_timer };
	struct ibv_qp_init_attr init;

	if (k->o->min_rnr_timer)
		ibv_modify_qp(k->id->qp, &attr, IBV_QP_MIN_RNR_TIMER);
	if (!ibv_query_qp(k->id->qp, &attr,
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC,
			  &init)) {
		r->qp_rnr_retry = attr.rnr_retry;
		r->qp_max_rd_atomic = attr.max_rd_atomic;
		r->qp_max_dest_rd_atomic = attr.max_dest_rd_atomic;
	}
	r->qp_num = k->id->qp->qp_num;
	fx_note(r, FX_ESTABLISHED);
}

int ref_accept(struct ref_conn *k, const struct ref_opts *o, struct fx_report *r)
{
	uint8_t priv[12];
	struct rdma_conn_param param;
	struct rl_cm_event ev;
	struct rl_wire w;
	int ret;

	memset(k, 0, sizeof(*k));
	k->o = o;
	k->ch = rl_cm_create_channel();
	if (!k->ch || rl_cm_listen(k->ch, NULL, 0, &k->listen_id, &r->port))
		return ref_fail(r, -ENODEV, "reference server: could not listen");
	/* The parent reads this report before the act exists: the secret comes after it. */
	fx_note(r, FX_LISTENING);
	fx_random_text(r->secret, sizeof(r->secret));
	ret = ref_cm_wait(k, RDMA_CM_EVENT_CONNECT_REQUEST, &ev);
	if (ret)
		return ref_fail(r, ret, "reference server: no connection request came");
	k->id = ev.id;
	ret = ref_build(k, r);
	if (ret)
		return ret;
	rl_wire_writer(&w, priv, sizeof(priv));
	rl_wire_put_u64(&w, (uintptr_t)k->buf + REF_RDMA);
	rl_wire_put_u32(&w, k->rdma_mr->rkey);
	param = ref_param(k, priv, sizeof(priv));
	if (rdma_accept(k->id, &param))
		return ref_fail(r, -errno, "reference server: rdma_accept failed");
	ret = ref_cm_wait(k, RDMA_CM_EVENT_ESTABLISHED, NULL);
	if (ret)
		return ref_fail(r, ret, "reference server: the connection was not established");
	ref_established(k, r);
	return 0;
}

/* Connect to O->addr, O->port, retrying while nobody listens there yet. */
static int ref_connect(struct ref_conn *k, const struct ref_opts *o, struct fx_report *r)
{
	long end = fx_now_ms() + FX_TIMEOUT_MS;
	struct rdma_conn_param param;
	int ret;

	memset(k, 0, sizeof(*k));
	k->o = o;
	k->ch = rl_cm_create_channel();
	if (!k->ch)
		return ref_fail(r, -ENODEV, "reference client: no rdma_cm channel");
	fx_random_text(r->secret, sizeof(r->secret));
	for (;;) {
		ret = rl_cm_resolve(k->ch, o->addr, o->port, FX_TIMEOUT_MS, &k->id);
		if (!ret)
			ret = ref_build(k, r);
		param = ref_param(k, NULL, 0);
		if (!ret && rdma_connect(k->id, &param))
			ret = -errno;
		if (!ret)
			ret = ref_cm_wait(k, RDMA_CM_EVENT_ESTABLISHED, NULL);
		if (!ret)
			break;
		ref_free(k);
		if ((ret != -ECONNREFUSED && ret != -EPROTO && ret != -ECONNRESET) ||
		    fx_now_ms() > end || fx_stopped())
			return ref_fail(r, ret, "reference client: could not connect to port %u",
					o->port);
		usleep(50000);
	}
	ref_established(k, r);
	return 0;
}

int ref_send(struct ref_conn *k, struct fx_report *r, uint32_t len, const uint32_t *imm)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)k->buf + REF_SEND,
		.length = len,
		.lkey = k->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 2,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = imm ? htonl(*imm) : 0,
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	int ret = ibv_post_send(k->id->qp, &wr, &bad) ? -EIO : 0;

	if (!ret)
		ret = ref_poll(k->send_cq, &wc);
	if (ret) {
		r->send_status = wc.status;
		return ref_fail(r, ret, "reference: its SEND failed (%s)",
				ret == -EIO ? ibv_wc_status_str(wc.status) : strerror(-ret));
	}
	return 0;
}

int ref_recv(struct ref_conn *k, struct fx_report *r)
{
	struct ibv_wc wc;
	int ret = ref_poll(k->recv_cq, &wc);

	if (ret)
		return ref_fail(r, ret, "reference: no message from the lab's side (%s)",
				ret == -EIO ? ibv_wc_status_str(wc.status) : strerror(-ret));
	ret = rl_post_recv(k->id->qp, k->mr, k->buf + REF_RECV, LAB2_MSG_MAX, 1);
	return ret ? ret : (int)wc.byte_len;
}

enum ibv_wc_status ref_rdma(struct ref_conn *k, enum ibv_wr_opcode op, uint32_t at, uint32_t len,
			    uint64_t addr, uint32_t rkey)
{
	uint8_t *local = k->buf + REF_RDMA + at;
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	int ret = op == IBV_WR_RDMA_READ ?
			  rl_post_read(k->id->qp, k->rdma_mr, local, len, addr, rkey, 3) :
			  rl_post_write(k->id->qp, k->rdma_mr, local, len, addr, rkey, 3);

	if (!ret)
		ref_poll(k->send_cq, &wc);
	return wc.status;
}

enum ibv_wc_status ref_atomic_add(struct ref_conn *k, uint64_t addr, uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(k->buf + REF_RDMA),
		.length = 8,
		.lkey = k->rdma_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 4,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = addr, .compare_add = 1, .rkey = rkey },
	};
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	struct ibv_send_wr *bad;

	if (!ibv_post_send(k->id->qp, &wr, &bad))
		ref_poll(k->send_cq, &wc);
	return wc.status;
}

/* Wait for DISCONNECTED (the act's), unless it came or the parent stopped us. */
static void ref_wait_disconnect(struct ref_conn *k, struct fx_report *r)
{
	if (k->id && !r->disconnected && ref_cm_wait(k, RDMA_CM_EVENT_DISCONNECTED, NULL) == 0)
		r->disconnected = true;
}

/* Disconnect on its own: stage LEFT, at left_ms. */
static void ref_leave(struct ref_conn *k, struct fx_report *r)
{
	r->left_ms = fx_now_ms();
	rdma_disconnect(k->id);
	fx_note(r, FX_LEFT);
}

void ref_end(struct ref_conn *k, struct fx_report *r)
{
	fx_note(r, FX_DONE);
	ref_wait_disconnect(k, r);
	ref_free(k);
	if (k->listen_id)
		rdma_destroy_id(k->listen_id);
	if (k->ch)
		rdma_destroy_event_channel(k->ch);
	k->listen_id = NULL;
	k->ch = NULL;
}

/* Put PING or PONG number SEQ into the send buffer; its length. */
static uint32_t ref_put_ping(struct ref_conn *k, uint32_t type, uint32_t seq)
{
	char text[LAB2_PAYLOAD] = { 0 };
	struct rl_wire w;

	snprintf(text, sizeof(text),
		 type == LAB2_MSG_PING ? "ping %u from the client" : "pong %u from the server",
		 seq);
	rl_wire_writer(&w, k->buf + REF_SEND, LAB2_MSG_MAX);
	rl_wire_put_u32(&w, type);
	rl_wire_put_u32(&w, seq);
	rl_wire_put_bytes(&w, text, sizeof(text));
	return (uint32_t)rl_wire_used(&w);
}

/* Check the received LEN bytes are PING or PONG number SEQ with its text. */
static int ref_check_ping(struct ref_conn *k, struct fx_report *r, int len, uint32_t type,
			  uint32_t seq)
{
	uint8_t want[LAB2_MSG_MAX];
	uint32_t want_len = ref_put_ping(k, type, seq);

	memcpy(want, k->buf + REF_SEND, want_len);
	if (len != (int)want_len || memcmp(want, k->buf + REF_RECV, want_len))
		return ref_fail(
			r, -EBADMSG,
			"reference: expected %s %u \"%s\" (%u bytes), got %d bytes \"%.*s\"",
			type == LAB2_MSG_PING ? "PING" : "PONG", seq, want + 8, want_len, len,
			LAB2_PAYLOAD, (char *)k->buf + REF_RECV + 8);
	return 0;
}

/* The server's MSG_MR and the client's DONE; what the client wrote, into R->text. */
static int ref_server_rdma(struct ref_conn *k, struct fx_report *r)
{
	struct rl_wire w;
	int len, ret;

	rl_wire_writer(&w, k->buf + REF_SEND, LAB2_MSG_MAX);
	rl_wire_put_u32(&w, LAB2_MSG_MR);
	rl_wire_put_u64(&w, (uintptr_t)k->buf + REF_RDMA);
	rl_wire_put_u32(&w, k->rdma_mr->rkey);
	rl_wire_put_u32(&w, LAB2_RDMA_SIZE);
	ret = ref_send(k, r, (uint32_t)rl_wire_used(&w), NULL);
	len = ret ? ret : ref_recv(k, r);
	if (len != LAB2_DONE_WIRE_LEN)
		return ref_fail(r, len < 0 ? len : -EBADMSG,
				"reference server: expected DONE (4 bytes), got %d", len);
	memcpy(r->text, k->buf + REF_RDMA + LAB2_WRITE_OFFSET, LAB2_TEXT_MAX - 1);
	return 0;
}

/*
 * The reference server of the whole protocol: answers the pings, sends its
 * MSG_MR (its secret at LAB2_READ_OFFSET for the client to read), takes
 * DONE and keeps what the client wrote, waits for the client to disconnect.
 */
static void ref_server(const void *in, struct fx_report *r)
{
	const struct ref_opts *o = in;
	struct ref_conn k;
	int i, len, ret;

	if (ref_accept(&k, o, r))
		goto out;
	for (i = 0; i < LAB2_PINGS && !o->no_recv; i++) {
		if (i == o->quit_after) {
			ref_leave(&k, r);
			break;
		}
		len = ref_recv(&k, r);
		ret = len < 0 ? len : ref_check_ping(&k, r, len, LAB2_MSG_PING, i);
		if (!ret)
			ret = ref_send(&k, r, ref_put_ping(&k, LAB2_MSG_PONG, i), NULL);
		if (ret)
			goto out;
		r->round_trips++;
	}
	if (r->round_trips == LAB2_PINGS && ref_server_rdma(&k, r))
		goto out;
	ref_wait_disconnect(&k, r);
out:
	ref_end(&k, r);
}

uint16_t ref_server_start(const struct ref_opts *o)
{
	struct ref_opts server = *o;

	server.secret_at = LAB2_READ_OFFSET; /* where the protocol's client reads */
	fx_peer_start(ref_server, &server);
	return fx_peer_port();
}

/* The client's MSG_MR: the server's buffer, or an errno. */
static int ref_client_mr(struct ref_conn *k, struct fx_report *r, uint64_t *addr, uint32_t *rkey)
{
	int len = ref_recv(k, r);
	uint32_t type, mlen;
	struct rl_wire w;

	rl_wire_reader(&w, k->buf + REF_RECV, len < 0 ? 0 : (size_t)len);
	type = rl_wire_get_u32(&w);
	*addr = rl_wire_get_u64(&w);
	*rkey = rl_wire_get_u32(&w);
	mlen = rl_wire_get_u32(&w);
	if (len != LAB2_MR_WIRE_LEN || type != LAB2_MSG_MR || mlen < LAB2_RDMA_SIZE)
		return ref_fail(r, -EBADMSG,
				"reference client: expected MSG_MR (20 bytes, type 3, len >= %d), "
				"got %d bytes, type %u, len %u",
				LAB2_RDMA_SIZE, len, type, mlen);
	return 0;
}

/*
 * The client's RDMA: its secret written at the server's LAB2_WRITE_OFFSET,
 * the server's text read back from LAB2_READ_OFFSET into R->text, then DONE.
 */
static int ref_client_rdma(struct ref_conn *k, struct fx_report *r)
{
	uint32_t rkey, len = (uint32_t)strlen(r->secret) + 1;
	struct rl_wire w;
	uint64_t addr;
	int ret = ref_client_mr(k, r, &addr, &rkey);

	if (ret)
		return ret;
	strcpy((char *)k->buf + REF_RDMA, r->secret);
	memset(k->buf + REF_RDMA + LAB2_READ_OFFSET, 0, LAB2_TEXT_MAX);
	r->write_status = ref_rdma(k, IBV_WR_RDMA_WRITE, 0, len, addr + LAB2_WRITE_OFFSET, rkey);
	if (r->write_status == IBV_WC_SUCCESS)
		r->read_status = ref_rdma(k, IBV_WR_RDMA_READ, LAB2_READ_OFFSET, LAB2_TEXT_MAX,
					  addr + LAB2_READ_OFFSET, rkey);
	if (r->write_status != IBV_WC_SUCCESS || r->read_status != IBV_WC_SUCCESS)
		return ref_fail(r, -EIO, "reference client: RDMA %s failed: %s",
				r->write_status ? "WRITE" : "READ",
				ibv_wc_status_str(r->write_status ? r->write_status :
								    r->read_status));
	memcpy(r->text, k->buf + REF_RDMA + LAB2_READ_OFFSET, LAB2_TEXT_MAX - 1);
	rl_wire_writer(&w, k->buf + REF_SEND, LAB2_MSG_MAX);
	rl_wire_put_u32(&w, LAB2_MSG_DONE);
	return ref_send(k, r, (uint32_t)rl_wire_used(&w), NULL);
}

/*
 * The reference client of the whole protocol: pings (checking each pong),
 * writes its secret into the server's buffer, reads the server's text,
 * sends DONE and disconnects.
 */
static void ref_client(const void *in, struct fx_report *r)
{
	const struct ref_opts *o = in;
	struct ref_conn k;
	int i, len, ret;

	if (ref_connect(&k, o, r))
		goto out;
	/*
	 * Leaving at once: give the server time to see ESTABLISHED first. The
	 * RTU that completes the handshake and the DREQ are separate CM messages,
	 * and a DREQ that overtakes the RTU is only answered after a CM timeout.
	 */
	if (o->quit_after == 0)
		usleep(200000);
	for (i = 0; i < LAB2_PINGS && i != o->quit_after; i++) {
		ret = ref_send(&k, r, ref_put_ping(&k, LAB2_MSG_PING, i), NULL);
		len = ret ? ret : ref_recv(&k, r);
		ret = len < 0 ? len : ref_check_ping(&k, r, len, LAB2_MSG_PONG, i);
		if (ret)
			goto out;
		r->round_trips++;
	}
	if (i == LAB2_PINGS)
		ref_client_rdma(&k, r);
	ref_leave(&k, r);
	ref_wait_disconnect(&k, r);
out:
	ref_end(&k, r);
}

void ref_client_start(const struct ref_opts *o)
{
	fx_peer_start(ref_client, o);
}

/*
 * The reference's own versions of the lab's steps, each the work of one
 * or more of them. Only the peer runs them: a fork of the parent, made
 * before the act, it keeps its own copy of the program. So each is hidden
 * in every act (RL_HIDDEN 0, tests/harness.h), the static ones too: where
 * the compiler inlined one into a caller, the caller is hidden too.
 */
RL_HIDDEN(ref_cm_wait, 0);         /* step 1: lab2_wait_cm_event */
RL_HIDDEN(ref_accept, 0);          /* step 1: lab2_listen, _get_request, _accept */
RL_HIDDEN(ref_connect, 0);         /* step 1: lab2_resolve, _connect */
RL_HIDDEN(ref_poll, 0);            /* step 2: lab2_wait_wc */
RL_HIDDEN(ref_build, 0);           /* steps 2 to 4: CQs, MRs (lab2_reg_remote_mr), receive */
RL_HIDDEN(ref_send, 0);            /* step 3: lab2_send_msg */
RL_HIDDEN(ref_recv, 0);            /* step 3: lab2_recv_msg */
RL_HIDDEN(ref_rdma, 0);            /* step 4: lab2_post_rdma */
RL_HIDDEN(ref_atomic_add, 0);      /* step 4: an atomic, what no step does */
RL_HIDDEN(ref_server_rdma, 0);     /* step 4: lab2_describe_mr, _encode_mr */
RL_HIDDEN(ref_client_mr, 0);       /* step 4: lab2_decode_mr */
RL_HIDDEN(ref_client_rdma, 0);     /* step 4: the client's WRITE and READ */
RL_HIDDEN(ref_leave, 0);           /* step 5: lab2_disconnect */
RL_HIDDEN(ref_wait_disconnect, 0); /* step 5: lab2_wait_disconnected */
RL_HIDDEN(ref_free, 0);            /* step 5: lab2_destroy */
RL_HIDDEN(ref_end, 0);             /* step 5: lab2_wait_disconnected, _destroy */
RL_HIDDEN(ref_server, 0);          /* all: lab2_run_server */
RL_HIDDEN(ref_client, 0);          /* all: lab2_run_client */
