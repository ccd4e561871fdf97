/*
 * test_e2e.c: Lab 3 end to end, step 8: the lab3 program, the kit's main.c
 * with your files, against the reference receiver. Each run sends a fresh
 * file of random bytes as a fresh student ID, and the key must be the one
 * the receiver gave that ID. Under the grader the receiver is the grader's
 * own, with a fresh secret you cannot read (tests/lab3/e2e.h).
 *
 * Each receiver gives up on a sender silent for 10 s at one step (30 s by
 * default): no step of a working sender takes a tenth of that here, even
 * under emulation, and a sender that never sends DONE learns so in 10 s.
 */
#include "../harness.h"
#include "e2e.h"

#define MIB (1024 * 1024)

RL_TEST(e2e_an_empty_file_earns_the_key, .step = 8, .points = 2, .limit = 30,
	.receiver = "--idle-timeout 10s")
{
	e2e_run(0, E2E_KEY);
}
END_TEST

RL_TEST(e2e_a_small_odd_sized_file_earns_the_key, .step = 8, .points = 2, .limit = 30,
	.receiver = "--idle-timeout 10s")
{
	e2e_run(2 * e2e_random(0, 5000) + 1, E2E_KEY);
}
END_TEST

RL_TEST(e2e_a_file_of_many_small_windows_earns_the_key, .step = 8, .points = 3, .limit = 30,
	.receiver = "--idle-timeout 10s --fault-window 4096")
{
	e2e_run(e2e_random(150000, 32768), E2E_KEY);
}
END_TEST

RL_TEST(e2e_a_large_file_earns_the_key, .step = 8, .points = 3, .limit = 30,
	.receiver = "--idle-timeout 10s")
{
	e2e_run(e2e_random(16 * MIB, 32768), E2E_KEY);
}
END_TEST

RL_TEST(e2e_a_slow_receiver_is_waited_for, .step = 8, .points = 1, .limit = 30,
	.receiver = "--idle-timeout 10s --fault-delay 5:1500")
{
	e2e_run(e2e_random(100000, 32768), E2E_KEY);
}
END_TEST

RL_TEST(e2e_a_bad_hash_is_reported_without_a_key, .step = 8, .points = 2, .limit = 30,
	.receiver = "--idle-timeout 10s --fault-bad-hash")
{
	e2e_run(e2e_random(100000, 32768), E2E_BAD);
}
END_TEST

RL_TEST(e2e_a_dropped_connection_ends_the_sender_cleanly, .step = 8, .points = 2, .limit = 30,
	.receiver = "--idle-timeout 10s --fault-drop 4")
{
	e2e_run(e2e_random(100000, 32768), E2E_DROPPED);
}
END_TEST
