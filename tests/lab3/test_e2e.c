/*
 * test_e2e.c: Lab 3 end to end, step 8: the lab3 program, the kit's main.c
 * with your files, against the reference receiver. Each run sends a fresh
 * file of random bytes as a fresh student ID, and the key must be the one
 * the receiver gave that ID. Under the grader the receiver is the grader's
 * own, with a fresh secret you cannot read (tests/lab3/e2e.h). How the
 * program ends when the receiver fails it: test_sender.c.
 *
 * Each receiver gives up on a sender silent for 10 s at one step (30 s by
 * default): no step of a working sender takes a tenth of that here, even
 * under emulation, and a sender that never sends DONE learns so in 10 s.
 */
#include "reference.h"
#include "e2e.h"

#define MIB (1024 * 1024)

static void an_empty_file(struct rl_case *c)
{
	e2e_setup(c, 0);
}

RL_GRADED(e2e_an_empty_file_earns_the_key, .step = 8, .points = 2, .whole = true, .limit = 30,
	  .receiver = "--idle-timeout 10s", .setup = an_empty_file, .check = e2e_earns_the_key);

static void a_small_odd_sized_file(struct rl_case *c)
{
	e2e_setup(c, 2 * ref_random(0, 5000) + 1);
}

RL_GRADED(e2e_a_small_odd_sized_file_earns_the_key, .step = 8, .points = 2, .whole = true,
	  .limit = 30, .receiver = "--idle-timeout 10s", .setup = a_small_odd_sized_file,
	  .check = e2e_earns_the_key);

static void a_file_of_many_small_windows(struct rl_case *c)
{
	e2e_setup(c, ref_random(150000, 32768));
}

RL_GRADED(e2e_a_file_of_many_small_windows_earns_the_key, .step = 8, .points = 3, .whole = true,
	  .limit = 30, .receiver = "--idle-timeout 10s --fault-window 4096",
	  .setup = a_file_of_many_small_windows, .check = e2e_earns_the_key);

static void a_large_file(struct rl_case *c)
{
	e2e_setup(c, ref_random(16 * MIB, 32768));
}

RL_GRADED(e2e_a_large_file_earns_the_key, .step = 8, .points = 3, .whole = true, .limit = 30,
	  .receiver = "--idle-timeout 10s", .setup = a_large_file, .check = e2e_earns_the_key);

static void a_file_of_100_kb(struct rl_case *c)
{
	e2e_setup(c, ref_random(100000, 32768));
}

RL_GRADED(e2e_a_slow_receiver_is_waited_for, .step = 8, .points = 1, .whole = true, .limit = 30,
	  .receiver = "--idle-timeout 10s --fault-delay 5:1500", .setup = a_file_of_100_kb,
	  .check = e2e_earns_the_key);
