/* main.c: lab5, one to many: a UD peer over rdma_cm, a multicast group, a server on one SRQ. */
#include <stdlib.h>
#include <string.h>

#include "lab5.h"

/* One command of the program: its name, its arguments, what it does. */
struct lab5_cmd {
	const char *name;
	const char *args;
	const char *what;
	int (*run)(int argc, char **argv);
};

static const struct lab5_cmd cmds[] = {
	{ "ud-serve", "PORT [COUNT]",
	  "take COUNT datagrams over UD (rdma_cm, RDMA_PS_UDP) and echo them", lab5_cmd_ud_serve },
	{ "ud-send", "HOST PORT [COUNT [SIZE]]",
	  "send COUNT gathered datagrams to ud-serve (steps 1, 2)", lab5_cmd_ud_send },
	{ "mc-recv", "LOCAL GROUP [COUNT]",
	  "join GROUP, say hello, take COUNT datagrams, leave (step 3)", lab5_cmd_mc_recv },
	{ "mc-send", "LOCAL GROUP [COUNT [SIZE [MEMBERS]]]",
	  "send COUNT datagrams to GROUP: send-only, or after MEMBERS hellos (step 3)",
	  lab5_cmd_mc_send },
	{ "serve", "PORT [CLIENTS]",
	  "serve CLIENTS RC clients from one SRQ in one thread (steps 4, 5)", lab5_cmd_serve },
	{ "clients", "HOST PORT [CLIENTS [MESSAGES]]",
	  "CLIENTS RC clients, each sending MESSAGES to serve", lab5_cmd_clients },
};

#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static void usage(FILE *out, const char *prog)
{
	size_t i;

	fprintf(out, "usage: %s COMMAND ARGS...   (docs/lab5.md)\n", prog);
	for (i = 0; i < NCMDS; i++)
		fprintf(out, "  %s %s\n      %s\n", cmds[i].name, cmds[i].args, cmds[i].what);
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout, argv[0]);
		return argc < 2 ? EXIT_FAILURE : EXIT_SUCCESS;
	}
	for (i = 0; i < NCMDS; i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].run(argc - 2, argv + 2) ? EXIT_FAILURE : EXIT_SUCCESS;
	fprintf(stderr, "%s: no command %s: run %s --help for the commands\n", argv[0], argv[1],
		argv[0]);
	return EXIT_FAILURE;
}
