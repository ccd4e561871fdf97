/*
 * test_windows.c: Lab 3 steps 3 and 4: register the file, take windows,
 * write them. The act runs the lab's step between the test's own steps and
 * says what it returned; the check asks the kernel what was registered,
 * and the receiver's results log whether every byte arrived and hashed to
 * the file's SHA-256 (computed by the check from the bytes setup wrote).
 */
#include <stdlib.h>
#include <string.h>

#include "reference.h"

#define KIB 1024

/* Whether the act said lab3_FN returned 0 as NAME (WHAT: the case, or ""). */
static bool expect_zero(struct rl_case *c, const char *name, const char *fn, const char *what)
{
	long long ret = rl_said_int(c, name);

	return rl_expect(c, ret == 0, "%sexpected lab3_%s to return 0, got %lld (%s)", what, fn,
			 ret, strerror((int)-ret));
}

/*
 * Whether the act said lab3_register_file returned 0; the errors a wrong
 * access flag gives (ibv_reg_mr's) say so.
 */
static bool expect_registered(struct rl_case *c)
{
	long long ret = rl_said_int(c, "ret");
	const char *why = ret == -EFAULT ? ": ibv_reg_mr refuses a write flag on a read-only "
					   "mapping; which operations touch these pages?" :
			  ret == -EINVAL ? ": man ibv_reg_mr says which flags need another" :
					   "";

	return rl_expect(c, ret == 0,
			 "expected lab3_register_file to return 0, got %lld (%s)%s "
			 "(docs/lab3.md#step-3)",
			 ret, strerror((int)-ret), why);
}

/* A file of 200000 to 400000 bytes, well past the 64 KiB windows of --fault-window 64K. */
static void a_file_of_300_kb(struct rl_case *c)
{
	uint64_t size = 2 * ref_random(100000, 100000) + 1;

	ref_setup(c, &size, 1);
}

/* Step 3 */

/*
 * Whether a peer in the file's PD could RDMA READ the file through its MR
 * with the MR's rkey: 1, 0 (its device refused), or -1 (the test could not
 * try). Two loopback RC QPs of the test's own, in PD: one reads, the other,
 * which allows remote reads, answers from F's MR.
 */
static int remote_read_allowed(struct ibv_pd *pd, const struct lab3_file *f)
{
	uint8_t port = rl_test_ib_port(), buf[64];
	int gid = rl_test_gid_index(), ret = -1;
	struct rl_qp_dest da, db;
	struct ibv_qp *a = NULL, *b = NULL;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_wc wc;

	cq = rl_create_cq(pd->context, 8, NULL);
	mr = rl_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	if (cq)
		a = rl_create_rc_qp(pd, cq, cq, 4);
	if (cq)
		b = rl_create_rc_qp(pd, cq, cq, 4);
	if (!mr || !a || !b || rl_qp_local_dest(a, port, gid, 1, &da) ||
	    rl_qp_local_dest(b, port, gid, 1, &db) || rl_qp_to_init(a, port, 0) ||
	    rl_qp_to_init(b, port, IBV_ACCESS_REMOTE_READ) || rl_qp_to_rtr(a, port, gid, &db) ||
	    rl_qp_to_rtr(b, port, gid, &da) || rl_qp_to_rts(a, 1) || rl_qp_to_rts(b, 1) ||
	    rl_post_read(a, mr, buf, f->size < sizeof(buf) ? (uint32_t)f->size : sizeof(buf),
			 (uintptr_t)f->data, f->mr->rkey, 1))
		goto out;
	ret = rl_poll_cq(cq, &wc, 5000);
	ret = ret == 0 ? 1 : wc.status == IBV_WC_REM_ACCESS_ERR ? 0 : -1;
out:
	if (b)
		ibv_destroy_qp(b);
	if (a)
		ibv_destroy_qp(a);
	if (mr)
		ibv_dereg_mr(mr);
	if (cq)
		ibv_destroy_cq(cq);
	return ret;
}

/*
 * Register the file with the lab's code in the connection's PD, then send
 * it through that registration with the test's steps, up to the key (the
 * receiver logs the connection then), and hold while the check looks.
 */
static void register_and_send(struct rl_case *c)
{
	struct ref_file rfile;
	struct lab3_conn conn;
	struct rl_msg_result result;
	int ret;

	ref_open(c, 0, &rfile);
	ref_connect(c, &conn, "peer");
	ret = lab3_register_file(conn.pd, &rfile.f);
	rl_say_int("ret", ret);
	rl_say_int("data", rfile.f.data != NULL);
	rl_say_int("mr", rfile.f.mr != NULL);
	if (ret == 0 && rfile.f.data && rfile.f.mr) {
		rl_say_int("remote_read", remote_read_allowed(conn.pd, &rfile.f));
		ref_send_file_info(&conn, &rfile, false);
		ref_send_windows(&conn, &rfile);
		ref_done(&conn, &result);
		ref_send_id(&conn, ref_in(c)->id);
		ref_wait_key(&conn);
		rl_hold();
	}
	ref_close(&conn, &rfile);
}

/* The kernel's value of member KEY of object R, as a number (-1 when it has none). */
static long long res_num(const struct rl_res *r, const char *key)
{
	const char *v = rl_res_get(r, key);

	return v ? strtoll(v, NULL, 0) : -1;
}

static void the_mr_covers_the_file_in_the_pd(struct rl_case *c)
{
	unsigned long long size = ref_in(c)->file[0].size;
	struct rl_res mr[16], qp[4];
	int nmr, nqp, i, found = -1, count = 0;
	struct ref_line l;

	if (!expect_registered(c) || !rl_expect(c, rl_said_int(c, "data") && rl_said_int(c, "mr"),
						"expected f->data and f->mr set, got %s and %s",
						rl_said_int(c, "data") ? "an address" : "NULL",
						rl_said_int(c, "mr") ? "an MR" : "NULL"))
		goto out;
	if (!rl_expect(c, rl_said_int(c, "remote_read") == 0,
		       rl_said_int(c, "remote_read") > 0 ?
			       "expected the file's MR to refuse a remote read, a peer read it with "
			       "its rkey: whoever learns the rkey may read your file without you "
			       "(docs/lab3.md#step-3)" :
			       "the test could not try a remote read of the file's MR (see above)"))
		goto out;
	nmr = rl_rdma_res("mr", rl_act_pid(c), mr, 16);
	nqp = rl_rdma_res("qp", rl_act_pid(c), qp, 4);
	if (!rl_expect(c, nmr >= 0 && nqp == 1,
		       "expected the kernel to list the test's MRs and its one QP (rdma res), got "
		       "%d MRs and %d QPs",
		       nmr, nqp))
		goto out;
	for (i = 0; i < nmr; i++)
		if (res_num(&mr[i], "mrlen") == (long long)size) {
			found = i;
			count++;
		}
	if (!rl_expect(c, count == 1,
		       "expected an MR over exactly the file's %llu bytes, the kernel lists %d "
		       "(of %d MRs of the test's process)",
		       size, count, nmr) ||
	    !rl_expect(c, res_num(&mr[found], "pdn") == res_num(&qp[0], "pdn"),
		       "expected the file's MR in the connection's PD (pdn %lld, the QP's), got "
		       "pdn %lld",
		       res_num(&qp[0], "pdn"), res_num(&mr[found], "pdn")))
		goto out;
	/* The test read the file's bytes through f->data and f->mr: did they arrive whole? */
	if (ref_line(c, "peer", &l))
		ref_expect_received(c, &l, 0, 7);
out:
	ref_cleanup();
}

RL_GRADED(register_maps_the_whole_file_into_an_mr_of_the_pd, .step = 3, .points = 2, .receiver = "",
	  .setup = a_file_of_300_kb, .act = register_and_send,
	  .check = the_mr_covers_the_file_in_the_pd);

static void an_empty_file(struct rl_case *c)
{
	static const uint64_t sizes[] = { 0 };

	ref_setup(c, sizes, 1);
}

/* Register a 0-byte file with the lab's code in a PD of the test's, and hold. */
static void register_nothing(struct rl_case *c)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	struct lab3_file f;
	struct ibv_pd *pd;
	int i, ret;

	ck_assert_msg(list, "expected a device list");
	for (i = 0; list[i] && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), rl_test_device()))
			ctx = ibv_open_device(list[i]);
	ck_assert_msg(ctx, "expected to open %s", rl_test_device());
	pd = ibv_alloc_pd(ctx);
	ck_assert_msg(pd, "the test could not allocate a PD");
	ret = lab3_open_file(&f, ref_in(c)->file[0].path);
	ck_assert_msg(ret == 0, "lab3_open_file: %s", strerror(-ret));
	ret = lab3_register_file(pd, &f);
	rl_say_int("ret", ret);
	rl_say_int("data", f.data != NULL);
	rl_say_int("mr", f.mr != NULL);
	rl_hold();
	lab3_close_file(&f);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
}

static void no_mr_is_registered(struct rl_case *c)
{
	struct rl_res mr[4];
	long long ret = rl_said_int(c, "ret");
	int n;

	if (rl_expect(c, ret == 0, "expected 0 for a 0-byte file, got %lld (%s)", ret,
		      strerror((int)-ret))) {
		n = rl_rdma_res("mr", rl_act_pid(c), mr, 4);
		rl_expect(c, !rl_said_int(c, "data") && !rl_said_int(c, "mr") && n == 0,
			  "expected no mapping and no MR for 0 bytes (mmap and ibv_reg_mr refuse "
			  "0), got f->data %s, f->mr %s, and %d MRs the kernel lists",
			  rl_said_int(c, "data") ? "set" : "NULL",
			  rl_said_int(c, "mr") ? "set" : "NULL", n);
	}
	ref_cleanup();
}

RL_GRADED(register_of_an_empty_file_makes_no_mr, .step = 3, .points = 1, .setup = an_empty_file,
	  .act = register_nothing, .check = no_mr_is_registered);

/* Take window 0 with the lab's code, then write it and the rest with the test's. */
static void take_the_first_window(struct rl_case *c)
{
	struct rl_msg_window w = { 0 };
	struct rl_msg_result result;
	struct ref_file rfile;
	struct lab3_conn conn;
	int ret;

	ref_open(c, 0, &rfile);
	ref_connect(c, &conn, "peer");
	ref_send_file_info(&conn, &rfile, false);
	ret = lab3_wait_window(&conn, &rfile.f, &w);
	rl_say_int("ret", ret);
	rl_say_int("index", w.index);
	rl_say_int("offset", (long long)w.offset);
	rl_say_int("len", w.len);
	rl_say_int("addr", (long long)w.addr);
	rl_say_int("rkey", w.rkey);
	if (ret == 0) {
		/* The window is usable: write it with the test's code, and go on to the end. */
		ref_register(&conn, &rfile);
		ref_write_window(&conn, &rfile, &w);
		ref_window_done(&conn, &rfile, &w);
		ref_send_windows(&conn, &rfile);
		ref_done(&conn, &result);
	}
	ref_close(&conn, &rfile);
}

static void it_is_the_window_the_receiver_granted(struct rl_case *c)
{
	unsigned long long size = ref_in(c)->file[0].size;
	long long len = size < 64 * KIB ? (long long)size : 64 * KIB;
	struct ref_line l;

	if (expect_zero(c, "ret", "wait_window", "") &&
	    rl_expect(c,
		      rl_said_int(c, "index") == 0 && rl_said_int(c, "offset") == 0 &&
			      rl_said_int(c, "len") == len && rl_said_int(c, "addr") &&
			      rl_said_int(c, "rkey"),
		      "expected window 0 at offset 0 of %lld bytes with an address and rkey, got "
		      "window %lld at %lld of %lld bytes, addr 0x%llx rkey 0x%llx",
		      len, rl_said_int(c, "index"), rl_said_int(c, "offset"), rl_said_int(c, "len"),
		      (unsigned long long)rl_said_int(c, "addr"),
		      (unsigned long long)rl_said_int(c, "rkey")) &&
	    ref_line(c, "peer", &l))
		/* The test wrote the file's first bytes where that window said. */
		ref_expect_received(c, &l, 0, 5);
	ref_cleanup();
}

RL_GRADED(wait_window_returns_the_window_the_receiver_grants, .step = 3, .points = 2,
	  .receiver = "--fault-window 64K", .setup = a_file_of_300_kb, .act = take_the_first_window,
	  .check = it_is_the_window_the_receiver_granted);

/*
 * What a refusal test changes in F, once window 0 was taken and written,
 * before the lab's code judges window 1 (65536 bytes at 65536) against it.
 */
struct tweak {
	const char *what;
	void (*apply)(struct lab3_file *f);
};

static void written_already(struct lab3_file *f)
{
	f->written += 64 * KIB;
}

static void next_window_due(struct lab3_file *f)
{
	f->windows++;
}

static void smaller_file(struct lab3_file *f)
{
	f->size = f->written + 1000;
}

static const struct tweak not_following[] = {
	{ "window 1 at offset 65536 when 131072 bytes were written", written_already },
	{ "window 1 when window 2 is due", next_window_due },
};

static const struct tweak past_the_end[] = {
	{ "a 65536-byte window 1 at 65536 for a 66536-byte file", smaller_file },
};

/*
 * For each of the N tweaks, on a connection of its own: let the lab's
 * code take window 0 (it must: it follows) and write it with the test's;
 * apply the tweak; let the lab's code judge window 1; say what it
 * returned both times, and whether it left a WINDOW unread.
 */
static void judge_windows(struct rl_case *c, const struct tweak *t, int n)
{
	struct ref_file rfile;
	struct lab3_conn conn;
	struct rl_msg_window w;
	char name[32];
	int i, ret;

	for (i = 0; i < n; i++) {
		ref_open(c, 0, &rfile);
		snprintf(name, sizeof(name), "peer%d", i);
		ref_connect(c, &conn, name);
		ref_send_file_info(&conn, &rfile, false);
		ref_register(&conn, &rfile);
		ret = lab3_wait_window(&conn, &rfile.f, &w);
		snprintf(name, sizeof(name), "first%d", i);
		rl_say_int(name, ret);
		if (ret == 0) {
			ref_write_window(&conn, &rfile, &w);
			ref_window_done(&conn, &rfile, &w);
			t[i].apply(&rfile.f);
			ret = lab3_wait_window(&conn, &rfile.f, &w);
			snprintf(name, sizeof(name), "ret%d", i);
			rl_say_int(name, ret);
			snprintf(name, sizeof(name), "unread%d", i);
			rl_say_int(name, ref_unread(&conn));
		}
		rfile.f.size = ref_in(c)->file[0].size;
		ref_close(&conn, &rfile);
	}
}

static void expect_refusals(struct rl_case *c, const struct tweak *t, int n)
{
	long long first, ret, unread;
	char name[32];
	struct ref_line l;
	int i;

	for (i = 0; i < n && !rl_failed(c); i++) {
		snprintf(name, sizeof(name), "first%d", i);
		first = rl_said_int(c, name);
		if (!rl_expect(c, first == 0,
			       "%s: expected lab3_wait_window to take window 0 first (it follows), "
			       "got %lld (%s)",
			       t[i].what, first, strerror((int)-first)))
			break;
		snprintf(name, sizeof(name), "ret%d", i);
		ret = rl_said_int(c, name);
		snprintf(name, sizeof(name), "unread%d", i);
		unread = rl_said_int(c, name);
		snprintf(name, sizeof(name), "peer%d", i);
		if (rl_expect(c, ret == -EPROTO, "%s: expected -EPROTO, got %lld (%s)%s", t[i].what,
			      ret, strerror((int)-ret),
			      ret ? "" :
				    ": a sender that believes a wrong WINDOW sends bytes that are "
				    "not the file's (docs/lab3.md#step-3)") &&
		    rl_expect(c, unread == 0,
			      "%s: expected lab3_wait_window to take the WINDOW and refuse it, it "
			      "returned and left the receiver's %s unread",
			      t[i].what, unread < 0 ? "message" : rl_msg_type_name((int)unread)) &&
		    ref_line(c, name, &l))
			rl_expect(
				c, l.step == 3 && l.bytes_received == 64 * KIB,
				"%s: expected the receiver to have got window 0 and granted window "
				"1 (step 3, 65536 bytes received), got %s",
				t[i].what, l.text);
	}
	ref_cleanup();
}

static void judge_windows_not_following(struct rl_case *c)
{
	judge_windows(c, not_following, 2);
}

static void refuses_windows_not_following(struct rl_case *c)
{
	expect_refusals(c, not_following, 2);
}

RL_GRADED(wait_window_refuses_a_window_that_does_not_follow_the_last, .step = 3, .points = 1,
	  .receiver = "--fault-window 64K", .setup = a_file_of_300_kb,
	  .act = judge_windows_not_following, .check = refuses_windows_not_following);

static void judge_a_window_past_the_end(struct rl_case *c)
{
	judge_windows(c, past_the_end, 1);
}

static void refuses_a_window_past_the_end(struct rl_case *c)
{
	expect_refusals(c, past_the_end, 1);
}

RL_GRADED(wait_window_refuses_a_window_past_the_end_of_the_file, .step = 3, .points = 1,
	  .receiver = "--fault-window 64K", .setup = a_file_of_300_kb,
	  .act = judge_a_window_past_the_end, .check = refuses_a_window_past_the_end);

/* Step 4 */

/*
 * Send each file of the test: the test's steps, but the lab's
 * lab3_write_window() for every window. Says its first failure, if any
 * (and stops there), and each connection's address.
 */
static void write_with_lab_code(struct rl_case *c)
{
	const struct ref_in *in = ref_in(c);
	struct rl_msg_window w = { 0 };
	struct rl_msg_result result;
	struct ref_file rfile;
	struct lab3_conn conn;
	char name[32];
	int i, ret = 0;

	for (i = 0; i < in->nfiles && ret == 0; i++) {
		ref_open(c, i, &rfile);
		snprintf(name, sizeof(name), "peer%d", i);
		ref_connect(c, &conn, name);
		ref_send_file_info(&conn, &rfile, false);
		ref_register(&conn, &rfile);
		while (rfile.f.written < rfile.f.size && ret == 0) {
			ref_wait_window(&conn, &w);
			ret = lab3_write_window(&conn, &rfile.f, &w);
			if (ret == 0)
				ref_window_done(&conn, &rfile, &w);
		}
		if (ret == 0)
			ref_done(&conn, &result);
		ref_close(&conn, &rfile);
	}
	rl_say_int("ret", ret);
	rl_say_int("index", w.index);
	rl_say_int("len", w.len);
}

/* What a step 4 error says of the loop that returned it. */
static const char *write_error_hint(long long ret)
{
	switch (ret) {
	case -EIO:
		return ": a write failed in its completion; its line is above";
	case -ENOMEM:
		return ": ENOMEM from ibv_post_send: a window posted whole overflows the send queue";
	case -ETIMEDOUT:
		return ": a write you never hear of cannot be counted";
	default:
		return "";
	}
}

static void every_byte_arrived(struct rl_case *c)
{
	const struct ref_in *in = ref_in(c);
	long long ret = rl_said_int(c, "ret");
	unsigned long long size;
	struct ref_line l;
	char name[32];
	int i;

	if (!rl_expect(
		    c, ret == 0,
		    "window %lld of %lld bytes: expected 0, got %lld (%s)%s (docs/lab3.md#step-4)",
		    rl_said_int(c, "index"), rl_said_int(c, "len"), ret, strerror((int)-ret),
		    write_error_hint(ret)))
		goto out;
	for (i = 0; i < in->nfiles && !rl_failed(c); i++) {
		size = in->file[i].size;
		snprintf(name, sizeof(name), "peer%d", i);
		if (ref_line(c, name, &l) &&
		    rl_expect(c, l.hash_ok != 0 || l.bytes_received != (long long)size,
			      "file of %llu bytes: the receiver got them all, and they hash to "
			      "another SHA-256: the right number of bytes, not the file's; where "
			      "does each chunk start in your mapping? (docs/lab3.md#step-4)",
			      size))
			ref_expect_received(c, &l, i, 5);
	}
out:
	ref_cleanup();
}

static void a_1_byte_and_a_4_kib_file(struct rl_case *c)
{
	uint64_t sizes[] = { 1, 2 * ref_random(2048, 2048) + 1 };

	ref_setup(c, sizes, 2);
}

RL_GRADED(write_window_puts_the_bytes_where_the_window_says, .step = 4, .points = 3, .receiver = "",
	  .setup = a_1_byte_and_a_4_kib_file, .act = write_with_lab_code,
	  .check = every_byte_arrived);

RL_GRADED(write_window_writes_every_window_of_a_file, .step = 4, .points = 2,
	  .receiver = "--fault-window 64K", .setup = a_file_of_300_kb, .act = write_with_lab_code,
	  .check = every_byte_arrived);

/*
 * One window of 10 MiB and more: 40 chunks, more than LAB3_MAX_INFLIGHT
 * and more than the send queue holds (rxe rounds LAB3_QP_DEPTH up to 31),
 * so a loop that posts a whole window before it waits overflows it.
 */
static void a_file_of_10_mib(struct rl_case *c)
{
	uint64_t size = (10 << 20) + 2 * ref_random(0, 32768) + 1;

	ref_setup(c, &size, 1);
}

RL_GRADED(write_window_splits_a_large_window_into_chunks, .step = 4, .points = 2,
	  .receiver = "--max-window 16M", .setup = a_file_of_10_mib, .act = write_with_lab_code,
	  .check = every_byte_arrived);

static void a_file_of_4_kib(struct rl_case *c)
{
	uint64_t size = 2 * ref_random(2048, 2048) + 1;

	ref_setup(c, &size, 1);
}

/* Write window 0 with the lab's code and a wrong rkey. */
static void write_with_a_wrong_rkey(struct rl_case *c)
{
	struct ref_file rfile;
	struct lab3_conn conn;
	struct rl_msg_window w;

	ref_open(c, 0, &rfile);
	ref_connect(c, &conn, "peer");
	ref_send_file_info(&conn, &rfile, false);
	ref_register(&conn, &rfile);
	ref_wait_window(&conn, &w);
	w.rkey ^= 0x80;
	rl_say_int("ret", lab3_write_window(&conn, &rfile.f, &w));
	ref_close(&conn, &rfile);
}

static void fails_with_eio(struct rl_case *c)
{
	long long ret = rl_said_int(c, "ret");
	struct ref_line l;

	/* The receiver saw the write fail: the lab's code did post it. */
	if (rl_expect(c, ret == -EIO,
		      "expected -EIO (a remote access error completion), got %lld (%s)", ret,
		      strerror((int)-ret)) &&
	    ref_line(c, "peer", &l))
		rl_expect(c, strstr(l.error, "transfer-failed"), "expected transfer-failed in %s",
			  l.text);
	ref_cleanup();
}

RL_GRADED(write_window_with_a_wrong_rkey_fails_with_eio_instead_of_hanging, .step = 4, .points = 1,
	  .receiver = "", .setup = a_file_of_4_kib, .act = write_with_a_wrong_rkey,
	  .check = fails_with_eio);

/* Send each file with the lab's lab3_send_windows(), the rest by the test. */
static void send_windows_with_lab_code(struct rl_case *c)
{
	const struct ref_in *in = ref_in(c);
	struct rl_msg_result result;
	struct ref_file rfile;
	struct lab3_conn conn;
	char name[32];
	int i, ret;

	for (i = 0; i < in->nfiles; i++) {
		ref_open(c, i, &rfile);
		snprintf(name, sizeof(name), "peer%d", i);
		ref_connect(c, &conn, name);
		ref_send_file_info(&conn, &rfile, false);
		ref_register(&conn, &rfile);
		ret = lab3_send_windows(&conn, &rfile.f);
		snprintf(name, sizeof(name), "ret%d", i);
		rl_say_int(name, ret);
		snprintf(name, sizeof(name), "written%d", i);
		rl_say_int(name, (long long)rfile.f.written);
		snprintf(name, sizeof(name), "windows%d", i);
		rl_say_int(name, rfile.f.windows);
		if (ret == 0)
			ref_done(&conn, &result);
		ref_close(&conn, &rfile);
		if (ret)
			return;
	}
}

/* Each file went whole, in as many 64 KiB windows as it takes, and the act's counts say so. */
static void every_window_was_written(struct rl_case *c)
{
	const struct ref_in *in = ref_in(c);
	long long ret, written, windows, want_windows;
	unsigned long long size;
	struct ref_line l;
	char name[32];
	int i;

	for (i = 0; i < in->nfiles && !rl_failed(c); i++) {
		size = in->file[i].size;
		want_windows = (long long)((size + 64 * KIB - 1) / (64 * KIB));
		snprintf(name, sizeof(name), "ret%d", i);
		ret = rl_said_int(c, name);
		snprintf(name, sizeof(name), "written%d", i);
		written = rl_said(c, name) ? rl_said_int(c, name) : 0;
		snprintf(name, sizeof(name), "windows%d", i);
		windows = rl_said(c, name) ? rl_said_int(c, name) : 0;
		snprintf(name, sizeof(name), "peer%d", i);
		if (rl_expect(c, ret == 0, "file of %llu bytes: expected 0, got %lld (%s)", size,
			      ret, strerror((int)-ret)) &&
		    rl_expect(c, written == (long long)size && windows == want_windows,
			      "file of %llu bytes: expected %llu bytes in %lld windows, got %lld in "
			      "%lld",
			      size, size, want_windows, written, windows) &&
		    ref_line(c, name, &l))
			ref_expect_received(c, &l, i, 5);
	}
	ref_cleanup();
}

static void files_of_one_and_of_many_windows(struct rl_case *c)
{
	uint64_t sizes[] = { 1, 64 * KIB, 2 * ref_random(128 * KIB + 1, 32 * KIB) + 1 };

	ref_setup(c, sizes, 3);
}

RL_GRADED(send_windows_writes_every_window_in_order_and_says_done, .step = 4, .points = 3,
	  .needs = 3, .receiver = "--fault-window 64K", .setup = files_of_one_and_of_many_windows,
	  .act = send_windows_with_lab_code, .check = every_window_was_written);

RL_GRADED(send_windows_of_an_empty_file_sends_nothing, .step = 4, .points = 1,
	  .receiver = "--fault-window 64K", .setup = an_empty_file,
	  .act = send_windows_with_lab_code, .check = every_window_was_written);
