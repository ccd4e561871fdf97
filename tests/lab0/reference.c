/* reference.c: read sysfs and run ibv_devinfo, the references Lab 0's answers are checked against. */
#include <arpa/inet.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

struct ibv_device *ref_find(struct ibv_device **list, const char *dev)
{
	int i;

	for (i = 0; list[i]; i++)
		if (strcmp(ibv_get_device_name(list[i]), dev) == 0)
			return list[i];
	ck_abort_msg("expected device %s in ibv_get_device_list, it is not there", dev);
	return NULL;
}

void ref_format_guid(__be64 guid, char *buf, size_t len)
{
	uint64_t g = be64toh(guid);

	snprintf(buf, len, "%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff,
		 (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
}
