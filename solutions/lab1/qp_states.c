/* qp_states.c: Lab 1 steps 5 to 7: move an RC QP from RESET to INIT, RTR and RTS. */
#include "lab1.h"

/*
 * Step 5. RESET -> INIT: bind QP to PORT and grant the peer what this
 * program's peer does to our memory, no more. Returns 0, or a negative
 * errno after printing why.
 */
int lab1_qp_to_init(struct ibv_qp *qp, uint8_t port)
{
	/* BEGIN SOLUTION step 5
	 * INIT's attributes, and the mask that names them: what the peer may do
	 * through this QP. ibv_modify_qp() returns an errno (positive), not -1.
	 * Read: man ibv_modify_qp (its table of required attributes), docs/lab1.md#step-5.
	 * stub: return rl_todo(5);
	 */
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = port,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	int mask = IBV_QP_STATE |       /* to INIT */
		   IBV_QP_PKEY_INDEX |  /* partition key 0: the default partition */
		   IBV_QP_PORT |        /* which port of the device the QP uses */
		   IBV_QP_ACCESS_FLAGS; /* what the peer may do to our memory */
	int ret = ibv_modify_qp(qp, &attr, mask);

	if (ret)
		return rl_fail("ibv_modify_qp INIT", ret, "QP 0x%x port %u", qp->qp_num, port);
	return 0;
	/* END SOLUTION */
}

/*
 * Step 6. INIT -> RTR: aim QP at the peer REMOTE describes, sending from
 * our GID GID_INDEX on PORT. Returns 0, or a negative errno after printing why.
 */
int lab1_qp_to_rtr(struct ibv_qp *qp, uint8_t port, int gid_index, const struct lab1_dest *remote)
{
	/* BEGIN SOLUTION step 6
	 * Ready to receive: where the peer is (RoCE routes by GID), the path's
	 * packet size, which QP and PSN to expect, what a sender is told to wait.
	 * Read: man ibv_modify_qp, man ibv_query_port, docs/lab1.md#step-6.
	 * stub: return rl_todo(6);
	 */
	struct ibv_port_attr port_attr;
	struct ibv_qp_attr attr;
	int mask, ret;

	ret = ibv_query_port(qp->context, port, &port_attr);
	if (ret)
		return rl_fail("ibv_query_port", ret, "port %u", port);
	attr = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR,
		.path_mtu = port_attr.active_mtu,
		.dest_qp_num = remote->qpn,
		.rq_psn = remote->psn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = RL_MIN_RNR_TIMER,
		.ah_attr = {
			.is_global = 1,
			.dlid = remote->lid,
			.sl = 0,
			.src_path_bits = 0,
			.port_num = port,
			.grh = {
				.dgid = remote->gid,
				.sgid_index = gid_index,
				.hop_limit = 1,
			},
		},
	};
	mask = IBV_QP_STATE |              /* to RTR: ready to receive */
	       IBV_QP_AV |                 /* address vector: where the peer is */
	       IBV_QP_PATH_MTU |           /* largest packet on the path */
	       IBV_QP_DEST_QPN |           /* the peer's QP number */
	       IBV_QP_RQ_PSN |             /* first PSN we expect from the peer */
	       IBV_QP_MAX_DEST_RD_ATOMIC | /* RDMA reads the peer may have in flight to us */
	       IBV_QP_MIN_RNR_TIMER;       /* how long a sender waits when we have no receive */
	ret = ibv_modify_qp(qp, &attr, mask);
	if (ret)
		return rl_fail("ibv_modify_qp RTR", ret, "QP 0x%x to QPN 0x%x (GID index %d)",
			       qp->qp_num, remote->qpn, gid_index);
	return 0;
	/* END SOLUTION */
}

/*
 * Step 7. RTR -> RTS: start sending at PSN, with an ACK timeout and
 * retries that ride out a slow peer but still report a lost one or a
 * missing receive. Returns 0, or a negative errno after printing why.
 */
int lab1_qp_to_rts(struct ibv_qp *qp, uint32_t psn)
{
	/* BEGIN SOLUTION step 7
	 * Ready to send: our first PSN (the one we told the peer), how long to wait
	 * for an ACK, how often to resend, how often to retry a receiver not ready.
	 * Read: man ibv_modify_qp, docs/lab1.md#step-7.
	 * stub: return rl_todo(7);
	 */
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = RL_RNR_RETRY,
		.sq_psn = psn & 0xffffff,
		.max_rd_atomic = 1,
	};
	int mask = IBV_QP_STATE |           /* to RTS: ready to send */
		   IBV_QP_TIMEOUT |         /* ACK timeout: 4.096 us * 2^14, about 67 ms */
		   IBV_QP_RETRY_CNT |       /* resends before giving up on a lost packet */
		   IBV_QP_RNR_RETRY |       /* resends while the peer has no receive posted */
		   IBV_QP_SQ_PSN |          /* first PSN we send */
		   IBV_QP_MAX_QP_RD_ATOMIC; /* RDMA reads we may have in flight */
	int ret = ibv_modify_qp(qp, &attr, mask);

	if (ret)
		return rl_fail("ibv_modify_qp RTS", ret, "QP 0x%x", qp->qp_num);
	return 0;
	/* END SOLUTION */
}
