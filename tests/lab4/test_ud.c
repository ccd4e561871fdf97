/*
 * test_ud.c: Lab 4 step 3: UD QPs, address handles from GIDs, datagrams
 * behind a GRH. The lab's datagrams go to a peer UD QP in a process of the
 * test's own, which reports each one; the lab's QP in RTS is the kernel's
 * to describe, and a datagram the peer sends it with the test's Q_Key must
 * reach it. The ping-pong test runs the lab4 program itself, each side
 * against the peer.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

/* The inputs: the peer, and the seed of the datagrams' bytes (in peer.seed). */
struct ud_in {
	struct fx_peer_in peer;
};

static void ud_to_rts_setup(struct rl_case *c)
{
	struct ud_in *in = c->in;

	/* A Q_Key of this run's: bit 31 clear (set, it means "the QP's own" in a send). */
	in->peer.qkey = fx_between(1, 0x7fffffff);
	in->peer.probe = true;
	fx_peer_start(c, &in->peer, FX_UD);
}

/*
 * The lab's RESET to RTS on the test's UD QP; then the test says the bytes
 * of the first datagram that reaches it, the peer's probe (whatever the
 * lab's code returned: the peer sends it again until the act hangs up, or
 * gives up first, and ends before the check reads it); then the act holds,
 * for the kernel to say the QP's state and type. Nothing of step 3 runs
 * here but the lab's.
 */
static void ud_to_rts(struct rl_case *c)
{
	const struct ud_in *in = c->in;
	struct ibv_context *ctx = fx_open_ctx();
	struct lab4_ud_hello peer;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct ibv_wc wc;
	struct lab4_ud u;
	int64_t deadline;
	int ret, fd, got;

	fx_ud_open(&u, ctx, rl_test_ib_port(), rl_test_gid_index(), FX_UD_RESET);
	ret = lab4_ud_to_rts(u.qp, rl_test_ib_port(), in->peer.qkey);
	rl_say_int("ret", ret);
	rl_say_int("qpn", u.qp->qp_num);
	/* Its Q_Key as the QP reports it: for the message only. */
	if (ibv_query_qp(u.qp, &attr, IBV_QP_QKEY, &init) == 0)
		rl_say_int("qkey", attr.qkey);
	u.qkey = in->peer.qkey;
	fx_ud_post_recvs(&u);
	fd = fx_ud_meet(&u, &in->peer, &peer);
	/* The peer made the probe's bytes at random: only their arrival can tell them. */
	deadline = lab4_now_ms() + FX_TIMEOUT_MS;
	while (!(got = fx_poll_one(u.cq, &wc, 10)) && !fx_hung_up(fd) && lab4_now_ms() < deadline)
		;
	if (got && wc.status == IBV_WC_SUCCESS && wc.byte_len >= LAB4_GRH_LEN)
		rl_say_bytes("probe", fx_ud_slot(&u, (int)wc.wr_id) + LAB4_GRH_LEN,
			     wc.byte_len - LAB4_GRH_LEN);
	close(fd);
	rl_hold();
	fx_ud_close(&u);
	ibv_close_device(ctx);
}

static void ud_to_rts_check(struct rl_case *c)
{
	const struct ud_in *in = c->in;
	long long ret = rl_said_int(c, "ret");
	uint32_t qpn = (uint32_t)rl_said_int(c, "qpn");
	char state[64], type[64], port[64], qkey[64] = "";
	const void *probe = NULL;
	struct fx_report rep;
	uint8_t got[32];
	size_t len = 0;

	if (!fx_peer_report(c, 0, &rep) ||
	    !rl_expect(c, ret == 0, "expected lab4_ud_to_rts to return 0, got %lld (%s)%s", ret,
		       strerror((int)-ret),
		       ret == -EINVAL ? ": a transition's mask has an attribute a UD QP does not "
					"take, or lacks one it needs (see docs/lab4.md#step-3)" :
					""))
		return;
	fx_res_qp(c, qpn, "state", state, sizeof(state));
	fx_res_qp(c, qpn, "type", type, sizeof(type));
	fx_res_qp(c, qpn, "port", port, sizeof(port));
	if (!rl_expect(c,
		       strcmp(state, "RTS") == 0 && strcmp(type, "UD") == 0 &&
			       atoi(port) == rl_test_ib_port(),
		       "expected the kernel to show a UD QP in RTS on port %u, got a %s QP in %s "
		       "on port %s",
		       rl_test_ib_port(), type[0] ? type : "no", state[0] ? state : "no state",
		       port[0] ? port : "none"))
		return;
	if (rl_said(c, "qkey"))
		snprintf(qkey, sizeof(qkey), " (ibv_query_qp says its Q_Key is 0x%llx)",
			 rl_said_int(c, "qkey"));
	if (rl_said(c, "probe")) {
		probe = rl_said_bytes(c, "probe", &len);
		EVP_Digest(probe, len, got, NULL, EVP_sha256(), NULL);
	}
	rl_expect(c, probe && memcmp(got, rep.probe_sha256, 32) == 0,
		  "expected a datagram sent to the QP with Q_Key 0x%x to reach it, got %s%s: "
		  "see docs/lab4.md#step-3",
		  in->peer.qkey, probe ? "another datagram" : "nothing", qkey);
}

RL_GRADED(ud_to_rts_leaves_the_qp_in_rts_with_the_qkey, .step = 3, .points = 2,
	  .setup = ud_to_rts_setup, .act = ud_to_rts, .check = ud_to_rts_check);

static void datagrams_setup(struct rl_case *c)
{
	struct ud_in *in = c->in;

	in->peer.seed = fx_random();
	fx_peer_start(c, &in->peer, FX_UD);
}

/*
 * Datagram number I of LEN bytes with the lab's send (through AH), and the
 * send's completion: says ret<I> and status<I>.
 */
static void send_datagram(struct lab4_ud *u, const struct lab4_ud_peer *peer,
			  const struct ud_in *in, int i, uint32_t len)
{
	uint8_t *msg = malloc(len + 1);
	struct ibv_wc wc;
	char name[16];
	int ret;

	ck_assert_ptr_nonnull(msg);
	fx_fill(msg, len, in->peer.seed + (uint32_t)i);
	ret = lab4_ud_send(u, peer, msg, len, 77);
	snprintf(name, sizeof(name), "ret%d", i);
	rl_say_int(name, ret);
	snprintf(name, sizeof(name), "status%d", i);
	/* A send is the device's until its completion: wait for it (-1: none came). */
	rl_say_int(name, ret == 0 && fx_poll_one(u->send_cq, &wc, FX_TIMEOUT_MS) ?
				 (long long)wc.status :
				 -1);
	free(msg);
}

/* The lab's AH to the peer, then an MTU-sized datagram and a 1-byte one with the lab's send. */
static void mtu_and_one_byte(struct rl_case *c)
{
	const struct ud_in *in = c->in;
	struct ibv_context *ctx = fx_open_ctx();
	struct lab4_ud_hello hello;
	struct lab4_ud_peer peer;
	struct lab4_ud a;
	int fd;

	fx_ud_open(&a, ctx, rl_test_ib_port(), rl_test_gid_index(), FX_UD_RTS);
	fd = fx_ud_meet(&a, &in->peer, &hello);
	peer = (struct lab4_ud_peer){ .qpn = hello.qpn, .qkey = hello.qkey, .gid = hello.gid };
	rl_say_int("mtu", a.mtu);
	peer.ah = lab4_ud_make_ah(a.pd, a.port, a.gid_index, &hello.gid);
	rl_say_int("ah", peer.ah != NULL);
	if (peer.ah) {
		send_datagram(&a, &peer, in, 0, a.mtu);
		send_datagram(&a, &peer, in, 1, 1);
		ibv_destroy_ah(peer.ah);
	}
	close(fd);
	fx_ud_close(&a);
	ibv_close_device(ctx);
}

/* Datagram I as the peer saw it: LEN bytes of the seed's after the GRH. */
static bool peer_got(struct rl_case *c, const struct fx_seen *s, int i, uint32_t len)
{
	const struct ud_in *in = c->in;
	uint8_t *msg = malloc(len + 1), want[32];

	ck_assert_ptr_nonnull(msg);
	fx_fill(msg, len, in->peer.seed + (uint32_t)i);
	EVP_Digest(msg, len, want, NULL, EVP_sha256(), NULL);
	free(msg);
	if (!rl_expect(c, s->status == IBV_WC_SUCCESS && s->byte_len == LAB4_GRH_LEN + len,
		       "expected byte_len %u (40 GRH + %u), got %u (%s)", LAB4_GRH_LEN + len, len,
		       s->byte_len, ibv_wc_status_str(s->status)))
		return false;
	return rl_expect(c, memcmp(s->sha256, want, 32) == 0,
			 "expected the %u bytes sent after the GRH, they differ", len);
}

/* The lab's send returned 0 for datagram I (of LEN bytes), and it left. */
static bool sent(struct rl_case *c, int i, uint32_t len)
{
	char name[16];
	long long ret, status;

	snprintf(name, sizeof(name), "ret%d", i);
	ret = rl_said_int(c, name);
	snprintf(name, sizeof(name), "status%d", i);
	status = rl_said_int(c, name);
	if (!rl_expect(c, ret == 0, "%u bytes: expected lab4_ud_send to return 0, got %lld (%s)",
		       len, ret, strerror((int)-ret)))
		return false;
	return rl_expect(c, status == IBV_WC_SUCCESS,
			 "%u bytes: expected the send's good completion within %d ms, got %s", len,
			 FX_TIMEOUT_MS,
			 status < 0 ? "none" : ibv_wc_status_str((enum ibv_wc_status)status));
}

static void mtu_and_one_byte_check(struct rl_case *c)
{
	struct fx_report rep;

	if (!fx_peer_report(c, 0, &rep) ||
	    !rl_expect(c, rl_said_int(c, "ah") != 0,
		       "expected lab4_ud_make_ah to return an AH, got NULL: what an AH must "
		       "carry on RoCE, see docs/lab4.md#step-3") ||
	    !sent(c, 0, (uint32_t)rl_said_int(c, "mtu")) || !sent(c, 1, 1))
		return;
	if (!rl_expect(c, rl_said_int(c, "mtu") == rep.mtu,
		       "fixture: the act's MTU %lld is not the peer's, %u", rl_said_int(c, "mtu"),
		       rep.mtu) ||
	    !rl_expect(c, rep.nseen == 2,
		       "expected the 2 datagrams to arrive at the peer QP within %d ms, got %u: "
		       "UD drops a datagram whose QPN, Q_Key or address is wrong without a "
		       "word (see docs/lab4.md#step-3)",
		       FX_TIMEOUT_MS, rep.nseen))
		return;
	if (peer_got(c, &rep.seen[0], 0, rep.mtu))
		peer_got(c, &rep.seen[1], 1, 1);
}

RL_GRADED(ud_ah_and_send_deliver_an_mtu_sized_datagram_to_the_peer, .step = 3, .points = 3,
	  .setup = datagrams_setup, .act = mtu_and_one_byte, .check = mtu_and_one_byte_check);

/*
 * MTU + 1 bytes with the lab's send (through the test's own AH), then the
 * MTU exactly: the first refused before it is posted, the second delivered.
 */
static void mtu_plus_one(struct rl_case *c)
{
	const struct ud_in *in = c->in;
	struct ibv_context *ctx = fx_open_ctx();
	struct lab4_ud_hello hello;
	struct ibv_ah_attr ah_attr;
	struct lab4_ud_peer peer;
	struct ibv_wc wc;
	struct lab4_ud a;
	uint8_t *msg;
	int fd, ret;

	fx_ud_open(&a, ctx, rl_test_ib_port(), rl_test_gid_index(), FX_UD_RTS);
	fd = fx_ud_meet(&a, &in->peer, &hello);
	peer = (struct lab4_ud_peer){ .qpn = hello.qpn, .qkey = hello.qkey, .gid = hello.gid };
	/* With plain verbs: fx_ud_ah(), step 3b's work, is hidden in step 3's acts. */
	ah_attr = (struct ibv_ah_attr){
		.is_global = 1,
		.grh = { .dgid = hello.gid, .sgid_index = (uint8_t)a.gid_index, .hop_limit = 1 },
		.port_num = a.port,
	};
	peer.ah = ibv_create_ah(a.pd, &ah_attr);
	ck_assert_msg(peer.ah, "fixture: an AH to the test's peer: %s", strerror(errno));
	rl_say_int("mtu", a.mtu);
	msg = malloc(a.mtu + 2);
	ck_assert_ptr_nonnull(msg);
	fx_fill(msg, a.mtu + 1, in->peer.seed + 2);
	ret = lab4_ud_send(&a, &peer, msg, a.mtu + 1, 77);
	rl_say_int("ret2", ret);
	usleep(200000);
	rl_say_int("posted", fx_poll_one(a.send_cq, &wc, 0));
	send_datagram(&a, &peer, in, 0, a.mtu);
	ibv_destroy_ah(peer.ah);
	free(msg);
	close(fd);
	fx_ud_close(&a);
	ibv_close_device(ctx);
}

static void mtu_plus_one_check(struct rl_case *c)
{
	long long mtu = rl_said_int(c, "mtu"), ret = rl_said_int(c, "ret2");
	struct fx_report rep;

	if (!fx_peer_report(c, 0, &rep) ||
	    !rl_expect(c, ret == -EMSGSIZE,
		       "MTU %lld + 1 bytes: expected -EMSGSIZE, got %lld (%s): UD does not "
		       "segment, and the device drops what is longer (see docs/lab4.md#step-3)",
		       mtu, ret, strerror((int)-ret)) ||
	    !rl_expect(c, rl_said_int(c, "posted") == 0,
		       "expected nothing posted, got a completion") ||
	    !sent(c, 0, (uint32_t)mtu))
		return;
	if (rl_expect(c, rep.nseen == 1,
		      "expected the peer to get the datagram of exactly the MTU (%lld bytes) and no "
		      "other, got %u datagrams",
		      mtu, rep.nseen))
		peer_got(c, &rep.seen[0], 0, (uint32_t)mtu);
}

RL_GRADED(ud_send_refuses_a_datagram_longer_than_the_mtu, .step = 3, .points = 1,
	  .setup = datagrams_setup, .act = mtu_plus_one, .check = mtu_plus_one_check);

/* The inputs: a byte_len with a payload, and one shorter than a GRH. */
struct payload_in {
	uint32_t byte_len, short_len;
};

static void payload_setup(struct rl_case *c)
{
	struct payload_in *in = c->in;

	in->byte_len = fx_between(LAB4_GRH_LEN + 1, LAB4_GRH_LEN + 4096);
	in->short_len = fx_between(0, LAB4_GRH_LEN - 1);
}

static void payload(struct rl_case *c)
{
	const struct payload_in *in = c->in;
	uint8_t *slot = calloc(1, in->byte_len);
	const uint8_t *p = NULL;
	uint32_t len = 0;
	int ret;

	ck_assert_ptr_nonnull(slot);
	ret = lab4_ud_payload(slot, in->byte_len, &p, &len);
	rl_say_int("ret", ret);
	rl_say_int("offset", p ? p - slot : -1);
	rl_say_int("len", len);
	rl_say_int("short", lab4_ud_payload(slot, in->short_len, &p, &len));
	free(slot);
}

static void payload_check(struct rl_case *c)
{
	const struct payload_in *in = c->in;
	long long ret = rl_said_int(c, "ret"), off = rl_said_int(c, "offset"),
		  len = rl_said_int(c, "len"), shorter = rl_said_int(c, "short");

	if (rl_expect(c, ret == 0 && off == LAB4_GRH_LEN && len == in->byte_len - LAB4_GRH_LEN,
		      "byte_len %u: expected the payload at +40, %u bytes; got %lld, +%lld, %lld",
		      in->byte_len, in->byte_len - LAB4_GRH_LEN, ret, off, len))
		rl_expect(c, shorter == -EPROTO, "byte_len %u: expected -EPROTO, got %lld",
			  in->short_len, shorter);
}

RL_GRADED(ud_payload_starts_after_the_40_byte_grh, .step = 3, .points = 1, .setup = payload_setup,
	  .act = payload, .check = payload_check);

/*
 * Datagram number SEQ of SIZE bytes as ud-ping makes it (lab4_ud_fill() in
 * main.c): the number, big-endian, then a pattern; its SHA-256.
 */
static void ping_sha256(uint32_t seq, uint32_t size, uint8_t sha256[32])
{
	uint8_t *msg = malloc(size + 1);
	uint32_t j, be = htobe32(seq);

	ck_assert_ptr_nonnull(msg);
	memcpy(msg, &be, 4);
	for (j = 4; j < size; j++)
		msg[j] = (uint8_t)(seq * 31 + j);
	EVP_Digest(msg, size, sha256, NULL, EVP_sha256(), NULL);
	free(msg);
}

/* How many of ud-ping's COUNT datagrams of SIZE bytes the echo peer got whole (REP). */
static uint32_t pings_seen(const struct fx_report *rep, uint32_t count, uint32_t size)
{
	uint32_t seq, i, n = rep->nseen < FX_MAX_SEEN ? rep->nseen : FX_MAX_SEEN, found = 0;
	uint8_t want[32];
	bool got;

	for (seq = 0; seq < count; seq++) {
		ping_sha256(seq, size, want);
		for (i = 0, got = false; i < n && !got; i++)
			got = rep->seen[i].status == IBV_WC_SUCCESS &&
			      rep->seen[i].byte_len == LAB4_GRH_LEN + size &&
			      memcmp(rep->seen[i].sha256, want, 32) == 0;
		found += got;
	}
	return found;
}

/*
 * ud-ping against the test's peer, which echoes every datagram back: the
 * peer got every numbered datagram whole and echoed it, and ping says it
 * got each echo back (it sends the next one only then).
 */
static bool ping_against_peer(struct rl_case *c, uint32_t count, uint32_t size)
{
	struct fx_peer_in in = { .echo = true };
	char port[16], n[16], bytes[16], want[96];
	const char *args[] = { "ud-ping", "-p",        port, "--count",   n,   "--size",
			       bytes,     "--timeout", "20", "127.0.0.1", NULL };
	struct fx_report rep;
	struct fx_run ping;
	struct fx_proc p;
	const char *line;
	uint32_t got;
	int peer;

	peer = fx_peer_start(c, &in, FX_UD);
	snprintf(port, sizeof(port), "%u", in.port);
	snprintf(n, sizeof(n), "%u", count);
	snprintf(bytes, sizeof(bytes), "%u", size);
	fx_spawn(args, &p);
	fx_reap(&p, 60000, &ping);
	if (!fx_peer_report_of(c, peer, &rep, "ud-ping", &ping))
		return false;
	got = pings_seen(&rep, count, size);
	if (!rl_expect(c, got == count && rep.echoes >= count,
		       "expected the test's peer to get ud-ping's %u datagrams of %u bytes and echo "
		       "them, it got %u of them whole (%u datagrams, %u echoed); ud-ping exited "
		       "%d:\n%s%s",
		       count, size, got, rep.nseen, rep.echoes, ping.status, ping.out, ping.err))
		return false;
	snprintf(want, sizeof(want), "lab4: ud-ping: %u datagrams of %u bytes echoed", count, size);
	line = fx_last_line(ping.out, "lab4: ud-ping: ");
	return rl_expect(c, ping.status == 0 && line && strncmp(line, want, strlen(want)) == 0,
			 "expected ud-ping to exit 0 with \"%u datagrams of %u bytes echoed\", got "
			 "%d:\n%s%s",
			 count, size, ping.status, ping.out, ping.err);
}

/*
 * ud-pong against the test's peer, which pings it as ud-ping would, with
 * datagrams of fresh random bytes: every one came back whole, and pong
 * says it echoed them all.
 */
static bool pong_against_peer(struct rl_case *c, uint32_t count, uint32_t size)
{
	struct fx_peer_in in = { .pings = count, .ping_len = size };
	char port[16], want[96];
	const char *args[] = { "ud-pong", "-p", port, "--timeout", "20", "127.0.0.1", NULL };
	struct fx_report rep;
	struct fx_run pong;
	struct fx_proc p;
	const char *line;
	int peer;

	in.connect = rl_test_free_port();
	snprintf(port, sizeof(port), "%u", in.connect);
	fx_spawn(args, &p);
	peer = fx_peer_start(c, &in, FX_UD);
	fx_reap(&p, 60000, &pong);
	if (!fx_peer_report_of(c, peer, &rep, "ud-pong", &pong) ||
	    !rl_expect(c, rep.echoes == count,
		       "expected ud-pong to echo the test's %u datagrams of %u bytes, %u came back "
		       "whole; ud-pong exited %d:\n%s%s",
		       count, size, rep.echoes, pong.status, pong.out, pong.err))
		return false;
	snprintf(want, sizeof(want), "lab4: ud-pong: echoed %u datagrams of %u bytes", count, size);
	line = fx_last_line(pong.out, "lab4: ud-pong: ");
	return rl_expect(
		c, pong.status == 0 && line && strncmp(line, want, strlen(want)) == 0,
		"expected ud-pong to exit 0 having echoed %u datagrams of %u bytes, got %d:\n%s%s",
		count, size, pong.status, pong.out, pong.err);
}

/*
 * The whole program: ud-ping and ud-pong, run by the check (the lab's code
 * runs in them, locked down by their main.c), each against a UD QP of the
 * test's own that reports what it saw: a random count of datagrams of a
 * random size, each echoed.
 */
static void ping_pong_check(struct rl_case *c)
{
	uint32_t count = fx_between(10, 30), size = fx_between(4, fx_port_mtu());

	if (ping_against_peer(c, count, size))
		pong_against_peer(c, count, size);
}

RL_GRADED(ud_ping_and_pong_echo_every_datagram, .step = 3, .points = 2, .check = ping_pong_check);
