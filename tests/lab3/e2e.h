/*
 * e2e.h: Lab 3 end to end. The lab3 program, the kit's main.c with the
 * student's files, sends a fresh file of random bytes as a fresh student ID
 * to the reference receiver its test declares (.receiver in
 * tests/harness.h), and the check judges how the run ended: with the key
 * the receiver gave, never a hang. A test of a whole program has no act:
 * its check runs the program, with the test's time limit. (How it ends
 * when the receiver fails it: test_sender.c.)
 *
 * Under the grader (RDMALAB_RECEIVERS names its table) the receiver is one
 * the grader started, as root, with a fresh secret the test cannot read;
 * the check compares the SHA-256 of the key the sender printed with the
 * key_sha256 the receiver logged. Elsewhere (make check) the test starts
 * the receiver itself and checks the key the same way.
 */
#ifndef RDMALAB_LAB3_E2E_H
#define RDMALAB_LAB3_E2E_H

#include <stdint.h>

struct rl_case; /* tests/harness.h */

/* Setup: a file of SIZE random bytes, a fresh student ID, the test's receiver. */
void e2e_setup(struct rl_case *c, uint64_t size);

/* Check: run the lab3 program; it must exit 0 with the key of the student ID printed. */
void e2e_earns_the_key(struct rl_case *c);

#endif
