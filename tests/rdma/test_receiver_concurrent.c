/*
 * test_receiver_concurrent.c: one receiver serves 32 senders at once, each
 * gets its own key and its own complete results line; a stuck sender does
 * not hold up the others.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../harness.h"
#include "receiver_fixture.h"

#define NSENDERS 32

/* Seconds on a clock that never jumps. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

START_TEST(test_32_concurrent_senders_each_get_their_key)
{
	static const char *const opts[] = { "--max-window", "64K", NULL };
	static struct rf_job jobs[NSENDERS];
	static uint8_t data[NSENDERS][140000];
	char ids[NSENDERS][16], key[RCV_KEY_LEN + 1], line[1024];
	struct rf_receiver rf;
	int i, ok = 0;

	rf_start(&rf, opts);
	for (i = 0; i < NSENDERS; i++) {
		snprintf(ids[i], sizeof(ids[i]), "student%02d", i);
		rf_fill(data[i], sizeof(data[i]), (unsigned)i);
		jobs[i].o = rf_sender(&rf, data[i], 70000 + (uint64_t)i * 1999, ids[i]);
		rf_run(&jobs[i]);
	}
	for (i = 0; i < NSENDERS; i++) {
		rf_join(&jobs[i]);
		rf_expected_key(&rf, ids[i], key);
		if (jobs[i].ret == 0 && !strcmp(jobs[i].r.key, key))
			ok++;
		else
			fprintf(stderr, "sender %s: expected key %s, got '%s' (%s)\n", ids[i], key,
				jobs[i].r.key, jobs[i].r.what);
	}
	ck_assert_msg(ok == NSENDERS, "expected %d senders with their key, got %d (see stderr)",
		      NSENDERS, ok);
	ck_assert_msg(rf_count_lines(&rf) == NSENDERS, "expected %d results lines, got %d",
		      NSENDERS, rf_count_lines(&rf));
	for (i = 0; i < NSENDERS; i++) {
		ck_assert_msg(rf_wait_line(&rf, jobs[i].r.peer, 0, line, sizeof(line)),
			      "no results line for %s (%s)", ids[i], jobs[i].r.peer);
		ck_assert_msg(strstr(line, ids[i]) && strstr(line, "\"key_issued\":true") &&
				      strstr(line, "\"step\":7") && strstr(line, "\"error\":null"),
			      "%s: expected a complete line, got %s", ids[i], line);
	}
	rf_stop(&rf);
}
END_TEST

START_TEST(test_a_stuck_sender_does_not_delay_the_others)
{
	static const char *const opts[] = { "--max-window", "64K", "--idle-timeout", "60s", NULL };
	static uint8_t data[100000];
	struct rf_job stuck, good[8];
	char key[RCV_KEY_LEN + 1], ids[8][16];
	struct rf_receiver rf;
	double start, took;
	int i;

	rf_fill(data, sizeof(data), 3);
	rf_start(&rf, opts);
	stuck.o = rf_sender(&rf, data, sizeof(data), "stuck");
	stuck.o.misbehave = RS_STALL;
	stuck.o.timeout_ms = rf_timeout_ms(15000);
	rf_run(&stuck);
	start = now_s();
	for (i = 0; i < 8; i++) {
		snprintf(ids[i], sizeof(ids[i]), "quick%d", i);
		good[i].o = rf_sender(&rf, data, sizeof(data), ids[i]);
		rf_run(&good[i]);
	}
	for (i = 0; i < 8; i++) {
		ck_assert_msg(rf_join(&good[i]) == 0, "sender %d: expected a key, got: %s", i,
			      good[i].r.what);
		rf_expected_key(&rf, good[i].o.id, key);
		ck_assert_msg(!strcmp(good[i].r.key, key), "sender %d: expected key %s, got %s", i,
			      key, good[i].r.key);
	}
	took = now_s() - start;
	ck_assert_msg(took < rf_timeout_ms(12000) / 1000.0,
		      "expected 8 senders to finish well before the stuck one times out, took "
		      "%.1f s",
		      took);
	rf_join(&stuck);
	ck_assert_msg(!stuck.r.got_error && stuck.ret != 0,
		      "expected the stuck sender to still be waiting when it gave up, got: %s",
		      stuck.r.what);
	rf_stop(&rf);
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("receiver: concurrency");
	TCase *tc = tcase_create("concurrent");

	tcase_set_timeout(tc, RL_TEST_TIMEOUT_RDMA * 2);
	tcase_add_test(tc, test_32_concurrent_senders_each_get_their_key);
	tcase_add_test(tc, test_a_stuck_sender_does_not_delay_the_others);
	suite_add_tcase(s, tc);
	return s;
}
