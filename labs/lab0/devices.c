/* devices.c: Lab 0 steps 1 to 3: find the RDMA devices, describe them, open one. */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "lab0.h"

/*
 * Step 1. Return the list of RDMA devices and set *num to its length, or
 * print why there is none and return NULL. Free the list with
 * ibv_free_device_list() once the device you want is open.
 */
struct ibv_device **lab0_get_devices(int *num)
{
	*num = 0;
	/* TODO step 1
	 * Ask libibverbs for the devices: ibv_get_device_list() returns a
	 * NULL-terminated array and its length; nothing is opened yet.
	 * Read: man ibv_get_device_list.
	 */
	rl_todo(1);
	return NULL;
}

/*
 * Step 2. Write one line into LINE describing DEV without opening it:
 * name, GUID (as sysfs writes it, 0123:4567:89ab:cdef), node type and
 * transport. Returns 0, or -ENOSPC when LINE is too short.
 */
int lab0_describe_device(struct ibv_device *dev, char *line, size_t len)
{
	/* TODO step 2
	 * A device can be described before it is opened: read its name, GUID
	 * (big-endian: convert with be64toh), node type and transport type.
	 * Read: man ibv_get_device_name, man ibv_get_device_guid, man ibv_node_type_str.
	 */
	return rl_todo(2);
}

/*
 * Step 3. Open the device called NAME in LIST; with NAME NULL, the one
 * RDMALAB_DEVICE names, else the first. Returns its context, or NULL after
 * printing why.
 */
struct ibv_context *lab0_open_device(struct ibv_device **list, int num, const char *name)
{
	/* TODO step 3
	 * Pick the device (NAME, else getenv("RDMALAB_DEVICE"), else the first)
	 * and open it: the context ibv_open_device() returns is what every later verb takes.
	 * Read: man ibv_open_device.
	 */
	rl_todo(3);
	return NULL;
}
