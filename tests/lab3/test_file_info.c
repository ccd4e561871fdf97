/*
 * test_file_info.c: Lab 3 step 2: FILE_INFO, as the reference receiver
 * reads it. The act sends it with the lab's code between the test's own
 * steps; the check reads what the receiver logged (the size and hash it
 * was told, whether the bytes it got hash to it) and compares with the
 * file setup wrote.
 */
#include <string.h>

#include "reference.h"

/* Connect and send FILE_INFO for file 0 (hashed by the test) with the lab's code; say its return. */
static int send_file_info(struct rl_case *c, struct lab3_conn *conn, struct ref_file *rfile)
{
	int ret;

	ref_open(c, 0, rfile);
	ref_connect(c, conn, "peer");
	ret = lab3_send_file_info(conn, &rfile->f);
	rl_say_int("ret", ret);
	return ret;
}

/* Whether the act said lab3_send_file_info returned 0. */
static bool expect_sent(struct rl_case *c)
{
	long long ret = rl_said_int(c, "ret");

	return rl_expect(c, ret == 0, "expected lab3_send_file_info to return 0, got %lld (%s)%s",
			 ret, strerror((int)-ret),
			 ret == -EINVAL ? ": the codec refused to encode it; a number converted "
					  "twice arrives byte-swapped (docs/lab3.md#step-2)" :
					  "");
}

/* Test 1: the size. */

static void a_file_under_64_kib(struct rl_case *c)
{
	uint64_t size = 2 * ref_random(500, 32000) + 1;

	ref_setup(c, &size, 1);
}

/* FILE_INFO, then the window the receiver grants for it. */
static void announce_and_take_a_window(struct rl_case *c)
{
	struct ref_file rfile;
	struct lab3_conn conn;
	struct rl_msg m;
	int ret;

	if (send_file_info(c, &conn, &rfile) == 0) {
		ret = lab3_wait_msg(&conn, RL_MSG_WINDOW, &m);
		rl_say_int("wait", ret);
		rl_say_int("offset", ret ? -1 : (long long)m.u.window.offset);
		rl_say_int("len", ret ? -1 : (long long)m.u.window.len);
	}
	ref_close(&conn, &rfile);
}

static void the_receiver_logs_the_size(struct rl_case *c)
{
	unsigned long long size = ref_in(c)->file[0].size;
	long long offset, len;
	struct ref_line l;

	if (expect_sent(c) &&
	    rl_expect(c, rl_said_int(c, "wait") == 0,
		      "file of %llu bytes: expected a WINDOW in answer to FILE_INFO, got %lld (%s) "
		      "(the receiver's ERROR is above): if it says too-large, the size it read is "
		      "not your file's; a number converted twice arrives byte-swapped "
		      "(docs/lab3.md#step-2)",
		      size, rl_said_int(c, "wait"), strerror((int)-rl_said_int(c, "wait")))) {
		/* The receiver's default windows (1 MiB) hold the whole file. */
		offset = rl_said_int(c, "offset");
		len = rl_said_int(c, "len");
		if (rl_expect(c, offset == 0 && len == (long long)size,
			      "expected window 0 of all %llu bytes, got %lld bytes at %lld", size,
			      len, offset) &&
		    ref_line(c, "peer", &l))
			rl_expect(
				c, l.file_size == (long long)size && l.step == 3,
				"expected file_size %llu and step 3 (window) in the results line, "
				"got %s",
				size, l.text);
	}
	ref_cleanup();
}

RL_GRADED(file_info_announces_the_size_the_receiver_logs, .step = 2, .points = 2, .receiver = "",
	  .setup = a_file_under_64_kib, .act = announce_and_take_a_window,
	  .check = the_receiver_logs_the_size);

/* Test 2: the hash. */

static void a_1_byte_file(struct rl_case *c)
{
	static const uint64_t sizes[] = { 1 };

	ref_setup(c, sizes, 1);
}

/* FILE_INFO, then the test's windows and DONE: the receiver compares the hashes. */
static void announce_and_send(struct rl_case *c)
{
	struct ref_file rfile;
	struct lab3_conn conn;
	struct rl_msg_result result;

	if (send_file_info(c, &conn, &rfile) == 0) {
		ref_register(&conn, &rfile);
		ref_send_windows(&conn, &rfile);
		ref_done(&conn, &result);
	}
	ref_close(&conn, &rfile);
}

static void the_receiver_compares_the_raw_hash(struct rl_case *c)
{
	char sha[65];
	struct ref_line l;

	if (expect_sent(c) && ref_line(c, "peer", &l)) {
		ref_sha256_hex(0, sha);
		if (rl_expect(c, !strcmp(l.sha256, sha),
			      "expected FILE_INFO to carry the file's SHA-256, %s, as 32 raw bytes "
			      "(Hex is the form people read: docs/lab3.md#step-2); the receiver "
			      "logged: %s",
			      sha, l.text) &&
		    rl_expect(c, l.hash_ok == 1,
			      "expected RESULT good for a 1-byte file (the receiver compares the 32 "
			      "raw bytes of FILE_INFO's hash), got bad"))
			ref_expect_received(c, &l, 0, 5);
	}
	ref_cleanup();
}

RL_GRADED(file_info_carries_the_raw_hash_the_receiver_compares, .step = 2, .points = 2,
	  .receiver = "", .setup = a_1_byte_file, .act = announce_and_send,
	  .check = the_receiver_compares_the_raw_hash);

/* Test 3: an empty file. */

static void an_empty_file(struct rl_case *c)
{
	static const uint64_t sizes[] = { 0 };

	ref_setup(c, sizes, 1);
}

/* FILE_INFO, then DONE at once: a 0-byte file has no window. */
static void announce_and_finish(struct rl_case *c)
{
	struct ref_file rfile;
	struct lab3_conn conn;
	struct rl_msg_result result;

	if (send_file_info(c, &conn, &rfile) == 0)
		ref_done(&conn, &result);
	ref_close(&conn, &rfile);
}

static void the_receiver_needs_no_window(struct rl_case *c)
{
	struct ref_line l;

	if (expect_sent(c) && ref_line(c, "peer", &l) &&
	    rl_expect(c, l.file_size == 0 && l.step == 5,
		      "expected file_size 0 and step 5 (result), got %s", l.text))
		ref_expect_received(c, &l, 0, 5);
	ref_cleanup();
}

RL_GRADED(file_info_of_an_empty_file_needs_no_window, .step = 2, .points = 1, .receiver = "",
	  .setup = an_empty_file, .act = announce_and_finish,
	  .check = the_receiver_needs_no_window);
