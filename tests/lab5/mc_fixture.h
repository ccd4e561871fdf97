/*
 * mc_fixture.h: what the Lab 5 step 3 tests share. mc_peer.c: members and
 * a sender of a multicast group, processes of the test's own (plain verbs
 * and rdma_cm, none of the lab's code), started and joined by setup before
 * the act runs, each reporting what it saw on its own channel after the
 * act. mc_fixture.c: the inputs (random groups and seeds), and what the
 * check reads from outside the act: the kernel's IGMP memberships and the
 * device's packet counters.
 */
#ifndef RDMALAB_LAB5_MC_FIXTURE_H
#define RDMALAB_LAB5_MC_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "lab5.h" /* first: it defines RL_LAB, which harness.h would otherwise default */
#include "../harness.h"

#define MC_MAX_SEEN 32 /* datagrams a peer reports one by one */
#define MC_MAX_PEERS 4

/* --- inputs, chosen by setup in the parent -------------------------------- */

/* A fresh random number (getrandom), and one from LO to HI, both included. */
uint32_t mc_random(void);
uint32_t mc_between(uint32_t lo, uint32_t hi);
/* A random group of this run's, 239.X.Y.Z, into OUT. */
void mc_random_group(char *out, size_t size);
/* N bytes that SEED names, the same in every process. */
void mc_fill(uint8_t *buf, uint32_t n, uint32_t seed);
/* A 64-bit FNV-1a hash of N bytes at P: a datagram's payload, reported. */
uint64_t mc_hash(const void *p, uint32_t n);

/* --- mc_peer.c: the group's reference members and sender ----------------- */

enum mc_role {
	MC_MEMBER, /* a full member: records every datagram until EXPECT came, or the act is done */
	MC_SENDER, /* a full member: waits for a hello from another QP, then sends EXPECT datagrams */
};

/* What a peer is told (in c->in: inputs only). */
struct mc_peer_in {
	char local[64]; /* the device's address (rl_test_addr) */
	char group[64];
	uint32_t expect; /* member: datagrams to wait for; sender: datagrams to send */
	uint32_t size;   /* sender: payload bytes of each */
};

/* One datagram a peer received. */
struct mc_seen {
	uint32_t kind, seq, len; /* its header (struct lab5_hdr, decoded) */
	uint32_t byte_len;       /* as the completion says, the GRH included */
	uint32_t src_qp;
	uint64_t hash; /* mc_hash of its payload */
};

/* What a peer reports to the check. */
struct mc_report {
	int ret;         /* 0: it did its part; else a negative errno, ERROR says why */
	char error[256]; /* the peer's own failure, for the message */
	uint32_t qpn;    /* its QP */
	uint32_t nseen;  /* datagrams received from other QPs (the first MC_MAX_SEEN in SEEN) */
	struct mc_seen seen[MC_MAX_SEEN];
	/* sender: */
	uint32_t hello_qp; /* the QP whose hello it took, 0: none came */
	uint32_t seed;     /* of its payloads, its own: datagram SEQ is mc_fill(.., seed + seq) */
	uint32_t sent;     /* datagrams it sent after the hello */
};

/*
 * In setup: start a peer playing ROLE as IN says; it has joined the group
 * as a full member, its receives posted, when this returns. Returns its
 * number, the first 0.
 */
int mc_peer_start(struct rl_case *c, const struct mc_peer_in *in, enum mc_role role);
/* In the check: tell peer I the act is done, then its report, or the test fails: false. */
bool mc_peer_report(struct rl_case *c, int i, struct mc_report *rep);

/* --- mc_fixture.c: the check's view from outside ---------------------------- */

/*
 * The users /proc/net/igmp counts for GROUP (dotted) on every interface:
 * 0 when no interface has joined it, -1 when the file cannot be read.
 */
int mc_igmp_users(const char *group);
/* The device's packet counter NAME (hw_counters: sent_pkts, rcvd_pkts), or -1. */
long long mc_counter(const char *name);
/* The port's active MTU in bytes, asked in the parent. */
uint32_t mc_port_mtu(void);

#endif
