/* test_exchange.c: Lab 1 steps 8 and 9: the description of a QP, its wire format, and the TCP swap. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fixture.h"
#include "lab1.h"

/* A description with a different, recognizable value in every field. */
static const struct lab1_dest sample = {
	.qpn = 0x123456,
	.psn = 0xabcdef,
	.lid = 0x0102,
	.gid = { .raw = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 211, 0, 1 } },
	.addr = 0x00007f1122334455ULL,
	.rkey = 0xdeadbeef,
	.len = 4096,
};

/* SAMPLE in the wire format lab1.h documents, built here byte by byte. */
static void sample_bytes(uint8_t out[LAB1_DEST_WIRE_LEN])
{
	static const uint8_t head[8] = { 0x00, 0x12, 0x34, 0x56, 0x00, 0xab, 0xcd, 0xef };
	static const uint8_t tail[18] = {
		0x00, 0x00, 0x7f, 0x11, 0x22, 0x33, 0x44, 0x55, /* addr at 24 */
		0xde, 0xad, 0xbe, 0xef,                         /* rkey at 32 */
		0x00, 0x00, 0x10, 0x00,                         /* len at 36 */
		0x01, 0x02,                                     /* lid at 40 */
	};

	memcpy(out, head, sizeof(head));
	memcpy(out + 8, sample.gid.raw, 16);
	memcpy(out + 24, tail, sizeof(tail));
}

static void expect_same(const struct lab1_dest *want, const struct lab1_dest *got)
{
	ck_assert_msg(got->qpn == want->qpn, "qpn: expected 0x%x, got 0x%x", want->qpn, got->qpn);
	ck_assert_msg(got->psn == want->psn, "psn: expected 0x%x, got 0x%x", want->psn, got->psn);
	ck_assert_msg(memcmp(got->gid.raw, want->gid.raw, 16) == 0, "gid: expected other bytes");
	ck_assert_msg(got->addr == want->addr, "addr: expected 0x%llx, got 0x%llx",
		      (unsigned long long)want->addr, (unsigned long long)got->addr);
	ck_assert_msg(got->rkey == want->rkey, "rkey: expected 0x%x, got 0x%x", want->rkey,
		      got->rkey);
	ck_assert_msg(got->len == want->len, "len: expected %u, got %u", want->len, got->len);
	ck_assert_msg(got->lid == want->lid, "lid: expected 0x%x, got 0x%x", want->lid, got->lid);
}

/* Step 8 */

/* The lab's description of a plain-verbs QP and MR, with PSN. */
static struct lab1_dest describe(uint32_t psn, struct ibv_qp **qp, struct ibv_mr **mr)
{
	struct ibv_context *ctx = fx_open();
	struct ibv_pd *pd = fx_pd(ctx);
	struct lab1_dest d;
	int ret;

	*qp = fx_qp(pd, fx_cq(ctx));
	*mr = ibv_reg_mr(pd, calloc(1, FX_BUF_SIZE), FX_BUF_SIZE,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ck_assert_msg(*mr, "fixture: ibv_reg_mr failed");
	memset(&d, 0x5a, sizeof(d));
	ret = lab1_local_dest(*qp, rl_test_ib_port(), rl_test_gid_index(), psn, *mr, &d);
	ck_assert_msg(ret == 0, "expected lab1_local_dest to return 0, got %d (%s)", ret,
		      strerror(-ret));
	return d;
}

RL_TEST(local_dest_describes_the_qp_the_gid_and_the_mr, .step = 8, .points = 2)
{
	struct ibv_port_attr port;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct lab1_dest want = { .psn = 0x42 }, got = describe(0x42, &qp, &mr);

	ck_assert_int_eq(ibv_query_port(qp->context, rl_test_ib_port(), &port), 0);
	want.qpn = qp->qp_num;
	want.lid = port.lid;
	ck_assert_int_eq(
		ibv_query_gid(qp->context, rl_test_ib_port(), rl_test_gid_index(), &want.gid), 0);
	want.addr = (uintptr_t)mr->addr;
	want.rkey = mr->rkey;
	want.len = FX_BUF_SIZE;
	expect_same(&want, &got);
}
END_TEST

RL_TEST(local_dest_keeps_only_24_bits_of_the_psn, .step = 8, .points = 1)
{
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct lab1_dest got = describe(0xfe123456, &qp, &mr);

	ck_assert_msg(got.psn == 0x123456,
		      "expected psn 0x123456 (24 bits of 0xfe123456), got 0x%x", got.psn);
}
END_TEST

RL_TEST(encode_puts_each_field_big_endian_at_its_offset, .step = 8, .points = 2)
{
	uint8_t want[LAB1_DEST_WIRE_LEN], got[LAB1_DEST_WIRE_LEN + 8];
	int n, i;

	sample_bytes(want);
	memset(got, 0xee, sizeof(got));
	n = lab1_encode_dest(&sample, got, sizeof(got));
	ck_assert_msg(n == LAB1_DEST_WIRE_LEN, "expected %d bytes encoded, got %d",
		      LAB1_DEST_WIRE_LEN, n);
	for (i = 0; i < LAB1_DEST_WIRE_LEN; i++)
		ck_assert_msg(got[i] == want[i], "byte %d: expected 0x%02x, got 0x%02x", i, want[i],
			      got[i]);
	ck_assert_msg(got[LAB1_DEST_WIRE_LEN] == 0xee, "expected nothing written past byte %d",
		      LAB1_DEST_WIRE_LEN - 1);
}
END_TEST

RL_TEST(decode_reads_each_field_from_its_offset, .step = 8, .points = 2)
{
	uint8_t bytes[LAB1_DEST_WIRE_LEN];
	struct lab1_dest got;
	int ret;

	sample_bytes(bytes);
	memset(&got, 0, sizeof(got));
	ret = lab1_decode_dest(bytes, sizeof(bytes), &got);
	ck_assert_msg(ret == 0, "expected lab1_decode_dest to return 0, got %d", ret);
	expect_same(&sample, &got);
}
END_TEST

RL_TEST(encode_then_decode_gives_the_same_fields, .step = 8, .points = 1)
{
	struct lab1_dest in = sample, out;
	uint8_t bytes[LAB1_DEST_WIRE_LEN];
	int ret;

	in.qpn = 0xffffff;
	in.psn = 0;
	in.addr = ~0ULL;
	in.rkey = 1;
	ret = lab1_encode_dest(&in, bytes, sizeof(bytes));
	ck_assert_msg(ret == LAB1_DEST_WIRE_LEN, "expected %d bytes encoded, got %d",
		      LAB1_DEST_WIRE_LEN, ret);
	memset(&out, 0, sizeof(out));
	ret = lab1_decode_dest(bytes, sizeof(bytes), &out);
	ck_assert_msg(ret == 0, "expected lab1_decode_dest to return 0, got %d", ret);
	expect_same(&in, &out);
}
END_TEST

RL_TEST(short_buffers_are_refused_with_emsgsize, .step = 8, .points = 1)
{
	uint8_t bytes[LAB1_DEST_WIRE_LEN];
	struct lab1_dest got;
	int ret;

	ret = lab1_encode_dest(&sample, bytes, LAB1_DEST_WIRE_LEN - 1);
	ck_assert_msg(ret == -EMSGSIZE, "encode into %d bytes: expected -EMSGSIZE, got %d",
		      LAB1_DEST_WIRE_LEN - 1, ret);
	sample_bytes(bytes);
	ret = lab1_decode_dest(bytes, LAB1_DEST_WIRE_LEN - 1, &got);
	ck_assert_msg(ret == -EMSGSIZE, "decode of %d bytes: expected -EMSGSIZE, got %d",
		      LAB1_DEST_WIRE_LEN - 1, ret);
}
END_TEST

RL_TEST(decode_refuses_a_qpn_or_psn_wider_than_24_bits, .step = 8, .points = 1)
{
	uint8_t bytes[LAB1_DEST_WIRE_LEN];
	struct lab1_dest got;
	int ret;

	sample_bytes(bytes);
	bytes[0] = 0x01; /* qpn 0x01123456 */
	ret = lab1_decode_dest(bytes, sizeof(bytes), &got);
	ck_assert_msg(ret == -EINVAL, "qpn 0x01123456: expected -EINVAL, got %d", ret);
	sample_bytes(bytes);
	bytes[4] = 0x80; /* psn 0x80abcdef */
	ret = lab1_decode_dest(bytes, sizeof(bytes), &got);
	ck_assert_msg(ret == -EINVAL, "psn 0x80abcdef: expected -EINVAL, got %d", ret);
}
END_TEST

/* Step 9 */

RL_TEST(exchange_sends_ours_and_returns_the_peers, .step = 9, .points = 2, .needs = 8)
{
	uint8_t want[LAB1_DEST_WIRE_LEN], sent[LAB1_DEST_WIRE_LEN + 1];
	struct lab1_dest ours = sample, theirs;
	int sv[2], ret;
	ssize_t n;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	sample_bytes(want);
	ck_assert_int_eq(write(sv[1], want, sizeof(want)), sizeof(want)); /* the peer's */
	ours.qpn = 0x000654;
	ours.rkey = 0x77;
	memset(&theirs, 0, sizeof(theirs));
	ret = lab1_exchange_dest(sv[0], &ours, &theirs);
	ck_assert_msg(ret == 0, "expected lab1_exchange_dest to return 0, got %d (%s)", ret,
		      strerror(-ret));
	expect_same(&sample, &theirs);
	shutdown(sv[0], SHUT_WR);
	n = recv(sv[1], sent, sizeof(sent), MSG_WAITALL);
	ck_assert_msg(n == LAB1_DEST_WIRE_LEN, "expected %d bytes sent to the peer, got %zd",
		      LAB1_DEST_WIRE_LEN, n);
	ck_assert_msg(sent[1] == 0x00 && sent[2] == 0x06 && sent[3] == 0x54 && sent[35] == 0x77,
		      "expected our qpn 0x000654 at offset 0 and rkey 0x77 at 32, got other bytes");
	close(sv[0]);
	close(sv[1]);
}
END_TEST

RL_TEST(exchange_reports_econnreset_when_the_peer_closes_first, .step = 9, .points = 1, .needs = 8)
{
	struct lab1_dest theirs;
	int sv[2], ret;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(write(sv[1], "short", 5), 5);
	shutdown(sv[1], SHUT_WR); /* the peer sends 5 bytes and stops */
	ret = lab1_exchange_dest(sv[0], &sample, &theirs);
	ck_assert_msg(ret == -ECONNRESET,
		      "expected -ECONNRESET (%d) after 5 of %d bytes, got %d (%s)", -ECONNRESET,
		      LAB1_DEST_WIRE_LEN, ret, strerror(-ret));
	close(sv[0]);
	close(sv[1]);
}
END_TEST

RL_TEST(exchange_refuses_a_peer_qpn_wider_than_24_bits, .step = 9, .points = 1, .needs = 8)
{
	uint8_t bytes[LAB1_DEST_WIRE_LEN];
	struct lab1_dest theirs;
	int sv[2], ret;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	sample_bytes(bytes);
	bytes[0] = 0xff;
	ck_assert_int_eq(write(sv[1], bytes, sizeof(bytes)), sizeof(bytes));
	ret = lab1_exchange_dest(sv[0], &sample, &theirs);
	ck_assert_msg(ret == -EINVAL, "expected -EINVAL for qpn 0xff123456, got %d (%s)", ret,
		      strerror(-ret));
	close(sv[0]);
	close(sv[1]);
}
END_TEST
