/*
 * server.c: Lab 5 step 5: many RC clients served by one thread. Their QPs
 * take their receives from one SRQ (step 4) and complete on one CQ; the
 * thread waits with poll(2) on the three descriptors that can wake it:
 * the CM channel (clients come and go), the completion channel (messages)
 * and the device's async events (the SRQ runs low) (docs/lab5.md#step-5).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "lab5.h"

#define SERVER_CQ_DEPTH (LAB5_SRQ_DEPTH * 2) /* every receive the SRQ holds can complete at once */

/* The descriptor FD made non-blocking: poll(2) says when, a read never waits. */
static int set_nonblocking(int fd, const char *what)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return rl_fail("fcntl", errno, "O_NONBLOCK on the %s", what);
	return 0;
}

/*
 * S listening on PORT (any address) for EXPECTED clients, with what every
 * client shares: the PD, the completion channel and the CQ on the
 * listener's device, and the SRQ (step 4). Returns 0 or a negative errno
 * (S may be half made: lab5_server_close() releases it).
 */
int lab5_server_open(struct lab5_server *s, uint16_t port, uint32_t expected)
{
	struct sockaddr_in any = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	const char *name = getenv("RDMALAB_DEVICE");
	struct ibv_context **devs;
	int n = 0, ret;

	memset(s, 0, sizeof(*s));
	s->expected = expected;
	s->timeout_ms = LAB5_TIMEOUT_MS;
	if (expected == 0 || expected > LAB5_MAX_CLIENTS) {
		rl_err("lab5: %u clients: give 1 to %d", expected, LAB5_MAX_CLIENTS);
		return -EINVAL;
	}
	s->ch = rdma_create_event_channel();
	if (!s->ch)
		return rl_fail("rdma_create_event_channel", errno, "for the server");
	if (rdma_create_id(s->ch, &s->listen, s, RDMA_PS_TCP))
		return rl_fail("rdma_create_id", errno, "for the listener");
	if (rdma_bind_addr(s->listen, (struct sockaddr *)&any))
		return rl_fail("rdma_bind_addr", errno, "port %u", port);
	if (rdma_listen(s->listen, LAB5_MAX_CLIENTS))
		return rl_fail("rdma_listen", errno, "port %u", port);
	/*
	 * Bound to any address, the listener has no device yet: one of rdma_cm's
	 * own contexts (the clients' ids come on these), RDMALAB_DEVICE's or the first.
	 */
	if (name && !*name)
		name = NULL;
	devs = rdma_get_devices(&n);
	for (int i = 0; devs && i < n && !s->ctx; i++)
		if (!name || !strcmp(name, ibv_get_device_name(devs[i]->device)))
			s->ctx = devs[i];
	rdma_free_devices(devs);
	if (!s->ctx) {
		rl_err("lab5: no RDMA device%s%s (make doctor)", name ? " named " : "",
		       name ? name : "");
		return -ENODEV;
	}
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		return rl_fail("ibv_alloc_pd", errno, "on %s", ibv_get_device_name(s->ctx->device));
	s->comp = ibv_create_comp_channel(s->ctx);
	if (!s->comp)
		return rl_fail("ibv_create_comp_channel", errno, "for the server's CQ");
	s->cq = ibv_create_cq(s->ctx, SERVER_CQ_DEPTH, NULL, s->comp, 0);
	if (!s->cq)
		return rl_fail("ibv_create_cq", errno, "%d entries", SERVER_CQ_DEPTH);
	ret = set_nonblocking(s->ch->fd, "CM channel");
	if (!ret)
		ret = set_nonblocking(s->comp->fd, "completion channel");
	if (!ret)
		ret = set_nonblocking(s->ctx->async_fd, "device's async events");
	if (ret)
		return ret;
	ret = lab5_srq_open(&s->srq, s->pd, LAB5_SRQ_DEPTH, LAB5_SRQ_LIMIT);
	if (ret)
		return ret;
	if (ibv_req_notify_cq(s->cq, 0))
		return rl_fail("ibv_req_notify_cq", errno, "the server's CQ");
	return 0;
}

/* The client whose QP number is QP_NUM, or NULL. */
static struct lab5_client *client_by_qp(struct lab5_server *s, uint32_t qp_num)
{
	for (int i = 0; i < LAB5_MAX_CLIENTS; i++)
		if (s->clients[i].id && s->clients[i].qp_num == qp_num)
			return &s->clients[i];
	return NULL;
}

/* The client whose CM id is ID, or NULL (a stub calls it nowhere: unused there). */
static __attribute__((unused)) struct lab5_client *client_by_id(struct lab5_server *s,
								struct rdma_cm_id *id)
{
	for (int i = 0; i < LAB5_MAX_CLIENTS; i++)
		if (s->clients[i].id == id)
			return &s->clients[i];
	return NULL;
}

/*
 * A slot no client has had: a client that left keeps its slot and its
 * counts (what serve prints, and what the tests judge), so it is never
 * handed to another. NULL when every slot was used.
 */
static struct lab5_client *client_new_slot(struct lab5_server *s)
{
	for (int i = 0; i < LAB5_MAX_CLIENTS; i++)
		if (!s->clients[i].id && !s->clients[i].qp_num && !s->clients[i].gone)
			return &s->clients[i];
	return NULL;
}

/* A client's QP and id, destroyed; its slot keeps its counts. */
static void client_free(struct lab5_client *cl)
{
	if (cl->id->qp)
		rdma_destroy_qp(cl->id);
	rdma_destroy_id(cl->id);
	cl->id = NULL;
}

/*
 * A CONNECT_REQUEST on ID: an RC QP for it on the shared CQ and SRQ, and
 * the accept. Returns 0 (a client refused for want of a slot is not an
 * error of the server's) or a negative errno.
 */
static int client_accept(struct lab5_server *s, struct rdma_cm_id *id)
{
	struct lab5_client *cl = client_new_slot(s);

	if (!cl) {
		rl_err("lab5: a client past the %d the server takes: rejected", LAB5_MAX_CLIENTS);
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return 0;
	}
	/* TODO step 5
	 * The client's QP: which CQ its sends and receives complete on, and
	 * where its receives come from (then it has no receive queue of its
	 * own); then accept.
	 * Read: man rdma_create_qp (ibv_qp_init_attr's srq), man rdma_accept.
	 */
	(void)cl;
	return rl_todo(5);
}

/* Every completion the CQ holds: each a client's message, its slot freed. */
static int drain_cq(struct lab5_server *s)
{
	struct ibv_wc wc[16];
	int n;

	do {
		n = ibv_poll_cq(s->cq, 16, wc);
		if (n < 0)
			return rl_fail("ibv_poll_cq", EIO, "the server's CQ");
		for (int i = 0; i < n; i++) {
			struct lab5_client *cl = client_by_qp(s, wc[i].qp_num);

			if (wc[i].status != IBV_WC_SUCCESS) {
				/* A client's QP flushed as it goes: no message, its slot still freed. */
				if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
					rl_err("lab5: completion on QP 0x%x: %s", wc[i].qp_num,
					       ibv_wc_status_str(wc[i].status));
			} else if (cl) {
				cl->messages++;
				cl->bytes += wc[i].byte_len;
				s->messages++;
			}
			if (wc[i].opcode & IBV_WC_RECV && wc[i].wr_id < s->srq.depth &&
			    !s->srq.free[wc[i].wr_id]) {
				s->srq.free[wc[i].wr_id] = true;
				s->srq.posted--;
			}
		}
	} while (n > 0);
	return 0;
}

/* One event of the CM channel, taken. Returns 0 or a negative errno. */
static int on_cm_event(struct lab5_server *s)
{
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	enum rdma_cm_event_type type;
	int status;

	if (rdma_get_cm_event(s->ch, &ev))
		return errno == EAGAIN ? 0 : rl_fail("rdma_get_cm_event", errno, "on the server");
	id = ev->id;
	type = ev->event;
	status = ev->status;
	/* Acked first: rdma_destroy_id() of a client waits for its events' acks. */
	rdma_ack_cm_event(ev);
	/* TODO step 5
	 * Each event, by type: a client comes (accept it: client_accept()),
	 * is connected, or goes (what of it is freed, and what is counted?).
	 * And an event you did not expect: stop the server, or say it and go on?
	 * Read: man rdma_get_cm_event (the event types), man rdma_destroy_qp.
	 */
	(void)client_accept;
	(void)id;
	(void)type;
	(void)status;
	return rl_todo(5);
}

/* The completion channel's event: taken, acknowledged, the CQ armed again and drained. */
static int on_cq_event(struct lab5_server *s)
{
	struct ibv_cq *cq;
	void *ctx;

	if (ibv_get_cq_event(s->comp, &cq, &ctx))
		return errno == EAGAIN ? 0 : rl_fail("ibv_get_cq_event", errno, "on the server");
	ibv_ack_cq_events(cq, 1);
	/* TODO step 5
	 * Arm the CQ for its next event and take what it holds: in which
	 * order, so that no completion is left with no event to announce it?
	 * Read: man ibv_req_notify_cq, man ibv_get_cq_event (its example).
	 */
	(void)drain_cq;
	return rl_todo(5);
}

/* One async event of the device, taken: the SRQ's limit refills it. */
static int on_async_event(struct lab5_server *s)
{
	struct ibv_async_event ev;
	enum ibv_event_type type;

	if (ibv_get_async_event(s->ctx, &ev))
		return errno == EAGAIN ? 0 : rl_fail("ibv_get_async_event", errno, "on the server");
	type = ev.event_type;
	ibv_ack_async_event(&ev);
	/* TODO step 5
	 * The SRQ running low is the event to act on; what of the others?
	 * Read: man ibv_get_async_event (the event types, and why each is acked).
	 */
	(void)type;
	return rl_todo(5);
}

/*
 * Serve S's clients in this one thread until s->expected of them came and
 * went, waiting at most s->timeout_ms at a time for anything to happen.
 * Returns 0, -ETIMEDOUT after one line, or a negative errno.
 */
int lab5_serve(struct lab5_server *s)
{
	/* TODO step 5
	 * One poll(2) on every descriptor that can wake the server; handle
	 * whichever is ready (on_cm_event, on_cq_event, on_async_event); stop
	 * when? Nothing may block but the poll itself.
	 * Read: man 2 poll, man rdma_get_cm_event, man ibv_get_cq_event, man ibv_get_async_event.
	 */
	(void)on_cm_event;
	(void)on_cq_event;
	(void)on_async_event;
	return rl_todo(5);
}

/* Release what S holds, the clients' QPs and ids first; S may be half made. */
void lab5_server_close(struct lab5_server *s)
{
	for (int i = 0; i < LAB5_MAX_CLIENTS; i++)
		if (s->clients[i].id)
			client_free(&s->clients[i]);
	if (s->srq.srq || s->srq.buf)
		lab5_srq_close(&s->srq);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->comp)
		ibv_destroy_comp_channel(s->comp);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->listen)
		rdma_destroy_id(s->listen);
	if (s->ch)
		rdma_destroy_event_channel(s->ch);
	memset(s, 0, sizeof(*s));
}
