/*
 * reference.c: what Lab 0's checks compare with, in the test program's
 * parent: sysfs, ibv_devinfo, and the GID rules of steps 6 and 7 written
 * again here (the lab's code never decides its own grade). Also the plain
 * verbs an act opens its device with, and the setups' random inputs. What
 * does a step's work is hidden from the acts that test it (RL_HIDDEN).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "../harness.h"
#include "reference.h"

#define SYSFS "/sys/class/infiniband"

static void chomp(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
}

int ref_sysfs(const char *dev, const char *path, char *buf, size_t len)
{
	char file[512];
	FILE *f;

	snprintf(file, sizeof(file), SYSFS "/%s/%s", dev, path);
	f = fopen(file, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, len, f)) {
		int err = ferror(f) ? -EIO : -ENODATA;

		fclose(f);
		return err;
	}
	fclose(f);
	chomp(buf);
	return 0;
}

int ref_sysfs_devices(char names[][REF_NAME_LEN], int max)
{
	DIR *d = opendir(SYSFS);
	struct dirent *e;
	int n = 0;

	ck_assert_msg(d, "expected %s to exist, got %s", SYSFS, strerror(errno));
	while ((e = readdir(d)) && n < max) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(names[n++], REF_NAME_LEN, "%.63s", e->d_name);
	}
	closedir(d);
	return n;
}

/* Skip blanks; the rest of a "key:\t\tvalue" line after KEY, or NULL. */
static const char *value_of(const char *line, const char *key)
{
	size_t n = strlen(key);

	line += strspn(line, " \t");
	if (strncmp(line, key, n) != 0 || line[n] != ':')
		return NULL;
	line += n + 1;
	return line + strspn(line, " \t");
}

/* Run ibv_devinfo -v on DEV; the caller reads and pcloses it. */
static FILE *devinfo(const char *dev)
{
	char cmd[256];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ibv_devinfo -v -d %s 2>&1", dev);
	p = popen(cmd, "r");
	ck_assert_msg(p, "expected to run '%s', got %s", cmd, strerror(errno));
	return p;
}

int ref_devinfo(const char *dev, int port, const char *key, char *buf, size_t len)
{
	char line[512];
	const char *v;
	int cur = 0, found = -ENOENT;
	FILE *p = devinfo(dev);

	while (fgets(line, sizeof(line), p)) {
		chomp(line);
		v = value_of(line, "port");
		if (v) {
			cur = atoi(v);
			continue;
		}
		v = value_of(line, key);
		if (v && cur == port && found) {
			snprintf(buf, len, "%s", v);
			found = 0;
		}
	}
	pclose(p);
	return found;
}

long ref_paren_number(const char *value)
{
	const char *open = strrchr(value, '(');

	return open ? strtol(open + 1, NULL, 0) : -1;
}

int ref_devinfo_gids(const char *dev, int port, struct ref_gid *gids, int max)
{
	char line[512], addr[64], type[16];
	const char *v;
	int cur = 0, n = 0, index;
	FILE *p = devinfo(dev);

	while (fgets(line, sizeof(line), p)) {
		chomp(line);
		v = value_of(line, "port");
		if (v) {
			cur = atoi(v);
			continue;
		}
		if (cur != port || n >= max)
			continue;
		if (sscanf(line, " GID[ %d]: %63[^,], %15[^\n]", &index, addr, type) != 3)
			continue;
		gids[n].index = index;
		snprintf(gids[n].type, sizeof(gids[n].type), "%s", type);
		if (inet_pton(AF_INET6, addr, gids[n].gid.raw) == 1)
			n++;
	}
	pclose(p);
	return n;
}

/*
 * What an act opens its device with, in the tests of steps 2 and 4 to 7.
 * Together they are step 3 by name (ref_find chooses, ref_open opens):
 * each is declared hidden (RL_HIDDEN, tests/harness.h) in step 3's acts,
 * which open the device with the lab's code alone, so that the lab's code
 * cannot call them there. The GUID's format (step 2's) and the GID rules
 * (steps 6 and 7) run only in checks: hidden in every act (0).
 */
struct ibv_context *ref_open(const char *dev)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx;

	ck_assert_msg(list, "expected a device list from ibv_get_device_list, got NULL");
	ctx = ibv_open_device(ref_find(list, dev));
	ck_assert_msg(ctx, "expected ibv_open_device(%s) to work, got %s", dev, strerror(errno));
	ibv_free_device_list(list);
	return ctx;
}
RL_HIDDEN(ref_open, 3);

struct ibv_device *ref_find(struct ibv_device **list, const char *dev)
{
	int i;

	for (i = 0; list[i]; i++)
		if (strcmp(ibv_get_device_name(list[i]), dev) == 0)
			return list[i];
	ck_abort_msg("expected device %s in ibv_get_device_list, it is not there", dev);
	return NULL;
}
RL_HIDDEN(ref_find, 3);

void ref_format_guid(__be64 guid, char *buf, size_t len)
{
	uint64_t g = be64toh(guid);

	snprintf(buf, len, "%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff,
		 (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
}
RL_HIDDEN(ref_format_guid, 0);

int ref_has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	const char *p;

	for (p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
			return 1;
	return 0;
}

/* --- Steps 6 and 7, for the checks only (hidden in every act) --- */

/* RFC 4291, 2.5: all zeros, fe80::/10, ::ffff:0:0/96, or any other address. */
enum lab0_gid_form ref_gid_form(const union ibv_gid *gid)
{
	static const uint8_t v4_prefix[12] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t zero[16];
	const uint8_t *b = gid->raw;

	if (memcmp(b, zero, sizeof(zero)) == 0)
		return LAB0_GID_EMPTY;
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return LAB0_GID_LINK_LOCAL;
	if (memcmp(b, v4_prefix, sizeof(v4_prefix)) == 0)
		return LAB0_GID_IPV4_MAPPED;
	return LAB0_GID_IPV6;
}
RL_HIDDEN(ref_gid_form, 0);

int ref_gid_score(const struct lab0_gid *g)
{
	int score;

	if (g->form == LAB0_GID_EMPTY || g->form == LAB0_GID_LINK_LOCAL)
		return 0;
	score = g->type == IBV_GID_TYPE_ROCE_V2 ? 4 : 2;
	return g->form == LAB0_GID_IPV4_MAPPED ? score + 1 : score;
}
RL_HIDDEN(ref_gid_score, 0);

int ref_pick_gid(const struct lab0_gid *gids, int n)
{
	int i, score, best = -ENOENT, best_score = 0;

	for (i = 0; i < n; i++) {
		score = ref_gid_score(&gids[i]);
		if (score > best_score ||
		    (score > 0 && score == best_score && gids[i].index < best)) {
			best = gids[i].index;
			best_score = score;
		}
	}
	return best;
}
RL_HIDDEN(ref_pick_gid, 0);

const char *ref_gid_form_str(enum lab0_gid_form form)
{
	switch (form) {
	case LAB0_GID_EMPTY:
		return "empty";
	case LAB0_GID_LINK_LOCAL:
		return "link-local";
	case LAB0_GID_IPV4_MAPPED:
		return "IPv4-mapped";
	case LAB0_GID_IPV6:
		return "IPv6";
	default:
		return "unknown";
	}
}

/* The names sysfs and ibv_devinfo print. */
const char *ref_gid_type_str(enum ibv_gid_type type)
{
	switch (type) {
	case IBV_GID_TYPE_IB:
		return "IB";
	case IBV_GID_TYPE_ROCE_V1:
		return "RoCE v1";
	case IBV_GID_TYPE_ROCE_V2:
		return "RoCE v2";
	default:
		return "unknown";
	}
}

const char *ref_gid_text(const union ibv_gid *gid, char *buf)
{
	if (!inet_ntop(AF_INET6, gid->raw, buf, INET6_ADDRSTRLEN))
		snprintf(buf, INET6_ADDRSTRLEN, "(unprintable)");
	return buf;
}

/* --- Random inputs --- */

static void ref_random(void *buf, size_t n)
{
	/* getrandom, not a seed from the time or pid: nothing to predict or replay. */
	ck_assert_msg(getrandom(buf, n, 0) == (ssize_t)n,
		      "expected %zu random bytes from getrandom, got %s", n, strerror(errno));
}

unsigned ref_random_below(unsigned n)
{
	unsigned r;

	ref_random(&r, sizeof(r));
	return n ? r % n : 0;
}

struct lab0_gid ref_random_entry(int index, enum lab0_gid_form form, enum ibv_gid_type type)
{
	struct lab0_gid g = { .index = index, .type = type, .form = form };
	uint8_t *b = g.gid.raw;

	ref_random(b, sizeof(g.gid.raw));
	switch (form) {
	case LAB0_GID_EMPTY:
		memset(b, 0, 16);
		break;
	case LAB0_GID_LINK_LOCAL:
		memcpy(b, "\xfe\x80\0\0\0\0\0\0", 8);
		break;
	case LAB0_GID_IPV4_MAPPED:
		memcpy(b, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12);
		break;
	default:
		if (b[15] & 1) { /* ::x, x from 1 to 0xffff */
			memset(b, 0, 14);
			b[15] |= 1;
		} else { /* global unicast, 2000::/3 */
			b[0] = 0x20 | (b[0] & 0x1f);
		}
		break;
	}
	return g;
}

void ref_random_indices(int *index, int n)
{
	int i, j;

	for (i = 0; i < n; i++) {
		index[i] = n + (int)ref_random_below(1024);
		for (j = 0; j < i; j++)
			if (index[j] == index[i])
				break;
		if (j < i)
			i--; /* taken: draw again */
	}
}

void ref_shuffle(struct lab0_gid *g, int n)
{
	struct lab0_gid t;
	int i, j;

	for (i = n - 1; i > 0; i--) {
		j = (int)ref_random_below((unsigned)i + 1);
		t = g[i];
		g[i] = g[j];
		g[j] = t;
	}
}
