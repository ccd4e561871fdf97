/* test_rdma.c: Lab 2 step 4: remote access, the MSG_MR wire format, RDMA write and read. */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "fixture.h"
#include "lab2.h"

/* Step 4 */

/* An MR as lab2_describe_mr() sees it. */
struct fake_mr {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey, rkey;
};

/* The inputs of a step 4 test, chosen by its setup. */
struct rdma_in {
	struct ref_opts o;              /* the reference peer's */
	uint16_t port;                  /* where it listens */
	uint32_t len;                   /* lab2_reg_remote_mr: the buffer's length, this run's */
	uint32_t at;                    /* where in the target buffer the test's RDMA goes */
	char text[FX_TEXT_SIZE];        /* what the act offers or writes */
	struct fake_mr mr[2];           /* lab2_describe_mr: the handout's keys, random ones */
	struct lab2_mr_msg m;           /* lab2_encode_mr */
	uint8_t wire[LAB2_MR_WIRE_LEN]; /* lab2_decode_mr */
};

/* N random bytes into P. */
static void random_bytes(void *p, size_t n)
{
	ck_assert(getrandom(p, n, 0) == (ssize_t)n);
}

/* A random offset in [FROM, TO). */
static uint32_t random_in(uint32_t from, uint32_t to)
{
	uint32_t r;

	random_bytes(&r, sizeof(r));
	return from + r % (to - from);
}

/* The peer's RDMA for remote_mr tests: where the act said, its status into R. */
static void rdma_where_told(const struct rdma_in *in, enum ibv_wr_opcode op, struct fx_report *r)
{
	struct ref_conn k;
	struct rl_wire w;
	uint32_t rkey, len;
	uint64_t addr;

	if (ref_accept(&k, &in->o, r) || ref_recv(&k, r) != 16)
		goto out;
	rl_wire_reader(&w, k.buf + REF_RECV, 16);
	addr = rl_wire_get_u64(&w);
	rkey = rl_wire_get_u32(&w);
	len = rl_wire_get_u32(&w);
	if (op == IBV_WR_RDMA_WRITE) {
		strcpy((char *)k.buf + REF_RDMA, r->secret);
		r->write_status = ref_rdma(&k, op, 0, (uint32_t)strlen(r->secret) + 1, addr, rkey);
		/* Done: the act may look at its buffer (a failed WRITE fails its QP, and this). */
		memcpy(k.buf + REF_SEND, "done", 5);
		ref_send(&k, r, 5, NULL);
	} else {
		/* LEN is the act's word: never more than R->text holds, NUL kept. */
		if (len > sizeof(r->text) - 1)
			len = sizeof(r->text) - 1;
		r->read_status = ref_rdma(&k, op, 0, len, addr, rkey);
		r->text_len = len;
		memcpy(r->text, k.buf + REF_RDMA, len);
		/* What the client never does: refused by an MR that grants only what it does. */
		if (r->read_status == IBV_WC_SUCCESS)
			r->atomic_status = ref_atomic_add(&k, (addr + 7) & ~(uint64_t)7, rkey);
	}
out:
	ref_end(&k, r);
}

static void writes_where_told(const void *in, struct fx_report *r)
{
	rdma_where_told(in, IBV_WR_RDMA_WRITE, r);
}

static void reads_where_told(const void *in, struct fx_report *r)
{
	rdma_where_told(in, IBV_WR_RDMA_READ, r);
}

/*
 * A buffer length, an offset and a text, this run, and a peer that will
 * ROLE. The length is no other MR's of the act (the fixture's are 64, 640
 * and LAB2_RDMA_SIZE bytes): the check finds the MR by it.
 */
static void start_peer(struct rl_case *c, fx_role *role)
{
	struct rdma_in *in = c->in;

	in->len = random_in(LAB2_RDMA_SIZE + 1, 2 * LAB2_RDMA_SIZE);
	in->at = random_in(0, in->len - FX_TEXT_SIZE);
	rl_test_random_text(in->text, sizeof(in->text));
	in->o = ref_default();
	fx_peer_start(role, in);
	in->port = fx_peer_port();
}

static void peer_that_writes(struct rl_case *c)
{
	start_peer(c, writes_where_told);
}

static void peer_that_reads(struct rl_case *c)
{
	start_peer(c, reads_where_told);
}

/* The act: a buffer registered by lab2_reg_remote_mr(), said, and told to the peer. */
struct remote {
	struct fx_pair p;
	char *buf;
	struct ibv_mr *mr;
};

/* Connect, register, tell; false when there is no MR to tell about. */
static bool remote_open(struct rl_case *c, struct remote *t)
{
	const struct rdma_in *in = c->in;
	struct fx_pair_opts o = { .port = in->port, .recvs = 1, .peer_rnr_retry = LAB2_RNR_RETRY };
	uint8_t where[16];
	struct rl_wire w;

	fx_pair_open(&t->p, &o);
	t->buf = aligned_alloc(4096, 2 * LAB2_RDMA_SIZE);
	ck_assert(t->buf);
	memset(t->buf, 0, 2 * LAB2_RDMA_SIZE);
	strcpy(t->buf + in->at, in->text);
	t->mr = lab2_reg_remote_mr(t->p.c.pd, t->buf, in->len);
	rl_say_int("mr", t->mr != NULL);
	if (!t->mr)
		return false;
	rl_say_int("mr_addr", (long long)(uintptr_t)t->mr->addr);
	rl_say_int("mr_is_buf", t->mr->addr == t->buf);
	rl_say_int("mr_length", (long long)t->mr->length);
	rl_say_int("rkey", t->mr->rkey);
	rl_wire_writer(&w, where, sizeof(where));
	rl_wire_put_u64(&w, (uintptr_t)t->buf + in->at);
	rl_wire_put_u32(&w, t->mr->rkey);
	rl_wire_put_u32(&w, FX_TEXT_SIZE);
	fx_pair_tell(&t->p, where, sizeof(where));
	return true;
}

static void remote_close(struct remote *t)
{
	if (t->mr)
		ibv_dereg_mr(t->mr);
	fx_pair_close(&t->p);
	free(t->buf);
}

static void registers_for_a_write(struct rl_case *c)
{
	const struct rdma_in *in = c->in;
	struct remote t = { 0 };
	struct ibv_wc wc;

	if (remote_open(c, &t)) {
		/* The peer says done once its WRITE completed. */
		rl_say_int("done", fx_poll(t.p.c.cq, &wc) && wc.status == IBV_WC_SUCCESS);
		rl_say_bytes("written", t.buf + in->at, FX_TEXT_SIZE);
		rl_hold();
	}
	remote_close(&t);
}

static void registers_for_a_read(struct rl_case *c)
{
	struct remote t = { 0 };

	if (remote_open(c, &t))
		rl_hold(); /* while the peer reads */
	remote_close(&t);
}

/*
 * The MR the act said lab2_reg_remote_mr() gave, against the buffer and the
 * kernel. The kernel shows an MR's keys only to a privileged process, and
 * the grader's is not: the MR is found by its length (this run's, no other
 * MR's) in the PD of the act's QP, and its rkey is proved by the peer's
 * RDMA with the rkey the act said (the check's next step).
 */
static bool mr_covers_the_buffer(struct rl_case *c)
{
	const struct rdma_in *in = c->in;
	struct rl_res mr[8], qp[2];
	const char *pdn = NULL, *len, *mr_pdn;
	char lens[128] = "";
	size_t used = 0;
	bool found = false;
	int i, n;

	if (!rl_expect(c, rl_said_int(c, "mr"),
		       "expected an MR from lab2_reg_remote_mr, got NULL (when ibv_reg_mr refuses "
		       "the flags, its notes in man ibv_reg_mr say which one needs another; see "
		       "docs/lab2.md#step-4)") ||
	    !rl_expect(c, rl_said_int(c, "mr_is_buf") && rl_said_int(c, "mr_length") == in->len,
		       "expected the MR to cover the %u bytes given, got %lld bytes at 0x%llx",
		       in->len, rl_said_int(c, "mr_length"),
		       (unsigned long long)rl_said_int(c, "mr_addr")))
		return false;
	if (fx_act_res(c, "qp", qp, 2) == 1)
		pdn = rl_res_get(&qp[0], "pdn");
	n = fx_act_res(c, "mr", mr, 8);
	for (i = 0; i < n && i < 8; i++) {
		len = rl_res_get(&mr[i], "mrlen");
		mr_pdn = rl_res_get(&mr[i], "pdn");
		if (len && used < sizeof(lens))
			used += (size_t)snprintf(lens + used, sizeof(lens) - used, "%s%s",
						 used ? ", " : "", len);
		if (len && strtoul(len, NULL, 10) == in->len && pdn && mr_pdn &&
		    strcmp(pdn, mr_pdn) == 0)
			found = true;
	}
	return rl_expect(c, found,
			 "expected the kernel to list an MR of %u bytes in the PD of the test's QP "
			 "(pdn %s); the test's process holds MRs of %s bytes",
			 in->len, pdn ? pdn : "unknown", n > 0 ? lens : "no");
}

static void peer_wrote_into_it(struct rl_case *c)
{
	const struct rdma_in *in = c->in;
	const struct fx_report *r;
	size_t n;
	const char *seen;

	mr_covers_the_buffer(c);
	r = fx_peer_end(c, FX_DONE);
	if (rl_failed(c) ||
	    !rl_expect(c, r->write_status == IBV_WC_SUCCESS,
		       "expected the peer's RDMA WRITE with rkey 0x%llx to succeed, "
		       "got \"%s\" (does the MR grant what a remote WRITE needs? see "
		       "docs/lab2.md#step-4)",
		       (unsigned long long)rl_said_int(c, "rkey"),
		       ibv_wc_status_str((enum ibv_wc_status)r->write_status)))
		return;
	seen = rl_said_bytes(c, "written", &n);
	rl_expect(c, rl_said_int(c, "done") && n == FX_TEXT_SIZE && strcmp(seen, r->secret) == 0,
		  "expected \"%s\" written at offset %u, got \"%.*s\"", r->secret, in->at, (int)n,
		  seen);
}

RL_GRADED(remote_mr_lets_the_peer_rdma_write_into_it, .step = 4, .points = 1,
	  .setup = peer_that_writes, .act = registers_for_a_write, .check = peer_wrote_into_it);

static void peer_read_it(struct rl_case *c)
{
	const struct rdma_in *in = c->in;
	const struct fx_report *r;

	mr_covers_the_buffer(c);
	r = fx_peer_end(c, FX_DONE);
	if (rl_failed(c) || !rl_expect(c, r->read_status == IBV_WC_SUCCESS,
				       "expected the peer's RDMA READ with rkey 0x%llx to succeed, "
				       "got \"%s\" (does the MR grant what a remote READ needs? "
				       "see docs/lab2.md#step-4)",
				       (unsigned long long)rl_said_int(c, "rkey"),
				       ibv_wc_status_str((enum ibv_wc_status)r->read_status)))
		return;
	if (rl_expect(c, strcmp(r->text, in->text) == 0,
		      "expected \"%s\" read at offset %u, got \"%s\"", in->text, in->at, r->text))
		rl_expect(c, r->atomic_status == IBV_WC_REM_ACCESS_ERR,
			  "expected the peer's atomic fetch-and-add on the MR to fail with \"%s\", "
			  "got \"%s\": the client never adds atomically, and an MR grants what "
			  "the peer does to it, no more (see docs/lab2.md#step-4)",
			  ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR),
			  ibv_wc_status_str((enum ibv_wc_status)r->atomic_status));
}

RL_GRADED(remote_mr_lets_the_peer_rdma_read_it_and_refuses_an_atomic, .step = 4, .points = 1,
	  .setup = peer_that_reads, .act = registers_for_a_read, .check = peer_read_it);

/* The handout's keys (an lkey sent as the rkey shows as 0x1111), then random ones. */
static void two_mrs(struct rl_case *c)
{
	struct rdma_in *in = c->in;

	random_bytes(in->mr, sizeof(in->mr));
	in->mr[0].length = 256;
	in->mr[0].lkey = 0x1111;
	in->mr[0].rkey = 0x2222;
	in->mr[1].length = 1 + in->mr[1].length % (1u << 30);
	if (in->mr[1].rkey == in->mr[1].lkey)
		in->mr[1].rkey ^= 1;
}

static void describes_them(struct rl_case *c)
{
	const struct rdma_in *in = c->in;
	struct lab2_mr_msg m;
	struct ibv_mr mr;
	char name[16];
	int i;

	for (i = 0; i < 2; i++) {
		mr = (struct ibv_mr){ .addr = (void *)(uintptr_t)in->mr[i].addr,
				      .length = in->mr[i].length,
				      .lkey = in->mr[i].lkey,
				      .rkey = in->mr[i].rkey };
		memset(&m, 0, sizeof(m));
		lab2_describe_mr(&mr, &m);
		snprintf(name, sizeof(name), "rkey%d", i);
		rl_say_int(name, m.rkey);
		snprintf(name, sizeof(name), "addr%d", i);
		rl_say_int(name, (long long)m.addr);
		snprintf(name, sizeof(name), "len%d", i);
		rl_say_int(name, m.len);
	}
}

static void gave_the_rkey(struct rl_case *c)
{
	const struct rdma_in *in = c->in;
	const struct fake_mr *want;
	uint32_t rkey, len;
	uint64_t addr;
	char name[16];
	int i;

	for (i = 0; i < 2 && !rl_failed(c); i++) {
		want = &in->mr[i];
		snprintf(name, sizeof(name), "rkey%d", i);
		rkey = (uint32_t)rl_said_int(c, name);
		snprintf(name, sizeof(name), "addr%d", i);
		addr = (uint64_t)rl_said_int(c, name);
		snprintf(name, sizeof(name), "len%d", i);
		len = (uint32_t)rl_said_int(c, name);
		if (rl_expect(c, rkey == want->rkey, "expected rkey 0x%x, got 0x%x%s", want->rkey,
			      rkey,
			      rkey == want->lkey ? ", the MR's lkey: which key names our memory "
						   "for the peer? see docs/lab2.md#step-4" :
						   ""))
			rl_expect(c, addr == want->addr && len == want->length,
				  "expected address 0x%llx and length %u, got 0x%llx and %u",
				  (unsigned long long)want->addr, want->length,
				  (unsigned long long)addr, len);
	}
}

RL_GRADED(describe_mr_gives_the_rkey_not_the_lkey, .step = 4, .points = 2, .setup = two_mrs,
	  .act = describes_them, .check = gave_the_rkey);

/* V's N bytes, most significant first, at P. */
static void put_be(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t get_be(const uint8_t *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void random_mr_msg(struct rl_case *c)
{
	struct rdma_in *in = c->in;

	random_bytes(&in->m, sizeof(in->m));
}

static void encodes_it(struct rl_case *c)
{
	const struct rdma_in *in = c->in;
	uint8_t buf[64];

	memset(buf, 0xee, sizeof(buf));
	rl_say_int("ret", lab2_encode_mr(&in->m, buf, sizeof(buf)));
	rl_say_bytes("bytes", buf, sizeof(buf));
	rl_say_int("short", lab2_encode_mr(&in->m, buf, LAB2_MR_WIRE_LEN - 1));
}

static void big_endian_at_each_offset(struct rl_case *c)
{
	const struct rdma_in *in = c->in;
	uint8_t want[LAB2_MR_WIRE_LEN];
	long long ret = rl_said_int(c, "ret");
	const uint8_t *got;
	size_t n;
	int i;

	put_be(want, LAB2_MSG_MR, 4);
	put_be(want + 4, in->m.addr, 8);
	put_be(want + 12, in->m.rkey, 4);
	put_be(want + 16, in->m.len, 4);
	if (!rl_expect(c, ret == LAB2_MR_WIRE_LEN, "expected lab2_encode_mr to return %d, got %lld",
		       LAB2_MR_WIRE_LEN, ret))
		return;
	got = rl_said_bytes(c, "bytes", &n);
	for (i = 0; i < LAB2_MR_WIRE_LEN && (size_t)i < n; i++)
		if (!rl_expect(c, got[i] == want[i],
			       "byte %d: expected 0x%02x, got 0x%02x (each field big-endian at its "
			       "offset: see docs/lab2.md#step-4)",
			       i, want[i], got[i]))
			return;
	ret = rl_said_int(c, "short");
	rl_expect(c, ret == -EMSGSIZE, "expected -EMSGSIZE for a 19-byte buffer, got %lld", ret);
}

RL_GRADED(encode_mr_puts_each_field_big_endian_at_its_offset, .step = 4, .points = 2,
	  .setup = random_mr_msg, .act = encodes_it, .check = big_endian_at_each_offset);

/* The handout's example (docs/lab2.md, "Common errors"): addr 0x7f123456789a, rkey 0x1234, len 8192. */
static const uint8_t handout_wire[LAB2_MR_WIRE_LEN] = {
	0, 0, 0, 3, 0, 0, 0x7f, 0x12, 0x34, 0x56, 0x78, 0x9a, 0, 0, 0x12, 0x34, 0, 0, 0x20, 0,
};

static void random_wire(struct rl_case *c)
{
	struct rdma_in *in = c->in;

	random_bytes(in->wire, sizeof(in->wire));
	put_be(in->wire, LAB2_MSG_MR, 4);
}

/* Decode LEN bytes of WIRE (its type replaced by TYPE unless 0): say the result as NAME.*. */
static void decode_and_say(const uint8_t *wire, size_t len, uint32_t type, const char *name)
{
	uint8_t buf[LAB2_MR_WIRE_LEN];
	struct lab2_mr_msg m = { 0 };
	char key[32];

	memcpy(buf, wire, sizeof(buf));
	if (type)
		put_be(buf, type, 4);
	rl_say_int(name, lab2_decode_mr(buf, len, &m));
	snprintf(key, sizeof(key), "%s.addr", name);
	rl_say_int(key, (long long)m.addr);
	snprintf(key, sizeof(key), "%s.rkey", name);
	rl_say_int(key, m.rkey);
	snprintf(key, sizeof(key), "%s.len", name);
	rl_say_int(key, m.len);
}

static void decodes_them(struct rl_case *c)
{
	const struct rdma_in *in = c->in;

	decode_and_say(handout_wire, LAB2_MR_WIRE_LEN, 0, "handout");
	decode_and_say(in->wire, LAB2_MR_WIRE_LEN, 0, "random");
	decode_and_say(in->wire, LAB2_MR_WIRE_LEN - 1, 0, "short");
	decode_and_say(in->wire, LAB2_MR_WIRE_LEN, LAB2_MSG_DONE, "done");
}

/* What the act said decoding NAME gave, against the fields of WIRE. */
static bool decoded_each_field(struct rl_case *c, const char *name, const uint8_t *wire)
{
	long long ret = rl_said_int(c, name);
	char key[32];
	uint64_t addr;
	uint32_t rkey, len;

	snprintf(key, sizeof(key), "%s.addr", name);
	addr = (uint64_t)rl_said_int(c, key);
	snprintf(key, sizeof(key), "%s.rkey", name);
	rkey = (uint32_t)rl_said_int(c, key);
	snprintf(key, sizeof(key), "%s.len", name);
	len = (uint32_t)rl_said_int(c, key);
	return rl_expect(c, ret == 0, "expected lab2_decode_mr to return 0, got %lld", ret) &&
	       rl_expect(c, addr == get_be(wire + 4, 8), "addr: expected 0x%llx, got 0x%llx",
			 (unsigned long long)get_be(wire + 4, 8), (unsigned long long)addr) &&
	       rl_expect(c, rkey == get_be(wire + 12, 4), "rkey: expected 0x%x, got 0x%x",
			 (uint32_t)get_be(wire + 12, 4), rkey) &&
	       rl_expect(c, len == get_be(wire + 16, 4), "len: expected %u, got %u",
			 (uint32_t)get_be(wire + 16, 4), len);
}

static void read_each_field_refused_the_rest(struct rl_case *c)
{
	const struct rdma_in *in = c->in;
	long long ret;

	if (!decoded_each_field(c, "handout", handout_wire) ||
	    !decoded_each_field(c, "random", in->wire))
		return;
	ret = rl_said_int(c, "short");
	if (rl_expect(c, ret == -EMSGSIZE, "expected -EMSGSIZE for 19 bytes, got %lld", ret)) {
		ret = rl_said_int(c, "done");
		rl_expect(c, ret == -EPROTO,
			  "expected -EPROTO for a message of type DONE, got %lld", ret);
	}
}

RL_GRADED(decode_mr_reads_each_field_and_refuses_other_bytes, .step = 4, .points = 1,
	  .setup = random_wire, .act = decodes_them, .check = read_each_field_refused_the_rest);

/* The peer: its secret where the act will read, and what the act wrote, once it says done. */
static void exposes_its_buffer(const void *in, struct fx_report *r)
{
	const struct rdma_in *ri = in;
	struct ref_conn k;

	if (!ref_accept(&k, &ri->o, r) && ref_recv(&k, r) >= 0) {
		r->text_len = FX_TEXT_SIZE;
		memcpy(r->text, k.buf + REF_RDMA + ri->at, FX_TEXT_SIZE);
	}
	ref_end(&k, r);
}

/* A text to write at a random offset of the first half, a secret at one of the second. */
static void peer_with_a_buffer(struct rl_case *c)
{
	struct rdma_in *in = c->in;

	in->at = random_in(0, LAB2_RDMA_SIZE / 2 - FX_TEXT_SIZE);
	rl_test_random_text(in->text, sizeof(in->text));
	in->o = ref_default();
	in->o.secret_at = random_in(LAB2_RDMA_SIZE / 2, LAB2_RDMA_SIZE - FX_TEXT_SIZE);
	fx_peer_start(exposes_its_buffer, in);
	in->port = fx_peer_port();
}

/* Say the next completion of P's CQ as NAME.*. */
static void say_completion(struct fx_pair *p, const char *name)
{
	struct ibv_wc wc = { 0 };
	char key[32];

	snprintf(key, sizeof(key), "%s.completed", name);
	rl_say_int(key, fx_poll(p->c.cq, &wc));
	snprintf(key, sizeof(key), "%s.status", name);
	rl_say_int(key, wc.status);
	snprintf(key, sizeof(key), "%s.opcode", name);
	rl_say_int(key, wc.opcode);
	snprintf(key, sizeof(key), "%s.wr_id", name);
	rl_say_int(key, (long long)wc.wr_id);
}

static void writes_then_reads(struct rl_case *c)
{
	const struct rdma_in *in = c->in;
	struct fx_pair_opts o = { .port = in->port, .peer_rnr_retry = LAB2_RNR_RETRY };
	uint32_t len = (uint32_t)strlen(in->text) + 1;
	char *got;
	struct fx_pair p;

	fx_pair_open(&p, &o);
	got = p.c.rdma_buf + 1024;
	memcpy(p.c.rdma_buf, in->text, len);
	if (fx_say_ret("lab2_post_rdma (WRITE)",
		       lab2_post_rdma(&p.c, IBV_WR_RDMA_WRITE, p.c.rdma_buf, len,
				      p.peer_addr + in->at, p.peer_rkey))) {
		say_completion(&p, "write");
		/* The peer looks at its buffer when told: the WRITE is done. */
		fx_pair_tell(&p, "done", 5);
		if (fx_say_ret("lab2_post_rdma (READ)",
			       lab2_post_rdma(&p.c, IBV_WR_RDMA_READ, got, FX_TEXT_SIZE,
					      p.peer_addr + in->o.secret_at, p.peer_rkey))) {
			say_completion(&p, "read");
			rl_say_bytes("read", got, FX_TEXT_SIZE);
		}
		rl_hold();
	}
	fx_pair_close(&p);
}

/* What the act said of the completion NAME: a success of OPCODE with WR_ID? */
static bool completed(struct rl_case *c, const char *name, const char *what, int opcode, int wr_id)
{
	char key[4][32];
	int status;

	snprintf(key[0], sizeof(key[0]), "%s.completed", name);
	snprintf(key[1], sizeof(key[1]), "%s.status", name);
	snprintf(key[2], sizeof(key[2]), "%s.opcode", name);
	snprintf(key[3], sizeof(key[3]), "%s.wr_id", name);
	status = (int)rl_said_int(c, key[1]);
	return rl_expect(c,
			 rl_said_int(c, key[0]) && status == IBV_WC_SUCCESS &&
				 rl_said_int(c, key[2]) == opcode &&
				 rl_said_int(c, key[3]) == wr_id,
			 "expected a successful %s with wr_id %d, got %s opcode %lld wr_id %llu "
			 "\"%s\" (whose memory and key does each part name? see "
			 "docs/lab2.md#step-4)",
			 what, wr_id, rl_said_int(c, key[0]) ? "one with" : "none within 5 s:",
			 rl_said_int(c, key[2]), (unsigned long long)rl_said_int(c, key[3]),
			 ibv_wc_status_str((enum ibv_wc_status)status));
}

static void both_moved_the_bytes(struct rl_case *c)
{
	const struct rdma_in *in = c->in;
	const struct fx_report *r;
	size_t n;
	const char *got;

	if (fx_ok(c, "lab2_post_rdma (WRITE)", 4))
		completed(c, "write", "RDMA WRITE", IBV_WC_RDMA_WRITE, LAB2_WR_WRITE);
	r = fx_peer_end(c, FX_DONE);
	if (rl_failed(c) ||
	    !rl_expect(c, strcmp(r->text, in->text) == 0,
		       "expected \"%s\" in the peer's buffer at offset %u, got \"%.*s\"", in->text,
		       in->at, FX_TEXT_SIZE, r->text) ||
	    !fx_ok(c, "lab2_post_rdma (READ)", 4) ||
	    !completed(c, "read", "RDMA READ", IBV_WC_RDMA_READ, LAB2_WR_READ))
		return;
	got = rl_said_bytes(c, "read", &n);
	rl_expect(c, n == FX_TEXT_SIZE && strcmp(got, r->secret) == 0,
		  "expected \"%s\" read into our buffer, got \"%.*s\"", r->secret, (int)n, got);
}

RL_GRADED(post_rdma_writes_into_and_reads_from_the_peers_buffer, .step = 4, .points = 2,
	  .setup = peer_with_a_buffer, .act = writes_then_reads, .check = both_moved_the_bytes);
