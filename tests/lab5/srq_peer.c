/*
 * srq_peer.c: the reference clients of steps 4 and 5. A test's setup
 * forks them from the test program's parent, before the act: they run no
 * student code, and the act, a later fork, holds none of their
 * descriptors. One thread drives every client (rdma_cm, plain verbs): each
 * connects to the act (again, while the act does not listen yet), sends
 * its messages (its number, its sequence, random bytes chosen here) and
 * leaves; the last may connect while the others stream. Each owns its QP
 * and sets its own RNR retry count (client_qp_to). They report to the
 * parent on a pipe, whole, and stop when the parent closes the other one.
 */
#define _GNU_SOURCE /* close_range, pipe2 */
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

#include "srq_fixture.h"

_Static_assert(sizeof(struct srq_fx_report) <= 4096, "a report must fit in one pipe write");

#define REPORT_FD 3
#define STOP_FD 4
#define RETRY_MS 20 /* between connects while the act does not listen yet */

/* The parent's view of the clients' process. */
static struct {
	pid_t pid;
	int report, stop;
	struct srq_fx_report last;
} peer = { .report = -1, .stop = -1 };

long srq_fx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint32_t srq_fx_between(uint32_t lo, uint32_t hi)
{
	uint32_t r;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		abort();
	return lo + r % (hi - lo + 1);
}

/* --- in the clients' process --- */

enum state { IDLE, RESOLVING, CONNECTING, STREAMING, WAIT_GO, LINGER, LEAVING, GONE };

struct client {
	enum state state;
	struct rdma_cm_id *id;
	struct ibv_qp *qp; /* its own, not the id's: it sets its own rnr_retry */
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t buf[SRQ_FX_WINDOW][LAB5_SRQ_MSG];
	uint8_t go[16];
	uint32_t posted, done; /* sends posted, completed (well or not) */
	bool go_came;          /* probe: the act's go arrived */
	uint32_t limit;        /* sends it makes in this phase (probe: until one fails) */
	long retry_at, linger_until, connect_at;
};

struct clients {
	const struct srq_fx_in *in;
	struct srq_fx_report *r;
	struct rdma_event_channel *ch;
	struct sockaddr_storage dst;
	struct client c[SRQ_FX_MAX_CLIENTS];
	long deadline;
};

static void note(struct srq_fx_report *r, enum srq_fx_stage stage)
{
	if (stage > r->stage)
		r->stage = stage;
	(void)!write(REPORT_FD, r, sizeof(*r));
}

static bool stopped(void)
{
	struct pollfd p = { .fd = STOP_FD, .events = POLLIN };

	return poll(&p, 1, 0) != 0;
}

/* The clients fail: R says why (the first reason only). */
static int peer_fail(struct clients *k, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int peer_fail(struct clients *k, int err, const char *fmt, ...)
{
	va_list ap;

	if (!k->r->ret) {
		k->r->ret = err ? err : EPROTO;
		va_start(ap, fmt);
		vsnprintf(k->r->why, sizeof(k->r->why), fmt, ap);
		va_end(ap);
	}
	return -k->r->ret;
}

/* Client I begins to connect (again): a new id, its address resolved. */
static int client_start(struct clients *k, int i)
{
	struct client *c = &k->c[i];

	if (rdma_create_id(k->ch, &c->id, (void *)(intptr_t)i, RDMA_PS_TCP))
		return peer_fail(k, errno, "client %d: rdma_create_id: %s", i, strerror(errno));
	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&k->dst, SRQ_FX_TIMEOUT_MS))
		return peer_fail(k, errno, "client %d: rdma_resolve_addr: %s", i, strerror(errno));
	c->state = RESOLVING;
	return 0;
}

/*
 * Client I's QP to STATE with the CM's attributes (rdma_init_qp_attr), and
 * at RTS its own rnr_retry: 6 (an empty SRQ stalls it until the refill)
 * or, probing, 0 (an empty SRQ fails its send). Measured in the guest: a
 * QP rdma_cm moved to RTS read 0 for an accept's 7, and with 7 ("for
 * ever") an rxe client sometimes never resumed once the SRQ was refilled.
 */
static int client_qp_to(struct clients *k, int i, enum ibv_qp_state state)
{
	struct client *c = &k->c[i];
	struct ibv_qp_attr qa = { .qp_state = state };
	int mask, ret;

	if (rdma_init_qp_attr(c->id, &qa, &mask))
		return peer_fail(k, errno, "client %d: rdma_init_qp_attr %d: %s", i, state,
				 strerror(errno));
	if (state == IBV_QPS_RTS) {
		qa.rnr_retry = k->in->probe ? 0 : 6;
		mask |= IBV_QP_RNR_RETRY;
	}
	ret = ibv_modify_qp(c->qp, &qa, mask);
	if (ret)
		return peer_fail(k, ret, "client %d: ibv_modify_qp %d: %s", i, state,
				 strerror(ret));
	return 0;
}

/* Client I's verbs objects (once) and its QP for its id (each try). */
static int client_qp(struct clients *k, int i)
{
	struct client *c = &k->c[i];
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = SRQ_FX_WINDOW,
			 .max_recv_wr = 1,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (!c->pd) {
		c->pd = ibv_alloc_pd(c->id->verbs);
		c->cq = c->pd ? ibv_create_cq(c->id->verbs, SRQ_FX_WINDOW + 2, NULL, NULL, 0) :
				NULL;
		c->mr = c->cq ? ibv_reg_mr(c->pd, c, sizeof(*c), IBV_ACCESS_LOCAL_WRITE) : NULL;
		if (!c->mr)
			return peer_fail(k, errno, "client %d: PD, CQ or MR: %s", i,
					 strerror(errno));
	}
	attr.send_cq = attr.recv_cq = c->cq;
	c->qp = ibv_create_qp(c->pd, &attr);
	if (!c->qp)
		return peer_fail(k, errno, "client %d: ibv_create_qp: %s", i, strerror(errno));
	if (client_qp_to(k, i, IBV_QPS_INIT))
		return -k->r->ret;
	/* Probe: the act's go lands here. */
	sge = (struct ibv_sge){ .addr = (uintptr_t)c->go,
				.length = sizeof(c->go),
				.lkey = c->mr->lkey };
	if (k->in->probe && ibv_post_recv(c->qp, &wr, &bad))
		return peer_fail(k, EIO, "client %d: ibv_post_recv", i);
	return 0;
}

/* Client I's id and QP gone (a refused try: the act did not listen yet). */
static void client_drop(struct client *c)
{
	if (c->qp)
		ibv_destroy_qp(c->qp);
	c->qp = NULL;
	if (c->id)
		rdma_destroy_id(c->id);
	c->id = NULL;
}

static int client_leave(struct clients *k, int i)
{
	struct client *c = &k->c[i];

	k->r->cl[i].left = true;
	k->r->cl[i].left_ms = srq_fx_now_ms();
	c->state = LEAVING;
	if (rdma_disconnect(c->id))
		return peer_fail(k, errno, "client %d: rdma_disconnect: %s", i, strerror(errno));
	return 0;
}

/* Messages the clients other than I completed so far. */
static long others_sent(struct clients *k, int i)
{
	long n = 0;

	for (uint32_t j = 0; j < k->r->n; j++)
		if ((int)j != i)
			n += k->c[j].done;
	return n;
}

/* One CM event: client by client, each state's next. */
static int on_cm_event(struct clients *k)
{
	struct rdma_cm_event *ev;
	struct rdma_conn_param param = { .retry_count = 7, .rnr_retry_count = 7 };
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	enum rdma_cm_event_type type;
	uint32_t qpn;
	int i, status;
	struct client *c;

	if (rdma_get_cm_event(k->ch, &ev))
		return errno == EAGAIN ?
			       0 :
			       peer_fail(k, errno, "rdma_get_cm_event: %s", strerror(errno));
	i = (int)(intptr_t)ev->id->context;
	type = ev->event;
	status = ev->status;
	qpn = ev->param.conn.qp_num;
	rdma_ack_cm_event(ev);
	c = &k->c[i];
	switch (type) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(c->id, SRQ_FX_TIMEOUT_MS))
			return peer_fail(k, errno, "client %d: rdma_resolve_route: %s", i,
					 strerror(errno));
		return 0;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (client_qp(k, i))
			return -k->r->ret;
		c->state = CONNECTING;
		if (!c->connect_at)
			c->connect_at = srq_fx_now_ms();
		param.qp_num = c->qp->qp_num;
		if (rdma_connect(c->id, &param))
			return peer_fail(k, errno, "client %d: rdma_connect: %s", i,
					 strerror(errno));
		return 0;
	case RDMA_CM_EVENT_ESTABLISHED:
		return 0; /* after the CONNECT_RESPONSE, if at all */
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		/* Its QP is its own: RTR, RTS, then the CM's RTU. */
		if (client_qp_to(k, i, IBV_QPS_RTR) || client_qp_to(k, i, IBV_QPS_RTS))
			return -k->r->ret;
		if (rdma_establish(c->id))
			return peer_fail(k, errno, "client %d: rdma_establish: %s", i,
					 strerror(errno));
		k->r->cl[i].established = true;
		k->r->cl[i].server_qpn = qpn;
		k->r->cl[i].connect_ms = srq_fx_now_ms() - c->connect_at;
		k->r->cl[i].others_sent = others_sent(k, i);
		if (!ibv_query_qp(c->qp, &qa, IBV_QP_RNR_RETRY, &qia))
			k->r->cl[i].rnr_retry = qa.rnr_retry;
		c->state = STREAMING;
		c->limit = !k->in->probe ? k->in->messages :
			   k->in->phase1 ? k->in->phase1 :
					   2 * k->in->depth + 4;
		return 0;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (c->state != LEAVING) {
			/* The server hung up on it: it may still be sending. */
			client_drop(c);
			c->state = GONE;
			return peer_fail(k, ECONNRESET,
					 "client %d: the server disconnected it after %u of its "
					 "messages, before it left",
					 i, c->done);
		}
		k->r->cl[i].gone = true;
		c->state = GONE;
		client_drop(c);
		return 0;
	default:
		if (c->state == RESOLVING || c->state == CONNECTING) {
			/* Not listening yet (REJECTED, UNREACHABLE ...): try again soon. */
			client_drop(c);
			c->state = IDLE;
			c->retry_at = srq_fx_now_ms() + RETRY_MS;
			return 0;
		}
		return peer_fail(k, EPROTO, "client %d: unexpected %s (status %d)", i,
				 rdma_event_str(type), status);
	}
}

/* Post client I's next message, if it has one and room. */
static int client_send(struct clients *k, int i)
{
	struct client *c = &k->c[i];
	uint8_t *m = c->buf[c->posted % SRQ_FX_WINDOW];
	uint32_t len = srq_fx_between(SRQ_FX_MSG_MIN, LAB5_SRQ_MSG);
	uint32_t head[2] = { (uint32_t)i, c->posted };
	struct ibv_sge sge = { .addr = (uintptr_t)m, .length = len, .lkey = c->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = len, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND
	};
	struct ibv_send_wr *bad;
	uint32_t window = k->in->probe ? 1 : SRQ_FX_WINDOW;

	if (c->state != STREAMING || c->posted >= c->limit || c->posted - c->done >= window)
		return 0;
	if (getrandom(m, len, 0) != (ssize_t)len)
		return peer_fail(k, EIO, "getrandom");
	memcpy(m, head, sizeof(head));
	if (ibv_post_send(c->qp, &wr, &bad))
		return peer_fail(k, EIO, "client %d: ibv_post_send of message %u", i, c->posted);
	c->posted++;
	return 0;
}

/* Client I's completions: its sends (counted) and, in a probe, the act's go. */
static int client_poll(struct clients *k, int i)
{
	struct client *c = &k->c[i];
	struct srq_fx_client *r = &k->r->cl[i];
	struct ibv_wc wc;
	int n;

	if (!c->cq)
		return 0;
	while ((n = ibv_poll_cq(c->cq, 1, &wc)) == 1) {
		/* The go's receive (wr_id 1: a send's wr_id is its length, never under 8). */
		if (wc.wr_id == 1) {
			/* It may come before the last send's completion: kept until WAIT_GO. */
			c->go_came |= wc.status == IBV_WC_SUCCESS;
			continue;
		}
		c->done++;
		if (wc.status != IBV_WC_SUCCESS) {
			if (!r->status)
				r->status = wc.status;
			continue;
		}
		if (k->in->probe && k->in->phase1 && c->done > k->in->phase1)
			r->sent2++;
		else
			r->sent++;
		r->bytes += wc.wr_id;
	}
	if (n < 0)
		return peer_fail(k, EIO, "client %d: ibv_poll_cq", i);
	return 0;
}

/* What client I does next, now that its completions are in. */
static int client_step(struct clients *k, int i)
{
	struct client *c = &k->c[i];
	struct srq_fx_client *r = &k->r->cl[i];
	long now = srq_fx_now_ms();
	uint32_t n = k->r->n;
	long half = 0;

	switch (c->state) {
	case IDLE:
		if (k->in->late && i == (int)n - 1) {
			for (uint32_t j = 0; j + 1 < n; j++)
				half += k->c[j].done;
			if (half * 2 < (long)(n - 1) * k->in->messages)
				return 0;
		}
		return now >= c->retry_at ? client_start(k, i) : 0;
	case STREAMING:
		if (r->status) /* a failed send: its QP is in error, nothing more goes */
			return c->done == c->posted ? client_leave(k, i) : 0;
		if (c->done < c->limit)
			return client_send(k, i);
		if (k->in->probe && k->in->phase1 && !r->sent2 && c->limit == k->in->phase1) {
			c->state = WAIT_GO;
			return 0;
		}
		c->state = LINGER;
		c->linger_until = now + (i == (int)n - 1 ? k->in->linger_ms : 0);
		return 0;
	case WAIT_GO:
		if (c->go_came) {
			c->state = STREAMING;
			c->limit = k->in->phase1 + 2 * k->in->depth + 4;
		}
		return 0;
	case LINGER:
		return now >= c->linger_until ? client_leave(k, i) : 0;
	default:
		return 0;
	}
}

/* The clients' part: connect, stream, leave, all of them; report. */
static void run_clients(const struct srq_fx_in *in, struct srq_fx_report *r)
{
	struct clients *k = calloc(1, sizeof(*k));
	struct pollfd p;
	uint32_t gone;

	if (!k) {
		r->ret = ENOMEM;
		return;
	}
	k->in = in;
	k->r = r;
	r->n = in->probe ? 1 : in->clients;
	k->deadline = srq_fx_now_ms() + 6 * SRQ_FX_TIMEOUT_MS;
	k->ch = rdma_create_event_channel();
	if (!k->ch || fcntl(k->ch->fd, F_SETFL, O_NONBLOCK)) {
		peer_fail(k, errno, "rdma_create_event_channel: %s", strerror(errno));
		goto out;
	}
	if (lab5_parse_addr(rl_test_addr(), in->port, &k->dst)) {
		peer_fail(k, EINVAL, "no address to reach the act");
		goto out;
	}
	p = (struct pollfd){ .fd = k->ch->fd, .events = POLLIN };
	do {
		if (poll(&p, 1, 0) > 0)
			on_cm_event(k);
		gone = 0;
		for (uint32_t i = 0; i < r->n && !r->ret; i++) {
			client_poll(k, (int)i);
			if (!r->ret)
				client_step(k, (int)i);
			gone += k->c[i].state == GONE;
		}
		if (gone < r->n && !r->ret && srq_fx_now_ms() > k->deadline)
			peer_fail(k, ETIMEDOUT, "the clients were not done within %d ms",
				  6 * SRQ_FX_TIMEOUT_MS);
	} while (gone < r->n && !r->ret && !stopped());
out:
	note(r, SRQ_FX_DONE);
	for (uint32_t i = 0; i < SRQ_FX_MAX_CLIENTS; i++) {
		struct client *c = &k->c[i];

		client_drop(c);
		if (c->mr)
			ibv_dereg_mr(c->mr);
		if (c->cq)
			ibv_destroy_cq(c->cq);
		if (c->pd)
			ibv_dealloc_pd(c->pd);
	}
	if (k->ch)
		rdma_destroy_event_channel(k->ch);
	free(k);
}

static void __attribute__((noreturn)) peer_main(const struct srq_fx_in *in, int report, int stop)
{
	struct srq_fx_report r = { 0 };
	int null = open("/dev/null", O_RDWR);

	report = fcntl(report, F_DUPFD, 10);
	stop = fcntl(stop, F_DUPFD, 10);
	if (null < 0 || report < 0 || stop < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
	    dup2(null, 2) < 0 || dup2(report, REPORT_FD) < 0 || dup2(stop, STOP_FD) < 0)
		_exit(1);
	close_range(STOP_FD + 1, ~0U, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGPIPE, SIG_IGN);
	alarm(90); /* every wait is bounded; this bounds them all */
	run_clients(in, &r);
	note(&r, SRQ_FX_ENDED);
	_exit(0);
}

/* --- in the parent --- */

/* One report into peer.last before DEADLINE: 1, 0 at its end, -1 out of time. */
static int peer_read(long deadline)
{
	struct pollfd p = { .fd = peer.report, .events = POLLIN };
	struct srq_fx_report r;
	size_t got = 0;
	ssize_t n;

	while (got < sizeof(r)) {
		long left = deadline - srq_fx_now_ms();

		if (left <= 0 || poll(&p, 1, (int)left) == 0)
			return -1;
		n = read(peer.report, (char *)&r + got, sizeof(r) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		got += (size_t)n;
	}
	peer.last = r;
	return 1;
}

static void peer_reap(void)
{
	if (peer.stop >= 0)
		close(peer.stop);
	if (peer.report >= 0)
		close(peer.report);
	if (peer.pid > 0 && waitpid(peer.pid, NULL, WNOHANG) == 0) {
		kill(peer.pid, SIGKILL);
		waitpid(peer.pid, NULL, 0);
	}
	peer.pid = 0;
	peer.report = peer.stop = -1;
}

void srq_fx_peer_start(const struct srq_fx_in *in)
{
	int report[2], stop[2];

	peer_reap();
	memset(&peer.last, 0, sizeof(peer.last));
	ck_assert_msg(pipe2(report, O_CLOEXEC) == 0 && pipe2(stop, O_CLOEXEC) == 0,
		      "reference clients: pipe2 failed: %s", strerror(errno));
	peer.pid = fork();
	ck_assert_msg(peer.pid >= 0, "reference clients: fork failed: %s", strerror(errno));
	if (peer.pid == 0)
		peer_main(in, report[1], stop[0]);
	close(report[1]);
	close(stop[0]);
	peer.report = report[0];
	peer.stop = stop[1];
}

const struct srq_fx_report *srq_fx_peer_end(struct rl_case *c)
{
	long deadline = srq_fx_now_ms() + (long)(rl_test_timeout(2) * 1000);
	int got = 1, i;

	(void)c;
	if (peer.pid <= 0)
		return &peer.last;
	/* The act is over: the clients are done, or soon (a server gone leaves them nothing). */
	while (peer.last.stage < SRQ_FX_DONE && got == 1)
		got = peer_read(deadline);
	close(peer.stop);
	peer.stop = -1;
	deadline = srq_fx_now_ms() + SRQ_FX_TIMEOUT_MS;
	while (got != 0 && (got = peer_read(deadline)) != -1)
		;
	for (i = 0; i < 100 && waitpid(peer.pid, NULL, WNOHANG) == 0; i++)
		usleep(10000);
	if (i < 100)
		peer.pid = 0;
	peer_reap();
	return &peer.last;
}
