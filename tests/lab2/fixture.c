/* fixture.c: plain-verbs and framework objects for the Lab 2 tests. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"

long fx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct ibv_context *fx_open(void)
{
	const char *dev = rl_test_device();
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	ck_assert_msg(list, "expected a device list, got NULL (%s)", strerror(errno));
	for (i = 0; list[i] && !ctx; i++)
		if (strcmp(ibv_get_device_name(list[i]), dev) == 0)
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	ck_assert_msg(ctx, "expected to open %s, could not", dev);
	return ctx;
}

static struct ibv_qp *fx_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {
			.max_send_wr = LAB2_QP_DEPTH,
			.max_recv_wr = LAB2_QP_DEPTH,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	ck_assert_msg(qp, "fixture: ibv_create_qp failed: %s", strerror(errno));
	return qp;
}

/* QP to RTS aimed at PEER on the same device, resending RNR-NAKed SENDs RNR_RETRY times. */
static void fx_connect(struct ibv_qp *qp, struct ibv_qp *peer, int rnr_retry)
{
	struct rl_qp_dest dest;
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = rnr_retry,
		.sq_psn = 0,
		.max_rd_atomic = 1,
	};
	int ret;

	ck_assert_int_eq(rl_qp_to_init(qp, rl_test_ib_port(),
				       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ),
			 0);
	ck_assert_int_eq(rl_qp_local_dest(peer, rl_test_ib_port(), rl_test_gid_index(), 0, &dest),
			 0);
	ck_assert_int_eq(rl_qp_to_rtr(qp, rl_test_ib_port(), rl_test_gid_index(), &dest), 0);
	ret = ibv_modify_qp(qp, &attr,
			    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	ck_assert_msg(ret == 0, "fixture: RTR->RTS failed: %s", strerror(ret));
}

void fx_pair_open(struct fx_pair *p, bool student_cq, int rnr_retry)
{
	struct lab2_conn *c = &p->c;
	int all = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

	memset(p, 0, sizeof(*p));
	c->timeout_ms = FX_TIMEOUT_MS;
	p->ctx = fx_open();
	c->pd = ibv_alloc_pd(p->ctx);
	ck_assert_msg(c->pd, "fixture: ibv_alloc_pd failed: %s", strerror(errno));
	if (student_cq) {
		fx_ok(lab2_create_cq(c, p->ctx), "lab2_create_cq", 2);
		ck_assert_msg(c->comp && c->cq, "expected lab2_create_cq to set c->comp and c->cq");
	} else {
		c->comp = ibv_create_comp_channel(p->ctx);
		ck_assert_msg(c->comp, "fixture: ibv_create_comp_channel failed");
		c->cq = ibv_create_cq(p->ctx, LAB2_CQ_DEPTH, NULL, c->comp, 0);
		ck_assert_msg(c->cq, "fixture: ibv_create_cq failed: %s", strerror(errno));
	}
	p->peer_cq = ibv_create_cq(p->ctx, LAB2_CQ_DEPTH, NULL, NULL, 0);
	ck_assert_msg(p->peer_cq, "fixture: ibv_create_cq failed: %s", strerror(errno));
	c->qp = fx_qp(c->pd, c->cq);
	p->peer_qp = fx_qp(c->pd, p->peer_cq);
	fx_connect(c->qp, p->peer_qp, rnr_retry);
	fx_connect(p->peer_qp, c->qp, 1);
	c->msg_mr = ibv_reg_mr(c->pd, &c->bufs, sizeof(c->bufs), IBV_ACCESS_LOCAL_WRITE);
	c->rdma_buf = aligned_alloc(4096, LAB2_RDMA_SIZE);
	p->peer_buf = aligned_alloc(4096, LAB2_RDMA_SIZE);
	ck_assert(c->rdma_buf && p->peer_buf);
	memset(c->rdma_buf, 0, LAB2_RDMA_SIZE);
	memset(p->peer_buf, 0, LAB2_RDMA_SIZE);
	c->rdma_mr = ibv_reg_mr(c->pd, c->rdma_buf, LAB2_RDMA_SIZE, all);
	p->peer_mr = ibv_reg_mr(c->pd, p->peer_buf, LAB2_RDMA_SIZE, all);
	ck_assert_msg(c->msg_mr && c->rdma_mr && p->peer_mr, "fixture: ibv_reg_mr failed: %s",
		      strerror(errno));
}

void fx_pair_close(struct fx_pair *p)
{
	struct lab2_conn *c = &p->c;

	ibv_destroy_qp(p->peer_qp);
	ibv_destroy_qp(c->qp);
	ibv_dereg_mr(p->peer_mr);
	ibv_dereg_mr(c->rdma_mr);
	ibv_dereg_mr(c->msg_mr);
	ibv_destroy_cq(p->peer_cq);
	ibv_destroy_cq(c->cq);
	ibv_destroy_comp_channel(c->comp);
	ibv_dealloc_pd(c->pd);
	ibv_close_device(p->ctx);
	free(p->peer_buf);
	free(c->rdma_buf);
}

void fx_peer_recv(struct fx_pair *p)
{
	ck_assert_int_eq(rl_post_recv(p->peer_qp, p->peer_mr, p->peer_buf, LAB2_RDMA_SIZE, 200), 0);
}

void fx_peer_send(struct fx_pair *p, const void *msg, uint32_t len)
{
	memcpy(p->peer_buf, msg, len);
	ck_assert_int_eq(rl_post_send_msg(p->peer_qp, p->peer_mr, p->peer_buf, len, 201), 0);
}

void fx_peer_rdma(struct fx_pair *p, enum ibv_wr_opcode op, uint32_t len, uint64_t addr,
		  uint32_t rkey)
{
	int ret = op == IBV_WR_RDMA_READ ?
			  rl_post_read(p->peer_qp, p->peer_mr, p->peer_buf, len, addr, rkey, 202) :
			  rl_post_write(p->peer_qp, p->peer_mr, p->peer_buf, len, addr, rkey, 202);

	ck_assert_int_eq(ret, 0);
}

void fx_wait(struct ibv_cq *cq, struct ibv_wc *wc)
{
	long end = fx_now_ms() + FX_TIMEOUT_MS;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
	} while (n == 0 && fx_now_ms() < end);
	ck_assert_msg(n == 1, "expected a completion within %d ms, got none", FX_TIMEOUT_MS);
}

void fx_cm_resources(struct lab2_conn *c)
{
	struct ibv_context *ctx = c->id->verbs;
	int i;

	c->pd = ibv_alloc_pd(ctx);
	c->comp = ibv_create_comp_channel(ctx);
	ck_assert_msg(c->pd && c->comp, "fixture: PD or channel failed: %s", strerror(errno));
	c->cq = ibv_create_cq(ctx, LAB2_CQ_DEPTH, NULL, c->comp, 0);
	ck_assert_msg(c->cq, "fixture: ibv_create_cq failed: %s", strerror(errno));
	ck_assert_int_eq(rl_cm_create_qp(c->id, c->pd, c->cq, LAB2_QP_DEPTH), 0);
	c->qp = c->id->qp;
	c->msg_mr = ibv_reg_mr(c->pd, &c->bufs, sizeof(c->bufs), IBV_ACCESS_LOCAL_WRITE);
	ck_assert_msg(c->msg_mr, "fixture: ibv_reg_mr failed: %s", strerror(errno));
	for (i = 0; i < LAB2_RECV_SLOTS; i++)
		ck_assert_int_eq(rl_post_recv(c->qp, c->msg_mr, c->bufs.recv[i], LAB2_MSG_MAX,
					      LAB2_WR_RECV + i),
				 0);
}

void fx_cm_client(struct lab2_conn *c, uint16_t port)
{
	memset(c, 0, sizeof(*c));
	c->timeout_ms = FX_TIMEOUT_MS;
	c->cm_ch = rl_cm_create_channel();
	ck_assert(c->cm_ch);
	ck_assert_int_eq(rl_cm_resolve(c->cm_ch, rl_test_addr(), port, FX_TIMEOUT_MS, &c->id), 0);
	fx_cm_resources(c);
	ck_assert_msg(rl_cm_connect(c->id, NULL, 0, FX_TIMEOUT_MS, NULL) == 0,
		      "fixture: could not connect to the reference server on port %u", port);
}

void fx_cm_server(struct lab2_conn *c, uint16_t port)
{
	struct rl_cm_event ev;

	memset(c, 0, sizeof(*c));
	c->timeout_ms = FX_TIMEOUT_MS;
	c->cm_ch = rl_cm_create_channel();
	ck_assert(c->cm_ch);
	ck_assert_int_eq(rl_cm_listen(c->cm_ch, NULL, port, &c->listen_id, NULL), 0);
	ck_assert_int_eq(rl_cm_get_request(c->cm_ch, FX_TIMEOUT_MS, &ev), 0);
	c->id = ev.id;
	fx_cm_resources(c);
	ck_assert_int_eq(rl_cm_accept(c->id, NULL, 0, FX_TIMEOUT_MS), 0);
}

void fx_cm_close(struct lab2_conn *c)
{
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->msg_mr)
		ibv_dereg_mr(c->msg_mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->comp)
		ibv_destroy_comp_channel(c->comp);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->listen_id)
		rdma_destroy_id(c->listen_id);
	if (c->cm_ch)
		rdma_destroy_event_channel(c->cm_ch);
	memset(c, 0, sizeof(*c));
}
