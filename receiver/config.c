/*
 * config.c: the receiver's command line. Its own options (limits, secret,
 * results log, test-only faults) are taken out first; what is left goes to
 * the framework's rl_parse_args_env() (-d -g -i -p -v, the address).
 * Parsing is pure, so the unit tests feed it anything.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "receiver.h"

#define KiB 1024ULL
#define MiB (1024 * KiB)
#define GiB (1024 * MiB)

/* The receiver's own options: name, whether it takes a value, what it is. */
enum rcv_opt_id {
	OPT_MAX_CONNS,
	OPT_MAX_FILE,
	OPT_MAX_WINDOW,
	OPT_MEM_BUDGET,
	OPT_IDLE_TIMEOUT,
	OPT_SECRET_FILE,
	OPT_SELF_STUDY,
	OPT_SECRET_RANDOM,
	OPT_RESULTS,
	OPT_VERIFY,
	OPT_TOKENS,
	OPT_VERIFY_FILE,
	OPT_MAKE_TOKENS,
	OPT_FAULT_BAD_HASH,
	OPT_FAULT_DELAY,
	OPT_FAULT_DROP,
	OPT_FAULT_WINDOW,
};

static const struct {
	const char *name;
	int nvalues;
} rcv_opts[] = {
	[OPT_MAX_CONNS] = { "max-conns", 1 },
	[OPT_MAX_FILE] = { "max-file-size", 1 },
	[OPT_MAX_WINDOW] = { "max-window", 1 },
	[OPT_MEM_BUDGET] = { "mem-budget", 1 },
	[OPT_IDLE_TIMEOUT] = { "idle-timeout", 1 },
	[OPT_SECRET_FILE] = { "secret-file", 1 },
	[OPT_SELF_STUDY] = { "self-study", 0 },
	[OPT_SECRET_RANDOM] = { "secret-random", 0 },
	[OPT_RESULTS] = { "results", 1 },
	[OPT_VERIFY] = { "verify", 2 },
	[OPT_TOKENS] = { "tokens", 0 },
	[OPT_VERIFY_FILE] = { "verify-file", 1 },
	[OPT_MAKE_TOKENS] = { "make-tokens", 1 },
	[OPT_FAULT_BAD_HASH] = { "fault-bad-hash", 0 },
	[OPT_FAULT_DELAY] = { "fault-delay", 1 },
	[OPT_FAULT_DROP] = { "fault-drop", 1 },
	[OPT_FAULT_WINDOW] = { "fault-window", 1 },
};

#define RCV_NOPTS (sizeof(rcv_opts) / sizeof(rcv_opts[0]))

/* Print the --help text: the common options, then the receiver's. */
void rcv_usage(FILE *f, const char *prog)
{
	rl_usage(f, prog, "[ADDRESS]");
	fprintf(f,
		"Serves Lab 3 senders (docs/protocol.md) on ADDRESS (default: RDMALAB_ADDR, else "
		"any) and --port.\n"
		"  --secret-file FILE    the instructor's secret (mode 600); keys are HMAC-SHA256 "
		"of the ID under it\n"
		"  --self-study          use the fixed practice secret instead (keys not graded)\n"
		"  --secret-random       a secret of its own, random, that nothing else ever holds\n"
		"                        (a test's receiver: a key is checked by its SHA-256 in the log)\n"
		"  --results FILE        results log, JSON lines (default: rdmalab-results.jsonl)\n"
		"  --max-conns N         senders served at once (default 64, 1 to 1024)\n"
		"  --max-file-size SIZE  largest file accepted (default 64M, at most 1T)\n"
		"  --max-window SIZE     largest window registered at once (default 1M, 4K to 1G)\n"
		"  --mem-budget SIZE     window bytes registered across all senders (default 256M);\n"
		"                        past it a sender gets ERROR busy\n"
		"  --idle-timeout TIME   longest silence at one step (default 30s; e.g. 500ms, 2s)\n"
		"  --tokens              class mode: a key only for ID:TOKEN, TOKEN the one the course\n"
		"                        gave that ID (--make-tokens); others get ERROR bad-id\n"
		"  --verify ID KEY       check KEY for ID offline, print OK or BAD, exit 0 or 1\n"
		"  --verify-file FILE    check the id,key lines of FILE ('-': stdin), print CSV\n"
		"                        id,verdict,detail (OK, BAD, MISSING); exit 0 if all OK, else 1\n"
		"  --make-tokens ROSTER  print the tokens of a roster CSV (a header with a column id)\n"
		"                        as CSV id,token,<its other columns>, and exit\n"
		"SIZE takes K, M, G, T (binary units). Test-only fault knobs, for grader tests:\n"
		"  --fault-bad-hash      always answer RESULT bad\n"
		"  --fault-delay STEP:MS hold the reply at STEP (3 WINDOW, 5 RESULT, 7 KEY) MS ms (once)\n"
		"  --fault-drop STEP     disconnect a sender as soon as it reaches STEP (1 to 7);\n"
		"                        STEP:STEP:...: the Nth sender at the Nth STEP, later\n"
		"                        ones at the last\n"
		"  --fault-window SIZE   grant windows of SIZE bytes (1 and up)\n");
}

/* Parse "4096", "64K", "1M", "2G", "1T" (binary units) into *OUT. */
int rcv_parse_size(const char *s, uint64_t *out)
{
	unsigned long long n;
	uint64_t unit = 1;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case '\0':
		break;
	case 'K':
	case 'k':
		unit = KiB;
		break;
	case 'M':
	case 'm':
		unit = MiB;
		break;
	case 'G':
	case 'g':
		unit = GiB;
		break;
	case 'T':
	case 't':
		unit = 1024 * GiB;
		break;
	default:
		return -EINVAL;
	}
	if (*end && end[1])
		return -EINVAL;
	if (n > UINT64_MAX / unit)
		return -EINVAL;
	*out = n * unit;
	return 0;
}

/* Parse "30", "30s" or "500ms" into *MS, from 1 ms to one day. */
int rcv_parse_duration(const char *s, int *ms)
{
	unsigned long long n;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || n > 86400000ULL)
		return -EINVAL;
	if (!strcmp(end, "") || !strcmp(end, "s"))
		n *= 1000;
	else if (strcmp(end, "ms"))
		return -EINVAL;
	if (n < 1 || n > 86400000ULL)
		return -EINVAL;
	*ms = (int)n;
	return 0;
}

/* Parse a whole decimal number from LO to HI into *OUT. */
static int rcv_parse_int(const char *s, long lo, long hi, int *out)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (!*s || *end || errno || n < lo || n > hi)
		return -EINVAL;
	*out = (int)n;
	return 0;
}

/* A size from LO to HI into *OUT, or a line saying what --NAME takes. */
static int rcv_size_opt(const char *prog, const char *name, const char *v, uint64_t lo, uint64_t hi,
			uint64_t *out)
{
	if (rcv_parse_size(v, out) || *out < lo || *out > hi) {
		rl_err("%s: --%s takes a size from %llu to %llu bytes (K, M, G, T allowed), not "
		       "'%s'",
		       prog, name, (unsigned long long)lo, (unsigned long long)hi, v);
		return -EINVAL;
	}
	return 0;
}

/* "STEP:MS" for --fault-delay. */
static int rcv_parse_delay(const char *prog, const char *v, struct rcv_faults *f)
{
	const char *colon = strchr(v, ':');
	char step[8];

	if (!colon || colon - v >= (long)sizeof(step))
		goto bad;
	memcpy(step, v, colon - v);
	step[colon - v] = '\0';
	if (rcv_parse_int(step, 3, 7, &f->delay_step) || f->delay_step % 2 == 0 ||
	    rcv_parse_int(colon + 1, 1, 600000, &f->delay_ms))
		goto bad;
	return 0;
bad:
	rl_err("%s: --fault-delay takes STEP:MS with STEP 3, 5 or 7 and MS 1 to 600000, not '%s'",
	       prog, v);
	return -EINVAL;
}

/* "STEP[:STEP...]" for --fault-drop: each from 1 to 7, at most RCV_MAX_DROPS of them. */
static int rcv_parse_drops(const char *prog, const char *v, struct rcv_faults *f)
{
	const char *s = v;
	char step[8];
	size_t len;

	f->drop_steps = 0;
	do {
		len = strcspn(s, ":");
		if (f->drop_steps == RCV_MAX_DROPS || len == 0 || len >= sizeof(step))
			goto bad;
		memcpy(step, s, len);
		step[len] = '\0';
		if (rcv_parse_int(step, 1, 7, &f->drop_step[f->drop_steps++]))
			goto bad;
		s += len;
	} while (*s++ == ':');
	return 0;
bad:
	f->drop_steps = 0;
	rl_err("%s: --fault-drop takes a step from 1 to 7, or up to %d of them as STEP:STEP:..., "
	       "not '%s'",
	       prog, RCV_MAX_DROPS, v);
	return -EINVAL;
}

/* Store option ID with its values V into CFG. */
static int rcv_set_opt(struct rcv_config *cfg, const char *prog, enum rcv_opt_id id,
		       const char *const *v)
{
	struct rcv_faults *f = &cfg->faults;

	switch (id) {
	case OPT_MAX_CONNS:
		if (!rcv_parse_int(v[0], 1, 1024, &cfg->max_conns))
			return 0;
		rl_err("%s: --max-conns takes a number from 1 to 1024, not '%s'", prog, v[0]);
		return -EINVAL;
	case OPT_MAX_FILE:
		return rcv_size_opt(prog, "max-file-size", v[0], 0, RL_PROTO_MAX_FILE,
				    &cfg->max_file);
	case OPT_MAX_WINDOW:
		return rcv_size_opt(prog, "max-window", v[0], 4 * KiB, GiB, &cfg->max_window);
	case OPT_MEM_BUDGET:
		return rcv_size_opt(prog, "mem-budget", v[0], 4 * KiB, 1024 * GiB,
				    &cfg->mem_budget);
	case OPT_IDLE_TIMEOUT:
		if (!rcv_parse_duration(v[0], &cfg->idle_timeout_ms))
			return 0;
		rl_err("%s: --idle-timeout takes a time such as 30, 30s or 500ms (up to a day), "
		       "not '%s'",
		       prog, v[0]);
		return -EINVAL;
	case OPT_SECRET_FILE:
		cfg->secret_file = v[0];
		return 0;
	case OPT_SELF_STUDY:
		cfg->self_study = true;
		return 0;
	case OPT_SECRET_RANDOM:
		cfg->secret_random = true;
		return 0;
	case OPT_RESULTS:
		cfg->results_path = v[0];
		return 0;
	case OPT_VERIFY:
		cfg->verify_id = v[0];
		cfg->verify_key = v[1];
		return 0;
	case OPT_TOKENS:
		cfg->tokens = true;
		return 0;
	case OPT_VERIFY_FILE:
		cfg->verify_file = v[0];
		return 0;
	case OPT_MAKE_TOKENS:
		cfg->make_tokens = v[0];
		return 0;
	case OPT_FAULT_BAD_HASH:
		f->bad_hash = true;
		return 0;
	case OPT_FAULT_DELAY:
		if (!f->delay_step)
			return rcv_parse_delay(prog, v[0], f);
		rl_err("%s: --fault-delay may be given once: it holds the replies of one step, "
		       "not also '%s'",
		       prog, v[0]);
		return -EINVAL;
	case OPT_FAULT_DROP:
		return rcv_parse_drops(prog, v[0], f);
	case OPT_FAULT_WINDOW:
		return rcv_size_opt(prog, "fault-window", v[0], 1, GiB, &f->window);
	}
	return -EINVAL;
}

/* The receiver option ARG names ("--max-conns" or "--max-conns=8"), or -1. */
static int rcv_find_opt(const char *arg, const char **inline_value)
{
	size_t i, n;

	*inline_value = NULL;
	if (strncmp(arg, "--", 2))
		return -1;
	for (i = 0; i < RCV_NOPTS; i++) {
		n = strlen(rcv_opts[i].name);
		if (strncmp(arg + 2, rcv_opts[i].name, n))
			continue;
		if (arg[2 + n] == '\0')
			return (int)i;
		if (arg[2 + n] == '=' && rcv_opts[i].nvalues == 1) {
			*inline_value = arg + 3 + n;
			return (int)i;
		}
	}
	return -1;
}

/* Check that the options agree with each other. */
static int rcv_check_config(const struct rcv_config *cfg)
{
	const char *prog = cfg->common.prog;

	if (cfg->common.help)
		return 0;
	if (cfg->self_study + !!cfg->secret_file + cfg->secret_random > 1) {
		rl_err("%s: give one of --secret-file, --self-study and --secret-random", prog);
		return -EINVAL;
	}
	if (!cfg->self_study && !cfg->secret_file && !cfg->secret_random) {
		rl_err("%s: no secret: give --secret-file FILE (mode 600), or --self-study for "
		       "practice keys",
		       prog);
		return -EINVAL;
	}
	if (!!cfg->verify_id + !!cfg->verify_file + !!cfg->make_tokens > 1) {
		rl_err("%s: give one of --verify, --verify-file and --make-tokens", prog);
		return -EINVAL;
	}
	if (cfg->secret_random &&
	    (cfg->verify_id || cfg->verify_file || cfg->make_tokens || cfg->tokens)) {
		rl_err("%s: --verify, --verify-file, --make-tokens and --tokens need the secret "
		       "the keys and tokens are made with, not --secret-random",
		       prog);
		return -EINVAL;
	}
	if (cfg->mem_budget < cfg->max_window) {
		rl_err("%s: --mem-budget (%llu) is smaller than --max-window (%llu): no window "
		       "would ever fit",
		       prog, (unsigned long long)cfg->mem_budget,
		       (unsigned long long)cfg->max_window);
		return -EINVAL;
	}
	return 0;
}

/*
 * Parse ARGV into CFG. The receiver's options may come anywhere; the rest
 * go to rl_parse_args_env() with ENV for the environment fallbacks.
 */
int rcv_parse_args(int argc, char **argv, char *(*env)(const char *), struct rcv_config *cfg)
{
	const char *prog = "rdmalab-receiver", *value, *values[2];
	char **rest;
	int i, id, nrest = 0, ret;

	*cfg = (struct rcv_config){
		.max_conns = 64,
		.max_file = 64 * MiB,
		.max_window = 1 * MiB,
		.mem_budget = 256 * MiB,
		.idle_timeout_ms = 30000,
		.results_path = "rdmalab-results.jsonl",
	};
	rest = calloc((size_t)argc + 1, sizeof(*rest));
	if (!rest)
		return -ENOMEM;
	rest[nrest++] = argc > 0 ? argv[0] : (char *)prog;
	for (i = 1; i < argc; i++) {
		id = rcv_find_opt(argv[i], &value);
		if (id < 0) {
			rest[nrest++] = argv[i];
			continue;
		}
		if (!value && i + rcv_opts[id].nvalues >= argc) {
			rl_err("%s: --%s needs %d value(s) (run '%s -h')", prog, rcv_opts[id].name,
			       rcv_opts[id].nvalues, prog);
			ret = -EINVAL;
			goto out;
		}
		values[0] = value ? value : argv[i + 1];
		values[1] = rcv_opts[id].nvalues == 2 ? argv[i + 2] : NULL;
		if (!value)
			i += rcv_opts[id].nvalues;
		ret = rcv_set_opt(cfg, prog, (enum rcv_opt_id)id, values);
		if (ret)
			goto out;
	}
	ret = rl_parse_args_env(nrest, rest, env, &cfg->common);
	if (ret)
		goto out;
	if (cfg->common.nrest > 0) {
		rl_err("%s: unexpected operand '%s' (only one ADDRESS)", prog, cfg->common.rest[0]);
		ret = -EINVAL;
		goto out;
	}
	cfg->common.rest = NULL; /* it pointed into rest[], freed below */
	ret = rcv_check_config(cfg);
out:
	free(rest);
	return ret;
}
