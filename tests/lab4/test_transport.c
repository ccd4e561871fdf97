/*
 * test_transport.c: Lab 4 step 4: RC runs anywhere, SRD only on EFA with an
 * SRD build. The check asks the device itself whether it is EFA.
 */
#include <string.h>

#include "fixture.h"

static void check_rc(struct rl_case *c)
{
	struct ibv_context *ctx = fx_open_ctx();

	(void)c;
	rl_say_int("ret", lab4_check_transport(ctx, LAB4_RC));
	ibv_close_device(ctx);
}

static void rc_is_available(struct rl_case *c)
{
	long long ret = rl_said_int(c, "ret");

	rl_expect(c, ret == 0, "expected 0 for RC on %s, got %lld (%s)", rl_test_device(), ret,
		  strerror((int)-ret));
}

RL_GRADED(rc_is_available_on_this_device, .step = 4, .points = 1, .act = check_rc,
	  .check = rc_is_available);

static void check_srd(struct rl_case *c)
{
	struct ibv_context *ctx = fx_open_ctx();

	(void)c;
	rl_say_int("ret", lab4_check_transport(ctx, LAB4_SRD));
	ibv_close_device(ctx);
}

/* The device's vendor, asked here in the parent. */
static uint32_t vendor_id(void)
{
	struct ibv_context *ctx = fx_open_ctx();
	struct ibv_device_attr attr;

	ck_assert_int_eq(ibv_query_device(ctx, &attr), 0);
	ibv_close_device(ctx);
	return attr.vendor_id;
}
/* Step 4's question, asked for the check: hidden in every act. */
RL_HIDDEN(vendor_id, 0);

static void srd_is_refused(struct rl_case *c)
{
	long long ret = rl_said_int(c, "ret");

	if (rl_expect(c, vendor_id() != LAB4_EFA_VENDOR_ID,
		      "this test needs a device that is not EFA"))
		rl_expect(c, ret == -EOPNOTSUPP, "SRD on %s: expected -EOPNOTSUPP, got %lld (%s)",
			  rl_test_device(), ret, strerror((int)-ret));
}

RL_GRADED(srd_is_refused_with_eopnotsupp_on_a_device_that_is_not_efa, .step = 4, .points = 1,
	  .act = check_srd, .check = srd_is_refused);
