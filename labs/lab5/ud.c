/*
 * ud.c: Lab 5 step 1: a UD endpoint over rdma_cm. The id lives in the
 * port space of datagrams; rdma_connect() is then a service ID resolution
 * (SIDR), not a connection: the server's reply carries its QP number, its
 * Q_Key and the path, which ESTABLISHED hands over once.
 */
#include <string.h>

#include "lab5.h"

/*
 * Step 1a. On U->id, bound to a device (an address resolved, or a connect
 * request's id), make U's PD, one CQ for sends and receives, a UD QP of
 * LAB5_SLOTS sends and receives that gathers LAB5_SEND_SGES and scatters
 * LAB5_RECV_SGES, and U's buffers (lab5_ud_buffers, given); U->mtu is the
 * port's active MTU. rdma_create_qp() brings a UD QP to RTS itself, with
 * rdma_cm's Q_Key. Returns 0 or a negative errno; what was made stays in U.
 */
int lab5_ud_create_qp(struct lab5_ud *u)
{
	/* TODO step 1
	 * A QP bound to nobody: which type, and how many SGEs each queue's requests take
	 * (step 2 gathers two and scatters three). See docs/lab5.md#step-1.
	 * Read: man rdma_create_qp, man ibv_create_qp (qp_type, cap), man ibv_create_cq.
	 */
	return rl_todo(1);
}

/*
 * Step 1b. Make U's event channel and an id for datagrams, resolve HOST:PORT
 * (the given helpers), make U's QP (lab5_ud_create_qp), ask the server
 * there for its QP and aim U's sends at it: U->ah, U->remote_qpn,
 * U->remote_qkey. U->timeout_ms bounds each wait (0: LAB5_TIMEOUT_MS).
 * Returns 0 or a negative errno after one line; what was made stays in U
 * (lab5_ud_close frees it).
 */
int lab5_ud_connect(struct lab5_ud *u, const char *host, uint16_t port)
{
	struct sockaddr_storage dst;
	int ret;

	if (!u->timeout_ms)
		u->timeout_ms = LAB5_TIMEOUT_MS;
	ret = lab5_parse_addr(host, port, &dst);
	if (ret)
		return ret;
	/* TODO step 1
	 * Which port space gives an id for datagrams, and where the server's QP number, Q_Key
	 * and path come from: not constants, not your own QP, but the reply rdma_connect() gets.
	 * Read: man rdma_create_id, man rdma_connect, man rdma_get_cm_event (UD), man ibv_create_ah.
	 */
	return rl_todo(1);
}
