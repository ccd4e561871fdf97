/* test_windows.c: Lab 3 steps 3 and 4: register the file, take windows, write them. */
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "reference.h"

static const char *const small_windows[] = { "--fault-window", "64K", NULL };

/* Step 3 */

RL_TEST(register_maps_the_whole_file_into_an_mr_of_the_pd, .step = 3, .points = 2)
{
	struct rf_receiver rf;
	struct ref_file rfile;
	struct lab3_conn c;
	char line[1024];
	int ret;

	ref_start(&rf, NULL);
	ref_make_file(&rfile, 300001);
	ref_connect(&c, &rf);
	ret = lab3_register_file(c.pd, &rfile.f);
	ck_assert_msg(ret == 0, "expected lab3_register_file to return 0, got %d (%s)", ret,
		      strerror(-ret));
	ck_assert_msg(rfile.f.data && rfile.f.mr, "expected f->data and f->mr set, got %p and %p",
		      (void *)rfile.f.data, (void *)rfile.f.mr);
	ck_assert_msg(!memcmp(rfile.f.data, rfile.bytes, rfile.size),
		      "expected f->data to hold the file's 300001 bytes, they differ");
	ck_assert_msg(
		rfile.f.mr->addr == rfile.f.data && rfile.f.mr->length == rfile.size &&
			rfile.f.mr->pd == c.pd,
		"expected an MR of the connection's PD over exactly the file, got %zu bytes at %p",
		rfile.f.mr->length, rfile.f.mr->addr);
	ref_finish_line(&rf, &c, &rfile, line, sizeof(line));
	ref_drop_file(&rfile);
	rf_stop(&rf);
}
END_TEST

RL_TEST(register_of_an_empty_file_makes_no_mr, .step = 3, .points = 1)
{
	struct ref_file rfile;
	struct ibv_context *ctx = NULL;
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_pd *pd;
	int i, ret;

	ck_assert_msg(list, "expected a device list");
	for (i = 0; list[i] && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), rl_test_device()))
			ctx = ibv_open_device(list[i]);
	ck_assert_msg(ctx, "expected to open %s", rl_test_device());
	pd = ibv_alloc_pd(ctx);
	ck_assert_ptr_nonnull(pd);
	ref_make_file(&rfile, 0);
	ret = lab3_register_file(pd, &rfile.f);
	ck_assert_msg(ret == 0, "expected 0 for a 0-byte file, got %d (%s)", ret, strerror(-ret));
	ck_assert_msg(!rfile.f.data && !rfile.f.mr,
		      "expected no mapping and no MR for 0 bytes (mmap and ibv_reg_mr refuse 0)");
	ref_drop_file(&rfile);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
}
END_TEST

RL_TEST(wait_window_returns_the_window_the_receiver_grants, .step = 3, .points = 2)
{
	struct rf_receiver rf;
	struct ref_file rfile;
	struct lab3_conn c;
	struct rl_msg_window w = { 0 };
	char line[1024];
	int ret;

	ref_start(&rf, small_windows);
	ref_make_file(&rfile, 300001);
	ref_connect(&c, &rf);
	ref_send_file_info(&c, &rfile, false);
	ret = lab3_wait_window(&c, &rfile.f, &w);
	ck_assert_msg(ret == 0, "expected lab3_wait_window to return 0, got %d (%s)", ret,
		      strerror(-ret));
	ck_assert_msg(w.index == 0 && w.offset == 0 && w.len == 65536 && w.addr && w.rkey,
		      "expected window 0 at offset 0 of 65536 bytes with an address and rkey, "
		      "got window %u at %llu of %u bytes, addr 0x%llx rkey 0x%x",
		      w.index, (unsigned long long)w.offset, w.len, (unsigned long long)w.addr,
		      w.rkey);
	/* The window is usable: write it with the test's code. */
	ref_register(&c, &rfile);
	ref_write_window(&c, &rfile, &w);
	ref_window_done(&c, &rfile, &w);
	ref_wait_window(&c, &w);
	ck_assert_msg(w.index == 1 && w.offset == 65536, "expected window 1 next, got %u", w.index);
	ref_finish_line(&rf, &c, &rfile, line, sizeof(line));
	ck_assert_msg(ref_line_step(line) == 3, "expected step 3 (window), got %s", line);
	ref_drop_file(&rfile);
	rf_stop(&rf);
}
END_TEST

/* Announce 300001 bytes, then let the lab's code judge window 0 against F as TWEAK left it. */
static void expect_window_refused(void (*tweak)(struct lab3_file *f), const char *what)
{
	struct rf_receiver rf;
	struct ref_file rfile;
	struct lab3_conn c;
	struct rl_msg_window w;
	char line[1024];
	int ret;

	ref_start(&rf, small_windows);
	ref_make_file(&rfile, 300001);
	ref_connect(&c, &rf);
	ref_send_file_info(&c, &rfile, false);
	tweak(&rfile.f);
	ret = lab3_wait_window(&c, &rfile.f, &w);
	ck_assert_msg(ret == -EPROTO, "%s: expected -EPROTO, got %d (%s)", what, ret,
		      strerror(-ret));
	ref_finish_line(&rf, &c, &rfile, line, sizeof(line));
	ref_drop_file(&rfile);
	rf_stop(&rf);
}

static void written_already(struct lab3_file *f)
{
	f->written = 65536;
	f->windows = 1;
}

static void smaller_file(struct lab3_file *f)
{
	f->size = 1000;
}

static void second_window_due(struct lab3_file *f)
{
	f->windows = 1;
}

RL_TEST(wait_window_refuses_a_window_that_does_not_follow_the_last, .step = 3, .points = 1)
{
	expect_window_refused(written_already, "window 0 at offset 0 after 65536 bytes written");
	expect_window_refused(second_window_due, "window 0 when window 1 is due");
}
END_TEST

RL_TEST(wait_window_refuses_a_window_past_the_end_of_the_file, .step = 3, .points = 1)
{
	expect_window_refused(smaller_file, "a 65536-byte window for a 1000-byte file");
}
END_TEST

/* Step 4 */

/* Send a file of SIZE bytes: the test's steps, but the lab's lab3_write_window(). */
static void write_with_lab_code(const char *const *opts, uint64_t size)
{
	struct rf_receiver rf;
	struct ref_file rfile;
	struct lab3_conn c;
	struct rl_msg_window w;
	struct rl_msg_result result;
	char line[1024];
	int ret;

	ref_start(&rf, opts);
	ref_make_file(&rfile, size);
	ref_connect(&c, &rf);
	ref_send_file_info(&c, &rfile, false);
	ref_register(&c, &rfile);
	while (rfile.f.written < size) {
		ref_wait_window(&c, &w);
		ret = lab3_write_window(&c, &rfile.f, &w);
		ck_assert_msg(ret == 0, "window %u of %u bytes: expected 0, got %d (%s)", w.index,
			      w.len, ret, strerror(-ret));
		ref_window_done(&c, &rfile, &w);
	}
	ref_done(&c, &result);
	ck_assert_msg(result.good && result.received == size,
		      "file of %llu bytes: expected RESULT good, got %s after %llu bytes",
		      (unsigned long long)size, result.good ? "good" : "bad",
		      (unsigned long long)result.received);
	ref_finish_line(&rf, &c, &rfile, line, sizeof(line));
	ck_assert_msg(strstr(line, "\"hash_ok\":true"), "expected hash_ok true, got %s", line);
	ref_drop_file(&rfile);
	rf_stop(&rf);
}

RL_TEST(write_window_puts_the_bytes_where_the_window_says, .step = 4, .points = 3)
{
	write_with_lab_code(NULL, 1);
	write_with_lab_code(NULL, 4097);
}
END_TEST

RL_TEST(write_window_writes_every_window_of_a_file, .step = 4, .points = 2)
{
	write_with_lab_code(small_windows, 300001);
}
END_TEST

RL_TEST(write_window_splits_a_large_window_into_chunks, .step = 4, .points = 2)
{
	static const char *const large[] = { "--max-window", "4M", NULL };

	/* One window of 2.5 MiB: more chunks than LAB3_MAX_INFLIGHT. */
	write_with_lab_code(large, (5 << 19) + 7);
}
END_TEST

RL_TEST(write_window_with_a_wrong_rkey_fails_with_eio_instead_of_hanging, .step = 4, .points = 1)
{
	struct rf_receiver rf;
	struct ref_file rfile;
	struct lab3_conn c;
	struct rl_msg_window w;
	char line[1024];
	int ret;

	ref_start(&rf, NULL);
	ref_make_file(&rfile, 4097);
	ref_connect(&c, &rf);
	ref_send_file_info(&c, &rfile, false);
	ref_register(&c, &rfile);
	ref_wait_window(&c, &w);
	w.rkey ^= 0x80;
	ret = lab3_write_window(&c, &rfile.f, &w);
	ck_assert_msg(ret == -EIO, "expected -EIO (a remote access error completion), got %d (%s)",
		      ret, strerror(-ret));
	ref_finish_line(&rf, &c, &rfile, line, sizeof(line));
	ck_assert_msg(strstr(line, "transfer-failed"), "expected transfer-failed in %s", line);
	ref_drop_file(&rfile);
	rf_stop(&rf);
}
END_TEST

/* Send SIZE bytes with the lab's lab3_send_windows(), the rest by the test. */
static void send_windows_with_lab_code(uint64_t size, uint32_t windows)
{
	struct rf_receiver rf;
	struct ref_file rfile;
	struct lab3_conn c;
	struct rl_msg_result result;
	char line[1024];
	int ret;

	ref_start(&rf, small_windows);
	ref_make_file(&rfile, size);
	ref_connect(&c, &rf);
	ref_send_file_info(&c, &rfile, false);
	ref_register(&c, &rfile);
	ret = lab3_send_windows(&c, &rfile.f);
	ck_assert_msg(ret == 0, "file of %llu bytes: expected 0, got %d (%s)",
		      (unsigned long long)size, ret, strerror(-ret));
	ck_assert_msg(rfile.f.written == size && rfile.f.windows == windows,
		      "file of %llu bytes: expected %llu bytes in %u windows, got %llu in %u",
		      (unsigned long long)size, (unsigned long long)size, windows,
		      (unsigned long long)rfile.f.written, rfile.f.windows);
	ref_done(&c, &result);
	ck_assert_msg(result.good, "file of %llu bytes: expected RESULT good, got bad",
		      (unsigned long long)size);
	ref_finish_line(&rf, &c, &rfile, line, sizeof(line));
	ck_assert_msg(strstr(line, "\"hash_ok\":true"), "expected hash_ok true, got %s", line);
	ref_drop_file(&rfile);
	rf_stop(&rf);
}

RL_TEST(send_windows_writes_every_window_in_order_and_says_done, .step = 4, .points = 3, .needs = 3)
{
	send_windows_with_lab_code(1, 1);
	send_windows_with_lab_code(65536, 1);
	send_windows_with_lab_code(300001, 5);
}
END_TEST

RL_TEST(send_windows_of_an_empty_file_sends_nothing, .step = 4, .points = 1)
{
	send_windows_with_lab_code(0, 0);
}
END_TEST
