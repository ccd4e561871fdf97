/*
 * refsend.c: a minimal, blocking Lab 3 sender, used by the receiver's tests
 * as the known-good client (and, with rs_opts.misbehave, as the bad ones).
 * It waits for each step with a completion channel, so dozens of them can
 * run at once on a slow machine without spinning.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <openssl/evp.h>

#include "refsend.h"

#define RS_CQ_DEPTH 16
#define RS_QP_DEPTH 4
#define RS_NRECV 2
#define RS_MAX_PENDING 4
#define RS_WR_SEND 100
#define RS_WR_WRITE 200

/* One connection to the receiver and what it has received but not yet used. */
struct rs_conn {
	const struct rs_opts *o;
	struct rs_result *r;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *comp;
	struct ibv_cq *cq;
	struct ibv_mr *msg_mr, *file_mr;
	uint8_t *file; /* a copy of the file and one spare byte, registered */
	struct {
		uint8_t recv[RS_NRECV][RL_PROTO_MAX_MSG];
		uint8_t send[RL_PROTO_MAX_MSG + 64]; /* room for RS_OVERSIZE */
	} bufs;
	struct rl_msg pending[RS_MAX_PENDING];
	enum rl_proto_error pending_err[RS_MAX_PENDING];
	int npending;
	bool gone; /* the receiver disconnected (gone_event came) */
	enum rdma_cm_event_type gone_event;
};

/* Record how the run ended, for the test's messages; returns -1. */
static int RL_PRINTF(2, 3) rs_end(struct rs_conn *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->r->what, sizeof(c->r->what), fmt, ap);
	va_end(ap);
	return -1;
}

/* Record an ERROR message M from the receiver; returns -1. */
static int rs_got_error(struct rs_conn *c, const struct rl_msg_error *m)
{
	c->r->got_error = true;
	c->r->error_code = m->code;
	snprintf(c->r->error_text, sizeof(c->r->error_text), "%s", m->text);
	return rs_end(c, "ERROR %s: %s", rl_proto_error_name(m->code), m->text);
}

/*
 * The connection ended (WHY): if an ERROR already arrived, though nobody
 * waited for it yet (it came while a send was pending), that is the reason.
 */
static int rs_lost(struct rs_conn *c, const char *why)
{
	int i;

	for (i = 0; i < c->npending; i++) {
		if (!c->pending_err[i] && c->pending[i].type == RL_MSG_ERROR)
			return rs_got_error(c, &c->pending[i].u.error);
	}
	return rs_end(c, "connection lost: %s", why);
}

/*
 * Wait for one completion into WC, sleeping on the completion channel and
 * on the CM channel at once: a receiver that disconnects without an ERROR
 * shows up only as a DISCONNECTED event, never as a completion.
 */
static int rs_wait_completion(struct rs_conn *c, struct ibv_wc *wc)
{
	struct pollfd pfd[2] = {
		{ .fd = c->comp->fd, .events = POLLIN },
		{ .fd = c->ch->fd, .events = POLLIN },
	};
	struct rdma_cm_event *event;
	struct ibv_cq *cq;
	void *context;
	int n;

	for (;;) {
		n = ibv_poll_cq(c->cq, 1, wc);
		if (n == 0 && !rl_req_notify_cq(c->cq))
			n = ibv_poll_cq(c->cq, 1, wc);
		if (n > 0 && wc->status != IBV_WC_SUCCESS)
			return rs_lost(c, ibv_wc_status_str(wc->status));
		if (n > 0)
			return 0;
		if (n < 0)
			return rs_end(c, "ibv_poll_cq failed");
		/* What came before a disconnect (an ERROR) was in the CQ: now it is empty. */
		if (c->gone)
			return rs_lost(c, rdma_event_str(c->gone_event));
		n = poll(pfd, 2, c->o->timeout_ms);
		if (n <= 0)
			return rs_lost(c, "timed out");
		if (pfd[1].revents && !rdma_get_cm_event(c->ch, &event)) {
			c->gone = true;
			c->gone_event = event->event;
			rdma_ack_cm_event(event);
		}
		if (pfd[0].revents && !ibv_get_cq_event(c->comp, &cq, &context))
			ibv_ack_cq_events(cq, 1);
	}
}

/* Take one completion: a received message is decoded, queued and re-posted. */
static int rs_next_completion(struct rs_conn *c, struct ibv_wc *wc)
{
	int slot;

	if (rs_wait_completion(c, wc))
		return -1;
	if (!(wc->opcode & IBV_WC_RECV))
		return 0;
	slot = (int)wc->wr_id;
	if (c->npending == RS_MAX_PENDING)
		return rs_end(c, "more messages than the protocol allows");
	c->pending_err[c->npending] =
		rl_proto_decode(c->bufs.recv[slot], wc->byte_len, &c->pending[c->npending]);
	c->npending++;
	if (rl_post_recv(c->id->qp, c->msg_mr, c->bufs.recv[slot], RL_PROTO_MAX_MSG, slot))
		return rs_end(c, "could not post a receive");
	return 0;
}

/* Wait for the send or write WR_ID to complete. */
static int rs_wait_wr(struct rs_conn *c, uint64_t wr_id)
{
	struct ibv_wc wc;

	do {
		if (rs_next_completion(c, &wc))
			return -1;
	} while ((wc.opcode & IBV_WC_RECV) || wc.wr_id != wr_id);
	return 0;
}

/* Wait for the next message into MSG; an ERROR is recorded and ends the run. */
static int rs_wait_msg(struct rs_conn *c, enum rl_msg_type want, struct rl_msg *msg)
{
	enum rl_proto_error err;
	struct ibv_wc wc;

	while (!c->npending) {
		if (rs_next_completion(c, &wc))
			return -1;
	}
	*msg = c->pending[0];
	err = c->pending_err[0];
	c->npending--;
	memmove(c->pending, c->pending + 1, c->npending * sizeof(c->pending[0]));
	memmove(c->pending_err, c->pending_err + 1, c->npending * sizeof(c->pending_err[0]));
	if (err)
		return rs_end(c, "message from the receiver does not decode: %s",
			      rl_proto_error_name(err));
	if (msg->type == RL_MSG_ERROR)
		return rs_got_error(c, &msg->u.error);
	if (msg->type != want)
		return rs_end(c, "expected %s, got %s", rl_msg_type_name(want),
			      rl_msg_type_name(msg->type));
	return 0;
}

/*
 * Post OPCODE, a SEND or an RDMA WRITE with immediate data, of the LEN bytes
 * at BUF in MR (a WRITE goes to RADDR with RKEY). The protocol has no use
 * for immediate data: this is how RS_SEND_IMM and RS_WRITE_IMM misbehave.
 */
static int rs_post_imm(struct rs_conn *c, enum ibv_wr_opcode opcode, struct ibv_mr *mr,
		       const void *buf, uint32_t len, uint64_t raddr, uint32_t rkey, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf,
		.length = len,
		.lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = opcode,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(3),
		.wr.rdma = {
			.remote_addr = raddr,
			.rkey = rkey,
		},
	}, *bad;

	return ibv_post_send(c->id->qp, &wr, &bad);
}

/* Send the LEN bytes in the send buffer and wait for the send to complete. */
static int rs_send(struct rs_conn *c, int len)
{
	int ret;

	if (len < 0)
		return rs_end(c, "could not encode a message (%d)", len);
	if (c->o->misbehave == RS_SEND_IMM)
		ret = rs_post_imm(c, IBV_WR_SEND_WITH_IMM, c->msg_mr, c->bufs.send, (uint32_t)len,
				  0, 0, RS_WR_SEND);
	else
		ret = rl_post_send_msg(c->id->qp, c->msg_mr, c->bufs.send, (uint32_t)len,
				       RS_WR_SEND);
	if (ret)
		return rs_end(c, "could not post a send");
	return rs_wait_wr(c, RS_WR_SEND);
}

/* Decode the ERROR a REJECT carried in its private data. */
static void rs_note_reject(struct rs_conn *c, const struct rl_cm_event *ev)
{
	struct rl_msg_error e;
	size_t len;

	c->r->rejected = true;
	rs_end(c, "connect rejected");
	if (ev->private_len < RL_PROTO_HEADER_LEN)
		return;
	len = RL_PROTO_HEADER_LEN + ((size_t)ev->private_data[6] << 8 | ev->private_data[7]);
	if (len > ev->private_len || rl_proto_decode_error(ev->private_data, len, &e))
		return;
	c->r->got_error = true;
	c->r->error_code = e.code;
	snprintf(c->r->error_text, sizeof(c->r->error_text), "%s", e.text);
	rs_end(c, "connect rejected: ERROR %s: %s", rl_proto_error_name(e.code), e.text);
}

/* Record our own address and port, as the receiver's results log names us. */
static void rs_note_peer(struct rs_conn *c)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)rdma_get_local_addr(c->id);

	inet_ntop(AF_INET, &sin->sin_addr, c->r->peer, sizeof(c->r->peer));
	snprintf(c->r->peer + strlen(c->r->peer), sizeof(c->r->peer) - strlen(c->r->peer), ":%u",
		 ntohs(sin->sin_port));
}

/*
 * Connect and wait for ESTABLISHED into EV. The rnr_retry_count we send is
 * the one the receiver's QP uses for its replies to us (docs/protocol.md).
 */
static int rs_cm_connect(struct rs_conn *c, struct rl_cm_event *ev)
{
	struct rdma_conn_param param = {
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = c->o->rnr_forever ? 7 : RL_RNR_RETRY,
	};

	if (rdma_connect(c->id, &param))
		return rl_fail("rdma_connect", errno, "%s:%u", c->o->addr, c->o->port);
	return rl_cm_wait_event(c->ch, RDMA_CM_EVENT_ESTABLISHED, c->o->timeout_ms, ev);
}

/* Connect to the receiver with every resource the transfer needs. */
static int rs_connect(struct rs_conn *c)
{
	struct rl_cm_event ev = { 0 };
	int i, nrecv = c->o->misbehave == RS_NO_RECV ? 0 : RS_NRECV;

	c->ch = rl_cm_create_channel();
	if (!c->ch || rl_cm_resolve(c->ch, c->o->addr, c->o->port, c->o->timeout_ms, &c->id))
		return rs_end(c, "could not resolve %s:%u", c->o->addr, c->o->port);
	rs_note_peer(c);
	c->pd = rl_alloc_pd(c->id->verbs);
	c->comp = c->pd ? rl_create_comp_channel(c->id->verbs) : NULL;
	c->cq = c->comp ? rl_create_cq(c->id->verbs, RS_CQ_DEPTH, c->comp) : NULL;
	if (!c->cq || rl_cm_create_qp(c->id, c->pd, c->cq, RS_QP_DEPTH))
		return rs_end(c, "could not create verbs resources");
	c->msg_mr = rl_reg_mr(c->pd, &c->bufs, sizeof(c->bufs), IBV_ACCESS_LOCAL_WRITE);
	c->file = calloc(1, c->o->size + 1);
	if (!c->msg_mr || !c->file)
		return rs_end(c, "could not register the message buffers");
	memcpy(c->file, c->o->data, c->o->size);
	c->file_mr = rl_reg_mr(c->pd, c->file, c->o->size + 1, IBV_ACCESS_LOCAL_WRITE);
	if (!c->file_mr)
		return rs_end(c, "could not register the file");
	for (i = 0; i < nrecv; i++) {
		if (rl_post_recv(c->id->qp, c->msg_mr, c->bufs.recv[i], RL_PROTO_MAX_MSG, i))
			return rs_end(c, "could not post a receive");
	}
	if (rs_cm_connect(c, &ev)) {
		if (ev.type == RDMA_CM_EVENT_REJECTED) {
			rs_note_reject(c, &ev);
			return -1;
		}
		return rs_end(c, "connect failed: %s", rdma_event_str(ev.type));
	}
	return 0;
}

/* Free what rs_connect() made, in reverse order. */
static void rs_teardown(struct rs_conn *c)
{
	if (c->id) {
		rdma_disconnect(c->id);
		rl_cm_destroy(c->id);
	}
	if (c->file_mr)
		ibv_dereg_mr(c->file_mr);
	if (c->msg_mr)
		ibv_dereg_mr(c->msg_mr);
	free(c->file);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->comp)
		ibv_destroy_comp_channel(c->comp);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->ch)
		rdma_destroy_event_channel(c->ch);
}

/* True if the run should disconnect now, at sender step STEP. */
static bool rs_leaving(const struct rs_conn *c, int step)
{
	return c->o->misbehave == RS_LEAVE && c->o->leave_at == step;
}

/* Write SIZE into the encoded FILE_INFO at BUF: the encoder refuses sizes past the limit. */
static void rs_patch_size(uint8_t *buf, uint64_t size)
{
	struct rl_wire w;

	rl_wire_writer(&w, buf + RL_PROTO_HEADER_LEN, sizeof(size));
	rl_wire_put_u64(&w, size);
}

/* Send FILE_INFO, broken as the options say. */
static int rs_send_file_info(struct rs_conn *c)
{
	struct rl_msg_file_info fi = { .size = c->o->size };
	uint8_t *buf = c->bufs.send;
	int len;

	EVP_Digest(c->o->data, c->o->size, fi.sha256, NULL, EVP_sha256(), NULL);
	if (c->o->misbehave == RS_WRONG_HASH)
		fi.sha256[0] ^= 1;
	len = rl_proto_encode_file_info(buf, sizeof(c->bufs.send), &fi);
	if (c->o->misbehave == RS_HUGE_FILE)
		rs_patch_size(buf, RL_PROTO_MAX_FILE + 1);
	if (c->o->misbehave == RS_BAD_MAGIC)
		buf[0] ^= 0xff;
	if (c->o->misbehave == RS_BAD_VERSION)
		buf[4] = RL_PROTO_VERSION + 1;
	if (c->o->misbehave == RS_TRUNCATED)
		len--;
	return rs_send(c, len);
}

/* Write window W of the file, broken as the options say. */
static int rs_write_window(struct rs_conn *c, const struct rl_msg_window *w)
{
	uint32_t rkey = w->rkey, len = w->len;
	int ret;

	if (c->o->misbehave == RS_BAD_RKEY)
		rkey ^= 0x80;
	if (c->o->misbehave == RS_PAST_WINDOW)
		len++;
	if (c->o->misbehave == RS_WRITE_IMM)
		ret = rs_post_imm(c, IBV_WR_RDMA_WRITE_WITH_IMM, c->file_mr, c->file + w->offset,
				  len, w->addr, rkey, RS_WR_WRITE);
	else
		ret = rl_post_write(c->id->qp, c->file_mr, c->file + w->offset, len, w->addr, rkey,
				    RS_WR_WRITE);
	if (ret)
		return rs_end(c, "could not post an RDMA WRITE");
	return rs_wait_wr(c, RS_WR_WRITE);
}

/* Steps 3-4: write every window the receiver grants, then send DONE. */
static int rs_send_windows(struct rs_conn *c)
{
	struct rl_msg_window_done done;
	uint64_t written = 0;
	struct rl_msg msg;

	while (written < c->o->size) {
		if (rs_wait_msg(c, RL_MSG_WINDOW, &msg))
			return -1;
		if (msg.u.window.offset != written || msg.u.window.len > c->o->size - written)
			return rs_end(c, "window %u at %llu+%u does not follow %llu",
				      msg.u.window.index, (unsigned long long)msg.u.window.offset,
				      msg.u.window.len, (unsigned long long)written);
		if (c->o->misbehave == RS_STALL)
			return rs_wait_msg(c, RL_MSG_WINDOW, &msg) ? -1 :
								     rs_end(c, "stall answered?");
		if (c->o->misbehave == RS_DONE_EARLY)
			return rs_send(c, rl_proto_encode_done(c->bufs.send, RL_PROTO_MAX_MSG));
		if (rs_write_window(c, &msg.u.window))
			return -1;
		c->r->windows++;
		if (rs_leaving(c, 3))
			return rs_end(c, "left after writing a window");
		done = (struct rl_msg_window_done){ msg.u.window.index, msg.u.window.len };
		if (c->o->misbehave == RS_WRONG_WINDOW)
			done.index++;
		if (rs_send(c, rl_proto_encode_window_done(c->bufs.send, RL_PROTO_MAX_MSG, &done)))
			return -1;
		written += msg.u.window.len;
	}
	return rs_send(c, rl_proto_encode_done(c->bufs.send, RL_PROTO_MAX_MSG));
}

/* Send a STUDENT_ID of the N bytes at ID, encoded by hand: the encoder refuses bad IDs. */
static int rs_send_raw_id(struct rs_conn *c, const char *id, size_t n)
{
	struct rl_wire w;

	rl_wire_writer(&w, c->bufs.send, RL_PROTO_MAX_MSG);
	rl_wire_put_u32(&w, RL_PROTO_MAGIC);
	rl_wire_put_u8(&w, RL_PROTO_VERSION);
	rl_wire_put_u8(&w, RL_MSG_STUDENT_ID);
	rl_wire_put_u16(&w, (uint16_t)(1 + n));
	rl_wire_put_u8(&w, (uint8_t)n);
	rl_wire_put_bytes(&w, id, n);
	return rs_send(c, rl_wire_status(&w) ? -EMSGSIZE : (int)rl_wire_used(&w));
}

/* Send the student ID, broken as the options say. */
static int rs_send_id(struct rs_conn *c)
{
	char long_id[RL_PROTO_MAX_ID + 1];
	struct rl_msg_student_id sid;

	if (c->o->misbehave == RS_LONG_ID) {
		memset(long_id, 'x', sizeof(long_id));
		return rs_send_raw_id(c, long_id, sizeof(long_id));
	}
	if (c->o->misbehave == RS_BAD_ID)
		return rs_send_raw_id(c, "ab cd", 5);
	snprintf(sid.id, sizeof(sid.id), "%s", c->o->id);
	return rs_send(c, rl_proto_encode_student_id(c->bufs.send, RL_PROTO_MAX_MSG, &sid));
}

/*
 * STUDENT_ID right after DONE, before RESULT is read (docs/protocol.md
 * allows it): then RESULT, and the KEY after it, must come in that order.
 */
static int rs_pipelined_id(struct rs_conn *c)
{
	struct rl_msg msg;

	if (rs_send_id(c) || rs_wait_msg(c, RL_MSG_RESULT, &msg))
		return -1;
	c->r->got_result = true;
	c->r->good = msg.u.result.good;
	if (rs_wait_msg(c, RL_MSG_KEY, &msg))
		return -1;
	snprintf(c->r->key, sizeof(c->r->key), "%s", msg.u.key.key);
	rs_end(c, "got key %s", c->r->key);
	return 0;
}

/* The protocol after connecting: steps 2 to 7. */
static int rs_run(struct rs_conn *c)
{
	struct rl_msg msg;

	if (rs_leaving(c, 1))
		return rs_end(c, "left after connecting");
	if (c->o->misbehave == RS_SILENT)
		return rs_wait_msg(c, RL_MSG_WINDOW, &msg) ? -1 : rs_end(c, "silence answered?");
	if (c->o->misbehave == RS_ID_FIRST) {
		if (rs_send_id(c))
			return -1;
		return rs_wait_msg(c, RL_MSG_KEY, &msg) ? -1 : rs_end(c, "ID first got a key");
	}
	if (c->o->misbehave == RS_OVERSIZE) {
		memset(c->bufs.send, 0, sizeof(c->bufs.send));
		if (rs_send(c, 300))
			return -1;
		return rs_wait_msg(c, RL_MSG_WINDOW, &msg) ? -1 : rs_end(c, "oversize answered?");
	}
	if (rs_send_file_info(c))
		return -1;
	if (rs_leaving(c, 2))
		return rs_end(c, "left after FILE_INFO");
	if (rs_send_windows(c))
		return -1;
	if (rs_leaving(c, 4))
		return rs_end(c, "left after DONE");
	if (c->o->misbehave == RS_ID_WITH_DONE)
		return rs_pipelined_id(c);
	if (rs_wait_msg(c, RL_MSG_RESULT, &msg))
		return -1;
	c->r->got_result = true;
	c->r->good = msg.u.result.good;
	if (rs_leaving(c, 5))
		return rs_end(c, "left after RESULT");
	if (!c->r->good && c->o->misbehave != RS_WRONG_HASH)
		return rs_end(c, "RESULT bad: the receiver hashed %llu bytes",
			      (unsigned long long)msg.u.result.received);
	if (rs_send_id(c) || rs_wait_msg(c, RL_MSG_KEY, &msg))
		return -1;
	snprintf(c->r->key, sizeof(c->r->key), "%s", msg.u.key.key);
	rs_end(c, "got key %s", c->r->key);
	return 0;
}

/* Connect, send the file, ask for a key, disconnect. */
int rs_send_file(const struct rs_opts *o, struct rs_result *r)
{
	struct rs_conn *c = calloc(1, sizeof(*c));
	int ret = -1;

	memset(r, 0, sizeof(*r));
	if (!c) {
		snprintf(r->what, sizeof(r->what), "out of memory");
		return -1;
	}
	c->o = o;
	c->r = r;
	if (!rs_connect(c))
		ret = rs_run(c);
	rs_teardown(c);
	free(c);
	return ret;
}
