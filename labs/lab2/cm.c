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
	/* TODO step 1
	 * rdma_get_cm_event() blocks for ever, and every event it gives must go back:
	 * decide how the wait is bounded and what you copy out first (docs/lab2.md#step-1).
	 * Read: man rdma_get_cm_event, man rdma_ack_cm_event, man 2 poll.
	 */
	return rl_todo(1);
}

/*
 * Step 1. Client: create the event channel and an id on it (C->cm_ch,
 * C->id), then resolve ADDR:PORT to an address and then a route. Returns 0,
 * or a negative errno after printing why; what was made stays in C.
 */
int lab2_resolve(struct lab2_conn *c, const char *addr, uint16_t port)
{
	/* TODO step 1
	 * rdma_resolve_addr() finds the local device that reaches ADDR (id->verbs
	 * is then set), rdma_resolve_route() the path; each ends with an event.
	 * Read: man rdma_create_event_channel, man rdma_create_id, man rdma_resolve_addr.
	 */
	return rl_todo(1);
}

/*
 * Step 1. Server: create the event channel and an id on it (C->cm_ch,
 * C->listen_id), bind it to PORT on every address and listen. Returns 0,
 * or a negative errno after printing why; what was made stays in C.
 */
int lab2_listen(struct lab2_conn *c, uint16_t port)
{
	/* TODO step 1
	 * The listening id only hands out connection requests; each request
	 * brings a new id, the connection's own. A backlog of 1 is enough here.
	 * Read: man rdma_bind_addr, man rdma_listen.
	 */
	return rl_todo(1);
}

/*
 * Step 1. Server: wait for a client's CONNECT_REQUEST and keep the
 * connection's new id in C->id. Returns 0, or a negative errno.
 */
int lab2_get_request(struct lab2_conn *c)
{
	/* TODO step 1
	 * The request arrives on the listening id's channel; event->id is the new
	 * connection, with id->verbs already the device: make the PD and QP on it.
	 * Read: man rdma_get_cm_event (RDMA_CM_EVENT_CONNECT_REQUEST).
	 */
	return rl_todo(1);
}

/*
 * Step 1. Client: connect C->id (resolved, with its QP) and wait for
 * ESTABLISHED. Returns 0, or a negative errno (-ECONNREFUSED when nobody
 * listens there).
 */
int lab2_connect(struct lab2_conn *c)
{
	/* TODO step 1
	 * rdma_conn_param: initiator_depth (our RDMA READs in flight), responder_resources
	 * (the peer's), retry_count, and rnr_retry_count (how often the PEER retries an RNR).
	 * Read: man rdma_connect.
	 */
	return rl_todo(1);
}

/*
 * Step 1. Server: accept the connection C->id (with its QP, receives
 * posted) and wait for ESTABLISHED. Returns 0, or a negative errno.
 */
int lab2_accept(struct lab2_conn *c)
{
	/* TODO step 1
	 * What the server accepts with is what both QPs get: the client reads
	 * from us. rdma_accept() moves our QP to RTR and RTS.
	 * Read: man rdma_accept, docs/lab2.md#step-1.
	 */
	return rl_todo(1);
}
