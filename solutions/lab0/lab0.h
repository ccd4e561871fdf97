/* lab0.h: Lab 0, devices. Every function of the lab, by the file that defines it. */
#ifndef RDMALAB_LAB0_H
#define RDMALAB_LAB0_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>

#define RL_LAB 0
#include "../common/todo.h"

/* What a GID's 16 bytes hold, from its address alone. */
enum lab0_gid_form {
	LAB0_GID_EMPTY,       /* all zeros: an unused table entry */
	LAB0_GID_LINK_LOCAL,  /* fe80::..., valid on one link only */
	LAB0_GID_IPV4_MAPPED, /* ::ffff:a.b.c.d, an IPv4 address */
	LAB0_GID_IPV6,        /* any other IPv6 address */
};

/* One entry of a port's GID table. */
struct lab0_gid {
	int index;               /* its index in the table: what QPs are given */
	union ibv_gid gid;       /* the 16 bytes */
	enum ibv_gid_type type;  /* IB, RoCE v1 or RoCE v2 */
	enum lab0_gid_form form; /* what the bytes hold */
};

/* devices.c: steps 1 to 3 */
struct ibv_device **lab0_get_devices(int *num);
int lab0_describe_device(struct ibv_device *dev, char *line, size_t len);
struct ibv_context *lab0_open_device(struct ibv_device **list, int num, const char *name);

/* attributes.c: steps 4 and 5 */
int lab0_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr);
int lab0_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr);

/* gids.c: steps 6 and 7 */
enum lab0_gid_form lab0_gid_form(const union ibv_gid *gid);
int lab0_query_gids(struct ibv_context *ctx, uint8_t port, struct lab0_gid *gids, int max);
int lab0_gid_score(const struct lab0_gid *g);
int lab0_pick_gid(const struct lab0_gid *gids, int n, const char **why);

/* print.c: how the program shows what the steps found (given, not a step) */
const char *lab0_transport_str(enum ibv_transport_type t);
const char *lab0_gid_type_str(enum ibv_gid_type t);
const char *lab0_gid_form_str(enum lab0_gid_form f);
void lab0_print_device_attr(FILE *out, const struct ibv_device_attr *attr);
void lab0_print_port(FILE *out, uint8_t port, const struct ibv_port_attr *attr);
void lab0_print_gid(FILE *out, const struct lab0_gid *g);

#endif
