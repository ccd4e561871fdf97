/*
 * args.c: the options every program shares, with environment fallbacks.
 * Parsing is pure (argv and an env lookup in, struct out) so tests can feed
 * it anything; it never exits and never touches global state.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdmalab.h"

/* One option that takes a value: its flags, what the value is, its bounds. */
struct rl_opt {
	char short_name;
	const char *long_name;
	const char *what; /* for "needs ..." and "takes ..." */
	const char *see;  /* where to look up a good value */
	long min, max;    /* for numbers; min > max means a string */
};

static const struct rl_opt rl_opts[] = {
	{ 'd', "dev", "an RDMA device name", "see 'ibv_devices'", 1, 0 },
	{ 'g', "gid-index", "a GID index from 0 to 255", "see 'ibv_devinfo -v'", 0, 255 },
	{ 'i', "ib-port", "a device port number from 1 to 255", "see 'ibv_devinfo'", 1, 255 },
	{ 'p', "port", "a TCP port number from 1 to 65535", "the server's --port", 1, 65535 },
};

/* Print the common options, for -h; OPERANDS describes what follows them. */
void rl_usage(FILE *f, const char *prog, const char *operands)
{
	fprintf(f,
		"usage: %s [options]%s%s\n"
		"  -d, --dev NAME        RDMA device (default: RDMALAB_DEVICE, else the first "
		"active one)\n"
		"  -g, --gid-index N     GID index (default: RDMALAB_GID_INDEX, else picked: "
		"RoCE v2, IPv4)\n"
		"  -i, --ib-port N       device port (default: RDMALAB_IB_PORT, else 1)\n"
		"  -p, --port N          TCP / rdma_cm port (default: %d)\n"
		"  -v                    say more; -vv for debug (or RDMALAB_VERBOSE=1|2)\n"
		"  -h, --help            this help\n",
		prog, operands ? " " : "", operands ? operands : "", RL_DEFAULT_PORT);
}

/* Parse S as a whole decimal number within OPT's bounds into *OUT. */
static int rl_parse_number(const char *s, const struct rl_opt *opt, long *out)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (!*s || *end || errno || n < opt->min || n > opt->max)
		return -EINVAL;
	*out = n;
	return 0;
}

/* Store VALUE for OPT into A, or report (naming SOURCE) what is wrong. */
static int rl_set_opt(struct rl_args *a, const struct rl_opt *opt, const char *value,
		      const char *source)
{
	long n = 0;

	if (opt->min <= opt->max && rl_parse_number(value, opt, &n)) {
		rl_err("%s: %s takes %s, not '%s' (%s)", a->prog, source, opt->what, value,
		       opt->see);
		return -EINVAL;
	}
	if (opt->min > opt->max && !*value) {
		rl_err("%s: %s takes %s, not an empty string (%s)", a->prog, source, opt->what,
		       opt->see);
		return -EINVAL;
	}
	switch (opt->short_name) {
	case 'd':
		a->dev = value;
		break;
	case 'g':
		a->gid_index = (int)n;
		break;
	case 'i':
		a->ib_port = (int)n;
		break;
	case 'p':
		a->port = (uint16_t)n;
		break;
	}
	return 0;
}

/* Apply the environment fallbacks; options given later override them. */
static int rl_apply_env(struct rl_args *a, char *(*env)(const char *))
{
	static const struct {
		char opt;
		const char *name;
	} vars[] = {
		{ 'd', "RDMALAB_DEVICE" },
		{ 'g', "RDMALAB_GID_INDEX" },
		{ 'i', "RDMALAB_IB_PORT" },
	};
	const char *s;
	size_t i;
	int level;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		s = env(vars[i].name);
		if (s && *s && rl_set_opt(a, &rl_opts[i], s, vars[i].name))
			return -EINVAL;
	}
	s = env("RDMALAB_ADDR");
	if (s && *s)
		a->addr = s;
	s = env("RDMALAB_VERBOSE");
	if (s && *s) {
		level = rl_log_parse_level(s);
		if (level < 0) {
			rl_err("%s: RDMALAB_VERBOSE takes 0, 1, 2, error, info or debug, not '%s'",
			       a->prog, s);
			return -EINVAL;
		}
		a->verbose = level;
	}
	return 0;
}

/* The option ARG names ("-g", "--gid-index" or "--gid-index=3"), or NULL. */
static const struct rl_opt *rl_find_opt(const char *arg, const char **inline_value)
{
	size_t i, n;

	*inline_value = NULL;
	for (i = 0; i < sizeof(rl_opts) / sizeof(rl_opts[0]); i++) {
		if (arg[1] == rl_opts[i].short_name && arg[1] != '-') {
			if (arg[2])
				*inline_value = arg + 2;
			return &rl_opts[i];
		}
		n = strlen(rl_opts[i].long_name);
		if (arg[1] == '-' && !strncmp(arg + 2, rl_opts[i].long_name, n) &&
		    (arg[2 + n] == '\0' || arg[2 + n] == '=')) {
			if (arg[2 + n] == '=')
				*inline_value = arg + 3 + n;
			return &rl_opts[i];
		}
	}
	return NULL;
}

/* Count "-v", "-vv", ... and "--verbose" into *COUNT: 0 if ARG is one, else -1. */
static int rl_count_verbose(const char *arg, int *count)
{
	const char *p = arg + 1;

	if (!strcmp(arg, "--verbose")) {
		(*count)++;
		return 0;
	}
	while (*p == 'v')
		p++;
	if (p == arg + 1 || *p)
		return -1;
	*count += (int)(p - arg - 1);
	return 0;
}

/*
 * Parse ARGV into A, looking up environment fallbacks with ENV (getenv, or a
 * stub in tests). The first operand is the peer address. Returns 0, or
 * -EINVAL after one line that says what to do.
 */
int rl_parse_args_env(int argc, char **argv, char *(*env)(const char *), struct rl_args *a)
{
	const struct rl_opt *opt;
	const char *value, *slash;
	char flag[32];
	int i, verbose = 0;

	slash = argc > 0 ? strrchr(argv[0], '/') : NULL;
	*a = (struct rl_args){
		.prog = argc > 0 ? (slash ? slash + 1 : argv[0]) : "rdmalab",
		.ib_port = 1,
		.gid_index = -1,
		.port = RL_DEFAULT_PORT,
	};
	if (rl_apply_env(a, env))
		return -EINVAL;
	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			a->help = true;
			continue;
		}
		if (!rl_count_verbose(argv[i], &verbose))
			continue;
		opt = rl_find_opt(argv[i], &value);
		if (!opt) {
			rl_err("%s: unknown option '%s' (run '%s -h' for the list)", a->prog,
			       argv[i], a->prog);
			return -EINVAL;
		}
		snprintf(flag, sizeof(flag), "--%s", opt->long_name);
		if (!value && i + 1 >= argc) {
			rl_err("%s: %s needs %s (%s)", a->prog, flag, opt->what, opt->see);
			return -EINVAL;
		}
		if (!value)
			value = argv[++i];
		if (rl_set_opt(a, opt, value, flag))
			return -EINVAL;
	}
	if (verbose > a->verbose)
		a->verbose = verbose;
	if (i < argc) {
		a->addr = argv[i++];
		a->addr_given = true;
	}
	a->nrest = argc - i;
	a->rest = argv + i;
	return 0;
}

/* rl_parse_args_env() with the real environment. */
int rl_parse_args(int argc, char **argv, struct rl_args *a)
{
	return rl_parse_args_env(argc, argv, getenv, a);
}
