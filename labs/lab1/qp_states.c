/* qp_states.c: Lab 1 steps 5 to 7: move an RC QP from RESET to INIT, RTR and RTS. */
#include "lab1.h"

/*
 * Step 5. RESET -> INIT: bind QP to PORT and let the peer RDMA-write into
 * our memory. Returns 0, or a negative errno after printing why.
 */
int lab1_qp_to_init(struct ibv_qp *qp, uint8_t port)
{
	/* TODO step 5
	 * INIT needs the state, a partition key index, the port and the access
	 * the remote side gets; ibv_modify_qp() returns an errno (positive), not -1.
	 * Read: man ibv_modify_qp.
	 */
	return rl_todo(5);
}

/*
 * Step 6. INIT -> RTR: aim QP at the peer REMOTE describes, sending from
 * our GID GID_INDEX on PORT. Returns 0, or a negative errno after printing why.
 */
int lab1_qp_to_rtr(struct ibv_qp *qp, uint8_t port, int gid_index, const struct lab1_dest *remote)
{
	/* TODO step 6
	 * Ready to receive: the address vector (RoCE: is_global and a GRH with the
	 * peer's GID), path MTU, peer QPN, its first PSN, read depth, RNR timer.
	 * Read: man ibv_modify_qp, man ibv_query_port (active_mtu).
	 */
	return rl_todo(6);
}

/*
 * Step 7. RTR -> RTS: start sending at PSN, with finite timeouts and
 * retries. Returns 0, or a negative errno after printing why.
 */
int lab1_qp_to_rts(struct ibv_qp *qp, uint32_t psn)
{
	/* TODO step 7
	 * Ready to send: our first PSN (the one we told the peer), the ACK timeout,
	 * how often to resend, and how often to retry when the peer has no receive.
	 * Read: man ibv_modify_qp.
	 */
	return rl_todo(7);
}
