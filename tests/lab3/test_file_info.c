/* test_file_info.c: Lab 3 step 2: FILE_INFO, as the reference receiver reads it. */
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "reference.h"

/* Connect to RF and send FILE_INFO for RFILE (hashed by the test) with the lab's code. */
static void send_file_info(struct rf_receiver *rf, struct lab3_conn *c, struct ref_file *rfile)
{
	int ret;

	ref_connect(c, rf);
	memcpy(rfile->f.sha256, rfile->sha256, 32);
	ret = lab3_send_file_info(c, &rfile->f);
	ck_assert_msg(ret == 0, "expected lab3_send_file_info to return 0, got %d (%s)", ret,
		      strerror(-ret));
}

RL_TEST(file_info_announces_the_size_the_receiver_logs, .step = 2, .points = 2)
{
	struct rf_receiver rf;
	struct ref_file rfile;
	struct lab3_conn c;
	struct rl_msg_window w;
	char line[1024];

	ref_start(&rf, NULL);
	ref_make_file(&rfile, 4097);
	send_file_info(&rf, &c, &rfile);
	ref_wait_window(&c, &w);
	ck_assert_msg(w.offset == 0 && w.len == 4097,
		      "expected window 0 of all 4097 bytes, got %u bytes at %llu", w.len,
		      (unsigned long long)w.offset);
	ref_finish_line(&rf, &c, &rfile, line, sizeof(line));
	ck_assert_msg(strstr(line, "\"file_size\":4097,") && ref_line_step(line) == 3,
		      "expected file_size 4097 and step 3 (window) in the results line, got %s",
		      line);
	ref_drop_file(&rfile);
	rf_stop(&rf);
}
END_TEST

RL_TEST(file_info_carries_the_raw_hash_the_receiver_compares, .step = 2, .points = 2)
{
	struct rf_receiver rf;
	struct ref_file rfile;
	struct lab3_conn c;
	struct rl_msg_result result;
	char line[1024];

	ref_start(&rf, NULL);
	ref_make_file(&rfile, 1);
	send_file_info(&rf, &c, &rfile);
	ref_register(&c, &rfile);
	ref_send_windows(&c, &rfile);
	ref_done(&c, &result);
	ck_assert_msg(result.good == 1, "expected RESULT good for a 1-byte file (the receiver "
					"compares the 32 raw bytes of FILE_INFO's hash), got bad");
	ref_finish_line(&rf, &c, &rfile, line, sizeof(line));
	ck_assert_msg(strstr(line, "\"hash_ok\":true"), "expected hash_ok true, got %s", line);
	ref_drop_file(&rfile);
	rf_stop(&rf);
}
END_TEST

RL_TEST(file_info_of_an_empty_file_needs_no_window, .step = 2, .points = 1)
{
	struct rf_receiver rf;
	struct ref_file rfile;
	struct lab3_conn c;
	struct rl_msg_result result;
	char line[1024];

	ref_start(&rf, NULL);
	ref_make_file(&rfile, 0);
	send_file_info(&rf, &c, &rfile);
	ref_done(&c, &result);
	ck_assert_msg(result.good == 1 && result.received == 0,
		      "expected RESULT good of 0 bytes after FILE_INFO and DONE, got %s of %llu",
		      result.good ? "good" : "bad", (unsigned long long)result.received);
	ref_finish_line(&rf, &c, &rfile, line, sizeof(line));
	ck_assert_msg(strstr(line, "\"file_size\":0,") && ref_line_step(line) == 5,
		      "expected file_size 0 and step 5 (result), got %s", line);
	ref_drop_file(&rfile);
	rf_stop(&rf);
}
END_TEST
