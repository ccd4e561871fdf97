/*
 * xstate-size.c: print the size in bytes of this CPU's user FP/XSTATE
 * register area, as ptrace gives it (PTRACE_GETREGSET, NT_X86_XSTATE). A
 * User-Mode Linux kernel sets its processes' registers with that size; one
 * that fixes it at build time (6.12: 2696 bytes, where PKRU ends) panics on a
 * CPU whose size differs ("ptrace set fp regs failed, errno = 14"). AMX
 * makes it 11008; a CPU with neither PKU nor AVX-512, 832. vm/uml-probe
 * compiles and runs it to say why a probe boot failed.
 * Exit status: 0, or 1 when ptrace cannot tell (said on stderr).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif

/* Larger than any XSTATE area so far (AMX's is 11008 bytes). */
static unsigned char area[64 * 1024];

/* A child that stops at once, traced by its parent. */
static pid_t stopped_child(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0)
			raise(SIGSTOP);
		_exit(0);
	}
	return pid;
}

int main(void)
{
	struct iovec iov = { .iov_base = area, .iov_len = sizeof(area) };
	pid_t pid = stopped_child();
	int status, ret = 1;

	if (pid < 0) {
		fprintf(stderr, "xstate-size: fork: %s\n", strerror(errno));
		return 1;
	}
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		fprintf(stderr, "xstate-size: the child did not stop under ptrace (is ptrace refused here?)\n");
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return 1;
	}
	if (ptrace(PTRACE_GETREGSET, pid, (void *)NT_X86_XSTATE, &iov) == 0) {
		printf("%zu\n", iov.iov_len);
		ret = 0;
	} else {
		fprintf(stderr, "xstate-size: PTRACE_GETREGSET NT_X86_XSTATE: %s\n", strerror(errno));
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return ret;
}
