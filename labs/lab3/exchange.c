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
	/* TODO step 2
	 * Fill a struct rl_msg of type RL_MSG_FILE_INFO (size, and the 32 raw
	 * bytes of the hash, not hex) and send it with lab3_send_msg().
	 * Read: docs/protocol.md "Type 1, FILE_INFO"; framework/rdmalab.h (struct rl_msg).
	 */
	return rl_todo(2);
}

/*
 * Step 5. Say the whole file is written (DONE) and wait for the receiver's
 * verdict into *RESULT. Returns 0 when its hash matched ours; -EBADMSG when
 * it did not, after one line showing both hashes; other errors as
 * lab3_wait_msg() returns them.
 */
int lab3_finish(struct lab3_conn *c, const struct lab3_file *f, struct rl_msg_result *result)
{
	/* TODO step 5
	 * Send a DONE (no body), then wait for the RESULT with lab3_wait_msg().
	 * good 0 means the receiver hashed other bytes: print its hash and byte count.
	 * Read: docs/protocol.md "Type 4, DONE" and "Type 5, RESULT".
	 */
	return rl_todo(5);
}

/*
 * Step 6. Send the student ID the key is for. Refuse (-EINVAL, one line)
 * an ID the receiver would refuse: 1 to 64 graphic ASCII characters.
 */
int lab3_send_student_id(struct lab3_conn *c, const char *id)
{
	/* TODO step 6
	 * Check the ID with rl_proto_id_valid(), copy it into a STUDENT_ID
	 * message and send it. The receiver logs it before it answers.
	 * Read: docs/protocol.md "Type 6, STUDENT_ID".
	 */
	return rl_todo(6);
}

/* Step 7. Wait for the KEY and copy it, NUL-terminated, into KEY. */
int lab3_wait_key(struct lab3_conn *c, char key[RL_PROTO_MAX_KEY + 1])
{
	/* TODO step 7
	 * The receiver answers a STUDENT_ID after a good RESULT with a KEY:
	 * wait for it with lab3_wait_msg() and copy its text out.
	 * Read: docs/protocol.md "Type 7, KEY".
	 */
	return rl_todo(7);
}
