/*
 * wire.c: explicit wire formats. A cursor walks a byte buffer and puts or
 * gets fixed-width fields in network byte order (big-endian). The first
 * overrun sets a sticky error: later puts write nothing, later gets return 0,
 * and nothing outside the buffer is ever touched. Check rl_wire_status()
 * once, after the last field.
 */
#include <errno.h>
#include <string.h>

#include "rdmalab.h"

/* Start encoding into BUF of LEN bytes. */
void rl_wire_writer(struct rl_wire *w, void *buf, size_t len)
{
	*w = (struct rl_wire){ .out = buf, .in = buf, .len = len };
}

/* Start decoding LEN bytes from BUF. */
void rl_wire_reader(struct rl_wire *w, const void *buf, size_t len)
{
	*w = (struct rl_wire){ .in = buf, .len = len };
}

/* Claim N bytes at the cursor: their offset, or -1 (and the error) if short. */
static long rl_wire_claim(struct rl_wire *w, size_t n)
{
	size_t at = w->pos;

	if (w->err || n > w->len - w->pos) {
		w->err = true;
		return -1;
	}
	w->pos += n;
	return (long)at;
}

/* Put N bytes of VALUE, most significant first. */
static void rl_wire_put_be(struct rl_wire *w, uint64_t value, size_t n)
{
	long at;
	size_t i;

	if (!w->out) {
		w->err = true; /* a reader cannot encode */
		return;
	}
	at = rl_wire_claim(w, n);
	if (at < 0)
		return;
	for (i = 0; i < n; i++)
		w->out[at + i] = (uint8_t)(value >> (8 * (n - 1 - i)));
}

/* Get N bytes, most significant first; 0 after an error. */
static uint64_t rl_wire_get_be(struct rl_wire *w, size_t n)
{
	uint64_t value = 0;
	long at = rl_wire_claim(w, n);
	size_t i;

	if (at < 0)
		return 0;
	for (i = 0; i < n; i++)
		value = (value << 8) | w->in[at + i];
	return value;
}

void rl_wire_put_u8(struct rl_wire *w, uint8_t v)
{
	rl_wire_put_be(w, v, 1);
}

void rl_wire_put_u16(struct rl_wire *w, uint16_t v)
{
	rl_wire_put_be(w, v, 2);
}

void rl_wire_put_u32(struct rl_wire *w, uint32_t v)
{
	rl_wire_put_be(w, v, 4);
}

void rl_wire_put_u64(struct rl_wire *w, uint64_t v)
{
	rl_wire_put_be(w, v, 8);
}

/* Put N raw bytes (a GID, a hash, a name): copied as they are. */
void rl_wire_put_bytes(struct rl_wire *w, const void *src, size_t n)
{
	long at;

	if (!w->out) {
		w->err = true;
		return;
	}
	at = rl_wire_claim(w, n);
	if (at >= 0)
		memcpy(w->out + at, src, n);
}

uint8_t rl_wire_get_u8(struct rl_wire *w)
{
	return (uint8_t)rl_wire_get_be(w, 1);
}

uint16_t rl_wire_get_u16(struct rl_wire *w)
{
	return (uint16_t)rl_wire_get_be(w, 2);
}

uint32_t rl_wire_get_u32(struct rl_wire *w)
{
	return (uint32_t)rl_wire_get_be(w, 4);
}

uint64_t rl_wire_get_u64(struct rl_wire *w)
{
	return rl_wire_get_be(w, 8);
}

/* Get N raw bytes into DST; DST is zeroed when they are not all there. */
void rl_wire_get_bytes(struct rl_wire *w, void *dst, size_t n)
{
	long at = rl_wire_claim(w, n);

	if (at < 0)
		memset(dst, 0, n);
	else
		memcpy(dst, w->in + at, n);
}

/* Bytes encoded or decoded so far. */
size_t rl_wire_used(const struct rl_wire *w)
{
	return w->pos;
}

/* Bytes left after the cursor. */
size_t rl_wire_left(const struct rl_wire *w)
{
	return w->len - w->pos;
}

/* 0 if every put and get fit, else -EMSGSIZE. */
int rl_wire_status(const struct rl_wire *w)
{
	return w->err ? -EMSGSIZE : 0;
}
