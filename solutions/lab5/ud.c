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
	/* BEGIN SOLUTION step 1
	 * A QP bound to nobody: which type, and how many SGEs each queue's requests take
	 * (step 2 gathers two and scatters three). See docs/lab5.md#step-1.
	 * Read: man rdma_create_qp, man ibv_create_qp (qp_type, cap), man ibv_create_cq.
	 * stub: return rl_todo(1);
	 */
	struct ibv_qp_init_attr init;
	int ret;

	u->pd = ibv_alloc_pd(u->id->verbs);
	if (!u->pd)
		return rl_fail("ibv_alloc_pd", errno, "on %s",
			       ibv_get_device_name(u->id->verbs->device));
	/* Every receive slot and every send may complete here at once. */
	u->cq = ibv_create_cq(u->id->verbs, 2 * LAB5_SLOTS, NULL, NULL, 0);
	if (!u->cq)
		return rl_fail("ibv_create_cq", errno, "%d entries", 2 * LAB5_SLOTS);
	init = (struct ibv_qp_init_attr){
		.send_cq = u->cq,
		.recv_cq = u->cq,
		.qp_type = IBV_QPT_UD,
		.cap = {
			.max_send_wr = LAB5_SLOTS,
			.max_recv_wr = LAB5_SLOTS,
			.max_send_sge = LAB5_SEND_SGES, /* the header, the payload */
			.max_recv_sge = LAB5_RECV_SGES, /* the GRH, the header, the payload */
		},
		.sq_sig_all = 0, /* each send says whether it completes */
	};
	if (rdma_create_qp(u->id, u->pd, &init))
		return rl_fail("rdma_create_qp", errno, "UD, %d and %d SGEs", LAB5_SEND_SGES,
			       LAB5_RECV_SGES);
	u->qp = u->id->qp;
	ret = lab5_ud_buffers(u);
	if (ret)
		return ret;
	u->mtu = lab5_port_mtu(u->id);
	return 0;
	/* END SOLUTION */
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
	/* BEGIN SOLUTION step 1
	 * Which port space gives an id for datagrams, and where the server's QP number, Q_Key
	 * and path come from: not constants, not your own QP, but the reply rdma_connect() gets.
	 * Read: man rdma_create_id, man rdma_connect, man rdma_get_cm_event (UD), man ibv_create_ah.
	 * stub: return rl_todo(1);
	 */
	struct rdma_conn_param param = { 0 };
	struct rdma_cm_event ev;

	u->ch = rdma_create_event_channel();
	if (!u->ch)
		return rl_fail("rdma_create_event_channel", errno, "for %s:%u", host, port);
	if (rdma_create_id(u->ch, &u->id, u, RDMA_PS_UDP))
		return rl_fail("rdma_create_id", errno, "RDMA_PS_UDP");
	ret = lab5_resolve_addr(u->id, u->ch, NULL, (struct sockaddr *)&dst, u->timeout_ms);
	if (ret)
		return ret;
	ret = lab5_resolve_route(u->id, u->ch, u->timeout_ms);
	if (ret)
		return ret;
	ret = lab5_ud_create_qp(u);
	if (ret)
		return ret;
	/* For a UD id this is SIDR: the reply names the server's QP, no connection is made. */
	if (rdma_connect(u->id, &param))
		return rl_fail("rdma_connect", errno, "to %s:%u (SIDR)", host, port);
	ret = lab5_wait_event(u->ch, RDMA_CM_EVENT_ESTABLISHED, &ev, u->timeout_ms);
	if (ret)
		return ret;
	u->ah = ibv_create_ah(u->pd, &ev.param.ud.ah_attr);
	if (!u->ah)
		return rl_fail("ibv_create_ah", errno, "to %s:%u", host, port);
	u->remote_qpn = ev.param.ud.qp_num;
	u->remote_qkey = ev.param.ud.qkey;
	return 0;
	/* END SOLUTION */
}
