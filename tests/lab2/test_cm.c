/* test_cm.c: Lab 2 step 1: rdma_cm, against the reference peer. */
#include <string.h>

#include "fixture.h"
#include "lab2.h"

/* Step 1 */

RL_TEST(client_resolves_and_connects_to_the_reference_server, .step = 1, .points = 2)
{
	struct ref_opts o = ref_default();
	struct lab2_conn c = { .timeout_ms = FX_TIMEOUT_MS };
	struct ref_peer r;

	o.quit_after = 0;
	ref_server_start(&r, &o);
	fx_ok(lab2_resolve(&c, rl_test_addr(), r.port), "lab2_resolve", 1);
	ck_assert_msg(c.cm_ch && c.id && c.id->verbs,
		      "expected lab2_resolve to set c->cm_ch and c->id, with id->verbs the device");
	fx_cm_resources(&c);
	fx_ok(lab2_connect(&c), "lab2_connect", 1);
	ref_join(&r);
	ck_assert_msg(r.established, "expected the reference server to see the connection, %s",
		      r.why[0] ? r.why : "it did not");
	fx_cm_close(&c);
}
END_TEST

RL_TEST(connect_asks_the_server_for_a_finite_rnr_retry, .step = 1, .points = 1)
{
	struct ref_opts o = ref_default();
	struct lab2_conn c = { .timeout_ms = FX_TIMEOUT_MS };
	struct ref_peer r;

	o.quit_after = 0;
	o.rnr_retry = 3; /* what the server asks of us: not what we ask of it */
	ref_server_start(&r, &o);
	fx_ok(lab2_resolve(&c, rl_test_addr(), r.port), "lab2_resolve", 1);
	fx_cm_resources(&c);
	fx_ok(lab2_connect(&c), "lab2_connect", 1);
	ref_join(&r);
	/* rnr_retry_count is what the PEER's QP uses (man rdma_connect). */
	ck_assert_msg(r.qp_rnr_retry == LAB2_RNR_RETRY,
		      "expected the server's QP to resend RNR-NAKed SENDs %d times "
		      "(rnr_retry_count %d), got %u%s",
		      LAB2_RNR_RETRY, LAB2_RNR_RETRY, r.qp_rnr_retry,
		      r.qp_rnr_retry == 7 ? " (7: for ever)" : "");
	fx_cm_close(&c);
}
END_TEST

RL_TEST(server_listens_and_accepts_the_reference_client, .step = 1, .points = 2)
{
	struct ref_opts o = ref_default();
	struct lab2_conn c = { .timeout_ms = FX_TIMEOUT_MS };
	uint16_t port = rl_test_free_port();
	struct ref_peer r;
	int ret;

	o.quit_after = 0;
	fx_ok(lab2_listen(&c, port), "lab2_listen", 1);
	ref_client_start(&r, port, &o);
	ret = lab2_get_request(&c);
	if (!ret && !c.id)
		ck_abort_msg(
			"expected lab2_get_request to set c->id to the new connection, got NULL");
	if (!ret) {
		fx_cm_resources(&c);
		ret = lab2_accept(&c);
	}
	ref_join(&r);
	fx_ok(ret, "lab2_listen, lab2_get_request and lab2_accept", 1);
	ck_assert_msg(r.established, "expected the reference client to connect, %s",
		      r.why[0] ? r.why : "it did not");
	fx_cm_close(&c);
}
END_TEST

RL_TEST(connecting_where_nobody_listens_is_refused_in_bounded_time, .step = 1, .points = 1)
{
	struct lab2_conn c = { .timeout_ms = FX_TIMEOUT_MS };
	long start;
	int ret;

	fx_ok(lab2_resolve(&c, rl_test_addr(), rl_test_free_port()), "lab2_resolve", 1);
	fx_cm_resources(&c);
	start = fx_now_ms();
	ret = lab2_connect(&c);
	ck_assert_msg(ret == -ECONNREFUSED,
		      "expected -ECONNREFUSED (%d) from lab2_connect, got %d (%s)", -ECONNREFUSED,
		      ret, strerror(-ret));
	ck_assert_msg(fx_now_ms() - start < FX_TIMEOUT_MS + 1000,
		      "expected the refusal within the %d ms timeout, took %ld ms", FX_TIMEOUT_MS,
		      fx_now_ms() - start);
	fx_cm_close(&c);
}
END_TEST

RL_TEST(get_request_times_out_when_no_client_comes, .step = 1, .points = 1)
{
	struct lab2_conn c = { .timeout_ms = 300 };
	long start, took;
	int ret;

	fx_ok(lab2_listen(&c, rl_test_free_port()), "lab2_listen", 1);
	start = fx_now_ms();
	ret = lab2_get_request(&c);
	took = fx_now_ms() - start;
	ck_assert_msg(ret == -ETIMEDOUT,
		      "expected -ETIMEDOUT (%d) from lab2_get_request, got %d (%s)", -ETIMEDOUT,
		      ret, strerror(-ret));
	ck_assert_msg(took >= 250 && took < 2000, "expected to wait about 300 ms, waited %ld ms",
		      took);
	fx_cm_close(&c);
}
END_TEST

RL_TEST(resolving_an_address_that_is_not_an_ip_fails_cleanly, .step = 1, .points = 1)
{
	struct lab2_conn c = { .timeout_ms = 300 };
	int ret = lab2_resolve(&c, "not-an-address", 7471);

	ck_assert_msg(ret < 0 && ret != -ENOSYS,
		      "expected a negative errno from lab2_resolve, got %d (%s)", ret,
		      strerror(-ret));
	fx_cm_close(&c);
}
END_TEST
