/*
 * peer.c: the act's peer, a process of the test's own. Setup forks it from
 * the parent before the act's fork, so it runs none of the student's code
 * and the act cannot reach its memory (the parent is not dumpable, and
 * neither is its fork). It listens on 127.0.0.1 (or connects there, to a
 * lab4 program that listens), meets the act or the program with the lab's
 * own TCP messages (wire.c), plays an RC receiver, an RC sender or a UD
 * QP, and writes what it saw to the check on a pipe.
 *
 * It runs only the test's code, the framework and the given parts of the
 * lab (file.c, setup.c, wire.c): never a function of a file the student
 * hands in (pipeline.c, xverbs.c, ud.c, transport.c, wait.c), not even the
 * given helpers in them. Nor does it call ck_assert: it is a fork of the
 * parent, and a failed assertion would return into the runner.
 */
#define _GNU_SOURCE /* close_range */
#include <endian.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

#define FX_PEER_ACCEPT_MS 30000 /* the act may run a whole transfer before it meets peer 1 */
#define FX_PEER_REPORT_MS 30000
#define FX_PEER_AFTER_MS 5000 /* a program's peer reports this soon after the program ended */
#define FX_RC_DEPTH 64        /* the peer's RC queues */
#define FX_UD_RESEND_MS 200   /* a UD probe or ping is sent again after this long without an echo */
#define FX_UD_TRIES 10
#define FX_PROBE_LEN 64
#define FX_DRAIN_MS 200    /* after the act hangs up, what is still on its way */
#define FX_RESULT_MS 20000 /* lab4 serve hashes what it received before its RESULT */

/* --- the peer, in its own process ----------------------------------------- */

/* The environment, read in the parent before the fork: the peer cannot fail a test. */
struct fx_env {
	char dev[64];
	int gid_index;
	uint8_t port;
};

static void fx_peer_fail(struct fx_report *rep, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fx_peer_fail(struct fx_report *rep, int err, const char *fmt, ...)
{
	va_list ap;

	if (rep->ret)
		return;
	rep->ret = err;
	va_start(ap, fmt);
	vsnprintf(rep->error, sizeof(rep->error), fmt, ap);
	va_end(ap);
}

static bool fx_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	ssize_t w;

	while (n) {
		w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		c += w;
		n -= (size_t)w;
	}
	return true;
}

/* Receives with no buffer: a write with immediate takes one and puts no bytes in it. */
static int fx_post_empty_recvs(struct ibv_qp *qp, uint32_t n)
{
	struct ibv_recv_wr wr = { .num_sge = 0 }, *bad;
	uint32_t i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = ibv_post_recv(qp, &wr, &bad);
		if (ret)
			return -ret;
	}
	return 0;
}

/* The peer's verbs objects, whichever role. */
struct fx_rc {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
};

static int fx_rc_make(struct fx_rc *rc, const struct fx_env *env, uint64_t size, int access)
{
	rc->ctx = rl_open_device(env->dev);
	rc->pd = rc->ctx ? rl_alloc_pd(rc->ctx) : NULL;
	rc->cq = rc->pd ? rl_create_cq(rc->ctx, 2 * FX_RC_DEPTH, NULL) : NULL;
	rc->qp = rc->cq ? rl_create_rc_qp(rc->pd, rc->cq, rc->cq, FX_RC_DEPTH) : NULL;
	rc->buf = calloc(1, size + 1);
	if (!rc->qp || !rc->buf)
		return -EIO;
	if (size) {
		rc->mr = rl_reg_mr(rc->pd, rc->buf, size, access);
		if (!rc->mr)
			return -EIO;
	}
	return 0;
}

static int fx_rc_connect(struct fx_rc *rc, const struct fx_env *env, int access,
			 const struct rl_qp_dest *remote)
{
	int ret = rl_qp_to_init(rc->qp, env->port, access);

	if (!ret)
		ret = rl_qp_to_rtr(rc->qp, env->port, env->gid_index, remote);
	if (!ret)
		ret = rl_qp_to_rts(rc->qp, 0);
	return ret;
}

static void fx_rc_free(struct fx_rc *rc)
{
	if (rc->qp)
		ibv_destroy_qp(rc->qp);
	if (rc->mr)
		ibv_dereg_mr(rc->mr);
	if (rc->cq)
		ibv_destroy_cq(rc->cq);
	if (rc->pd)
		ibv_dealloc_pd(rc->pd);
	if (rc->ctx)
		ibv_close_device(rc->ctx);
	free(rc->buf);
}

/* Keeps completion WC in REP's list. */
static void fx_seen_wc(struct fx_report *rep, const struct ibv_wc *wc)
{
	if (rep->nseen < FX_MAX_SEEN)
		rep->seen[rep->nseen] = (struct fx_seen){
			.status = wc->status,
			.opcode = wc->opcode,
			.imm = be32toh(wc->imm_data),
			.byte_len = wc->byte_len,
		};
	rep->nseen++;
}

/* The state of QP now (enum ibv_qp_state), or -1 when it cannot be asked. */
static int fx_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	return ibv_query_qp(qp, &attr, IBV_QP_STATE, &init) ? -1 : (int)attr.qp_state;
}

/* The SHA-256 of BUF's SIZE bytes into SHA256. */
static void fx_sha256(const uint8_t *buf, uint64_t size, uint8_t sha256[32])
{
	EVP_Digest(size ? buf : (const uint8_t *)"", size, sha256, NULL, EVP_sha256(), NULL);
}

/* RESULT to the sender on FD, as lab4 serve sends it: whether BUF hashes to what H announced. */
static void fx_peer_send_result(int fd, const struct lab4_hello *h, const uint8_t *buf,
				struct fx_report *rep)
{
	struct lab4_result res = { .received = h->size };

	fx_sha256(buf, h->size, res.sha256);
	res.good = memcmp(res.sha256, h->sha256, 32) == 0;
	rep->result_sent = lab4_send_result(fd, &res, FX_TIMEOUT_MS) == 0;
}

/*
 * RC receiver: the act's HELLO names the file; a buffer for it, receives
 * for every chunk (posted again as they are taken), ACCEPT back; then every
 * completion is kept until the act hangs up (with IN->result, RESULT goes
 * back once every chunk arrived, as lab4 serve does), and the buffer is
 * hashed and the QP's state noted.
 */
static void fx_peer_rc_receiver(const struct fx_env *env, const struct fx_peer_in *in, int fd,
				struct fx_report *rep)
{
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct lab4_accept acc = { .credits = FX_RC_DEPTH };
	struct fx_rc rc = { 0 };
	struct lab4_hello h;
	struct ibv_wc wc;
	uint32_t nchunks, posted, landed = 0;
	int64_t idle_until, drain_until = 0;
	int n;

	if (lab4_recv_hello(fd, &h, FX_TIMEOUT_MS) || h.chunk == 0) {
		fx_peer_fail(rep, -EPROTO, "no HELLO from the act");
		return;
	}
	nchunks = lab4_nchunks(h.size, h.chunk);
	posted = nchunks < FX_RC_DEPTH ? nchunks : FX_RC_DEPTH;
	if (fx_rc_make(&rc, env, h.size, access) || fx_rc_connect(&rc, env, access, &h.dest) ||
	    fx_post_empty_recvs(rc.qp, posted) ||
	    rl_qp_local_dest(rc.qp, env->port, env->gid_index, 0, &acc.dest)) {
		fx_peer_fail(rep, -EIO, "the RC receiver's QP could not be made and connected");
		goto clean;
	}
	acc.addr = h.size ? (uintptr_t)rc.buf : 0;
	acc.rkey = rc.mr ? rc.mr->rkey : 0;
	if (lab4_send_accept(fd, &acc, FX_TIMEOUT_MS)) {
		fx_peer_fail(rep, -EPROTO, "could not send ACCEPT to the act");
		goto clean;
	}
	idle_until = lab4_now_ms() + FX_TIMEOUT_MS;
	for (;;) {
		if (in->result && !rep->result_sent && landed == nchunks)
			fx_peer_send_result(fd, &h, rc.buf, rep);
		n = ibv_poll_cq(rc.cq, 1, &wc);
		if (n > 0) {
			fx_seen_wc(rep, &wc);
			landed += wc.status == IBV_WC_SUCCESS;
			if (wc.status == IBV_WC_SUCCESS && posted < nchunks &&
			    fx_post_empty_recvs(rc.qp, 1) == 0)
				posted++;
			idle_until = lab4_now_ms() + FX_TIMEOUT_MS;
			continue;
		}
		if (!drain_until && fx_hung_up(fd))
			drain_until = lab4_now_ms() + FX_DRAIN_MS;
		if ((drain_until && lab4_now_ms() > drain_until) || lab4_now_ms() > idle_until)
			break;
		usleep(200);
	}
	fx_sha256(rc.buf, h.size, rep->sha256);
	rep->qp_state = fx_qp_state(rc.qp);
clean:
	fx_rc_free(&rc);
}

/* RDMA WRITE WITH IMM of chunk INDEX of the file to the act's buffer, signaled; 0 or an errno. */
static int fx_peer_post(struct fx_rc *rc, const struct fx_peer_in *in,
			const struct lab4_accept *acc, uint32_t index)
{
	uint64_t off = (uint64_t)index * in->chunk;
	struct ibv_sge sge = {
		.addr = (uintptr_t)(rc->buf + off),
		.length = lab4_chunk_len(in->size, in->chunk, index),
		.lkey = rc->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = index,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htobe32(index),
		.wr.rdma.remote_addr = acc->addr + off,
		.wr.rdma.rkey = acc->rkey,
	};
	struct ibv_send_wr *bad;

	return ibv_post_send(rc->qp, &wr, &bad);
}

/*
 * Writes chunks in->first .. + in->count, at most WINDOW in flight, into
 * REP's sent and completed. Once the act hangs up FD, what is in flight
 * has FX_DRAIN_MS to complete: the act's receiver is gone after that.
 */
static void fx_peer_write(struct fx_rc *rc, const struct fx_peer_in *in, uint32_t window,
			  const struct lab4_accept *acc, int fd, struct fx_report *rep)
{
	uint32_t next = in->first, end = in->first + in->count, inflight = 0;
	int64_t idle_until = lab4_now_ms() + FX_TIMEOUT_MS, drain_until = 0;
	struct ibv_wc wc;

	while (next < end || inflight > 0) {
		if (next < end && inflight < window && !drain_until) {
			rep->sent = -fx_peer_post(rc, in, acc, next);
			if (rep->sent)
				return;
			next++;
			inflight++;
		} else if (ibv_poll_cq(rc->cq, 1, &wc) == 1) {
			if (wc.status != IBV_WC_SUCCESS) {
				rl_fail_wc("the test's RDMA WRITE WITH IMM", &wc);
				rep->sent = -EIO;
				return;
			}
			inflight--;
			rep->completed++;
			idle_until = lab4_now_ms() + FX_TIMEOUT_MS;
		} else if (!drain_until && fx_hung_up(fd)) {
			drain_until = lab4_now_ms() + FX_DRAIN_MS;
		} else if (lab4_now_ms() > (drain_until ? drain_until : idle_until)) {
			rep->sent = drain_until ? -ECONNRESET : -ETIMEDOUT;
			return;
		} else {
			usleep(100); /* one CPU in the guest: leave it to rxe and the act */
		}
	}
}

/*
 * RC sender: HELLO (the file, its SHA-256 announced, flipped when asked),
 * the act's ACCEPT, then the writes IN asks for, when it asks; with
 * IN->result, then the act's RESULT, as lab4 send waits for it.
 */
static void fx_peer_rc_sender(const struct fx_env *env, const struct fx_peer_in *in, int fd,
			      struct fx_report *rep)
{
	struct lab4_hello h = { .transport = LAB4_RC, .size = in->size, .chunk = in->chunk };
	struct fx_rc rc = { 0 };
	struct lab4_accept acc;
	uint32_t window;
	char go;

	if (fx_rc_make(&rc, env, in->size, 0) ||
	    rl_qp_local_dest(rc.qp, env->port, env->gid_index, 0, &h.dest)) {
		fx_peer_fail(rep, -EIO, "the RC sender's QP could not be made");
		goto clean;
	}
	/* Its own bytes: nothing the act holds (c->in, the parent's memory) tells what they are. */
	fx_fill(rc.buf, in->size, fx_random());
	fx_sha256(rc.buf, in->size, h.sha256);
	memcpy(rep->file_sha256, h.sha256, sizeof(h.sha256));
	if (in->flip_hash)
		h.sha256[0] ^= 0xff;
	if (lab4_send_hello(fd, &h, FX_TIMEOUT_MS) || lab4_recv_accept(fd, &acc, FX_TIMEOUT_MS) ||
	    acc.status) {
		fx_peer_fail(rep, -EPROTO, "no ACCEPT from the act");
		goto clean;
	}
	if (fx_rc_connect(&rc, env, 0, &acc.dest)) {
		fx_peer_fail(rep, -EIO, "the RC sender's QP could not be connected");
		goto clean;
	}
	if (in->wait_go && rl_oob_recv(fd, &go, 1, FX_PEER_ACCEPT_MS)) {
		fx_peer_fail(rep, -ETIMEDOUT, "the act never said go");
		goto clean;
	}
	if (in->delay_ms)
		usleep((useconds_t)in->delay_ms * 1000);
	window = in->window < acc.credits ? in->window : acc.credits;
	if (in->count)
		fx_peer_write(&rc, in, window ? window : 1, &acc, fd, rep);
	if (in->result && !rep->sent)
		rep->got_result = lab4_recv_result(fd, &rep->result, FX_RESULT_MS) == 0;
clean:
	fx_rc_free(&rc);
}

/*
 * UD probe: a datagram of fresh random bytes to the act with IN's Q_Key,
 * sent again every FX_UD_RESEND_MS (a datagram may be lost) until the act,
 * which says what reached it, hangs up FD.
 */
static void fx_peer_ud_probe(struct lab4_ud *u, const struct fx_peer_in *in,
			     const struct lab4_ud_hello *act, struct ibv_ah *ah, int fd,
			     struct fx_report *rep)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint8_t probe[FX_PROBE_LEN];
	int tries;

	if (getrandom(probe, sizeof(probe), 0) != sizeof(probe)) {
		fx_peer_fail(rep, -EIO, "the UD probe could not be made");
		return;
	}
	EVP_Digest(probe, sizeof(probe), rep->probe_sha256, NULL, EVP_sha256(), NULL);
	for (tries = 0; tries < FX_UD_TRIES && !fx_hung_up(fd); tries++) {
		if (fx_ud_send(u, ah, act->qpn, in->qkey, probe, sizeof(probe))) {
			fx_peer_fail(rep, -EIO, "the UD probe could not be sent");
			return;
		}
		poll(&p, 1, FX_UD_RESEND_MS);
	}
}

/*
 * Waits up to FX_UD_RESEND_MS for the echo of datagram number SEQ (MSG,
 * LEN bytes): 1 when it came back whole, 0 when it did not come (echoes of
 * earlier numbers, sent twice, are dropped), -1 when it came back changed.
 */
static int fx_peer_ud_echo_of(struct lab4_ud *u, const uint8_t *msg, uint32_t len, uint32_t seq)
{
	int64_t deadline = lab4_now_ms() + FX_UD_RESEND_MS;
	const uint8_t *payload;
	struct ibv_wc wc;
	uint32_t be;
	bool whole;
	int ret = 0;

	while (ret == 0 && fx_poll_one(u->cq, &wc, (int)(deadline - lab4_now_ms())) == 1) {
		payload = fx_ud_slot(u, (int)wc.wr_id) + LAB4_GRH_LEN;
		memcpy(&be, payload, sizeof(be));
		whole = wc.byte_len == LAB4_GRH_LEN + len && memcmp(payload, msg, len) == 0;
		if (wc.status == IBV_WC_SUCCESS && wc.byte_len >= LAB4_GRH_LEN + 4 &&
		    be32toh(be) == seq)
			ret = whole ? 1 : -1;
		fx_ud_post_recv(u, (int)wc.wr_id);
	}
	return ret;
}

/*
 * UD ping, as lab4 ud-ping does: IN->pings datagrams of IN->ping_len bytes,
 * each numbered in its first 4 bytes (big-endian) and random after, each
 * sent again until its echo comes back, until the act hangs up FD;
 * REP->echoes counts those that came back whole.
 */
static void fx_peer_ud_ping(struct lab4_ud *u, const struct fx_peer_in *in,
			    const struct lab4_ud_hello *act, struct ibv_ah *ah, int fd,
			    struct fx_report *rep)
{
	uint8_t *msg = malloc(in->ping_len + 1);
	uint32_t seq, be;
	int tries, back;

	if (!msg || in->ping_len < 4) {
		fx_peer_fail(rep, -EINVAL, "no datagram of %u bytes to ping with", in->ping_len);
		free(msg);
		return;
	}
	for (seq = 0; seq < in->pings && !fx_hung_up(fd); seq++) {
		be = htobe32(seq);
		memcpy(msg, &be, 4);
		if (getrandom(msg + 4, in->ping_len - 4, 0) != (ssize_t)(in->ping_len - 4)) {
			fx_peer_fail(rep, -EIO, "no random bytes for datagram %u", seq);
			break;
		}
		for (tries = 0, back = 0; tries < FX_UD_TRIES && back == 0; tries++)
			back = fx_ud_send(u, ah, act->qpn, act->qkey, msg, in->ping_len) ?
				       -1 :
				       fx_peer_ud_echo_of(u, msg, in->ping_len, seq);
		rep->echoes += back == 1;
	}
	free(msg);
}

/*
 * UD receiver: every datagram, until the act hangs up; with ECHO, each one
 * is sent back to the act through AH, as lab4 ud-pong does.
 */
static void fx_peer_ud_receive(struct lab4_ud *u, const struct lab4_ud_hello *act,
			       struct ibv_ah *ah, int fd, struct fx_report *rep)
{
	int64_t idle_until = lab4_now_ms() + FX_TIMEOUT_MS, drain_until = 0;
	const uint8_t *payload;
	struct ibv_wc wc;

	for (;;) {
		if (fx_poll_one(u->cq, &wc, 0) == 1) {
			fx_seen_wc(rep, &wc);
			payload = fx_ud_slot(u, (int)wc.wr_id) + LAB4_GRH_LEN;
			if (rep->nseen <= FX_MAX_SEEN && wc.status == IBV_WC_SUCCESS &&
			    wc.byte_len >= LAB4_GRH_LEN)
				EVP_Digest(payload, wc.byte_len - LAB4_GRH_LEN,
					   rep->seen[rep->nseen - 1].sha256, NULL, EVP_sha256(),
					   NULL);
			if (ah && wc.status == IBV_WC_SUCCESS && wc.byte_len >= LAB4_GRH_LEN &&
			    fx_ud_send(u, ah, act->qpn, act->qkey, payload,
				       wc.byte_len - LAB4_GRH_LEN) == 0)
				rep->echoes++;
			fx_ud_post_recv(u, (int)wc.wr_id);
			idle_until = lab4_now_ms() + FX_TIMEOUT_MS;
			continue;
		}
		if (!drain_until && fx_hung_up(fd))
			drain_until = lab4_now_ms() + FX_DRAIN_MS;
		if ((drain_until && lab4_now_ms() > drain_until) || lab4_now_ms() > idle_until)
			return;
		usleep(200);
	}
}

/* UD: swap UD_HELLOs (the act's first), then probe, ping or receive (and echo). */
static void fx_peer_ud(const struct fx_env *env, const struct fx_peer_in *in, int fd,
		       struct fx_report *rep)
{
	struct lab4_ud_hello mine = { .count = in->pings, .size = in->ping_len }, act;
	struct ibv_context *ctx = rl_open_device(env->dev);
	struct lab4_ud u = { 0 };
	struct ibv_ah *ah = NULL;

	if (!ctx || fx_ud_make(&u, ctx, env->port, env->gid_index, FX_UD_RTS) ||
	    ibv_query_gid(ctx, env->port, env->gid_index, &mine.gid)) {
		fx_peer_fail(rep, -EIO, "the peer's UD QP could not be made");
		goto clean;
	}
	rep->mtu = u.mtu;
	mine.qpn = u.qp->qp_num;
	mine.qkey = u.qkey;
	if (lab4_recv_ud_hello(fd, &act, FX_TIMEOUT_MS) ||
	    lab4_send_ud_hello(fd, &mine, FX_TIMEOUT_MS)) {
		fx_peer_fail(rep, -EPROTO, "no UD_HELLO from the act");
		goto clean;
	}
	if (in->probe || in->echo || in->pings) {
		ah = fx_ud_ah(&u, &act.gid);
		if (!ah) {
			fx_peer_fail(rep, -EIO, "no address handle to the act's GID");
			goto clean;
		}
	}
	if (in->probe)
		fx_peer_ud_probe(&u, in, &act, ah, fd, rep);
	else if (in->pings)
		fx_peer_ud_ping(&u, in, &act, ah, fd, rep);
	else
		fx_peer_ud_receive(&u, &act, ah, fd, rep);
clean:
	if (ah)
		ibv_destroy_ah(ah);
	fx_ud_close(&u);
	if (ctx)
		ibv_close_device(ctx);
}

/*
 * Meets the act (or the program) on TCP: listens on 127.0.0.1 and tells
 * the parent the port on descriptor 3, or connects to IN->connect. The
 * socket, or -1 after noting why in REP.
 */
static int fx_peer_meet(const struct fx_peer_in *in, struct fx_report *rep)
{
	uint16_t port = in->connect;
	int lfd = -1, fd;

	if (!port)
		lfd = rl_oob_listen("127.0.0.1", 0, &port);
	if (!fx_write_all(3, &port, sizeof(port)) || (!in->connect && lfd < 0))
		_exit(1);
	if (in->connect) {
		fd = rl_oob_connect("127.0.0.1", in->connect, FX_PEER_ACCEPT_MS);
		if (fd < 0)
			fx_peer_fail(rep, -ETIMEDOUT, "nothing listened on 127.0.0.1:%u", port);
		return fd;
	}
	fd = rl_oob_accept(lfd, FX_PEER_ACCEPT_MS);
	close(lfd);
	if (fd < 0)
		fx_peer_fail(rep, -ETIMEDOUT, "the act never connected");
	return fd;
}

/*
 * The peer's process: descriptor 3 to the parent (its port first, then the
 * report), nothing else of the parent's; meets the act, plays ROLE.
 */
static void __attribute__((noreturn))
fx_peer_main(const struct fx_env *env, const struct fx_peer_in *in, enum fx_role role, int out)
{
	struct fx_report rep = { 0 };
	int null = open("/dev/null", O_RDWR), fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(out, 3) < 0)
		_exit(1);
	close_range(4, ~0U, 0);
	fd = fx_peer_meet(in, &rep);
	if (fd >= 0 && role == FX_RC_RECEIVER)
		fx_peer_rc_receiver(env, in, fd, &rep);
	else if (fd >= 0 && role == FX_RC_SENDER)
		fx_peer_rc_sender(env, in, fd, &rep);
	else if (fd >= 0)
		fx_peer_ud(env, in, fd, &rep);
	if (fd >= 0)
		close(fd);
	fx_write_all(3, &rep, sizeof(rep));
	_exit(0);
}

/*
 * The peer's own versions of the lab's steps: each does the work of one
 * or more of them, with its own structures. Only the peer runs them, a
 * fork of the parent made before the act, with its own copy of the
 * program: each is hidden in every act (RL_HIDDEN 0, tests/harness.h), the
 * static ones too; where the compiler inlined one into its caller, the
 * caller is hidden as well.
 */
RL_HIDDEN(fx_peer_write, 0);       /* step 1: a window of writes in flight */
RL_HIDDEN(fx_peer_post, 0);        /* step 2a: lab4_post_chunk */
RL_HIDDEN(fx_peer_rc_sender, 0);   /* steps 1 and 2a: lab4 send */
RL_HIDDEN(fx_peer_rc_receiver, 0); /* step 2: lab4_receive_file, lab4 serve */
RL_HIDDEN(fx_peer_ud_probe, 0);    /* step 3c: lab4_ud_send */
RL_HIDDEN(fx_peer_ud_echo_of, 0);  /* step 3d: lab4_ud_payload */
RL_HIDDEN(fx_peer_ud_ping, 0);     /* steps 3c and 3d: ud-ping */
RL_HIDDEN(fx_peer_ud_receive, 0);  /* steps 3c and 3d: ud-pong */
RL_HIDDEN(fx_peer_ud, 0);          /* step 3: a UD QP to RTS, an AH, the above */
RL_HIDDEN(fx_peer_main, 0);        /* all of the above */

/* --- the peer, from the parent ------------------------------------------- */

/* The peers of the test running now (the parent's alone: the act's copy is closed). */
static struct {
	const struct rl_graded *test;
	int n;
	int pid[FX_MAX_PEERS];
	int report[FX_MAX_PEERS];
} fx_peers;

/* Reads N bytes from FD into P within MS ms; false when they do not all come. */
static bool fx_read_all(int fd, void *p, size_t n, int ms)
{
	int64_t deadline = lab4_now_ms() + ms;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char *c = p;
	ssize_t r;

	while (n) {
		int left = (int)(deadline - lab4_now_ms());

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
static void fx_peers_of(const struct rl_graded *test)
{
	int i;

	if (fx_peers.test == test)
		return;
	for (i = 0; i < fx_peers.n; i++)
		if (fx_peers.report[i] >= 0)
			close(fx_peers.report[i]);
	fx_peers.test = test;
	fx_peers.n = 0;
}

int fx_peer_start(struct rl_case *c, struct fx_peer_in *in, enum fx_role role)
{
	struct fx_env env = { .gid_index = rl_test_gid_index(), .port = rl_test_ib_port() };
	int p[2], i, pid;
	uint16_t port;

	fx_peers_of(c->g);
	ck_assert_msg(fx_peers.n < FX_MAX_PEERS, "fixture: at most %d peers a test", FX_MAX_PEERS);
	snprintf(env.dev, sizeof(env.dev), "%s", rl_test_device());
	ck_assert_msg(pipe2(p, O_CLOEXEC) == 0, "fixture: pipe2: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	ck_assert_msg(pid >= 0, "fixture: fork: %s", strerror(errno));
	if (pid == 0)
		fx_peer_main(&env, in, role, p[1]);
	close(p[1]);
	i = fx_peers.n++;
	fx_peers.pid[i] = pid;
	fx_peers.report[i] = p[0];
	ck_assert_msg(fx_read_all(p[0], &port, sizeof(port), 10000) && port,
		      "fixture: the test's peer could not listen on 127.0.0.1");
	in->port = port;
	return i;
}

/*
 * Peer number I's report into REP within MS ms, whether it came; a peer
 * that sent none by then is killed. The peer is reaped either way.
 */
static bool fx_peer_read(struct rl_case *c, int i, struct fx_report *rep, int ms)
{
	bool got;
	int k;

	fx_peers_of(c->g);
	memset(rep, 0, sizeof(*rep));
	if (i >= fx_peers.n || fx_peers.report[i] < 0)
		ck_assert_msg(
			0, "fixture: no peer %d (a fault in the test: tell the kit's authors)", i);
	got = fx_read_all(fx_peers.report[i], rep, sizeof(*rep), ms);
	close(fx_peers.report[i]);
	fx_peers.report[i] = -1;
	if (!got)
		kill(fx_peers.pid[i], SIGKILL);
	for (k = 0; k < 100 && waitpid(fx_peers.pid[i], NULL, WNOHANG) == 0; k++)
		usleep(10000);
	return got;
}

bool fx_peer_report(struct rl_case *c, int i, struct fx_report *rep)
{
	if (!rl_expect(c, fx_peer_read(c, i, rep, FX_PEER_REPORT_MS),
		       "the test's peer sent no report within %d s (a fault in the test: tell "
		       "the kit's authors)",
		       FX_PEER_REPORT_MS / 1000))
		return false;
	return rl_expect(c, rep->ret == 0,
			 "the test's peer failed: %s (%s; a fault in the test: tell the kit's "
			 "authors)",
			 rep->error, strerror(-rep->ret));
}

bool fx_peer_report_of(struct rl_case *c, int i, struct fx_report *rep, const char *prog,
		       const struct fx_run *run)
{
	if (!rl_expect(c, fx_peer_read(c, i, rep, FX_PEER_AFTER_MS),
		       "%s never met the test's peer (%d s after it ended, the peer was still "
		       "waiting); it exited %d:\n%s%s",
		       prog, FX_PEER_AFTER_MS / 1000, run->status, run->out, run->err))
		return false;
	return rl_expect(c, rep->ret == 0,
			 "the test's peer could not finish with %s: %s (%s); it exited %d:\n%s%s",
			 prog, rep->error, strerror(-rep->ret), run->status, run->out, run->err);
}
