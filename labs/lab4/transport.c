/*
 * transport.c: Lab 4 step 4: which transport this device and this build can
 * run. RC runs everywhere; SRD needs an AWS EFA device and a build made
 * with LAB4_SRD=1 where infiniband/efadv.h is installed (docs/efa.md).
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
 * SRD only in a build made with LAB4_SRD=1 and when CTX is an EFA device
 * that does RDMA. Otherwise -EOPNOTSUPP after one line saying why and what to do.
 */
int lab4_check_transport(struct ibv_context *ctx, enum lab4_transport transport)
{
	/* TODO step 4
	 * How to recognise a device that runs SRD, and what a build without SRD
	 * support says: docs/lab4.md#step-4 and docs/efa.md.
	 * Read: man ibv_query_device, man efadv_query_device.
	 */
	return rl_todo(4);
}
