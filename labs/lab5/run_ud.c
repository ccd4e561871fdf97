/* run_ud.c: the program's commands (placeholder: its helper writes it). */
#include "lab5.h"

int lab5_cmd_ud_serve(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return rl_todo(0);
}

int lab5_cmd_ud_send(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return rl_todo(0);
}
