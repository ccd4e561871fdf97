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

/* BEGIN SOLUTION step 4
 * A helper of your own, if you want one: posting one slot's receive (its
 * address, its length, and the wr_id that names it in the completion).
 */
/* Post the receive of slot SLOT of S: LAB5_SRQ_MSG bytes, its wr_id the slot. */
static int post_slot(struct lab5_srq *s, uint32_t slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(s->buf + (size_t)slot * LAB5_SRQ_MSG),
		.length = LAB5_SRQ_MSG,
		.lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = slot,
		.sg_list = &sge,
		.num_sge = 1,
	};
	struct ibv_recv_wr *bad;
	int ret;

	ret = ibv_post_srq_recv(s->srq, &wr, &bad);
	if (ret)
		return rl_fail("ibv_post_srq_recv", ret, "slot %u of %u (%u posted)", slot,
			       s->depth, s->posted);
	s->free[slot] = false;
	s->posted++;
	return 0;
}
/* END SOLUTION */

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
	/* BEGIN SOLUTION step 4
	 * Create the queue (how many receives, how many pieces each), post
	 * every slot (the completion's wr_id must say which), then arm the
	 * limit: the device's one-shot "running low" (what is it for?).
	 * Read: man ibv_create_srq, man ibv_post_srq_recv, man ibv_modify_srq.
	 * stub: return rl_todo(4);
	 */
	struct ibv_srq_init_attr init = {
		.attr = {
			.max_wr = depth,
			.max_sge = 1,
		},
	};
	struct ibv_srq_attr arm = { .srq_limit = limit };
	int ret;

	s->srq = ibv_create_srq(pd, &init);
	if (!s->srq)
		return rl_fail("ibv_create_srq", errno,
			       "%u receives (max_srq_wr in ibv_devinfo -v)", depth);
	for (uint32_t i = 0; i < depth; i++) {
		ret = post_slot(s, i);
		if (ret)
			return ret;
	}
	ret = ibv_modify_srq(s->srq, &arm, IBV_SRQ_LIMIT);
	if (ret)
		return rl_fail("ibv_modify_srq", ret, "limit %u of %u", limit, depth);
	s->limit = limit;
	return 0;
	/* END SOLUTION */
}

/*
 * Step 4b. Post again every slot of S that no posted receive holds (each
 * freed by its completion, once its message was handled), then arm the
 * limit again. Counts the refill in s->refills. Returns 0 or a negative
 * errno.
 */
int lab5_srq_refill(struct lab5_srq *s)
{
	/* BEGIN SOLUTION step 4
	 * Which slots go back into the queue, and what must follow them: the
	 * device disarmed the limit when it raised its event.
	 * Read: man ibv_post_srq_recv, man ibv_modify_srq (srq_limit).
	 * stub: return rl_todo(4);
	 */
	struct ibv_srq_attr arm = { .srq_limit = s->limit };
	int ret;

	for (uint32_t i = 0; i < s->depth; i++) {
		if (!s->free[i])
			continue;
		ret = post_slot(s, i);
		if (ret)
			return ret;
	}
	ret = ibv_modify_srq(s->srq, &arm, IBV_SRQ_LIMIT);
	if (ret)
		return rl_fail("ibv_modify_srq", ret, "limit %u again, %u posted", s->limit,
			       s->posted);
	s->refills++;
	return 0;
	/* END SOLUTION */
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
