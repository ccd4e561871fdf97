/*
 * fixture.c: what a Lab 2 act builds around the step under test, with
 * plain verbs, rdma_cm and the framework, and how it says what it saw. A
 * failed ck_assert here is the act's own set-up failing (the test fails
 * with its message); the student's results are said, never judged, here.
 */
#define _GNU_SOURCE /* pthread_timedjoin_np */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture.h"

/*
 * The fixture's own version of a step, and the framework's, run around
 * the step under test in an act. Each is declared hidden (RL_HIDDEN,
 * tests/harness.h) in the acts of the step it does, so that the lab's
 * code cannot call it there: the framework's below (rl_cm_disconnect,
 * rl_post_send_msg and rl_post_read run in no act: hidden in every one),
 * the fixture's after each function. Where an act of a step needs the
 * kit's version of that step, it stays: fx_pair_build, declared for step
 * 1 (it resolves), makes the CQ and its channel and posts the receives in
 * the acts of steps 2 and 3 (each tests one of the step's functions with
 * the kit's others), and fx_pair_tell sends in step 3's (from its own
 * buffer, unsignaled: no lab2_post_send); each is a few lines of the
 * calls the step allows anyway. rl_reg_mr is the lab's to call. The
 * reference peer is hidden in reference.c.
 */
RL_HIDDEN(rl_cm_resolve, 1);
RL_HIDDEN(rl_cm_connect, 1);
RL_HIDDEN(rl_cm_listen, 1);
RL_HIDDEN(rl_cm_get_request, 1);
RL_HIDDEN(rl_cm_accept, 1);
RL_HIDDEN(rl_cm_wait_event, 1);
RL_HIDDEN(rl_post_recv, 3);
RL_HIDDEN(rl_post_write, 4);
RL_HIDDEN(rl_cm_destroy, 5);
RL_HIDDEN(rl_cm_disconnect, 0);
RL_HIDDEN(rl_post_send_msg, 0);
RL_HIDDEN(rl_post_read, 0);

bool fx_say_ret(const char *name, int ret)
{
	rl_say_int(name, ret);
	return ret == 0;
}

void fx_say_start(void)
{
	rl_say_int("start_ms", fx_now_ms());
}

void fx_say_event_left(struct rdma_event_channel *ch)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *event;
	int type = -1;

	if (poll(&pfd, 1, 200) == 1 && rdma_get_cm_event(ch, &event) == 0) {
		type = event->event;
		rdma_ack_cm_event(event);
	}
	rl_say_int("left_on_channel", type);
}

bool fx_poll(struct ibv_cq *cq, struct ibv_wc *wc)
{
	long end = fx_now_ms() + FX_TIMEOUT_MS;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
	} while (n == 0 && fx_now_ms() < end);
	return n == 1;
}
RL_HIDDEN(fx_poll, 2);

/* The message MR, and an RDMA buffer a READ may land in (no remote access: not the step's). */
static void fx_buffers(struct lab2_conn *c)
{
	c->msg_mr = ibv_reg_mr(c->pd, &c->bufs, sizeof(c->bufs), IBV_ACCESS_LOCAL_WRITE);
	c->rdma_buf = aligned_alloc(4096, LAB2_RDMA_SIZE);
	ck_assert_msg(c->msg_mr && c->rdma_buf, "fixture: ibv_reg_mr failed: %s", strerror(errno));
	memset(c->rdma_buf, 0, LAB2_RDMA_SIZE);
	c->rdma_mr = ibv_reg_mr(c->pd, c->rdma_buf, LAB2_RDMA_SIZE, IBV_ACCESS_LOCAL_WRITE);
	ck_assert_msg(c->rdma_mr, "fixture: ibv_reg_mr failed: %s", strerror(errno));
}

bool fx_pair_build(struct fx_pair *p, const struct fx_pair_opts *o)
{
	struct lab2_conn *c = &p->c;
	struct ibv_recv_wr wr, *bad;
	struct ibv_context *ctx;
	struct ibv_sge sge;
	int i;

	memset(p, 0, sizeof(*p));
	c->timeout_ms = FX_TIMEOUT_MS;
	p->ch = rl_cm_create_channel();
	ck_assert_msg(p->ch, "fixture: no rdma_cm channel");
	ck_assert_msg(rl_cm_resolve(p->ch, rl_test_addr(), o->port, FX_TIMEOUT_MS, &p->id) == 0,
		      "fixture: could not resolve the reference peer on port %u", o->port);
	ctx = p->id->verbs;
	c->pd = ibv_alloc_pd(ctx);
	ck_assert_msg(c->pd, "fixture: ibv_alloc_pd failed: %s", strerror(errno));
	if (o->student_cq) {
		if (!fx_say_ret("lab2_create_cq", lab2_create_cq(c, ctx)))
			return false;
		rl_say_int("made_cq", c->comp && c->cq);
		if (!c->comp || !c->cq)
			return false;
	} else {
		c->comp = ibv_create_comp_channel(ctx);
		ck_assert_msg(c->comp, "fixture: ibv_create_comp_channel failed");
		c->cq = ibv_create_cq(ctx, LAB2_CQ_DEPTH, NULL, c->comp, 0);
		ck_assert_msg(c->cq, "fixture: ibv_create_cq failed: %s", strerror(errno));
	}
	ck_assert_int_eq(rl_cm_create_qp(p->id, c->pd, c->cq, LAB2_QP_DEPTH), 0);
	c->qp = p->id->qp;
	fx_buffers(c);
	p->tell_mr = ibv_reg_mr(c->pd, p->tell, sizeof(p->tell), 0);
	ck_assert_msg(p->tell_mr, "fixture: ibv_reg_mr failed: %s", strerror(errno));
	/* With plain verbs: rl_post_recv, step 3's work, is hidden in step 3's acts. */
	for (i = 0; i < o->recvs; i++) {
		sge = (struct ibv_sge){
			.addr = (uintptr_t)c->bufs.recv[i],
			.length = LAB2_MSG_MAX,
			.lkey = c->msg_mr->lkey,
		};
		wr = (struct ibv_recv_wr){
			.wr_id = o->recv_wr_id ? o->recv_wr_id[i] : (uint64_t)LAB2_WR_RECV + i,
			.sg_list = &sge,
			.num_sge = 1,
		};
		ck_assert_msg(ibv_post_recv(c->qp, &wr, &bad) == 0,
			      "fixture: ibv_post_recv failed");
	}
	return true;
}
RL_HIDDEN(fx_pair_build, 1);

void fx_pair_connect(struct fx_pair *p, const struct fx_pair_opts *o)
{
	struct rdma_conn_param param = {
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = o->peer_rnr_retry,
	};
	struct rl_cm_event ev;
	struct rl_wire w;

	if (o->arm_cq)
		ck_assert_int_eq(ibv_req_notify_cq(p->c.cq, 0), 0);
	ck_assert_msg(rdma_connect(p->id, &param) == 0, "fixture: rdma_connect failed: %s",
		      strerror(errno));
	ck_assert_msg(rl_cm_wait_event(p->ch, RDMA_CM_EVENT_ESTABLISHED, FX_TIMEOUT_MS, &ev) == 0,
		      "fixture: could not connect to the reference peer on port %u", o->port);
	/* The peer's private data: its RDMA buffer's address and rkey. */
	rl_wire_reader(&w, ev.private_data, ev.private_len);
	p->peer_addr = rl_wire_get_u64(&w);
	p->peer_rkey = rl_wire_get_u32(&w);
}
RL_HIDDEN(fx_pair_connect, 1);

bool fx_pair_open(struct fx_pair *p, const struct fx_pair_opts *o)
{
	if (!fx_pair_build(p, o))
		return false;
	fx_pair_connect(p, o);
	return true;
}
RL_HIDDEN(fx_pair_open, 1);

void fx_pair_tell(struct fx_pair *p, const void *msg, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)p->tell,
		.length = len,
		.lkey = p->tell_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 0x7e11,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
	};
	struct ibv_send_wr *bad;

	ck_assert(len <= sizeof(p->tell));
	memcpy(p->tell, msg, len);
	ck_assert_msg(ibv_post_send(p->c.qp, &wr, &bad) == 0, "fixture: its SEND failed");
}

void fx_pair_close_if_acked(struct fx_pair *p, unsigned int before)
{
	if (p->c.cq && p->c.cq->comp_events_completed > before)
		fx_pair_close(p);
}

void fx_pair_close(struct fx_pair *p)
{
	struct lab2_conn *c = &p->c;

	rl_cm_destroy(p->id);
	if (p->tell_mr)
		ibv_dereg_mr(p->tell_mr);
	if (c->rdma_mr)
		ibv_dereg_mr(c->rdma_mr);
	if (c->msg_mr)
		ibv_dereg_mr(c->msg_mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->comp)
		ibv_destroy_comp_channel(c->comp);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (p->ch)
		rdma_destroy_event_channel(p->ch);
	free(c->rdma_buf);
	memset(p, 0, sizeof(*p));
}
RL_HIDDEN(fx_pair_close, 5);

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
RL_HIDDEN(fx_cm_resources, 2);

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
RL_HIDDEN(fx_cm_client, 1);

void fx_cm_server(struct lab2_conn *c, uint16_t port)
{
	struct rl_cm_event ev;

	memset(c, 0, sizeof(*c));
	c->timeout_ms = FX_TIMEOUT_MS;
	c->cm_ch = rl_cm_create_channel();
	ck_assert(c->cm_ch);
	ck_assert_int_eq(rl_cm_listen(c->cm_ch, NULL, port, &c->listen_id, NULL), 0);
	ck_assert_msg(rl_cm_get_request(c->cm_ch, FX_TIMEOUT_MS, &ev) == 0,
		      "fixture: the reference client did not come to port %u", port);
	c->id = ev.id;
	fx_cm_resources(c);
	ck_assert_int_eq(rl_cm_accept(c->id, NULL, 0, FX_TIMEOUT_MS), 0);
}
RL_HIDDEN(fx_cm_server, 1);

static void *destroy_id(void *id)
{
	rdma_destroy_id(id);
	return NULL;
}

/* rdma_destroy_id(ID) in a thread of its own: whether it returned within FX_ID_GONE_MS. */
static bool id_destroyed_in_time(struct rdma_cm_id *id)
{
	struct timespec until;
	pthread_t t;

	if (!id)
		return true;
	ck_assert(pthread_create(&t, NULL, destroy_id, id) == 0);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += FX_ID_GONE_MS / 1000;
	return pthread_timedjoin_np(t, NULL, &until) == 0;
}

bool fx_cm_close_bounded(struct lab2_conn *c)
{
	struct rdma_cm_id *id = c->id, *listen_id = c->listen_id;
	struct rdma_event_channel *ch = c->cm_ch;
	bool gone;

	if (id && id->qp)
		rdma_destroy_qp(id);
	c->id = c->listen_id = NULL;
	c->cm_ch = NULL;
	fx_cm_close(c); /* the rest, as ever */
	gone = id_destroyed_in_time(id) && id_destroyed_in_time(listen_id);
	/* An id still waiting holds its channel: then the exit frees both. */
	if (gone && ch)
		rdma_destroy_event_channel(ch);
	return gone;
}

void fx_cm_close(struct lab2_conn *c)
{
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->rdma_mr)
		ibv_dereg_mr(c->rdma_mr);
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
	free(c->rdma_buf);
	memset(c, 0, sizeof(*c));
}
RL_HIDDEN(fx_cm_close, 5);
