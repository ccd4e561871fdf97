/*
 * lockdown.c: what a process that runs a student's code may not do, set
 * before the first call into it, for good (a seccomp filter cannot be
 * lifted). A graded test's act (tests/graded.c) and the lab programs the
 * end-to-end tests run (their given main.c) call rl_lockdown(). Refused,
 * by killing the process: a mapping of executable memory (mmap, mprotect
 * or pkey_mprotect with PROT_EXEC, shmat with SHM_EXEC), a mapping at a
 * fixed address (mmap with MAP_FIXED or MAP_FIXED_NOREPLACE, mremap with
 * MREMAP_FIXED), memfd_create, execve and execveat, ptrace,
 * process_vm_readv, process_vm_writev and process_madvise, io_uring,
 * userfaultfd and remap_file_pages. Code a student writes needs none of
 * them; a submission that wants to run bytes it made, to put the program's
 * file back where the act unmapped the kit's code (tests/hide.c; in
 * User-Mode Linux, which enforces no no-execute, readable is runnable), or
 * to reach into the process that grades it, does. madvise's MADV_DONTNEED
 * fails with EPERM instead (malloc may ask for it, and copes). It is
 * defence in depth: what a test hides is not in the act to begin with
 * (tests/harness.h, "What the act holds"), and nothing the act may do
 * brings it back from its own memory. /proc/self/mem stays open (no
 * filter sees a path): it reaches only the act's own memory, where the
 * kit's hidden code is not.
 *
 * It also drops every capability, from the bounding set too: code run as
 * root (make check as root, in a guest) could otherwise read a parent that
 * is not dumpable through /proc (CAP_SYS_PTRACE) or write files it does
 * not own (CAP_DAC_OVERRIDE). Verbs need none: locked memory comes from
 * RLIMIT_MEMLOCK. Call it before opening a verbs device: the kernel
 * refuses the device's commands (EACCES, ib_safe_file_access) to a process
 * whose credentials changed since it opened it.
 *
 * What loads code later is made to load it now: the verbs providers
 * (ibv_get_device_list), OpenSSL's SHA-256, the resolver's NSS modules
 * (getaddrinfo) and libgcc_s (backtrace, for crash reports).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netdb.h>
#include <openssl/evp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rdmalab.h"

#if defined(__x86_64__)
#define RL_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define RL_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/* Loads now what the calls below would load later. */
static void rl_lockdown_warm(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	unsigned char md[EVP_MAX_MD_SIZE];
	struct addrinfo *ai = NULL;
	unsigned int len;
	void *pc[1];

	if (list)
		ibv_free_device_list(list);
	EVP_Digest("", 0, md, &len, EVP_sha256(), NULL);
	if (getaddrinfo("localhost", NULL, NULL, &ai) == 0)
		freeaddrinfo(ai);
	backtrace(pc, 1);
}

/* Drops every capability this process has or could get back. */
static int rl_drop_capabilities(void)
{
	struct __user_cap_header_struct head = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { { 0 } };
	int cap;

	for (cap = 0; cap <= CAP_LAST_CAP; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL && errno != EPERM)
			return rl_fail("prctl", errno, "PR_CAPBSET_DROP %d", cap);
	if (syscall(SYS_capset, &head, data))
		return rl_fail("capset", errno, "dropping every capability");
	return 0;
}

#ifdef RL_AUDIT_ARCH
#define RL_ARG_LO(n) offsetof(struct seccomp_data, args[n])
#define RL_KILL BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)
/* Kill when the system call loaded is CALL. */
#define RL_DENY(call) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (call), 0, 1), RL_KILL
/* When it is CALL: kill when argument ARG has a bit of FLAGS (PROT_EXEC, say). */
#define RL_DENY_FLAG(call, arg, flags)                                                             \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (call), 0, 4),                                         \
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, RL_ARG_LO(arg)),                                \
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, (flags), 0, 1), RL_KILL,                      \
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
/* When it is CALL: fail with EPERM when argument ARG is VALUE or VALUE2. */
#define RL_REFUSE_VALUES(call, arg, value, value2)                                                 \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (call), 0, 5),                                         \
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, RL_ARG_LO(arg)),                                \
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (value), 1, 0),                                \
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (value2), 0, 1),                               \
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),                              \
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))

#ifndef MADV_DONTNEED_LOCKED
#define MADV_DONTNEED_LOCKED 24
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef SHM_EXEC
#define SHM_EXEC 0100000
#endif

/*
 * RDMALAB_NO_LOCKDOWN=1 skips it, for a debugger or valgrind (which maps
 * the code it translates executable) on a test or a lab program. The
 * grader never skips it: its test programs drop the variable
 * (tests/graded.c, --results-fd).
 */
static bool rl_lockdown_skipped(void)
{
	const char *v = getenv("RDMALAB_NO_LOCKDOWN");

	if (!v || strcmp(v, "1") != 0)
		return false;
	rl_err("not locked down (RDMALAB_NO_LOCKDOWN=1): for debugging only, graded runs are");
	return true;
}

int rl_lockdown(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RL_AUDIT_ARCH, 1, 0),
		RL_KILL,
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#ifdef __x86_64__
		/* The x32 ABI's numbers: none is needed, all are refused. */
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
		RL_KILL,
#endif
		RL_DENY_FLAG(__NR_mmap, 2, PROT_EXEC),
		RL_DENY_FLAG(__NR_mmap, 3, MAP_FIXED | MAP_FIXED_NOREPLACE),
		RL_DENY_FLAG(__NR_mremap, 3, MREMAP_FIXED),
		RL_DENY_FLAG(__NR_mprotect, 2, PROT_EXEC),
		RL_DENY_FLAG(__NR_pkey_mprotect, 2, PROT_EXEC),
		RL_DENY_FLAG(__NR_shmat, 2, SHM_EXEC),
		RL_REFUSE_VALUES(__NR_madvise, 2, MADV_DONTNEED, MADV_DONTNEED_LOCKED),
		RL_DENY(__NR_memfd_create),
		RL_DENY(__NR_execve),
		RL_DENY(__NR_execveat),
		RL_DENY(__NR_ptrace),
		RL_DENY(__NR_process_vm_readv),
		RL_DENY(__NR_process_vm_writev),
		RL_DENY(__NR_process_madvise),
		RL_DENY(__NR_io_uring_setup),
		RL_DENY(__NR_io_uring_enter),
		RL_DENY(__NR_io_uring_register),
		RL_DENY(__NR_userfaultfd),
		RL_DENY(__NR_remap_file_pages),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };

	if (rl_lockdown_skipped())
		return 0;
	rl_lockdown_warm();
	if (rl_drop_capabilities())
		return -EPERM;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return rl_fail("prctl", errno, "PR_SET_NO_NEW_PRIVS");
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return rl_fail("prctl", errno, "PR_SET_SECCOMP (is CONFIG_SECCOMP_FILTER on?)");
	return 0;
}
#else
int rl_lockdown(void)
{
	rl_err("rl_lockdown: no seccomp filter for this machine's architecture");
	return -ENOSYS;
}
#endif
