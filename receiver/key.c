/*
 * key.c: secret keys. A student's key is HMAC-SHA256 of their ID under the
 * instructor's secret, cut to 80 bits and written in base32 as four groups
 * of four ("ABCD-EFGH-IJKL-MNOP"): short enough to type, long enough that
 * nobody guesses one.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "receiver.h"

#define RCV_KEY_BYTES 10 /* 80 bits: 16 base32 characters */

/*
 * Read the secret in PATH into BUF. The file must be a regular file that
 * only its owner can read (mode 600 or 400) and must hold at least
 * RCV_SECRET_MIN bytes. One line end ("\n" or "\r\n") at the very end is
 * dropped, as `echo ... > FILE` adds one; any other byte, a lone '\r'
 * included, is part of the secret. Serving and --verify both read it here.
 * Returns the length.
 */
int rcv_load_secret(const char *path, uint8_t *buf, size_t size)
{
	struct stat st;
	ssize_t n;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return rl_fail("open", errno,
			       "secret file %s (give --secret-file, or --self-study "
			       "for practice keys)",
			       path);
	if (fstat(fd, &st)) {
		ret = rl_fail("fstat", errno, "secret file %s", path);
		goto clean_fd;
	}
	if (!S_ISREG(st.st_mode)) {
		rl_err("secret file %s is not a regular file", path);
		ret = -EINVAL;
		goto clean_fd;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		rl_err("secret file %s is open to group or others (mode %04o): run 'chmod 600 %s'",
		       path, (unsigned)(st.st_mode & 07777), path);
		ret = -EPERM;
		goto clean_fd;
	}
	n = read(fd, buf, size);
	if (n < 0) {
		ret = rl_fail("read", errno, "secret file %s", path);
		goto clean_fd;
	}
	if (n > 0 && buf[n - 1] == '\n') {
		n--;
		if (n > 0 && buf[n - 1] == '\r')
			n--;
	}
	if (n < RCV_SECRET_MIN || (size_t)n >= size) {
		rl_err("secret file %s holds %zd bytes: use %d to %zu (e.g. 'head -c 24 "
		       "/dev/urandom | base64 > %s')",
		       path, n, RCV_SECRET_MIN, size - 1, path);
		ret = -EINVAL;
		goto clean_fd;
	}
	ret = (int)n;
clean_fd:
	close(fd);
	return ret;
}

/* Write the N bytes of IN as base32 (RFC 4648 alphabet, no padding) into OUT. */
static void rcv_base32(const uint8_t *in, size_t n, char *out)
{
	static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	uint32_t bits = 0;
	int nbits = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		bits = (bits << 8) | in[i];
		nbits += 8;
		while (nbits >= 5) {
			*out++ = alphabet[(bits >> (nbits - 5)) & 31];
			nbits -= 5;
		}
	}
	if (nbits > 0)
		*out++ = alphabet[(bits << (5 - nbits)) & 31];
	*out = '\0';
}

/* The key for ID under SECRET into KEY; 0, or -EIO if OpenSSL fails. */
int rcv_key_for(const uint8_t *secret, size_t secret_len, const char *id, char key[RCV_KEY_LEN + 1])
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int mac_len = 0;
	char plain[RCV_KEY_BYTES * 8 / 5 + 1];
	int i, o = 0;

	if (!HMAC(EVP_sha256(), secret, (int)secret_len, (const unsigned char *)id, strlen(id), mac,
		  &mac_len)) {
		rl_err("HMAC-SHA256 of student ID '%s' failed", id);
		return -EIO;
	}
	rcv_base32(mac, RCV_KEY_BYTES, plain);
	for (i = 0; i < 16; i++) {
		if (i && i % 4 == 0)
			key[o++] = '-';
		key[o++] = plain[i];
	}
	key[o] = '\0';
	return 0;
}

/*
 * The letters and digits of KEY, upper-cased, without the dashes and spaces
 * a student may have typed, into OUT; their count, or 0 if KEY is longer
 * than any key.
 */
static size_t rcv_key_letters(const char *key, char out[RCV_KEY_LEN + 1])
{
	size_t n = 0, i;

	for (i = 0; key[i] && n < RCV_KEY_LEN; i++) {
		if (key[i] == '-' || key[i] == ' ')
			continue;
		out[n++] = (key[i] >= 'a' && key[i] <= 'z') ? key[i] - 'a' + 'A' : key[i];
	}
	out[n] = '\0';
	return key[i] ? 0 : n;
}

/* True if KEY is ID's key: case, dashes and spaces do not matter. */
bool rcv_key_matches(const uint8_t *secret, size_t secret_len, const char *id, const char *key)
{
	char want[RCV_KEY_LEN + 1], a[RCV_KEY_LEN + 1], b[RCV_KEY_LEN + 1];
	size_t na, nb;

	if (rcv_key_for(secret, secret_len, id, want))
		return false;
	na = rcv_key_letters(want, a);
	nb = rcv_key_letters(key, b);
	return nb && na == nb && CRYPTO_memcmp(a, b, na) == 0;
}

void rcv_hex(const uint8_t *in, size_t n, char *out)
{
	static const char digit[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digit[in[i] >> 4];
		out[2 * i + 1] = digit[in[i] & 15];
	}
	out[2 * n] = '\0';
}

int rcv_key_sha256(const char *key, char hex[65])
{
	uint8_t md[32];
	char letters[RCV_KEY_LEN + 1];
	size_t n = rcv_key_letters(key, letters);

	hex[0] = '\0';
	if (!EVP_Digest(letters, n, md, NULL, EVP_sha256(), NULL))
		return -EIO;
	rcv_hex(md, sizeof(md), hex);
	return 0;
}
