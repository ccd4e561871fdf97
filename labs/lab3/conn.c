/*
 * conn.c: connect to the receiver and disconnect (given, not a step). rdma_cm
 * makes the RC QP and brings it to RTS; Lab 1 taught the objects made here.
 */
#include <arpa/inet.h>
#include <string.h>

#include "lab3.h"

/* Post a receive into slot SLOT of the message buffers. */
int lab3_post_recv_slot(struct lab3_conn *c, int slot)
{
	return rl_post_recv(c->id->qp, c->msg_mr, c->bufs.recv[slot], RL_PROTO_MAX_MSG,
			    LAB3_WR_RECV + slot);
}

/* Say why the receiver refused us: a full receiver puts an ERROR in the REJECT. */
static void lab3_report_reject(const struct rl_cm_event *ev)
{
	struct rl_msg_error e;
	size_t len;

	if (ev->private_len >= RL_PROTO_HEADER_LEN) {
		/* RoCE pads private data: the header's body_len says how much is the ERROR. */
		len = RL_PROTO_HEADER_LEN +
		      ((size_t)ev->private_data[6] << 8 | ev->private_data[7]);
		if (len <= ev->private_len && !rl_proto_decode_error(ev->private_data, len, &e)) {
			rl_err("the receiver refused the connection: ERROR %s (%u): %s",
			       rl_proto_error_name(e.code), e.code, e.text);
			return;
		}
	}
	rl_err("the receiver refused the connection");
}

/* Record our own address and port, as the receiver's results log names us. */
static void lab3_note_peer(struct lab3_conn *c)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)rdma_get_local_addr(c->id);
	char ip[INET_ADDRSTRLEN] = "?";

	inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
	snprintf(c->peer, sizeof(c->peer), "%s:%u", ip, ntohs(sin->sin_port));
}

/*
 * Connect to the receiver at ADDR:PORT: resolve, create the PD, a CQ with a
 * completion channel, the QP and the registered message buffers, post the
 * receives, connect. Every later wait takes at most TIMEOUT_MS. On failure
 * everything made so far is undone.
 */
int lab3_connect(struct lab3_conn *c, const char *addr, uint16_t port, int timeout_ms)
{
	struct rl_cm_event ev = { 0 };
	int i, ret = -EIO;

	memset(c, 0, sizeof(*c));
	c->timeout_ms = timeout_ms;
	c->cm_ch = rl_cm_create_channel();
	if (!c->cm_ch)
		return -ENODEV;
	ret = rl_cm_resolve(c->cm_ch, addr, port, timeout_ms, &c->id);
	if (ret)
		goto clean;
	ret = -ENOMEM;
	c->pd = rl_alloc_pd(c->id->verbs);
	if (!c->pd)
		goto clean;
	c->comp = rl_create_comp_channel(c->id->verbs);
	if (!c->comp)
		goto clean;
	c->cq = rl_create_cq(c->id->verbs, LAB3_CQ_DEPTH, c->comp);
	if (!c->cq)
		goto clean;
	ret = rl_cm_create_qp(c->id, c->pd, c->cq, LAB3_QP_DEPTH);
	if (ret)
		goto clean;
	c->msg_mr = rl_reg_mr(c->pd, &c->bufs, sizeof(c->bufs), IBV_ACCESS_LOCAL_WRITE);
	if (!c->msg_mr)
		goto clean;
	/* Receives first: the receiver may answer as soon as we are connected. */
	for (i = 0; i < LAB3_RECV_SLOTS; i++) {
		ret = lab3_post_recv_slot(c, i);
		if (ret)
			goto clean;
	}
	ret = rl_cm_connect(c->id, NULL, 0, timeout_ms, &ev);
	if (ret) {
		if (ev.type == RDMA_CM_EVENT_REJECTED)
			lab3_report_reject(&ev);
		goto clean;
	}
	lab3_note_peer(c);
	rl_info("connected to %s:%u as %s", addr, port, c->peer);
	return 0;

clean:
	lab3_disconnect(c);
	return ret;
}

/*
 * Disconnect (the receiver logs how far we got) and free everything
 * lab3_connect() made, in reverse order. The file's MR must be gone first
 * (lab3_close_file), or the PD cannot be freed. Safe on a half-made C.
 */
void lab3_disconnect(struct lab3_conn *c)
{
	if (c->id && c->id->qp)
		rdma_disconnect(c->id);
	rl_cm_destroy(c->id);
	c->id = NULL;
	if (c->msg_mr)
		ibv_dereg_mr(c->msg_mr);
	c->msg_mr = NULL;
	if (c->cq)
		ibv_destroy_cq(c->cq);
	c->cq = NULL;
	if (c->comp)
		ibv_destroy_comp_channel(c->comp);
	c->comp = NULL;
	if (c->pd && ibv_dealloc_pd(c->pd))
		rl_err("ibv_dealloc_pd: still in use (deregister the file's MR first)");
	c->pd = NULL;
	if (c->cm_ch)
		rdma_destroy_event_channel(c->cm_ch);
	c->cm_ch = NULL;
}
