/* qp_states.c: Lab 1 steps 5 to 7: move an RC QP from RESET to INIT, RTR and RTS. */
#include "lab1.h"

/*
 * Step 5. RESET -> INIT: bind QP to PORT and grant the peer what this
 * program's peer does to our memory, no more. Returns 0, or a negative
 * errno after printing why.
 */
int lab1_qp_to_init(struct ibv_qp *qp, uint8_t port)
{
	/* TODO step 5
	 * INIT's attributes, and the mask that names them: what the peer may do
	 * through this QP. ibv_modify_qp() returns an errno (positive), not -1.
	 * Read: man ibv_modify_qp (its table of required attributes), docs/lab1.md#step-5.
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
	 * Ready to receive: where the peer is (RoCE routes by GID), the path's
	 * packet size, which QP and PSN to expect, what a sender is told to wait.
	 * Read: man ibv_modify_qp, man ibv_query_port, docs/lab1.md#step-6.
	 */
	return rl_todo(6);
}

/*
 * Step 7. RTR -> RTS: start sending at PSN, with an ACK timeout and
 * retries that ride out a slow peer but still report a lost one or a
 * missing receive. Returns 0, or a negative errno after printing why.
 */
int lab1_qp_to_rts(struct ibv_qp *qp, uint32_t psn)
{
	/* TODO step 7
	 * Ready to send: our first PSN (the one we told the peer), how long to wait
	 * for an ACK, how often to resend, how often to retry a receiver not ready.
	 * Read: man ibv_modify_qp, docs/lab1.md#step-7.
	 */
	return rl_todo(7);
}
