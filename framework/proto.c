/*
 * proto.c: the Lab 3 messages (docs/protocol.md). Every message is an 8-byte
 * header (magic, version, type, body length) and a body of fixed-width
 * big-endian fields, written and read with the rl_wire cursor. Decoding
 * checks everything a peer could get wrong and never trusts a length it has
 * not checked against the bytes it was given.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "rdmalab.h"

/* Body lengths of the fixed-size messages. */
#define RL_BODY_FILE_INFO (8 + 32)
#define RL_BODY_WINDOW (4 + 8 + 4 + 8 + 4)
#define RL_BODY_WINDOW_DONE (4 + 4)
#define RL_BODY_DONE 0
#define RL_BODY_RESULT (1 + 8 + 32)

/* The header every message starts with. */
struct rl_proto_header {
	uint32_t magic;
	uint8_t version;
	uint8_t type;
	uint16_t body_len;
};

static const char *const rl_msg_type_names[] = {
	[RL_MSG_FILE_INFO] = "FILE_INFO",
	[RL_MSG_WINDOW] = "WINDOW",
	[RL_MSG_WINDOW_DONE] = "WINDOW_DONE",
	[RL_MSG_DONE] = "DONE",
	[RL_MSG_RESULT] = "RESULT",
	[RL_MSG_STUDENT_ID] = "STUDENT_ID",
	[RL_MSG_KEY] = "KEY",
	[RL_MSG_ERROR] = "ERROR",
};

static const char *const rl_proto_error_names[] = {
	[RL_PERR_NONE] = "none",
	[RL_PERR_BAD_MAGIC] = "bad-magic",
	[RL_PERR_BAD_VERSION] = "bad-version",
	[RL_PERR_BAD_TYPE] = "bad-type",
	[RL_PERR_MALFORMED] = "malformed",
	[RL_PERR_BAD_STATE] = "bad-state",
	[RL_PERR_TOO_LARGE] = "too-large",
	[RL_PERR_BUSY] = "busy",
	[RL_PERR_TIMEOUT] = "timeout",
	[RL_PERR_BAD_ID] = "bad-id",
	[RL_PERR_NOT_VERIFIED] = "not-verified",
	[RL_PERR_BAD_WINDOW] = "bad-window",
	[RL_PERR_TRANSFER] = "transfer-failed",
	[RL_PERR_INTERNAL] = "internal",
};

/* "FILE_INFO", "WINDOW" ...; "UNKNOWN" for a type that does not exist. */
const char *rl_msg_type_name(int type)
{
	if (type <= 0 || type >= (int)(sizeof(rl_msg_type_names) / sizeof(rl_msg_type_names[0])))
		return "UNKNOWN";
	return rl_msg_type_names[type];
}

/* "bad-magic", "busy" ...; "unknown" for a code that does not exist. */
const char *rl_proto_error_name(int code)
{
	if (code < 0 ||
	    code >= (int)(sizeof(rl_proto_error_names) / sizeof(rl_proto_error_names[0])))
		return "unknown";
	return rl_proto_error_names[code];
}

/* True if the LEN bytes at S are all in LO..HI. */
static bool rl_proto_chars_in(const char *s, size_t len, char lo, char hi)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] < lo || s[i] > hi)
			return false;
	}
	return true;
}

/* A student ID is 1..RL_PROTO_MAX_ID graphic ASCII characters (no spaces). */
bool rl_proto_id_valid(const char *s, size_t len)
{
	return len >= 1 && len <= RL_PROTO_MAX_ID && rl_proto_chars_in(s, len, '!', '~');
}

/* Start a message of TYPE with BODY_LEN bytes of body in BUF. */
static void rl_proto_begin(struct rl_wire *w, void *buf, size_t size, enum rl_msg_type type,
			   size_t body_len)
{
	rl_wire_writer(w, buf, size);
	rl_wire_put_u32(w, RL_PROTO_MAGIC);
	rl_wire_put_u8(w, RL_PROTO_VERSION);
	rl_wire_put_u8(w, (uint8_t)type);
	rl_wire_put_u16(w, (uint16_t)body_len);
}

/* The encoders' return: the message length, or -EMSGSIZE if it did not fit. */
static int rl_proto_end(const struct rl_wire *w)
{
	int ret = rl_wire_status(w);

	return ret ? ret : (int)rl_wire_used(w);
}

/*
 * Read and check the header of the LEN bytes at BUF, leaving W at the body.
 * The body must be exactly the bytes that follow the header.
 */
static enum rl_proto_error rl_proto_read_header(struct rl_wire *w, const void *buf, size_t len,
						struct rl_proto_header *h)
{
	if (len < RL_PROTO_HEADER_LEN || len > RL_PROTO_MAX_MSG)
		return RL_PERR_MALFORMED;
	rl_wire_reader(w, buf, len);
	h->magic = rl_wire_get_u32(w);
	h->version = rl_wire_get_u8(w);
	h->type = rl_wire_get_u8(w);
	h->body_len = rl_wire_get_u16(w);
	if (h->magic != RL_PROTO_MAGIC)
		return RL_PERR_BAD_MAGIC;
	if (h->version != RL_PROTO_VERSION)
		return RL_PERR_BAD_VERSION;
	if (h->type < RL_MSG_FILE_INFO || h->type > RL_MSG_ERROR)
		return RL_PERR_BAD_TYPE;
	if (h->body_len != rl_wire_left(w))
		return RL_PERR_MALFORMED;
	return RL_PERR_NONE;
}

/*
 * Check the header of BUF for a message of TYPE whose body is BODY_LEN bytes
 * (or any length when BODY_LEN is negative). A valid message of another type
 * is RL_PERR_BAD_STATE: not what the caller was waiting for.
 */
static enum rl_proto_error rl_proto_expect(struct rl_wire *w, const void *buf, size_t len,
					   enum rl_msg_type type, long body_len)
{
	struct rl_proto_header h;
	enum rl_proto_error err = rl_proto_read_header(w, buf, len, &h);

	if (err)
		return err;
	if (h.type != type)
		return RL_PERR_BAD_STATE;
	if (body_len >= 0 && h.body_len != body_len)
		return RL_PERR_MALFORMED;
	return RL_PERR_NONE;
}

/* The decoders' last check: every field was there and nothing is left over. */
static enum rl_proto_error rl_proto_finish(const struct rl_wire *w)
{
	if (rl_wire_status(w) || rl_wire_left(w))
		return RL_PERR_MALFORMED;
	return RL_PERR_NONE;
}

/* FILE_INFO: size u64, sha256 32 bytes. */
int rl_proto_encode_file_info(void *buf, size_t size, const struct rl_msg_file_info *m)
{
	struct rl_wire w;

	if (m->size > RL_PROTO_MAX_FILE)
		return -EINVAL;
	rl_proto_begin(&w, buf, size, RL_MSG_FILE_INFO, RL_BODY_FILE_INFO);
	rl_wire_put_u64(&w, m->size);
	rl_wire_put_bytes(&w, m->sha256, sizeof(m->sha256));
	return rl_proto_end(&w);
}

enum rl_proto_error rl_proto_decode_file_info(const void *buf, size_t len,
					      struct rl_msg_file_info *m)
{
	struct rl_wire w;
	enum rl_proto_error err =
		rl_proto_expect(&w, buf, len, RL_MSG_FILE_INFO, RL_BODY_FILE_INFO);

	if (err)
		return err;
	m->size = rl_wire_get_u64(&w);
	rl_wire_get_bytes(&w, m->sha256, sizeof(m->sha256));
	err = rl_proto_finish(&w);
	if (!err && m->size > RL_PROTO_MAX_FILE)
		err = RL_PERR_TOO_LARGE;
	return err;
}

/* True if window M lies inside the largest file the protocol allows. */
static bool rl_proto_window_valid(const struct rl_msg_window *m)
{
	return m->len >= 1 && m->offset <= RL_PROTO_MAX_FILE &&
	       m->len <= RL_PROTO_MAX_FILE - m->offset;
}

/* WINDOW: index u32, offset u64, len u32, addr u64, rkey u32. */
int rl_proto_encode_window(void *buf, size_t size, const struct rl_msg_window *m)
{
	struct rl_wire w;

	if (!rl_proto_window_valid(m))
		return -EINVAL;
	rl_proto_begin(&w, buf, size, RL_MSG_WINDOW, RL_BODY_WINDOW);
	rl_wire_put_u32(&w, m->index);
	rl_wire_put_u64(&w, m->offset);
	rl_wire_put_u32(&w, m->len);
	rl_wire_put_u64(&w, m->addr);
	rl_wire_put_u32(&w, m->rkey);
	return rl_proto_end(&w);
}

enum rl_proto_error rl_proto_decode_window(const void *buf, size_t len, struct rl_msg_window *m)
{
	struct rl_wire w;
	enum rl_proto_error err = rl_proto_expect(&w, buf, len, RL_MSG_WINDOW, RL_BODY_WINDOW);

	if (err)
		return err;
	m->index = rl_wire_get_u32(&w);
	m->offset = rl_wire_get_u64(&w);
	m->len = rl_wire_get_u32(&w);
	m->addr = rl_wire_get_u64(&w);
	m->rkey = rl_wire_get_u32(&w);
	err = rl_proto_finish(&w);
	if (!err && !rl_proto_window_valid(m))
		err = RL_PERR_MALFORMED;
	return err;
}

/* WINDOW_DONE: index u32, len u32. */
int rl_proto_encode_window_done(void *buf, size_t size, const struct rl_msg_window_done *m)
{
	struct rl_wire w;

	rl_proto_begin(&w, buf, size, RL_MSG_WINDOW_DONE, RL_BODY_WINDOW_DONE);
	rl_wire_put_u32(&w, m->index);
	rl_wire_put_u32(&w, m->len);
	return rl_proto_end(&w);
}

enum rl_proto_error rl_proto_decode_window_done(const void *buf, size_t len,
						struct rl_msg_window_done *m)
{
	struct rl_wire w;
	enum rl_proto_error err =
		rl_proto_expect(&w, buf, len, RL_MSG_WINDOW_DONE, RL_BODY_WINDOW_DONE);

	if (err)
		return err;
	m->index = rl_wire_get_u32(&w);
	m->len = rl_wire_get_u32(&w);
	return rl_proto_finish(&w);
}

/* DONE: no body. */
int rl_proto_encode_done(void *buf, size_t size)
{
	struct rl_wire w;

	rl_proto_begin(&w, buf, size, RL_MSG_DONE, RL_BODY_DONE);
	return rl_proto_end(&w);
}

enum rl_proto_error rl_proto_decode_done(const void *buf, size_t len)
{
	struct rl_wire w;
	enum rl_proto_error err = rl_proto_expect(&w, buf, len, RL_MSG_DONE, RL_BODY_DONE);

	return err ? err : rl_proto_finish(&w);
}

/* RESULT: good u8 (0 or 1), received u64, sha256 32 bytes. */
int rl_proto_encode_result(void *buf, size_t size, const struct rl_msg_result *m)
{
	struct rl_wire w;

	if (m->good > 1)
		return -EINVAL;
	rl_proto_begin(&w, buf, size, RL_MSG_RESULT, RL_BODY_RESULT);
	rl_wire_put_u8(&w, m->good);
	rl_wire_put_u64(&w, m->received);
	rl_wire_put_bytes(&w, m->sha256, sizeof(m->sha256));
	return rl_proto_end(&w);
}

enum rl_proto_error rl_proto_decode_result(const void *buf, size_t len, struct rl_msg_result *m)
{
	struct rl_wire w;
	enum rl_proto_error err = rl_proto_expect(&w, buf, len, RL_MSG_RESULT, RL_BODY_RESULT);

	if (err)
		return err;
	m->good = rl_wire_get_u8(&w);
	m->received = rl_wire_get_u64(&w);
	rl_wire_get_bytes(&w, m->sha256, sizeof(m->sha256));
	err = rl_proto_finish(&w);
	if (!err && m->good > 1)
		err = RL_PERR_MALFORMED;
	return err;
}

/* Put a string field: its length as a u8, then its bytes, no NUL. */
static void rl_proto_put_string(struct rl_wire *w, const char *s, size_t len)
{
	rl_wire_put_u8(w, (uint8_t)len);
	rl_wire_put_bytes(w, s, len);
}

/*
 * Get a string field into DST (room for MAX characters and a NUL): a u8
 * length that must match the bytes left, then the bytes. 0, or -1 if the
 * length does not match.
 */
static int rl_proto_get_string(struct rl_wire *w, char *dst, size_t max, size_t *len)
{
	*len = rl_wire_get_u8(w);
	if (rl_wire_status(w) || *len != rl_wire_left(w))
		return -1;
	if (*len > max) {
		*dst = '\0';
		return 0; /* the caller rejects it by its length */
	}
	rl_wire_get_bytes(w, dst, *len);
	dst[*len] = '\0';
	return 0;
}

/* STUDENT_ID: id_len u8, then that many graphic ASCII bytes. */
int rl_proto_encode_student_id(void *buf, size_t size, const struct rl_msg_student_id *m)
{
	size_t len = strnlen(m->id, sizeof(m->id));
	struct rl_wire w;

	if (!rl_proto_id_valid(m->id, len))
		return -EINVAL;
	rl_proto_begin(&w, buf, size, RL_MSG_STUDENT_ID, 1 + len);
	rl_proto_put_string(&w, m->id, len);
	return rl_proto_end(&w);
}

enum rl_proto_error rl_proto_decode_student_id(const void *buf, size_t len,
					       struct rl_msg_student_id *m)
{
	struct rl_wire w;
	enum rl_proto_error err = rl_proto_expect(&w, buf, len, RL_MSG_STUDENT_ID, -1);
	size_t n;

	if (err)
		return err;
	if (rl_proto_get_string(&w, m->id, RL_PROTO_MAX_ID, &n))
		return RL_PERR_MALFORMED;
	if (!rl_proto_id_valid(m->id, n))
		return RL_PERR_BAD_ID;
	return rl_proto_finish(&w);
}

/* KEY: key_len u8, then that many graphic ASCII bytes. */
int rl_proto_encode_key(void *buf, size_t size, const struct rl_msg_key *m)
{
	size_t len = strnlen(m->key, sizeof(m->key));
	struct rl_wire w;

	if (len < 1 || len > RL_PROTO_MAX_KEY || !rl_proto_chars_in(m->key, len, '!', '~'))
		return -EINVAL;
	rl_proto_begin(&w, buf, size, RL_MSG_KEY, 1 + len);
	rl_proto_put_string(&w, m->key, len);
	return rl_proto_end(&w);
}

enum rl_proto_error rl_proto_decode_key(const void *buf, size_t len, struct rl_msg_key *m)
{
	struct rl_wire w;
	enum rl_proto_error err = rl_proto_expect(&w, buf, len, RL_MSG_KEY, -1);
	size_t n;

	if (err)
		return err;
	if (rl_proto_get_string(&w, m->key, RL_PROTO_MAX_KEY, &n) || n < 1 ||
	    n > RL_PROTO_MAX_KEY || !rl_proto_chars_in(m->key, n, '!', '~'))
		return RL_PERR_MALFORMED;
	return rl_proto_finish(&w);
}

/* ERROR: code u16, text_len u8, then that many printable ASCII bytes. */
int rl_proto_encode_error(void *buf, size_t size, const struct rl_msg_error *m)
{
	size_t len = strnlen(m->text, sizeof(m->text));
	struct rl_wire w;

	if (len > RL_PROTO_MAX_TEXT || !rl_proto_chars_in(m->text, len, ' ', '~'))
		return -EINVAL;
	rl_proto_begin(&w, buf, size, RL_MSG_ERROR, 2 + 1 + len);
	rl_wire_put_u16(&w, m->code);
	rl_proto_put_string(&w, m->text, len);
	return rl_proto_end(&w);
}

enum rl_proto_error rl_proto_decode_error(const void *buf, size_t len, struct rl_msg_error *m)
{
	struct rl_wire w;
	enum rl_proto_error err = rl_proto_expect(&w, buf, len, RL_MSG_ERROR, -1);
	size_t n;

	if (err)
		return err;
	m->code = rl_wire_get_u16(&w);
	if (rl_proto_get_string(&w, m->text, RL_PROTO_MAX_TEXT, &n) || n > RL_PROTO_MAX_TEXT ||
	    !rl_proto_chars_in(m->text, n, ' ', '~'))
		return RL_PERR_MALFORMED;
	return rl_proto_finish(&w);
}

/*
 * Encode an ERROR of CODE whose text is FMT formatted, cut to
 * RL_PROTO_MAX_TEXT, with any byte that is not printable made a '?'.
 */
int rl_proto_encode_errorf(void *buf, size_t size, enum rl_proto_error code, const char *fmt, ...)
{
	struct rl_msg_error m = { .code = (uint16_t)code };
	va_list ap;
	char *p;

	va_start(ap, fmt);
	vsnprintf(m.text, sizeof(m.text), fmt, ap);
	va_end(ap);
	for (p = m.text; *p; p++) {
		if (*p < ' ' || *p > '~')
			*p = '?';
	}
	return rl_proto_encode_error(buf, size, &m);
}

/* Encode MSG with the encoder its type names; -EINVAL for an unknown type. */
int rl_proto_encode(void *buf, size_t size, const struct rl_msg *msg)
{
	switch (msg->type) {
	case RL_MSG_FILE_INFO:
		return rl_proto_encode_file_info(buf, size, &msg->u.file_info);
	case RL_MSG_WINDOW:
		return rl_proto_encode_window(buf, size, &msg->u.window);
	case RL_MSG_WINDOW_DONE:
		return rl_proto_encode_window_done(buf, size, &msg->u.window_done);
	case RL_MSG_DONE:
		return rl_proto_encode_done(buf, size);
	case RL_MSG_RESULT:
		return rl_proto_encode_result(buf, size, &msg->u.result);
	case RL_MSG_STUDENT_ID:
		return rl_proto_encode_student_id(buf, size, &msg->u.student_id);
	case RL_MSG_KEY:
		return rl_proto_encode_key(buf, size, &msg->u.key);
	case RL_MSG_ERROR:
		return rl_proto_encode_error(buf, size, &msg->u.error);
	}
	return -EINVAL;
}

/* Decode any message into MSG: the header says which decoder reads the body. */
enum rl_proto_error rl_proto_decode(const void *buf, size_t len, struct rl_msg *msg)
{
	struct rl_proto_header h;
	struct rl_wire w;
	enum rl_proto_error err = rl_proto_read_header(&w, buf, len, &h);

	memset(msg, 0, sizeof(*msg));
	if (err)
		return err;
	msg->type = (enum rl_msg_type)h.type;
	switch (msg->type) {
	case RL_MSG_FILE_INFO:
		return rl_proto_decode_file_info(buf, len, &msg->u.file_info);
	case RL_MSG_WINDOW:
		return rl_proto_decode_window(buf, len, &msg->u.window);
	case RL_MSG_WINDOW_DONE:
		return rl_proto_decode_window_done(buf, len, &msg->u.window_done);
	case RL_MSG_DONE:
		return rl_proto_decode_done(buf, len);
	case RL_MSG_RESULT:
		return rl_proto_decode_result(buf, len, &msg->u.result);
	case RL_MSG_STUDENT_ID:
		return rl_proto_decode_student_id(buf, len, &msg->u.student_id);
	case RL_MSG_KEY:
		return rl_proto_decode_key(buf, len, &msg->u.key);
	case RL_MSG_ERROR:
		return rl_proto_decode_error(buf, len, &msg->u.error);
	}
	return RL_PERR_BAD_TYPE;
}
