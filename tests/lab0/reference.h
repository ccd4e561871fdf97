/*
 * reference.h: what Lab 0's checks compare with, computed in the test
 * program's parent: sysfs, ibv_devinfo, and the tests' own GID rules.
 */
#ifndef RDMALAB_LAB0_REFERENCE_H
#define RDMALAB_LAB0_REFERENCE_H

#include <stddef.h>

#include <infiniband/verbs.h>

#include "lab0.h"

#define REF_MAX_DEVICES 32
#define REF_NAME_LEN 64

/* --- The device, seen from outside the lab's code (checks) --- */

/* The first line of /sys/class/infiniband/DEV/PATH into BUF; 0 or -errno. */
int ref_sysfs(const char *dev, const char *path, char *buf, size_t len);

/* The names of the devices in /sys/class/infiniband; returns how many. */
int ref_sysfs_devices(char names[][REF_NAME_LEN], int max);

/*
 * The value of "KEY:" in `ibv_devinfo -v -d DEV`, from the device's part
 * (PORT 0) or from port PORT's part; 0, or -ENOENT when it is not there.
 */
int ref_devinfo(const char *dev, int port, const char *key, char *buf, size_t len);

/* The number in parentheses in a value like "1024 (3)", or -1. */
long ref_paren_number(const char *value);

/* One "GID[  1]: ::ffff:10.0.0.1, RoCE v2" line of ibv_devinfo -v. */
struct ref_gid {
	int index;
	union ibv_gid gid;
	char type[16];
};

/* The GIDs ibv_devinfo -v lists for DEV's PORT; returns how many. */
int ref_devinfo_gids(const char *dev, int port, struct ref_gid *gids, int max);

/* Format a big-endian GUID as sysfs does: 0123:4567:89ab:cdef. */
void ref_format_guid(__be64 guid, char *buf, size_t len);

/* Whether TEXT (lines) has a line that is exactly LINE. */
int ref_has_line(const char *text, const char *line);

/* --- An act's own set-up, with plain verbs (not the lab's code) --- */

/* Open DEV, or fail the test. */
struct ibv_context *ref_open(const char *dev);

/* DEV's struct ibv_device in LIST (from ibv_get_device_list), or fail the test. */
struct ibv_device *ref_find(struct ibv_device **list, const char *dev);

/* --- Steps 6 and 7 as the checks compute them (never the lab's code) --- */

enum lab0_gid_form ref_gid_form(const union ibv_gid *gid);
/* rl_gid_score of vm/rdma-env.sh: 0 unusable, 4 RoCE v2 or 2 older, +1 IPv4-mapped. */
int ref_gid_score(const struct lab0_gid *g);
/* The index of the best of the N entries (ties: the lowest index), or -ENOENT. */
int ref_pick_gid(const struct lab0_gid *gids, int n);
const char *ref_gid_form_str(enum lab0_gid_form form);
const char *ref_gid_type_str(enum ibv_gid_type type);
/* GID as text (IPv6 notation) into BUF of INET6_ADDRSTRLEN bytes; returns BUF. */
const char *ref_gid_text(const union ibv_gid *gid, char *buf);

/* --- Random inputs, chosen by a setup for this run --- */

/* A whole number from 0 to N - 1, from getrandom. */
unsigned ref_random_below(unsigned n);

/*
 * A table entry at INDEX, of TYPE, whose address has FORM and is otherwise
 * random: link-local in fe80::/64; IPv4-mapped ::ffff:a.b.c.d; IPv6 in
 * 2000::/3, or ::x (like ::1). Its form field is FORM.
 */
struct lab0_gid ref_random_entry(int index, enum lab0_gid_form form, enum ibv_gid_type type);

/*
 * N distinct table indices from N to N + 1023, in random order, into
 * INDEX: none is a position of an array of the N, so that code taking an
 * entry's position for its index never passes by chance.
 */
void ref_random_indices(int *index, int n);

/* Shuffle the N entries of G. */
void ref_shuffle(struct lab0_gid *g, int n);

#endif
