/*
 * run_server.c: the commands of steps 4 and 5 (given). `serve` runs the
 * one-thread server of step 5 on the SRQ of step 4; `clients` is what to
 * run against it: RC clients, each sending its messages, then leaving.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lab5.h"

#define CLIENTS_DEFAULT 4
#define MESSAGES_DEFAULT 100
#define CLIENT_WINDOW 8 /* sends a client keeps in flight */

/* Milliseconds on the monotonic clock. */
static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ARG as a number from LO to HI into OUT; false after one line naming WHAT. */
static bool parse_num(const char *arg, const char *what, long lo, long hi, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(arg, &end, 10);
	if (errno || *end || end == arg || *out < lo || *out > hi) {
		rl_err("lab5: %s %s: give a number from %ld to %ld", what, arg, lo, hi);
		return false;
	}
	return true;
}

int lab5_cmd_serve(int argc, char **argv)
{
	struct lab5_server s;
	long port, clients = CLIENTS_DEFAULT;
	int ret;

	if (argc < 1 || argc > 2) {
		rl_err("usage: lab5 serve PORT [CLIENTS]");
		return -EINVAL;
	}
	if (!parse_num(argv[0], "port", 1, 65535, &port) ||
	    (argc > 1 && !parse_num(argv[1], "clients", 1, LAB5_MAX_CLIENTS, &clients)))
		return -EINVAL;
	ret = lab5_server_open(&s, (uint16_t)port, (uint32_t)clients);
	if (!ret) {
		printf("serving %ld clients on port %ld: SRQ of %d, limit %d\n", clients, port,
		       LAB5_SRQ_DEPTH, LAB5_SRQ_LIMIT);
		ret = lab5_serve(&s);
	}
	for (int i = 0; i < LAB5_MAX_CLIENTS; i++) {
		const struct lab5_client *cl = &s.clients[i];

		if (cl->qp_num)
			printf("client %d: QP 0x%x, %u messages, %llu bytes%s\n", i, cl->qp_num,
			       cl->messages, (unsigned long long)cl->bytes,
			       cl->gone ? "" : ", still connected");
	}
	printf("%u of %u clients served, %llu messages, %u refills\n", s.served, s.expected,
	       (unsigned long long)s.messages, s.srq.refills);
	lab5_server_close(&s);
	return ret;
}

/* One client of `clients`: its id, its verbs objects, its buffer of CLIENT_WINDOW messages. */
struct client {
	struct rdma_cm_id *id;
	struct ibv_qp *qp; /* its own, not the id's: it sets its own rnr_retry */
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t buf[CLIENT_WINDOW][LAB5_SRQ_MSG];
	long sent, done;
};

/*
 * C's QP to STATE with the CM's attributes, and at RTS an rnr_retry of 6:
 * a client that finds the server's SRQ empty waits for the refill. (Left
 * to rdma_cm, the QP read 0 in the guest, whatever the accept asked; and
 * with 7, "for ever", an rxe client sometimes never resumed.)
 */
static int client_qp_to(struct client *c, enum ibv_qp_state state)
{
	struct ibv_qp_attr qa = { .qp_state = state };
	int mask, ret;

	if (rdma_init_qp_attr(c->id, &qa, &mask))
		return rl_fail("rdma_init_qp_attr", errno, "client QP to state %d", state);
	if (state == IBV_QPS_RTS) {
		qa.rnr_retry = 6;
		mask |= IBV_QP_RNR_RETRY;
	}
	ret = ibv_modify_qp(c->qp, &qa, mask);
	if (ret)
		return rl_fail("ibv_modify_qp", ret, "client QP to state %d", state);
	return 0;
}

/* C connected to DST, its events on CH (set up one at a time). */
static int client_connect(struct client *c, struct rdma_event_channel *ch,
			  const struct sockaddr *dst)
{
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = CLIENT_WINDOW,
			 .max_recv_wr = 1,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct rdma_conn_param param = { .retry_count = 7, .rnr_retry_count = 7 };
	int ret;

	if (rdma_create_id(ch, &c->id, c, RDMA_PS_TCP))
		return rl_fail("rdma_create_id", errno, "for a client");
	ret = lab5_resolve_addr(c->id, ch, NULL, dst, LAB5_TIMEOUT_MS);
	if (!ret)
		ret = lab5_resolve_route(c->id, ch, LAB5_TIMEOUT_MS);
	if (ret)
		return ret;
	c->pd = ibv_alloc_pd(c->id->verbs);
	c->cq = c->pd ? ibv_create_cq(c->id->verbs, CLIENT_WINDOW, NULL, NULL, 0) : NULL;
	c->mr = c->cq ? ibv_reg_mr(c->pd, c->buf, sizeof(c->buf), 0) : NULL;
	if (!c->mr)
		return rl_fail("ibv_alloc_pd/create_cq/reg_mr", errno, "for a client");
	attr.send_cq = attr.recv_cq = c->cq;
	c->qp = ibv_create_qp(c->pd, &attr);
	if (!c->qp)
		return rl_fail("ibv_create_qp", errno, "for a client");
	ret = client_qp_to(c, IBV_QPS_INIT);
	if (ret)
		return ret;
	param.qp_num = c->qp->qp_num;
	if (rdma_connect(c->id, &param))
		return rl_fail("rdma_connect", errno, "to the server");
	ret = lab5_wait_event(ch, RDMA_CM_EVENT_CONNECT_RESPONSE, NULL, LAB5_TIMEOUT_MS);
	if (!ret)
		ret = client_qp_to(c, IBV_QPS_RTR);
	if (!ret)
		ret = client_qp_to(c, IBV_QPS_RTS);
	if (!ret && rdma_establish(c->id))
		ret = rl_fail("rdma_establish", errno, "to the server");
	return ret;
}

/* Post C's next message (its number and sequence, then bytes), if one is left and room. */
static int client_send(struct client *c, int number, long messages)
{
	uint8_t *m = c->buf[c->sent % CLIENT_WINDOW];
	struct lab5_hdr h = { .kind = (uint32_t)number,
			      .seq = (uint32_t)c->sent,
			      .len = LAB5_SRQ_MSG - LAB5_HDR_LEN };
	struct ibv_sge sge = { .addr = (uintptr_t)m, .length = LAB5_SRQ_MSG, .lkey = c->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND }, *bad;
	int ret;

	if (c->sent >= messages || c->sent - c->done >= CLIENT_WINDOW)
		return 0;
	lab5_hdr_encode(&h, m);
	memset(m + LAB5_HDR_LEN, 'a' + number % 26, LAB5_SRQ_MSG - LAB5_HDR_LEN);
	ret = ibv_post_send(c->qp, &wr, &bad);
	if (ret)
		return rl_fail("ibv_post_send", ret, "client %d, message %ld", number, c->sent);
	c->sent++;
	return 0;
}

/* Take C's send completions; a failed one ends it. */
static int client_poll(struct client *c, int number)
{
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(c->cq, 1, &wc)) == 1) {
		if (wc.status != IBV_WC_SUCCESS) {
			rl_err("lab5: client %d, message %ld: %s%s", number, c->done,
			       ibv_wc_status_str(wc.status),
			       wc.status == IBV_WC_RNR_RETRY_EXC_ERR ?
				       " (the server's SRQ was empty: refilled late, or never?)" :
				       "");
			return -EIO;
		}
		c->done++;
	}
	return n < 0 ? rl_fail("ibv_poll_cq", EIO, "client %d", number) : 0;
}

/* Release what C holds. */
static void client_close(struct client *c)
{
	if (c->qp)
		ibv_destroy_qp(c->qp);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
}

int lab5_cmd_clients(int argc, char **argv)
{
	struct rdma_event_channel *ch = NULL;
	struct sockaddr_storage dst;
	struct client *cs = NULL;
	long port, n = CLIENTS_DEFAULT, messages = MESSAGES_DEFAULT, left;
	int ret = 0;
	int64_t deadline;

	if (argc < 2 || argc > 4) {
		rl_err("usage: lab5 clients HOST PORT [CLIENTS [MESSAGES]]");
		return -EINVAL;
	}
	if (!parse_num(argv[1], "port", 1, 65535, &port) ||
	    (argc > 2 && !parse_num(argv[2], "clients", 1, LAB5_MAX_CLIENTS, &n)) ||
	    (argc > 3 && !parse_num(argv[3], "messages", 1, 1000000, &messages)))
		return -EINVAL;
	ret = lab5_parse_addr(argv[0], (uint16_t)port, &dst);
	if (ret)
		return ret;
	cs = calloc((size_t)n, sizeof(*cs));
	ch = rdma_create_event_channel();
	if (!cs || !ch) {
		ret = rl_fail("rdma_create_event_channel", errno ? errno : ENOMEM, "for clients");
		goto out;
	}
	for (int i = 0; i < n && !ret; i++)
		ret = client_connect(&cs[i], ch, (struct sockaddr *)&dst);
	if (ret)
		goto out;
	printf("%ld clients connected, sending %ld messages of %d bytes each\n", n, messages,
	       LAB5_SRQ_MSG);
	/* Round robin; a client stalled on an empty SRQ stalls this loop: bounded by the clock. */
	deadline = now_ms() + LAB5_TIMEOUT_MS + messages * n;
	do {
		left = 0;
		for (int i = 0; i < n && !ret; i++) {
			ret = client_send(&cs[i], i, messages);
			if (!ret)
				ret = client_poll(&cs[i], i);
			left += messages - cs[i].done;
		}
		if (!ret && left && now_ms() > deadline) {
			rl_err("lab5: %ld messages still unsent after %lld ms: is the server serving?",
			       left, (long long)(LAB5_TIMEOUT_MS + messages * n));
			ret = -ETIMEDOUT;
		}
	} while (!ret && left);
	for (int i = 0; i < n; i++)
		printf("client %d: %ld of %ld messages sent\n", i, cs[i].done, messages);
	for (int i = 0; i < n && !ret; i++) {
		if (rdma_disconnect(cs[i].id))
			ret = rl_fail("rdma_disconnect", errno, "client %d", i);
		else
			ret = lab5_wait_event(ch, RDMA_CM_EVENT_DISCONNECTED, NULL,
					      LAB5_TIMEOUT_MS);
	}
out:
	for (int i = 0; cs && i < n; i++)
		client_close(&cs[i]);
	free(cs);
	if (ch)
		rdma_destroy_event_channel(ch);
	return ret;
}
