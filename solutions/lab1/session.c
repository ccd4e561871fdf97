/*
 * session.c: one whole run of each side, calling the steps in the order a
 * program needs them (given code, not a step). The QP can only reach RTR
 * once it knows the peer, so steps 8 and 9 run between steps 5 and 6.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "lab1.h"

/* Open the device and choose the GID index: Lab 0's work, done by the framework. */
static struct ibv_context *open_device(const struct rl_args *args, int *gid_index)
{
	struct ibv_context *ctx = rl_open_device(args->dev);

	if (!ctx)
		return NULL;
	*gid_index = rl_choose_gid_index(ctx, args->ib_port, args->gid_index);
	if (*gid_index < 0) {
		ibv_close_device(ctx);
		return NULL;
	}
	return ctx;
}

/* Steps 1 to 5: PD, MR over BUF, CQ, QP, INIT. RES keeps what was made. */
static int bring_up(struct ibv_context *ctx, uint8_t port, char *buf, struct lab1_res *res)
{
	res->pd = lab1_alloc_pd(ctx);
	if (!res->pd)
		return -EIO;
	res->mr = lab1_reg_mr(res->pd, buf, LAB1_BUF_SIZE);
	if (!res->mr)
		return -EIO;
	res->cq = lab1_create_cq(ctx, LAB1_QP_DEPTH);
	if (!res->cq)
		return -EIO;
	res->qp = lab1_create_qp(res->pd, res->cq, LAB1_QP_DEPTH);
	if (!res->qp)
		return -EIO;
	return lab1_qp_to_init(res->qp, port);
}

/*
 * Steps 8, 9, 6 and 7: describe our QP and MR, swap descriptions with the
 * peer over FD, then RTR aimed at the peer and RTS. REMOTE gets the peer's.
 */
static int connect_qp(int fd, const struct rl_args *args, int gid_index, struct lab1_res *res,
		      struct lab1_dest *remote)
{
	struct lab1_dest local;
	char gid[RL_GID_STR_LEN];
	uint32_t psn = 0;
	int ret;

	/* A random first PSN, as rc_pingpong does: a stale packet of an old
	 * connection is then unlikely to look like one of this one. */
	if (getrandom(&psn, sizeof(psn), 0) != sizeof(psn))
		psn = (uint32_t)getpid();
	ret = lab1_local_dest(res->qp, args->ib_port, gid_index, psn, res->mr, &local);
	if (ret)
		return ret;
	ret = lab1_exchange_dest(fd, &local, remote);
	if (ret)
		return ret;
	ret = lab1_qp_to_rtr(res->qp, args->ib_port, gid_index, remote);
	if (ret)
		return ret;
	ret = lab1_qp_to_rts(res->qp, local.psn);
	if (ret)
		return ret;
	rl_gid_str(&remote->gid, gid);
	printf("QP 0x%06x (PSN 0x%06x) connected to QP 0x%06x (PSN 0x%06x) at %s\n", local.qpn,
	       local.psn, remote->qpn, remote->psn, gid);
	return 0;
}

/* Check that the message (LEN bytes at BUF) and the written text are NUL-terminated text. */
static int check_received(const char *buf, uint32_t len, struct lab1_received *got)
{
	const char *written = buf + LAB1_WRITE_OFFSET;

	if (len == 0 || len > LAB1_MSG_MAX || !memchr(buf, '\0', len)) {
		rl_err("received message: %u bytes without a terminating NUL", len);
		return -EBADMSG;
	}
	if (!memchr(written, '\0', LAB1_WRITE_MAX)) {
		rl_err("RDMA-written buffer: no terminating NUL in %d bytes", LAB1_WRITE_MAX);
		return -EBADMSG;
	}
	memcpy(got->msg, buf, len);
	strcpy(got->written, written);
	printf("received message (%u bytes): \"%s\"\n", len, got->msg);
	printf("RDMA-written buffer: \"%s\"\n", got->written);
	return 0;
}

/*
 * The server: bring a QP up, post a receive, accept the client on
 * ARGS->port, connect the QPs, then wait for the client's message. The
 * client writes before it sends, and RC delivers in order, so once the
 * message is here the written text is too. GOT receives both.
 */
int lab1_run_server(const struct rl_args *args, struct lab1_received *got)
{
	struct lab1_res res = { 0 };
	struct lab1_dest remote;
	struct ibv_context *ctx;
	struct ibv_wc wc;
	int gid_index, lfd, fd, gone, ret;
	char *buf, done;

	memset(got, 0, sizeof(*got));
	ctx = open_device(args, &gid_index);
	if (!ctx)
		return -ENODEV;
	ret = -ENOMEM;
	buf = aligned_alloc(4096, LAB1_BUF_SIZE);
	if (!buf)
		goto clean_ctx;
	memset(buf, 0, LAB1_BUF_SIZE);

	ret = bring_up(ctx, args->ib_port, buf, &res);
	if (ret)
		goto clean_res;
	/* Post the receive before the client can send: a receive may be posted from INIT. */
	ret = lab1_post_recv(res.qp, res.mr, buf, LAB1_MSG_MAX);
	if (ret)
		goto clean_res;
	ret = lfd = rl_oob_listen(NULL, args->port, NULL);
	if (lfd < 0)
		goto clean_res;
	printf("lab1 server: waiting for a client on TCP port %u\n", args->port);
	fflush(stdout);
	ret = fd = rl_oob_accept(lfd, LAB1_OOB_TIMEOUT_MS);
	close(lfd);
	if (fd < 0)
		goto clean_res;
	ret = connect_qp(fd, args, gid_index, &res, &remote);
	if (ret)
		goto clean_fd;
	ret = lab1_wait_completion(res.cq, LAB1_WC_TIMEOUT_MS, &wc);
	if (ret)
		goto clean_fd;
	ret = check_received(buf, wc.byte_len, got);
	if (ret)
		goto clean_fd;
	/* Wait until the client has its completions, so our QP outlives its ACKs. */
	ret = rl_oob_recv(fd, &done, 1, LAB1_OOB_TIMEOUT_MS);

clean_fd:
	close(fd);
clean_res:
	if (res.pd && (gone = lab1_teardown(&res)) && !ret)
		ret = gone;
	free(buf);
clean_ctx:
	ibv_close_device(ctx);
	return ret;
}

/*
 * The client: bring a QP up, connect to the server at ARGS->addr, then
 * RDMA-write TEXT into the server's buffer and send MSG (both
 * NUL-terminated), and wait for both completions.
 */
int lab1_run_client(const struct rl_args *args, const char *msg, const char *text)
{
	size_t msg_len = strlen(msg) + 1, text_len = strlen(text) + 1;
	struct lab1_res res = { 0 };
	struct lab1_dest remote;
	struct ibv_context *ctx;
	struct ibv_wc wc;
	int gid_index, fd, i, gone, ret;
	char *buf, done = 'D';

	if (msg_len > LAB1_MSG_MAX || text_len > LAB1_WRITE_MAX) {
		rl_err("lab1 client: message or text too long (%d and %d bytes at most)",
		       LAB1_MSG_MAX - 1, LAB1_WRITE_MAX - 1);
		return -EMSGSIZE;
	}
	ctx = open_device(args, &gid_index);
	if (!ctx)
		return -ENODEV;
	ret = -ENOMEM;
	buf = aligned_alloc(4096, LAB1_BUF_SIZE);
	if (!buf)
		goto clean_ctx;
	memcpy(buf, msg, msg_len);
	memcpy(buf + LAB1_WRITE_OFFSET, text, text_len);

	ret = bring_up(ctx, args->ib_port, buf, &res);
	if (ret)
		goto clean_res;
	ret = fd = rl_oob_connect(args->addr, args->port, LAB1_OOB_TIMEOUT_MS);
	if (fd < 0)
		goto clean_res;
	ret = connect_qp(fd, args, gid_index, &res, &remote);
	if (ret)
		goto clean_fd;
	if (remote.len < LAB1_WRITE_OFFSET + text_len) {
		rl_err("lab1 client: the server's buffer holds %u bytes, too few", remote.len);
		ret = -EMSGSIZE;
		goto clean_fd;
	}
	/* Write first, then send: the message tells the server the text is there. */
	ret = lab1_post_write(res.qp, res.mr, buf + LAB1_WRITE_OFFSET, text_len,
			      remote.addr + LAB1_WRITE_OFFSET, remote.rkey);
	if (ret)
		goto clean_fd;
	ret = lab1_post_send(res.qp, res.mr, buf, msg_len);
	if (ret)
		goto clean_fd;
	for (i = 0; i < 2 && !ret; i++)
		ret = lab1_wait_completion(res.cq, LAB1_WC_TIMEOUT_MS, &wc);
	if (ret)
		goto clean_fd;
	printf("wrote %zu bytes into the server's buffer and sent a %zu-byte message\n", text_len,
	       msg_len);
	ret = rl_oob_send(fd, &done, 1, LAB1_OOB_TIMEOUT_MS);

clean_fd:
	close(fd);
clean_res:
	if (res.pd && (gone = lab1_teardown(&res)) && !ret)
		ret = gone;
	free(buf);
clean_ctx:
	ibv_close_device(ctx);
	return ret;
}
