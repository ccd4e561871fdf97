/*
 * test_smoke.c: proves the RDMA environment works end to end with real verbs:
 * open the device, connect two RC QPs to each other on it (loopback), then one
 * send/recv and one RDMA write, data checked. Raw verbs only, so that a failure
 * here points at the environment, not at the kit's framework.
 */
#include <infiniband/verbs.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../harness.h"

#define SMOKE_BUF_SIZE 4096

struct smoke {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[2];
	struct ibv_mr *mr[2];
	char buf[2][SMOKE_BUF_SIZE];
	union ibv_gid gid;
	enum ibv_mtu mtu;
};

static struct ibv_context *smoke_open(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	ck_assert_msg(list, "ibv_get_device_list failed: %s", strerror(errno));
	for (int i = 0; list[i]; i++)
		if (strcmp(ibv_get_device_name(list[i]), name) == 0)
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	ck_assert_msg(ctx, "expected to open RDMA device %s, got none", name);
	return ctx;
}

static void smoke_qp_to_rts(struct smoke *s, struct ibv_qp *qp, uint32_t dest_qpn, int gid_index)
{
	struct ibv_qp_attr init = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	struct ibv_qp_attr rtr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = s->mtu,
		.dest_qp_num = dest_qpn,
		.rq_psn = 0,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.grh = { .dgid = s->gid, .sgid_index = gid_index, .hop_limit = 1 },
			.port_num = 1,
		},
	};
	struct ibv_qp_attr rts = {
		.qp_state = IBV_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.sq_psn = 0,
		.max_rd_atomic = 1,
	};
	int err;

	err = ibv_modify_qp(qp, &init,
			    IBV_QP_STATE |                /* to INIT */
				    IBV_QP_PKEY_INDEX |   /* partition key 0 */
				    IBV_QP_PORT |         /* port 1 */
				    IBV_QP_ACCESS_FLAGS); /* what the peer may do to our MRs */
	ck_assert_msg(err == 0, "modify QP to INIT: expected 0, got %s", strerror(err));
	err = ibv_modify_qp(
		qp, &rtr,
		IBV_QP_STATE |                      /* to RTR */
			IBV_QP_AV |                 /* the path to the peer: its GID */
			IBV_QP_PATH_MTU |           /* the port's active MTU */
			IBV_QP_DEST_QPN |           /* the peer's QP number */
			IBV_QP_RQ_PSN |             /* the first PSN we expect */
			IBV_QP_MAX_DEST_RD_ATOMIC | /* reads the peer may have pending */
			IBV_QP_MIN_RNR_TIMER);      /* how long the peer backs off on RNR */
	ck_assert_msg(err == 0, "modify QP to RTR (GID index %d): expected 0, got %s", gid_index,
		      strerror(err));
	err = ibv_modify_qp(qp, &rts,
			    IBV_QP_STATE |                    /* to RTS */
				    IBV_QP_TIMEOUT |          /* ack timeout */
				    IBV_QP_RETRY_CNT |        /* retries on timeout */
				    IBV_QP_RNR_RETRY |        /* retries on receiver not ready */
				    IBV_QP_SQ_PSN |           /* the first PSN we send */
				    IBV_QP_MAX_QP_RD_ATOMIC); /* reads we may have pending */
	ck_assert_msg(err == 0, "modify QP to RTS: expected 0, got %s", strerror(err));
}

/* Bring up one PD, one CQ, two buffers and two RC QPs connected to each other. */
static void smoke_setup(struct smoke *s)
{
	int gid_index = rl_test_gid_index();
	struct ibv_port_attr port;

	memset(s, 0, sizeof(*s));
	s->ctx = smoke_open(rl_test_device());
	ck_assert_msg(ibv_query_port(s->ctx, 1, &port) == 0, "ibv_query_port failed");
	ck_assert_msg(port.state == IBV_PORT_ACTIVE, "expected port 1 ACTIVE, got state %d",
		      port.state);
	s->mtu = port.active_mtu;
	ck_assert_msg(ibv_query_gid(s->ctx, 1, gid_index, &s->gid) == 0,
		      "ibv_query_gid index %d failed", gid_index);
	s->pd = ibv_alloc_pd(s->ctx);
	ck_assert_msg(s->pd, "ibv_alloc_pd failed");
	s->cq = ibv_create_cq(s->ctx, 16, NULL, NULL, 0);
	ck_assert_msg(s->cq, "ibv_create_cq failed");
	for (int i = 0; i < 2; i++) {
		struct ibv_qp_init_attr attr = {
			.send_cq = s->cq,
			.recv_cq = s->cq,
			.cap = { .max_send_wr = 4,
				 .max_recv_wr = 4,
				 .max_send_sge = 1,
				 .max_recv_sge = 1 },
			.qp_type = IBV_QPT_RC,
		};

		s->mr[i] = ibv_reg_mr(s->pd, s->buf[i], SMOKE_BUF_SIZE,
				      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		ck_assert_msg(s->mr[i], "ibv_reg_mr failed: %s (memlock limit?)", strerror(errno));
		s->qp[i] = ibv_create_qp(s->pd, &attr);
		ck_assert_msg(s->qp[i], "ibv_create_qp failed: %s", strerror(errno));
	}
	smoke_qp_to_rts(s, s->qp[0], s->qp[1]->qp_num, gid_index);
	smoke_qp_to_rts(s, s->qp[1], s->qp[0]->qp_num, gid_index);
}

static void smoke_teardown(struct smoke *s)
{
	for (int i = 0; i < 2; i++) {
		ck_assert(ibv_destroy_qp(s->qp[i]) == 0);
		ck_assert(ibv_dereg_mr(s->mr[i]) == 0);
	}
	ck_assert(ibv_destroy_cq(s->cq) == 0);
	ck_assert(ibv_dealloc_pd(s->pd) == 0);
	ck_assert(ibv_close_device(s->ctx) == 0);
}

/* Wait for one completion with wr_id, for at most 5 s; fail on any error. */
static void smoke_wait(struct smoke *s, uint64_t wr_id)
{
	struct timespec start, now;
	struct ibv_wc wc;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		n = ibv_poll_cq(s->cq, 1, &wc);
		ck_assert_msg(n >= 0, "ibv_poll_cq failed");
		if (n == 1)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		ck_assert_msg(now.tv_sec - start.tv_sec < 5,
			      "no completion for wr_id %llu within 5 s", (unsigned long long)wr_id);
	}
	ck_assert_msg(wc.status == IBV_WC_SUCCESS, "completion %llu: expected success, got %s",
		      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	ck_assert_msg(wc.wr_id == wr_id, "expected completion for wr_id %llu, got %llu",
		      (unsigned long long)wr_id, (unsigned long long)wc.wr_id);
}

START_TEST(test_device_named_by_environment_opens_with_active_port)
{
	struct smoke s;

	smoke_setup(&s);
	smoke_teardown(&s);
}
END_TEST

START_TEST(test_rc_loopback_send_delivers_message_to_posted_receive)
{
	const char msg[] = "hello over rxe";
	struct smoke s;

	smoke_setup(&s);
	struct ibv_sge rsge = { .addr = (uintptr_t)s.buf[1],
				.length = SMOKE_BUF_SIZE,
				.lkey = s.mr[1]->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rsge, .num_sge = 1 }, *bad_rwr;
	ck_assert_msg(ibv_post_recv(s.qp[1], &rwr, &bad_rwr) == 0, "ibv_post_recv failed");

	memcpy(s.buf[0], msg, sizeof(msg));
	struct ibv_sge ssge = { .addr = (uintptr_t)s.buf[0],
				.length = sizeof(msg),
				.lkey = s.mr[0]->lkey };
	struct ibv_send_wr swr = {
		.wr_id = 2,
		.sg_list = &ssge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad_swr;
	ck_assert_msg(ibv_post_send(s.qp[0], &swr, &bad_swr) == 0, "ibv_post_send failed");

	/* The send and the receive complete in either order on the shared CQ. */
	struct ibv_wc wc[2];
	int got = 0;
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (got < 2) {
		int n = ibv_poll_cq(s.cq, 2 - got, wc + got);
		ck_assert_msg(n >= 0, "ibv_poll_cq failed");
		got += n;
		clock_gettime(CLOCK_MONOTONIC, &now);
		ck_assert_msg(now.tv_sec - start.tv_sec < 5,
			      "expected 2 completions within 5 s, got %d", got);
	}
	for (int i = 0; i < 2; i++) {
		ck_assert_msg(wc[i].status == IBV_WC_SUCCESS, "expected success, got %s",
			      ibv_wc_status_str(wc[i].status));
		if (wc[i].wr_id == 1)
			ck_assert_msg(wc[i].byte_len == sizeof(msg),
				      "expected %zu bytes received, got %u", sizeof(msg),
				      wc[i].byte_len);
	}
	ck_assert_msg(memcmp(s.buf[1], msg, sizeof(msg)) == 0,
		      "expected \"%s\" received, got \"%.*s\"", msg, (int)sizeof(msg), s.buf[1]);
	smoke_teardown(&s);
}
END_TEST

START_TEST(test_rc_loopback_rdma_write_lands_in_remote_buffer)
{
	struct smoke s;

	smoke_setup(&s);
	for (int i = 0; i < SMOKE_BUF_SIZE; i++)
		s.buf[0][i] = (char)(i * 7 + 3);
	struct ibv_sge sge = { .addr = (uintptr_t)s.buf[0],
			       .length = SMOKE_BUF_SIZE,
			       .lkey = s.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 3,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)s.buf[1], .rkey = s.mr[1]->rkey },
	}, *bad;
	ck_assert_msg(ibv_post_send(s.qp[0], &wr, &bad) == 0, "ibv_post_send (RDMA write) failed");
	smoke_wait(&s, 3);
	ck_assert_msg(memcmp(s.buf[0], s.buf[1], SMOKE_BUF_SIZE) == 0,
		      "expected the %d written bytes in the remote buffer, they differ",
		      SMOKE_BUF_SIZE);
	smoke_teardown(&s);
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("smoke");
	TCase *tc = tcase_create("rxe");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_RDMA);
	tcase_add_test(tc, test_device_named_by_environment_opens_with_active_port);
	tcase_add_test(tc, test_rc_loopback_send_delivers_message_to_posted_receive);
	tcase_add_test(tc, test_rc_loopback_rdma_write_lands_in_remote_buffer);
	suite_add_tcase(s, tc);
	return s;
}
