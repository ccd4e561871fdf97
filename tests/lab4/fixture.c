/*
 * fixture.c: the Lab 4 tests' helpers besides the peer (peer.c): inputs
 * made from a seed, the act's sender, receiver and UD QP around the lab's
 * steps, the test's posters, a connected pair in one process, the kernel's
 * view of a QP, and a runner for the lab4 program.
 */
#define _GNU_SOURCE /* close_range */
#include <endian.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

/*
 * The test's own version of a step, and the framework's, run around the
 * step under test in an act. Each is declared hidden (RL_HIDDEN,
 * tests/harness.h) in the acts of the step it does, so that the lab's code
 * cannot call it there: the framework's rl_wait_cq(), step 5's event wait
 * (no act runs it), just below; the fixture's after each function.
 * fx_ud_make() stays: step 3's acts need it, each to test one of the
 * step's functions on a UD QP the lab's code did not make (left in RESET
 * for lab4_ud_to_rts(), in RTS for the sends). It brings to RTS only a QP
 * it makes itself, never one it is given, with a few lines of the calls
 * step 3 allows anyway. The peer's versions are hidden in peer.c.
 */
RL_HIDDEN(rl_wait_cq, 5);

/* --- inputs --------------------------------------------------------------- */

uint32_t fx_random(void)
{
	uint32_t x;

	ck_assert_msg(getrandom(&x, sizeof(x), 0) == sizeof(x),
		      "expected a random number from getrandom, got %s", strerror(errno));
	return x;
}

uint32_t fx_between(uint32_t lo, uint32_t hi)
{
	return lo + fx_random() % (hi - lo + 1);
}

/* A generator, not getrandom itself, makes the megabytes quickly; the seed is random. */
void fx_fill(uint8_t *buf, uint64_t n, uint32_t seed)
{
	uint32_t x = seed;
	uint64_t i;

	for (i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
}

void fx_file_sha256(uint64_t size, uint32_t seed, uint8_t sha256[32])
{
	uint8_t *bytes = malloc(size + 1);

	ck_assert_msg(bytes, "expected %llu bytes of memory, got none", (unsigned long long)size);
	fx_fill(bytes, size, seed);
	EVP_Digest(bytes, size, sha256, NULL, EVP_sha256(), NULL);
	free(bytes);
}

/* --- UD QPs, the act's and the peer's -------------------------------------- */

uint8_t *fx_ud_slot(struct lab4_ud *u, int slot)
{
	return u->buf + (size_t)slot * (LAB4_GRH_LEN + u->mtu);
}

int fx_ud_post_recv(struct lab4_ud *u, int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)fx_ud_slot(u, slot),
		.length = LAB4_GRH_LEN + u->mtu,
		.lkey = u->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return -ibv_post_recv(u->qp, &wr, &bad);
}

int fx_ud_post_recvs(struct lab4_ud *u)
{
	int i, ret = 0;

	for (i = 0; i < LAB4_UD_SLOTS && !ret; i++)
		ret = fx_ud_post_recv(u, i);
	return ret;
}

/* A UD QP as lab4_ud_open() makes it, with plain verbs; 0 or a negative errno. */
int fx_ud_make(struct lab4_ud *u, struct ibv_context *ctx, uint8_t port, int gid_index,
	       enum fx_ud_state state)
{
	struct ibv_port_attr pattr;
	struct ibv_qp_init_attr init = {
		.cap = {
			.max_send_wr = 4,
			.max_recv_wr = LAB4_UD_SLOTS,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_UD,
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = port,
		.qkey = LAB4_QKEY,
	};
	size_t size;

	*u = (struct lab4_ud){ .ctx = ctx, .port = port, .gid_index = gid_index, .qkey = LAB4_QKEY };
	if (ibv_query_port(ctx, port, &pattr))
		return -errno;
	u->mtu = 128u << pattr.active_mtu;
	size = (size_t)(LAB4_UD_SLOTS + 1) * (LAB4_GRH_LEN + u->mtu);
	u->buf = calloc(1, size);
	u->pd = ibv_alloc_pd(ctx);
	u->cq = ibv_create_cq(ctx, LAB4_UD_SLOTS, NULL, NULL, 0);
	u->send_cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	if (!u->buf || !u->pd || !u->cq || !u->send_cq)
		return -ENOMEM;
	init.send_cq = u->send_cq;
	init.recv_cq = u->cq;
	u->qp = ibv_create_qp(u->pd, &init);
	u->mr = ibv_reg_mr(u->pd, u->buf, size, IBV_ACCESS_LOCAL_WRITE);
	if (!u->qp || !u->mr)
		return -EIO;
	if (state == FX_UD_RESET)
		return 0;
	if (ibv_modify_qp(u->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		return -EIO;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	if (ibv_modify_qp(u->qp, &a, IBV_QP_STATE))
		return -EIO;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS };
	if (ibv_modify_qp(u->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return -EIO;
	return fx_ud_post_recvs(u);
}

void fx_ud_close(struct lab4_ud *u)
{
	if (u->qp)
		ibv_destroy_qp(u->qp);
	if (u->mr)
		ibv_dereg_mr(u->mr);
	if (u->send_cq)
		ibv_destroy_cq(u->send_cq);
	if (u->cq)
		ibv_destroy_cq(u->cq);
	if (u->pd)
		ibv_dealloc_pd(u->pd);
	free(u->buf);
	*u = (struct lab4_ud){ 0 };
}

struct ibv_ah *fx_ud_ah(struct lab4_ud *u, const union ibv_gid *gid)
{
	struct ibv_ah_attr attr = {
		.is_global = 1,
		.grh = { .dgid = *gid, .sgid_index = (uint8_t)u->gid_index, .hop_limit = 1 },
		.port_num = u->port,
	};

	return ibv_create_ah(u->pd, &attr);
}
RL_HIDDEN(fx_ud_ah, 3);

/* Sends LEN bytes of MSG from U's send slot to QPN/QKEY through AH, and waits for the send. */
int fx_ud_send(struct lab4_ud *u, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey, const void *msg,
	       uint32_t len)
{
	uint8_t *slot = fx_ud_slot(u, LAB4_UD_SLOTS);
	struct ibv_sge sge = { .addr = (uintptr_t)slot, .length = len, .lkey = u->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = qpn, .remote_qkey = qkey },
	}, *bad;
	struct ibv_wc wc;

	memmove(slot, msg, len);
	if (ibv_post_send(u->qp, &wr, &bad))
		return -EIO;
	return fx_poll_one(u->send_cq, &wc, FX_TIMEOUT_MS) == 1 && wc.status == IBV_WC_SUCCESS ?
		       0 :
		       -EIO;
}
RL_HIDDEN(fx_ud_send, 3);

/* --- the act's side ------------------------------------------------------- */

struct ibv_context *fx_open_ctx(void)
{
	const char *dev = rl_test_device();
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	ck_assert_msg(list, "expected a device list, got NULL (%s)", strerror(errno));
	for (i = 0; list[i] && !ctx; i++)
		if (strcmp(ibv_get_device_name(list[i]), dev) == 0)
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	ck_assert_msg(ctx, "expected to open %s, could not", dev);
	return ctx;
}

/* Sleeps 100 us between two empty polls: the guest may have one CPU, for rxe too. */
int fx_poll_one(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	int64_t deadline = lab4_now_ms() + ms;
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0 && lab4_now_ms() < deadline)
		usleep(100);
	return n == 1;
}

static int fx_connect(const struct fx_peer_in *in)
{
	int fd = rl_oob_connect("127.0.0.1", in->port, FX_TIMEOUT_MS);

	ck_assert_msg(fd >= 0, "fixture: could not reach the test's peer on 127.0.0.1:%u",
		      in->port);
	return fd;
}

/* Whether the other side (the act, or the peer) closed FD: it is done, and says so that way. */
bool fx_hung_up(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char byte;

	return poll(&p, 1, 0) > 0 && recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) <= 0;
}

/*
 * What the act's sender really took from its CQ, counted through the
 * context's poll_cq (ibv_poll_cq() calls it), and how many writes the test
 * posted: the writes outstanding before a post, whatever the lab's code
 * keeps in s->posted and s->completed; and which chunks had a completion,
 * whatever signaled flag the lab's code passed to the poster.
 */
#define FX_SENT_MAX 256 /* chunks whose completions are noted one by one */
struct fx_sent {
	struct ibv_cq *cq;
	int (*real_poll_cq)(struct ibv_cq *cq, int n, struct ibv_wc *wc);
	uint32_t posts;    /* by fx_log_post() */
	uint32_t complete; /* one past the last chunk a good completion was taken for */
	uint8_t had_completion[FX_SENT_MAX];
};
static struct fx_sent fx_sent;

static int fx_counting_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	int got = fx_sent.real_poll_cq(cq, n, wc), i;

	for (i = 0; cq == fx_sent.cq && i < got; i++) {
		if (wc[i].wr_id < FX_SENT_MAX)
			fx_sent.had_completion[wc[i].wr_id] = 1;
		if (wc[i].status == IBV_WC_SUCCESS && wc[i].wr_id + 1 > fx_sent.complete)
			fx_sent.complete = (uint32_t)wc[i].wr_id + 1;
	}
	return got;
}

/*
 * Remakes S's CQ and QP with DEPTH entries each, on the same PD and
 * channel: a post beyond DEPTH writes not yet completed fails with ENOMEM,
 * and a completion beyond DEPTH not yet polled is dropped.
 */
static void fx_send_depth(struct lab4_sender *s, uint32_t depth)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	ibv_destroy_qp(s->qp);
	ibv_destroy_cq(s->cq);
	s->cq = ibv_create_cq(s->ctx, (int)depth, NULL, s->comp, 0);
	ck_assert_msg(s->cq && s->cq->cqe == (int)depth,
		      "fixture: expected a CQ of exactly %u entries, got %d", depth,
		      s->cq ? s->cq->cqe : -1);
	s->qp = lab4_create_qp(s->pd, s->cq, s->cq, depth, 1, LAB4_RC);
	ck_assert_msg(s->qp && ibv_query_qp(s->qp, &attr, IBV_QP_CAP, &init) == 0 &&
			      init.cap.max_send_wr == depth,
		      "fixture: expected a send queue of exactly %u entries", depth);
	s->qpx = ibv_qp_to_qp_ex(s->qp);
}

void fx_send_open(struct fx_send *x, const struct fx_peer_in *in, uint32_t depth)
{
	uint8_t port = rl_test_ib_port();
	int gid = rl_test_gid_index();
	struct lab4_hello h = { .transport = LAB4_RC, .size = in->size, .chunk = in->chunk };
	struct lab4_file f = { .size = in->size };
	struct lab4_accept acc;

	memset(x, 0, sizeof(*x));
	x->ctx = fx_open_ctx();
	x->bytes = malloc(in->size + 1);
	ck_assert_ptr_nonnull(x->bytes);
	fx_fill(x->bytes, in->size, in->seed);
	f.data = in->size ? x->bytes : NULL;
	ck_assert_msg(lab4_sender_open(&x->s, x->ctx, &f, LAB4_RC) == 0, "fixture: sender_open");
	if (depth)
		fx_send_depth(&x->s, depth);
	x->fd = fx_connect(in);
	ck_assert_int_eq(rl_qp_local_dest(x->s.qp, port, gid, 0, &h.dest), 0);
	ck_assert_msg(lab4_send_hello(x->fd, &h, FX_TIMEOUT_MS) == 0 &&
			      lab4_recv_accept(x->fd, &acc, FX_TIMEOUT_MS) == 0 && !acc.status,
		      "fixture: no ACCEPT from the test's peer");
	ck_assert_msg(lab4_qp_connect(x->s.qp, port, gid, LAB4_RC, &acc.dest) == 0,
		      "fixture: sender qp_connect");
	x->s.remote_addr = acc.addr;
	x->s.rkey = acc.rkey;
	x->s.chunk = in->chunk;
	x->s.nchunks = lab4_nchunks(in->size, in->chunk);
	x->s.timeout_ms = FX_TIMEOUT_MS;
	x->s.post = fx_log_post;
	/* The given busy wait: steps 1 and 2 are graded without step 5's waits. */
	x->s.wait = LAB4_WAIT_BUSY;
	fx_sent = (struct fx_sent){ .cq = x->s.cq, .real_poll_cq = x->ctx->ops.poll_cq };
	x->ctx->ops.poll_cq = fx_counting_poll_cq;
}

void fx_send_say_signaled(struct fx_send *x, const char *name)
{
	uint32_t n = x->s.nchunks < FX_SENT_MAX ? x->s.nchunks : FX_SENT_MAX;
	struct ibv_wc wc;

	/* A completion the lab's code left behind was a signaled write too. */
	usleep(50000);
	while (ibv_poll_cq(x->s.cq, 1, &wc) > 0)
		;
	rl_say_bytes(name, fx_sent.had_completion, n);
}

void fx_send_hangup(struct fx_send *x)
{
	if (x->fd >= 0)
		close(x->fd);
	x->fd = -1;
}

void fx_send_close(struct fx_send *x)
{
	fx_send_hangup(x);
	x->ctx->ops.poll_cq = fx_sent.real_poll_cq;
	lab4_sender_close(&x->s);
	ibv_close_device(x->ctx);
	free(x->bytes);
}

/* RDMA WRITE WITH IMM of chunk INDEX with immediate data IMM (host order). */
static int fx_post_write(struct lab4_sender *s, uint32_t index, bool signaled, uint32_t imm)
{
	uint64_t offset = (uint64_t)index * s->chunk;
	struct ibv_sge sge = {
		.addr = (uintptr_t)(s->data + offset),
		.length = lab4_chunk_len(s->size, s->chunk, index),
		.lkey = s->mr ? s->mr->lkey : 0,
	};
	struct ibv_send_wr wr = {
		.wr_id = index,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = signaled ? IBV_SEND_SIGNALED : 0,
		.imm_data = htobe32(imm),
		.wr.rdma.remote_addr = s->remote_addr + offset,
		.wr.rdma.rkey = s->rkey,
	};
	struct ibv_send_wr *bad;

	return -ibv_post_send(s->qp, &wr, &bad);
}
RL_HIDDEN(fx_post_write, 2);

int fx_log_post(struct lab4_sender *s, uint32_t index, bool signaled)
{
	uint32_t out = fx_sent.posts++ - fx_sent.complete;

	if (out > FX_IMM_OUT_MAX)
		out = FX_IMM_OUT_MAX;
	return fx_post_write(s, index, signaled, FX_IMM_INDEX(index) | out << FX_IMM_OUT_SHIFT);
}
RL_HIDDEN(fx_log_post, 2);

int fx_ref_post(struct lab4_sender *s, uint32_t index, bool signaled)
{
	return fx_post_write(s, index, signaled, index);
}
RL_HIDDEN(fx_ref_post, 2);

void fx_recv_open(struct fx_recv *x, const struct fx_peer_in *in)
{
	uint8_t port = rl_test_ib_port();
	int gid = rl_test_gid_index();
	struct lab4_accept acc = { 0 };
	struct lab4_hello h;

	memset(x, 0, sizeof(*x));
	x->ctx = fx_open_ctx();
	x->fd = fx_connect(in);
	ck_assert_msg(lab4_recv_hello(x->fd, &h, FX_TIMEOUT_MS) == 0,
		      "fixture: no HELLO from the test's peer");
	ck_assert_msg(lab4_receiver_open(&x->r, x->ctx, h.size, h.chunk, h.sha256, LAB4_RC) == 0,
		      "fixture: receiver_open");
	x->r.timeout_ms = FX_TIMEOUT_MS;
	ck_assert_msg(lab4_receiver_connect(&x->r, port, gid, LAB4_RC, &h.dest) == 0,
		      "fixture: receiver_connect");
	ck_assert_int_eq(rl_qp_local_dest(x->r.qp, port, gid, 0, &acc.dest), 0);
	acc.addr = (uintptr_t)x->r.buf;
	acc.rkey = x->r.mr ? x->r.mr->rkey : 0;
	acc.credits = x->r.recv_depth;
	ck_assert_msg(lab4_send_accept(x->fd, &acc, FX_TIMEOUT_MS) == 0,
		      "fixture: could not send ACCEPT to the test's peer");
}

void fx_recv_go(struct fx_recv *x)
{
	ck_assert_msg(rl_oob_send(x->fd, "g", 1, FX_TIMEOUT_MS) == 0,
		      "fixture: could not tell the test's peer to write");
}

void fx_recv_close(struct fx_recv *x)
{
	close(x->fd);
	lab4_receiver_close(&x->r);
	ibv_close_device(x->ctx);
}

void fx_ud_open(struct lab4_ud *u, struct ibv_context *ctx, uint8_t port, int gid_index,
		enum fx_ud_state state)
{
	int ret = fx_ud_make(u, ctx, port, gid_index, state);

	ck_assert_msg(ret == 0, "fixture: a UD QP with plain verbs: %s", strerror(-ret));
}

int fx_ud_meet(struct lab4_ud *u, const struct fx_peer_in *in, struct lab4_ud_hello *peer)
{
	struct lab4_ud_hello mine = { .qpn = u->qp->qp_num, .qkey = u->qkey };
	int fd = fx_connect(in);

	ck_assert_int_eq(ibv_query_gid(u->ctx, u->port, u->gid_index, &mine.gid), 0);
	ck_assert_msg(lab4_send_ud_hello(fd, &mine, FX_TIMEOUT_MS) == 0 &&
			      lab4_recv_ud_hello(fd, peer, FX_TIMEOUT_MS) == 0,
		      "fixture: no UD_HELLO from the test's peer");
	return fd;
}

void fx_pair_open(struct fx_pair *p, uint64_t size, uint32_t chunk)
{
	uint8_t port = rl_test_ib_port();
	int gid = rl_test_gid_index();
	const uint8_t unused[32] = { 0 };
	struct lab4_file f = { .size = size };
	struct rl_qp_dest sd, rd;

	memset(p, 0, sizeof(*p));
	p->ctx = fx_open_ctx();
	p->bytes = calloc(1, size + 1);
	ck_assert_ptr_nonnull(p->bytes);
	f.data = size ? p->bytes : NULL;
	ck_assert_msg(lab4_sender_open(&p->s, p->ctx, &f, LAB4_RC) == 0, "fixture: sender_open");
	ck_assert_msg(lab4_receiver_open(&p->r, p->ctx, size, chunk, unused, LAB4_RC) == 0,
		      "fixture: receiver_open");
	p->r.timeout_ms = FX_TIMEOUT_MS;
	ck_assert_int_eq(rl_qp_local_dest(p->s.qp, port, gid, 0, &sd), 0);
	ck_assert_int_eq(rl_qp_local_dest(p->r.qp, port, gid, 0, &rd), 0);
	ck_assert_msg(lab4_receiver_connect(&p->r, port, gid, LAB4_RC, &sd) == 0,
		      "fixture: receiver_connect");
	ck_assert_msg(lab4_qp_connect(p->s.qp, port, gid, LAB4_RC, &rd) == 0,
		      "fixture: sender qp_connect");
	p->s.remote_addr = (uintptr_t)p->r.buf;
	p->s.rkey = p->r.mr ? p->r.mr->rkey : 0;
	p->s.chunk = chunk;
	p->s.nchunks = lab4_nchunks(size, chunk);
	p->s.timeout_ms = FX_TIMEOUT_MS;
	p->s.post = fx_ref_post;
	p->s.wait = LAB4_WAIT_BUSY;
}

void fx_pair_close(struct fx_pair *p)
{
	lab4_sender_close(&p->s);
	lab4_receiver_close(&p->r);
	ibv_close_device(p->ctx);
	free(p->bytes);
}

void fx_recv_wc(struct lab4_receiver *r, struct ibv_wc *wc)
{
	ck_assert_msg(fx_poll_one(ibv_cq_ex_to_cq(r->cq), wc, FX_TIMEOUT_MS),
		      "fixture: expected a receive completion within %d ms, got none",
		      FX_TIMEOUT_MS);
}
RL_HIDDEN(fx_recv_wc, 2);

/* --- the check's side ----------------------------------------------------- */

bool fx_res_qp(struct rl_case *c, uint32_t qpn, const char *key, char *val, size_t size)
{
	struct rl_res res[32];
	const char *lqpn, *v;
	char want[16];
	int n, i;

	val[0] = '\0';
	if (rl_act_pid(c) <= 0)
		return false;
	n = rl_rdma_res("qp", rl_act_pid(c), res, 32);
	snprintf(want, sizeof(want), "%u", qpn);
	for (i = 0; i < n; i++) {
		lqpn = rl_res_get(&res[i], "lqpn");
		if (lqpn && strcmp(lqpn, want) == 0) {
			v = rl_res_get(&res[i], key);
			snprintf(val, size, "%s", v ? v : "");
			return true;
		}
	}
	return false;
}

uint32_t fx_port_mtu(void)
{
	struct ibv_context *ctx = fx_open_ctx();
	struct ibv_port_attr pattr;

	ck_assert_int_eq(ibv_query_port(ctx, rl_test_ib_port(), &pattr), 0);
	ibv_close_device(ctx);
	return 128u << pattr.active_mtu;
}

/* A file for the program's output that no other process can name: made, then unlinked. */
static int fx_tmpfile(void)
{
	char path[] = "/tmp/rdmalab-lab4-out-XXXXXX";
	int fd = mkstemp(path);

	ck_assert_msg(fd >= 0, "mkstemp %s: %s", path, strerror(errno));
	unlink(path);
	return fd;
}

/*
 * The program gets stdin from /dev/null, stdout and stderr to files of its
 * own, and no other descriptor of the parent's (the grader's results among
 * them).
 */
void fx_spawn(const char *const *args, struct fx_proc *p)
{
	char exe[PATH_MAX], prog[PATH_MAX + 16];
	const char *argv[32];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int n = 0;

	ck_assert_msg(len > 0, "readlink /proc/self/exe: %s", strerror(errno));
	exe[len] = '\0';
	snprintf(prog, sizeof(prog), "%s/../lab4", dirname(exe));
	argv[n++] = prog;
	while (*args && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;
	p->out = fx_tmpfile();
	p->err = fx_tmpfile();
	fflush(NULL);
	p->pid = fork();
	ck_assert_msg(p->pid >= 0, "fork: %s", strerror(errno));
	if (p->pid == 0) {
		int fi = open("/dev/null", O_RDONLY);

		if (fi < 0 || dup2(fi, STDIN_FILENO) < 0 || dup2(p->out, STDOUT_FILENO) < 0 ||
		    dup2(p->err, STDERR_FILENO) < 0)
			_exit(127);
		close_range(3, ~0U, 0);
		execv(prog, (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", prog, strerror(errno));
		_exit(127);
	}
}

/* What the program wrote to FD (from its start, at most SIZE - 1 bytes) into BUF; closes FD. */
static void fx_slurp(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

void fx_reap(struct fx_proc *p, int limit_ms, struct fx_run *run)
{
	int64_t deadline = lab4_now_ms() + limit_ms;
	int status = 0;

	memset(run, 0, sizeof(*run));
	run->status = -1;
	while (waitpid(p->pid, &status, WNOHANG) == 0) {
		if (lab4_now_ms() > deadline) {
			kill(p->pid, SIGKILL);
			waitpid(p->pid, &status, 0);
			status = -1;
			break;
		}
		usleep(20000);
	}
	if (status != -1 && WIFEXITED(status))
		run->status = WEXITSTATUS(status);
	fx_slurp(p->out, run->out, sizeof(run->out));
	fx_slurp(p->err, run->err, sizeof(run->err));
}

const char *fx_last_line(const char *text, const char *prefix)
{
	const char *line = text, *last = NULL;
	size_t n = strlen(prefix);

	while (line && *line) {
		if (strncmp(line, prefix, n) == 0)
			last = line;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return last;
}

void fx_make_file(char *path, size_t path_size, uint64_t size, uint8_t sha256[32])
{
	uint8_t *bytes = malloc(size + 1);
	int fd;

	ck_assert_ptr_nonnull(bytes);
	fx_fill(bytes, size, fx_random());
	EVP_Digest(bytes, size, sha256, NULL, EVP_sha256(), NULL);
	snprintf(path, path_size, "/tmp/rdmalab-lab4-XXXXXX");
	fd = mkstemp(path);
	ck_assert_msg(fd >= 0, "mkstemp: %s", strerror(errno));
	ck_assert_msg(write(fd, bytes, size) == (ssize_t)size, "write %s", path);
	close(fd);
	free(bytes);
}
