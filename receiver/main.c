/*
 * main.c: rdmalab-receiver, the Lab 3 reference receiver. Serves senders
 * (docs/protocol.md); or checks one key (--verify) or a file of them
 * (--verify-file) offline; or makes a roster's tokens (--make-tokens).
 * See docs/receiver.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>

#include "receiver.h"

/* Load the secret CFG names (or the self-study one, or a random one) into BUF; its length or -errno. */
static int load_secret(const struct rcv_config *cfg, uint8_t *buf, size_t size)
{
	if (cfg->secret_random) {
		if (size < 32 || getrandom(buf, 32, 0) != 32)
			return rl_fail("getrandom", errno, "32 bytes of secret");
		return 32;
	}
	if (cfg->self_study) {
		memcpy(buf, RCV_SELF_STUDY_SECRET, sizeof(RCV_SELF_STUDY_SECRET) - 1);
		return (int)sizeof(RCV_SELF_STUDY_SECRET) - 1;
	}
	return rcv_load_secret(cfg->secret_file, buf, size);
}

/* --verify ID KEY: print one verdict line; 0 if KEY is ID's key, else 1. */
static int verify(const struct rcv_config *cfg, const uint8_t *secret, size_t len)
{
	const char *kind = cfg->self_study ? " (self-study secret)" : "";

	if (rcv_key_matches(secret, len, cfg->verify_id, cfg->verify_key)) {
		printf("OK: %s is the key of '%s'%s\n", cfg->verify_key, cfg->verify_id, kind);
		return 0;
	}
	printf("BAD: %s is not the key of '%s'%s\n", cfg->verify_key, cfg->verify_id, kind);
	return 1;
}

/*
 * --verify-file or --make-tokens: run it over the file CFG names ('-':
 * stdin), printing to stdout; its exit status (2 if the file cannot be opened).
 */
static int run_file(const struct rcv_config *cfg, const uint8_t *secret, size_t len)
{
	const char *path = cfg->verify_file ? cfg->verify_file : cfg->make_tokens;
	const char *name = strcmp(path, "-") ? path : "stdin";
	FILE *in = strcmp(path, "-") ? fopen(path, "r") : stdin;
	int ret;

	if (!in) {
		rl_fail("open", errno, "%s", path);
		return 2;
	}
	if (cfg->verify_file)
		ret = rcv_verify_file(in, name, stdout, secret, len, cfg->self_study);
	else
		ret = rcv_make_tokens(in, name, stdout, secret, len);
	if (in != stdin)
		fclose(in);
	if (fflush(stdout)) {
		rl_fail("write", errno, "stdout");
		return 2;
	}
	return ret;
}

int main(int argc, char **argv)
{
	uint8_t secret[RCV_SECRET_MAX];
	struct rcv_config cfg;
	int len, ret;

	if (rcv_parse_args(argc, argv, getenv, &cfg))
		return 2;
	if (cfg.common.help) {
		rcv_usage(stdout, cfg.common.prog);
		return 0;
	}
	rl_log_set_level(cfg.common.verbose);
	/*
	 * Not dumpable: a process of the same user (a student's test, in make
	 * check) cannot read its memory (the secret) or its descriptors (the
	 * results log) through /proc.
	 */
	prctl(PR_SET_DUMPABLE, 0);
	len = load_secret(&cfg, secret, sizeof(secret));
	if (len < 0)
		return 2;
	if (cfg.verify_id)
		ret = verify(&cfg, secret, (size_t)len);
	else if (cfg.verify_file || cfg.make_tokens)
		ret = run_file(&cfg, secret, (size_t)len);
	else
		ret = rcv_serve(&cfg, secret, (size_t)len) ? 1 : 0;
	memset(secret, 0, sizeof(secret));
	return ret;
}
