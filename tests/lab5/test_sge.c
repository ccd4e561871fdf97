/*
 * test_sge.c: Lab 5 step 2: gather and scatter. The act's endpoint is the
 * kit's step 1, connected to the test's reference peer (ud_peer.c). The
 * lab's sends go to the peer, which reports the bytes of each datagram it
 * took; the peer's own datagrams, of random bytes only it knows until it
 * reports them, come to the lab's receives, whose buffers the act shows
 * whole, canaries included.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "ud_fixture.h"

#define MAX_DGRAMS 8

/* --- gather --------------------------------------------------------------- */

/* The inputs: the peer's port, and the datagrams the act sends. */
struct gather_in {
	uint16_t port;
	uint32_t n, seed, seq, slot;
	uint32_t len[MAX_DGRAMS];
};

static void gather_setup(struct rl_case *c)
{
	struct gather_in *in = c->in;
	struct ud_peer_in peer;
	uint32_t i;

	in->n = ud_between(3, MAX_DGRAMS);
	in->seed = ud_random();
	in->seq = ud_random();
	in->slot = ud_between(0, LAB5_SLOTS - 1);
	/* The longest the path takes, an empty one, the rest at random. */
	in->len[0] = ud_port_mtu() - LAB5_HDR_LEN;
	in->len[1] = 0;
	for (i = 2; i < in->n; i++)
		in->len[i] = ud_between(1, 1000);
	peer = (struct ud_peer_in){ .take = in->n };
	in->port = ud_peer_start(&peer);
}

/*
 * The lab's gathering send, N times; the last one's payload lies in receive
 * slot SLOT's payload buffer (an echo without a copy), the others in the
 * send payload buffer.
 */
static void gather_act(struct rl_case *c)
{
	const struct gather_in *in = c->in;
	struct lab5_ud u;
	struct ibv_wc wc;
	char name[32];
	uint32_t i;
	uint8_t *p;
	int ret;

	ud_fx_connect(&u, in->port);
	for (i = 0; i < in->n; i++) {
		struct lab5_hdr h = { .kind = LAB5_MSG_DATA,
				      .seq = in->seq + i,
				      .len = in->len[i] };

		p = i == in->n - 1 ? u.rx_payload + in->slot * LAB5_MAX_PAYLOAD : u.tx_payload;
		ud_fill(p, in->len[i], in->seed + i);
		ret = lab5_post_send_gather(&u, &h, p);
		snprintf(name, sizeof(name), "ret%u", i);
		rl_say_int(name, ret);
		snprintf(name, sizeof(name), "status%u", i);
		rl_say_int(name, ret == 0 && ud_fx_poll(&u, &wc) ? (long long)wc.status : -1);
		if (ret)
			break;
	}
	lab5_ud_close(&u);
}

/* The datagram the peer saw, S, is the act's number I: its header, then its payload. */
static bool gathered(struct rl_case *c, const struct ud_seen *s, uint32_t i)
{
	const struct gather_in *in = c->in;
	uint32_t len = in->len[i], seq = in->seq + i;
	uint8_t *want = malloc(len + 1), sha[32];

	ck_assert_ptr_nonnull(want);
	ud_fill(want, len, in->seed + i);
	ud_sha256(want, len, sha);
	free(want);
	if (!rl_expect(c,
		       s->status == IBV_WC_SUCCESS &&
			       s->byte_len == LAB5_GRH_LEN + LAB5_HDR_LEN + len,
		       "datagram %u: expected %u bytes after the GRH (the %u-byte header and %u "
		       "payload bytes), the peer got %d: the SGEs' lengths (see "
		       "docs/lab5.md#step-2)",
		       i, LAB5_HDR_LEN + len, LAB5_HDR_LEN, len, (int)s->byte_len - LAB5_GRH_LEN))
		return false;
	if (!rl_expect(
		    c, s->hdr.kind == LAB5_MSG_DATA && s->hdr.seq == seq && s->hdr.len == len,
		    "datagram %u: expected the header first, as lab5_hdr_encode() puts it on the "
		    "wire: kind %u, seq %u, len %u; the peer decoded kind %u, seq %u, len %u%s "
		    "(see docs/lab5.md#step-2)",
		    i, LAB5_MSG_DATA, seq, len, s->hdr.kind, s->hdr.seq, s->hdr.len,
		    s->hdr.kind == htonl(LAB5_MSG_DATA) ?
			    ": byte-swapped, the struct as it lies in memory, not the codec's form" :
			    ""))
		return false;
	return rl_expect(c, memcmp(s->sha256, sha, 32) == 0,
			 "datagram %u: expected the %u payload bytes at PAYLOAD (%s) after the "
			 "header, the peer got other bytes (see docs/lab5.md#step-2)",
			 i, len,
			 i == in->n - 1 ? "a receive slot's payload buffer" : "u->tx_payload");
}

static void gather_judge(struct rl_case *c)
{
	const struct gather_in *in = c->in;
	const struct ud_report *rep;
	char name[32];
	long long ret, status;
	uint32_t i;

	for (i = 0; i < in->n; i++) {
		snprintf(name, sizeof(name), "ret%u", i);
		ret = rl_said_int(c, name);
		snprintf(name, sizeof(name), "status%u", i);
		status = rl_said(c, name) ? rl_said_int(c, name) : -1;
		if (!rl_expect(c, ret == 0,
			       "datagram %u (%u payload bytes): expected lab5_post_send_gather to "
			       "return 0, got %lld (%s): see docs/lab5.md#step-2",
			       i, in->len[i], ret, strerror((int)-ret)) ||
		    !rl_expect(c, status == IBV_WC_SUCCESS,
			       "datagram %u: expected its send to complete well, got %s (is it "
			       "signaled? see docs/lab5.md#step-2)",
			       i,
			       status < 0 ? "no completion" :
					    ibv_wc_status_str((enum ibv_wc_status)status)))
			return;
	}
	rep = ud_peer_end(c);
	if (!rep ||
	    !rl_expect(c, rep->nseen == in->n,
		       "expected the peer to get the %u datagrams, it got %u", in->n, rep->nseen))
		return;
	for (i = 0; i < in->n; i++)
		if (!gathered(c, &rep->seen[i], i))
			return;
}

static void gather_check(struct rl_case *c)
{
	gather_judge(c);
	ud_peer_stop();
}

RL_GRADED(send_gathers_the_encoded_header_and_the_payload_into_one_datagram, .step = 2, .points = 4,
	  .setup = gather_setup, .act = gather_act, .check = gather_check);

/* --- scatter --------------------------------------------------------------- */

struct scatter_in {
	uint16_t port;
	uint32_t n;
};

static void scatter_setup(struct rl_case *c)
{
	struct scatter_in *in = c->in;
	struct ud_peer_in peer;

	in->n = ud_between(3, MAX_DGRAMS);
	peer = (struct ud_peer_in){ .send = in->n };
	in->port = ud_peer_start(&peer);
}

/*
 * Canaries in every receive buffer, the lab's receive of every slot, the
 * hello; then the test takes the N completions of the peer's datagrams and
 * shows the receive buffers whole.
 */
static void scatter_act(struct rl_case *c)
{
	const struct scatter_in *in = c->in;
	struct lab5_ud u;
	struct ibv_wc wc;
	char name[32];
	uint32_t got = 0;
	int slot, ret = 0;

	ud_fx_connect(&u, in->port);
	ud_fx_canary(&u);
	for (slot = 0; slot < LAB5_SLOTS && !ret; slot++)
		ret = lab5_post_recv_scatter(&u, slot);
	rl_say_int("post", ret);
	if (ret == 0) {
		ud_fx_hello(&u, false);
		/* The peer sends them back to back: once one came, the next is not far. */
		while (got < in->n &&
		       ud_fx_poll_ms(&u, &wc, got ? UD_TIMEOUT_MS / 2 : UD_TIMEOUT_MS)) {
			if (wc.opcode == IBV_WC_SEND)
				continue; /* the hello's */
			snprintf(name, sizeof(name), "status%u", got);
			rl_say_int(name, wc.status);
			snprintf(name, sizeof(name), "byte_len%u", got);
			rl_say_int(name, wc.byte_len);
			snprintf(name, sizeof(name), "slot%u", got);
			rl_say_int(name, (long long)wc.wr_id);
			got++;
			if (wc.status != IBV_WC_SUCCESS)
				break; /* a UD QP whose receive failed takes no more */
		}
	}
	rl_say_int("got", got);
	rl_say_bytes("grh", u.rx_grh, LAB5_SLOTS * LAB5_GRH_LEN);
	rl_say_bytes("hdr", u.rx_hdr, LAB5_SLOTS * LAB5_HDR_LEN);
	rl_say_bytes("payload", u.rx_payload, (size_t)LAB5_SLOTS * LAB5_MAX_PAYLOAD);
	lab5_ud_close(&u);
}

/* Whether the N bytes at P all hold the canary. */
static bool untouched(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != UD_CANARY)
			return false;
	return true;
}

/* Receive completion I took the peer's datagram I, SENT: where each of its parts landed. */
static bool scattered(struct rl_case *c, const struct ud_report *rep, uint32_t i,
		      const uint8_t *grh, const uint8_t *hdr, const uint8_t *payload)
{
	char name[32];
	uint32_t len = rep->sent[i].len;
	long long slot, status, byte_len;
	uint8_t want_hdr[LAB5_HDR_LEN], sha[32];
	struct in_addr src;

	snprintf(name, sizeof(name), "status%u", i);
	status = rl_said_int(c, name);
	snprintf(name, sizeof(name), "byte_len%u", i);
	byte_len = rl_said_int(c, name);
	snprintf(name, sizeof(name), "slot%u", i);
	slot = rl_said_int(c, name);
	if (!rl_expect(
		    c, status == IBV_WC_SUCCESS,
		    "datagram %u (40 GRH + 12 header + %u payload bytes): expected a good "
		    "receive completion, got %s: a receive's SGEs must hold the GRH, which comes "
		    "first whatever the sender sent, the header and the payload, each as long as "
		    "it is (see docs/lab5.md#step-2)",
		    i, len, ibv_wc_status_str((enum ibv_wc_status)status)) ||
	    !rl_expect(c, slot >= 0 && slot < LAB5_SLOTS,
		       "datagram %u: expected the receive's wr_id to be its slot, got %lld (see "
		       "docs/lab5.md#step-2)",
		       i, slot))
		return false;
	grh += slot * LAB5_GRH_LEN;
	hdr += slot * LAB5_HDR_LEN;
	payload += slot * LAB5_MAX_PAYLOAD;
	lab5_hdr_encode(&rep->sent[i], want_hdr);
	ck_assert_int_eq(inet_pton(AF_INET, rl_test_addr(), &src), 1);
	/* RoCE v2 over IPv4: 20 bytes of nothing, then the IPv4 header (source at +12). */
	if (!rl_expect(c, grh[20] == 0x45 && memcmp(grh + 32, &src, 4) == 0,
		       "datagram %u: expected slot %lld's GRH buffer to hold the GRH (an IPv4 "
		       "header from %s in its last 20 bytes), it holds other bytes: on a UD QP "
		       "the GRH comes first, whatever the sender sent (see docs/lab5.md#step-2)",
		       i, slot, rl_test_addr()) ||
	    !rl_expect(c, memcmp(hdr, want_hdr, LAB5_HDR_LEN) == 0,
		       "datagram %u: expected slot %lld's header buffer to hold the %u bytes of the "
		       "header the peer sent (kind %u, seq %u, len %u), it holds others%s (see "
		       "docs/lab5.md#step-2)",
		       i, slot, LAB5_HDR_LEN, rep->sent[i].kind, rep->sent[i].seq, len,
		       untouched(hdr, LAB5_HDR_LEN) ? ": nothing landed there" : "") ||
	    !rl_expect(c, byte_len == LAB5_GRH_LEN + LAB5_HDR_LEN + len,
		       "datagram %u: expected byte_len %u (40 GRH + 12 header + %u), got %lld: are "
		       "the receive's SGEs as long as the parts they take? (see "
		       "docs/lab5.md#step-2)",
		       i, LAB5_GRH_LEN + LAB5_HDR_LEN + len, len, byte_len))
		return false;
	ud_sha256(payload, len, sha);
	return rl_expect(c, memcmp(sha, rep->sent_sha256[i], 32) == 0,
			 "datagram %u: expected slot %lld's payload buffer to start with the %u "
			 "payload bytes the peer sent, it holds others (see docs/lab5.md#step-2)",
			 i, slot, len) &&
	       rl_expect(c, untouched(payload + len, LAB5_MAX_PAYLOAD - len),
			 "datagram %u: expected nothing written in slot %lld's payload buffer past "
			 "its %u bytes, something was",
			 i, slot, len);
}

static void scatter_judge(struct rl_case *c)
{
	const struct scatter_in *in = c->in;
	long long post = rl_said_int(c, "post"), got;
	const uint8_t *grh, *hdr, *payload;
	const struct ud_report *rep;
	bool used[LAB5_SLOTS] = { false };
	size_t n;
	uint32_t i;
	int slot;

	if (!rl_expect(c, post == 0,
		       "expected lab5_post_recv_scatter to return 0 for every slot, got %lld (%s): "
		       "see docs/lab5.md#step-2",
		       post, strerror((int)-post)) ||
	    !(rep = ud_peer_end(c)))
		return;
	got = rl_said_int(c, "got");
	grh = rl_said_bytes(c, "grh", &n);
	hdr = rl_said_bytes(c, "hdr", &n);
	payload = rl_said_bytes(c, "payload", &n);
	for (i = 0; i < got && i < rep->nsent; i++) {
		char name[32];

		if (!scattered(c, rep, i, grh, hdr, payload))
			return;
		snprintf(name, sizeof(name), "slot%u", i);
		used[rl_said_int(c, name)] = true;
	}
	if (!rl_expect(c, rep->nsent == in->n && got == in->n,
		       "expected the %u datagrams the peer sent to complete your receives, %lld "
		       "did (the peer sent %u)",
		       in->n, got, rep->nsent))
		return;
	for (slot = 0; slot < LAB5_SLOTS; slot++)
		if (!used[slot] &&
		    !rl_expect(
			    c,
			    untouched(grh + slot * LAB5_GRH_LEN, LAB5_GRH_LEN) &&
				    untouched(hdr + slot * LAB5_HDR_LEN, LAB5_HDR_LEN) &&
				    untouched(payload + slot * LAB5_MAX_PAYLOAD, LAB5_MAX_PAYLOAD),
			    "expected slot %d, which took no datagram, untouched; something "
			    "was written in its buffers: does each slot's SGE point into its own "
			    "buffers? (see docs/lab5.md#step-2)",
			    slot))
			return;
}

static void scatter_check(struct rl_case *c)
{
	scatter_judge(c);
	ud_peer_stop();
}

RL_GRADED(receive_scatters_the_grh_the_header_and_the_payload_into_their_slots, .step = 2,
	  .points = 4, .setup = scatter_setup, .act = scatter_act, .check = scatter_check);

/* --- recv_msg -------------------------------------------------------------- */

static void recv_setup(struct rl_case *c)
{
	struct scatter_in *in = c->in;
	struct ud_peer_in peer;

	in->n = ud_between(3, MAX_DGRAMS);
	peer = (struct ud_peer_in){ .send = in->n, .bad_last = true };
	in->port = ud_peer_start(&peer);
}

/*
 * The test's receives (laid out as step 2 lays them out), the hello; then
 * the lab's lab5_recv_msg for each of the peer's N datagrams and its bad
 * last one, saying what it describes.
 */
static void recv_act(struct rl_case *c)
{
	const struct scatter_in *in = c->in;
	struct lab5_msg m;
	struct lab5_ud u;
	char name[32];
	uint32_t i;
	int slot, ret;
	long long off;

	ud_fx_connect(&u, in->port);
	for (slot = 0; slot < LAB5_SLOTS; slot++)
		ck_assert_int_eq(ud_fx_post_recv(&u, slot), 0);
	ud_fx_hello(&u, true);
	for (i = 0; i <= in->n; i++) {
		memset(&m, 0, sizeof(m));
		m.slot = -1;
		ret = lab5_recv_msg(&u, &m);
		snprintf(name, sizeof(name), "ret%u", i);
		rl_say_int(name, ret);
		if (ret)
			continue;
		off = m.payload ? m.payload - u.rx_payload : -1;
		if (off < 0 || off + m.payload_len > (long long)LAB5_SLOTS * LAB5_MAX_PAYLOAD)
			off = -1;
		snprintf(name, sizeof(name), "hdr%u", i);
		rl_say_bytes(name, &m.hdr, sizeof(m.hdr));
		snprintf(name, sizeof(name), "len%u", i);
		rl_say_int(name, m.payload_len);
		snprintf(name, sizeof(name), "off%u", i);
		rl_say_int(name, off);
		snprintf(name, sizeof(name), "slot%u", i);
		rl_say_int(name, m.slot);
		snprintf(name, sizeof(name), "src%u", i);
		rl_say_int(name, m.src_qp);
		snprintf(name, sizeof(name), "bytes%u", i);
		rl_say_bytes(name, off < 0 ? "" : (const char *)m.payload,
			     off < 0 ? 0 : m.payload_len);
	}
	lab5_ud_close(&u);
}

static void recv_judge(struct rl_case *c)
{
	const struct scatter_in *in = c->in;
	const struct ud_report *rep = ud_peer_end(c);
	const struct lab5_hdr *h, *want;
	long long ret, off, slot;
	const void *bytes;
	char name[32];
	uint8_t sha[32];
	size_t n;
	uint32_t i;

	if (!rep || !rl_expect(c, rep->nsent == in->n + 1,
			       "the peer sent %u datagrams, not %u (a fault in the test)",
			       rep->nsent, in->n + 1))
		return;
	for (i = 0; i < in->n; i++) {
		want = &rep->sent[i];
		snprintf(name, sizeof(name), "ret%u", i);
		ret = rl_said_int(c, name);
		if (!rl_expect(c, ret == 0,
			       "datagram %u (40 GRH + 12 header + %u payload bytes): expected "
			       "lab5_recv_msg to return 0, got %lld (%s): which bytes does byte_len "
			       "count? (see docs/lab5.md#step-2)",
			       i, want->len, ret, strerror((int)-ret)))
			return;
		snprintf(name, sizeof(name), "hdr%u", i);
		h = rl_said_bytes(c, name, &n);
		snprintf(name, sizeof(name), "off%u", i);
		off = rl_said_int(c, name);
		snprintf(name, sizeof(name), "slot%u", i);
		slot = rl_said_int(c, name);
		snprintf(name, sizeof(name), "len%u", i);
		if (!rl_expect(
			    c,
			    n == sizeof(*h) && h->kind == want->kind && h->seq == want->seq &&
				    h->len == want->len,
			    "datagram %u: expected m->hdr {kind %u, seq %u, len %u}, decoded from "
			    "the slot's header buffer, got {%u, %u, %u} (see docs/lab5.md#step-2)",
			    i, want->kind, want->seq, want->len, h->kind, h->seq, h->len) ||
		    !rl_expect(c, rl_said_int(c, name) == want->len,
			       "datagram %u: expected m->payload_len %u, got %lld", i, want->len,
			       rl_said_int(c, name)) ||
		    !rl_expect(
			    c, slot >= 0 && slot < LAB5_SLOTS && off == slot * LAB5_MAX_PAYLOAD,
			    "datagram %u: expected m->payload at the start of slot %lld's payload "
			    "buffer (u->rx_payload + %lld), got u->rx_payload + %lld (the slot is "
			    "the completion's wr_id; see docs/lab5.md#step-2)",
			    i, slot, slot * LAB5_MAX_PAYLOAD, off))
			return;
		snprintf(name, sizeof(name), "bytes%u", i);
		bytes = rl_said_bytes(c, name, &n);
		ud_sha256(bytes, (uint32_t)n, sha);
		snprintf(name, sizeof(name), "src%u", i);
		if (!rl_expect(c, n == want->len && memcmp(sha, rep->sent_sha256[i], 32) == 0,
			       "datagram %u: expected the %u payload bytes the peer sent at "
			       "m->payload, got other bytes",
			       i, want->len) ||
		    !rl_expect(c, rl_said_int(c, name) == rep->qpn,
			       "datagram %u: expected m->src_qp to be the sender's QP, %u, got %lld",
			       i, rep->qpn, rl_said_int(c, name)))
			return;
	}
	snprintf(name, sizeof(name), "ret%u", in->n);
	ret = rl_said_int(c, name);
	rl_expect(c, ret == -EPROTO,
		  "a datagram whose header says %u payload bytes and that carries fewer: expected "
		  "lab5_recv_msg to refuse it, -EPROTO, got %lld (%s): see docs/lab5.md#step-2",
		  rep->sent[in->n].len, ret, strerror((int)-ret));
}

static void recv_check(struct rl_case *c)
{
	recv_judge(c);
	ud_peer_stop();
}

RL_GRADED(recv_msg_describes_each_datagram_from_its_slot_and_refuses_a_short_one, .step = 2,
	  .points = 3, .setup = recv_setup, .act = recv_act, .check = recv_check);

/* --- send_msg -------------------------------------------------------------- */

struct send_in {
	uint16_t port;
	uint32_t n, seed, first;
	uint32_t len[MAX_DGRAMS];
};

static void send_setup(struct rl_case *c)
{
	struct send_in *in = c->in;
	struct ud_peer_in peer;
	uint32_t i;

	in->n = ud_between(2, MAX_DGRAMS - 2);
	in->seed = ud_random();
	in->first = ud_random() >> 1;
	for (i = 0; i < in->n; i++)
		in->len[i] = ud_between(0, 1000);
	/* N datagrams, then one of exactly the MTU (the one past it is refused). */
	peer = (struct ud_peer_in){ .take = in->n + 1 };
	in->port = ud_peer_start(&peer);
}

/*
 * The lab's lab5_send_msg N times from a buffer of the act's own, numbered
 * from FIRST; then one datagram a byte longer than the MTU, then one of
 * exactly the MTU.
 */
static void send_act(struct rl_case *c)
{
	const struct send_in *in = c->in;
	uint8_t *buf = malloc(LAB5_MAX_PAYLOAD + 1);
	struct lab5_ud u;
	char name[32];
	uint32_t i;
	int ret;

	ck_assert_ptr_nonnull(buf);
	ud_fx_connect(&u, in->port);
	u.next_seq = in->first;
	rl_say_int("mtu", u.mtu);
	for (i = 0; i < in->n; i++) {
		ud_fill(buf, in->len[i], in->seed + i);
		ret = lab5_send_msg(&u, LAB5_MSG_DATA, buf, in->len[i]);
		snprintf(name, sizeof(name), "ret%u", i);
		rl_say_int(name, ret);
	}
	ud_fill(buf, u.mtu - LAB5_HDR_LEN + 1, in->seed + in->n);
	rl_say_int("over", lab5_send_msg(&u, LAB5_MSG_DATA, buf, u.mtu - LAB5_HDR_LEN + 1));
	rl_say_int("exact", lab5_send_msg(&u, LAB5_MSG_DATA, buf, u.mtu - LAB5_HDR_LEN));
	rl_say_int("next_seq", u.next_seq);
	lab5_ud_close(&u);
	free(buf);
}

static void send_judge(struct rl_case *c)
{
	const struct send_in *in = c->in;
	uint32_t mtu = (uint32_t)rl_said_int(c, "mtu"), len, i;
	long long ret, over = rl_said_int(c, "over"), exact = rl_said_int(c, "exact");
	const struct ud_report *rep;
	const struct ud_seen *s;
	uint8_t *want, sha[32];
	char name[32];

	for (i = 0; i < in->n; i++) {
		snprintf(name, sizeof(name), "ret%u", i);
		ret = rl_said_int(c, name);
		if (!rl_expect(c, ret == 0,
			       "datagram %u (%u payload bytes): expected lab5_send_msg to return 0, "
			       "got %lld (%s): see docs/lab5.md#step-2",
			       i, in->len[i], ret, strerror((int)-ret)))
			return;
	}
	if (!rl_expect(c, over == -EMSGSIZE,
		       "a payload of %u bytes, whose datagram is a byte longer than the path MTU "
		       "(%u): expected -EMSGSIZE, got %lld (%s): UD does not segment, and what "
		       "counts against the MTU? (see docs/lab5.md#step-2)",
		       mtu - LAB5_HDR_LEN + 1, mtu, over, strerror((int)-over)) ||
	    !rl_expect(c, exact == 0,
		       "a payload of %u bytes, a datagram of exactly the path MTU (%u): expected "
		       "lab5_send_msg to return 0, got %lld (%s): see docs/lab5.md#step-2",
		       mtu - LAB5_HDR_LEN, mtu, exact, strerror((int)-exact)) ||
	    !(rep = ud_peer_end(c)))
		return;
	if (!rl_expect(c, rep->nseen == in->n + 1,
		       "expected the peer to get %u datagrams (%u, then the one of exactly the "
		       "MTU), it got %u",
		       in->n + 1, in->n, rep->nseen))
		return;
	for (i = 0; i <= in->n; i++) {
		s = &rep->seen[i];
		len = i < in->n ? in->len[i] : mtu - LAB5_HDR_LEN;
		if (!rl_expect(
			    c,
			    s->status == IBV_WC_SUCCESS && s->hdr.kind == LAB5_MSG_DATA &&
				    s->hdr.seq == in->first + i && s->hdr.len == len &&
				    s->byte_len == LAB5_GRH_LEN + LAB5_HDR_LEN + len,
			    "datagram %u: expected kind %u, seq %u (u->next_seq was %u at the "
			    "start, and a refused datagram is not counted), %u payload bytes; the "
			    "peer got kind %u, seq %u, len %u in %u bytes (see "
			    "docs/lab5.md#step-2)",
			    i, LAB5_MSG_DATA, in->first + i, in->first, len, s->hdr.kind,
			    s->hdr.seq, s->hdr.len, s->byte_len))
			return;
		want = malloc(len + 1);
		ck_assert_ptr_nonnull(want);
		ud_fill(want, len, in->seed + (i < in->n ? i : in->n));
		ud_sha256(want, len, sha);
		free(want);
		if (!rl_expect(c, memcmp(sha, s->sha256, 32) == 0,
			       "datagram %u: expected the %u bytes given to lab5_send_msg as its "
			       "payload, the peer got others",
			       i, len))
			return;
	}
	rl_expect(c, rl_said_int(c, "next_seq") == in->first + in->n + 1,
		  "expected u->next_seq %u after %u datagrams sent, got %lld",
		  in->first + in->n + 1, in->n + 1, rl_said_int(c, "next_seq"));
}

static void send_check(struct rl_case *c)
{
	send_judge(c);
	ud_peer_stop();
}

RL_GRADED(send_msg_numbers_its_datagrams_and_refuses_one_past_the_mtu, .step = 2, .points = 3,
	  .setup = send_setup, .act = send_act, .check = send_check);
