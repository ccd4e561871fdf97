/*
 * transport.c: Lab 4 step 4: which transport this device and this build can
 * run. RC runs everywhere; SRD needs an AWS EFA device that does RDMA write
 * and a build made with LAB4_SRD=1 (-DLAB4_WITH_SRD) against rdma-core 46 or
 * newer, whose efadv.h has EFA's RDMA write (-DLAB4_EFADV_RDMA_WRITE then;
 * docs/efa.md).
 */
#include "lab4.h"

#ifdef LAB4_WITH_SRD
#include <infiniband/efadv.h>
#endif

const char *lab4_transport_name(enum lab4_transport transport)
{
	return transport == LAB4_SRD ? "SRD" : "RC";
}

/*
 * Step 4. Return 0 when CTX can run TRANSPORT with this build: RC always;
 * SRD only in a build made with LAB4_SRD=1 against rdma-core 46 or newer,
 * and when CTX is an EFA device that does RDMA write. Otherwise -EOPNOTSUPP
 * after one line saying why and what to do.
 */
int lab4_check_transport(struct ibv_context *ctx, enum lab4_transport transport)
{
	/* TODO step 4
	 * How to recognise a device that runs SRD, whether it does RDMA write,
	 * and what a build without SRD or without EFA's RDMA write (rdma-core
	 * older than 46) says: docs/lab4.md#step-4 and docs/efa.md.
	 * Read: man ibv_query_device, man efadv_query_device.
	 */
	return rl_todo(4);
}
