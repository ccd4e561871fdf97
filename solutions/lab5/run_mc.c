/* run_mc.c: the program's commands (placeholder: its helper writes it). */
#include "lab5.h"

int lab5_cmd_mc_send(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return rl_todo(0);
}

int lab5_cmd_mc_recv(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return rl_todo(0);
}
