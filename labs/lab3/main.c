/* main.c: lab3, the sender: send a file to rdmalab-receiver with RDMA WRITE, get a key. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab3.h"

/* What the command line asks for, besides the options every program shares. */
struct lab3_opts {
	char server[256]; /* ADDR, without its :PORT */
	uint16_t port;
	const char *file;
	const char *id;
	int timeout_ms;
	struct rl_args common;
};

static void lab3_usage(FILE *out, const char *prog)
{
	rl_usage(out, prog, "--server ADDR[:PORT] --file PATH --id STUDENT_ID [--timeout SECONDS]");
	fprintf(out,
		"  --server ADDR[:PORT]  the receiver (default: RDMALAB_ADDR, port 7471 or -p)\n"
		"  --file PATH           the file to send\n"
		"  --id STUDENT_ID       who the key is for: 1 to 64 characters, no spaces\n"
		"  --timeout SECONDS     longest wait for the receiver at any step (default %d)\n"
		"Prints the key and exits 0; exits 1 with one line saying why otherwise.\n",
		LAB3_TIMEOUT_MS / 1000);
}

/* The value of option NAME at ARGV[*I] ("--name V" or "--name=V"), or NULL if it is not NAME. */
static const char *lab3_take_opt(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n) != 0)
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		rl_err("%s needs a value (run with -h for the list)", name);
		exit(EXIT_FAILURE);
	}
	return argv[++*i];
}

/* Split "ADDR[:PORT]" into O->server and O->port. */
static int lab3_set_server(struct lab3_opts *o, const char *s)
{
	const char *colon = strrchr(s, ':');
	char *end;
	long port;

	snprintf(o->server, sizeof(o->server), "%.*s", colon ? (int)(colon - s) : (int)strlen(s),
		 s);
	if (!colon)
		return 0;
	port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || port < 1 || port > 65535) {
		rl_err("--server %s: the port after ':' must be 1 to 65535", s);
		return -EINVAL;
	}
	o->port = (uint16_t)port;
	return 0;
}

/* Parse ARGV: our options here, the shared ones (-d -g -i -p -v -h) with rl_parse_args(). */
static int lab3_parse(int argc, char **argv, struct lab3_opts *o)
{
	char **rest = calloc(argc + 1, sizeof(*rest));
	const char *server = NULL, *timeout = NULL, *v;
	int i, nrest = 0, ret;

	if (!rest)
		return -ENOMEM;
	for (i = 0; i < argc; i++) {
		if (i > 0 && (v = lab3_take_opt(argc, argv, &i, "--server")))
			server = v;
		else if (i > 0 && (v = lab3_take_opt(argc, argv, &i, "--file")))
			o->file = v;
		else if (i > 0 && (v = lab3_take_opt(argc, argv, &i, "--id")))
			o->id = v;
		else if (i > 0 && (v = lab3_take_opt(argc, argv, &i, "--timeout")))
			timeout = v;
		else
			rest[nrest++] = argv[i];
	}
	ret = rl_parse_args(nrest, rest, &o->common);
	if (ret || o->common.help)
		goto out;
	rl_log_set_level(o->common.verbose);
	o->port = o->common.port;
	o->timeout_ms = timeout ? atoi(timeout) * 1000 : LAB3_TIMEOUT_MS;
	ret = -EINVAL;
	if (o->timeout_ms <= 0 || o->timeout_ms > 3600 * 1000)
		rl_err("--timeout takes seconds, 1 to 3600, not '%s'", timeout);
	else if (!server && !o->common.addr)
		rl_err("no receiver: give --server ADDR[:PORT] (or set RDMALAB_ADDR)");
	else if (!o->file || !o->id)
		rl_err("--file PATH and --id STUDENT_ID are both needed (run with -h for help)");
	else if (!rl_proto_id_valid(o->id, strlen(o->id)))
		rl_err("--id '%s': 1 to %d characters, no spaces", o->id, RL_PROTO_MAX_ID);
	else
		ret = lab3_set_server(o, server ? server : o->common.addr);
out:
	free(rest);
	return ret;
}

/* The protocol after connecting: steps 2 to 7. Prints the key. */
static int lab3_run(struct lab3_conn *c, struct lab3_file *f, const char *id)
{
	struct rl_msg_result result;
	char key[RL_PROTO_MAX_KEY + 1];

	if (lab3_send_file_info(c, f))
		return -1;
	if (lab3_register_file(c->pd, f))
		return -1;
	if (lab3_send_windows(c, f))
		return -1;
	printf("written: %llu bytes in %u window%s\n", (unsigned long long)f->written, f->windows,
	       f->windows == 1 ? "" : "s");
	if (lab3_finish(c, f, &result))
		return -1;
	printf("result: good, the receiver's SHA-256 matches\n");
	if (lab3_send_student_id(c, id) || lab3_wait_key(c, key))
		return -1;
	printf("key: %s\n", key);
	return 0;
}

int main(int argc, char **argv)
{
	struct lab3_opts o = { 0 };
	struct lab3_file f;
	struct lab3_conn c;
	char hex[65];
	int ret = EXIT_FAILURE;

	if (lab3_parse(argc, argv, &o))
		return EXIT_FAILURE;
	if (o.common.help) {
		lab3_usage(stdout, o.common.prog);
		return EXIT_SUCCESS;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/*
	 * Before the device opens (a process that changes its credentials
	 * afterwards may not use it) and before your steps run: locked down as
	 * in the tests (framework/lockdown.c: no executable memory, no exec).
	 */
	if (rl_lockdown())
		return EXIT_FAILURE;
	if (lab3_open_file(&f, o.file))
		return EXIT_FAILURE;
	f.progress = isatty(STDERR_FILENO) && f.size > LAB3_PROGRESS_MIN;
	if (lab3_connect(&c, o.server, o.port, o.timeout_ms))
		goto clean_file;
	printf("connected to %s:%u\n", o.server, o.port);
	if (lab3_hash_file(&f))
		goto clean_conn;
	lab3_sha256_hex(f.sha256, hex);
	printf("file: %s: %llu bytes, SHA-256 %s\n", f.path, (unsigned long long)f.size, hex);
	if (lab3_run(&c, &f, o.id) == 0)
		ret = EXIT_SUCCESS;

clean_conn:
	/* The file's MR before the connection: the PD cannot go while an MR is in it. */
	lab3_close_file(&f);
	lab3_disconnect(&c);
	return ret;

clean_file:
	lab3_close_file(&f);
	return ret;
}
