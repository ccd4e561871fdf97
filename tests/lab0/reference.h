/* reference.h: what sysfs and ibv_devinfo say about a device, for the Lab 0 tests to compare with. */
#ifndef RDMALAB_LAB0_REFERENCE_H
#define RDMALAB_LAB0_REFERENCE_H

#include <stddef.h>

#include <infiniband/verbs.h>

#define REF_MAX_DEVICES 32
#define REF_NAME_LEN 64

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

/* Open DEV with plain verbs (not the lab's code), or fail the test. */
struct ibv_context *ref_open(const char *dev);

/* DEV's struct ibv_device in LIST (from ibv_get_device_list), or fail the test. */
struct ibv_device *ref_find(struct ibv_device **list, const char *dev);

/* Format a big-endian GUID as sysfs does: 0123:4567:89ab:cdef. */
void ref_format_guid(__be64 guid, char *buf, size_t len);

#endif
