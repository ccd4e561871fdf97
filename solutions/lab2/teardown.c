/* teardown.c: Lab 2 step 5: disconnect, wait for DISCONNECTED, destroy everything in order. */
#include "lab2.h"

/*
 * Step 5. Client: disconnect C->id and wait for its DISCONNECTED event
 * (unless the peer's came already: C->gone). Returns 0, or a negative errno.
 */
int lab2_disconnect(struct lab2_conn *c)
{
	/* BEGIN SOLUTION step 5
	 * rdma_disconnect() moves our QP to the error state and tells the peer;
	 * both sides then get DISCONNECTED. Wait for it before destroying the id.
	 * Read: man rdma_disconnect.
	 * stub: return rl_todo(5);
	 */
	if (rdma_disconnect(c->id))
		return rl_fail("rdma_disconnect", errno, "id %p", (void *)c->id);
	if (c->gone)
		return 0;
	return lab2_wait_cm_event(c, RDMA_CM_EVENT_DISCONNECTED, NULL);
	/* END SOLUTION */
}

/*
 * Step 5. Server: wait for the client's DISCONNECTED (unless it came
 * already: C->gone). Returns 0, or a negative errno.
 */
int lab2_wait_disconnected(struct lab2_conn *c)
{
	/* BEGIN SOLUTION step 5
	 * The client ends the connection; the server waits for the event that
	 * says so, bounded like every other wait.
	 * Read: man rdma_get_cm_event (RDMA_CM_EVENT_DISCONNECTED).
	 * stub: return rl_todo(5);
	 */
	if (c->gone)
		return 0;
	return lab2_wait_cm_event(c, RDMA_CM_EVENT_DISCONNECTED, NULL);
	/* END SOLUTION */
}

/*
 * Step 5. Destroy what C holds, those that are not NULL, each before what it
 * depends on (docs/lab2.md#step-5); set each to NULL. Goes on after a
 * failure. Returns 0, or the first failure as a negative errno.
 */
int lab2_destroy(struct lab2_conn *c)
{
	/* BEGIN SOLUTION step 5
	 * The QP goes with rdma_destroy_qp(); a CQ only after its events are all
	 * acknowledged; an id only after its CM events are acknowledged.
	 * Read: man rdma_destroy_qp, man ibv_destroy_comp_channel, man rdma_destroy_id.
	 * stub: return rl_todo(5);
	 */
	int ret, first = 0;

	if (c->qp) {
		rdma_destroy_qp(c->id);
		c->qp = NULL;
	}
	if (c->rdma_mr && (ret = ibv_dereg_mr(c->rdma_mr)))
		first = first ? first : rl_fail("ibv_dereg_mr", ret, "RDMA buffer");
	c->rdma_mr = NULL;
	if (c->msg_mr && (ret = ibv_dereg_mr(c->msg_mr)))
		first = first ? first : rl_fail("ibv_dereg_mr", ret, "message buffers");
	c->msg_mr = NULL;
	if (c->cq && (ret = ibv_destroy_cq(c->cq)))
		first = first ? first : rl_fail("ibv_destroy_cq", ret, "CQ %p", (void *)c->cq);
	c->cq = NULL;
	if (c->comp && (ret = ibv_destroy_comp_channel(c->comp)))
		first = first ? first :
				rl_fail("ibv_destroy_comp_channel", ret, "fd %d", c->comp->fd);
	c->comp = NULL;
	if (c->pd && (ret = ibv_dealloc_pd(c->pd)))
		first = first ? first : rl_fail("ibv_dealloc_pd", ret, "PD %p", (void *)c->pd);
	c->pd = NULL;
	if (c->id && rdma_destroy_id(c->id))
		first = first ? first : rl_fail("rdma_destroy_id", errno, "connection");
	c->id = NULL;
	if (c->listen_id && rdma_destroy_id(c->listen_id))
		first = first ? first : rl_fail("rdma_destroy_id", errno, "listener");
	c->listen_id = NULL;
	if (c->cm_ch)
		rdma_destroy_event_channel(c->cm_ch);
	c->cm_ch = NULL;
	return first;
	/* END SOLUTION */
}
