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
	/* BEGIN SOLUTION step 4
	 * How to recognise a device that runs SRD, and what a build without SRD
	 * support says: docs/lab4.md#step-4 and docs/efa.md.
	 * Read: man ibv_query_device, man efadv_query_device.
	 * stub: return rl_todo(4);
	 */
	struct ibv_device_attr attr;
	const char *dev = ibv_get_device_name(ctx->device);
	int ret;

	if (transport == LAB4_RC)
		return 0;
	ret = ibv_query_device(ctx, &attr);
	if (ret)
		return rl_fail("ibv_query_device", ret, "%s", dev);
	if (attr.vendor_id != LAB4_EFA_VENDOR_ID) {
		rl_err("SRD: %s is not an AWS EFA device (vendor 0x%x): use RC here (docs/efa.md)",
		       dev, attr.vendor_id);
		return -EOPNOTSUPP;
	}
#ifdef LAB4_WITH_SRD
	{
		struct efadv_device_attr efa = { 0 };

		ret = efadv_query_device(ctx, &efa, sizeof(efa));
		if (ret)
			return rl_fail("efadv_query_device", ret, "%s", dev);
		if (efa.max_rdma_size == 0) {
			rl_err("SRD: %s does no RDMA (an older EFA generation): see docs/efa.md",
			       dev);
			return -EOPNOTSUPP;
		}
		return 0;
	}
#else
	rl_err("SRD: this build has no SRD support: rebuild with make LAB4_SRD=1 (docs/efa.md)");
	return -EOPNOTSUPP;
#endif
	/* END SOLUTION */
}
