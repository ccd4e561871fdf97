/* given.c: Lab 5's given helpers: CM events, address resolution, buffers, the header. */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lab5.h"

/* Milliseconds on the monotonic clock. */
static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The errno an unexpected CM event stands for. */
static int event_errno(enum rdma_cm_event_type type)
{
	switch (type) {
	case RDMA_CM_EVENT_REJECTED:
		return ECONNREFUSED;
	case RDMA_CM_EVENT_DISCONNECTED:
		return ECONNRESET;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_MULTICAST_ERROR:
		return EHOSTUNREACH;
	default:
		return EPROTO;
	}
}

/*
 * Wait at most TIMEOUT_MS for the next event on CH; when it is WANT with
 * status 0, copy it into COPY (may be NULL; its private data is not kept)
 * and return 0. Every event is acknowledged here, the unexpected ones too.
 * Returns -ETIMEDOUT, or an errno for another event (-ECONNREFUSED for
 * REJECTED, -EHOSTUNREACH for an address, route, join or connect error,
 * -EPROTO else), after one line naming it.
 */
int lab5_wait_event(struct rdma_event_channel *ch, enum rdma_cm_event_type want,
		    struct rdma_cm_event *copy, int timeout_ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type type;
	int n, status;

	do {
		n = poll(&pfd, 1, timeout_ms);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return rl_fail("poll", errno, "on the CM channel");
	if (n == 0) {
		rl_err("rdma_cm: no %s event within %d ms", rdma_event_str(want), timeout_ms);
		return -ETIMEDOUT;
	}
	if (rdma_get_cm_event(ch, &ev))
		return rl_fail("rdma_get_cm_event", errno, "waiting for %s", rdma_event_str(want));
	type = ev->event;
	status = ev->status;
	if (copy) {
		*copy = *ev;
		copy->param.ud.private_data = NULL;
		copy->param.ud.private_data_len = 0;
	}
	rdma_ack_cm_event(ev);
	if (type == want && status == 0)
		return 0;
	rl_err("rdma_cm: expected %s, got %s (status %d%s%s)", rdma_event_str(want),
	       rdma_event_str(type), status, status < 0 ? ": " : "",
	       status < 0 ? strerror(-status) : "");
	return -event_errno(type);
}

/*
 * Resolve DST (from SRC, or any local address for NULL) on ID, whose
 * events come on CH: ID is then bound to the device that reaches DST
 * (id->verbs, id->port_num). For a multicast DST, SRC picks the device.
 */
int lab5_resolve_addr(struct rdma_cm_id *id, struct rdma_event_channel *ch,
		      const struct sockaddr *src, const struct sockaddr *dst, int timeout_ms)
{
	if (rdma_resolve_addr(id, (struct sockaddr *)src, (struct sockaddr *)dst, timeout_ms))
		return rl_fail("rdma_resolve_addr", errno, "(is the address reachable over RDMA?)");
	return lab5_wait_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL, timeout_ms);
}

/* Resolve the route of ID, whose address is resolved: a unicast peer's path. */
int lab5_resolve_route(struct rdma_cm_id *id, struct rdma_event_channel *ch, int timeout_ms)
{
	if (rdma_resolve_route(id, timeout_ms))
		return rl_fail("rdma_resolve_route", errno, "after its address was resolved");
	return lab5_wait_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, timeout_ms);
}

/* HOST (an IPv4 address or a name) and PORT into OUT, by the framework's rl_resolve_ipv4(). */
int lab5_parse_addr(const char *host, uint16_t port, struct sockaddr_storage *out)
{
	memset(out, 0, sizeof(*out));
	return rl_resolve_ipv4(host, port, (struct sockaddr_in *)out);
}

/* H into the LAB5_HDR_LEN bytes of the wire: three big-endian 32-bit fields. */
void lab5_hdr_encode(const struct lab5_hdr *h, uint8_t out[LAB5_HDR_LEN])
{
	uint32_t be[3] = { htonl(h->kind), htonl(h->seq), htonl(h->len) };

	memcpy(out, be, LAB5_HDR_LEN);
}

/* The header IN holds, in host order. */
void lab5_hdr_decode(const uint8_t in[LAB5_HDR_LEN], struct lab5_hdr *h)
{
	uint32_t be[3];

	memcpy(be, in, LAB5_HDR_LEN);
	h->kind = ntohl(be[0]);
	h->seq = ntohl(be[1]);
	h->len = ntohl(be[2]);
}

/*
 * U's buffers: one region of LAB5_UD_BUF_LEN bytes registered on U->pd for
 * local writes, cut into the send header and payload and the receive
 * slots' GRHs, headers and payloads, each part apart from the others.
 */
int lab5_ud_buffers(struct lab5_ud *u)
{
	u->buf = calloc(1, LAB5_UD_BUF_LEN);
	if (!u->buf)
		return rl_fail("calloc", ENOMEM, "%d bytes of UD buffers", (int)LAB5_UD_BUF_LEN);
	u->tx_hdr = u->buf;
	u->tx_payload = u->tx_hdr + LAB5_HDR_LEN;
	u->rx_grh = u->tx_payload + LAB5_MAX_PAYLOAD;
	u->rx_hdr = u->rx_grh + LAB5_SLOTS * LAB5_GRH_LEN;
	u->rx_payload = u->rx_hdr + LAB5_SLOTS * LAB5_HDR_LEN;
	u->mr = ibv_reg_mr(u->pd, u->buf, LAB5_UD_BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!u->mr)
		return rl_fail("ibv_reg_mr", errno, "%d bytes of UD buffers", (int)LAB5_UD_BUF_LEN);
	return 0;
}

/* Release what U holds, in the reverse order of making it; U may be half made. */
void lab5_ud_close(struct lab5_ud *u)
{
	if (u->joined)
		lab5_mc_leave(u);
	if (u->ah)
		ibv_destroy_ah(u->ah);
	if (u->qp)
		rdma_destroy_qp(u->id);
	if (u->mr)
		ibv_dereg_mr(u->mr);
	free(u->buf);
	if (u->cq)
		ibv_destroy_cq(u->cq);
	if (u->pd)
		ibv_dealloc_pd(u->pd);
	if (u->id)
		rdma_destroy_id(u->id);
	if (u->ch)
		rdma_destroy_event_channel(u->ch);
	memset(u, 0, sizeof(*u));
}

/* Whether WC is a receive's: its wr_id is a slot (valid in a failed completion too, unlike its opcode). */
static bool is_recv(const struct ibv_wc *wc)
{
	return wc->wr_id < LAB5_SLOTS;
}

/* Take from U's held completions the oldest of the kind RECV says into WC. */
static bool take_held(struct lab5_ud *u, bool recv, struct ibv_wc *wc)
{
	uint32_t i;

	for (i = 0; i < u->nheld; i++) {
		if (is_recv(&u->held[i]) != recv)
			continue;
		*wc = u->held[i];
		memmove(&u->held[i], &u->held[i + 1], (u->nheld - i - 1) * sizeof(*wc));
		u->nheld--;
		return true;
	}
	return false;
}

/*
 * One completion of the kind RECV says (a receive's, or a send's) from U's
 * CQ into WC, waiting at most U->timeout_ms (polling, with short sleeps
 * between empty polls); a completion of the other kind met meanwhile is
 * held for its own poll. Returns 1, 0 when none came, or a negative errno.
 * A failed completion is returned as one: the caller looks at wc->status.
 */
static int poll_kind(struct lab5_ud *u, bool recv, struct ibv_wc *wc)
{
	const struct timespec nap = { .tv_nsec = 50 * 1000 };
	int64_t until = now_ms() + u->timeout_ms;
	int n;

	for (;;) {
		if (take_held(u, recv, wc))
			return 1;
		n = ibv_poll_cq(u->cq, 1, wc);
		if (n < 0)
			return rl_fail("ibv_poll_cq", EIO, "on the UD CQ");
		if (n == 1 && is_recv(wc) == recv)
			return 1;
		if (n == 1 && u->nheld < sizeof(u->held) / sizeof(u->held[0])) {
			u->held[u->nheld++] = *wc;
			continue;
		}
		if (n == 1)
			return rl_fail("ibv_poll_cq", EOVERFLOW,
				       "more completions held than posted");
		if (now_ms() >= until)
			return 0;
		nanosleep(&nap, NULL);
	}
}

/* The next receive completion of U (see poll_kind): 1, 0 when none came in time, or -errno. */
int lab5_poll_recv(struct lab5_ud *u, struct ibv_wc *wc)
{
	return poll_kind(u, true, wc);
}

/* The next send completion of U (see poll_kind): 1, 0 when none came in time, or -errno. */
int lab5_poll_send(struct lab5_ud *u, struct ibv_wc *wc)
{
	return poll_kind(u, false, wc);
}

/* The active MTU, in bytes, of ID's port: the largest datagram it carries. */
uint32_t lab5_port_mtu(struct rdma_cm_id *id)
{
	struct ibv_port_attr attr;

	if (ibv_query_port(id->verbs, id->port_num, &attr))
		return 0;
	return 128U << attr.active_mtu;
}
