/*
 * test_mcast.c: Lab 5 step 3, a multicast group. The group's other members
 * and its sender are processes of the test's own (mc_peer.c), joined before
 * the act runs; they report what they received, or whose hello they took,
 * after it. What a join leaves in the kernel is read from outside while
 * the act holds: /proc/net/igmp and rdma_cm's resource tracking; what the
 * device put on the wire, from its packet counters.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mc_fixture.h"

#define MC_ROW "docs/lab5.md#step-3"

/* The inputs: the group, the datagrams, the group's peers. */
struct mc_in {
	struct mc_peer_in peer; /* the group and the device's address, for the act too */
	uint32_t count;         /* datagrams the act sends or takes */
	uint32_t size;          /* payload bytes of each the act sends */
	uint32_t seed;          /* of the act's payloads: datagram SEQ is mc_fill(.., seed + seq) */
	bool send_only;         /* the membership the act asks for */
};

/* The device's sent_pkts before the act: the parent's (the act cannot change what the device counts). */
static long long mc_sent_before;

static void mc_inputs(struct mc_in *in)
{
	snprintf(in->peer.local, sizeof(in->peer.local), "%s", rl_test_addr());
	mc_random_group(in->peer.group, sizeof(in->peer.group));
}

/* "-38 (Function not implemented)" for a message. */
static const char *mc_ret(long long ret)
{
	static char buf[96];

	snprintf(buf, sizeof(buf), "%lld (%s)", ret, ret < 0 ? strerror((int)-ret) : "success");
	return buf;
}

/* The check's first expectation: the act's join returned 0. */
static bool mc_joined(struct rl_case *c, bool send_only)
{
	long long ret = rl_said_int(c, "join");

	return rl_expect(c, ret == 0,
			 "expected lab5_mc_join(..., send_only = %s) to join the group and return "
			 "0, got %s: see " MC_ROW,
			 send_only ? "true" : "false", mc_ret(ret));
}

/* --- a send-only publisher reaches every member -------------------------- */

static void publish_setup(struct rl_case *c)
{
	struct mc_in *in = c->in;

	mc_inputs(in);
	in->count = mc_between(4, 12);
	in->size = mc_between(1, 256);
	in->seed = mc_random();
	in->peer.expect = in->count;
	mc_peer_start(c, &in->peer, MC_MEMBER);
	mc_peer_start(c, &in->peer, MC_MEMBER);
	mc_sent_before = mc_counter("sent_pkts");
}

/* Joins send-only and sends COUNT datagrams (step 2's send); says what each returned. */
static void publish(struct rl_case *c)
{
	const struct mc_in *in = c->in;
	struct lab5_ud u = { 0 };
	uint8_t *payload = malloc(in->size);
	uint32_t i;
	int ret;

	ck_assert_ptr_nonnull(payload);
	ret = lab5_mc_join(&u, in->peer.local, in->peer.group, true);
	rl_say_int("join", ret);
	for (i = 0; !ret && i < in->count; i++) {
		mc_fill(payload, in->size, in->seed + i);
		ret = lab5_send_msg(&u, LAB5_MSG_DATA, payload, in->size);
	}
	rl_say_int("sent", i);
	rl_say_int("send", ret);
	lab5_ud_close(&u);
	free(payload);
}

static void publish_check(struct rl_case *c)
{
	const struct mc_in *in = c->in;
	uint8_t *want = malloc(in->size);
	long long sent = mc_counter("sent_pkts") - mc_sent_before;
	struct mc_report rep[2];
	const struct mc_seen *s;
	uint32_t i, k;

	ck_assert_ptr_nonnull(want);
	for (k = 0; k < 2; k++)
		if (!mc_peer_report(c, (int)k, &rep[k]))
			goto out;
	if (!mc_joined(c, true) ||
	    !rl_expect(c, rl_said_int(c, "send") == 0,
		       "expected lab5_send_msg to send datagram %lld of %u to the group, got %s",
		       rl_said_int(c, "sent"), in->count, mc_ret(rl_said_int(c, "send"))))
		goto out;
	for (k = 0; k < 2; k++) {
		if (!rl_expect(
			    c, rep[k].nseen == in->count,
			    "expected each of the group's 2 other members to receive the %u "
			    "datagrams sent, got %u at member %u (QP %u): a datagram goes to the "
			    "QPN and Q_Key the join's event gives for the group, through its AH: "
			    "see " MC_ROW,
			    in->count, rep[k].nseen, k + 1, rep[k].qpn))
			goto out;
		for (i = 0; i < in->count && i < MC_MAX_SEEN; i++) {
			s = &rep[k].seen[i];
			mc_fill(want, in->size, in->seed + i);
			if (!rl_expect(
				    c,
				    s->kind == LAB5_MSG_DATA && s->seq == i && s->len == in->size &&
					    s->hash == mc_hash(want, in->size) &&
					    s->byte_len == LAB5_GRH_LEN + LAB5_HDR_LEN + in->size,
				    "expected member %u's datagram %u to be DATA seq %u with the "
				    "%u payload bytes sent, got kind %u seq %u len %u (%u bytes, "
				    "payload %s)",
				    k + 1, i, i, in->size, s->kind, s->seq, s->len,
				    s->byte_len - LAB5_GRH_LEN,
				    s->hash == mc_hash(want, in->size) ? "the same" : "other"))
				goto out;
		}
	}
	/* One send reaches every member: the device sends each datagram once. */
	rl_expect(c, sent == in->count,
		  "expected the device to send %u packets for %u datagrams to a group of 2 other "
		  "members (one post, every member gets it), got %lld",
		  in->count, in->count, sent);
out:
	free(want);
}

RL_GRADED(a_send_only_publishers_datagrams_reach_two_members_each_in_order, .step = 3, .points = 4,
	  .needs = 2, .setup = publish_setup, .act = publish, .check = publish_check);

/* --- a full member takes a sender's stream after its hello --------------- */

static void subscribe_setup(struct rl_case *c)
{
	struct mc_in *in = c->in;

	mc_inputs(in);
	in->count = mc_between(4, 12);
	in->peer.expect = in->count;
	in->peer.size = mc_between(1, 512);
	mc_peer_start(c, &in->peer, MC_SENDER);
}

/*
 * Joins as a full member, says hello (step 2's send), and takes datagrams
 * (step 2's receive) until COUNT of DATA came: says each one's seq, length
 * and payload, in the order they came. Its own hello comes back to it too.
 */
static void subscribe(struct rl_case *c)
{
	const struct mc_in *in = c->in;
	struct lab5_ud u = { 0 };
	struct lab5_msg m;
	uint32_t got = 0, seq[MC_MAX_SEEN], len[MC_MAX_SEEN], tries;
	char name[32];
	int ret;

	ret = lab5_mc_join(&u, in->peer.local, in->peer.group, false);
	rl_say_int("join", ret);
	if (!ret) {
		ret = lab5_send_msg(&u, LAB5_MSG_HELLO, NULL, 0);
		rl_say_int("hello", ret);
	}
	for (tries = 0; !ret && got < in->count && tries < in->count + 4; tries++) {
		ret = lab5_recv_msg(&u, &m);
		if (ret || m.hdr.kind != LAB5_MSG_DATA)
			continue;
		seq[got] = m.hdr.seq;
		len[got] = m.payload_len;
		snprintf(name, sizeof(name), "payload%u", got);
		rl_say_bytes(name, m.payload, m.payload_len);
		got++;
	}
	rl_say_int("recv", ret);
	rl_say_int("got", got);
	rl_say_bytes("seq", seq, got * sizeof(seq[0]));
	rl_say_bytes("len", len, got * sizeof(len[0]));
	lab5_ud_close(&u);
}

static void subscribe_check(struct rl_case *c)
{
	const struct mc_in *in = c->in;
	struct mc_report rep;
	uint32_t got, i, size = in->peer.size;
	const uint32_t *seq, *len;
	const uint8_t *p;
	uint8_t *want = malloc(size);
	size_t n;
	char name[32];

	ck_assert_ptr_nonnull(want);
	if (!mc_peer_report(c, 0, &rep) || !mc_joined(c, false) ||
	    !rl_expect(c, rl_said_int(c, "hello") == 0,
		       "expected lab5_send_msg to send the member's HELLO to the group, got %s",
		       mc_ret(rl_said_int(c, "hello"))) ||
	    !rl_expect(c, rep.hello_qp != 0,
		       "expected the group's sender to receive the member's HELLO, got none: a "
		       "full member's QP is attached to the group by the join, and sends go to "
		       "the QPN and Q_Key of the join's event: see " MC_ROW) ||
	    !rl_expect(c, rep.sent == in->count,
		       "expected the group's sender to send %u datagrams, got %u", in->count,
		       rep.sent))
		goto out;
	got = (uint32_t)rl_said_int(c, "got");
	seq = rl_said_bytes(c, "seq", &n);
	len = rl_said_bytes(c, "len", &n);
	if (!rl_expect(c, got == in->count,
		       "expected the member to receive the %u datagrams the group's sender sent "
		       "after its hello, got %u (lab5_recv_msg returned %s): its receives must be "
		       "posted before the join, and a full member's QP attached: see " MC_ROW,
		       in->count, got, mc_ret(rl_said_int(c, "recv"))))
		goto out;
	for (i = 0; i < got; i++) {
		snprintf(name, sizeof(name), "payload%u", i);
		p = rl_said_bytes(c, name, &n);
		mc_fill(want, size, rep.seed + i);
		if (!rl_expect(c,
			       seq[i] == i && len[i] == size && n == size &&
				       memcmp(p, want, size) == 0,
			       "expected datagram %u received to be seq %u with the sender's %u "
			       "payload bytes, got seq %u, %u bytes (%s)",
			       i, i, size, seq[i], len[i],
			       n == size && memcmp(p, want, size) == 0 ? "the same" :
									 "other bytes"))
			break;
	}
out:
	free(want);
}

RL_GRADED(a_full_member_receives_a_senders_stream_after_its_hello_in_order, .step = 3, .points = 4,
	  .needs = 2, .setup = subscribe_setup, .act = subscribe, .check = subscribe_check);

/* --- the membership, seen from outside ------------------------------------ */

static void send_only_setup(struct rl_case *c)
{
	struct mc_in *in = c->in;

	mc_inputs(in);
	in->send_only = true;
}

static void full_setup(struct rl_case *c)
{
	mc_inputs(c->in);
}

/* Joins as SEND_ONLY says, and holds for the check to look. */
static void join_and_hold(struct rl_case *c)
{
	const struct mc_in *in = c->in;
	struct lab5_ud u = { 0 };

	rl_say_int("join", lab5_mc_join(&u, in->peer.local, in->peer.group, in->send_only));
	rl_hold();
	lab5_ud_close(&u);
}

/*
 * Whether the act holds an rdma_cm id in the UDP port space bound to the
 * group (rl_rdma_res "cm_id"): its state, for the message, into STATE.
 */
static bool mc_act_id(struct rl_case *c, const char *group, char *state, size_t size)
{
	struct rl_res ids[16];
	char dst[80];
	int n, i;

	snprintf(state, size, "none");
	snprintf(dst, sizeof(dst), "%s:", group);
	n = rl_rdma_res("cm_id", rl_act_pid(c), ids, 16);
	for (i = 0; i < n; i++) {
		const char *ps = rl_res_get(&ids[i], "ps"), *d = rl_res_get(&ids[i], "dst-addr");

		if (ps && d && !strcmp(ps, "UDP") && !strncmp(d, dst, strlen(dst))) {
			snprintf(state, size, "%s", rl_res_get(&ids[i], "state") ?: "?");
			return true;
		}
	}
	return false;
}
RL_HIDDEN(mc_act_id, 0);

static void membership_check(struct rl_case *c)
{
	const struct mc_in *in = c->in;
	int users = mc_igmp_users(in->peer.group);
	char state[64];

	if (!mc_joined(c, in->send_only) ||
	    !rl_expect(c, mc_act_id(c, in->peer.group, state, sizeof(state)),
		       "expected the member to hold an rdma_cm id in the UDP port space aimed at "
		       "%s (rdma res show cm_id), got none",
		       in->peer.group) ||
	    !rl_expect(c, users >= 0, "expected /proc/net/igmp to be readable, got nothing"))
		return;
	if (in->send_only)
		rl_expect(c, users == 0,
			  "expected a send-only member to take no IGMP membership of %s (it never "
			  "receives), got %d user%s in /proc/net/igmp: it joined as a full member: "
			  "see " MC_ROW,
			  in->peer.group, users, users == 1 ? "" : "s");
	else
		rl_expect(c, users == 1,
			  "expected a full member to take one IGMP membership of %s, got %d "
			  "users in /proc/net/igmp: see " MC_ROW,
			  in->peer.group, users);
}

RL_GRADED(a_send_only_member_takes_no_igmp_membership, .step = 3, .points = 2,
	  .setup = send_only_setup, .act = join_and_hold, .check = membership_check);
RL_GRADED(a_full_member_takes_one_igmp_membership, .step = 3, .points = 1, .setup = full_setup,
	  .act = join_and_hold, .check = membership_check);

/* Joins as a full member, leaves, and holds (its id and QP still made). */
static void leave_and_hold(struct rl_case *c)
{
	const struct mc_in *in = c->in;
	struct lab5_ud u = { 0 };
	int ret;

	ret = lab5_mc_join(&u, in->peer.local, in->peer.group, false);
	rl_say_int("join", ret);
	rl_say_int("leave", ret ? ret : lab5_mc_leave(&u));
	rl_say_int("joined", u.joined);
	rl_hold();
	lab5_ud_close(&u);
}

static void leave_check(struct rl_case *c)
{
	const struct mc_in *in = c->in;
	int users = mc_igmp_users(in->peer.group);
	long long ret = rl_said_int(c, "leave");

	if (!mc_joined(c, false) ||
	    !rl_expect(c, ret == 0, "expected lab5_mc_leave to return 0, got %s: see " MC_ROW,
		       mc_ret(ret)))
		return;
	rl_expect(
		c, users == 0,
		"expected no IGMP membership of %s once the member left (its QP and id still "
		"made), got %d user%s in /proc/net/igmp: the leave must give the group up: see " MC_ROW,
		in->peer.group, users, users == 1 ? "" : "s");
	rl_expect(c, rl_said_int(c, "joined") == 0,
		  "expected u->joined to be false after lab5_mc_leave, got true (lab5_ud_close "
		  "would leave a second time)");
}

RL_GRADED(a_leave_gives_the_membership_up_before_the_qp_goes, .step = 3, .points = 2,
	  .setup = full_setup, .act = leave_and_hold, .check = leave_check);

/* --- the largest datagram ------------------------------------------------- */

static void mtu_setup(struct rl_case *c)
{
	struct mc_in *in = c->in;

	mc_inputs(in);
	in->seed = mc_random();
	in->peer.expect = 1;
	mc_peer_start(c, &in->peer, MC_MEMBER);
	mc_sent_before = mc_counter("sent_pkts");
}

/*
 * Joins send-only, then sends a payload of the port's MTU less the header
 * (lab5_port_mtu, given), and one of a byte more: says what each returned.
 */
static void mtu_sends(struct rl_case *c)
{
	const struct mc_in *in = c->in;
	static uint8_t payload[LAB5_MAX_PAYLOAD + 1];
	struct lab5_ud u = { 0 };
	uint32_t max;
	int ret;

	ret = lab5_mc_join(&u, in->peer.local, in->peer.group, true);
	rl_say_int("join", ret);
	if (!ret) {
		max = lab5_port_mtu(u.id) - LAB5_HDR_LEN;
		mc_fill(payload, max + 1, in->seed);
		rl_say_int("max", max);
		rl_say_int("fits", lab5_send_msg(&u, LAB5_MSG_DATA, payload, max));
		rl_say_int("over", lab5_send_msg(&u, LAB5_MSG_DATA, payload, max + 1));
	}
	lab5_ud_close(&u);
}

static void mtu_check(struct rl_case *c)
{
	const struct mc_in *in = c->in;
	uint32_t max = mc_port_mtu() - LAB5_HDR_LEN;
	long long sent = mc_counter("sent_pkts") - mc_sent_before;
	static uint8_t want[LAB5_MAX_PAYLOAD];
	struct mc_report rep;
	long long fits, over;

	if (!mc_peer_report(c, 0, &rep) || !mc_joined(c, true))
		return;
	fits = rl_said_int(c, "fits");
	over = rl_said_int(c, "over");
	mc_fill(want, max, in->seed);
	if (!rl_expect(c, rl_said_int(c, "max") == max,
		       "expected the act's payload to be the port's MTU less the %d-byte header, "
		       "%u bytes, got %lld (a fault in the test)",
		       LAB5_HDR_LEN, max, rl_said_int(c, "max")) ||
	    !rl_expect(c, fits == 0,
		       "expected a datagram of exactly the MTU (%u payload bytes and the header) "
		       "to be sent, got %s",
		       max, mc_ret(fits)) ||
	    !rl_expect(c, over == -EMSGSIZE,
		       "expected a datagram one byte over the MTU to be refused with -EMSGSIZE "
		       "(UD does not segment), got %s: see " MC_ROW,
		       mc_ret(over)))
		return;
	if (!rl_expect(c,
		       rep.nseen == 1 && rep.seen[0].len == max &&
			       rep.seen[0].hash == mc_hash(want, max),
		       "expected the group's member to receive the one datagram of %u payload "
		       "bytes, got %u datagram%s%s",
		       max, rep.nseen, rep.nseen == 1 ? "" : "s",
		       rep.nseen == 1 ? " of other bytes" : ""))
		return;
	rl_expect(c, sent == 1,
		  "expected the device to send 1 packet (the datagram that fits, nothing of the "
		  "refused one), got %lld",
		  sent);
}

RL_GRADED(a_datagram_over_the_mtu_is_refused_and_nothing_is_sent, .step = 3, .points = 1,
	  .needs = 2, .setup = mtu_setup, .act = mtu_sends, .check = mtu_check);
