/*
 * srq.c: Lab 5 step 4: a shared receive queue. Many RC QPs take their
 * receives from one queue of DEPTH slots; the device says, once, when
 * fewer than LIMIT are left, and the owner refills every slot its
 * completions freed, then asks to be told again (docs/lab5.md#step-4).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lab5.h"

/* TODO step 4
 * A helper of your own, if you want one: posting one slot's receive (its
 * address, its length, and the wr_id that names it in the completion).
 */

/*
 * Step 4a. S: a shared receive queue of DEPTH receives on PD, its buffer
 * of DEPTH slots of LAB5_SRQ_MSG bytes registered, every slot posted, and
 * the limit LIMIT armed. Returns 0 or a negative errno (S may be half
 * made: lab5_srq_close() releases it).
 */
int lab5_srq_open(struct lab5_srq *s, struct ibv_pd *pd, uint32_t depth, uint32_t limit)
{
	memset(s, 0, sizeof(*s));
	s->depth = depth;
	s->buf = calloc(depth, LAB5_SRQ_MSG);
	s->free = calloc(depth, sizeof(*s->free));
	if (!s->buf || !s->free)
		return rl_fail("calloc", ENOMEM, "%u slots of %d bytes", depth, LAB5_SRQ_MSG);
	for (uint32_t i = 0; i < depth; i++)
		s->free[i] = true;
	s->mr = ibv_reg_mr(pd, s->buf, (size_t)depth * LAB5_SRQ_MSG, IBV_ACCESS_LOCAL_WRITE);
	if (!s->mr)
		return rl_fail("ibv_reg_mr", errno, "%u SRQ slots", depth);
	/* TODO step 4
	 * Create the queue (how many receives, how many pieces each), post
	 * every slot (the completion's wr_id must say which), then arm the
	 * limit: the device's one-shot "running low" (what is it for?).
	 * Read: man ibv_create_srq, man ibv_post_srq_recv, man ibv_modify_srq.
	 */
	return rl_todo(4);
}

/*
 * Step 4b. Post again every slot of S that no posted receive holds (each
 * freed by its completion, once its message was handled), then arm the
 * limit again. Counts the refill in s->refills. Returns 0 or a negative
 * errno.
 */
int lab5_srq_refill(struct lab5_srq *s)
{
	/* TODO step 4
	 * Which slots go back into the queue, and what must follow them: the
	 * device disarmed the limit when it raised its event.
	 * Read: man ibv_post_srq_recv, man ibv_modify_srq (srq_limit).
	 */
	return rl_todo(4);
}

/* Release what S holds, in the reverse order of making it; S may be half made. */
void lab5_srq_close(struct lab5_srq *s)
{
	if (s->srq)
		ibv_destroy_srq(s->srq);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	free(s->buf);
	free(s->free);
	memset(s, 0, sizeof(*s));
}
