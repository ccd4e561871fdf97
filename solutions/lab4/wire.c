/*
 * wire.c: the three TCP messages of a Lab 4 transfer (given, not a step).
 * Fixed-width big-endian fields through the framework's rl_wire cursor;
 * docs/lab4.md "Wire format" lists them byte by byte.
 */
#include <string.h>

#include "lab4.h"

#define LAB4_MAGIC 0x524c3034u /* "RL04" */
#define LAB4_VERSION 1

enum lab4_msg_type {
	LAB4_MSG_HELLO = 1,
	LAB4_MSG_ACCEPT = 2,
	LAB4_MSG_RESULT = 3,
	LAB4_MSG_UD_HELLO = 4,
};

#define LAB4_HEADER_LEN 6
#define LAB4_DEST_LEN 26
#define LAB4_HELLO_LEN (LAB4_HEADER_LEN + 1 + 8 + 4 + 32 + LAB4_DEST_LEN)
#define LAB4_ACCEPT_LEN (LAB4_HEADER_LEN + 2 + LAB4_DEST_LEN + 4 + 8 + 4 + 4)
#define LAB4_RESULT_LEN (LAB4_HEADER_LEN + 1 + 8 + 32)
#define LAB4_UD_HELLO_LEN (LAB4_HEADER_LEN + 4 + 4 + 16 + 4 + 4)

static void lab4_put_header(struct rl_wire *w, enum lab4_msg_type type)
{
	rl_wire_put_u32(w, LAB4_MAGIC);
	rl_wire_put_u8(w, LAB4_VERSION);
	rl_wire_put_u8(w, type);
}

static void lab4_put_dest(struct rl_wire *w, const struct rl_qp_dest *d)
{
	rl_wire_put_u32(w, d->qpn);
	rl_wire_put_u32(w, d->psn);
	rl_wire_put_u16(w, d->lid);
	rl_wire_put_bytes(w, d->gid.raw, sizeof(d->gid.raw));
}

static void lab4_get_dest(struct rl_wire *w, struct rl_qp_dest *d)
{
	d->qpn = rl_wire_get_u32(w);
	d->psn = rl_wire_get_u32(w);
	d->lid = rl_wire_get_u16(w);
	rl_wire_get_bytes(w, d->gid.raw, sizeof(d->gid.raw));
}

/* Receive LEN bytes into BUF and check the header is a TYPE message of this version. */
static int lab4_recv_msg(int fd, enum lab4_msg_type type, uint8_t *buf, size_t len, int timeout_ms,
			 struct rl_wire *w)
{
	static const char *const names[] = { "?", "HELLO", "ACCEPT", "RESULT", "UD_HELLO" };
	uint32_t magic;
	uint8_t version, got;
	int ret = rl_oob_recv(fd, buf, len, timeout_ms);

	if (ret) {
		rl_err("waiting for %s: the peer closed the connection or went silent",
		       names[type]);
		return ret;
	}
	rl_wire_reader(w, buf, len);
	magic = rl_wire_get_u32(w);
	version = rl_wire_get_u8(w);
	got = rl_wire_get_u8(w);
	if (magic != LAB4_MAGIC || version != LAB4_VERSION || got != type) {
		rl_err("expected a Lab 4 %s (magic 0x%08x, version %d, type %d), got magic 0x%08x "
		       "version %u type %u",
		       names[type], LAB4_MAGIC, LAB4_VERSION, type, magic, version, got);
		return -EPROTO;
	}
	return 0;
}

int lab4_send_hello(int fd, const struct lab4_hello *h, int timeout_ms)
{
	uint8_t buf[LAB4_HELLO_LEN];
	struct rl_wire w;

	rl_wire_writer(&w, buf, sizeof(buf));
	lab4_put_header(&w, LAB4_MSG_HELLO);
	rl_wire_put_u8(&w, h->transport);
	rl_wire_put_u64(&w, h->size);
	rl_wire_put_u32(&w, h->chunk);
	rl_wire_put_bytes(&w, h->sha256, sizeof(h->sha256));
	lab4_put_dest(&w, &h->dest);
	return rl_wire_status(&w) ? -EMSGSIZE : rl_oob_send(fd, buf, sizeof(buf), timeout_ms);
}

int lab4_recv_hello(int fd, struct lab4_hello *h, int timeout_ms)
{
	uint8_t buf[LAB4_HELLO_LEN];
	struct rl_wire w;
	int ret = lab4_recv_msg(fd, LAB4_MSG_HELLO, buf, sizeof(buf), timeout_ms, &w);

	if (ret)
		return ret;
	h->transport = rl_wire_get_u8(&w);
	h->size = rl_wire_get_u64(&w);
	h->chunk = rl_wire_get_u32(&w);
	rl_wire_get_bytes(&w, h->sha256, sizeof(h->sha256));
	lab4_get_dest(&w, &h->dest);
	return rl_wire_status(&w);
}

int lab4_send_accept(int fd, const struct lab4_accept *a, int timeout_ms)
{
	uint8_t buf[LAB4_ACCEPT_LEN];
	struct rl_wire w;

	rl_wire_writer(&w, buf, sizeof(buf));
	lab4_put_header(&w, LAB4_MSG_ACCEPT);
	rl_wire_put_u16(&w, a->status);
	lab4_put_dest(&w, &a->dest);
	rl_wire_put_u32(&w, a->qkey);
	rl_wire_put_u64(&w, a->addr);
	rl_wire_put_u32(&w, a->rkey);
	rl_wire_put_u32(&w, a->credits);
	return rl_wire_status(&w) ? -EMSGSIZE : rl_oob_send(fd, buf, sizeof(buf), timeout_ms);
}

int lab4_recv_accept(int fd, struct lab4_accept *a, int timeout_ms)
{
	uint8_t buf[LAB4_ACCEPT_LEN];
	struct rl_wire w;
	int ret = lab4_recv_msg(fd, LAB4_MSG_ACCEPT, buf, sizeof(buf), timeout_ms, &w);

	if (ret)
		return ret;
	a->status = rl_wire_get_u16(&w);
	lab4_get_dest(&w, &a->dest);
	a->qkey = rl_wire_get_u32(&w);
	a->addr = rl_wire_get_u64(&w);
	a->rkey = rl_wire_get_u32(&w);
	a->credits = rl_wire_get_u32(&w);
	return rl_wire_status(&w);
}

int lab4_send_result(int fd, const struct lab4_result *res, int timeout_ms)
{
	uint8_t buf[LAB4_RESULT_LEN];
	struct rl_wire w;

	rl_wire_writer(&w, buf, sizeof(buf));
	lab4_put_header(&w, LAB4_MSG_RESULT);
	rl_wire_put_u8(&w, res->good);
	rl_wire_put_u64(&w, res->received);
	rl_wire_put_bytes(&w, res->sha256, sizeof(res->sha256));
	return rl_wire_status(&w) ? -EMSGSIZE : rl_oob_send(fd, buf, sizeof(buf), timeout_ms);
}

int lab4_recv_result(int fd, struct lab4_result *res, int timeout_ms)
{
	uint8_t buf[LAB4_RESULT_LEN];
	struct rl_wire w;
	int ret = lab4_recv_msg(fd, LAB4_MSG_RESULT, buf, sizeof(buf), timeout_ms, &w);

	if (ret)
		return ret;
	res->good = rl_wire_get_u8(&w);
	res->received = rl_wire_get_u64(&w);
	rl_wire_get_bytes(&w, res->sha256, sizeof(res->sha256));
	return rl_wire_status(&w);
}

int lab4_send_ud_hello(int fd, const struct lab4_ud_hello *h, int timeout_ms)
{
	uint8_t buf[LAB4_UD_HELLO_LEN];
	struct rl_wire w;

	rl_wire_writer(&w, buf, sizeof(buf));
	lab4_put_header(&w, LAB4_MSG_UD_HELLO);
	rl_wire_put_u32(&w, h->qpn);
	rl_wire_put_u32(&w, h->qkey);
	rl_wire_put_bytes(&w, h->gid.raw, sizeof(h->gid.raw));
	rl_wire_put_u32(&w, h->count);
	rl_wire_put_u32(&w, h->size);
	return rl_wire_status(&w) ? -EMSGSIZE : rl_oob_send(fd, buf, sizeof(buf), timeout_ms);
}

int lab4_recv_ud_hello(int fd, struct lab4_ud_hello *h, int timeout_ms)
{
	uint8_t buf[LAB4_UD_HELLO_LEN];
	struct rl_wire w;
	int ret = lab4_recv_msg(fd, LAB4_MSG_UD_HELLO, buf, sizeof(buf), timeout_ms, &w);

	if (ret)
		return ret;
	h->qpn = rl_wire_get_u32(&w);
	h->qkey = rl_wire_get_u32(&w);
	rl_wire_get_bytes(&w, h->gid.raw, sizeof(h->gid.raw));
	h->count = rl_wire_get_u32(&w);
	h->size = rl_wire_get_u32(&w);
	return rl_wire_status(&w);
}
