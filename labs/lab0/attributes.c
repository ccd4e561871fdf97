/* attributes.c: Lab 0 steps 4 and 5: what the device and each of its ports can do. */
#include <string.h>

#include "lab0.h"

/*
 * Step 4. Fill ATTR with the limits and capabilities of the open device
 * CTX. Returns 0, or a negative errno after printing why.
 */
int lab0_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
	/* TODO step 4
	 * Ask the device for its limits: programs size their queues from them.
	 * Decide how the verb's failure becomes this function's negative errno.
	 * Read: man ibv_query_device (RETURN VALUE).
	 */
	return rl_todo(4);
}

/*
 * Step 5. Fill ATTR with the state of port PORT (numbered from 1) of CTX.
 * Returns 0, or a negative errno after printing why.
 */
int lab0_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr)
{
	/* TODO step 5
	 * Ask about one port. Decide who counts PORT, and from what: read how
	 * main.c counts it and how the verb does. Failures as in step 4.
	 * Read: man ibv_query_port.
	 */
	return rl_todo(5);
}
