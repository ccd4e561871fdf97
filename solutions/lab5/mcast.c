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
	/* BEGIN SOLUTION step 3
	 * Make the QP, and choose what must be ready before the join: a datagram
	 * that arrives before a receive is posted is lost. Then join as the member
	 * SEND_ONLY says, and aim sends where the join's event says the group is.
	 * Read: man rdma_join_multicast_ex, man rdma_get_cm_event (MULTICAST_JOIN).
	 * stub: return rl_todo(3);
	 */
	struct rdma_cm_join_mc_attr_ex mc = { 0 };
	struct rdma_cm_event ev;
	int i;

	ret = lab5_ud_create_qp(u);
	if (ret)
		return ret;
	for (i = 0; !send_only && i < LAB5_SLOTS; i++) {
		ret = lab5_post_recv_scatter(u, i);
		if (ret)
			return ret;
	}
	mc.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS;
	mc.addr = (struct sockaddr *)&u->group;
	mc.join_flags = send_only ? RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER :
				    RDMA_MC_JOIN_FLAG_FULLMEMBER;
	if (rdma_join_multicast_ex(u->id, &mc, u))
		return rl_fail("rdma_join_multicast_ex", errno, "%s", group);
	u->joined = true;
	u->send_only = send_only;
	ret = lab5_wait_event(u->ch, RDMA_CM_EVENT_MULTICAST_JOIN, &ev, u->timeout_ms);
	if (ret)
		return ret;
	u->ah = ibv_create_ah(u->pd, &ev.param.ud.ah_attr);
	if (!u->ah)
		return rl_fail("ibv_create_ah", errno, "to the group %s", group);
	u->remote_qpn = ev.param.ud.qp_num;
	u->remote_qkey = ev.param.ud.qkey;
	return 0;
	/* END SOLUTION */
}

int lab5_mc_leave(struct lab5_ud *u)
{
	/* BEGIN SOLUTION step 3
	 * Leave the group while the QP and the id still exist: the leave detaches
	 * the QP and gives up the membership the join took.
	 * Read: man rdma_leave_multicast.
	 * stub: return rl_todo(3);
	 */
	int ret = 0;

	if (!u->joined)
		return 0;
	if (rdma_leave_multicast(u->id, (struct sockaddr *)&u->group))
		ret = rl_fail("rdma_leave_multicast", errno, "the group");
	u->joined = false;
	return ret;
	/* END SOLUTION */
}
