/*
 * srq_fixture.c: what a step 4 act builds around the lab's SRQ, with plain
 * rdma_cm and verbs: a listener on the test's address, one client's QP on
 * the SRQ, and a server's part of the work, taking completions and
 * freeing their slots, that the test judges the queue by. A failed
 * ck_assert here is the act's own set-up failing; the lab's results are
 * said, never judged, here.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "srq_fixture.h"

/* The act's wait for anything: a hang bound only. */
static int fx_wait_ms(void)
{
	return (int)(rl_test_timeout(5) * 1000);
}

void srq_fx_listen(struct srq_fx_server *f, uint16_t port)
{
	struct sockaddr_storage addr;

	memset(f, 0, sizeof(*f));
	f->ch = rdma_create_event_channel();
	ck_assert_msg(f->ch, "fixture: rdma_create_event_channel failed: %s", strerror(errno));
	ck_assert_msg(rdma_create_id(f->ch, &f->listen, NULL, RDMA_PS_TCP) == 0,
		      "fixture: rdma_create_id failed: %s", strerror(errno));
	ck_assert_msg(lab5_parse_addr(rl_test_addr(), port, &addr) == 0, "fixture: no address");
	ck_assert_msg(rdma_bind_addr(f->listen, (struct sockaddr *)&addr) == 0,
		      "fixture: rdma_bind_addr to port %u failed: %s", port, strerror(errno));
	ck_assert_msg(rdma_listen(f->listen, 4) == 0, "fixture: rdma_listen failed: %s",
		      strerror(errno));
	f->pd = ibv_alloc_pd(f->listen->verbs);
	ck_assert_msg(f->pd, "fixture: ibv_alloc_pd failed: %s", strerror(errno));
	f->cq = ibv_create_cq(f->listen->verbs, 4 * LAB5_SRQ_DEPTH + 16, NULL, NULL, 0);
	ck_assert_msg(f->cq, "fixture: ibv_create_cq failed: %s", strerror(errno));
	f->go_mr = ibv_reg_mr(f->pd, f->go, sizeof(f->go), 0);
	ck_assert_msg(f->go_mr, "fixture: ibv_reg_mr failed: %s", strerror(errno));
	ck_assert_msg(fcntl(f->listen->verbs->async_fd, F_SETFL, O_NONBLOCK) == 0,
		      "fixture: O_NONBLOCK on the async fd: %s", strerror(errno));
}

void srq_fx_accept(struct srq_fx_server *f, struct ibv_srq *srq, uint8_t rnr_retry)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = f->cq,
		.recv_cq = f->cq,
		.srq = srq,
		.cap = { .max_send_wr = 2, .max_send_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct rdma_conn_param param = { .rnr_retry_count = rnr_retry };
	struct rdma_cm_event ev;

	ck_assert_msg(lab5_wait_event(f->ch, RDMA_CM_EVENT_CONNECT_REQUEST, &ev, fx_wait_ms()) == 0,
		      "fixture: the reference client did not connect");
	f->id = ev.id;
	ck_assert_msg(rdma_create_qp(f->id, f->pd, &attr) == 0,
		      "fixture: rdma_create_qp on the SRQ failed: %s", strerror(errno));
	ck_assert_msg(rdma_accept(f->id, &param) == 0, "fixture: rdma_accept failed: %s",
		      strerror(errno));
	ck_assert_msg(lab5_wait_event(f->ch, RDMA_CM_EVENT_ESTABLISHED, NULL, fx_wait_ms()) == 0,
		      "fixture: the reference client's connection was not established");
}
RL_HIDDEN(srq_fx_accept, 5);

void srq_fx_go(struct srq_fx_server *f)
{
	struct ibv_sge sge = { .addr = (uintptr_t)f->go,
			       .length = sizeof(f->go),
			       .lkey = f->go_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0x60,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	ck_assert_msg(ibv_post_send(f->id->qp, &wr, &bad) == 0, "fixture: the go failed");
}

/* The async events waiting now, acknowledged: how many said the SRQ's limit was reached. */
static int fx_limit_events(struct srq_fx_server *f)
{
	struct ibv_async_event ev;
	int n = 0;

	while (ibv_get_async_event(f->listen->verbs, &ev) == 0) {
		n += ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED;
		ibv_ack_async_event(&ev);
	}
	return n;
}

/* Whether the client left (its DISCONNECTED came), waiting at most MS. */
static bool fx_client_left(struct srq_fx_server *f, int ms)
{
	struct pollfd p = { .fd = f->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	bool left = false;

	if (poll(&p, 1, ms) == 1 && rdma_get_cm_event(f->ch, &ev) == 0) {
		left = ev->event == RDMA_CM_EVENT_DISCONNECTED;
		rdma_ack_cm_event(ev);
	}
	return left;
}

void srq_fx_take(struct srq_fx_server *f, struct lab5_srq *s, uint32_t want, const char *prefix)
{
	static uint32_t next_seq; /* the client's messages arrive in order */
	long until = srq_fx_now_ms() + fx_wait_ms();
	int completions = 0, bad = 0, events = 0, n;
	bool left = false;
	struct ibv_wc wc;
	char name[64];

	for (;;) {
		while ((n = ibv_poll_cq(f->cq, 1, &wc)) == 1) {
			uint32_t head[2];

			if (!(wc.opcode & IBV_WC_RECV))
				continue; /* the go */
			completions++;
			if (wc.status != IBV_WC_SUCCESS || wc.wr_id >= s->depth ||
			    s->free[wc.wr_id]) {
				bad++;
				continue;
			}
			memcpy(head, s->buf + wc.wr_id * LAB5_SRQ_MSG, sizeof(head));
			bad += head[1] != next_seq || wc.byte_len < SRQ_FX_MSG_MIN;
			next_seq++;
			s->free[wc.wr_id] = true;
			s->posted--;
		}
		ck_assert_msg(n == 0, "fixture: ibv_poll_cq failed");
		events += fx_limit_events(f);
		if ((want && (uint32_t)completions >= want) || left || srq_fx_now_ms() > until)
			break;
		if (!want)
			left = fx_client_left(f, 1);
	}
	/* An event raised with the last completion may still be on its way. */
	if (events == 0) {
		struct pollfd p = { .fd = f->listen->verbs->async_fd, .events = POLLIN };

		poll(&p, 1, 200);
		events += fx_limit_events(f);
	}
	snprintf(name, sizeof(name), "%s_completions", prefix);
	rl_say_int(name, completions);
	snprintf(name, sizeof(name), "%s_bad_slots", prefix);
	rl_say_int(name, bad);
	snprintf(name, sizeof(name), "%s_limit_events", prefix);
	rl_say_int(name, events);
}
RL_HIDDEN(srq_fx_take, 5);

void srq_fx_say_srq(struct ibv_srq *srq, const char *prefix)
{
	struct ibv_srq_attr attr;
	bool ok = srq && ibv_query_srq(srq, &attr) == 0;
	char name[64];

	snprintf(name, sizeof(name), "%s_max_wr", prefix);
	rl_say_int(name, ok ? (long long)attr.max_wr : -1);
	snprintf(name, sizeof(name), "%s_limit", prefix);
	rl_say_int(name, ok ? (long long)attr.srq_limit : -1);
}

void srq_fx_drop_client(struct srq_fx_server *f)
{
	if (f->id) {
		if (f->id->qp)
			rdma_destroy_qp(f->id);
		rdma_destroy_id(f->id);
		f->id = NULL;
	}
}

void srq_fx_close(struct srq_fx_server *f)
{
	if (f->id) {
		if (f->id->qp)
			rdma_destroy_qp(f->id);
		rdma_destroy_id(f->id);
	}
	if (f->go_mr)
		ibv_dereg_mr(f->go_mr);
	if (f->cq)
		ibv_destroy_cq(f->cq);
	if (f->pd)
		ibv_dealloc_pd(f->pd);
	if (f->listen)
		rdma_destroy_id(f->listen);
	if (f->ch)
		rdma_destroy_event_channel(f->ch);
	memset(f, 0, sizeof(*f));
}
