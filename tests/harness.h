/* harness.h: what every Check test program shares (see tests/harness.c). */
#ifndef RDMALAB_TEST_HARNESS_H
#define RDMALAB_TEST_HARNESS_H

#include <check.h>
#include <stdint.h>

/*
 * Each tests/{unit,rdma}/test_*.c defines this and nothing else global:
 * the harness's main() runs the suite it returns.
 */
Suite *rl_test_suite(void);

/*
 * Per-test timeout in seconds for hang detection only. Check multiplies it
 * by CK_TIMEOUT_MULTIPLIER, the one knob for slow machines. The grader
 * shortens it with RDMALAB_TEST_TIMEOUT (seconds, before the multiplier), so
 * a student's hanging step costs seconds, not minutes.
 */
#define RL_TEST_TIMEOUT_UNIT rl_test_timeout(10)
#define RL_TEST_TIMEOUT_RDMA rl_test_timeout(120)
double rl_test_timeout(double seconds);

/*
 * The RDMA device the environment names (RDMALAB_DEVICE, set by vm/run-rdma).
 * Fails the calling test, never skips it, when no device is named.
 */
const char *rl_test_device(void);

/* The GID index the environment names (RDMALAB_GID_INDEX), or fails. */
int rl_test_gid_index(void);

/* The device port the environment names (RDMALAB_IB_PORT), else 1. */
uint8_t rl_test_ib_port(void);

/* The IPv4 address of the device (RDMALAB_ADDR), or fails. */
const char *rl_test_addr(void);

/* A TCP port free on this machine now, for a test's server to listen on. */
uint16_t rl_test_free_port(void);

#endif
