/* exchange.c: Lab 3 steps 2, 5, 6 and 7: the messages around the transfer. */
#include <string.h>

#include "lab3.h"

/*
 * Step 2. Tell the receiver what is coming: send FILE_INFO with the file's
 * size and its SHA-256 (step 1). The receiver answers with a WINDOW, or
 * with nothing at all for a 0-byte file.
 */
int lab3_send_file_info(struct lab3_conn *c, const struct lab3_file *f)
{
	/* BEGIN SOLUTION step 2
	 * Fill a struct rl_msg for FILE_INFO and send it with lab3_send_msg().
	 * Decide each field's form: what does the codec convert for you?
	 * Read: docs/protocol.md "Type 1, FILE_INFO"; framework/rdmalab.h; docs/lab3.md#step-2.
	 * stub: return rl_todo(2);
	 */
	struct rl_msg m = {
		.type = RL_MSG_FILE_INFO,
		.u.file_info.size = f->size,
	};

	memcpy(m.u.file_info.sha256, f->sha256, sizeof(m.u.file_info.sha256));
	return lab3_send_msg(c, &m);
	/* END SOLUTION */
}

/*
 * Step 5. Say the whole file is written (DONE) and wait for the receiver's
 * verdict into *RESULT. Returns 0 when its hash matched ours; -EBADMSG when
 * it did not, after one line for the user; other errors as lab3_wait_msg()
 * returns them.
 */
int lab3_finish(struct lab3_conn *c, const struct lab3_file *f, struct rl_msg_result *result)
{
	/* BEGIN SOLUTION step 5
	 * Send DONE, then wait for the RESULT with lab3_wait_msg(). On a bad
	 * verdict, decide what your one line tells the user: the RESULT has the
	 * receiver's side. Read: docs/protocol.md "Type 5, RESULT"; docs/lab3.md#step-5.
	 * stub: return rl_todo(5);
	 */
	struct rl_msg m = { .type = RL_MSG_DONE };
	char ours[65], theirs[65];
	int ret;

	ret = lab3_send_msg(c, &m);
	if (ret)
		return ret;
	ret = lab3_wait_msg(c, RL_MSG_RESULT, &m);
	if (ret)
		return ret;
	*result = m.u.result;
	if (result->good)
		return 0;
	lab3_sha256_hex(f->sha256, ours);
	lab3_sha256_hex(result->sha256, theirs);
	rl_err("BAD: the receiver hashed %llu bytes to %s, we sent %llu bytes hashing to %s",
	       (unsigned long long)result->received, theirs, (unsigned long long)f->size, ours);
	return -EBADMSG;
	/* END SOLUTION */
}

/*
 * Step 6. Send the student ID the key is for. Returns 0, lab3_send_msg()'s
 * error, or -EINVAL (after one line) for an ID it does not send.
 */
int lab3_send_student_id(struct lab3_conn *c, const char *id)
{
	/* BEGIN SOLUTION step 6
	 * Send the ID in a STUDENT_ID message. Decide what to do with one the
	 * message cannot carry: send it, cut it to fit, or refuse it?
	 * Read: docs/protocol.md "Type 6, STUDENT_ID"; docs/lab3.md#step-6.
	 * stub: return rl_todo(6);
	 */
	struct rl_msg m = { .type = RL_MSG_STUDENT_ID };

	if (!rl_proto_id_valid(id, strlen(id))) {
		rl_err("student ID '%s': must be 1 to %d characters, no spaces", id,
		       RL_PROTO_MAX_ID);
		return -EINVAL;
	}
	snprintf(m.u.student_id.id, sizeof(m.u.student_id.id), "%s", id);
	return lab3_send_msg(c, &m);
	/* END SOLUTION */
}

/* Step 7. Wait for the KEY and copy it, NUL-terminated, into KEY. */
int lab3_wait_key(struct lab3_conn *c, char key[RL_PROTO_MAX_KEY + 1])
{
	/* BEGIN SOLUTION step 7
	 * Wait for the KEY with lab3_wait_msg() and copy its text out. An ERROR
	 * may come instead: who reports it, and with which error?
	 * Read: docs/protocol.md "Type 7, KEY"; docs/lab3.md#step-7.
	 * stub: return rl_todo(7);
	 */
	struct rl_msg m;
	int ret;

	ret = lab3_wait_msg(c, RL_MSG_KEY, &m);
	if (ret)
		return ret;
	snprintf(key, RL_PROTO_MAX_KEY + 1, "%s", m.u.key.key);
	return 0;
	/* END SOLUTION */
}
