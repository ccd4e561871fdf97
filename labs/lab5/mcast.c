/* mcast.c: Lab 5 step 3: a multicast group, joined as a full or a send-only member. */
#include <arpa/inet.h>
#include <errno.h>

#include "lab5.h"

/*
 * Given: U's channel and an id in RDMA_PS_UDP, and GROUP resolved from
 * LOCAL, which binds the id to LOCAL's device (a group has no route to
 * resolve). U->group holds the group's address.
 */
static int mc_bind(struct lab5_ud *u, const char *local, const char *group)
{
	struct sockaddr_storage src;
	int ret;

	if (!u->timeout_ms)
		u->timeout_ms = LAB5_TIMEOUT_MS;
	ret = lab5_parse_addr(local, 0, &src);
	if (ret)
		return ret;
	ret = lab5_parse_addr(group, 0, &u->group);
	if (ret)
		return ret;
	if (!IN_MULTICAST(ntohl(((struct sockaddr_in *)&u->group)->sin_addr.s_addr))) {
		rl_err("lab5: %s is not a multicast group (224.0.0.0/4; this lab uses 239.x.y.z)",
		       group);
		return -EINVAL;
	}
	u->ch = rdma_create_event_channel();
	if (!u->ch)
		return rl_fail("rdma_create_event_channel", errno, "for the group");
	if (rdma_create_id(u->ch, &u->id, u, RDMA_PS_UDP))
		return rl_fail("rdma_create_id", errno, "in RDMA_PS_UDP");
	return lab5_resolve_addr(u->id, u->ch, (struct sockaddr *)&src,
				 (struct sockaddr *)&u->group, u->timeout_ms);
}

int lab5_mc_join(struct lab5_ud *u, const char *local, const char *group, bool send_only)
{
	int ret = mc_bind(u, local, group);

	if (ret)
		return ret;
	/* TODO step 3
	 * Make the QP, and choose what must be ready before the join: a datagram
	 * that arrives before a receive is posted is lost. Then join as the member
	 * SEND_ONLY says, and aim sends where the join's event says the group is.
	 * Read: man rdma_join_multicast_ex, man rdma_get_cm_event (MULTICAST_JOIN).
	 */
	return rl_todo(3);
}

int lab5_mc_leave(struct lab5_ud *u)
{
	/* TODO step 3
	 * Leave the group while the QP and the id still exist: the leave detaches
	 * the QP and gives up the membership the join took.
	 * Read: man rdma_leave_multicast.
	 */
	return rl_todo(3);
}
