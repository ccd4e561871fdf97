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
	/* BEGIN SOLUTION step 1
	 * Ask libibverbs for the devices. Decide where *num comes from, what
	 * an empty list means here, and who frees the array on each path.
	 * Read: man ibv_get_device_list (RETURN VALUE, NOTES).
	 * stub: rl_todo(1);
	 * stub: return NULL;
	 */
	struct ibv_device **list = ibv_get_device_list(num);

	if (!list) {
		perror("ibv_get_device_list");
		return NULL;
	}
	if (*num == 0) {
		fprintf(stderr, "No RDMA devices found (is rdma_rxe loaded? run 'make doctor')\n");
		ibv_free_device_list(list);
		return NULL;
	}
	return list;
	/* END SOLUTION */
}

/*
 * Step 2. Write one line into LINE describing DEV without opening it:
 * name, GUID (as sysfs writes it, 0123:4567:89ab:cdef), node type and
 * transport. Returns 0, or -ENOSPC when LINE is too short.
 */
int lab0_describe_device(struct ibv_device *dev, char *line, size_t len)
{
	/* BEGIN SOLUTION step 2
	 * A device can be described before it is opened. Decide in what byte
	 * order its GUID comes and what snprintf's count says about a cut line.
	 * Read: man ibv_get_device_guid, man endian, man 3 snprintf.
	 * stub: return rl_todo(2);
	 */
	uint64_t guid = be64toh(ibv_get_device_guid(dev));
	int n;

	n = snprintf(line, len, "%-8s guid %04x:%04x:%04x:%04x  node %s  transport %s",
		     ibv_get_device_name(dev), (unsigned)(guid >> 48) & 0xffff,
		     (unsigned)(guid >> 32) & 0xffff, (unsigned)(guid >> 16) & 0xffff,
		     (unsigned)guid & 0xffff, ibv_node_type_str(dev->node_type),
		     lab0_transport_str(dev->transport_type));
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return 0;
	/* END SOLUTION */
}

/*
 * Step 3. Open the device the user chose: NAME and RDMALAB_DEVICE may each
 * name one of LIST; with neither, the first. Returns its context, or NULL
 * after printing why.
 */
struct ibv_context *lab0_open_device(struct ibv_device **list, int num, const char *name)
{
	/* BEGIN SOLUTION step 3
	 * Decide which source wins when both name a device, and what a name
	 * no device has gets. The context is what every later verb takes.
	 * Read: man ibv_open_device, man getenv.
	 * stub: rl_todo(3);
	 * stub: return NULL;
	 */
	struct ibv_device *dev = NULL;
	struct ibv_context *ctx;
	int i;

	if (!name)
		name = getenv("RDMALAB_DEVICE");
	if (!name || !*name) {
		dev = num > 0 ? list[0] : NULL;
	} else {
		for (i = 0; i < num && !dev; i++)
			if (strcmp(ibv_get_device_name(list[i]), name) == 0)
				dev = list[i];
	}
	if (!dev) {
		fprintf(stderr, "No RDMA device named %s (ibv_devices lists them)\n",
			name ? name : "(any)");
		return NULL;
	}
	ctx = ibv_open_device(dev);
	if (!ctx) {
		fprintf(stderr, "ibv_open_device %s: %s\n", ibv_get_device_name(dev),
			strerror(errno));
		return NULL;
	}
	return ctx;
	/* END SOLUTION */
}
