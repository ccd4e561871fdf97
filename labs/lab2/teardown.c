/* teardown.c: Lab 2 step 5: disconnect, wait for DISCONNECTED, destroy everything in order. */
#include "lab2.h"

/*
 * Step 5. Client: disconnect C->id and wait for its DISCONNECTED event
 * (unless the peer's came already: C->gone). Returns 0, or a negative errno.
 */
int lab2_disconnect(struct lab2_conn *c)
{
	/* TODO step 5
	 * rdma_disconnect() moves our QP to the error state and tells the peer;
	 * both sides then get DISCONNECTED. Wait for it before destroying the id.
	 * Read: man rdma_disconnect.
	 */
	return rl_todo(5);
}

/*
 * Step 5. Server: wait for the client's DISCONNECTED (unless it came
 * already: C->gone). Returns 0, or a negative errno.
 */
int lab2_wait_disconnected(struct lab2_conn *c)
{
	/* TODO step 5
	 * The client ends the connection; the server waits for the event that
	 * says so, bounded like every other wait.
	 * Read: man rdma_get_cm_event (RDMA_CM_EVENT_DISCONNECTED).
	 */
	return rl_todo(5);
}

/*
 * Step 5. Destroy what C holds, those that are not NULL, each before what it
 * depends on (docs/lab2.md#step-5); set each to NULL. Goes on after a
 * failure. Returns 0, or the first failure as a negative errno.
 */
int lab2_destroy(struct lab2_conn *c)
{
	/* TODO step 5
	 * The QP goes with rdma_destroy_qp(); a CQ only after its events are all
	 * acknowledged; an id only after its CM events are acknowledged.
	 * Read: man rdma_destroy_qp, man ibv_destroy_comp_channel, man rdma_destroy_id.
	 */
	return rl_todo(5);
}
