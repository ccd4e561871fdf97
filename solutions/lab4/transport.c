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
	/* BEGIN SOLUTION step 4
	 * How to recognise a device that runs SRD, whether it does RDMA write,
	 * and what a build without SRD or without EFA's RDMA write (rdma-core
	 * older than 46) says: docs/lab4.md#step-4 and docs/efa.md.
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
#if defined(LAB4_WITH_SRD) && defined(LAB4_EFADV_RDMA_WRITE)
	{
		/* This program posts RDMA writes: max_rdma_size is no answer,
		 * an EFA that only reads has one too. */
		struct efadv_device_attr efa = { 0 };

		ret = efadv_query_device(ctx, &efa, sizeof(efa));
		if (ret)
			return rl_fail("efadv_query_device", ret, "%s", dev);
		if (!(efa.device_caps & EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE)) {
			rl_err("SRD: %s does no RDMA write (an older EFA generation): see docs/efa.md",
			       dev);
			return -EOPNOTSUPP;
		}
		return 0;
	}
#elif defined(LAB4_WITH_SRD)
	rl_err("SRD: this build's rdma-core has no EFA RDMA write: rebuild with rdma-core 46 or newer (docs/efa.md)");
	return -EOPNOTSUPP;
#else
	rl_err("SRD: this build has no SRD support: rebuild with make LAB4_SRD=1 (docs/efa.md)");
	return -EOPNOTSUPP;
#endif
	/* END SOLUTION */
}
