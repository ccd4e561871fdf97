/*
 * verbs.c: bring up verbs resources (PD, CQ, MR, RC QP) and move an RC QP
 * through RESET -> INIT -> RTR -> RTS, one helper per step, so a lab can do
 * any one step by hand and call the framework for the rest.
 */
#include <errno.h>

#include "rdmalab.h"

/* Allocate a protection domain on CTX. */
struct ibv_pd *rl_alloc_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);

	if (!pd)
		rl_fail("ibv_alloc_pd", errno, "on %s", ibv_get_device_name(ctx->device));
	return pd;
}

/* Create a CQ of DEPTH entries; CH may be NULL (no completion events). */
struct ibv_cq *rl_create_cq(struct ibv_context *ctx, int depth, struct ibv_comp_channel *ch)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, depth, NULL, ch, 0);

	if (!cq)
		rl_fail("ibv_create_cq", errno, "of %d entries on %s", depth,
			ibv_get_device_name(ctx->device));
	return cq;
}

/* Register LEN bytes at BUF with ACCESS (IBV_ACCESS_* flags). */
struct ibv_mr *rl_reg_mr(struct ibv_pd *pd, void *buf, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, access);

	if (!mr)
		rl_fail("ibv_reg_mr", errno, "%zu bytes at %p (access 0x%x)", len, buf, access);
	else
		rl_debug("registered %zu bytes at %p: lkey 0x%x rkey 0x%x", len, buf, mr->lkey,
			 mr->rkey);
	return mr;
}

/* The attributes of an RC QP with DEPTH send and receive slots of one SGE each. */
struct ibv_qp_init_attr rl_rc_qp_init_attr(struct ibv_cq *send_cq, struct ibv_cq *recv_cq,
					   int depth)
{
	return (struct ibv_qp_init_attr){
		.send_cq = send_cq,
		.recv_cq = recv_cq,
		.cap = {
			.max_send_wr = depth,
			.max_recv_wr = depth,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
	};
}

/* Create an RC QP with DEPTH send and receive slots of one SGE each. */
struct ibv_qp *rl_create_rc_qp(struct ibv_pd *pd, struct ibv_cq *send_cq, struct ibv_cq *recv_cq,
			       int depth)
{
	struct ibv_qp_init_attr init_attr = rl_rc_qp_init_attr(send_cq, recv_cq, depth);
	struct ibv_qp *qp = ibv_create_qp(pd, &init_attr);

	if (!qp)
		rl_fail("ibv_create_qp", errno, "RC with %d slots", depth);
	else
		rl_debug("created RC QP 0x%x", qp->qp_num);
	return qp;
}

/*
 * Fill DEST with what the peer needs to reach QP: its number, the first
 * PSN it will send, and the LID and GID of PORT / GID_INDEX.
 */
int rl_qp_local_dest(struct ibv_qp *qp, uint8_t port, int gid_index, uint32_t psn,
		     struct rl_qp_dest *dest)
{
	struct ibv_port_attr port_attr;

	if (ibv_query_port(qp->context, port, &port_attr))
		return rl_fail("ibv_query_port", errno, "port %u", port);
	*dest = (struct rl_qp_dest){
		.qpn = qp->qp_num,
		.psn = psn & 0xffffff,
		.lid = port_attr.lid,
	};
	if (gid_index >= 0 && ibv_query_gid(qp->context, port, gid_index, &dest->gid))
		return rl_fail("ibv_query_gid", EINVAL, "index %d on port %u", gid_index, port);
	return 0;
}

/* RESET -> INIT on PORT, letting the peer do what ACCESS allows. */
int rl_qp_to_init(struct ibv_qp *qp, uint8_t port, int access)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = port,
		.qp_access_flags = access,
	};
	int mask = IBV_QP_STATE |       /* to INIT */
		   IBV_QP_PKEY_INDEX |  /* partition key 0: the default partition */
		   IBV_QP_PORT |        /* which port of the device the QP uses */
		   IBV_QP_ACCESS_FLAGS; /* what the peer may do to our memory */
	int ret = ibv_modify_qp(qp, &attr, mask);

	if (ret)
		return rl_fail("ibv_modify_qp INIT", ret, "QP 0x%x port %u", qp->qp_num, port);
	return 0;
}

/*
 * INIT -> RTR: aim QP at REMOTE. GID_INDEX is our source GID, used (with a
 * global route header) whenever the remote GID is set, as RoCE requires.
 */
int rl_qp_to_rtr(struct ibv_qp *qp, uint8_t port, int gid_index, const struct rl_qp_dest *remote)
{
	struct ibv_port_attr port_attr;
	struct ibv_qp_attr attr;
	int mask, ret;

	if (ibv_query_port(qp->context, port, &port_attr))
		return rl_fail("ibv_query_port", errno, "port %u", port);
	attr = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR,
		.path_mtu = port_attr.active_mtu,
		.dest_qp_num = remote->qpn,
		.rq_psn = remote->psn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = RL_MIN_RNR_TIMER,
		.ah_attr = {
			.dlid = remote->lid,
			.sl = 0,
			.src_path_bits = 0,
			.port_num = port,
		},
	};
	if (remote->gid.global.interface_id || remote->gid.global.subnet_prefix) {
		attr.ah_attr.is_global = 1;
		attr.ah_attr.grh = (struct ibv_global_route){
			.dgid = remote->gid,
			.sgid_index = gid_index,
			.hop_limit = 1,
		};
	}
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
}

/* RTR -> RTS: start sending at PSN. */
int rl_qp_to_rts(struct ibv_qp *qp, uint32_t psn)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = RL_RNR_RETRY,
		.sq_psn = psn & 0xffffff,
		.max_rd_atomic = 1,
	};
	int mask = IBV_QP_STATE |           /* to RTS: ready to send */
		   IBV_QP_TIMEOUT |         /* ack timeout: 4.096 us * 2^14, about 67 ms */
		   IBV_QP_RETRY_CNT |       /* resends before giving up on a lost packet */
		   IBV_QP_RNR_RETRY |       /* resends while the peer has no receive posted */
		   IBV_QP_SQ_PSN |          /* first PSN we send */
		   IBV_QP_MAX_QP_RD_ATOMIC; /* RDMA reads we may have in flight */
	int ret = ibv_modify_qp(qp, &attr, mask);

	if (ret)
		return rl_fail("ibv_modify_qp RTS", ret, "QP 0x%x", qp->qp_num);
	return 0;
}
