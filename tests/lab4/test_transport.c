/* test_transport.c: Lab 4 step 4: RC runs anywhere, SRD only on EFA with an SRD build. */
#include <string.h>

#include "fixture.h"

RL_TEST(rc_is_available_on_this_device, .step = 4, .points = 1)
{
	struct ibv_context *ctx = fx_open_ctx();
	int ret = lab4_check_transport(ctx, LAB4_RC);

	ck_assert_msg(ret == 0, "expected 0 for RC on %s, got %d (%s)", rl_test_device(), ret,
		      strerror(-ret));
	ibv_close_device(ctx);
}
END_TEST

RL_TEST(srd_is_refused_with_eopnotsupp_on_a_device_that_is_not_efa, .step = 4, .points = 1)
{
	struct ibv_context *ctx = fx_open_ctx();
	struct ibv_device_attr attr;
	int ret;

	ck_assert_int_eq(ibv_query_device(ctx, &attr), 0);
	ck_assert_msg(attr.vendor_id != LAB4_EFA_VENDOR_ID,
		      "this test needs a device that is not EFA");
	ret = lab4_check_transport(ctx, LAB4_SRD);
	ck_assert_msg(ret == -EOPNOTSUPP, "SRD on %s: expected -EOPNOTSUPP, got %d (%s)",
		      rl_test_device(), ret, strerror(-ret));
	ibv_close_device(ctx);
}
END_TEST
