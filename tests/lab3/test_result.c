/*
 * test_result.c: Lab 3 steps 5 to 7: DONE and RESULT, the student ID, the
 * key. The act runs the lab's step after the test's own transfer and says
 * what it returned; the check reads in the receiver's results log what the
 * receiver was sent (DONE, the ID) and what it answered (the RESULT, the
 * key, as its SHA-256), and whether the step read the receiver's answer.
 */
#include <string.h>

#include "reference.h"

/* Whether the act said lab3_FN returned WANT as NAME (WHAT: the case, or ""). */
static bool expect_ret(struct rl_case *c, const char *name, long long want, const char *fn,
		       const char *what)
{
	long long ret = rl_said_int(c, name);

	return rl_expect(c, ret == want, "%sexpected lab3_%s to return %lld, got %lld (%s)", what,
			 fn, want, ret, strerror((int)-ret));
}

/*
 * Whether the act said, as NAME, that the lab's step left no message of the
 * receiver unread: the step reads the receiver's answer, it does not guess it.
 */
static bool expect_read(struct rl_case *c, const char *name, const char *fn, const char *what)
{
	long long unread = rl_said_int(c, name);

	return rl_expect(c, unread == 0,
			 "%sexpected lab3_%s to read the receiver's answer, it returned and left "
			 "the receiver's %s unread",
			 what, fn, unread < 0 ? "message" : rl_msg_type_name((int)unread));
}

/* Step 5 */

/* Send each file by the test's steps (FLIP: with a wrong hash), then finish with the lab's code. */
static void finish_with_lab_code(struct rl_case *c, bool flip)
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
		ref_send_file_info(&conn, &rfile, flip);
		ref_register(&conn, &rfile);
		ref_send_windows(&conn, &rfile);
		memset(&result, 0xee, sizeof(result));
		ret = lab3_finish(&conn, &rfile.f, &result);
		snprintf(name, sizeof(name), "ret%d", i);
		rl_say_int(name, ret);
		snprintf(name, sizeof(name), "good%d", i);
		rl_say_int(name, result.good);
		snprintf(name, sizeof(name), "received%d", i);
		rl_say_int(name, (long long)result.received);
		snprintf(name, sizeof(name), "unread%d", i);
		rl_say_int(name, ref_unread(&conn));
		ref_close(&conn, &rfile);
		if (ret && i + 1 < in->nfiles)
			break; /* a failure: the check stops at the first */
	}
}

static void finish(struct rl_case *c)
{
	finish_with_lab_code(c, false);
}

static void finish_after_a_wrong_hash(struct rl_case *c)
{
	finish_with_lab_code(c, true);
}

/*
 * File I's finish: lab3_finish returned WANT (0 or -EBADMSG), copied out
 * the RESULT (GOOD, all bytes), read it; the receiver got DONE and
 * answered (step 5) with HASH_OK (1, 0; -1: whatever it was).
 */
static bool expect_finish(struct rl_case *c, int i, long long want, int good, int hash_ok,
			  const char *why)
{
	unsigned long long size = ref_in(c)->file[i].size;
	char name[32], what[64];
	long long got_good, received;
	struct ref_line l;

	snprintf(what, sizeof(what), "file of %llu bytes: ", size);
	snprintf(name, sizeof(name), "ret%d", i);
	if (!expect_ret(c, name, want, "finish", what))
		return false;
	snprintf(name, sizeof(name), "good%d", i);
	got_good = rl_said_int(c, name);
	snprintf(name, sizeof(name), "received%d", i);
	received = rl_said_int(c, name);
	if (!rl_expect(c, got_good == good && received == (long long)size,
		       "%sexpected the RESULT copied out (%s, %llu bytes), got good %lld, %lld "
		       "bytes",
		       what, good ? "good" : "bad", size, got_good, received))
		return false;
	snprintf(name, sizeof(name), "unread%d", i);
	if (!expect_read(c, name, "finish", what))
		return false;
	snprintf(name, sizeof(name), "peer%d", i);
	if (!ref_line(c, name, &l))
		return false;
	return rl_expect(c, l.step == 5 && (hash_ok < 0 || l.hash_ok == hash_ok),
			 "%sexpected step 5 (result)%s%s, got %s", what,
			 hash_ok < 0 ? "" : " and hash_ok ", hash_ok < 0 ? "" : why, l.text);
}

static void files_of_0_1_and_300_kb(struct rl_case *c)
{
	uint64_t sizes[] = { 0, 1, 2 * ref_random(100000, 100000) + 1 };

	ref_setup(c, sizes, 3);
}

static void reports_good(struct rl_case *c)
{
	int i;

	for (i = 0; i < ref_in(c)->nfiles && expect_finish(c, i, 0, 1, 1, "true"); i++)
		;
	ref_cleanup();
}

RL_GRADED(finish_reports_good_when_every_byte_arrived, .step = 5, .points = 2,
	  .receiver = "--fault-window 64K", .setup = files_of_0_1_and_300_kb, .act = finish,
	  .check = reports_good);

static void a_file_of_4_kib(struct rl_case *c)
{
	uint64_t size = 2 * ref_random(2048, 2048) + 1;

	ref_setup(c, &size, 1);
}

/* What a success for a bad verdict leads to, when RET is one. */
static const char *bad_is_no_success(long long ret)
{
	return ret ? "" :
		     ": a bad verdict is an error, and success sends main.c on to ask for a key "
		     "(docs/lab3.md#step-5)";
}

static void reports_bad_with_ebadmsg(struct rl_case *c)
{
	long long ret = rl_said_int(c, "ret0");

	if (rl_expect(c, ret == -EBADMSG,
		      "expected -EBADMSG after a wrong FILE_INFO hash, got %lld (%s)%s", ret,
		      strerror((int)-ret), bad_is_no_success(ret)))
		expect_finish(c, 0, -EBADMSG, 0, 0, "false");
	ref_cleanup();
}

RL_GRADED(finish_reports_bad_with_ebadmsg_when_the_hashes_differ, .step = 5, .points = 2,
	  .receiver = "", .setup = a_file_of_4_kib, .act = finish_after_a_wrong_hash,
	  .check = reports_bad_with_ebadmsg);

static void reports_what_the_receiver_says(struct rl_case *c)
{
	long long ret = rl_said_int(c, "ret0");

	if (rl_expect(c, ret == -EBADMSG,
		      "expected -EBADMSG under --fault-bad-hash, got %lld (%s)%s", ret,
		      strerror((int)-ret), bad_is_no_success(ret)))
		expect_finish(c, 0, -EBADMSG, 0, -1, "");
	ref_cleanup();
}

RL_GRADED(finish_reports_bad_when_the_receiver_says_bad, .step = 5, .points = 1,
	  .receiver = "--fault-bad-hash", .setup = a_file_of_4_kib, .act = finish,
	  .check = reports_what_the_receiver_says);

/* Step 6 */

/* The test's transfer and DONE, then the lab's lab3_send_student_id() with the test's ID. */
static void send_the_id(struct rl_case *c)
{
	struct rl_msg_result result;
	struct ref_file rfile;
	struct lab3_conn conn;
	int ret;

	ref_open(c, 0, &rfile);
	ref_connect(c, &conn, "peer");
	ref_transfer(&conn, &rfile);
	ref_done(&conn, &result);
	ret = lab3_send_student_id(&conn, ref_in(c)->id);
	rl_say_int("ret", ret);
	if (ret == 0)
		ref_wait_key(&conn);
	ref_close(&conn, &rfile);
}

static void the_receiver_logs_the_id(struct rl_case *c)
{
	const char *id = ref_in(c)->id;
	struct ref_line l;

	if (expect_ret(c, "ret", 0, "send_student_id", "") && ref_line(c, "peer", &l))
		rl_expect(c, !strcmp(l.student_id, id) && l.step == 7,
			  "expected student_id %s and step 7, got %s", id, l.text);
	ref_cleanup();
}

RL_GRADED(student_id_is_the_one_the_receiver_logs, .step = 6, .points = 2, .receiver = "",
	  .setup = a_file_of_4_kib, .act = send_the_id, .check = the_receiver_logs_the_id);

static const char *const bad_ids[] = {
	"",
	"ab cd",
	"tab\there",
	"x23456789012345678901234567890123456789012345678901234567890123456",
};

#define NBAD ((int)(sizeof(bad_ids) / sizeof(bad_ids[0])))

/* After DONE, each refused ID with the lab's code, then the test's valid one. */
static void send_bad_ids_then_a_good_one(struct rl_case *c)
{
	struct rl_msg_result result;
	struct ref_file rfile;
	struct lab3_conn conn;
	struct rl_msg m;
	char name[32];
	int i, ret;

	ref_open(c, 0, &rfile);
	ref_connect(c, &conn, "peer");
	ref_transfer(&conn, &rfile);
	ref_done(&conn, &result);
	for (i = 0; i < NBAD; i++) {
		snprintf(name, sizeof(name), "ret%d", i);
		rl_say_int(name, lab3_send_student_id(&conn, bad_ids[i]));
	}
	ret = lab3_send_student_id(&conn, ref_in(c)->id);
	rl_say_int("ret_good", ret);
	/* A refused ID sent before it would have ended the connection: no KEY then. */
	if (ret == 0)
		lab3_wait_msg(&conn, RL_MSG_KEY, &m);
	ref_close(&conn, &rfile);
}

static void only_the_good_one_was_sent(struct rl_case *c)
{
	const char *id = ref_in(c)->id;
	char name[32], what[128];
	struct ref_line l;
	long long ret;
	int i;

	for (i = 0; i < NBAD; i++) {
		snprintf(name, sizeof(name), "ret%d", i);
		ret = rl_said_int(c, name);
		if (!rl_expect(
			    c, ret == -EINVAL,
			    "ID \"%s\": expected lab3_send_student_id to refuse it with %d and send "
			    "nothing, got %lld (%s)%s",
			    bad_ids[i], -EINVAL, ret, strerror((int)-ret),
			    ret != 0 ?
				    "" :
			    strlen(bad_ids[i]) > RL_PROTO_MAX_ID ?
				    ": cut to fit, it is another student's ID (docs/lab3.md#step-6)" :
				    ": sent, the receiver ends the connection (docs/lab3.md#step-6)"))
			goto out;
	}
	snprintf(what, sizeof(what), "then the valid ID %s: ", id);
	/*
	 * The receiver ends a connection at the first ID it refuses: the valid
	 * ID after them, logged with its key, says none of them was sent.
	 */
	if (expect_ret(c, "ret_good", 0, "send_student_id", what) && ref_line(c, "peer", &l))
		rl_expect(c, !strcmp(l.student_id, id) && l.step == 7 && !l.error[0],
			  "expected nothing sent for the refused IDs, then %s logged with its key "
			  "(step 7, no error), got %s",
			  id, l.text);
out:
	ref_cleanup();
}

RL_GRADED(an_id_the_receiver_would_refuse_is_not_sent, .step = 6, .points = 1, .receiver = "",
	  .setup = a_file_of_4_kib, .act = send_bad_ids_then_a_good_one,
	  .check = only_the_good_one_was_sent);

/* Step 7 */

/* The test's transfer, DONE and ID, then the lab's lab3_wait_key(). */
static void wait_for_the_key(struct rl_case *c)
{
	char key[RL_PROTO_MAX_KEY + 1] = "";
	struct rl_msg_result result;
	struct ref_file rfile;
	struct lab3_conn conn;

	ref_open(c, 0, &rfile);
	ref_connect(c, &conn, "peer");
	ref_transfer(&conn, &rfile);
	ref_done(&conn, &result);
	ref_send_id(&conn, ref_in(c)->id);
	rl_say_int("ret", lab3_wait_key(&conn, key));
	key[RL_PROTO_MAX_KEY] = '\0';
	rl_say_str("key", key);
	rl_say_int("unread", ref_unread(&conn));
	ref_close(&conn, &rfile);
}

static void a_file_of_300_kb(struct rl_case *c)
{
	uint64_t size = 2 * ref_random(100000, 100000) + 1;

	ref_setup(c, &size, 1);
}

/* The key's SHA-256 is the one the receiver logged for the ID: the parent never needs the secret. */
static void the_key_is_the_receivers(struct rl_case *c)
{
	const char *id = ref_in(c)->id, *key;
	char key_sha[65];
	struct ref_line l;

	if (!expect_ret(c, "ret", 0, "wait_key", "") || !ref_line(c, "peer", &l) ||
	    !rl_expect(c, l.key_issued && !strcmp(l.student_id, id),
		       "expected key_issued true for %s, got %s", id, l.text))
		goto out;
	key = rl_said_str(c, "key");
	rl_expect(c, !rcv_key_sha256(key, key_sha) && !strcmp(key_sha, l.key_sha256),
		  "expected the key the receiver issued to %s (its SHA-256 is %s in the results "
		  "log), got \"%s\"",
		  id, l.key_sha256, key);
out:
	ref_cleanup();
}

RL_GRADED(key_is_the_one_the_receiver_computes_for_the_id, .step = 7, .points = 2,
	  .receiver = "--fault-window 64K", .setup = a_file_of_300_kb, .act = wait_for_the_key,
	  .check = the_key_is_the_receivers);

/* Asked anyway after RESULT bad, the receiver answers ERROR not-verified. */
static void the_error_is_reported(struct rl_case *c)
{
	const char *key = rl_said_str(c, "key");
	struct ref_line l;
	long long ret = rl_said_int(c, "ret");

	if (rl_expect(c, ret == -ECONNABORTED,
		      "expected -ECONNABORTED (an ERROR came), got %lld (%s)%s", ret,
		      strerror((int)-ret),
		      ret == -ENOSYS ?
			      "" :
			      ": lab3_wait_msg's error says an ERROR came; pass that error "
			      "on, unchanged (docs/lab3.md#step-7)") &&
	    rl_expect(c, key[0] == '\0', "expected no key, got \"%s\"", key) &&
	    expect_read(c, "unread", "wait_key", "") && ref_line(c, "peer", &l))
		rl_expect(c, !strncmp(l.error, "not-verified", 12),
			  "expected the receiver to have answered the ID with ERROR not-verified, "
			  "got %s",
			  l.text);
	ref_cleanup();
}

RL_GRADED(wait_key_reports_the_receivers_error_instead_of_a_key, .step = 7, .points = 1,
	  .receiver = "--fault-bad-hash", .setup = a_file_of_4_kib, .act = wait_for_the_key,
	  .check = the_error_is_reported);
