/*
 * device.c: open an RDMA device and choose the GID index to use on it.
 * The GID scoring is a pure function over (gid, type) so tests can feed it
 * sample tables; it follows perftest and vm/rdma-env.sh (rl_gid_score).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdmalab.h"

/* Format GID as IPv6 text ("::ffff:10.211.0.1") into BUF. */
void rl_gid_str(const union ibv_gid *gid, char buf[RL_GID_STR_LEN])
{
	if (!inet_ntop(AF_INET6, gid->raw, buf, RL_GID_STR_LEN))
		snprintf(buf, RL_GID_STR_LEN, "?");
}

/* True if GID is ::ffff:a.b.c.d, the form RoCE gives an IPv4 address. */
static bool rl_gid_is_ipv4_mapped(const union ibv_gid *gid)
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(gid->raw, prefix, sizeof(prefix));
}

/*
 * How good GID of TYPE (enum ibv_gid_type) is for connecting: 0 for an empty
 * or link-local (fe80::) entry, else 4 for RoCE v2 or 2 for any other type,
 * plus 1 when it is IPv4-mapped. Higher is better.
 */
int rl_gid_score(const union ibv_gid *gid, uint32_t type)
{
	static const union ibv_gid empty;
	int score;

	if (!memcmp(gid->raw, empty.raw, sizeof(empty.raw)))
		return 0;
	if (gid->raw[0] == 0xfe && (gid->raw[1] & 0xc0) == 0x80)
		return 0;
	score = type == IBV_GID_TYPE_ROCE_V2 ? 4 : 2;
	if (rl_gid_is_ipv4_mapped(gid))
		score++;
	return score;
}

/*
 * The gid_index of the best-scoring entry of TABLE (N entries), ties going
 * to the lowest index; -ENOENT when every entry scores 0. Prints nothing.
 */
int rl_gid_pick(const struct ibv_gid_entry *table, size_t n)
{
	int best = -ENOENT, best_score = 0, score;
	size_t i;

	for (i = 0; i < n; i++) {
		score = rl_gid_score(&table[i].gid, table[i].gid_type);
		if (score > best_score ||
		    (score && score == best_score && (int)table[i].gid_index < best)) {
			best = (int)table[i].gid_index;
			best_score = score;
		}
	}
	return best;
}

/* True if DEV has at least one port in the ACTIVE state. */
static bool rl_has_active_port(struct ibv_context *ctx)
{
	struct ibv_device_attr dev_attr;
	struct ibv_port_attr port_attr;
	int port;

	if (ibv_query_device(ctx, &dev_attr))
		return false;
	for (port = 1; port <= dev_attr.phys_port_cnt; port++) {
		if (!ibv_query_port(ctx, port, &port_attr) && port_attr.state == IBV_PORT_ACTIVE)
			return true;
	}
	return false;
}

/*
 * Open the device called NAME; if NAME is NULL or empty, the one RDMALAB_DEVICE
 * names, else the first device with an ACTIVE port. NULL on failure.
 */
struct ibv_context *rl_open_device(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	if (!name || !*name)
		name = getenv("RDMALAB_DEVICE");
	list = ibv_get_device_list(&n);
	if (!list) {
		rl_fail("ibv_get_device_list", errno ? errno : ENODEV, "(no RDMA support)");
		return NULL;
	}
	for (i = 0; i < n && !ctx; i++) {
		if (name && *name && strcmp(ibv_get_device_name(list[i]), name))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx) {
			rl_fail("ibv_open_device", errno, "%s", ibv_get_device_name(list[i]));
			continue;
		}
		if (!(name && *name) && !rl_has_active_port(ctx)) {
			ibv_close_device(ctx);
			ctx = NULL;
		}
	}
	if (!ctx && name && *name)
		rl_err("ibv_open_device %s: no such device among %d (hint: %s)", name, n,
		       rl_hint(RL_TRAP_NO_DEVICE));
	else if (!ctx)
		rl_err("ibv_get_device_list: no device with an ACTIVE port among %d (hint: %s)", n,
		       rl_hint(RL_TRAP_NO_DEVICE));
	else
		rl_info("opened %s", ibv_get_device_name(ctx->device));
	ibv_free_device_list(list);
	return ctx;
}

/* Read the usable GID entries of CTX's PORT into TABLE; their count or -errno. */
static int rl_read_gid_table(struct ibv_context *ctx, uint8_t port, struct ibv_gid_entry *table,
			     int max)
{
	struct ibv_port_attr port_attr;
	int i, n = 0;

	if (ibv_query_port(ctx, port, &port_attr))
		return rl_fail("ibv_query_port", errno, "%s port %u",
			       ibv_get_device_name(ctx->device), port);
	for (i = 0; i < port_attr.gid_tbl_len && n < max; i++) {
		/* Empty entries fail with ENODATA: skip them. */
		if (!ibv_query_gid_ex(ctx, port, i, &table[n], 0))
			n++;
	}
	return n;
}

/*
 * The GID index to use on CTX's PORT: REQUESTED if it is >= 0, else
 * RDMALAB_GID_INDEX, else the best-scoring entry. Negative errno on failure.
 */
int rl_choose_gid_index(struct ibv_context *ctx, uint8_t port, int requested)
{
	struct ibv_gid_entry table[256];
	const char *env = getenv("RDMALAB_GID_INDEX");
	char text[RL_GID_STR_LEN], *end;
	int n, best;

	if (requested < 0 && env && *env) {
		requested = (int)strtol(env, &end, 10);
		if (*end || requested < 0 || requested > 255) {
			rl_err("RDMALAB_GID_INDEX takes a GID index from 0 to 255, not '%s' "
			       "(see 'ibv_devinfo -v')",
			       env);
			return -EINVAL;
		}
	}
	if (requested >= 0)
		return requested;
	n = rl_read_gid_table(ctx, port, table, 256);
	if (n < 0)
		return n;
	best = rl_gid_pick(table, n);
	if (best < 0) {
		rl_err("%s port %u: no usable GID (only empty or link-local entries) (hint: %s)",
		       ibv_get_device_name(ctx->device), port, rl_hint(RL_TRAP_GID_INDEX));
		return -ENOENT;
	}
	for (n--; n >= 0 && (int)table[n].gid_index != best; n--)
		;
	rl_gid_str(&table[n].gid, text);
	rl_info("%s port %u: using GID index %d (%s)", ibv_get_device_name(ctx->device), port, best,
		text);
	return best;
}
