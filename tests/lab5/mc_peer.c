/*
 * mc_peer.c: the group's reference members and sender, processes of the
 * test's own. Setup forks each from the parent before the act's fork, so
 * it runs none of the student's code and the act cannot reach its memory.
 * Each makes its own UD QP with rdma_cm and plain verbs, joins the group as
 * a full member with its receives posted, says READY to the parent on a
 * socket of its own, plays its part, and writes its report on the same
 * socket: after the act, which the check tells it has ended.
 *
 * It runs none of the lab's files, not even its given helpers (they sit
 * beside the student's functions). Nor does it call ck_assert: it is a
 * fork of the parent, and a failed assertion would return into the runner.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mc_fixture.h"

#define MC_READY_MS 10000  /* a peer joins within this */
#define MC_REPORT_MS 30000 /* and reports within this of the check's asking */
#define MC_WAIT_MS 30000   /* the longest a peer waits for the act's datagrams or hello */
#define MC_AFTER_MS 500    /* once the act ended, what may still be on its way */
#define MC_PEER_SLOTS 32   /* receives a peer keeps posted */
#define MC_SLOT_LEN (LAB5_GRH_LEN + LAB5_HDR_LEN + LAB5_MAX_PAYLOAD)

/* --- the peer, in its own process ----------------------------------------- */

/* A peer's endpoint: slot I of BUF is a receive, slot MC_PEER_SLOTS the send. */
struct mc_ep {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct ibv_ah *ah;
	uint32_t qpn, qkey;
};

static int64_t mc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The peer's first failure into REP (ERR, positive or negative, and why); returns -|ERR|. */
static int mc_peer_fail(struct mc_report *rep, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int mc_peer_fail(struct mc_report *rep, int err, const char *fmt, ...)
{
	va_list ap;

	if (err > 0)
		err = -err;
	if (rep->ret)
		return err;
	rep->ret = err;
	va_start(ap, fmt);
	vsnprintf(rep->error, sizeof(rep->error), fmt, ap);
	va_end(ap);
	return err;
}

/* The next CM event, which must be WANT, into *EV (acknowledged): 0 or a negative errno. */
static int mc_ep_event(struct mc_ep *e, enum rdma_cm_event_type want, struct rdma_cm_event *copy)
{
	struct pollfd pfd = { .fd = e->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int ok;

	if (poll(&pfd, 1, MC_READY_MS) != 1 || rdma_get_cm_event(e->ch, &ev))
		return -ETIMEDOUT;
	ok = ev->event == want && ev->status == 0;
	if (copy)
		*copy = *ev;
	rdma_ack_cm_event(ev);
	return ok ? 0 : -EPROTO;
}

static int mc_ep_post(struct mc_ep *e, int slot)
{
	struct ibv_sge sge = { (uintptr_t)(e->buf + (size_t)slot * MC_SLOT_LEN), MC_SLOT_LEN,
			       e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(e->qp, &wr, &bad) ? -EIO : 0;
}

/* A full member of IN's group, every receive posted before the join. */
static int mc_ep_open(struct mc_ep *e, const struct mc_peer_in *in, struct mc_report *rep)
{
	struct addrinfo hints = { .ai_family = AF_INET }, *src, *dst;
	struct ibv_qp_init_attr attr = { .qp_type = IBV_QPT_UD };
	struct rdma_cm_event ev;
	int i, ret;

	if (getaddrinfo(in->local, NULL, &hints, &src) ||
	    getaddrinfo(in->group, NULL, &hints, &dst))
		return mc_peer_fail(rep, EINVAL, "addresses %s, %s", in->local, in->group);
	e->ch = rdma_create_event_channel();
	if (!e->ch || rdma_create_id(e->ch, &e->id, NULL, RDMA_PS_UDP) ||
	    rdma_resolve_addr(e->id, src->ai_addr, dst->ai_addr, MC_READY_MS) ||
	    mc_ep_event(e, RDMA_CM_EVENT_ADDR_RESOLVED, NULL))
		return mc_peer_fail(rep, EHOSTUNREACH, "resolving %s from %s", in->group,
				    in->local);
	e->pd = ibv_alloc_pd(e->id->verbs);
	e->cq = e->pd ? ibv_create_cq(e->id->verbs, 2 * MC_PEER_SLOTS, NULL, NULL, 0) : NULL;
	attr.send_cq = attr.recv_cq = e->cq;
	attr.cap = (struct ibv_qp_cap){
		.max_send_wr = 4, .max_recv_wr = MC_PEER_SLOTS, .max_send_sge = 1, .max_recv_sge = 1
	};
	if (!e->cq || rdma_create_qp(e->id, e->pd, &attr))
		return mc_peer_fail(rep, EIO, "a UD QP: %s", strerror(errno));
	e->qp = e->id->qp;
	rep->qpn = e->qp->qp_num;
	e->buf = calloc(MC_PEER_SLOTS + 1, MC_SLOT_LEN);
	e->mr = e->buf ? ibv_reg_mr(e->pd, e->buf, (size_t)(MC_PEER_SLOTS + 1) * MC_SLOT_LEN,
				    IBV_ACCESS_LOCAL_WRITE) :
			 NULL;
	if (!e->mr)
		return mc_peer_fail(rep, ENOMEM, "buffers");
	for (i = 0; i < MC_PEER_SLOTS; i++)
		if (mc_ep_post(e, i))
			return mc_peer_fail(rep, EIO, "posting receive %d", i);
	ret = rdma_join_multicast(e->id, dst->ai_addr, NULL);
	if (ret || mc_ep_event(e, RDMA_CM_EVENT_MULTICAST_JOIN, &ev))
		return mc_peer_fail(rep, EHOSTUNREACH, "joining %s", in->group);
	e->ah = ibv_create_ah(e->pd, &ev.param.ud.ah_attr);
	e->qpn = ev.param.ud.qp_num;
	e->qkey = ev.param.ud.qkey;
	freeaddrinfo(src);
	freeaddrinfo(dst);
	if (!e->ah)
		return mc_peer_fail(rep, EIO, "an AH to %s", in->group);
	return 0;
}

/* Records a datagram received into SLOT (a completion WC), and posts it again. */
static void mc_ep_seen(struct mc_ep *e, const struct ibv_wc *wc, struct mc_report *rep,
		       struct mc_seen *s)
{
	const uint8_t *p = e->buf + wc->wr_id * MC_SLOT_LEN + LAB5_GRH_LEN;
	uint32_t be[3], avail;

	memset(s, 0, sizeof(*s));
	s->byte_len = wc->byte_len;
	s->src_qp = wc->src_qp;
	if (wc->byte_len >= LAB5_GRH_LEN + LAB5_HDR_LEN) {
		memcpy(be, p, sizeof(be));
		s->kind = ntohl(be[0]);
		s->seq = ntohl(be[1]);
		s->len = ntohl(be[2]);
		avail = wc->byte_len - LAB5_GRH_LEN - LAB5_HDR_LEN;
		s->hash = mc_hash(p + LAB5_HDR_LEN, avail);
	}
	if (mc_ep_post(e, (int)wc->wr_id))
		mc_peer_fail(rep, EIO, "posting a receive again");
}

/* Sends a datagram of the lab's format to the group, and waits for its completion. */
static int mc_ep_send(struct mc_ep *e, uint32_t kind, uint32_t seq, uint32_t len, uint32_t seed)
{
	uint8_t *p = e->buf + (size_t)MC_PEER_SLOTS * MC_SLOT_LEN;
	uint32_t be[3] = { htonl(kind), htonl(seq), htonl(len) };
	struct ibv_sge sge = { (uintptr_t)p, LAB5_HDR_LEN + len, e->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = MC_PEER_SLOTS,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	int64_t until = mc_now_ms() + MC_READY_MS;
	struct ibv_wc wc;
	int n;

	memcpy(p, be, sizeof(be));
	mc_fill(p + LAB5_HDR_LEN, len, seed);
	wr.wr.ud.ah = e->ah;
	wr.wr.ud.remote_qpn = e->qpn;
	wr.wr.ud.remote_qkey = e->qkey;
	if (ibv_post_send(e->qp, &wr, &bad))
		return -EIO;
	while (mc_now_ms() < until) {
		n = ibv_poll_cq(e->cq, 1, &wc);
		if (n < 0)
			return -EIO;
		if (n == 0)
			continue;
		if (wc.opcode & IBV_WC_RECV) {
			/* Its own datagram, looped back to it as a member: post it again. */
			if (mc_ep_post(e, (int)wc.wr_id))
				return -EIO;
			continue;
		}
		return wc.status == IBV_WC_SUCCESS ? 0 : -EIO;
	}
	return -ETIMEDOUT;
}

/*
 * Takes datagrams from other QPs into REP until WANT came (0: none is
 * wanted but a hello, HELLO set), the act is done (then MC_AFTER_MS more),
 * or MC_WAIT_MS passed. With HELLO, stops at the first hello.
 */
static void mc_ep_take(struct mc_ep *e, int sock, uint32_t want, bool hello, struct mc_report *rep)
{
	int64_t until = mc_now_ms() + MC_WAIT_MS;
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	struct mc_seen s;
	struct ibv_wc wc;
	bool done = false;
	int n;

	while ((hello || rep->nseen < want) && mc_now_ms() < until && !rep->ret) {
		n = ibv_poll_cq(e->cq, 1, &wc);
		if (n < 0) {
			mc_peer_fail(rep, EIO, "polling its CQ");
			return;
		}
		if (n == 1 && (wc.opcode & IBV_WC_RECV)) {
			mc_ep_seen(e, &wc, rep, &s);
			if (wc.status != IBV_WC_SUCCESS || s.src_qp == e->qp->qp_num)
				continue;
			if (hello && s.kind == LAB5_MSG_HELLO) {
				rep->hello_qp = s.src_qp;
				return;
			}
			if (!hello && rep->nseen < MC_MAX_SEEN)
				rep->seen[rep->nseen] = s;
			if (!hello)
				rep->nseen++;
			continue;
		}
		if (!done && poll(&pfd, 1, n == 1 ? 0 : 1) == 1) {
			done = true;
			if (until > mc_now_ms() + MC_AFTER_MS)
				until = mc_now_ms() + MC_AFTER_MS;
		}
	}
}

static void mc_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	ssize_t w;

	while (n) {
		w = send(fd, c, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		c += w;
		n -= (size_t)w;
	}
}

/* The peer's process: join, say READY (its QPN, 0 if it failed), play ROLE, report. */
static void mc_peer_main(const struct mc_peer_in *in, enum mc_role role, int sock)
{
	static struct mc_report rep;
	struct mc_ep e = { 0 };
	uint32_t ready = 0, i;
	int ret;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (mc_ep_open(&e, in, &rep) == 0)
		ready = e.qp->qp_num;
	mc_write_all(sock, &ready, sizeof(ready));
	if (ready && role == MC_MEMBER)
		mc_ep_take(&e, sock, in->expect, false, &rep);
	if (ready && role == MC_SENDER) {
		mc_ep_take(&e, sock, 0, true, &rep);
		/* Its payloads' seed is its own: only its report tells the check. */
		if (getrandom(&rep.seed, sizeof(rep.seed), 0) != sizeof(rep.seed))
			mc_peer_fail(&rep, EIO, "getrandom: %s", strerror(errno));
		for (i = 0; rep.hello_qp && i < in->expect; i++) {
			ret = mc_ep_send(&e, LAB5_MSG_DATA, i, in->size, rep.seed + i);
			if (ret) {
				mc_peer_fail(&rep, ret, "sending datagram %u to the group", i);
				break;
			}
			rep.sent++;
		}
	}
	mc_write_all(sock, &rep, sizeof(rep));
	_exit(0);
}

/*
 * The peer's own versions of the step: only the peer runs them, a fork of
 * the parent made before the act: hidden in every act (RL_HIDDEN 0).
 */
RL_HIDDEN(mc_ep_open, 0);
RL_HIDDEN(mc_ep_send, 0);
RL_HIDDEN(mc_ep_take, 0);
RL_HIDDEN(mc_peer_main, 0);

/* --- the peer, from the parent ------------------------------------------- */

/* The peers of the test running now (the parent's alone: the act's copies are closed). */
static struct {
	const struct rl_graded *test;
	int n;
	int pid[MC_MAX_PEERS];
	int sock[MC_MAX_PEERS];
} mc_peers;

/* Reads N bytes from FD into P within MS ms; false when they do not all come. */
static bool mc_read_all(int fd, void *p, size_t n, int ms)
{
	int64_t deadline = mc_now_ms() + ms;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char *c = p;
	ssize_t r;

	while (n) {
		int left = (int)(deadline - mc_now_ms());

		if (left <= 0 || poll(&pfd, 1, left) <= 0)
			return false;
		r = read(fd, c, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		c += r;
		n -= (size_t)r;
	}
	return true;
}

/* Forgets the peers of an earlier test (a check that failed before it read them). */
static void mc_peers_of(const struct rl_graded *test)
{
	int i;

	if (mc_peers.test == test)
		return;
	for (i = 0; i < mc_peers.n; i++)
		if (mc_peers.sock[i] >= 0)
			close(mc_peers.sock[i]);
	mc_peers.test = test;
	mc_peers.n = 0;
}

int mc_peer_start(struct rl_case *c, const struct mc_peer_in *in, enum mc_role role)
{
	uint32_t ready = 0;
	int sv[2], i, pid;

	mc_peers_of(c->g);
	ck_assert_msg(mc_peers.n < MC_MAX_PEERS, "fixture: at most %d peers a test", MC_MAX_PEERS);
	ck_assert_msg(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0,
		      "fixture: socketpair: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	ck_assert_msg(pid >= 0, "fixture: fork: %s", strerror(errno));
	if (pid == 0) {
		close(sv[0]);
		mc_peer_main(in, role, sv[1]);
	}
	close(sv[1]);
	i = mc_peers.n++;
	mc_peers.pid[i] = pid;
	mc_peers.sock[i] = sv[0];
	ck_assert_msg(mc_read_all(sv[0], &ready, sizeof(ready), MC_READY_MS) && ready,
		      "fixture: the test's group member could not join %s from %s (a fault in the "
		      "test: tell the kit's authors)",
		      in->group, in->local);
	return i;
}

bool mc_peer_report(struct rl_case *c, int i, struct mc_report *rep)
{
	const char done = 'd';
	bool got;
	int k;

	mc_peers_of(c->g);
	memset(rep, 0, sizeof(*rep));
	if (i >= mc_peers.n || mc_peers.sock[i] < 0)
		ck_assert_msg(
			0, "fixture: no peer %d (a fault in the test: tell the kit's authors)", i);
	(void)!send(mc_peers.sock[i], &done, 1, MSG_NOSIGNAL);
	got = mc_read_all(mc_peers.sock[i], rep, sizeof(*rep), MC_REPORT_MS);
	close(mc_peers.sock[i]);
	mc_peers.sock[i] = -1;
	if (!got)
		kill(mc_peers.pid[i], SIGKILL);
	for (k = 0; k < 100 && waitpid(mc_peers.pid[i], NULL, WNOHANG) == 0; k++)
		usleep(10000);
	if (!rl_expect(c, got,
		       "the test's group member sent no report within %d s (a fault in the test: "
		       "tell the kit's authors)",
		       MC_REPORT_MS / 1000))
		return false;
	return rl_expect(c, rep->ret == 0,
			 "the test's group member failed: %s (%s; a fault in the test: tell the "
			 "kit's authors)",
			 rep->error, strerror(-rep->ret));
}
