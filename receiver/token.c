/*
 * token.c: tokens, which make a student ID count in class mode (--tokens).
 * The course gives each student a token with their ID; the student sends
 * "ID:TOKEN" as their ID, and the receiver issues a key only when TOKEN is
 * the token of ID. A token is the first RCV_TOKEN_BYTES of
 * HMAC-SHA256(secret, "token " || ID), in hex: the space, which no ID
 * holds, keeps tokens and keys (HMAC of the ID alone) from ever meeting.
 * The key stays a function of the ID alone.
 */
#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "receiver.h"

#define RCV_TOKEN_BYTES (RCV_TOKEN_LEN / 2)
#define RCV_TOKEN_DOMAIN "token "

/* The token of ID under SECRET into TOKEN, lower-case hex; 0, or -EIO. */
int rcv_token_for(const uint8_t *secret, size_t secret_len, const char *id,
		  char token[RCV_TOKEN_LEN + 1])
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int mac_len = 0;
	char msg[sizeof(RCV_TOKEN_DOMAIN) + RL_PROTO_MAX_ID];

	if (strlen(id) > RL_PROTO_MAX_ID) {
		rl_err("student ID '%.20s...': longer than %d characters", id, RL_PROTO_MAX_ID);
		return -EINVAL;
	}
	snprintf(msg, sizeof(msg), "%s%s", RCV_TOKEN_DOMAIN, id);
	if (!HMAC(EVP_sha256(), secret, (int)secret_len, (const unsigned char *)msg, strlen(msg),
		  mac, &mac_len)) {
		rl_err("HMAC-SHA256 of the token of student ID '%s' failed", id);
		return -EIO;
	}
	rcv_hex(mac, RCV_TOKEN_BYTES, token);
	return 0;
}

/*
 * Split SENT ("ID:TOKEN", split at its last ':') into ID and a pointer to
 * its token; without a ':' the whole of SENT is the ID and the token is
 * empty. The ID is cut to RL_PROTO_MAX_ID characters (SENT is no longer).
 */
static const char *rcv_token_split(const char *sent, char id[RL_PROTO_MAX_ID + 1])
{
	const char *sep = strrchr(sent, RCV_TOKEN_SEP);
	size_t n = sep ? (size_t)(sep - sent) : strlen(sent);

	if (n > RL_PROTO_MAX_ID)
		n = RL_PROTO_MAX_ID;
	memcpy(id, sent, n);
	id[n] = '\0';
	return sep ? sep + 1 : "";
}

/* TOKEN lower-cased into OUT if it is RCV_TOKEN_LEN hex digits; else false. */
static bool rcv_token_norm(const char *token, char out[RCV_TOKEN_LEN + 1])
{
	size_t i;
	char c;

	if (strlen(token) != RCV_TOKEN_LEN)
		return false;
	for (i = 0; i < RCV_TOKEN_LEN; i++) {
		c = token[i];
		if (c >= 'A' && c <= 'F')
			c = (char)(c - 'A' + 'a');
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
		out[i] = c;
	}
	out[i] = '\0';
	return true;
}

/*
 * Class mode: check SENT, a STUDENT_ID as "ID:TOKEN". The ID alone goes
 * into ID (what keys and the log use). 0 if TOKEN is ID's token (hex digits
 * in any case); -ENOKEY if there is no token (no ':', or nothing on one
 * side of it); -EKEYREJECTED if it is not ID's token; -EIO if OpenSSL
 * failed.
 */
int rcv_token_check(const uint8_t *secret, size_t secret_len, const char *sent,
		    char id[RL_PROTO_MAX_ID + 1])
{
	char want[RCV_TOKEN_LEN + 1], got[RCV_TOKEN_LEN + 1];
	const char *token = rcv_token_split(sent, id);

	if (!id[0] || !token[0])
		return -ENOKEY;
	if (rcv_token_for(secret, secret_len, id, want))
		return -EIO;
	if (!rcv_token_norm(token, got) || CRYPTO_memcmp(want, got, RCV_TOKEN_LEN))
		return -EKEYREJECTED;
	return 0;
}
