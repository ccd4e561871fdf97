/* main.c: lab2, a server and a client connect with rdma_cm, ping-pong, then RDMA-write and read. */
#include <stdlib.h>
#include <string.h>

#include "lab2.h"

#define LAB2_CLIENT_TEXT "written by the lab2 client with RDMA WRITE"

int main(int argc, char **argv)
{
	struct lab2_result res;
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

	/* Only an address on the command line makes this the client. */
	if (args.addr_given)
		ret = lab2_run_client(&args, LAB2_TIMEOUT_MS, LAB2_CLIENT_TEXT, &res);
	else
		ret = lab2_run_server(&args, LAB2_TIMEOUT_MS, &res);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}
