/* fixture.c: plain-verbs objects and outside references for the Lab 1 tests. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"

struct ibv_context *fx_open(void)
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

struct ibv_pd *fx_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);

	ck_assert_msg(pd, "fixture: ibv_alloc_pd failed: %s", strerror(errno));
	return pd;
}

struct ibv_cq *fx_cq(struct ibv_context *ctx)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 2 * FX_DEPTH, NULL, NULL, 0);

	ck_assert_msg(cq, "fixture: ibv_create_cq failed: %s", strerror(errno));
	return cq;
}

struct ibv_qp *fx_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {
			.max_send_wr = FX_DEPTH,
			.max_recv_wr = FX_DEPTH,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	ck_assert_msg(qp, "fixture: ibv_create_qp failed: %s", strerror(errno));
	return qp;
}

void fx_to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = rl_test_ib_port(),
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	int ret = ibv_modify_qp(qp, &attr, mask);

	ck_assert_msg(ret == 0, "fixture: RESET->INIT failed: %s", strerror(ret));
}

uint32_t fx_psn(const struct ibv_qp *qp)
{
	return (qp->qp_num * 7919u + 1) & 0xffffff;
}

void fx_to_rtr(struct ibv_qp *qp, struct ibv_qp *peer)
{
	struct ibv_port_attr port_attr;
	struct ibv_qp_attr attr;
	union ibv_gid gid;
	int mask, ret;

	ck_assert_int_eq(ibv_query_port(qp->context, rl_test_ib_port(), &port_attr), 0);
	ck_assert_int_eq(ibv_query_gid(qp->context, rl_test_ib_port(), rl_test_gid_index(), &gid),
			 0);
	attr = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR,
		.path_mtu = port_attr.active_mtu,
		.dest_qp_num = peer->qp_num,
		.rq_psn = fx_psn(peer),
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.port_num = rl_test_ib_port(),
			.grh = { .dgid = gid, .sgid_index = rl_test_gid_index(), .hop_limit = 1 },
		},
	};
	mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
	       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	ret = ibv_modify_qp(qp, &attr, mask);
	ck_assert_msg(ret == 0, "fixture: INIT->RTR failed: %s", strerror(ret));
}

void fx_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.sq_psn = fx_psn(qp),
		.max_rd_atomic = 1,
	};
	int mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		   IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
	int ret = ibv_modify_qp(qp, &attr, mask);

	ck_assert_msg(ret == 0, "fixture: RTR->RTS failed: %s", strerror(ret));
}

void fx_query(struct ibv_qp *qp, struct ibv_qp_attr *attr, struct ibv_qp_init_attr *init)
{
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS |
		   IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER | IBV_QP_TIMEOUT |
		   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC |
		   IBV_QP_CAP;
	int ret;

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	ret = ibv_query_qp(qp, attr, mask, init);
	ck_assert_msg(ret == 0, "expected ibv_query_qp to return 0, got %d (%s)", ret,
		      strerror(ret));
}

enum ibv_qp_state fx_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	fx_query(qp, &attr, &init);
	return attr.qp_state;
}

const char *fx_state_str(enum ibv_qp_state s)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT", [IBV_QPS_RTR] = "RTR",
		[IBV_QPS_RTS] = "RTS",     [IBV_QPS_SQD] = "SQD",   [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) && names[s] ? names[s] : "unknown";
}

void fx_pair_open(struct fx_pair *p)
{
	int i;

	memset(p, 0, sizeof(*p));
	p->ctx = fx_open();
	p->pd = fx_pd(p->ctx);
	for (i = 0; i < 2; i++) {
		p->cq[i] = fx_cq(p->ctx);
		p->qp[i] = fx_qp(p->pd, p->cq[i]);
		p->buf[i] = calloc(1, FX_BUF_SIZE);
		ck_assert(p->buf[i]);
		p->mr[i] = ibv_reg_mr(p->pd, p->buf[i], FX_BUF_SIZE,
				      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					      IBV_ACCESS_REMOTE_READ);
		ck_assert_msg(p->mr[i], "fixture: ibv_reg_mr failed: %s", strerror(errno));
		fx_to_init(p->qp[i]);
	}
	fx_to_rtr(p->qp[0], p->qp[1]);
	fx_to_rtr(p->qp[1], p->qp[0]);
	fx_to_rts(p->qp[0]);
	fx_to_rts(p->qp[1]);
}

/* Best effort: the test process ends right after, which frees the rest. */
void fx_pair_close(struct fx_pair *p)
{
	int i;

	for (i = 0; i < 2; i++) {
		ibv_destroy_qp(p->qp[i]);
		ibv_destroy_cq(p->cq[i]);
		ibv_dereg_mr(p->mr[i]);
		free(p->buf[i]);
	}
	ibv_dealloc_pd(p->pd);
	ibv_close_device(p->ctx);
}

void fx_post_recv(struct fx_pair *p, int i, struct ibv_mr *mr, void *buf, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 100, .sg_list = &sge, .num_sge = 1 }, *bad;
	int ret = ibv_post_recv(p->qp[i], &wr, &bad);

	ck_assert_msg(ret == 0, "fixture: ibv_post_recv failed: %s", strerror(ret));
}

static void fx_post(struct fx_pair *p, int i, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int ret = ibv_post_send(p->qp[i], wr, &bad);

	ck_assert_msg(ret == 0, "fixture: ibv_post_send failed: %s", strerror(ret));
}

void fx_post_send(struct fx_pair *p, int i, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->buf[i],
			       .length = len,
			       .lkey = p->mr[i]->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 200,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};

	fx_post(p, i, &wr);
}

void fx_post_rdma(struct fx_pair *p, int i, enum ibv_wr_opcode op, uint32_t len, uint64_t addr,
		  uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->buf[i],
			       .length = len,
			       .lkey = p->mr[i]->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 300,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = addr, .rkey = rkey },
	};

	fx_post(p, i, &wr);
}

void fx_wait(struct ibv_cq *cq, struct ibv_wc *wc)
{
	struct timespec start, now;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		ck_assert_msg(n >= 0, "expected ibv_poll_cq to work, got %d", n);
		if (n == 1)
			return;
		clock_gettime(CLOCK_MONOTONIC, &now);
		ck_assert_msg((now.tv_sec - start.tv_sec) * 1000 +
					      (now.tv_nsec - start.tv_nsec) / 1000000 <
				      FX_WC_TIMEOUT_MS,
			      "expected a completion within %d ms, got none", FX_WC_TIMEOUT_MS);
	}
}

/* The first line of `CMD` that contains NEEDLE (and NEEDLE2 if not NULL), into LINE. */
static int fx_grep(const char *cmd, const char *needle, const char *needle2, char *line, size_t len)
{
	FILE *p = popen(cmd, "r");
	int found = 0;

	ck_assert_msg(p, "expected to run '%s', got %s", cmd, strerror(errno));
	while (!found && fgets(line, len, p))
		found = strstr(line, needle) && (!needle2 || strstr(line, needle2));
	pclose(p);
	return found;
}

/* The number after " KEY " in LINE, or -1. */
static long long fx_field(const char *line, const char *key)
{
	char pat[32];
	const char *at;

	snprintf(pat, sizeof(pat), " %s ", key);
	at = strstr(line, pat);
	return at ? strtoll(at + strlen(pat), NULL, 0) : -1;
}

int fx_res_count(const char *kind)
{
	char cmd[64], line[512], pid[32], dev[64], link[64];
	FILE *p;
	int n = 0;

	/* Only this process's objects: a grader may run other students' tests on the same device. */
	snprintf(cmd, sizeof(cmd), "rdma resource show %s 2>&1", kind);
	snprintf(pid, sizeof(pid), " pid %d ", (int)getpid());
	snprintf(dev, sizeof(dev), "dev %s ", rl_test_device());
	snprintf(link, sizeof(link), "link %s/", rl_test_device());
	p = popen(cmd, "r");
	ck_assert_msg(p, "expected to run '%s', got %s", cmd, strerror(errno));
	while (fgets(line, sizeof(line) - 1, p)) {
		line[strcspn(line, "\n")] = '\0';
		strcat(line, " ");
		if (strstr(line, pid) && (strstr(line, dev) || strstr(line, link)))
			n++;
	}
	ck_assert_msg(pclose(p) == 0, "expected '%s' to work, it failed", cmd);
	return n;
}

int fx_res_mr_keys(size_t len, uint32_t *rkey, uint32_t *lkey)
{
	char line[512], pid[32], mrlen[32];

	snprintf(pid, sizeof(pid), " pid %d ", (int)getpid());
	snprintf(mrlen, sizeof(mrlen), " mrlen %zu ", len);
	if (!fx_grep("rdma resource show mr 2>&1", pid, mrlen, line, sizeof(line)))
		return -ENOENT;
	/* The kernel shows the keys only to CAP_NET_ADMIN (the grader runs us as a plain user). */
	if (fx_field(line, "rkey") < 0 || fx_field(line, "lkey") < 0)
		return -EPERM;
	*rkey = (uint32_t)fx_field(line, "rkey");
	*lkey = (uint32_t)fx_field(line, "lkey");
	return 0;
}
