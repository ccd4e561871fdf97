/*
 * peer.c: the Lab 1 tests' peer, and the reference Lab 1 server and client.
 *
 * The peer is a process a test's setup starts before the act, so it shares
 * nothing with the student's code but a TCP connection and an RC QP: it
 * connects its QP to the act's, then writes, reads or sends to it and takes
 * what the act sends, and reports to the check (on a pipe the act never
 * holds) what its completions said and what arrived in its own memory.
 * Its texts are chosen in the peer, so the act cannot know them unless
 * they really arrived. Nothing here may call ck_assert in the peer (a failed
 * one would take the peer back into the runner): errors go into its log.
 */
#define _GNU_SOURCE /* close_range, pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"

/* The peer running for the current test, as its parent knows it. */
static pid_t fx_peer_pid;
static int fx_peer_fd = -1;

/* What the peer was told before it started. */
struct fx_peer_env {
	unsigned what;
	const char *addr; /* where the act's lab1 server listens (RDMALAB_ADDR) */
	struct fx_peer_in in;
};

/*
 * The reference's buffer. Its description (addr, len) is the first
 * LAB1_BUF_SIZE bytes, but its rkey reaches only its target, the part the
 * other side's RDMA writes are for; everything else (what it sends, what it
 * receives or reads) is under a local-only key that never leaves it.
 */
#define FX_REF_BUF_SIZE (2 * LAB1_BUF_SIZE)
/* The link peer's target is the act's whole view of its buffer; its messages come after. */
#define FX_PEER_SENT_AT LAB1_BUF_SIZE
#define FX_PEER_RECV_AT (LAB1_BUF_SIZE + FX_TEXT_MAX)
#define FX_PEER_READ_AT (LAB1_BUF_SIZE + 2 * FX_TEXT_MAX)
_Static_assert(FX_BUF_SIZE <= LAB1_BUF_SIZE && FX_PEER_READ_AT + FX_TEXT_MAX <= FX_REF_BUF_SIZE,
	       "the link peer's target and messages must not overlap");

/* The reference's objects: one RC QP, its CQs (sends, receives), its buffer and two MRs. */
struct fx_ref {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *send_cq, *recv_cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;     /* the whole buffer, local access only: its own work requests */
	struct ibv_mr *target; /* the part the other side may RDMA-write, or NULL: none */
	char *buf;
	uint8_t port;
	int gid_index;
};

/*
 * What the reference is built from: the framework's versions of the lab's
 * steps (rl_alloc_pd is step 1, rl_reg_mr 2, rl_create_cq 3,
 * rl_create_rc_qp 4, rl_qp_to_init, rl_qp_to_rtr and rl_qp_to_rts 5 to 7,
 * rl_qp_local_dest 8, rl_post_* and rl_poll_cq 10). Only the peer and the
 * checks run them, and the reference's own steps below: each is hidden in
 * every act (RL_HIDDEN 0, tests/harness.h). The peer, forked from the
 * parent before the act, keeps its own copy of the program.
 */
RL_HIDDEN(rl_alloc_pd, 0);
RL_HIDDEN(rl_reg_mr, 0);
RL_HIDDEN(rl_create_cq, 0);
RL_HIDDEN(rl_create_rc_qp, 0);
RL_HIDDEN(rl_qp_to_init, 0);
RL_HIDDEN(rl_qp_to_rtr, 0);
RL_HIDDEN(rl_qp_to_rts, 0);
RL_HIDDEN(rl_qp_local_dest, 0);
RL_HIDDEN(rl_post_recv, 0);
RL_HIDDEN(rl_post_send_msg, 0);
RL_HIDDEN(rl_post_write, 0);
RL_HIDDEN(rl_post_read, 0);
RL_HIDDEN(rl_poll_cq, 0);

/*
 * The reference wire format, step 8's encoding and decoding. The link's
 * fixture (fx_link_swap) sends with it in the acts of other steps, and the
 * checks compare with it: hidden in step 8's acts.
 */
void fx_encode_dest(const struct lab1_dest *d, uint8_t out[LAB1_DEST_WIRE_LEN])
{
	struct rl_wire w;

	rl_wire_writer(&w, out, LAB1_DEST_WIRE_LEN);
	rl_wire_put_u32(&w, d->qpn);
	rl_wire_put_u32(&w, d->psn);
	rl_wire_put_bytes(&w, d->gid.raw, sizeof(d->gid.raw));
	rl_wire_put_u64(&w, d->addr);
	rl_wire_put_u32(&w, d->rkey);
	rl_wire_put_u32(&w, d->len);
	rl_wire_put_u16(&w, d->lid);
}
RL_HIDDEN(fx_encode_dest, 8);

int fx_decode_dest(const uint8_t in[LAB1_DEST_WIRE_LEN], struct lab1_dest *d)
{
	struct rl_wire w;

	rl_wire_reader(&w, in, LAB1_DEST_WIRE_LEN);
	d->qpn = rl_wire_get_u32(&w);
	d->psn = rl_wire_get_u32(&w);
	rl_wire_get_bytes(&w, d->gid.raw, sizeof(d->gid.raw));
	d->addr = rl_wire_get_u64(&w);
	d->rkey = rl_wire_get_u32(&w);
	d->len = rl_wire_get_u32(&w);
	d->lid = rl_wire_get_u16(&w);
	return d->qpn > 0xffffff || d->psn > 0xffffff ? -EINVAL : 0;
}
RL_HIDDEN(fx_decode_dest, 8);

/* A random text of letters and digits, 1/2 to all of SIZE - 1 long, without ck_assert. */
static void fx_text(char *text, size_t size)
{
	static const char chars[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	size_t len, i;

	if (getrandom(text, size, 0) != (ssize_t)size)
		for (i = 0; i < size; i++)
			text[i] = (char)(rand() ^ (int)clock());
	len = (size - 1) / 2 + (unsigned char)text[size - 1] % (size - (size - 1) / 2);
	for (i = 0; i < len; i++)
		text[i] = chars[(unsigned char)text[i] % (sizeof(chars) - 1)];
	text[len] = '\0';
}

static uint32_t fx_random_psn(void)
{
	uint32_t psn = 0;

	if (getrandom(&psn, sizeof(psn), 0) != sizeof(psn))
		psn = (uint32_t)getpid();
	return psn & 0xffffff;
}

static void fx_ref_close(struct fx_ref *r)
{
	if (r->qp)
		ibv_destroy_qp(r->qp);
	if (r->target)
		ibv_dereg_mr(r->target);
	if (r->mr)
		ibv_dereg_mr(r->mr);
	if (r->send_cq)
		ibv_destroy_cq(r->send_cq);
	if (r->recv_cq)
		ibv_destroy_cq(r->recv_cq);
	if (r->pd)
		ibv_dealloc_pd(r->pd);
	if (r->ctx)
		ibv_close_device(r->ctx);
	free(r->buf);
	memset(r, 0, sizeof(*r));
}
RL_HIDDEN(fx_ref_close, 0);

/*
 * R's objects on the environment's device (RDMALAB_DEVICE, _IB_PORT,
 * _GID_INDEX, read without rl_test_*: they would ck_assert), its QP in
 * INIT, its target the TARGET_LEN bytes at TARGET_OFF of its buffer (none
 * when TARGET_LEN is 0): 0 or a negative errno.
 */
static int fx_ref_open(struct fx_ref *r, size_t target_off, size_t target_len)
{
	const char *gid_index = getenv("RDMALAB_GID_INDEX");
	int ret = -ENOMEM;

	memset(r, 0, sizeof(*r));
	r->port = rl_test_ib_port();
	r->gid_index = gid_index ? atoi(gid_index) : 0;
	r->ctx = rl_open_device(NULL);
	if (!r->ctx)
		return -ENODEV;
	r->buf = aligned_alloc(4096, FX_REF_BUF_SIZE);
	if (!r->buf)
		goto fail;
	memset(r->buf, 0, FX_REF_BUF_SIZE);
	ret = -EIO;
	r->pd = rl_alloc_pd(r->ctx);
	r->send_cq = r->pd ? rl_create_cq(r->ctx, 2 * FX_DEPTH, NULL) : NULL;
	r->recv_cq = r->send_cq ? rl_create_cq(r->ctx, 2 * FX_DEPTH, NULL) : NULL;
	r->qp = r->recv_cq ? rl_create_rc_qp(r->pd, r->send_cq, r->recv_cq, FX_DEPTH) : NULL;
	r->mr = r->qp ? rl_reg_mr(r->pd, r->buf, FX_REF_BUF_SIZE, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!r->mr)
		goto fail;
	if (target_len) {
		r->target = rl_reg_mr(r->pd, r->buf + target_off, target_len,
				      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		if (!r->target)
			goto fail;
	}
	ret = rl_qp_to_init(r->qp, r->port, IBV_ACCESS_REMOTE_WRITE);
	if (ret)
		goto fail;
	return 0;
fail:
	fx_ref_close(r);
	return ret;
}
RL_HIDDEN(fx_ref_open, 0);

/*
 * Swap descriptions with the other side over FD (lab1.h's wire format),
 * then RTR and RTS. Ours gives the target's rkey, or none.
 */
static int fx_ref_connect(struct fx_ref *r, int fd, struct lab1_dest *remote)
{
	struct lab1_dest ours = {
		.addr = (uintptr_t)r->buf,
		.rkey = r->target ? r->target->rkey : 0,
		.len = r->target ? LAB1_BUF_SIZE : 0,
	};
	uint8_t wire[LAB1_DEST_WIRE_LEN];
	struct rl_qp_dest qd, theirs;
	int ret;

	ret = rl_qp_local_dest(r->qp, r->port, r->gid_index, fx_random_psn(), &qd);
	if (ret)
		return ret;
	ours.qpn = qd.qpn;
	ours.psn = qd.psn;
	ours.lid = qd.lid;
	ours.gid = qd.gid;
	fx_encode_dest(&ours, wire);
	ret = rl_oob_send(fd, wire, sizeof(wire), FX_OOB_TIMEOUT_MS);
	if (ret)
		return ret;
	ret = rl_oob_recv(fd, wire, sizeof(wire), FX_OOB_TIMEOUT_MS);
	if (ret)
		return ret;
	if (fx_decode_dest(wire, remote))
		return -EINVAL;
	theirs = (struct rl_qp_dest){
		.qpn = remote->qpn,
		.psn = remote->psn,
		.lid = remote->lid,
		.gid = remote->gid,
	};
	ret = rl_qp_to_rtr(r->qp, r->port, r->gid_index, &theirs);
	return ret ? ret : rl_qp_to_rts(r->qp, ours.psn);
}
RL_HIDDEN(fx_ref_connect, 0);

/* The state of R's QP (enum ibv_qp_state), or -1 when it cannot be asked. */
static int fx_ref_state(struct fx_ref *r)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	return ibv_query_qp(r->qp, &attr, IBV_QP_STATE, &init) ? -1 : (int)attr.qp_state;
}

/* One completion of CQ within TIMEOUT_MS: its status, or -1 when none came. */
static int fx_ref_status(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms)
{
	int ret = rl_poll_cq(cq, wc, timeout_ms);

	return ret == -ETIMEDOUT ? -1 : (int)wc->status;
}

int fx_ref_server(int fd, struct lab1_received *got)
{
	struct lab1_dest remote;
	struct fx_ref r;
	struct ibv_wc wc;
	int ret;
	char done;

	memset(got, 0, sizeof(*got));
	/* The client writes its text at LAB1_WRITE_OFFSET; its message lands at 0, out of reach. */
	ret = fx_ref_open(&r, LAB1_WRITE_OFFSET, LAB1_WRITE_MAX);
	if (ret)
		return ret;
	/* The receive is there before our QP is: the client can only send once both are connected. */
	ret = rl_post_recv(r.qp, r.mr, r.buf, LAB1_MSG_MAX, LAB1_WR_RECV);
	if (ret == 0)
		ret = fx_ref_connect(&r, fd, &remote);
	if (ret == 0)
		ret = rl_poll_cq(r.recv_cq, &wc, LAB1_WC_TIMEOUT_MS);
	if (ret == 0) {
		memcpy(got->msg, r.buf, LAB1_MSG_MAX - 1);
		memcpy(got->written, r.buf + LAB1_WRITE_OFFSET, LAB1_WRITE_MAX - 1);
		/* Until the client has its completions: our QP outlives its ACKs. */
		ret = rl_oob_recv(fd, &done, 1, FX_OOB_TIMEOUT_MS);
	}
	fx_ref_close(&r);
	return ret;
}
RL_HIDDEN(fx_ref_server, 0);

int fx_ref_client(const char *host, uint16_t port, const char *msg, const char *text)
{
	size_t msg_len = strlen(msg) + 1, text_len = strlen(text) + 1;
	struct lab1_dest remote;
	struct fx_ref r;
	struct ibv_wc wc;
	int fd, ret, i;
	char done = 'D';

	if (msg_len > LAB1_MSG_MAX || text_len > LAB1_WRITE_MAX)
		return -EMSGSIZE;
	ret = fx_ref_open(&r, 0, 0); /* the server writes nothing into the client */
	if (ret)
		return ret;
	memcpy(r.buf, msg, msg_len);
	memcpy(r.buf + LAB1_WRITE_OFFSET, text, text_len);
	ret = fd = rl_oob_connect(host, port, FX_OOB_TIMEOUT_MS);
	if (fd < 0)
		goto clean_ref;
	ret = fx_ref_connect(&r, fd, &remote);
	if (ret == 0 && remote.len < LAB1_WRITE_OFFSET + text_len)
		ret = -EMSGSIZE;
	if (ret == 0)
		ret = rl_post_write(r.qp, r.mr, r.buf + LAB1_WRITE_OFFSET, (uint32_t)text_len,
				    remote.addr + LAB1_WRITE_OFFSET, remote.rkey, LAB1_WR_WRITE);
	if (ret == 0)
		ret = rl_post_send_msg(r.qp, r.mr, r.buf, (uint32_t)msg_len, LAB1_WR_SEND);
	for (i = 0; i < 2 && ret == 0; i++)
		ret = rl_poll_cq(r.send_cq, &wc, LAB1_WC_TIMEOUT_MS);
	if (ret == 0)
		ret = rl_oob_send(fd, &done, 1, FX_OOB_TIMEOUT_MS);
	close(fd);
clean_ref:
	fx_ref_close(&r);
	return ret;
}
RL_HIDDEN(fx_ref_client, 0);

/* Note in LOG why the peer stopped (the first reason only). */
static void fx_peer_error(struct fx_peer_log *log, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void fx_peer_error(struct fx_peer_log *log, const char *fmt, ...)
{
	va_list ap;

	if (log->error[0])
		return;
	va_start(ap, fmt);
	vsnprintf(log->error, sizeof(log->error), fmt, ap);
	va_end(ap);
}

/* Copy the NUL-terminated text at SRC, at most SIZE - 1 bytes, into DST. */
static void fx_copy_text(char *dst, const char *src, size_t size)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* The peer's part in a test with a link: connect, then do E->what (enum fx_peer_do). */
static void fx_peer_link(const struct fx_peer_env *e, int lfd, struct fx_peer_log *log)
{
	char *sent = NULL, *recv_at, *read_at;
	struct lab1_dest act;
	struct ibv_wc wc;
	struct fx_ref r;
	int fd, ret;
	char go = 0;

	ret = fx_ref_open(&r, 0, e->what & FX_PEER_TARGET ? FX_BUF_SIZE : 0);
	if (ret) {
		fx_peer_error(log, "could not make its QP: %s", strerror(-ret));
		return;
	}
	recv_at = r.buf + FX_PEER_RECV_AT;
	read_at = r.buf + FX_PEER_READ_AT;
	if (e->what & FX_PEER_RECV)
		rl_post_recv(r.qp, r.mr, recv_at, FX_TEXT_MAX, LAB1_WR_RECV);
	fd = rl_oob_accept(lfd, FX_OOB_TIMEOUT_MS);
	if (fd < 0) {
		fx_peer_error(log, "the act never connected to it");
		goto clean_ref;
	}
	ret = fx_ref_connect(&r, fd, &act);
	if (ret) {
		fx_peer_error(log, "could not connect its QP to the act's: %s", strerror(-ret));
		goto clean_fd;
	}
	log->act_rkey = act.rkey;
	if (rl_oob_recv(fd, &go, 1, FX_OOB_TIMEOUT_MS) || go != 'R') {
		fx_peer_error(log, "the act was not ready");
		goto clean_fd;
	}
	if (e->what & (FX_PEER_WRITE | FX_PEER_SEND)) {
		sent = r.buf + FX_PEER_SENT_AT;
		fx_text(sent, 64);
		fx_copy_text(log->sent, sent, sizeof(log->sent));
	}
	if (e->what & FX_PEER_WRITE &&
	    rl_post_write(r.qp, r.mr, sent, (uint32_t)strlen(sent) + 1, act.addr, act.rkey, 1) == 0)
		log->write_status = fx_ref_status(r.send_cq, &wc, FX_WC_TIMEOUT_MS);
	if (e->what & FX_PEER_READ &&
	    rl_post_read(r.qp, r.mr, read_at, 64, act.addr, act.rkey, 2) == 0)
		log->read_status = fx_ref_status(r.send_cq, &wc, FX_WC_TIMEOUT_MS);
	if (e->what & FX_PEER_SEND &&
	    rl_post_send_msg(r.qp, r.mr, sent, (uint32_t)strlen(sent) + 1, 3) == 0)
		log->send_status = fx_ref_status(r.send_cq, &wc, FX_WC_TIMEOUT_MS);
	if (rl_oob_send(fd, "D", 1, FX_OOB_TIMEOUT_MS))
		fx_peer_error(log, "the act went away");
	if (e->what & FX_PEER_RECV) {
		log->recv_status = fx_ref_status(r.recv_cq, &wc, FX_WC_TIMEOUT_MS);
		log->recv_len = wc.byte_len;
		fx_copy_text(log->received, recv_at, sizeof(log->received));
	}
	if (e->what & FX_PEER_TARGET) {
		if (rl_oob_recv(fd, &go, 1, FX_OOB_TIMEOUT_MS) || go != 'F')
			fx_peer_error(log, "the act did not say it had written");
		usleep(50000); /* a completion the write wrongly made would be there by now */
		fx_copy_text(log->target, r.buf + e->in.offset, sizeof(log->target));
		log->target_completions =
			ibv_poll_cq(r.recv_cq, 1, &wc) + ibv_poll_cq(r.send_cq, 1, &wc);
	}
	log->qp_state = fx_ref_state(&r);
clean_fd:
	close(fd);
clean_ref:
	fx_ref_close(&r);
}

/* The peer's process: its part, then the log to the parent on LOG_FD. */
static void __attribute__((noreturn)) fx_peer_main(const struct fx_peer_env *e, int lfd, int log_fd)
{
	struct fx_peer_log log = {
		.write_status = -1,
		.read_status = -1,
		.send_status = -1,
		.recv_status = -1,
		.qp_state = -1,
		.server_ret = -ENOSYS,
		.client_ret = -ENOSYS,
	};
	int null = open("/dev/null", O_RDWR), fd;

	/* Nothing of the runner's: no output, no descriptor but its own two. */
	lfd = fcntl(lfd, F_DUPFD, 10);
	log_fd = fcntl(log_fd, F_DUPFD, 10);
	if (null < 0 || lfd < 0 || log_fd < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
	    dup2(null, 2) < 0 || dup2(lfd, 3) < 0 || dup2(log_fd, 4) < 0)
		_exit(1);
	close_range(5, ~0U, 0);
	signal(SIGTERM, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(60);
	if (e->what & FX_PEER_SESSIONS) {
		fd = rl_oob_accept(3, FX_OOB_TIMEOUT_MS);
		log.server_ret = fd < 0 ? fd : fx_ref_server(fd, &log.server_got);
		if (fd >= 0)
			close(fd);
		fx_text(log.client_msg, 64);
		fx_text(log.client_text, 128);
		log.client_ret =
			fx_ref_client(e->addr, e->in.server_port, log.client_msg, log.client_text);
	} else {
		fx_peer_link(e, 3, &log);
	}
	_exit(write(4, &log, sizeof(log)) == sizeof(log) ? 0 : 1);
}

void fx_peer_stop(void)
{
	if (fx_peer_pid > 0 && kill(fx_peer_pid, SIGKILL) == 0)
		waitpid(fx_peer_pid, NULL, 0);
	if (fx_peer_fd >= 0)
		close(fx_peer_fd);
	fx_peer_pid = 0;
	fx_peer_fd = -1;
}

void fx_peer_start(struct fx_peer_in *in, unsigned what)
{
	struct fx_peer_env e = {
		.what = what,
		.addr = rl_test_addr(),
	};
	int lfd, log[2];
	uint16_t port = 0;

	/* The peer of a test whose check never ran (its act failed) was reaped by the runner. */
	if (fx_peer_pid > 0 && waitpid(fx_peer_pid, NULL, WNOHANG) != 0)
		fx_peer_pid = 0;
	fx_peer_stop();
	lfd = rl_oob_listen(NULL, 0, &port);
	ck_assert_msg(lfd >= 0, "fixture: the test's peer could not listen: %s", strerror(-lfd));
	ck_assert_msg(pipe2(log, O_CLOEXEC) == 0, "fixture: pipe2: %s", strerror(errno));
	in->port = port;
	if (what & FX_PEER_SESSIONS)
		in->server_port = rl_test_free_port();
	if (what & FX_PEER_TARGET)
		in->offset = fx_random_between(1, FX_BUF_SIZE - FX_TEXT_MAX - 1);
	e.in = *in;
	fx_peer_pid = fork();
	ck_assert_msg(fx_peer_pid >= 0, "fixture: fork: %s", strerror(errno));
	if (fx_peer_pid == 0)
		fx_peer_main(&e, lfd, log[1]);
	close(lfd);
	close(log[1]);
	fx_peer_fd = log[0];
}

bool fx_peer_finish(struct rl_case *c, struct fx_peer_log *log)
{
	struct pollfd pfd = { .fd = fx_peer_fd, .events = POLLIN };
	size_t got = 0;
	ssize_t n;
	int i;

	memset(log, 0, sizeof(*log));
	/* Its own steps time out in 20 s at most; a log is one write of a few KiB. */
	while (got < sizeof(*log) && poll(&pfd, 1, 3 * FX_OOB_TIMEOUT_MS / 2) > 0) {
		n = read(fx_peer_fd, (char *)log + got, sizeof(*log) - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	/* It ends once it has written: give it a second, then make sure. */
	for (i = 0; i < 20; i++) {
		if (waitpid(fx_peer_pid, NULL, WNOHANG) == fx_peer_pid) {
			fx_peer_pid = 0;
			break;
		}
		usleep(50000);
	}
	fx_peer_stop();
	if (got == sizeof(*log))
		return true;
	memset(log, 0, sizeof(*log));
	rl_expect(c, false,
		  "the test's peer reported nothing (a fault in the test: tell the kit's "
		  "authors)");
	return false;
}
