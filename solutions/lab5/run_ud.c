/*
 * run_ud.c: the commands ud-serve and ud-send (given): a UD server over
 * rdma_cm that echoes each datagram, and a client that sends numbered
 * datagrams and waits for each echo, so that none is sent before the
 * server has a receive for it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lab5.h"

#define UD_REQUEST_WAIT_MS 60000 /* how long ud-serve waits for a client */

/* ARG as a number from LO to HI into *OUT; else one line naming WHAT, and false. */
static bool ud_number(const char *arg, const char *what, unsigned long lo, unsigned long hi,
		      unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || *out < lo || *out > hi) {
		rl_err("lab5: %s must be a number from %lu to %lu, got \"%s\"", what, lo, hi, arg);
		return false;
	}
	return true;
}

/* Post every receive slot of U (step 2). */
static int ud_post_all(struct lab5_ud *u)
{
	int slot, ret;

	for (slot = 0; slot < LAB5_SLOTS; slot++) {
		ret = lab5_post_recv_scatter(u, slot);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Aim U's sends at the sender of the datagram M: its QP number, an AH made
 * from the GRH its receive put in slot M->slot, and rdma_cm's Q_Key, which
 * rdma_create_qp() gave the client's QP as it gave ours.
 */
static int ud_reply_to(struct lab5_ud *u, const struct lab5_msg *m)
{
	struct ibv_wc wc = { .wc_flags = IBV_WC_GRH, .src_qp = m->src_qp };
	struct ibv_grh *grh = (struct ibv_grh *)(u->rx_grh + m->slot * LAB5_GRH_LEN);

	u->ah = ibv_create_ah_from_wc(u->pd, &wc, grh, u->id->port_num);
	if (!u->ah)
		return rl_fail("ibv_create_ah_from_wc", errno, "to the sender, QP %u", m->src_qp);
	u->remote_qpn = m->src_qp;
	u->remote_qkey = RDMA_UDP_QKEY;
	return 0;
}

/*
 * Take one client's request on LISTEN (its channel CH): make U's QP on the
 * request's id (step 1), post every receive (step 2), then accept, so
 * that the client's first datagram finds a receive.
 */
static int ud_accept(struct lab5_ud *u, struct rdma_event_channel *ch)
{
	struct rdma_conn_param param = { 0 };
	struct rdma_cm_event ev;
	int ret;

	ret = lab5_wait_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST, &ev, UD_REQUEST_WAIT_MS);
	if (ret)
		return ret;
	u->id = ev.id;
	ret = lab5_ud_create_qp(u);
	if (ret)
		return ret;
	ret = ud_post_all(u);
	if (ret)
		return ret;
	/* The reply carries our QP number and rdma_cm's Q_Key (param.qkey 0). */
	if (rdma_accept(u->id, &param))
		return rl_fail("rdma_accept", errno, "UD QP %u", u->qp->qp_num);
	return 0;
}

/* ud-serve PORT [COUNT]: take COUNT datagrams from one client, echo each, and say so. */
int lab5_cmd_ud_serve(int argc, char **argv)
{
	struct sockaddr_in any = { .sin_family = AF_INET };
	struct rdma_event_channel *ch = NULL;
	struct rdma_cm_id *listen = NULL;
	struct lab5_ud u = { .timeout_ms = 2 * LAB5_TIMEOUT_MS };
	unsigned long port, count = 10, n = 0;
	unsigned long long bytes = 0;
	struct lab5_msg m;
	int ret = -EINVAL;

	if (argc < 1 || argc > 2) {
		rl_err("usage: lab5 ud-serve PORT [COUNT]");
		return -EINVAL;
	}
	if (!ud_number(argv[0], "PORT", 1, 65535, &port) ||
	    (argc > 1 && !ud_number(argv[1], "COUNT", 1, 1000000, &count)))
		return -EINVAL;
	any.sin_port = htons((uint16_t)port);
	ch = rdma_create_event_channel();
	if (!ch)
		return rl_fail("rdma_create_event_channel", errno, "for ud-serve");
	if (rdma_create_id(ch, &listen, NULL, RDMA_PS_UDP)) {
		ret = rl_fail("rdma_create_id", errno, "RDMA_PS_UDP");
		goto out;
	}
	if (rdma_bind_addr(listen, (struct sockaddr *)&any) || rdma_listen(listen, 1)) {
		ret = rl_fail("rdma_listen", errno, "on UDP port space port %lu", port);
		goto out;
	}
	printf("lab5: ud-serve: waiting for a client on port %lu\n", port);
	ret = ud_accept(&u, ch);
	if (ret)
		goto out;
	while (n < count) {
		ret = lab5_recv_msg(&u, &m);
		if (ret)
			goto out;
		if (!u.ah && (ret = ud_reply_to(&u, &m)))
			goto out;
		printf("lab5: ud-serve: datagram %u: %u bytes from QP %u\n", m.hdr.seq,
		       m.payload_len, m.src_qp);
		ret = lab5_send_msg(&u, m.hdr.kind, m.payload, m.payload_len);
		if (!ret)
			ret = lab5_post_recv_scatter(&u, m.slot);
		if (ret)
			goto out;
		n++;
		bytes += m.payload_len;
	}
	printf("lab5: ud-serve: %lu datagrams, %llu payload bytes, each echoed\n", n, bytes);
out:
	u.ch = NULL; /* the listener's: destroyed below, after the request's id */
	lab5_ud_close(&u);
	if (listen)
		rdma_destroy_id(listen);
	rdma_destroy_event_channel(ch);
	return ret;
}

/* Datagram SEQ's payload of LEN bytes: its number, then a pattern. */
static void ud_fill(uint8_t *p, uint32_t seq, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seq * 31 + i);
}

/* ud-send HOST PORT [COUNT [SIZE]]: COUNT datagrams of SIZE bytes to ud-serve, each echoed. */
int lab5_cmd_ud_send(int argc, char **argv)
{
	struct lab5_ud u = { .timeout_ms = LAB5_TIMEOUT_MS };
	unsigned long port, count = 10, size = 64, i;
	static uint8_t want[LAB5_MAX_PAYLOAD];
	struct lab5_msg m;
	struct timespec t0, t1;
	double secs;
	int ret;

	if (argc < 2 || argc > 4) {
		rl_err("usage: lab5 ud-send HOST PORT [COUNT [SIZE]]");
		return -EINVAL;
	}
	if (!ud_number(argv[1], "PORT", 1, 65535, &port) ||
	    (argc > 2 && !ud_number(argv[2], "COUNT", 1, 1000000, &count)) ||
	    (argc > 3 && !ud_number(argv[3], "SIZE", 0, LAB5_MAX_PAYLOAD, &size)))
		return -EINVAL;
	ret = lab5_ud_connect(&u, argv[0], (uint16_t)port);
	if (ret)
		goto out;
	printf("lab5: ud-send: server QP %u, Q_Key 0x%x, path MTU %u\n", u.remote_qpn,
	       u.remote_qkey, u.mtu);
	ret = ud_post_all(&u);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; !ret && i < count; i++) {
		ud_fill(want, (uint32_t)i, (uint32_t)size);
		ret = lab5_send_msg(&u, LAB5_MSG_DATA, want, (uint32_t)size);
		if (ret)
			break;
		ret = lab5_recv_msg(&u, &m);
		if (ret)
			break;
		if (m.payload_len != size || memcmp(m.payload, want, size)) {
			rl_err("lab5: ud-send: datagram %lu: the echo has %u bytes, not the %lu sent",
			       i, m.payload_len, size);
			ret = -EPROTO;
			break;
		}
		ret = lab5_post_recv_scatter(&u, m.slot);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (!ret)
		printf("lab5: ud-send: %lu datagrams of %lu bytes echoed in %.3f s: %.0f round trips/s\n",
		       count, size, secs, secs > 0 ? (double)count / secs : 0.0);
out:
	lab5_ud_close(&u);
	return ret;
}
