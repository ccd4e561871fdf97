/*
 * test_exchange.c: Lab 1 steps 8 and 9: the description of a QP, its wire
 * format, and the TCP swap. Every description is random for the run and
 * every expected value is computed by the check: from the kernel (the QP
 * number, the MR's length), the device (GID, LID), what the act said before
 * the lab's code ran (the buffer's address, the MR's rkey: the kernel shows
 * keys only to CAP_NET_ADMIN), and the reference wire format (peer.c) for
 * the bytes.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fixture.h"
#include "lab1.h"

#define MAX_RES 8

struct exchange_in {
	struct lab1_dest dest;             /* a description to encode, or to send */
	uint8_t bytes[LAB1_DEST_WIRE_LEN]; /* one to decode, or for the peer to send */
	uint32_t psn, len;                 /* for lab1_local_dest: the PSN, the MR's size */
	uint32_t cut;                      /* bytes the peer sends before it closes */
	uint8_t wide_qpn, wide_psn;        /* a top byte that makes a field too wide */
};

/* A random description, its QPN and PSN in 24 bits. */
static struct lab1_dest random_dest(void)
{
	struct lab1_dest d;

	fx_random(&d, sizeof(d));
	d.qpn &= 0xffffff;
	d.psn &= 0xffffff;
	return d;
}

/* The bytes of a random description (the description itself is not kept). */
static void random_bytes(uint8_t bytes[LAB1_DEST_WIRE_LEN])
{
	struct lab1_dest d = random_dest();

	fx_encode_dest(&d, bytes);
}

/* Say D field by field as "PREFIX.qpn" ... */
static void say_dest(const char *prefix, const struct lab1_dest *d)
{
	char key[64];

#define SAY(field)                                                                                 \
	snprintf(key, sizeof(key), "%s." #field, prefix);                                          \
	rl_say_int(key, (long long)d->field)
	SAY(qpn);
	SAY(psn);
	SAY(lid);
	SAY(addr);
	SAY(rkey);
	SAY(len);
#undef SAY
	snprintf(key, sizeof(key), "%s.gid", prefix);
	rl_say_bytes(key, d->gid.raw, 16);
}

/* What the act said as PREFIX (say_dest). */
static struct lab1_dest said_dest(struct rl_case *c, const char *prefix)
{
	struct lab1_dest d = { 0 };
	const void *gid;
	char key[64];
	size_t n;

#define SAID(field)                                                                                \
	snprintf(key, sizeof(key), "%s." #field, prefix);                                          \
	d.field = (__typeof__(d.field))rl_said_int(c, key)
	SAID(qpn);
	SAID(psn);
	SAID(lid);
	SAID(addr);
	SAID(rkey);
	SAID(len);
#undef SAID
	snprintf(key, sizeof(key), "%s.gid", prefix);
	gid = rl_said_bytes(c, key, &n);
	memcpy(d.gid.raw, gid, n == 16 ? 16 : 0);
	return d;
}

static bool expect_same(struct rl_case *c, const struct lab1_dest *want,
			const struct lab1_dest *got)
{
	char w[RL_GID_STR_LEN], g[RL_GID_STR_LEN];

	rl_gid_str(&want->gid, w);
	rl_gid_str(&got->gid, g);
	return rl_expect(c, got->qpn == want->qpn, "qpn: expected 0x%x, got 0x%x", want->qpn,
			 got->qpn) &&
	       rl_expect(c, got->psn == want->psn, "psn: expected 0x%x, got 0x%x", want->psn,
			 got->psn) &&
	       rl_expect(c, memcmp(got->gid.raw, want->gid.raw, 16) == 0,
			 "gid: expected %s, got %s", w, g) &&
	       rl_expect(c, got->addr == want->addr, "addr: expected 0x%llx, got 0x%llx",
			 (unsigned long long)want->addr, (unsigned long long)got->addr) &&
	       rl_expect(c, got->rkey == want->rkey, "rkey: expected 0x%x, got 0x%x", want->rkey,
			 got->rkey) &&
	       rl_expect(c, got->len == want->len, "len: expected %u, got %u", want->len,
			 got->len) &&
	       rl_expect(c, got->lid == want->lid, "lid: expected 0x%x, got 0x%x", want->lid,
			 got->lid);
}

/* The bytes the act said as NAME are WANT's encoding (N of them), else fail naming WHAT. */
static bool expect_bytes(struct rl_case *c, const char *name, const struct lab1_dest *want,
			 const char *what)
{
	uint8_t bytes[LAB1_DEST_WIRE_LEN];
	const uint8_t *got;
	size_t n, i;

	fx_encode_dest(want, bytes);
	got = rl_said_bytes(c, name, &n);
	if (!rl_expect(c, n >= LAB1_DEST_WIRE_LEN, "expected %d bytes %s, got %zu",
		       LAB1_DEST_WIRE_LEN, what, n))
		return false;
	for (i = 0; i < LAB1_DEST_WIRE_LEN; i++)
		if (!rl_expect(c, got[i] == bytes[i], "byte %zu %s: expected 0x%02x, got 0x%02x", i,
			       what, bytes[i], got[i]))
			return false;
	return true;
}

/* Step 8 */

static void choose_psn_and_len(struct rl_case *c)
{
	struct exchange_in *in = c->in;

	in->psn = fx_random_between(0, 0xffffff);
	in->len = fx_random_between(1, FX_BUF_SIZE);
}

static void choose_wide_psn(struct rl_case *c)
{
	struct exchange_in *in = c->in;

	in->psn = fx_random_between(0x01000000, 0xffffffff);
	in->len = fx_random_between(1, FX_BUF_SIZE);
}

/* The lab's description of a plain-verbs QP and an MR of IN's size, with IN's PSN. */
static void describe(struct rl_case *c)
{
	const struct exchange_in *in = c->in;
	struct ibv_context *ctx = fx_open();
	struct ibv_pd *pd = fx_pd(ctx);
	struct ibv_qp *qp = fx_qp(pd, fx_cq(ctx));
	char *buf = calloc(1, in->len);
	struct ibv_mr *mr;
	struct lab1_dest d;

	ck_assert(buf);
	mr = ibv_reg_mr(pd, buf, in->len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ck_assert_msg(mr, "fixture: ibv_reg_mr failed");
	rl_say_int("addr", (long long)(uintptr_t)buf);
	rl_say_int("mr.rkey", mr->rkey);
	memset(&d, 0x5a, sizeof(d));
	rl_say_int("ret",
		   lab1_local_dest(qp, rl_test_ib_port(), rl_test_gid_index(), in->psn, mr, &d));
	say_dest("got", &d);
	rl_hold();
}

static bool returned_0(struct rl_case *c, const char *fn)
{
	long long ret = rl_said_int(c, "ret");

	return rl_expect(c, ret == 0, "expected %s to return 0, got %lld (%s)", fn, ret,
			 strerror((int)-ret));
}

/* The act's one object of KIND in the kernel's list, into R. */
static bool kernel_one(struct rl_case *c, const char *kind, struct rl_res *r)
{
	struct rl_res all[MAX_RES];
	int n = fx_res(c, kind, all, MAX_RES);

	if (n >= 0 &&
	    rl_expect(c, n == 1, "expected 1 %s of the test's process (rdma res), got %d", kind, n))
		*r = all[0];
	return n == 1;
}

static void describes_qp_gid_and_mr(struct rl_case *c)
{
	const struct exchange_in *in = c->in;
	struct fx_device dev = fx_device();
	struct lab1_dest want, got = said_dest(c, "got");
	struct rl_res qp, mr;

	if (!returned_0(c, "lab1_local_dest") || !kernel_one(c, "qp", &qp) ||
	    !kernel_one(c, "mr", &mr))
		return;
	want = (struct lab1_dest){
		.qpn = (uint32_t)fx_res_num(&qp, "lqpn"),
		.psn = in->psn,
		.lid = dev.lid,
		.gid = dev.gid,
		/* Said before the lab's code ran: the fixture's buffer and MR. */
		.addr = (uint64_t)rl_said_int(c, "addr"),
		.rkey = (uint32_t)rl_said_int(c, "mr.rkey"),
		.len = (uint32_t)fx_res_num(&mr, "mrlen"),
	};
	expect_same(c, &want, &got);
}

RL_GRADED(local_dest_describes_the_qp_the_gid_and_the_mr, .step = 8, .points = 2,
	  .setup = choose_psn_and_len, .act = describe, .check = describes_qp_gid_and_mr);

static void keeps_24_bits(struct rl_case *c)
{
	const struct exchange_in *in = c->in;
	long long psn = rl_said_int(c, "got.psn");

	if (returned_0(c, "lab1_local_dest"))
		rl_expect(c, psn == (in->psn & 0xffffff),
			  "expected psn 0x%x (24 bits of 0x%x), got 0x%llx", in->psn & 0xffffff,
			  in->psn, psn);
}

RL_GRADED(local_dest_keeps_only_24_bits_of_the_psn, .step = 8, .points = 1,
	  .setup = choose_wide_psn, .act = describe, .check = keeps_24_bits);

static void choose_dest(struct rl_case *c)
{
	((struct exchange_in *)c->in)->dest = random_dest();
}

/* Encode IN's description into a buffer 8 bytes too long, filled with 0xee. */
static void encode(struct rl_case *c)
{
	const struct exchange_in *in = c->in;
	uint8_t got[LAB1_DEST_WIRE_LEN + 8];

	memset(got, 0xee, sizeof(got));
	rl_say_int("ret", lab1_encode_dest(&in->dest, got, sizeof(got)));
	rl_say_bytes("bytes", got, sizeof(got));
}

static void encoded_big_endian(struct rl_case *c)
{
	const struct exchange_in *in = c->in;
	long long n = rl_said_int(c, "ret");
	const uint8_t *got;
	size_t len, i;

	if (!rl_expect(c, n == LAB1_DEST_WIRE_LEN, "expected %d bytes encoded, got %lld",
		       LAB1_DEST_WIRE_LEN, n) ||
	    !expect_bytes(c, "bytes", &in->dest, "encoded"))
		return;
	got = rl_said_bytes(c, "bytes", &len);
	for (i = LAB1_DEST_WIRE_LEN; i < len; i++)
		if (!rl_expect(c, got[i] == 0xee, "expected nothing written past byte %d",
			       LAB1_DEST_WIRE_LEN - 1))
			return;
}

RL_GRADED(encode_puts_each_field_big_endian_at_its_offset, .step = 8, .points = 2,
	  .setup = choose_dest, .act = encode, .check = encoded_big_endian);

static void choose_bytes(struct rl_case *c)
{
	random_bytes(((struct exchange_in *)c->in)->bytes);
}

static void decode(struct rl_case *c)
{
	const struct exchange_in *in = c->in;
	struct lab1_dest got;

	memset(&got, 0, sizeof(got));
	rl_say_int("ret", lab1_decode_dest(in->bytes, sizeof(in->bytes), &got));
	say_dest("got", &got);
}

static void decoded_from_the_offsets(struct rl_case *c)
{
	const struct exchange_in *in = c->in;
	struct lab1_dest want, got = said_dest(c, "got");
	long long ret = rl_said_int(c, "ret");

	fx_decode_dest(in->bytes, &want);
	if (rl_expect(c, ret == 0, "expected lab1_decode_dest to return 0, got %lld", ret))
		expect_same(c, &want, &got);
}

RL_GRADED(decode_reads_each_field_from_its_offset, .step = 8, .points = 2, .setup = choose_bytes,
	  .act = decode, .check = decoded_from_the_offsets);

/* A random description with the extremes: the widest QPN, PSN 0, the highest address. */
static void choose_extreme_dest(struct rl_case *c)
{
	struct exchange_in *in = c->in;

	in->dest = random_dest();
	in->dest.qpn = 0xffffff;
	in->dest.psn = 0;
	in->dest.addr = ~0ULL;
}

static void encode_then_decode(struct rl_case *c)
{
	const struct exchange_in *in = c->in;
	uint8_t bytes[LAB1_DEST_WIRE_LEN];
	struct lab1_dest out;

	rl_say_int("encoded", lab1_encode_dest(&in->dest, bytes, sizeof(bytes)));
	memset(&out, 0, sizeof(out));
	rl_say_int("decoded", lab1_decode_dest(bytes, sizeof(bytes), &out));
	say_dest("out", &out);
}

static void round_trip(struct rl_case *c)
{
	const struct exchange_in *in = c->in;
	long long enc = rl_said_int(c, "encoded"), dec = rl_said_int(c, "decoded");
	struct lab1_dest out = said_dest(c, "out");

	if (rl_expect(c, enc == LAB1_DEST_WIRE_LEN, "expected %d bytes encoded, got %lld",
		      LAB1_DEST_WIRE_LEN, enc) &&
	    rl_expect(c, dec == 0, "expected lab1_decode_dest to return 0, got %lld", dec))
		expect_same(c, &in->dest, &out);
}

RL_GRADED(encode_then_decode_gives_the_same_fields, .step = 8, .points = 1,
	  .setup = choose_extreme_dest, .act = encode_then_decode, .check = round_trip);

static void choose_dest_and_bytes(struct rl_case *c)
{
	struct exchange_in *in = c->in;

	in->dest = random_dest();
	random_bytes(in->bytes);
	in->cut = fx_random_between(0, LAB1_DEST_WIRE_LEN - 1);
	in->wide_qpn = (uint8_t)fx_random_between(1, 255);
	in->wide_psn = (uint8_t)fx_random_between(1, 255);
}

/* Encode into and decode from one byte too few, then the exact size. */
static void short_buffers(struct rl_case *c)
{
	const struct exchange_in *in = c->in;
	uint8_t bytes[LAB1_DEST_WIRE_LEN];
	struct lab1_dest got;

	rl_say_int("encode_short", lab1_encode_dest(&in->dest, bytes, LAB1_DEST_WIRE_LEN - 1));
	rl_say_int("decode_short", lab1_decode_dest(in->bytes, LAB1_DEST_WIRE_LEN - 1, &got));
	rl_say_int("encode", lab1_encode_dest(&in->dest, bytes, LAB1_DEST_WIRE_LEN));
	rl_say_int("decode", lab1_decode_dest(in->bytes, LAB1_DEST_WIRE_LEN, &got));
}

static void refused_short(struct rl_case *c)
{
	long long enc_short = rl_said_int(c, "encode_short"),
		  dec_short = rl_said_int(c, "decode_short");
	long long enc = rl_said_int(c, "encode"), dec = rl_said_int(c, "decode");

	if (rl_expect(c, enc_short == -EMSGSIZE,
		      "encode into %d bytes: expected -EMSGSIZE, got %lld", LAB1_DEST_WIRE_LEN - 1,
		      enc_short) &&
	    rl_expect(c, dec_short == -EMSGSIZE, "decode of %d bytes: expected -EMSGSIZE, got %lld",
		      LAB1_DEST_WIRE_LEN - 1, dec_short) &&
	    rl_expect(c, enc == LAB1_DEST_WIRE_LEN,
		      "encode into %d bytes: expected %d, got %lld (-EMSGSIZE is for a buffer too "
		      "short)",
		      LAB1_DEST_WIRE_LEN, LAB1_DEST_WIRE_LEN, enc))
		rl_expect(
			c, dec == 0,
			"decode of %d bytes: expected 0, got %lld (-EMSGSIZE is for too few bytes)",
			LAB1_DEST_WIRE_LEN, dec);
}

RL_GRADED(short_buffers_are_refused_with_emsgsize, .step = 8, .points = 1,
	  .setup = choose_dest_and_bytes, .act = short_buffers, .check = refused_short);

/* Decode IN's bytes with the QPN's top byte set, then the PSN's, then as they are. */
static void decode_wide(struct rl_case *c)
{
	const struct exchange_in *in = c->in;
	uint8_t bytes[LAB1_DEST_WIRE_LEN];
	struct lab1_dest got;

	memcpy(bytes, in->bytes, sizeof(bytes));
	bytes[0] = in->wide_qpn;
	rl_say_int("wide_qpn", lab1_decode_dest(bytes, sizeof(bytes), &got));
	memcpy(bytes, in->bytes, sizeof(bytes));
	bytes[4] = in->wide_psn;
	rl_say_int("wide_psn", lab1_decode_dest(bytes, sizeof(bytes), &got));
	rl_say_int("narrow", lab1_decode_dest(in->bytes, sizeof(in->bytes), &got));
}

static void refused_wide(struct rl_case *c)
{
	const struct exchange_in *in = c->in;
	long long qpn = rl_said_int(c, "wide_qpn"), psn = rl_said_int(c, "wide_psn");
	long long narrow = rl_said_int(c, "narrow");
	struct lab1_dest d;

	fx_decode_dest(in->bytes, &d);
	if (rl_expect(c, qpn == -EINVAL, "qpn 0x%02x%06x: expected -EINVAL, got %lld", in->wide_qpn,
		      d.qpn, qpn) &&
	    rl_expect(c, psn == -EINVAL, "psn 0x%02x%06x: expected -EINVAL, got %lld", in->wide_psn,
		      d.psn, psn))
		rl_expect(
			c, narrow == 0,
			"qpn 0x%06x psn 0x%06x: expected 0, got %lld (-EINVAL is for fields wider "
			"than 24 bits)",
			d.qpn, d.psn, narrow);
}

RL_GRADED(decode_refuses_a_qpn_or_psn_wider_than_24_bits, .step = 8, .points = 1,
	  .setup = choose_dest_and_bytes, .act = decode_wide, .check = refused_wide);

/* Step 9 */

/* A socket pair; the peer's end (sv[1]) has sent N bytes of BYTES, and closed when CLOSE. */
static void peer_sends(int sv[2], const uint8_t *bytes, size_t n, bool close)
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(write(sv[1], bytes, n), (ssize_t)n);
	if (close)
		shutdown(sv[1], SHUT_WR);
}

/* The lab's swap: ours is IN's description, the peer's is IN's bytes; say both ends. */
static void exchange(struct rl_case *c)
{
	const struct exchange_in *in = c->in;
	uint8_t sent[LAB1_DEST_WIRE_LEN + 1];
	struct lab1_dest theirs;
	int sv[2];
	ssize_t n;

	peer_sends(sv, in->bytes, sizeof(in->bytes), false);
	memset(&theirs, 0, sizeof(theirs));
	rl_say_int("ret", lab1_exchange_dest(sv[0], &in->dest, &theirs));
	say_dest("theirs", &theirs);
	shutdown(sv[0], SHUT_WR);
	n = recv(sv[1], sent, sizeof(sent), MSG_WAITALL);
	rl_say_bytes("sent", sent, n > 0 ? (size_t)n : 0);
}

static void swapped(struct rl_case *c)
{
	const struct exchange_in *in = c->in;
	struct lab1_dest want, theirs = said_dest(c, "theirs");
	size_t n;

	fx_decode_dest(in->bytes, &want);
	if (!returned_0(c, "lab1_exchange_dest") || !expect_same(c, &want, &theirs))
		return;
	rl_said_bytes(c, "sent", &n);
	if (rl_expect(c, n == LAB1_DEST_WIRE_LEN, "expected %d bytes sent to the peer, got %zu",
		      LAB1_DEST_WIRE_LEN, n))
		expect_bytes(c, "sent", &in->dest, "sent to the peer");
}

RL_GRADED(exchange_sends_ours_and_returns_the_peers, .step = 9, .points = 2, .needs = 8,
	  .setup = choose_dest_and_bytes, .act = exchange, .check = swapped);

/* A peer that sends IN->cut bytes and closes; then one that sends all of them. */
static void exchange_cut_short(struct rl_case *c)
{
	const struct exchange_in *in = c->in;
	struct lab1_dest theirs;
	int sv[2];

	peer_sends(sv, in->bytes, in->cut, true);
	rl_say_int("ret", lab1_exchange_dest(sv[0], &in->dest, &theirs));
	peer_sends(sv, in->bytes, sizeof(in->bytes), false);
	memset(&theirs, 0, sizeof(theirs));
	rl_say_int("whole", lab1_exchange_dest(sv[0], &in->dest, &theirs));
	rl_say_int("whole.qpn", theirs.qpn);
}

/* The exchange with a peer that sent everything worked, and got its QPN. */
static void whole_exchange_works(struct rl_case *c, const char *refusal)
{
	const struct exchange_in *in = c->in;
	long long ret = rl_said_int(c, "whole"), qpn = rl_said_int(c, "whole.qpn");
	struct lab1_dest want;

	fx_decode_dest(in->bytes, &want);
	if (rl_expect(c, ret == 0,
		      "expected lab1_exchange_dest to return 0 with a peer that sends all %d bytes, "
		      "got %lld (%s): %s",
		      LAB1_DEST_WIRE_LEN, ret, strerror((int)-ret), refusal))
		rl_expect(c, qpn == want.qpn, "qpn: expected 0x%x, got 0x%llx", want.qpn, qpn);
}

static void reset_when_cut(struct rl_case *c)
{
	const struct exchange_in *in = c->in;
	long long ret = rl_said_int(c, "ret");

	if (rl_expect(c, ret == -ECONNRESET,
		      "expected -ECONNRESET (%d) after %u of %d bytes, got %lld (%s)", -ECONNRESET,
		      in->cut, LAB1_DEST_WIRE_LEN, ret, strerror((int)-ret)))
		whole_exchange_works(c, "-ECONNRESET is for a peer that closes early");
}

RL_GRADED(exchange_reports_econnreset_when_the_peer_closes_first, .step = 9, .points = 1,
	  .needs = 8, .setup = choose_dest_and_bytes, .act = exchange_cut_short,
	  .check = reset_when_cut);

/* A peer whose QPN has IN->wide_qpn as its top byte; then one whose bytes are fine. */
static void exchange_wide(struct rl_case *c)
{
	const struct exchange_in *in = c->in;
	uint8_t bytes[LAB1_DEST_WIRE_LEN];
	struct lab1_dest theirs;
	int sv[2];

	memcpy(bytes, in->bytes, sizeof(bytes));
	bytes[0] = in->wide_qpn;
	peer_sends(sv, bytes, sizeof(bytes), false);
	rl_say_int("ret", lab1_exchange_dest(sv[0], &in->dest, &theirs));
	peer_sends(sv, in->bytes, sizeof(in->bytes), false);
	memset(&theirs, 0, sizeof(theirs));
	rl_say_int("whole", lab1_exchange_dest(sv[0], &in->dest, &theirs));
	rl_say_int("whole.qpn", theirs.qpn);
}

static void refused_wide_peer(struct rl_case *c)
{
	const struct exchange_in *in = c->in;
	long long ret = rl_said_int(c, "ret");
	struct lab1_dest d;

	fx_decode_dest(in->bytes, &d);
	if (rl_expect(c, ret == -EINVAL, "expected -EINVAL for qpn 0x%02x%06x, got %lld (%s)",
		      in->wide_qpn, d.qpn, ret, strerror((int)-ret)))
		whole_exchange_works(c, "-EINVAL is for a QPN wider than 24 bits");
}

RL_GRADED(exchange_refuses_a_peer_qpn_wider_than_24_bits, .step = 9, .points = 1, .needs = 8,
	  .setup = choose_dest_and_bytes, .act = exchange_wide, .check = refused_wide_peer);
