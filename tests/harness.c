/* harness.c: what every Check test program shares, and crash reports. */
#define _GNU_SOURCE /* dl_iterate_phdr, _Fork */
#include <arpa/inet.h>
#include <errno.h>
#include <execinfo.h>
#include <limits.h>
#include <stdbool.h>
#include <link.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

double rl_test_timeout(double seconds)
{
	const char *s = getenv("RDMALAB_TEST_TIMEOUT");
	char *end;
	double t;

	if (!s || !*s)
		return seconds;
	t = strtod(s, &end);
	return *end == '\0' && t > 0 ? t : seconds;
}

const char *rl_test_device(void)
{
	const char *dev = getenv("RDMALAB_DEVICE");

	ck_assert_msg(dev && *dev,
		      "RDMALAB_DEVICE is not set: run RDMA tests with 'make rdma-test' "
		      "(natively or in the Soft-RoCE VM)");
	return dev;
}

int rl_test_gid_index(void)
{
	const char *s = getenv("RDMALAB_GID_INDEX");

	ck_assert_msg(s && *s,
		      "RDMALAB_GID_INDEX is not set: run RDMA tests with 'make rdma-test'");
	return atoi(s);
}

uint8_t rl_test_ib_port(void)
{
	const char *s = getenv("RDMALAB_IB_PORT");

	return s && *s ? (uint8_t)atoi(s) : 1;
}

const char *rl_test_addr(void)
{
	const char *addr = getenv("RDMALAB_ADDR");

	ck_assert_msg(addr && *addr,
		      "RDMALAB_ADDR is not set: run RDMA tests with 'make rdma-test' "
		      "or 'make check LAB=N'");
	return addr;
}

uint16_t rl_test_free_port(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_msg(fd >= 0, "expected a socket, got %s", strerror(errno));
	ck_assert_msg(bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
			      getsockname(fd, (struct sockaddr *)&sin, &len) == 0,
		      "expected a free TCP port, got %s", strerror(errno));
	close(fd);
	return ntohs(sin.sin_port);
}

void rl_test_random_text(char *text, size_t size)
{
	static const char chars[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	size_t shortest = (size - 1) / 2, len, i;

	ck_assert_msg(size >= 2, "expected room for a random text, got %zu bytes", size);
	/* getrandom, not a seed from the time or pid: nothing to predict or replay. */
	ck_assert_msg(getrandom(text, size, 0) == (ssize_t)size,
		      "expected %zu random bytes from getrandom, got %s", size, strerror(errno));
	len = shortest + (unsigned char)text[size - 1] % (size - shortest);
	for (i = 0; i < len; i++)
		text[i] = chars[(unsigned char)text[i] % (sizeof(chars) - 1)];
	text[len] = '\0';
}

/*
 * Crash reports. A test child killed by SIGSEGV, SIGBUS, SIGFPE, SIGILL or
 * SIGABRT first writes one block to stderr, which lab-check shows under the
 * failed test:
 *
 *   crash in test pd_is_allocated_on_its_context: SIGSEGV (segmentation fault) at address 0x0
 *       #0 lab1_alloc_pd (labs/lab1/resources.c:21)
 *       #1 pd_is_allocated_on_its_context_fn (tests/lab1/test_resources.c:14)
 *
 * then dies of the same signal, so Check fails the test exactly as before.
 *
 * glibc's backtrace() unwinds the crashing thread, and addr2line, from the
 * binutils the compiler already needs, turns each address into function
 * (file:line), inlined calls included; libdw or libbacktrace would do it in
 * the process but add a package, for no gain a student sees (addr2line
 * takes 3 ms on a lab's test program, once per crash). A handler may only
 * call async-signal-safe functions, so all it needs is found when it is
 * installed: the program's path and, from dl_iterate_phdr, the address it
 * is loaded at (the programs stay PIEs, which move at every run, and
 * addr2line wants offsets into the file) and the libraries' address ranges
 * and names; addr2line's path; the buffers; an alternate stack (a stack
 * overflow is a SIGSEGV too). The handler then
 * uses only backtrace() (primed here: its first call loads libgcc_s),
 * pipe, _Fork (a fork that runs no atfork handlers), execve, read, waitpid,
 * write and raise.
 */
#define CRASH_DEPTH 64        /* frames unwound */
#define CRASH_FRAMES_SHOWN 12 /* frames printed */
#define CRASH_LIBS_MAX 32     /* libraries named */

struct crash_lib {
	uintptr_t start, end;
	char name[48];
};

static struct {
	char exe[PATH_MAX];       /* this program, for addr2line -e */
	char addr2line[PATH_MAX]; /* "" when binutils is missing */
	char root[PATH_MAX];      /* the directory we started in, cut from file names */
	size_t root_len;
	uintptr_t exe_base, exe_start, exe_end;
	struct crash_lib lib[CRASH_LIBS_MAX];
	int nlib;
	char offset[CRASH_DEPTH][2 + 2 * sizeof(uintptr_t) + 1];
	char *argv[CRASH_DEPTH + 8];
	char answer[16384]; /* what addr2line printed */
	char report[8192];  /* the block, written at once */
	size_t len;
} crash;

static char crash_stack[64 * 1024];

/* The running test's name, for the report: Check's tcase_name, or the graded runner's. */
static const char *(*crash_test_name)(void);
/* Frames as offsets into this program, for the graded runner's parent to resolve. */
static bool crash_raw;

void rl_crash_raw_frames(void)
{
	crash_raw = true;
}

static const struct {
	int sig;
	const char *name;
} crash_signals[] = {
	{ SIGSEGV, "SIGSEGV (segmentation fault)" },
	{ SIGBUS, "SIGBUS (bus error)" },
	{ SIGFPE, "SIGFPE (arithmetic exception, such as a division by zero)" },
	{ SIGILL, "SIGILL (illegal instruction)" },
	{ SIGABRT, "SIGABRT (aborted: abort() or a failed assert())" },
};

static void crash_put(const char *s, size_t n)
{
	if (n > sizeof(crash.report) - crash.len)
		n = sizeof(crash.report) - crash.len;
	memcpy(crash.report + crash.len, s, n);
	crash.len += n;
}

static void crash_puts(const char *s)
{
	crash_put(s, strlen(s));
}

/* Writes V in hex, "0x" first, into BUF (19 bytes at least). */
static void crash_hex(char *buf, uintptr_t v)
{
	char digits[2 * sizeof(v)];
	int n = 0;

	do {
		digits[n++] = "0123456789abcdef"[v & 0xf];
		v >>= 4;
	} while (v);
	*buf++ = '0';
	*buf++ = 'x';
	while (n)
		*buf++ = digits[--n];
	*buf = '\0';
}

static void crash_put_hex(uintptr_t v)
{
	char buf[2 + 2 * sizeof(v) + 1];

	crash_hex(buf, v);
	crash_puts(buf);
}

static void crash_put_number(int v)
{
	char buf[12];
	int n = sizeof(buf);

	do {
		buf[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v && n);
	crash_put(buf + n, sizeof(buf) - n);
}

/* The library holding ADDR, "" for this program, NULL when unknown. */
static const char *crash_where(uintptr_t addr)
{
	int i;

	if (addr >= crash.exe_start && addr < crash.exe_end)
		return "";
	for (i = 0; i < crash.nlib; i++)
		if (addr >= crash.lib[i].start && addr < crash.lib[i].end)
			return crash.lib[i].name;
	return NULL;
}

/*
 * Runs addr2line on the N offsets in crash.offset into crash.answer: one
 * line "function at file:line" per address, then one " (inlined by) ..."
 * line per call inlined into it. Returns 0, or -1 when it could not run.
 */
static int crash_resolve(int n)
{
	static char *const envp[] = { "LC_ALL=C", NULL };
	int argc = 0, fd[2], i;
	size_t got = 0;
	ssize_t r;
	pid_t pid;

	if (!crash.addr2line[0] || n == 0 || pipe(fd) != 0)
		return -1;
	crash.argv[argc++] = "addr2line";
	crash.argv[argc++] = "-f";
	crash.argv[argc++] = "-i";
	crash.argv[argc++] = "-p";
	crash.argv[argc++] = "-e";
	crash.argv[argc++] = crash.exe;
	for (i = 0; i < n; i++)
		crash.argv[argc++] = crash.offset[i];
	crash.argv[argc] = NULL;
	pid = _Fork();
	if (pid == 0) {
		dup2(fd[1], STDOUT_FILENO);
		close(fd[0]);
		close(fd[1]);
		execve(crash.addr2line, crash.argv, envp);
		_exit(127);
	}
	close(fd[1]);
	if (pid < 0) {
		close(fd[0]);
		return -1;
	}
	while (got < sizeof(crash.answer) - 1 &&
	       (r = read(fd[0], crash.answer + got, sizeof(crash.answer) - 1 - got)) > 0)
		got += (size_t)r;
	crash.answer[got] = '\0';
	close(fd[0]);
	waitpid(pid, NULL, 0);
	return got ? 0 : -1;
}

/*
 * Appends frame K, "    #K function (file:line)", from LINE, one line of
 * addr2line's answer ending at END; the directory we started in and the
 * "(discriminator N)" addr2line may add are cut. Returns the function.
 */
static const char *crash_put_frame(int k, const char *line, const char *end)
{
	static const char inlined[] = " (inlined by) ";
	const char *at = NULL, *p, *loc, *disc;

	if ((size_t)(end - line) > sizeof(inlined) - 1 &&
	    memcmp(line, inlined, sizeof(inlined) - 1) == 0)
		line += sizeof(inlined) - 1;
	for (p = line; p + 4 <= end; p++)
		if (memcmp(p, " at ", 4) == 0)
			at = p;
	if (!at)
		at = end;
	loc = at + 4 < end ? at + 4 : end;
	if ((size_t)(end - loc) > crash.root_len && memcmp(loc, crash.root, crash.root_len) == 0)
		loc += crash.root_len;
	for (disc = loc; disc < end && *disc != ' '; disc++)
		;
	crash_puts("    #");
	crash_put_number(k);
	crash_puts(" ");
	crash_put(line, (size_t)(at - line));
	crash_puts(" (");
	crash_put(loc, (size_t)(disc - loc));
	crash_puts(")\n");
	return line;
}

/*
 * Appends the frames of PC[0..N): this program's as function (file:line),
 * a run of library frames as one line, named for the first; stops
 * after the test's own function (TEST_fn, from START_TEST), where Check's
 * frames begin, or after CRASH_FRAMES_SHOWN lines.
 */
static void crash_put_frames(void **pc, int n, const char *test)
{
	const char *answer, *end, *func, *where;
	size_t tlen = test ? strlen(test) : 0;
	int i, k = 0, nexe = 0, in_lib = 0;

	for (i = 0; i < n; i++) {
		/* Past the first frame, a return address: the call is just before. */
		uintptr_t addr = (uintptr_t)pc[i] - (i > 0);

		where = crash_where(addr);
		if (where && !where[0])
			crash_hex(crash.offset[nexe++], addr - crash.exe_base);
	}
	answer = !crash_raw && crash_resolve(nexe) == 0 ? crash.answer : NULL;
	for (i = 0; i < n && k < CRASH_FRAMES_SHOWN; i++) {
		uintptr_t addr = (uintptr_t)pc[i] - (i > 0);

		where = crash_where(addr);
		if (where && !where[0] && crash_raw) {
			crash_puts("    #");
			crash_put_number(k++);
			crash_puts(" exe+");
			crash_put_hex(addr - crash.exe_base);
			crash_puts("\n");
			continue;
		}
		if (where && !where[0] && !answer) {
			crash_puts("    #");
			crash_put_number(k++);
			crash_puts(" ");
			crash_puts(crash.exe);
			crash_puts(" + ");
			crash_put_hex(addr - crash.exe_base);
			crash_puts(" (no addr2line: apt-get install binutils)\n");
			continue;
		}
		if (!where || where[0]) {
			/* Libraries have no lines to show: one line for a run of them. */
			if (!in_lib) {
				crash_puts("    #");
				crash_put_number(k++);
				crash_puts(" in ");
				crash_puts(where ? where : "a library");
				crash_puts("\n");
			}
			in_lib = 1;
			continue;
		}
		in_lib = 0;
		do {
			end = strchr(answer, '\n');
			if (!end)
				return;
			func = crash_put_frame(k++, answer, end);
			answer = end + 1;
			if (test && (size_t)(end - func) > tlen + 3 &&
			    memcmp(func, test, tlen) == 0 && memcmp(func + tlen, "_fn ", 4) == 0)
				return;
		} while (strncmp(answer, " (inlined by) ", 14) == 0 && k < CRASH_FRAMES_SHOWN);
	}
}

static void crash_handler(int sig, siginfo_t *info, void *context)
{
	void *pc[CRASH_DEPTH];
	const char *test = crash_test_name ? crash_test_name() : NULL;
	int n = backtrace(pc, CRASH_DEPTH), i, skip;
	size_t s;

	(void)context;
	/*
	 * pc[0] is this handler and pc[1] the kernel's return into it (the
	 * signal trampoline, in libc or the vDSO); pc[2] is where the signal
	 * hit, the faulting instruction itself rather than a return address.
	 */
	skip = n > 2 ? 2 : n;
	crash.len = 0;
	crash_puts("\ncrash");
	if (test) {
		crash_puts(" in test ");
		crash_puts(test);
	}
	crash_puts(": ");
	for (s = 0; s < sizeof(crash_signals) / sizeof(crash_signals[0]); s++)
		if (crash_signals[s].sig == sig)
			crash_puts(crash_signals[s].name);
	if (sig == SIGSEGV || sig == SIGBUS) {
		crash_puts(" at address ");
		crash_put_hex((uintptr_t)info->si_addr);
	}
	crash_puts("\n");
	for (i = 0; i < n - skip; i++)
		pc[i] = pc[i + skip];
	crash_put_frames(pc, n - skip, test);
	(void)!write(STDERR_FILENO, crash.report, crash.len);
	/* SA_RESETHAND restored the default action: die of it on return. */
	raise(sig);
}

/* dl_iterate_phdr's callback: where this program and each library lie. */
static int crash_note_object(struct dl_phdr_info *info, size_t size, void *first)
{
	uintptr_t start = UINTPTR_MAX, end = 0;
	const char *name = info->dlpi_name, *slash;
	struct crash_lib *lib;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < start)
			start = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > end)
			end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (*(int *)first) {
		/* The first object is the program itself. */
		*(int *)first = 0;
		crash.exe_base = info->dlpi_addr;
		crash.exe_start = start;
		crash.exe_end = end;
		return 0;
	}
	if (crash.nlib == CRASH_LIBS_MAX)
		return 0;
	lib = &crash.lib[crash.nlib++];
	lib->start = start;
	lib->end = end;
	slash = strrchr(name, '/');
	snprintf(lib->name, sizeof(lib->name), "%s", slash ? slash + 1 : name);
	return 0;
}

/* Finds addr2line in PATH (binutils), or leaves crash.addr2line empty. */
static void crash_find_addr2line(void)
{
	const char *path = getenv("PATH");
	const char *dir = path && *path ? path : "/usr/bin:/bin";
	size_t n;

	while (*dir) {
		n = strcspn(dir, ":");
		snprintf(crash.addr2line, sizeof(crash.addr2line), "%.*s/addr2line", (int)n, dir);
		if (access(crash.addr2line, X_OK) == 0)
			return;
		dir += n + (dir[n] == ':');
	}
	crash.addr2line[0] = '\0';
}

/* Prepares what the crash handler needs, then installs it. */
static void crash_install(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	struct sigaction sa = {
		.sa_sigaction = crash_handler,
		.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND,
	};
	stack_t ss = { .ss_sp = crash_stack, .ss_size = sizeof(crash_stack) };
	void *prime[1];
	ssize_t n;
	int first = 1;
	size_t i;

	n = readlink("/proc/self/exe", crash.exe, sizeof(crash.exe) - 1);
	crash.exe[n > 0 ? n : 0] = '\0';
	if (getcwd(crash.root, sizeof(crash.root) - 1)) {
		crash.root_len = strlen(crash.root);
		crash.root[crash.root_len++] = '/';
	}
	dl_iterate_phdr(crash_note_object, &first);
	crash_find_addr2line();
	backtrace(prime, 1);
	sigaltstack(&ss, NULL);
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/*
 * What every test program does first. What is set here holds in each test
 * child too, since fork() copies it: the crash handlers and their stack,
 * and stdout left unbuffered. Unbuffered rather than line-buffered, so
 * that even a line cut short by a crash ("connecting to 10.0.0.2... ")
 * reaches the output; the tests print little, and what they print stays in
 * order with stderr in the one file lab-check keeps (stderr is unbuffered
 * already).
 */
void rl_harness_start(const char *(*test_name)(void))
{
	setvbuf(stdout, NULL, _IONBF, 0);
	crash_test_name = test_name;
	crash_install();
}
