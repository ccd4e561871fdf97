/*
 * cm.c: rdma_cm helpers. Every wait polls the event channel's fd with a
 * timeout, copies what the caller needs out of the event, and acknowledges
 * the event, the unexpected and failed ones included, so that
 * rdma_destroy_id() never blocks on an unacknowledged event.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "rdmalab.h"

/* Create an event channel for CM events. */
struct rdma_event_channel *rl_cm_create_channel(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();

	if (!ch)
		rl_fail("rdma_create_event_channel", errno ? errno : ENODEV,
			"(is rdma_ucm loaded?)");
	return ch;
}

/* Copy the parts of EVENT that outlive rdma_ack_cm_event() into EV. */
static void rl_cm_copy_event(const struct rdma_cm_event *event, struct rl_cm_event *ev)
{
	const struct rdma_conn_param *conn = &event->param.conn;

	*ev = (struct rl_cm_event){
		.type = event->event,
		.status = event->status,
		.id = event->id,
	};
	if (conn->private_data && conn->private_data_len) {
		ev->private_len = conn->private_data_len;
		if (ev->private_len > sizeof(ev->private_data))
			ev->private_len = sizeof(ev->private_data);
		memcpy(ev->private_data, conn->private_data, ev->private_len);
	}
}

/* Report that EV came when EXPECTED was due, as one line with a hint. */
static void rl_cm_report_unexpected(enum rdma_cm_event_type expected, const struct rl_cm_event *ev)
{
	char what[128], reason[64];
	enum rl_trap trap;

	snprintf(what, sizeof(what), "rdma_cm: expected %s, got %s", rdma_event_str(expected),
		 rdma_event_str(ev->type));
	if (ev->status < 0)
		snprintf(reason, sizeof(reason), "%s", strerror(-ev->status));
	else
		snprintf(reason, sizeof(reason), "status %d", ev->status);
	if (ev->type == RDMA_CM_EVENT_REJECTED || ev->type == RDMA_CM_EVENT_UNREACHABLE)
		trap = RL_TRAP_CM_TIMEOUT;
	else
		trap = rl_trap_of_errno("rdma_cm", -ev->status);
	rl_log_failure(what, reason, trap);
}

/*
 * Wait at most TIMEOUT_MS for the next event on CH and require it to be
 * EXPECTED. The event is copied into EV (may be NULL) and acknowledged.
 * Returns 0, -ETIMEDOUT, or the event's error status (-EPROTO if none).
 */
int rl_cm_wait_event(struct rdma_event_channel *ch, enum rdma_cm_event_type expected,
		     int timeout_ms, struct rl_cm_event *ev)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *event;
	struct rl_cm_event copy;
	int n;

	do {
		n = poll(&pfd, 1, timeout_ms);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return rl_fail("poll", errno, "on rdma_cm channel fd %d", ch->fd);
	if (n == 0) {
		rl_err("rdma_cm: no %s event within %d ms (hint: %s)", rdma_event_str(expected),
		       timeout_ms, rl_hint(RL_TRAP_CM_TIMEOUT));
		return -ETIMEDOUT;
	}
	if (rdma_get_cm_event(ch, &event))
		return rl_fail("rdma_get_cm_event", errno, "on channel fd %d", ch->fd);
	rl_cm_copy_event(event, &copy);
	rdma_ack_cm_event(event);
	if (ev)
		*ev = copy;
	rl_debug("rdma_cm: %s (status %d)", rdma_event_str(copy.type), copy.status);
	if (copy.type == expected && copy.status == 0)
		return 0;
	rl_cm_report_unexpected(expected, &copy);
	return copy.status < 0 ? copy.status : -EPROTO;
}

/*
 * Client side: create an id on CH and resolve HOST:PORT to an address and
 * then a route, each within TIMEOUT_MS. On success *ID is ready for a QP
 * (its ->verbs is the device to use) and rl_cm_connect().
 */
int rl_cm_resolve(struct rdma_event_channel *ch, const char *host, uint16_t port, int timeout_ms,
		  struct rdma_cm_id **id)
{
	struct sockaddr_in sin;
	int ret;

	ret = rl_resolve_ipv4(host, port, &sin);
	if (ret)
		return ret;
	if (rdma_create_id(ch, id, NULL, RDMA_PS_TCP))
		return rl_fail("rdma_create_id", errno, "for %s:%u", host, port);
	if (rdma_resolve_addr(*id, NULL, (struct sockaddr *)&sin, timeout_ms)) {
		ret = rl_fail("rdma_resolve_addr", errno, "%s:%u", host, port);
		goto clean_id;
	}
	ret = rl_cm_wait_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED, timeout_ms + 1000, NULL);
	if (ret)
		goto clean_id;
	if (rdma_resolve_route(*id, timeout_ms)) {
		ret = rl_fail("rdma_resolve_route", errno, "%s:%u", host, port);
		goto clean_id;
	}
	ret = rl_cm_wait_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, timeout_ms + 1000, NULL);
	if (ret)
		goto clean_id;
	return 0;

clean_id:
	rdma_destroy_id(*id);
	*id = NULL;
	return ret;
}

/* Create an RC QP on ID with DEPTH slots; both queues complete on CQ. */
int rl_cm_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_cq *cq, int depth)
{
	struct ibv_qp_init_attr init_attr = rl_rc_qp_init_attr(cq, cq, depth);

	if (rdma_create_qp(id, pd, &init_attr))
		return rl_fail("rdma_create_qp", errno, "RC with %d slots", depth);
	return 0;
}

/* The connection parameters both sides use, carrying LEN bytes at PRIV. */
static struct rdma_conn_param rl_cm_conn_param(const void *priv, uint8_t len)
{
	return (struct rdma_conn_param){
		.private_data = priv,
		.private_data_len = len,
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = RL_RNR_RETRY,
	};
}

/*
 * Client side: connect ID (resolved, with a QP) sending LEN bytes of PRIV
 * (at most 56), and wait for ESTABLISHED; EV (may be NULL) gets that event,
 * with the server's private data.
 */
int rl_cm_connect(struct rdma_cm_id *id, const void *priv, uint8_t len, int timeout_ms,
		  struct rl_cm_event *ev)
{
	struct rdma_conn_param param = rl_cm_conn_param(priv, len);

	if (rdma_connect(id, &param))
		return rl_fail("rdma_connect", errno, "id %p", (void *)id);
	return rl_cm_wait_event(id->channel, RDMA_CM_EVENT_ESTABLISHED, timeout_ms, ev);
}

/*
 * Server side: create an id on CH, bind it to HOST:PORT (HOST NULL for any
 * address, PORT 0 for any free port, stored in *BOUND_PORT if not NULL) and
 * listen, with room for BACKLOG connection requests not yet taken.
 */
int rl_cm_listen_backlog(struct rdma_event_channel *ch, const char *host, uint16_t port,
			 int backlog, struct rdma_cm_id **id, uint16_t *bound_port)
{
	struct sockaddr_in sin;
	int ret;

	ret = rl_resolve_ipv4(host, port, &sin);
	if (ret)
		return ret;
	if (rdma_create_id(ch, id, NULL, RDMA_PS_TCP))
		return rl_fail("rdma_create_id", errno, "for %s:%u", host ? host : "*", port);
	if (rdma_bind_addr(*id, (struct sockaddr *)&sin)) {
		ret = rl_fail("rdma_bind_addr", errno,
			      "%s:%u (is the address on an RDMA device? is the port in use?)",
			      host ? host : "*", port);
		goto clean_id;
	}
	if (rdma_listen(*id, backlog)) {
		ret = rl_fail("rdma_listen", errno, "%s:%u", host ? host : "*", port);
		goto clean_id;
	}
	if (bound_port)
		*bound_port = ntohs(rdma_get_src_port(*id));
	return 0;

clean_id:
	rdma_destroy_id(*id);
	*id = NULL;
	return ret;
}

/* Server side: rl_cm_listen_backlog() for one peer at a time, a backlog of 1. */
int rl_cm_listen(struct rdma_event_channel *ch, const char *host, uint16_t port,
		 struct rdma_cm_id **id, uint16_t *bound_port)
{
	return rl_cm_listen_backlog(ch, host, port, 1, id, bound_port);
}

/* Server side: wait for a CONNECT_REQUEST on CH; EV->id is the new connection. */
int rl_cm_get_request(struct rdma_event_channel *ch, int timeout_ms, struct rl_cm_event *ev)
{
	return rl_cm_wait_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST, timeout_ms, ev);
}

/* Server side: accept ID (with a QP) sending LEN bytes of PRIV, wait for ESTABLISHED. */
int rl_cm_accept(struct rdma_cm_id *id, const void *priv, uint8_t len, int timeout_ms)
{
	struct rdma_conn_param param = rl_cm_conn_param(priv, len);

	if (rdma_accept(id, &param))
		return rl_fail("rdma_accept", errno, "id %p", (void *)id);
	return rl_cm_wait_event(id->channel, RDMA_CM_EVENT_ESTABLISHED, timeout_ms, NULL);
}

/* Either side: disconnect ID and wait for its DISCONNECTED event. */
int rl_cm_disconnect(struct rdma_cm_id *id, int timeout_ms)
{
	if (rdma_disconnect(id))
		return rl_fail("rdma_disconnect", errno, "id %p", (void *)id);
	return rl_cm_wait_event(id->channel, RDMA_CM_EVENT_DISCONNECTED, timeout_ms, NULL);
}

/* Destroy ID and its QP, if it has one. NULL is fine. */
void rl_cm_destroy(struct rdma_cm_id *id)
{
	if (!id)
		return;
	if (id->qp)
		rdma_destroy_qp(id);
	rdma_destroy_id(id);
}
