/*
 * conn.c: one sender's connection, as a state machine driven by the loop in
 * server.c. Nothing here blocks: every handler posts what it must and
 * returns. Each connection has its own PD, CQ and QP, and registers only the
 * window it grants, so no sender can reach another's memory.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "receiver.h"

#define RCV_QP_DEPTH 4          /* RCV_RECV_DEPTH and RCV_SEND_SLOTS each */
#define RCV_CQ_DEPTH 16         /* room for every completion of both queues */
#define RCV_CLOSE_GRACE_MS 5000 /* how long a last ERROR may take to go out */
/*
 * Once it is out, how long the sender has to hang up before the receiver
 * does: the one who spoke last lets the other close, so that each of the
 * sender's completions comes before the disconnect (rxe on Linux 6.12
 * handles an ACK in a work queue, which may run after the disconnect
 * flushed the send it acknowledged: a STUDENT_ID that arrived then looked
 * lost to its sender).
 */
#define RCV_LINGER_MS 2000
/*
 * A connection that ends without an ERROR (a failed transfer, or
 * --fault-drop, a test-only knob) ends this long after the cause, the
 * receiver saying nothing meanwhile: what the sender did last (its send
 * that reached the step, its write that the receiver refused) completes on
 * its side first, so it learns of the end while it waits for what comes
 * next, not in whichever order the disconnect and its completion arrive
 * (on Linux 6.12, rxe may handle the completion after the disconnect).
 */
#define RCV_END_DELAY_MS 200
#define RCV_SEND_WR_ID 100 /* send slot s completes with wr_id 100 + s */

static const char *const rcv_state_names[] = {
	[RCV_WAIT_FILE_INFO] = "FILE_INFO",
	[RCV_WAIT_WINDOW_DONE] = "WINDOW_DONE",
	[RCV_WAIT_DONE] = "DONE",
	[RCV_WAIT_ID] = "STUDENT_ID",
	[RCV_FINISHED] = "the disconnect",
	[RCV_CLOSING] = "nothing",
	[RCV_DEAD] = "nothing",
};

int64_t rcv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Write the address of ID's peer into BUF, as "10.0.0.1:4242". */
void rcv_peer_name(struct rdma_cm_id *id, char *buf, size_t size)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)rdma_get_peer_addr(id);
	char ip[INET_ADDRSTRLEN] = "?";

	if (sin->sin_family == AF_INET)
		inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
	snprintf(buf, size, "%s:%u", ip, ntohs(sin->sin_port));
}

/* Restart the idle timeout: the sender has --idle-timeout for its next step. */
static void rcv_touch(struct rcv_conn *conn)
{
	conn->deadline_ms = rcv_now_ms() + conn->srv->cfg->idle_timeout_ms;
}

/* Post receive SLOT again. */
static int rcv_post_recv(struct rcv_conn *conn, int slot)
{
	return rl_post_recv(conn->id->qp, conn->msg_mr, conn->bufs.recv[slot], RL_PROTO_MAX_MSG,
			    (uint64_t)slot);
}

/* Deregister the granted window, if any, and give its bytes back to the budget. */
static void rcv_release_window(struct rcv_conn *conn)
{
	if (!conn->win_mr)
		return;
	ibv_dereg_mr(conn->win_mr);
	conn->win_mr = NULL;
	conn->srv->mem_used -= conn->win_len;
}

/*
 * End CONN: release its window, append its results line unless one was
 * written, disconnect, and leave it for the loop to destroy. WHY goes into
 * the log line when the result has no error yet.
 */
void rcv_conn_end(struct rcv_conn *conn, const char *why)
{
	struct rcv_result *r = &conn->result;

	if (conn->state == RCV_DEAD)
		return;
	rcv_release_window(conn);
	if (why && !r->error[0])
		snprintf(r->error, sizeof(r->error), "%s", why);
	if (!conn->logged) {
		r->time = time(NULL);
		rcv_results_append(conn->srv->results_fd, r);
		conn->logged = true;
	}
	rdma_disconnect(conn->id); /* fails harmlessly if never connected */
	conn->state = RCV_DEAD;
	conn->srv->nconns--; /* its slot is free now, though the loop frees it later */
	rcv_note("conn %lu %s: closed at step %d (%s)%s%s", conn->no, r->peer, r->step,
		 rcv_step_name(r->step), r->error[0] ? ": " : "", r->error);
}

/* A free send slot, or -1. */
static int rcv_send_slot(struct rcv_conn *conn)
{
	int i;

	for (i = 0; i < RCV_SEND_SLOTS; i++) {
		if (!conn->send_busy[i])
			return i;
	}
	return -1;
}

/* Post the LEN bytes encoded in send SLOT now. */
static int rcv_post_send_now(struct rcv_conn *conn, int slot, uint32_t len)
{
	int ret = rl_post_send_msg(conn->id->qp, conn->msg_mr, conn->bufs.send[slot], len,
				   RCV_SEND_WR_ID + slot);

	if (ret)
		return ret;
	conn->send_busy[slot] = true;
	conn->sends_out++;
	return 0;
}

/*
 * Post the LEN bytes in send SLOT, or, while --fault-delay holds replies,
 * queue them behind those: the sender gets every message in the order the
 * receiver made it (a pipelined STUDENT_ID's KEY never overtakes RESULT).
 */
static int rcv_post_or_hold(struct rcv_conn *conn, int slot, uint32_t len)
{
	if (!conn->holding)
		return rcv_post_send_now(conn, slot, len);
	conn->held[conn->nheld].slot = slot;
	conn->held[conn->nheld].len = len;
	conn->nheld++;
	conn->send_busy[slot] = true;
	return 0;
}

/* Post every held reply, in order: the --fault-delay is over. */
static int rcv_release_held(struct rcv_conn *conn)
{
	int i, ret = 0;

	conn->holding = false;
	for (i = 0; i < conn->nheld && !ret; i++) {
		conn->send_busy[conn->held[i].slot] = false;
		ret = rcv_post_send_now(conn, conn->held[i].slot, conn->held[i].len);
	}
	conn->nheld = 0;
	return ret;
}

/*
 * Send the LEN bytes encoded in send SLOT. The first reply made at the
 * --fault-delay step starts that connection's one delay: it, and whatever
 * follows it, wait for the timer.
 */
static int rcv_send(struct rcv_conn *conn, int slot, int len)
{
	const struct rcv_faults *f = &conn->srv->cfg->faults;

	if (len < 0)
		return len;
	if (f->delay_step && f->delay_step == conn->result.step && !conn->delay_used) {
		conn->delay_used = true;
		conn->holding = true;
		conn->held_until = rcv_now_ms() + f->delay_ms;
		conn->deadline_ms = conn->held_until + conn->srv->cfg->idle_timeout_ms;
		rl_info("conn %lu: test-only fault: holding the reply at step %d for %d ms",
			conn->no, f->delay_step, f->delay_ms);
	}
	return rcv_post_or_hold(conn, slot, (uint32_t)len);
}

/*
 * End CONN because of the sender: tell it why with an ERROR of CODE (text
 * from FMT), log one line, and disconnect once the ERROR is out.
 */
static void RL_PRINTF(3, 4)
	rcv_fail(struct rcv_conn *conn, enum rl_proto_error code, const char *fmt, ...)
{
	struct rcv_result *r = &conn->result;
	char text[RL_PROTO_MAX_TEXT + 1];
	va_list ap;
	int slot, len;

	if (conn->state >= RCV_CLOSING)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	snprintf(r->error, sizeof(r->error), "%s: %s", rl_proto_error_name(code), text);
	rcv_note("conn %lu %s: ERROR %s: %s", conn->no, r->peer, rl_proto_error_name(code), text);
	slot = rcv_send_slot(conn);
	len = -ENOBUFS;
	if (slot >= 0)
		len = rl_proto_encode_errorf(conn->bufs.send[slot], RL_PROTO_MAX_MSG, code, "%s",
					     text);
	if (len < 0 || rcv_post_or_hold(conn, slot, (uint32_t)len)) {
		rcv_conn_end(conn, NULL);
		return;
	}
	conn->state = RCV_CLOSING;
	conn->deadline_ms = (conn->holding ? conn->held_until : rcv_now_ms()) + RCV_CLOSE_GRACE_MS;
}

/*
 * End CONN in RCV_END_DELAY_MS, saying nothing meanwhile, WHY its log's
 * error: the peer learns of it while it waits (see RCV_END_DELAY_MS).
 */
static void rcv_end_soon(struct rcv_conn *conn, const char *why)
{
	struct rcv_result *r = &conn->result;

	if (!r->error[0])
		snprintf(r->error, sizeof(r->error), "%s", why);
	conn->ending = true;
	conn->deadline_ms = rcv_now_ms() + RCV_END_DELAY_MS;
}

/* --fault-drop fired at STEP. */
static void rcv_drop(struct rcv_conn *conn, int step)
{
	char why[64];

	snprintf(why, sizeof(why), "fault-drop: dropped at step %d (test-only knob)", step);
	rcv_end_soon(conn, why);
}

/*
 * CONN reached STEP (docs/protocol.md). Restarts the idle timeout. Returns
 * false when --fault-drop ends the connection here.
 */
static bool rcv_reach_step(struct rcv_conn *conn, int step)
{
	if (step > conn->result.step)
		conn->result.step = step;
	rcv_touch(conn);
	rl_info("conn %lu %s: step %d (%s)", conn->no, conn->result.peer, step,
		rcv_step_name(step));
	if (conn->drop_step != step)
		return true;
	rcv_drop(conn, step);
	return false;
}

/*
 * CONN is connected: its ESTABLISHED event says so, and so does a message
 * from the sender, which the loop may read first (the two come on different
 * channels). Whichever comes first reaches step 1, once. False when
 * --fault-drop ends the connection there.
 */
static bool rcv_connected(struct rcv_conn *conn)
{
	if (conn->result.step >= 1 || conn->state >= RCV_CLOSING)
		return conn->state != RCV_DEAD;
	rcv_note("conn %lu %s: connected", conn->no, conn->result.peer);
	return rcv_reach_step(conn, 1);
}

/*
 * Register WIN_LEN bytes of window memory (at most MAX are ever needed).
 * False after an ERROR: busy when the memory budget is spent, which can
 * only happen for window 0 (each later window is no longer than the one
 * just given back).
 */
static bool rcv_register_window(struct rcv_conn *conn, uint64_t max)
{
	const struct rcv_config *cfg = conn->srv->cfg;
	const struct rcv_result *r = &conn->result;

	if (conn->srv->mem_used + conn->win_len > cfg->mem_budget) {
		rcv_fail(conn, RL_PERR_BUSY,
			 "memory budget spent (%llu of %llu bytes registered): "
			 "try again later",
			 (unsigned long long)conn->srv->mem_used,
			 (unsigned long long)cfg->mem_budget);
		return false;
	}
	if (!conn->win_buf) {
		/* Zeroed: bytes a sender leaves unwritten must not be stale memory. */
		conn->win_buf = calloc(1, r->file_size < max ? r->file_size : max);
		if (!conn->win_buf) {
			rcv_fail(conn, RL_PERR_INTERNAL, "out of memory for a window");
			return false;
		}
	}
	conn->win_mr = rl_reg_mr(conn->pd, conn->win_buf, conn->win_len,
				 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!conn->win_mr) {
		rcv_fail(conn, RL_PERR_INTERNAL, "could not register a window of %u bytes",
			 conn->win_len);
		return false;
	}
	conn->srv->mem_used += conn->win_len;
	return true;
}

/*
 * Register window WIN_INDEX over the next bytes of the file and send it.
 * Step 3 is reached when window 0 is registered, not before: a sender
 * refused for memory stays at step 2.
 */
static void rcv_grant_window(struct rcv_conn *conn)
{
	const struct rcv_config *cfg = conn->srv->cfg;
	struct rcv_result *r = &conn->result;
	uint64_t max = cfg->faults.window ? cfg->faults.window : cfg->max_window;
	uint64_t left = r->file_size - r->bytes_received;
	struct rl_msg_window win;
	int slot;

	conn->win_len = (uint32_t)(left < max ? left : max);
	if (!rcv_register_window(conn, max))
		return;
	if (conn->win_index == 0 && !rcv_reach_step(conn, 3))
		return;
	win = (struct rl_msg_window){
		.index = conn->win_index,
		.offset = r->bytes_received,
		.len = conn->win_len,
		.addr = (uintptr_t)conn->win_buf,
		.rkey = conn->win_mr->rkey,
	};
	rl_info("conn %lu %s: window %u: file bytes %llu..%llu", conn->no, r->peer, win.index,
		(unsigned long long)win.offset, (unsigned long long)(win.offset + win.len));
	slot = rcv_send_slot(conn);
	if (slot < 0 ||
	    rcv_send(conn, slot,
		     rl_proto_encode_window(conn->bufs.send[slot], RL_PROTO_MAX_MSG, &win)))
		rcv_conn_end(conn, "internal: could not send WINDOW");
}

/* FILE_INFO: check the size, then grant the first window (none for 0 bytes). */
static void rcv_on_file_info(struct rcv_conn *conn, const struct rl_msg_file_info *m)
{
	const struct rcv_config *cfg = conn->srv->cfg;
	struct rcv_result *r = &conn->result;

	r->has_file_size = true;
	r->file_size = m->size;
	memcpy(conn->want_sha256, m->sha256, sizeof(conn->want_sha256));
	rcv_hex(m->sha256, sizeof(m->sha256), r->sha256);
	if (m->size > cfg->max_file) {
		rcv_fail(conn, RL_PERR_TOO_LARGE,
			 "a file of %llu bytes is past this receiver's "
			 "limit of %llu",
			 (unsigned long long)m->size, (unsigned long long)cfg->max_file);
		return;
	}
	rcv_note("conn %lu %s: file of %llu bytes", conn->no, r->peer, (unsigned long long)m->size);
	if (!rcv_reach_step(conn, 2))
		return;
	if (m->size == 0) {
		/* No window is needed: step 3 is reached at once. */
		if (rcv_reach_step(conn, 3))
			conn->state = RCV_WAIT_DONE;
		return;
	}
	conn->state = RCV_WAIT_WINDOW_DONE;
	rcv_grant_window(conn);
}

/* WINDOW_DONE: take the window back, hash it, grant the next or wait for DONE. */
static void rcv_on_window_done(struct rcv_conn *conn, const struct rl_msg_window_done *m)
{
	struct rcv_result *r = &conn->result;

	if (m->index != conn->win_index || m->len != conn->win_len) {
		rcv_fail(conn, RL_PERR_BAD_WINDOW,
			 "WINDOW_DONE %u of %u bytes, but window %u of %u "
			 "bytes was granted",
			 m->index, m->len, conn->win_index, conn->win_len);
		return;
	}
	/* Deregister first: a write that comes late now fails instead of changing the bytes. */
	rcv_release_window(conn);
	EVP_DigestUpdate(conn->sha, conn->win_buf, conn->win_len);
	r->bytes_received += conn->win_len;
	conn->win_index++;
	rcv_touch(conn);
	if (r->bytes_received < r->file_size) {
		rcv_grant_window(conn);
		return;
	}
	conn->state = RCV_WAIT_DONE;
}

/* DONE: finish the hash, compare, send RESULT. */
static void rcv_on_done(struct rcv_conn *conn)
{
	struct rcv_result *r = &conn->result;
	struct rl_msg_result res = { .received = r->bytes_received };
	unsigned int n;
	int slot;

	if (!rcv_reach_step(conn, 4))
		return;
	EVP_DigestFinal_ex(conn->sha, res.sha256, &n);
	conn->hash_good = !CRYPTO_memcmp(res.sha256, conn->want_sha256, sizeof(res.sha256));
	if (conn->srv->cfg->faults.bad_hash)
		conn->hash_good = false;
	r->hash_ok = conn->hash_good;
	res.good = conn->hash_good;
	rcv_note("conn %lu %s: hash of %llu bytes is %s", conn->no, r->peer,
		 (unsigned long long)r->bytes_received, conn->hash_good ? "good" : "BAD");
	if (!rcv_reach_step(conn, 5))
		return;
	conn->state = RCV_WAIT_ID;
	slot = rcv_send_slot(conn);
	if (slot < 0 ||
	    rcv_send(conn, slot,
		     rl_proto_encode_result(conn->bufs.send[slot], RL_PROTO_MAX_MSG, &res)))
		rcv_conn_end(conn, "internal: could not send RESULT");
}

/*
 * The ID a STUDENT_ID of SENT is for, into ID: all of SENT, or in class
 * mode (--tokens) the ID before its token. 0 if it may have a key, else
 * what rcv_token_check() found wrong.
 */
static int rcv_take_id(const struct rcv_server *srv, const char *sent, char id[RL_PROTO_MAX_ID + 1])
{
	if (srv->cfg->tokens)
		return rcv_token_check(srv->secret, srv->secret_len, sent, id);
	snprintf(id, RL_PROTO_MAX_ID + 1, "%s", sent);
	return 0;
}

/* Refuse CONN's STUDENT_ID for ID, whose token check returned ERR, saying why. */
static void rcv_refuse_id(struct rcv_conn *conn, int err, const char *id)
{
	if (err == -ENOKEY)
		rcv_fail(conn, RL_PERR_BAD_ID,
			 "no token: send ID:TOKEN, your ID and the token the course gave you");
	else if (err == -EKEYREJECTED)
		rcv_fail(conn, RL_PERR_BAD_ID,
			 "wrong token for '%s': send ID:TOKEN exactly as the course gave it", id);
	else
		rcv_fail(conn, RL_PERR_INTERNAL, "could not check the token");
}

/* STUDENT_ID: after a good hash (and, in class mode, the right token), log the key, send it. */
static void rcv_on_student_id(struct rcv_conn *conn, const struct rl_msg_student_id *m)
{
	struct rcv_server *srv = conn->srv;
	struct rcv_result *r = &conn->result;
	char id[RL_PROTO_MAX_ID + 1];
	struct rl_msg_key key;
	int id_err, slot;

	id_err = rcv_take_id(srv, m->id, id);
	snprintf(r->student_id, sizeof(r->student_id), "%s", id);
	if (!rcv_reach_step(conn, 6))
		return;
	if (id_err) {
		rcv_refuse_id(conn, id_err, id);
		return;
	}
	if (!conn->hash_good) {
		rcv_fail(conn, RL_PERR_NOT_VERIFIED,
			 "no good hash on this connection: no key for "
			 "'%s'",
			 id);
		return;
	}
	if (conn->drop_step == 7) {
		rcv_drop(conn, 7);
		return;
	}
	if (rcv_key_for(srv->secret, srv->secret_len, id, key.key)) {
		rcv_fail(conn, RL_PERR_INTERNAL, "could not compute the key");
		return;
	}
	if (rcv_key_sha256(key.key, r->key_sha256)) {
		rcv_fail(conn, RL_PERR_INTERNAL, "could not hash the key for the results log");
		return;
	}
	r->step = 7;
	r->key_issued = true;
	r->time = time(NULL);
	if (rcv_results_append(srv->results_fd, r)) {
		r->step = 6;
		r->key_issued = false;
		r->key_sha256[0] = '\0';
		rcv_fail(conn, RL_PERR_INTERNAL, "could not record the key: ask the instructor");
		return;
	}
	conn->logged = true;
	rcv_touch(conn);
	rcv_note("conn %lu %s: key issued to '%s'", conn->no, r->peer, id);
	conn->state = RCV_FINISHED;
	slot = rcv_send_slot(conn);
	if (slot < 0 ||
	    rcv_send(conn, slot,
		     rl_proto_encode_key(conn->bufs.send[slot], RL_PROTO_MAX_MSG, &key)))
		rcv_conn_end(conn, NULL);
}

/* The message type CONN waits for in its state, or 0 if none. */
static enum rl_msg_type rcv_expected(const struct rcv_conn *conn)
{
	switch (conn->state) {
	case RCV_WAIT_FILE_INFO:
		return RL_MSG_FILE_INFO;
	case RCV_WAIT_WINDOW_DONE:
		return RL_MSG_WINDOW_DONE;
	case RCV_WAIT_DONE:
		return RL_MSG_DONE;
	case RCV_WAIT_ID:
		return RL_MSG_STUDENT_ID;
	default:
		return 0;
	}
}

/* Handle one decoded message MSG in CONN's current state. */
static void rcv_on_message(struct rcv_conn *conn, const struct rl_msg *msg)
{
	struct rcv_result *r = &conn->result;
	char why[RL_PROTO_MAX_TEXT + 32];

	if (msg->type == RL_MSG_ERROR) {
		snprintf(why, sizeof(why), "sender: %s: %s", rl_proto_error_name(msg->u.error.code),
			 msg->u.error.text);
		rcv_conn_end(conn, why);
		return;
	}
	if (msg->type == RL_MSG_DONE && conn->state == RCV_WAIT_WINDOW_DONE) {
		rcv_fail(conn, RL_PERR_BAD_STATE,
			 "DONE before the data: %llu of %llu bytes written",
			 (unsigned long long)r->bytes_received, (unsigned long long)r->file_size);
		return;
	}
	if (msg->type != rcv_expected(conn)) {
		rcv_fail(conn, RL_PERR_BAD_STATE, "got %s while waiting for %s",
			 rl_msg_type_name(msg->type), rcv_state_names[conn->state]);
		return;
	}
	switch (msg->type) {
	case RL_MSG_FILE_INFO:
		rcv_on_file_info(conn, &msg->u.file_info);
		break;
	case RL_MSG_WINDOW_DONE:
		rcv_on_window_done(conn, &msg->u.window_done);
		break;
	case RL_MSG_DONE:
		rcv_on_done(conn);
		break;
	case RL_MSG_STUDENT_ID:
		rcv_on_student_id(conn, &msg->u.student_id);
		break;
	default:
		break;
	}
}

/*
 * Refuse a message of LEN bytes that failed decoding with ERR, saying what
 * was wrong. HEAD holds its first bytes, MSG what the decoder filled in.
 */
static void rcv_refuse_undecodable(struct rcv_conn *conn, enum rl_proto_error err,
				   const uint8_t head[RL_PROTO_HEADER_LEN],
				   const struct rl_msg *msg, uint32_t len)
{
	switch (err) {
	case RL_PERR_BAD_MAGIC:
		rcv_fail(conn, err, "the first 4 bytes are not the magic 0x%08x ('RL03')",
			 RL_PROTO_MAGIC);
		break;
	case RL_PERR_BAD_VERSION:
		rcv_fail(conn, err, "version %u: this receiver speaks version %u", head[4],
			 RL_PROTO_VERSION);
		break;
	case RL_PERR_BAD_TYPE:
		rcv_fail(conn, err, "type %u: the message types are 1 to 8", head[5]);
		break;
	case RL_PERR_TOO_LARGE:
		rcv_fail(conn, err,
			 "a file of %llu bytes is past the protocol's limit of 2^40 bytes",
			 (unsigned long long)msg->u.file_info.size);
		break;
	case RL_PERR_BAD_ID:
		rcv_fail(conn, err, "a student ID is 1 to %d characters from '!' to '~'",
			 RL_PROTO_MAX_ID);
		break;
	default:
		rcv_fail(conn, err, "could not decode a message of %u bytes (see docs/protocol.md)",
			 len);
		break;
	}
}

/*
 * True if WC is a plain SEND. Immediate data is no part of the protocol: a
 * SEND or an RDMA WRITE with immediate gets ERROR malformed.
 */
static bool rcv_plain_send(struct rcv_conn *conn, const struct ibv_wc *wc)
{
	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		rcv_fail(conn, RL_PERR_MALFORMED,
			 "RDMA WRITE with immediate: write file data with plain RDMA WRITEs");
		return false;
	}
	if (wc->wc_flags & IBV_WC_WITH_IMM) {
		rcv_fail(conn, RL_PERR_MALFORMED,
			 "SEND with immediate: send each message as a plain SEND");
		return false;
	}
	return true;
}

/* A receive completed: decode it, post the buffer again, handle the message. */
static void rcv_on_recv(struct rcv_conn *conn, const struct ibv_wc *wc)
{
	uint8_t head[RL_PROTO_HEADER_LEN];
	int slot = (int)wc->wr_id;
	enum rl_proto_error err;
	struct rl_msg msg;

	/* Read the buffer before posting it again: the next message may land in it. */
	memcpy(head, conn->bufs.recv[slot], sizeof(head));
	err = rl_proto_decode(conn->bufs.recv[slot], wc->byte_len, &msg);
	if (rcv_post_recv(conn, slot)) {
		rcv_conn_end(conn, "internal: could not post a receive");
		return;
	}
	if (conn->state >= RCV_CLOSING || conn->ending || !rcv_plain_send(conn, wc))
		return;
	if (err) {
		rcv_refuse_undecodable(conn, err, head, &msg, wc->byte_len);
		return;
	}
	rl_debug("conn %lu: got %s", conn->no, rl_msg_type_name(msg.type));
	rcv_on_message(conn, &msg);
}

/* A work completion of CONN: a message, a reply sent, or a failure. */
static void rcv_on_completion(struct rcv_conn *conn, const struct ibv_wc *wc)
{
	bool recv = wc->wr_id < RCV_SEND_WR_ID;
	char why[128];
	int slot;

	/* Anything the sender sent proves the connection is up (a flush proves nothing). */
	if (recv && wc->status != IBV_WC_WR_FLUSH_ERR && !rcv_connected(conn))
		return;
	if (wc->status != IBV_WC_SUCCESS) {
		if (conn->ending)
			return; /* the rest of the queue, flushed */
		if (conn->state >= RCV_CLOSING && wc->status == IBV_WC_WR_FLUSH_ERR) {
			rcv_conn_end(conn, NULL);
			return;
		}
		snprintf(why, sizeof(why), "%s: %s %s", rl_proto_error_name(RL_PERR_TRANSFER),
			 recv ? "receive" : "send", ibv_wc_status_str(wc->status));
		rcv_end_soon(conn, why);
		return;
	}
	if (recv) {
		rcv_on_recv(conn, wc);
		return;
	}
	slot = (int)(wc->wr_id - RCV_SEND_WR_ID);
	if (slot >= 0 && slot < RCV_SEND_SLOTS && conn->send_busy[slot]) {
		conn->send_busy[slot] = false;
		conn->sends_out--;
	}
	if (conn->state == RCV_CLOSING && conn->sends_out == 0 && !conn->holding)
		conn->deadline_ms = rcv_now_ms() + RCV_LINGER_MS;
}

/* The CQ of CONN has an event: re-arm it, then handle every completion. */
void rcv_conn_cq_event(struct rcv_conn *conn)
{
	struct ibv_wc wc;

	if (conn->state == RCV_DEAD)
		return;
	if (rl_req_notify_cq(conn->cq)) {
		rcv_conn_end(conn, "internal: could not arm the CQ");
		return;
	}
	while (conn->state != RCV_DEAD && ibv_poll_cq(conn->cq, 1, &wc) > 0)
		rcv_on_completion(conn, &wc);
}

/* A CM event for CONN. */
void rcv_conn_cm_event(struct rcv_conn *conn, enum rdma_cm_event_type type, int status)
{
	char why[96];

	switch (type) {
	case RDMA_CM_EVENT_ESTABLISHED:
		rcv_connected(conn);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		/* Messages that arrived before the disconnect count: handle them first. */
		rcv_conn_cq_event(conn);
		if (conn->state == RCV_DEAD)
			break;
		if (conn->state < RCV_FINISHED) {
			snprintf(why, sizeof(why), "disconnected: the sender left while %s was due",
				 rcv_state_names[conn->state]);
			rcv_conn_end(conn, why);
		} else {
			rcv_conn_end(conn, NULL);
		}
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		snprintf(why, sizeof(why), "connection failed: %s (status %d)",
			 rdma_event_str(type), status);
		rcv_conn_end(conn, why);
		break;
	default:
		rl_debug("conn %lu: %s (status %d)", conn->no, rdma_event_str(type), status);
		break;
	}
}

/* Fire CONN's due timers at NOW: held-back replies, the idle timeout. */
int64_t rcv_conn_timers(struct rcv_conn *conn, int64_t now)
{
	if (conn->state == RCV_DEAD)
		return INT64_MAX;
	if (conn->ending) {
		if (now < conn->deadline_ms)
			return conn->deadline_ms;
		rcv_conn_end(conn, NULL);
		return INT64_MAX;
	}
	if (conn->holding && now >= conn->held_until && rcv_release_held(conn)) {
		rcv_conn_end(conn, "internal: could not send a held-back reply");
		return INT64_MAX;
	}
	if (now >= conn->deadline_ms) {
		if (conn->state >= RCV_FINISHED)
			rcv_conn_end(conn, NULL);
		else
			rcv_fail(conn, RL_PERR_TIMEOUT, "no %s within %d ms",
				 rcv_state_names[conn->state], conn->srv->cfg->idle_timeout_ms);
		if (conn->state == RCV_DEAD)
			return INT64_MAX;
	}
	if (conn->holding && conn->held_until < conn->deadline_ms)
		return conn->held_until;
	return conn->deadline_ms;
}

/* PD, CQ, QP and message buffers for CONN on ID's device; 0 or -errno. */
static int rcv_conn_setup(struct rcv_conn *conn, struct rdma_cm_id *id)
{
	int i, ret;

	conn->pd = rl_alloc_pd(id->verbs);
	if (!conn->pd)
		return -ENOMEM;
	conn->cq = ibv_create_cq(id->verbs, RCV_CQ_DEPTH, conn, conn->srv->comp_ch, 0);
	if (!conn->cq)
		return rl_fail("ibv_create_cq", errno, "of %d entries", RCV_CQ_DEPTH);
	ret = rl_cm_create_qp(id, conn->pd, conn->cq, RCV_QP_DEPTH);
	if (ret)
		return ret;
	conn->msg_mr = rl_reg_mr(conn->pd, &conn->bufs, sizeof(conn->bufs), IBV_ACCESS_LOCAL_WRITE);
	if (!conn->msg_mr)
		return -ENOMEM;
	for (i = 0; i < RCV_RECV_DEPTH; i++) {
		ret = rcv_post_recv(conn, i);
		if (ret)
			return ret;
	}
	ret = rl_req_notify_cq(conn->cq);
	if (ret)
		return ret;
	conn->sha = EVP_MD_CTX_new();
	if (!conn->sha || !EVP_DigestInit_ex(conn->sha, EVP_sha256(), NULL)) {
		rl_err("EVP_DigestInit_ex SHA-256 failed");
		return -ENOMEM;
	}
	return 0;
}

/* The step --fault-drop drops sender number NO (from 1) at: its own STEP, else the last; 0: none. */
static int rcv_drop_step(const struct rcv_faults *f, unsigned long no)
{
	unsigned long last = (unsigned long)f->drop_steps;

	if (last == 0)
		return 0;
	return f->drop_step[(no < last ? no : last) - 1];
}

/*
 * A sender asks to connect on ID: give it its own resources and accept.
 * On failure everything is undone except ID, which the caller rejects.
 */
struct rcv_conn *rcv_conn_accept(struct rcv_server *srv, struct rdma_cm_id *id)
{
	struct rdma_conn_param param = {
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = RL_RNR_RETRY,
	};
	struct rcv_conn *conn = calloc(1, sizeof(*conn));

	if (!conn) {
		rl_err("out of memory for a connection");
		return NULL;
	}
	*conn = (struct rcv_conn){
		.srv = srv,
		.no = ++srv->conns_seen,
		.id = id,
		.result = { .hash_ok = -1, .self_study = srv->cfg->self_study },
	};
	rcv_peer_name(id, conn->result.peer, sizeof(conn->result.peer));
	conn->drop_step = rcv_drop_step(&srv->cfg->faults, conn->no);
	if (rcv_conn_setup(conn, id))
		goto clean_conn;
	id->context = conn;
	if (rdma_accept(id, &param)) {
		rl_fail("rdma_accept", errno, "conn %lu %s", conn->no, conn->result.peer);
		goto clean_conn;
	}
	rcv_touch(conn);
	return conn;

clean_conn:
	id->context = NULL;
	conn->id = NULL; /* the caller rejects and destroys it */
	if (id->qp)
		rdma_destroy_qp(id);
	rcv_conn_destroy(conn);
	return NULL;
}

/* Free what CONN holds, in the reverse order of rcv_conn_setup(). */
void rcv_conn_destroy(struct rcv_conn *conn)
{
	rcv_release_window(conn);
	if (conn->id)
		rl_cm_destroy(conn->id);
	if (conn->msg_mr)
		ibv_dereg_mr(conn->msg_mr);
	if (conn->cq)
		ibv_destroy_cq(conn->cq);
	if (conn->pd)
		ibv_dealloc_pd(conn->pd);
	EVP_MD_CTX_free(conn->sha);
	free(conn->win_buf);
	free(conn);
}
