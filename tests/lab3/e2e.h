/*
 * e2e.h: Lab 3 end to end. The lab3 program, the kit's main.c with the
 * student's files, sends a fresh file of random bytes as a fresh student ID
 * to the reference receiver its test declares (.receiver in
 * tests/harness.h), and the test checks how the run ended: the key the
 * receiver gave, a clear failure, never a hang.
 *
 * Under the grader (RDMALAB_RECEIVERS names its table) the receiver is one
 * the grader started, as root, with a fresh secret the test cannot read;
 * the test checks the key the sender printed against the SHA-256 of the
 * key the receiver logged. Elsewhere (make check) the test starts the
 * receiver itself and checks the key the same way.
 */
#ifndef RDMALAB_LAB3_E2E_H
#define RDMALAB_LAB3_E2E_H

#include <stdint.h>

/* How a run must end. */
enum e2e_expect {
	E2E_KEY,     /* exit 0, the key of the student ID printed */
	E2E_BAD,     /* non-zero, after reading the RESULT that says the hash is bad */
	E2E_DROPPED, /* non-zero, after sending DONE, when the receiver drops the connection */
};

/* Run the lab3 program on a file of SIZE random bytes; fails the test unless it ends as EXPECT. */
void e2e_run(uint64_t size, enum e2e_expect expect);

/* A random number from LO to LO + SPAN - 1. */
uint64_t e2e_random(uint64_t lo, uint64_t span);

#endif
