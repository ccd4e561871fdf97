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
	 * Ask libibverbs for the devices. Decide where *num comes from, what
	 * an empty list means here, and who frees the array on each path.
	 * Read: man ibv_get_device_list (RETURN VALUE, NOTES).
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
	 * A device can be described before it is opened. Decide in what byte
	 * order its GUID comes and what snprintf's count says about a cut line.
	 * Read: man ibv_get_device_guid, man endian, man 3 snprintf.
	 */
	return rl_todo(2);
}

/*
 * Step 3. Open the device the user chose: NAME and RDMALAB_DEVICE may each
 * name one of LIST; with neither, the first. Returns its context, or NULL
 * after printing why.
 */
struct ibv_context *lab0_open_device(struct ibv_device **list, int num, const char *name)
{
	/* TODO step 3
	 * Decide which source wins when both name a device, and what a name
	 * no device has gets. The context is what every later verb takes.
	 * Read: man ibv_open_device, man getenv.
	 */
	rl_todo(3);
	return NULL;
}
