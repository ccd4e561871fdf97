/*
 * test_program.c: the lab4 program as a whole: serve and send, run as child
 * processes, print the contract lines, and say "receiver bad" with exit 1
 * when the announced hash differs.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

/* Serve and send a file of SIZE bytes with EXTRA send options; both runs into SERVE, SEND. */
static void transfer(uint64_t size, const char *extra, struct fx_run *serve, struct fx_run *send)
{
	char port[16], path[64];
	const char *serve_args[] = { "serve", "-p", port, "--timeout", "30", NULL };
	const char *send_args[] = { "send",         "-p",      port,  "--timeout",
				    "30",           "--chunk", "64K", extra ? extra : "-v",
				    rl_test_addr(), path,      NULL };
	int pid;

	snprintf(port, sizeof(port), "%u", rl_test_free_port());
	fx_make_file(path, sizeof(path), size);
	pid = fx_spawn(serve_args, "serve");
	fx_reap(fx_spawn(send_args, "send"), "send", 90000, send);
	fx_reap(pid, "serve", 10000, serve);
	unlink(path);
}

START_TEST(send_prints_the_contract_line_and_receiver_good)
{
	static const uint64_t sizes[] = { 0, 1, (3 << 20) + 5 };
	struct fx_run serve, send;
	unsigned long long n;
	unsigned chunks;
	double h, t, s;
	char verdict[16];
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		transfer(sizes[i], NULL, &serve, &send);
		ck_assert_msg(send.status == 0,
			      "%llu bytes: expected send to exit 0, got %d:\n%s%s",
			      (unsigned long long)sizes[i], send.status, send.out, send.err);
		ck_assert_msg(sscanf(send.out,
				     "lab4: sent %llu bytes in %u chunks: hash %lf s, transfer %lf "
				     "s, total %lf s, receiver %15s",
				     &n, &chunks, &h, &t, &s, verdict) == 6,
			      "expected the contract line, got:\n%s", send.out);
		ck_assert_msg(
			n == sizes[i] && chunks == lab4_nchunks(sizes[i], 65536) &&
				!strcmp(verdict, "good") && t <= s,
			"%llu bytes: expected %llu bytes in %u chunks, receiver good, got:\n%s",
			(unsigned long long)sizes[i], (unsigned long long)sizes[i],
			lab4_nchunks(sizes[i], 65536), send.out);
		ck_assert_msg(serve.status == 0 && strstr(serve.out, "good"),
			      "%llu bytes: expected serve to exit 0 saying good, got %d:\n%s%s",
			      (unsigned long long)sizes[i], serve.status, serve.out, serve.err);
	}
}
END_TEST

START_TEST(send_says_receiver_bad_and_exits_1_when_the_hash_differs)
{
	struct fx_run serve, send;

	transfer(100000, "--fault-bad-hash", &serve, &send);
	ck_assert_msg(send.status == 1 && strstr(send.out, "receiver bad"),
		      "expected exit 1 and \"receiver bad\", got %d:\n%s%s", send.status, send.out,
		      send.err);
	ck_assert_msg(serve.status == 1, "expected serve to exit 1 on a bad hash, got %d",
		      serve.status);
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("lab4 program");
	TCase *tc = tcase_create("step2");

	tcase_add_test(tc, send_prints_the_contract_line_and_receiver_good);
	tcase_add_test(tc, send_says_receiver_bad_and_exits_1_when_the_hash_differs);
	tcase_set_timeout(tc, RL_TEST_TIMEOUT_RDMA);
	suite_add_tcase(s, tc);
	return s;
}
