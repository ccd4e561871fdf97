/* test_fw_error.c: known traps map to hints, failures read as one line, log levels parse. */
#include <string.h>

#include "../harness.h"
#include "rdmalab.h"

START_TEST(test_reg_mr_enomem_points_at_memlock_limit)
{
	enum rl_trap trap = rl_trap_of_errno("ibv_reg_mr", ENOMEM);

	ck_assert_msg(trap == RL_TRAP_MEMLOCK, "expected RL_TRAP_MEMLOCK, got %d", trap);
	ck_assert_msg(strstr(rl_hint(trap), "ulimit -l unlimited"),
		      "expected the hint to say 'ulimit -l unlimited', got: %s", rl_hint(trap));
	ck_assert_msg(strstr(rl_hint(trap), "make doctor"), "expected 'make doctor' in: %s",
		      rl_hint(trap));
}
END_TEST

START_TEST(test_modify_qp_einval_names_every_cause)
{
	enum rl_trap trap = rl_trap_of_errno("ibv_modify_qp RTR", EINVAL);

	ck_assert_msg(trap == RL_TRAP_QP_ATTR, "expected RL_TRAP_QP_ATTR, got %d", trap);
	ck_assert_msg(
		strstr(rl_hint(trap), "state") && strstr(rl_hint(trap), "mask") &&
			strstr(rl_hint(trap), "man ibv_modify_qp") &&
			strstr(rl_hint(trap), "RDMALAB_GID_INDEX"),
		"expected the state, the mask, man ibv_modify_qp and RDMALAB_GID_INDEX in: %s",
		rl_hint(trap));
	trap = rl_trap_of_errno("ibv_modify_qp INIT", EINVAL);
	ck_assert_msg(trap == RL_TRAP_QP_ATTR, "expected RL_TRAP_QP_ATTR for INIT, got %d", trap);
}
END_TEST

START_TEST(test_no_device_points_at_doctor)
{
	enum rl_trap trap = rl_trap_of_errno("ibv_get_device_list", ENODEV);

	ck_assert_msg(trap == RL_TRAP_NO_DEVICE, "expected RL_TRAP_NO_DEVICE, got %d", trap);
	ck_assert_msg(strstr(rl_hint(trap), "make doctor"), "expected 'make doctor' in: %s",
		      rl_hint(trap));
}
END_TEST

START_TEST(test_cm_timeout_asks_whether_peer_listens)
{
	enum rl_trap trap = rl_trap_of_errno("rdma_cm", ETIMEDOUT);

	ck_assert_msg(trap == RL_TRAP_CM_TIMEOUT, "expected RL_TRAP_CM_TIMEOUT, got %d", trap);
	ck_assert_msg(strstr(rl_hint(trap), "listening"), "expected 'listening' in: %s",
		      rl_hint(trap));
}
END_TEST

START_TEST(test_unrelated_errors_have_no_hint)
{
	enum rl_trap trap = rl_trap_of_errno("ibv_reg_mr", EFAULT);

	ck_assert_msg(trap == RL_TRAP_NONE, "ibv_reg_mr EFAULT: expected no trap, got %d", trap);
	trap = rl_trap_of_errno("ibv_modify_qp RTS", EIO);
	ck_assert_msg(trap == RL_TRAP_NONE, "RTS EIO: expected no trap, got %d", trap);
	ck_assert_msg(rl_hint(RL_TRAP_NONE) == NULL, "expected no hint for RL_TRAP_NONE");
	ck_assert_msg(rl_hint((enum rl_trap)999) == NULL, "expected no hint out of range");
}
END_TEST

START_TEST(test_wc_rnr_and_remote_access_map_to_hints)
{
	enum rl_trap trap = rl_trap_of_wc(IBV_WC_RNR_RETRY_EXC_ERR);

	ck_assert_msg(trap == RL_TRAP_RNR, "RNR: expected RL_TRAP_RNR, got %d", trap);
	ck_assert_msg(strstr(rl_hint(trap), "receive"), "expected 'receive' in: %s", rl_hint(trap));
	trap = rl_trap_of_wc(IBV_WC_REM_ACCESS_ERR);
	ck_assert_msg(trap == RL_TRAP_REMOTE_ACCESS, "expected RL_TRAP_REMOTE_ACCESS, got %d",
		      trap);
	ck_assert_msg(strstr(rl_hint(trap), "rkey"), "expected 'rkey' in: %s", rl_hint(trap));
	trap = rl_trap_of_wc(IBV_WC_SUCCESS);
	ck_assert_msg(trap == RL_TRAP_NONE, "success: expected no trap, got %d", trap);
}
END_TEST

START_TEST(test_failure_line_names_verb_object_reason_and_hint)
{
	char line[512];

	rl_format_failure(line, sizeof(line), "ibv_reg_mr 4096 bytes", strerror(ENOMEM),
			  RL_TRAP_MEMLOCK);
	ck_assert_msg(
		!strncmp(line, "ibv_reg_mr 4096 bytes: Cannot allocate memory (hint: ", 51),
		"expected 'ibv_reg_mr 4096 bytes: Cannot allocate memory (hint: ...', got: %s",
		line);
	ck_assert_msg(!strchr(line, '\n'), "expected one line, got: %s", line);
	rl_format_failure(line, sizeof(line), "connect 10.0.0.1:7471", "Connection refused",
			  RL_TRAP_NONE);
	ck_assert_msg(!strcmp(line, "connect 10.0.0.1:7471: Connection refused"),
		      "expected 'connect 10.0.0.1:7471: Connection refused', got: %s", line);
}
END_TEST

START_TEST(test_fail_returns_negative_errno_either_sign)
{
	int ret = rl_fail("ibv_alloc_pd", ENOMEM, "on %s", "rxe0");

	ck_assert_msg(ret == -ENOMEM, "positive errno: expected %d, got %d", -ENOMEM, ret);
	ret = rl_fail("ibv_alloc_pd", -EPERM, "on %s", "rxe0");
	ck_assert_msg(ret == -EPERM, "negative errno: expected %d, got %d", -EPERM, ret);
	ret = rl_fail("ibv_alloc_pd", 0, "on %s", "rxe0");
	ck_assert_msg(ret == -EIO, "errno 0: expected %d, got %d", -EIO, ret);
}
END_TEST

START_TEST(test_log_level_parses_numbers_and_names)
{
	ck_assert_int_eq(rl_log_parse_level("0"), RL_LOG_ERROR);
	ck_assert_int_eq(rl_log_parse_level("1"), RL_LOG_INFO);
	ck_assert_int_eq(rl_log_parse_level("2"), RL_LOG_DEBUG);
	ck_assert_msg(rl_log_parse_level("9") == RL_LOG_DEBUG, "expected 9 to mean debug");
	ck_assert_int_eq(rl_log_parse_level("info"), RL_LOG_INFO);
	ck_assert_int_eq(rl_log_parse_level("debug"), RL_LOG_DEBUG);
	ck_assert_msg(rl_log_parse_level("loud") == -EINVAL, "expected -EINVAL for 'loud'");
	ck_assert_msg(rl_log_parse_level("") == -EINVAL, "expected -EINVAL for ''");
	ck_assert_msg(rl_log_parse_level(NULL) == -EINVAL, "expected -EINVAL for NULL");
}
END_TEST

START_TEST(test_log_level_clamps_to_known_levels)
{
	rl_log_set_level(7);
	ck_assert_msg(rl_log_level() == RL_LOG_DEBUG, "expected debug, got %d", rl_log_level());
	rl_log_set_level(-3);
	ck_assert_msg(rl_log_level() == RL_LOG_ERROR, "expected error, got %d", rl_log_level());
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("framework error and log");
	TCase *tc = tcase_create("error");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_UNIT);
	tcase_add_test(tc, test_reg_mr_enomem_points_at_memlock_limit);
	tcase_add_test(tc, test_modify_qp_einval_names_every_cause);
	tcase_add_test(tc, test_no_device_points_at_doctor);
	tcase_add_test(tc, test_cm_timeout_asks_whether_peer_listens);
	tcase_add_test(tc, test_unrelated_errors_have_no_hint);
	tcase_add_test(tc, test_wc_rnr_and_remote_access_map_to_hints);
	tcase_add_test(tc, test_failure_line_names_verb_object_reason_and_hint);
	tcase_add_test(tc, test_fail_returns_negative_errno_either_sign);
	tcase_add_test(tc, test_log_level_parses_numbers_and_names);
	tcase_add_test(tc, test_log_level_clamps_to_known_levels);
	suite_add_tcase(s, tc);
	return s;
}
