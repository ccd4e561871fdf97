/* cm.c: Lab 2 step 1: rdma_cm, from an event channel to an established connection. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>

#include "lab2.h"

/*
 * Step 1. Wait at most C->timeout_ms for the next event on C->cm_ch, check
 * it is WANT with status 0, and acknowledge it (always, error events too).
 * For CONNECT_REQUEST, *NEW_ID (may be NULL otherwise) gets the new id.
 * Returns 0; -ETIMEDOUT; -ECONNREFUSED (REJECTED); -ECONNRESET
 * (DISCONNECTED); -EHOSTUNREACH (address, route or peer unreachable);
 * -EPROTO for any other event; each after one line naming the event.
 */
int lab2_wait_cm_event(struct lab2_conn *c, enum rdma_cm_event_type want,
		       struct rdma_cm_id **new_id)
{
	/* BEGIN SOLUTION step 1
	 * rdma_get_cm_event() blocks for ever, and every event it gives must go back:
	 * decide how the wait is bounded and what you copy out first (docs/lab2.md#step-1).
	 * Read: man rdma_get_cm_event, man rdma_ack_cm_event, man 2 poll.
	 * stub: return rl_todo(1);
	 */
	struct pollfd pfd = { .fd = c->cm_ch->fd, .events = POLLIN };
	struct rdma_cm_event *event;
	enum rdma_cm_event_type type;
	int n, status;

	do {
		n = poll(&pfd, 1, c->timeout_ms);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return rl_fail("poll", errno, "on the CM channel");
	if (n == 0) {
		rl_err("rdma_cm: no %s event within %d ms", rdma_event_str(want), c->timeout_ms);
		return -ETIMEDOUT;
	}
	if (rdma_get_cm_event(c->cm_ch, &event))
		return rl_fail("rdma_get_cm_event", errno, "waiting for %s", rdma_event_str(want));
	type = event->event;
	status = event->status;
	if (type == RDMA_CM_EVENT_CONNECT_REQUEST && new_id)
		*new_id = event->id;
	/* Acknowledge every event, the unexpected ones too: rdma_destroy_id() waits for it. */
	rdma_ack_cm_event(event);
	rl_debug("rdma_cm: %s (status %d)", rdma_event_str(type), status);
	if (type == want && status == 0)
		return 0;
	rl_err("rdma_cm: expected %s, got %s (status %d)", rdma_event_str(want),
	       rdma_event_str(type), status);
	switch (type) {
	case RDMA_CM_EVENT_REJECTED:
		return -ECONNREFUSED;
	case RDMA_CM_EVENT_DISCONNECTED:
		c->gone = true;
		return -ECONNRESET;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		return -EHOSTUNREACH;
	default:
		return -EPROTO;
	}
	/* END SOLUTION */
}

/*
 * Step 1. Client: create the event channel and an id on it (C->cm_ch,
 * C->id), then resolve ADDR:PORT to an address and then a route. Returns 0,
 * or a negative errno after printing why; what was made stays in C.
 */
int lab2_resolve(struct lab2_conn *c, const char *addr, uint16_t port)
{
	/* BEGIN SOLUTION step 1
	 * rdma_resolve_addr() finds the local device that reaches ADDR (id->verbs
	 * is then set), rdma_resolve_route() the path; each ends with an event.
	 * Read: man rdma_create_event_channel, man rdma_create_id, man rdma_resolve_addr.
	 * stub: return rl_todo(1);
	 */
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	int ret;

	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1) {
		rl_err("lab2: %s is not an IPv4 address", addr);
		return -EINVAL;
	}
	c->cm_ch = rdma_create_event_channel();
	if (!c->cm_ch)
		return rl_fail("rdma_create_event_channel", errno, "(is rdma_ucm loaded?)");
	if (rdma_create_id(c->cm_ch, &c->id, NULL, RDMA_PS_TCP))
		return rl_fail("rdma_create_id", errno, "for %s:%u", addr, port);
	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&sin, c->timeout_ms))
		return rl_fail("rdma_resolve_addr", errno, "%s:%u", addr, port);
	ret = lab2_wait_cm_event(c, RDMA_CM_EVENT_ADDR_RESOLVED, NULL);
	if (ret)
		return ret;
	if (rdma_resolve_route(c->id, c->timeout_ms))
		return rl_fail("rdma_resolve_route", errno, "%s:%u", addr, port);
	return lab2_wait_cm_event(c, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL);
	/* END SOLUTION */
}

/*
 * Step 1. Server: create the event channel and an id on it (C->cm_ch,
 * C->listen_id), bind it to PORT on every address and listen. Returns 0,
 * or a negative errno after printing why; what was made stays in C.
 */
int lab2_listen(struct lab2_conn *c, uint16_t port)
{
	/* BEGIN SOLUTION step 1
	 * The listening id only hands out connection requests; each request
	 * brings a new id, the connection's own. A backlog of 1 is enough here.
	 * Read: man rdma_bind_addr, man rdma_listen.
	 * stub: return rl_todo(1);
	 */
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};

	c->cm_ch = rdma_create_event_channel();
	if (!c->cm_ch)
		return rl_fail("rdma_create_event_channel", errno, "(is rdma_ucm loaded?)");
	if (rdma_create_id(c->cm_ch, &c->listen_id, NULL, RDMA_PS_TCP))
		return rl_fail("rdma_create_id", errno, "to listen on port %u", port);
	if (rdma_bind_addr(c->listen_id, (struct sockaddr *)&sin))
		return rl_fail("rdma_bind_addr", errno, "port %u", port);
	if (rdma_listen(c->listen_id, 1))
		return rl_fail("rdma_listen", errno, "port %u", port);
	return 0;
	/* END SOLUTION */
}

/*
 * Step 1. Server: wait for a client's CONNECT_REQUEST and keep the
 * connection's new id in C->id. Returns 0, or a negative errno.
 */
int lab2_get_request(struct lab2_conn *c)
{
	/* BEGIN SOLUTION step 1
	 * The request arrives on the listening id's channel; event->id is the new
	 * connection, with id->verbs already the device: make the PD and QP on it.
	 * Read: man rdma_get_cm_event (RDMA_CM_EVENT_CONNECT_REQUEST).
	 * stub: return rl_todo(1);
	 */
	return lab2_wait_cm_event(c, RDMA_CM_EVENT_CONNECT_REQUEST, &c->id);
	/* END SOLUTION */
}

/*
 * Step 1. Client: connect C->id (resolved, with its QP) and wait for
 * ESTABLISHED. Returns 0, or a negative errno (-ECONNREFUSED when nobody
 * listens there).
 */
int lab2_connect(struct lab2_conn *c)
{
	/* BEGIN SOLUTION step 1
	 * rdma_conn_param: initiator_depth (our RDMA READs in flight), responder_resources
	 * (the peer's), retry_count, and rnr_retry_count (how often the PEER retries an RNR).
	 * Read: man rdma_connect.
	 * stub: return rl_todo(1);
	 */
	struct rdma_conn_param param = {
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = LAB2_RNR_RETRY,
	};
	int ret;

	if (rdma_connect(c->id, &param))
		return rl_fail("rdma_connect", errno, "id %p", (void *)c->id);
	ret = lab2_wait_cm_event(c, RDMA_CM_EVENT_ESTABLISHED, NULL);
	if (ret == -ECONNREFUSED)
		rl_err("rdma_connect: refused (hint: is a server listening on that port?)");
	return ret;
	/* END SOLUTION */
}

/*
 * Step 1. Server: accept the connection C->id (with its QP, receives
 * posted) and wait for ESTABLISHED. Returns 0, or a negative errno.
 */
int lab2_accept(struct lab2_conn *c)
{
	/* BEGIN SOLUTION step 1
	 * What the server accepts with is what both QPs get: the client reads
	 * from us. rdma_accept() moves our QP to RTR and RTS.
	 * Read: man rdma_accept, docs/lab2.md#step-1.
	 * stub: return rl_todo(1);
	 */
	struct rdma_conn_param param = {
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = LAB2_RNR_RETRY,
	};

	if (rdma_accept(c->id, &param))
		return rl_fail("rdma_accept", errno, "id %p", (void *)c->id);
	return lab2_wait_cm_event(c, RDMA_CM_EVENT_ESTABLISHED, NULL);
	/* END SOLUTION */
}
