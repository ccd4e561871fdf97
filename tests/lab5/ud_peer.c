/*
 * ud_peer.c: the reference peer of Lab 5's steps 1 and 2, a UD server over
 * rdma_cm in a process the test's setup forks before the act: it runs no
 * student code, and the act, a later fork, holds none of its descriptors.
 * It listens in the UDP port space, makes its UD QP with plain verbs,
 * posts its receives, then accepts with its QP number (so a client's first
 * datagram finds a receive); it takes datagrams,
 * or answers the act's hello with datagrams of its own random bytes. It
 * tells the parent what it saw on a pipe and stops when the parent closes
 * the other one.
 */
#define _GNU_SOURCE /* close_range, pipe2 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ud_fixture.h"

_Static_assert(sizeof(struct ud_report) <= 4096, "a report must fit in one pipe write");

#define UD_REPORT_FD 3
#define UD_STOP_FD 4
#define UD_SLOT_LEN (LAB5_GRH_LEN + LAB5_HDR_LEN + LAB5_MAX_PAYLOAD)

/* The parent's view of the peer it runs (one at a time). */
static struct {
	pid_t pid;
	int report, stop;
	struct ud_report last;
} ud_peer = { .report = -1, .stop = -1 };

static long ud_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --- in the peer's process --- */

/* What the peer holds. */
struct ud_side {
	const struct ud_peer_in *in;
	struct ud_report *r;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen, *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	uint8_t *buf; /* UD_PEER_SLOTS receive slots, then one send slot */
};

static void ud_note(struct ud_report *r, enum ud_stage stage)
{
	if (stage > r->stage)
		r->stage = stage;
	(void)!write(UD_REPORT_FD, r, sizeof(*r));
}

static bool ud_stopped(void)
{
	struct pollfd p = { .fd = UD_STOP_FD, .events = POLLIN };

	return poll(&p, 1, 0) != 0;
}

/* The peer's own failure: ERR (an errno) and why, in its report. */
static int __attribute__((format(printf, 3, 4)))
ud_why(struct ud_report *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	r->ret = err ? err : EIO;
	return r->ret;
}

static uint32_t ud_peer_random(void)
{
	uint32_t v;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		_exit(1);
	return v;
}

static int ud_post(struct ud_side *k, int slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(k->buf + (size_t)slot * UD_SLOT_LEN),
			       .length = UD_SLOT_LEN,
			       .lkey = k->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(k->qp, &wr, &bad);
}

/* Its UD QP in RTS with a random Q_Key, every receive posted: 0 or an errno. */
static int ud_make_qp(struct ud_side *k)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4,
			 .max_recv_wr = UD_PEER_SLOTS,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_port_attr port;
	struct ibv_qp_attr attr;
	size_t len = (size_t)(UD_PEER_SLOTS + 1) * UD_SLOT_LEN;
	int slot, ret;

	k->pd = ibv_alloc_pd(k->id->verbs);
	k->cq = k->pd ? ibv_create_cq(k->id->verbs, UD_PEER_SLOTS + 8, NULL, NULL, 0) : NULL;
	k->buf = calloc(1, len);
	k->mr = k->pd && k->buf ? ibv_reg_mr(k->pd, k->buf, len, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!k->mr || !k->cq)
		return ud_why(k->r, errno, "PD, CQ or MR: %s", strerror(errno));
	init.send_cq = init.recv_cq = k->cq;
	k->qp = ibv_create_qp(k->pd, &init);
	if (!k->qp)
		return ud_why(k->r, errno, "ibv_create_qp UD: %s", strerror(errno));
	/*
	 * rdma_cm's Q_Key: over IP the kernel ignores the one rdma_accept() could
	 * name (only AF_IB passes it on) and its reply always carries this one.
	 */
	k->r->qkey = RDMA_UDP_QKEY;
	attr = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT,
				     .port_num = k->id->port_num,
				     .qkey = k->r->qkey };
	ret = ibv_modify_qp(k->qp, &attr,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	attr = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	ret = ret ? ret : ibv_modify_qp(k->qp, &attr, IBV_QP_STATE);
	attr = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS };
	ret = ret ? ret : ibv_modify_qp(k->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
	if (ret)
		return ud_why(k->r, ret, "its UD QP to RTS: %s", strerror(ret));
	for (slot = 0; slot < UD_PEER_SLOTS; slot++)
		if ((ret = ud_post(k, slot)))
			return ud_why(k->r, ret, "ibv_post_recv: %s", strerror(ret));
	if (ibv_query_port(k->id->verbs, k->id->port_num, &port) == 0)
		k->r->mtu = 128U << port.active_mtu;
	k->r->qpn = k->qp->qp_num;
	return 0;
}

/* The next CM event into *EV (stopping when told): 0 or an errno. */
static int ud_next_event(struct ud_side *k, struct rdma_cm_event **ev)
{
	struct pollfd p = { .fd = k->ch->fd, .events = POLLIN };

	while (poll(&p, 1, 100) == 0)
		if (ud_stopped())
			return ud_why(k->r, ETIMEDOUT, "stopped while waiting for a CM event");
	if (rdma_get_cm_event(k->ch, ev))
		return ud_why(k->r, errno, "rdma_get_cm_event: %s", strerror(errno));
	return 0;
}

/* Destroy K's id, if any (a client's try that was not answered). */
static void ud_side_close_id(struct ud_side *k)
{
	if (k->id)
		rdma_destroy_id(k->id);
	k->id = NULL;
}

/* Wait for the next CM event of type WANT (stopping when told): 0 or an errno. */
static int ud_event(struct ud_side *k, enum rdma_cm_event_type want, struct rdma_cm_id **id)
{
	struct pollfd p = { .fd = k->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int type, status;

	while (poll(&p, 1, 100) == 0)
		if (ud_stopped())
			return ud_why(k->r, ETIMEDOUT, "no %s came", rdma_event_str(want));
	if (rdma_get_cm_event(k->ch, &ev))
		return ud_why(k->r, errno, "rdma_get_cm_event: %s", strerror(errno));
	type = ev->event;
	status = ev->status;
	if (id)
		*id = ev->id;
	rdma_ack_cm_event(ev);
	if (type != (int)want || status)
		return ud_why(k->r, EPROTO, "expected %s, got %s (status %d)", rdma_event_str(want),
			      rdma_event_str(type), status);
	return 0;
}

/* Listen on the device's address, a port rdma_cm picks; accept one request: 0 or an errno. */
static int ud_listen_accept(struct ud_side *k)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct rdma_conn_param param = { 0 };
	const char *addr = getenv("RDMALAB_ADDR");

	if (!addr || inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		return ud_why(k->r, EINVAL, "RDMALAB_ADDR is not an IPv4 address");
	k->ch = rdma_create_event_channel();
	if (!k->ch || rdma_create_id(k->ch, &k->listen, NULL, RDMA_PS_UDP) ||
	    rdma_bind_addr(k->listen, (struct sockaddr *)&sin) || rdma_listen(k->listen, 4))
		return ud_why(k->r, errno, "listening in RDMA_PS_UDP on %s: %s", addr,
			      strerror(errno));
	k->r->port = ntohs(rdma_get_src_port(k->listen));
	ud_note(k->r, UD_LISTENING);
	if (ud_event(k, RDMA_CM_EVENT_CONNECT_REQUEST, &k->id) || ud_make_qp(k))
		return k->r->ret;
	/* Its QP is not the id's (plain verbs): the reply names it. */
	param.qp_num = k->qp->qp_num;
	if (rdma_accept(k->id, &param))
		return ud_why(k->r, errno, "rdma_accept UD QP %u: %s", k->qp->qp_num,
			      strerror(errno));
	ud_note(k->r, UD_ACCEPTED);
	return 0;
}

/* Record the datagram of completion WC, post its receive again; whether it went well. */
static bool ud_take(struct ud_side *k, const struct ibv_wc *wc)
{
	struct ud_report *r = k->r;
	const uint8_t *p = k->buf + (size_t)wc->wr_id * UD_SLOT_LEN;
	struct ud_seen *s;

	if (r->nseen < UD_MAX_SEEN) {
		s = &r->seen[r->nseen];
		*s = (struct ud_seen){ .status = wc->status,
				       .byte_len = wc->byte_len,
				       .src_qp = wc->src_qp };
		if (wc->status == IBV_WC_SUCCESS && wc->byte_len >= LAB5_GRH_LEN + LAB5_HDR_LEN) {
			lab5_hdr_decode(p + LAB5_GRH_LEN, &s->hdr);
			ud_sha256(p + LAB5_GRH_LEN + LAB5_HDR_LEN,
				  wc->byte_len - LAB5_GRH_LEN - LAB5_HDR_LEN, s->sha256);
		}
	}
	r->nseen++;
	if (wc->status != IBV_WC_SUCCESS || ud_post(k, (int)wc->wr_id)) {
		ud_why(r, EIO, "a receive failed: %s", ibv_wc_status_str(wc->status));
		return false;
	}
	return true;
}

/* Send LEN bytes of its send slot to the act (K->ah), and wait for the completion: 0 or an errno. */
static int ud_send(struct ud_side *k, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(k->buf + (size_t)UD_PEER_SLOTS * UD_SLOT_LEN),
			       .length = len,
			       .lkey = k->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = UINT32_MAX,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.ud = { .ah = k->ah,
					     .remote_qpn = k->r->act_qpn,
					     .remote_qkey = k->r->act_qkey } },
			   *bad;
	struct ibv_wc wc;
	long until = ud_now_ms() + UD_TIMEOUT_MS;
	int n, ret = ibv_post_send(k->qp, &wr, &bad);

	if (ret)
		return ud_why(k->r, ret, "ibv_post_send: %s", strerror(ret));
	while ((n = ibv_poll_cq(k->cq, 1, &wc)) == 0 && ud_now_ms() < until)
		usleep(100);
	if (n != 1 || wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_SEND)
		return ud_why(k->r, EIO, "its send to the act: %s",
			      n == 1 ? ibv_wc_status_str(wc.status) : "no completion");
	return 0;
}

/*
 * Answer the hello of completion WC: datagrams of random lengths and
 * bytes, each a header and a payload, to the QP and Q_Key the hello names.
 */
static int ud_answer(struct ud_side *k, const struct ibv_wc *wc)
{
	struct ud_report *r = k->r;
	const uint8_t *p = k->buf + (size_t)wc->wr_id * UD_SLOT_LEN;
	uint8_t *out = k->buf + (size_t)UD_PEER_SLOTS * UD_SLOT_LEN;
	uint32_t i, n = k->in->send + k->in->bad_last, most, len, be, seq = ud_peer_random() >> 8;
	struct lab5_hdr h;
	int ret;

	lab5_hdr_decode(p + LAB5_GRH_LEN, &h);
	if (h.kind != LAB5_MSG_HELLO || h.len != 4)
		return ud_why(r, EPROTO, "expected the act's hello, got kind %u of %u bytes",
			      h.kind, h.len);
	memcpy(&be, p + LAB5_GRH_LEN + LAB5_HDR_LEN, 4);
	r->act_qkey = ntohl(be);
	r->act_qpn = wc->src_qp;
	k->ah = ibv_create_ah_from_wc(k->pd, (struct ibv_wc *)wc, (struct ibv_grh *)p,
				      k->id->port_num);
	if (!k->ah)
		return ud_why(r, errno, "ibv_create_ah_from_wc: %s", strerror(errno));
	most = r->mtu - LAB5_HDR_LEN;
	for (i = 0; i < n && i <= UD_MAX_SEEN; i++) {
		/* The first the longest the MTU allows, the second empty, the rest at random. */
		len = i == 0 ? most : i == 1 ? 0 : ud_peer_random() % (most + 1);
		h = (struct lab5_hdr){ .kind = LAB5_MSG_DATA, .seq = seq + i, .len = len };
		if (i == n - 1 && k->in->bad_last)
			h.len = len + 1 + ud_peer_random() % 8; /* claims more than it carries */
		lab5_hdr_encode(&h, out);
		if (getrandom(out + LAB5_HDR_LEN, len, 0) != (ssize_t)len)
			return ud_why(r, EIO, "getrandom");
		r->sent[i] = h;
		ud_sha256(out + LAB5_HDR_LEN, len, r->sent_sha256[i]);
		r->nsent = i + 1;
		if ((ret = ud_send(k, LAB5_HDR_LEN + len)))
			return ret;
	}
	ud_note(r, UD_DONE);
	return 0;
}

/* Take datagrams until stopped (and what is left then): 0 or an errno. */
static int ud_serve(struct ud_side *k)
{
	struct ud_report *r = k->r;
	bool stop = false;
	struct ibv_wc wc;
	int n;

	while (!r->ret) {
		n = ibv_poll_cq(k->cq, 1, &wc);
		if (n < 0)
			return ud_why(r, EIO, "ibv_poll_cq failed");
		if (n == 0) {
			if (stop)
				break;
			stop = ud_stopped(); /* once more, for what landed before the stop */
			usleep(200);
			continue;
		}
		if (wc.opcode != IBV_WC_RECV)
			continue;
		if (k->in->send && !k->ah) {
			if (!ud_answer(k, &wc))
				ud_post(k, (int)wc.wr_id);
			continue;
		}
		if (ud_take(k, &wc)) {
			if (k->in->take && r->nseen >= k->in->take)
				ud_note(r, UD_DONE);
			else
				ud_note(r, UD_ACCEPTED);
		}
	}
	return r->ret;
}

/*
 * A client of the act's UD server on IN->client_of: its QP made first
 * (plain verbs, rdma_cm's Q_Key), then SIDR, again while the act is not
 * listening yet; then one datagram of random bytes to the reply's QP: 0
 * or an errno.
 */
static int ud_client(struct ud_side *k)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(k->in->client_of) };
	struct rdma_conn_param param = { 0 };
	struct ud_report *r = k->r;
	struct rdma_cm_event *ev;
	struct ibv_ah_attr ah_attr;
	const char *addr = getenv("RDMALAB_ADDR");
	uint8_t *out;
	uint32_t len;
	long until = ud_now_ms() + 3 * UD_TIMEOUT_MS;
	int type = -1, status = 0, ret;

	if (!addr || inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		return ud_why(r, EINVAL, "RDMALAB_ADDR is not an IPv4 address");
	k->ch = rdma_create_event_channel();
	if (!k->ch)
		return ud_why(r, errno, "rdma_create_event_channel: %s", strerror(errno));
	while (type != RDMA_CM_EVENT_ESTABLISHED) {
		if (ud_stopped() || ud_now_ms() > until)
			return ud_why(r, ETIMEDOUT, "the act's server never answered (last %s, %d)",
				      type < 0 ? "nothing" : rdma_event_str(type), status);
		ud_side_close_id(k);
		if (rdma_create_id(k->ch, &k->id, NULL, RDMA_PS_UDP) ||
		    rdma_resolve_addr(k->id, NULL, (struct sockaddr *)&sin, UD_TIMEOUT_MS) ||
		    ud_event(k, RDMA_CM_EVENT_ADDR_RESOLVED, NULL) ||
		    rdma_resolve_route(k->id, UD_TIMEOUT_MS) ||
		    ud_event(k, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL) || (!k->qp && ud_make_qp(k)))
			return r->ret ? r->ret :
					ud_why(r, errno, "resolving %s: %s", addr, strerror(errno));
		param.qp_num = k->qp->qp_num;
		if (rdma_connect(k->id, &param))
			return ud_why(r, errno, "rdma_connect: %s", strerror(errno));
		if ((ret = ud_next_event(k, &ev)))
			return ret;
		type = ev->event;
		status = ev->status;
		if (type == RDMA_CM_EVENT_ESTABLISHED) {
			r->act_qpn = ev->param.ud.qp_num;
			r->act_qkey = ev->param.ud.qkey;
			ah_attr = ev->param.ud.ah_attr;
		}
		rdma_ack_cm_event(ev);
		if (type != RDMA_CM_EVENT_ESTABLISHED)
			usleep(50000); /* nobody listens there yet */
	}
	ud_note(r, UD_ACCEPTED);
	k->ah = ibv_create_ah(k->pd, &ah_attr);
	if (!k->ah)
		return ud_why(r, errno, "ibv_create_ah from the reply: %s", strerror(errno));
	out = k->buf + (size_t)UD_PEER_SLOTS * UD_SLOT_LEN;
	len = 1 + ud_peer_random() % (r->mtu - LAB5_HDR_LEN);
	r->sent[0] =
		(struct lab5_hdr){ .kind = LAB5_MSG_DATA, .seq = ud_peer_random(), .len = len };
	lab5_hdr_encode(&r->sent[0], out);
	if (getrandom(out + LAB5_HDR_LEN, len, 0) != (ssize_t)len)
		return ud_why(r, EIO, "getrandom");
	ud_sha256(out + LAB5_HDR_LEN, len, r->sent_sha256[0]);
	r->nsent = 1;
	if ((ret = ud_send(k, LAB5_HDR_LEN + len)))
		return ret;
	ud_note(r, UD_DONE);
	while (!ud_stopped())
		usleep(1000);
	return 0;
}

static void ud_side_close(struct ud_side *k)
{
	if (k->ah)
		ibv_destroy_ah(k->ah);
	if (k->qp)
		ibv_destroy_qp(k->qp);
	if (k->mr)
		ibv_dereg_mr(k->mr);
	if (k->cq)
		ibv_destroy_cq(k->cq);
	if (k->pd)
		ibv_dealloc_pd(k->pd);
	if (k->id)
		rdma_destroy_id(k->id);
	if (k->listen)
		rdma_destroy_id(k->listen);
	if (k->ch)
		rdma_destroy_event_channel(k->ch);
	free(k->buf);
}

static void __attribute__((noreturn))
ud_peer_main(const struct ud_peer_in *in, int report, int stop)
{
	struct ud_report r = { 0 };
	struct ud_side k = { .in = in, .r = &r };
	int null = open("/dev/null", O_RDWR);

	report = fcntl(report, F_DUPFD, 10);
	stop = fcntl(stop, F_DUPFD, 10);
	if (null < 0 || report < 0 || stop < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
	    dup2(null, 2) < 0 || dup2(report, UD_REPORT_FD) < 0 || dup2(stop, UD_STOP_FD) < 0)
		_exit(1);
	close_range(UD_STOP_FD + 1, ~0U, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGPIPE, SIG_IGN);
	alarm((unsigned)(12 * UD_TIMEOUT_MS /
			 1000)); /* every wait is bounded; this bounds them all */
	if (in->client_of)
		ud_client(&k);
	else if (!ud_listen_accept(&k))
		ud_serve(&k);
	ud_note(&r, UD_ENDED);
	ud_side_close(&k);
	_exit(0);
}

/* --- in the parent --- */

/* Reads one report into ud_peer.last before DEADLINE: 1, 0 at its end (EOF), -1 out of time. */
static int ud_peer_read(long deadline)
{
	struct pollfd p = { .fd = ud_peer.report, .events = POLLIN };
	struct ud_report r;
	size_t got = 0;
	ssize_t n;

	while (got < sizeof(r)) {
		long left = deadline - ud_now_ms();

		if (left <= 0 || poll(&p, 1, (int)left) == 0)
			return -1;
		n = read(ud_peer.report, (char *)&r + got, sizeof(r) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		got += (size_t)n;
	}
	ud_peer.last = r;
	return 1;
}

static void ud_peer_reap(void)
{
	if (ud_peer.stop >= 0)
		close(ud_peer.stop);
	if (ud_peer.report >= 0)
		close(ud_peer.report);
	if (ud_peer.pid > 0 && waitpid(ud_peer.pid, NULL, WNOHANG) == 0) {
		kill(ud_peer.pid, SIGKILL);
		waitpid(ud_peer.pid, NULL, 0);
	}
	ud_peer.pid = 0;
	ud_peer.report = ud_peer.stop = -1;
}

uint16_t ud_peer_start(const struct ud_peer_in *in)
{
	long deadline = ud_now_ms() + UD_TIMEOUT_MS;
	int report[2], stop[2], got = 1;

	/* A test whose act crashed never got to its check: its peer may be left. */
	ud_peer_reap();
	memset(&ud_peer.last, 0, sizeof(ud_peer.last));
	ck_assert_msg(pipe2(report, O_CLOEXEC) == 0 && pipe2(stop, O_CLOEXEC) == 0,
		      "reference peer: pipe2 failed: %s", strerror(errno));
	ud_peer.pid = fork();
	ck_assert_msg(ud_peer.pid >= 0, "reference peer: fork failed: %s", strerror(errno));
	if (ud_peer.pid == 0)
		ud_peer_main(in, report[1], stop[0]);
	close(report[1]);
	close(stop[0]);
	ud_peer.report = report[0];
	ud_peer.stop = stop[1];
	if (in->client_of)
		return in->client_of;
	while (ud_peer.last.stage < UD_LISTENING && got == 1)
		got = ud_peer_read(deadline);
	ck_assert_msg(ud_peer.last.stage >= UD_LISTENING && ud_peer.last.port,
		      "expected the reference peer to listen within %d ms, %s", UD_TIMEOUT_MS,
		      ud_peer.last.why[0] ? ud_peer.last.why : "it did not");
	return ud_peer.last.port;
}

const struct ud_report *ud_peer_end(struct rl_case *c)
{
	long deadline = ud_now_ms() + 2 * UD_TIMEOUT_MS;
	int got = 1, i;

	if (ud_peer.pid <= 0) {
		rl_expect(c, false, "the reference peer was not started (a fault in the test)");
		return NULL;
	}
	while (!rl_failed(c) && ud_peer.last.stage < UD_DONE && !ud_peer.last.ret && got == 1)
		got = ud_peer_read(deadline);
	close(ud_peer.stop);
	ud_peer.stop = -1;
	/* Stopped, it takes what is left on its CQ, says so and ends. */
	deadline = ud_now_ms() + UD_TIMEOUT_MS;
	while (got != 0 && (got = ud_peer_read(deadline)) != -1)
		;
	for (i = 0; i < 100 && waitpid(ud_peer.pid, NULL, WNOHANG) == 0; i++)
		usleep(10000);
	if (i < 100)
		ud_peer.pid = 0;
	ud_peer_reap();
	if (!rl_expect(c, ud_peer.last.ret == 0, "the reference peer failed: %s (stage %d)",
		       ud_peer.last.why, ud_peer.last.stage))
		return NULL;
	return &ud_peer.last;
}

const struct ud_report *ud_peer_accepted(struct rl_case *c)
{
	long deadline = ud_now_ms() + UD_TIMEOUT_MS;
	int got = 1;

	while (ud_peer.pid > 0 && ud_peer.last.stage < UD_ACCEPTED && !ud_peer.last.ret && got == 1)
		got = ud_peer_read(deadline);
	if (!rl_expect(c, ud_peer.last.stage >= UD_ACCEPTED && !ud_peer.last.ret,
		       "expected the reference peer to accept the act's request within %d ms, it "
		       "did not%s%s",
		       UD_TIMEOUT_MS, ud_peer.last.why[0] ? ": " : "", ud_peer.last.why))
		return NULL;
	return &ud_peer.last;
}

void ud_peer_stop(void)
{
	long deadline = ud_now_ms() + UD_TIMEOUT_MS;

	if (ud_peer.pid <= 0)
		return;
	close(ud_peer.stop);
	ud_peer.stop = -1;
	while (ud_peer_read(deadline) == 1)
		;
	ud_peer_reap();
}
