/*
 * session.c: one whole run of each side, calling the steps in the order a
 * program needs them (given code, not a step). The client connects, sends
 * LAB2_PINGS pings and checks each pong, then RDMA-writes its text into the
 * server's buffer, RDMA-reads the server's text back, sends DONE and
 * disconnects. The server answers, describes its buffer in a MSG_MR, and
 * after DONE prints what was written into it.
 */
#include <stdlib.h>
#include <string.h>

#include "lab2.h"

/* What a work request was, from its wr_id, for the line a failed completion prints. */
const char *lab2_wr_name(uint64_t wr_id)
{
	switch (wr_id) {
	case LAB2_WR_SEND:
		return "SEND";
	case LAB2_WR_WRITE:
		return "RDMA WRITE";
	case LAB2_WR_READ:
		return "RDMA READ";
	default:
		return wr_id >= LAB2_WR_RECV ? "receive" : "work request";
	}
}

/* The text a PING or PONG number SEQ carries. */
static void lab2_ping_text(enum lab2_msg_type type, uint32_t seq, char text[LAB2_PAYLOAD])
{
	memset(text, 0, LAB2_PAYLOAD);
	snprintf(text, LAB2_PAYLOAD,
		 type == LAB2_MSG_PING ? "ping %u from the client" : "pong %u from the server",
		 seq);
}

/* Encode a PING or PONG (wire format in lab2.h) into BUF; its length, or -EMSGSIZE. */
int lab2_encode_ping(uint8_t *buf, size_t size, enum lab2_msg_type type, uint32_t seq,
		     const char *text)
{
	char padded[LAB2_PAYLOAD] = { 0 };
	struct rl_wire w;

	strncpy(padded, text, LAB2_PAYLOAD - 1);
	rl_wire_writer(&w, buf, size);
	rl_wire_put_u32(&w, type);
	rl_wire_put_u32(&w, seq);
	rl_wire_put_bytes(&w, padded, LAB2_PAYLOAD);
	return rl_wire_status(&w) ? -EMSGSIZE : (int)rl_wire_used(&w);
}

/* Check that the LEN bytes at BUF are the PING or PONG (TYPE) number SEQ, with its text. */
int lab2_check_ping(const uint8_t *buf, int len, enum lab2_msg_type type, uint32_t seq)
{
	char want[LAB2_PAYLOAD], got[LAB2_PAYLOAD];
	uint32_t got_type, got_seq;
	struct rl_wire w;

	lab2_ping_text(type, seq, want);
	rl_wire_reader(&w, buf, len < 0 ? 0 : (size_t)len);
	got_type = rl_wire_get_u32(&w);
	got_seq = rl_wire_get_u32(&w);
	rl_wire_get_bytes(&w, got, sizeof(got));
	got[LAB2_PAYLOAD - 1] = '\0';
	if (len != LAB2_PING_WIRE_LEN || got_type != type || got_seq != seq ||
	    memcmp(want, got, sizeof(want))) {
		rl_err("expected %s %u \"%s\" (%d bytes), got type %u number %u \"%s\" (%d bytes)",
		       type == LAB2_MSG_PING ? "PING" : "PONG", seq, want, LAB2_PING_WIRE_LEN,
		       got_type, got_seq, got, len);
		return -EBADMSG;
	}
	return 0;
}

/*
 * After step 1 gave C->id a device: the PD, the CQ and its channel (step 2),
 * the QP, the registered buffers (the server's with remote access, step 4),
 * and every receive posted (step 3), before connecting: the peer may send
 * as soon as the connection is up.
 */
int lab2_setup(struct lab2_conn *c, bool server)
{
	struct ibv_qp_init_attr init_attr;
	int i, ret;

	c->pd = rl_alloc_pd(c->id->verbs);
	if (!c->pd)
		return -ENOMEM;
	ret = lab2_create_cq(c, c->id->verbs);
	if (ret)
		return ret;
	init_attr = (struct ibv_qp_init_attr){
		.send_cq = c->cq,
		.recv_cq = c->cq,
		.cap = {
			.max_send_wr = LAB2_QP_DEPTH,
			.max_recv_wr = LAB2_QP_DEPTH,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
	};
	/* rdma_cm makes the QP and, while connecting, moves it to RTR and RTS. */
	if (rdma_create_qp(c->id, c->pd, &init_attr))
		return rl_fail("rdma_create_qp", errno, "RC with %d slots", LAB2_QP_DEPTH);
	c->qp = c->id->qp;
	c->msg_mr = rl_reg_mr(c->pd, &c->bufs, sizeof(c->bufs), IBV_ACCESS_LOCAL_WRITE);
	if (!c->msg_mr)
		return -ENOMEM;
	c->rdma_buf = aligned_alloc(4096, LAB2_RDMA_SIZE);
	if (!c->rdma_buf)
		return -ENOMEM;
	memset(c->rdma_buf, 0, LAB2_RDMA_SIZE);
	if (server) {
		strcpy(c->rdma_buf + LAB2_READ_OFFSET, LAB2_SERVER_TEXT);
		c->rdma_mr = lab2_reg_remote_mr(c->pd, c->rdma_buf, LAB2_RDMA_SIZE);
	} else {
		/* An RDMA READ lands here: the NIC writes our memory. */
		c->rdma_mr = rl_reg_mr(c->pd, c->rdma_buf, LAB2_RDMA_SIZE, IBV_ACCESS_LOCAL_WRITE);
	}
	if (!c->rdma_mr)
		return -ENOMEM;
	for (i = 0; i < LAB2_RECV_SLOTS; i++) {
		ret = lab2_post_recv(c, i);
		if (ret)
			return ret;
	}
	return 0;
}

/* Copy the NUL-terminated text at FROM (at most LAB2_TEXT_MAX bytes) into RES. */
static int lab2_keep_text(const char *from, const char *what, struct lab2_result *res)
{
	if (!memchr(from, '\0', LAB2_TEXT_MAX)) {
		rl_err("%s: no terminating NUL in %d bytes", what, LAB2_TEXT_MAX);
		return -EBADMSG;
	}
	strcpy(res->text, from);
	printf("%s: \"%s\"\n", what, res->text);
	return 0;
}

/* Wait for the completion of the RDMA WRITE or READ WR_ID. */
static int lab2_wait_rdma(struct lab2_conn *c, uint64_t wr_id)
{
	struct ibv_wc wc;
	int ret;

	do {
		ret = lab2_wait_wc(c, &wc);
	} while (!ret && wc.wr_id != wr_id);
	if (ret == -EIO && wc.status == IBV_WC_REM_ACCESS_ERR)
		rl_err("the server refused the %s: is the rkey it sent its rkey, and does its MR "
		       "allow remote access?",
		       lab2_wr_name(wr_id));
	return ret;
}

/* Client: LAB2_PINGS pings, each pong checked. */
static int lab2_client_ping_pong(struct lab2_conn *c, struct lab2_result *res)
{
	uint8_t msg[LAB2_MSG_MAX];
	char text[LAB2_PAYLOAD];
	int i, len, ret;

	for (i = 0; i < LAB2_PINGS; i++) {
		lab2_ping_text(LAB2_MSG_PING, i, text);
		len = lab2_encode_ping(c->bufs.send, sizeof(c->bufs.send), LAB2_MSG_PING, i, text);
		ret = lab2_send_msg(c, (uint32_t)len);
		if (ret)
			return ret;
		len = lab2_recv_msg(c, msg, sizeof(msg));
		if (len < 0)
			return len;
		ret = lab2_check_ping(msg, len, LAB2_MSG_PONG, i);
		if (ret)
			return ret;
		res->pongs++;
	}
	printf("ping-pong: %d pings sent, %d pongs received and checked\n", LAB2_PINGS, res->pongs);
	return 0;
}

/* Client: take the MSG_MR, write TEXT there, read the server's text back, send DONE. */
static int lab2_client_rdma(struct lab2_conn *c, const char *text, struct lab2_result *res)
{
	uint32_t text_len = (uint32_t)strlen(text) + 1;
	uint8_t msg[LAB2_MSG_MAX];
	struct lab2_mr_msg mr;
	struct rl_wire w;
	int len, ret;

	len = lab2_recv_msg(c, msg, sizeof(msg));
	if (len < 0)
		return len;
	ret = lab2_decode_mr(msg, (size_t)len, &mr);
	if (ret) {
		rl_err("expected a MSG_MR of %d bytes from the server, got %d bytes (%s)",
		       LAB2_MR_WIRE_LEN, len, strerror(-ret));
		return ret;
	}
	printf("server's buffer: %u bytes at 0x%llx, rkey 0x%x\n", mr.len,
	       (unsigned long long)mr.addr, mr.rkey);
	if (mr.len < LAB2_RDMA_SIZE) {
		rl_err("the server's buffer holds %u bytes, %d needed", mr.len, LAB2_RDMA_SIZE);
		return -EMSGSIZE;
	}
	memcpy(c->rdma_buf + LAB2_WRITE_OFFSET, text, text_len);
	ret = lab2_post_rdma(c, IBV_WR_RDMA_WRITE, c->rdma_buf + LAB2_WRITE_OFFSET, text_len,
			     mr.addr + LAB2_WRITE_OFFSET, mr.rkey);
	if (!ret)
		ret = lab2_wait_rdma(c, LAB2_WR_WRITE);
	if (ret)
		return ret;
	printf("wrote %u bytes into the server's buffer\n", text_len);
	ret = lab2_post_rdma(c, IBV_WR_RDMA_READ, c->rdma_buf + LAB2_READ_OFFSET, LAB2_TEXT_MAX,
			     mr.addr + LAB2_READ_OFFSET, mr.rkey);
	if (!ret)
		ret = lab2_wait_rdma(c, LAB2_WR_READ);
	if (ret)
		return ret;
	ret = lab2_keep_text(c->rdma_buf + LAB2_READ_OFFSET, "read from the server's buffer", res);
	if (ret)
		return ret;
	/* DONE: the server may now look at its buffer. */
	rl_wire_writer(&w, c->bufs.send, sizeof(c->bufs.send));
	rl_wire_put_u32(&w, LAB2_MSG_DONE);
	return lab2_send_msg(c, (uint32_t)rl_wire_used(&w));
}

/*
 * The client: connect to ARGS->addr port ARGS->port, ping-pong, write TEXT
 * into the server's buffer and read its text back (into RES), disconnect.
 * No wait takes more than TIMEOUT_MS. Returns 0, or a negative errno.
 */
int lab2_run_client(const struct rl_args *args, int timeout_ms, const char *text,
		    struct lab2_result *res)
{
	struct lab2_conn c = { .timeout_ms = timeout_ms };
	int ret, gone;

	memset(res, 0, sizeof(*res));
	if (strlen(text) >= LAB2_TEXT_MAX) {
		rl_err("lab2 client: text too long (%d bytes at most)", LAB2_TEXT_MAX - 1);
		return -EMSGSIZE;
	}
	ret = lab2_resolve(&c, args->addr, args->port);
	if (ret)
		goto clean;
	ret = lab2_setup(&c, false);
	if (ret)
		goto clean;
	ret = lab2_connect(&c);
	if (ret)
		goto clean;
	printf("connected to %s port %u\n", args->addr, args->port);
	fflush(stdout);
	ret = lab2_client_ping_pong(&c, res);
	if (ret)
		goto clean;
	ret = lab2_client_rdma(&c, text, res);
	if (ret)
		goto clean;
	ret = lab2_disconnect(&c);
	if (!ret)
		printf("disconnected\n");

clean:
	gone = lab2_destroy(&c);
	free(c.rdma_buf);
	return ret ? ret : gone;
}

/* Server: answer LAB2_PINGS pings, each checked. */
static int lab2_server_ping_pong(struct lab2_conn *c, struct lab2_result *res)
{
	uint8_t msg[LAB2_MSG_MAX];
	char text[LAB2_PAYLOAD];
	int i, len, ret;

	for (i = 0; i < LAB2_PINGS; i++) {
		len = lab2_recv_msg(c, msg, sizeof(msg));
		if (len < 0)
			return len;
		ret = lab2_check_ping(msg, len, LAB2_MSG_PING, i);
		if (ret)
			return ret;
		res->pongs++;
		lab2_ping_text(LAB2_MSG_PONG, i, text);
		len = lab2_encode_ping(c->bufs.send, sizeof(c->bufs.send), LAB2_MSG_PONG, i, text);
		ret = lab2_send_msg(c, (uint32_t)len);
		if (ret)
			return ret;
	}
	printf("ping-pong: %d pings received and checked, %d pongs sent\n", res->pongs, LAB2_PINGS);
	return 0;
}

/* Server: send the MSG_MR, wait for DONE, then look at what the client wrote. */
static int lab2_server_rdma(struct lab2_conn *c, struct lab2_result *res)
{
	uint8_t msg[LAB2_MSG_MAX];
	struct lab2_mr_msg mr;
	struct rl_wire w;
	int len, ret;

	lab2_describe_mr(c->rdma_mr, &mr);
	len = lab2_encode_mr(&mr, c->bufs.send, sizeof(c->bufs.send));
	if (len < 0)
		return len;
	ret = lab2_send_msg(c, (uint32_t)len);
	if (ret)
		return ret;
	printf("sent MSG_MR: %u bytes at 0x%llx, rkey 0x%x\n", mr.len, (unsigned long long)mr.addr,
	       mr.rkey);
	len = lab2_recv_msg(c, msg, sizeof(msg));
	if (len < 0)
		return len;
	rl_wire_reader(&w, msg, (size_t)len);
	if (len != LAB2_DONE_WIRE_LEN || rl_wire_get_u32(&w) != LAB2_MSG_DONE) {
		rl_err("expected DONE (%d bytes) from the client, got %d bytes", LAB2_DONE_WIRE_LEN,
		       len);
		return -EBADMSG;
	}
	return lab2_keep_text(c->rdma_buf + LAB2_WRITE_OFFSET, "RDMA-written into our buffer", res);
}

/*
 * The server: listen on ARGS->port, accept one client, answer its pings,
 * let it write and read our buffer, then wait for it to disconnect. RES
 * gets the pings checked and the text written. Returns 0, or a negative errno.
 */
int lab2_run_server(const struct rl_args *args, int timeout_ms, struct lab2_result *res)
{
	struct lab2_conn c = { .timeout_ms = timeout_ms };
	int ret, gone;

	memset(res, 0, sizeof(*res));
	ret = lab2_listen(&c, args->port);
	if (ret)
		goto clean;
	printf("lab2 server: waiting for a client on port %u\n", args->port);
	fflush(stdout);
	ret = lab2_get_request(&c);
	if (ret)
		goto clean;
	ret = lab2_setup(&c, true);
	if (ret)
		goto clean;
	ret = lab2_accept(&c);
	if (ret)
		goto clean;
	printf("connection established\n");
	fflush(stdout);
	ret = lab2_server_ping_pong(&c, res);
	if (ret)
		goto clean;
	ret = lab2_server_rdma(&c, res);
	if (ret)
		goto clean;
	ret = lab2_wait_disconnected(&c);
	if (!ret)
		printf("the client disconnected\n");

clean:
	gone = lab2_destroy(&c);
	free(c.rdma_buf);
	return ret ? ret : gone;
}
