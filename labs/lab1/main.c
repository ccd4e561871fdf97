/* main.c: lab1, a server and a client connect RC QPs by hand, then send and RDMA-write. */
#include <stdlib.h>
#include <string.h>

#include "lab1.h"

#define LAB1_CLIENT_MSG "hello from the lab1 client"
#define LAB1_CLIENT_TEXT "written by RDMA into the server's memory"

/*
 * The client's message and text: these, or LAB1_MSG and LAB1_TEXT from the
 * environment. The tests set random ones, so that the server prints them
 * only when they really arrived.
 */
static const char *lab1_env_or(const char *name, const char *otherwise)
{
	const char *v = getenv(name);

	return v && *v ? v : otherwise;
}

int main(int argc, char **argv)
{
	struct lab1_received got;
	struct rl_args args;
	int ret;

	if (rl_parse_args(argc, argv, &args))
		return EXIT_FAILURE;
	if (args.help || args.nrest > 0) {
		rl_usage(args.help ? stdout : stderr, args.prog, "[SERVER_ADDR]");
		fprintf(args.help ? stdout : stderr,
			"Without SERVER_ADDR, wait for a client on --port; with it, connect to it.\n");
		return args.help ? EXIT_SUCCESS : EXIT_FAILURE;
	}
	rl_log_set_level(args.verbose);
	/*
	 * From here on this process runs the lab's code: refuse it, for good,
	 * what no lab step needs (executable memory, exec, ptrace: see
	 * framework/lockdown.c), as the tests refuse it to their acts.
	 */
	if (rl_lockdown())
		return EXIT_FAILURE;

	/* Only an address on the command line makes this the client. */
	if (args.addr_given)
		ret = lab1_run_client(&args, lab1_env_or("LAB1_MSG", LAB1_CLIENT_MSG),
				      lab1_env_or("LAB1_TEXT", LAB1_CLIENT_TEXT));
	else
		ret = lab1_run_server(&args, &got);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}
