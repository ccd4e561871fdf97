/*
 * test_fw_cm.c: an rdma_cm server (a thread) and client (the test) on
 * RDMALAB_ADDR with a free port connect, swap private data, move one
 * message, and disconnect cleanly; failures come back as errors, not hangs.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "rdmalab.h"

#define TIMEOUT_MS 10000
#define MSG_SIZE 64

static const char client_hello[] = "client hello";
static const char server_hello[] = "server hello";

/* Verbs resources of one connection. */
struct conn {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char buf[MSG_SIZE];
};

/* What the server thread needs, and what it found. */
struct server {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id;
	int status; /* 0, or the step that failed */
	char got[MSG_SIZE];
	char got_private[sizeof(client_hello)];
};

/* PD, CQ, MR and QP on ID's device; 0 or -1. */
static int conn_up(struct conn *c, struct rdma_cm_id *id)
{
	c->pd = rl_alloc_pd(id->verbs);
	if (!c->pd)
		return -1;
	c->cq = rl_create_cq(id->verbs, 8, NULL);
	if (!c->cq)
		return -1;
	c->mr = rl_reg_mr(c->pd, c->buf, sizeof(c->buf), IBV_ACCESS_LOCAL_WRITE);
	if (!c->mr)
		return -1;
	return rl_cm_create_qp(id, c->pd, c->cq, 4);
}

static void conn_down(struct conn *c, struct rdma_cm_id *id)
{
	rl_cm_destroy(id);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
}

/* The server: accept one client, receive one message, wait for its disconnect. */
static void *server_main(void *arg)
{
	struct server *srv = arg;
	struct conn c = { 0 };
	struct rl_cm_event ev;
	struct ibv_wc wc;

	srv->status = 1;
	if (rl_cm_get_request(srv->ch, TIMEOUT_MS, &ev))
		return NULL;
	memcpy(srv->got_private, ev.private_data, sizeof(srv->got_private));
	srv->status = 2;
	if (conn_up(&c, ev.id) || rl_post_recv(ev.id->qp, c.mr, c.buf, sizeof(c.buf), 9))
		goto out;
	srv->status = 3;
	if (rl_cm_accept(ev.id, server_hello, sizeof(server_hello), TIMEOUT_MS))
		goto out;
	srv->status = 4;
	if (rl_poll_cq(c.cq, &wc, TIMEOUT_MS))
		goto out;
	memcpy(srv->got, c.buf, sizeof(srv->got));
	srv->status = 5;
	if (rl_cm_wait_event(srv->ch, RDMA_CM_EVENT_DISCONNECTED, TIMEOUT_MS, NULL))
		goto out;
	srv->status = 0;
out:
	conn_down(&c, ev.id);
	return NULL;
}

START_TEST(test_client_and_server_connect_exchange_and_disconnect)
{
	static const char *const server_steps[] = {
		"ok",     "wait CONNECT_REQUEST", "set up verbs",
		"accept", "receive the message",  "wait DISCONNECTED",
	};
	struct server srv = { 0 };
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct rl_cm_event ev;
	struct conn c = { 0 };
	struct ibv_wc wc;
	pthread_t thread;
	uint16_t port;

	srv.ch = rl_cm_create_channel();
	ck_assert_msg(srv.ch, "expected an event channel (see stderr)");
	ck_assert_int_eq(rl_cm_listen(srv.ch, rl_test_addr(), 0, &srv.listen_id, &port), 0);
	ck_assert_msg(port != 0, "expected a bound port, got 0");
	ck_assert_int_eq(pthread_create(&thread, NULL, server_main, &srv), 0);

	ch = rl_cm_create_channel();
	ck_assert_ptr_nonnull(ch);
	ck_assert_msg(rl_cm_resolve(ch, rl_test_addr(), port, TIMEOUT_MS, &id) == 0,
		      "client: resolve %s:%u: expected 0 (see stderr)", rl_test_addr(), port);
	ck_assert_msg(conn_up(&c, id) == 0, "client: expected verbs resources (see stderr)");
	ck_assert_msg(rl_cm_connect(id, client_hello, sizeof(client_hello), TIMEOUT_MS, &ev) == 0,
		      "client: connect: expected ESTABLISHED (see stderr)");
	ck_assert_msg(!memcmp(ev.private_data, server_hello, sizeof(server_hello)),
		      "client: expected private data '%s', got '%.*s'", server_hello,
		      (int)sizeof(server_hello), (const char *)ev.private_data);
	strcpy(c.buf, "first message");
	ck_assert_int_eq(rl_post_send_msg(id->qp, c.mr, c.buf, sizeof(c.buf), 1), 0);
	ck_assert_msg(rl_poll_cq(c.cq, &wc, TIMEOUT_MS) == 0, "client: send: expected success");
	ck_assert_msg(rl_cm_disconnect(id, TIMEOUT_MS) == 0,
		      "client: disconnect: expected DISCONNECTED (see stderr)");

	pthread_join(thread, NULL);
	conn_down(&c, id);
	rdma_destroy_event_channel(ch);
	rl_cm_destroy(srv.listen_id);
	rdma_destroy_event_channel(srv.ch);
	ck_assert_msg(srv.status == 0, "server: failed at step '%s' (see stderr)",
		      server_steps[srv.status]);
	ck_assert_msg(!strcmp(srv.got_private, client_hello),
		      "server: expected private data '%s', got '%s'", client_hello,
		      srv.got_private);
	ck_assert_msg(!strcmp(srv.got, "first message"),
		      "server: expected 'first message', got '%s'", srv.got);
}
END_TEST

START_TEST(test_connect_to_port_nobody_listens_on_fails)
{
	struct rdma_event_channel *ch = rl_cm_create_channel();
	struct rdma_cm_id *id;
	struct conn c = { 0 };
	int ret;

	ck_assert_ptr_nonnull(ch);
	/* Port 1 on our own address: resolvable, but nobody listens there. */
	ck_assert_int_eq(rl_cm_resolve(ch, rl_test_addr(), 1, TIMEOUT_MS, &id), 0);
	ck_assert_int_eq(conn_up(&c, id), 0);
	ret = rl_cm_connect(id, NULL, 0, TIMEOUT_MS, NULL);
	conn_down(&c, id);
	rdma_destroy_event_channel(ch);
	ck_assert_msg(ret != 0, "expected connect to fail (REJECTED or UNREACHABLE), got 0");
}
END_TEST

START_TEST(test_wait_event_times_out_on_idle_channel)
{
	struct rdma_event_channel *ch = rl_cm_create_channel();
	int ret;

	ck_assert_ptr_nonnull(ch);
	ret = rl_cm_wait_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST, 200, NULL);
	rdma_destroy_event_channel(ch);
	ck_assert_msg(ret == -ETIMEDOUT, "expected -ETIMEDOUT, got %d", ret);
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("framework rdma_cm");
	TCase *tc = tcase_create("cm");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_RDMA);
	tcase_add_test(tc, test_client_and_server_connect_exchange_and_disconnect);
	tcase_add_test(tc, test_connect_to_port_nobody_listens_on_fails);
	tcase_add_test(tc, test_wait_event_times_out_on_idle_channel);
	suite_add_tcase(s, tc);
	return s;
}
