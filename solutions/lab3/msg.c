/*
 * msg.c: send one message, wait for one message or one completion (given,
 * not a step). Every wait sleeps on the completion channel and on the CM
 * event channel at once, with a deadline: a receiver that goes away without
 * an ERROR shows up only as a CM event, never as a completion
 * (docs/protocol.md, "Transport").
 */
#include <poll.h>
#include <string.h>
#include <time.h>

#include "lab3.h"

/* Milliseconds on a clock that never jumps. */
static int64_t lab3_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Take one CM event: anything but a late ESTABLISHED means the receiver is gone. */
static void lab3_take_cm_event(struct lab3_conn *c)
{
	struct rdma_cm_event *event;

	if (rdma_get_cm_event(c->cm_ch, &event))
		return;
	rl_debug("rdma_cm: %s", rdma_event_str(event->event));
	if (event->event != RDMA_CM_EVENT_ESTABLISHED)
		c->gone = true;
	rdma_ack_cm_event(event);
}

/*
 * The connection ended (WHY). An ERROR that arrived before it, and that
 * nobody has read yet, is the better explanation: report that instead.
 */
static int lab3_lost(struct lab3_conn *c, const char *why)
{
	struct rl_msg_error *e;
	int i;

	for (i = 0; i < c->npending; i++) {
		if (c->pending[i].err || c->pending[i].msg.type != RL_MSG_ERROR)
			continue;
		e = &c->pending[i].msg.u.error;
		rl_err("the receiver sent ERROR %s (%u): %s", rl_proto_error_name(e->code), e->code,
		       e->text);
		return -ECONNABORTED;
	}
	rl_err("connection lost: %s", why);
	return -ECONNRESET;
}

/* Sleep until a completion or CM event arrives, or DEADLINE passes. */
static int lab3_sleep(struct lab3_conn *c, int64_t deadline)
{
	struct pollfd pfd[2] = {
		{ .fd = c->comp->fd, .events = POLLIN },
		{ .fd = c->cm_ch->fd, .events = POLLIN },
	};
	struct ibv_cq *cq;
	void *context;
	int64_t left = deadline - lab3_now_ms();
	int n;

	n = left > 0 ? poll(pfd, 2, (int)left) : 0;
	if (n < 0 && errno == EINTR)
		return 0;
	if (n < 0)
		return rl_fail("poll", errno, "on the completion and CM channels");
	if (n == 0) {
		rl_err("timed out: nothing from the receiver within %d ms (--timeout)",
		       c->timeout_ms);
		return -ETIMEDOUT;
	}
	if (pfd[1].revents)
		lab3_take_cm_event(c);
	if (pfd[0].revents && !ibv_get_cq_event(c->comp, &cq, &context))
		ibv_ack_cq_events(cq, 1);
	return 0;
}

/* Wait for any one completion into WC, until DEADLINE. */
static int lab3_next_wc(struct lab3_conn *c, struct ibv_wc *wc, int64_t deadline)
{
	int n, ret;

	for (;;) {
		n = ibv_poll_cq(c->cq, 1, wc);
		if (n == 0) {
			/* Arm, then poll again: a completion may have landed in between. */
			ret = rl_req_notify_cq(c->cq);
			if (ret)
				return ret;
			n = ibv_poll_cq(c->cq, 1, wc);
		}
		if (n < 0)
			return rl_fail("ibv_poll_cq", EIO, "on the connection's CQ");
		if (n > 0)
			return 0;
		/* The CQ is empty: whatever arrived before the disconnect was read. */
		if (c->gone)
			return lab3_lost(c, "the receiver disconnected");
		ret = lab3_sleep(c, deadline);
		if (ret)
			return ret;
	}
}

/* Decode the message in receive slot SLOT, queue it, and post the receive again. */
static int lab3_keep_message(struct lab3_conn *c, int slot, uint32_t len)
{
	struct lab3_pending *p;

	if (c->npending == (int)(sizeof(c->pending) / sizeof(c->pending[0]))) {
		rl_err("the receiver sent more messages than the protocol allows");
		return -EPROTO;
	}
	p = &c->pending[c->npending++];
	p->err = rl_proto_decode(c->bufs.recv[slot], len, &p->msg);
	rl_debug("received %s (%u bytes)",
		 p->err ? "undecodable bytes" : rl_msg_type_name(p->msg.type), len);
	return lab3_post_recv_slot(c, slot);
}

/*
 * Take the next completion into WC, until DEADLINE. A received message is
 * decoded, queued for lab3_wait_msg() and its receive posted again; a
 * failed receive means the connection is over.
 */
static int lab3_take_completion(struct lab3_conn *c, struct ibv_wc *wc, int64_t deadline)
{
	int ret = lab3_next_wc(c, wc, deadline);

	if (ret || wc->wr_id < LAB3_WR_RECV)
		return ret;
	if (wc->status != IBV_WC_SUCCESS)
		return lab3_lost(c, ibv_wc_status_str(wc->status));
	return lab3_keep_message(c, (int)(wc->wr_id - LAB3_WR_RECV), wc->byte_len);
}

/*
 * Wait for the next completion of a send or an RDMA WRITE into WC. Received
 * messages are queued for lab3_wait_msg() on the way. Returns 0 for a
 * completion that succeeded; -EIO after one line naming the failed
 * completion's status (WC says which); -ECONNRESET, -ECONNABORTED (an
 * ERROR came) or -ETIMEDOUT when the connection ended or went silent.
 */
int lab3_wait_completion(struct lab3_conn *c, struct ibv_wc *wc)
{
	int64_t deadline = lab3_now_ms() + c->timeout_ms;
	int ret;

	do {
		ret = lab3_take_completion(c, wc, deadline);
		if (ret)
			return ret;
	} while (wc->wr_id >= LAB3_WR_RECV);
	if (wc->status != IBV_WC_SUCCESS)
		return rl_fail_wc(wc->wr_id == LAB3_WR_WRITE ? "RDMA WRITE" : "SEND", wc);
	return 0;
}

/* Encode M, send it, and wait until the send completed. */
int lab3_send_msg(struct lab3_conn *c, const struct rl_msg *m)
{
	struct ibv_wc wc;
	int len, ret;

	len = rl_proto_encode(c->bufs.send, sizeof(c->bufs.send), m);
	if (len < 0) {
		rl_err("could not encode %s: %s", rl_msg_type_name(m->type), strerror(-len));
		return len;
	}
	rl_debug("sending %s (%d bytes)", rl_msg_type_name(m->type), len);
	ret = rl_post_send_msg(c->id->qp, c->msg_mr, c->bufs.send, (uint32_t)len, LAB3_WR_SEND);
	if (ret)
		return ret;
	do {
		ret = lab3_wait_completion(c, &wc);
		if (ret)
			return ret;
	} while (wc.wr_id != LAB3_WR_SEND);
	return 0;
}

/*
 * Wait for the next message from the receiver into M and require type WANT.
 * An ERROR is printed with its code and text (-ECONNABORTED); bytes that do
 * not decode or another type are -EPROTO; plus lab3_wait_completion()'s errors.
 */
int lab3_wait_msg(struct lab3_conn *c, enum rl_msg_type want, struct rl_msg *m)
{
	int64_t deadline = lab3_now_ms() + c->timeout_ms;
	struct lab3_pending p;
	struct ibv_wc wc;
	int ret;

	while (c->npending == 0) {
		ret = lab3_take_completion(c, &wc, deadline);
		if (ret)
			return ret;
		/* Nothing else is outstanding now; a failed send or write still ends it. */
		if (wc.wr_id < LAB3_WR_RECV && wc.status != IBV_WC_SUCCESS)
			return rl_fail_wc(wc.wr_id == LAB3_WR_WRITE ? "RDMA WRITE" : "SEND", &wc);
	}
	p = c->pending[0];
	c->npending--;
	memmove(c->pending, c->pending + 1, c->npending * sizeof(c->pending[0]));
	if (p.err) {
		rl_err("the receiver sent a message that does not decode: %s",
		       rl_proto_error_name(p.err));
		return -EPROTO;
	}
	*m = p.msg;
	if (m->type == RL_MSG_ERROR) {
		rl_err("the receiver sent ERROR %s (%u): %s", rl_proto_error_name(m->u.error.code),
		       m->u.error.code, m->u.error.text);
		return -ECONNABORTED;
	}
	if (m->type != want) {
		rl_err("expected %s from the receiver, got %s", rl_msg_type_name(want),
		       rl_msg_type_name(m->type));
		return -EPROTO;
	}
	return 0;
}
