/*
 * graded_victim.c: a lab's test program in miniature, each of its tests
 * one way a test can end, run by tests/grader/test-graded to check
 * tests/graded.c and case.c. No RDMA.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A lab's header defines its number, which each declaration records. */
#define RL_LAB 9

#include "../harness.h"

/* An act that says 42, and a check that wants 42. */
static void say_42(struct rl_case *c)
{
	(void)c;
	rl_say_int("answer", 42);
}

static void wants_42(struct rl_case *c)
{
	long long got = rl_said_int(c, "answer");

	rl_expect(c, got == 42, "expected 42, got %lld", got);
}

RL_GRADED(passes, .step = 1, .points = 2, .act = say_42, .check = wants_42);

static void wants_43(struct rl_case *c)
{
	long long got = rl_said_int(c, "answer");

	rl_expect(c, got == 43, "expected 43, got %lld", got);
}

RL_GRADED(fails_an_expectation, .step = 1, .points = 1, .act = say_42, .check = wants_43);

/* Code under test that ends the process: the act never returns. */
static void exits(struct rl_case *c)
{
	(void)c;
	rl_say_int("answer", 42);
	exit(0);
}

RL_GRADED(exits_with_status_0_before_its_end, .step = 2, .points = 1, .act = exits,
	  .check = wants_42);

/*
 * Passes, leaving a daemon (forked twice, in a session of its own) that
 * writes its PID to $VICTIM_DAEMON_PID and sleeps: the runner must kill it.
 */
static void leaves_a_daemon(struct rl_case *c)
{
	const char *file = getenv("VICTIM_DAEMON_PID");
	FILE *f;

	if (fork() == 0) {
		setsid();
		if (fork() == 0) {
			f = file ? fopen(file, "w") : NULL;
			if (f) {
				fprintf(f, "%d\n", (int)getpid());
				fclose(f);
			}
			sleep(60);
		}
		_exit(0);
	}
	sleep(1);
	say_42(c);
}

RL_GRADED(passes_and_leaves_a_daemon, .step = 2, .points = 1, .act = leaves_a_daemon,
	  .check = wants_42);

RL_GRADED(needs_step_2, .step = 3, .points = 1, .needs = 2, .act = say_42, .check = wants_42);

/* A message of several lines, with a tab, a quote and a backslash. */
static void fails_quoting(struct rl_case *c)
{
	rl_expect(c, false,
		  "the output was:\n{\"test\": \"needs_step_2\",\t\"result\": \"pass\"}\n"
		  "and a \\ backslash");
}

RL_GRADED(fails_quoting_a_results_line, .step = 3, .points = 3, .act = say_42,
	  .check = fails_quoting);

static void segfaults(struct rl_case *c)
{
	(void)c;
	raise(SIGSEGV);
}

RL_GRADED(crashes, .step = 4, .points = 1, .act = segfaults, .check = wants_42);

/* Of the whole program, after step 3, none of whose tests passed: skipped. */
RL_GRADED(runs_the_whole_program, .step = 4, .points = 1, .whole = true, .act = say_42,
	  .check = wants_42);

/* Step 5 never returns: the first test runs out its time limit... */
static void hangs(struct rl_case *c)
{
	(void)c;
	for (;;)
		pause();
}

RL_GRADED(hangs, .step = 5, .points = 1, .act = hangs, .check = wants_42);

/* ...and the others of the step get a quarter of it, */
RL_GRADED(hangs_too, .step = 5, .points = 1, .act = hangs, .check = wants_42);

/* which is ample for a test that does not hang. */
RL_GRADED(passes_after_the_hangs, .step = 5, .points = 1, .act = say_42, .check = wants_42);

/*
 * Declares a limit under the RDMA tests' (test-graded sets that to 2 s) and
 * takes longer than it, though less than the RDMA tests' limit: it fails.
 */
static void sleeps_past_a_second(struct rl_case *c)
{
	const char *m = getenv("CK_TIMEOUT_MULTIPLIER");

	usleep((useconds_t)(1500000 * (m && atof(m) > 0 ? atof(m) : 1)));
	say_42(c);
}

RL_GRADED(runs_past_its_own_limit, .step = 6, .points = 1, .limit = 1, .act = sleeps_past_a_second,
	  .check = wants_42);

/* Its act finds its own declaration, the receiver's options included. */
static void says_its_declaration(struct rl_case *c)
{
	(void)c;
	rl_say_str("name", rl_graded_test()->name);
	rl_say_str("receiver", rl_graded_test()->receiver);
}

static void wants_its_declaration(struct rl_case *c)
{
	const char *name = rl_said_str(c, "name"), *receiver = rl_said_str(c, "receiver");

	if (rl_expect(c, strcmp(name, "finds_its_declaration") == 0, "expected its name, got %s",
		      name))
		rl_expect(c, strcmp(receiver, "--fault-drop 4") == 0,
			  "expected the receiver's options, got %s", receiver);
}

RL_GRADED(finds_its_declaration, .step = 6, .points = 1, .receiver = "--fault-drop 4",
	  .act = says_its_declaration, .check = wants_its_declaration);

/* The act's own set-up fails a ck_assert: the test fails with its message. */
static void set_up_fails(struct rl_case *c)
{
	(void)c;
	ck_assert_msg(0, "fixture: expected a free port, got none");
}

RL_GRADED(fails_in_its_act_set_up, .step = 7, .points = 1, .act = set_up_fails, .check = wants_42);

/* Code under test that writes records of its own on the report pipe. */
static void forges_records(struct rl_case *c)
{
	(void)c;
	rl_say_int("answer", 42);
	(void)!write(3, "garbage that is not a record", 28);
}

RL_GRADED(writes_what_was_not_asked_for, .step = 7, .points = 1, .act = forges_records,
	  .check = wants_42);

/* Code under test that makes executable memory, as a submission running its own bytes would. */
static void maps_code(struct rl_case *c)
{
	(void)c;
	mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	say_42(c);
}

RL_GRADED(maps_executable_memory, .step = 8, .points = 1, .act = maps_code, .check = wants_42);

static void execs(struct rl_case *c)
{
	char *const argv[] = { "true", NULL };

	(void)c;
	execv("/bin/true", argv);
	say_42(c);
}

RL_GRADED(runs_a_program, .step = 8, .points = 1, .act = execs, .check = wants_42);

/*
 * The lockdown's probes: each act makes one call the lockdown refuses (a
 * way to new executable bytes, to the program's own code bytes, or around
 * the filter), then says 42. The lockdown kills each, so each fails.
 */
static void attaches_executable_shared_memory(struct rl_case *c)
{
	int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);

	if (id >= 0) {
		shmat(id, NULL, SHM_EXEC);
		shmctl(id, IPC_RMID, NULL);
	}
	say_42(c);
}

RL_GRADED(maps_shared_memory_executable, .step = 8, .points = 1,
	  .act = attaches_executable_shared_memory, .check = wants_42);

/* A system call by number, with no arguments that matter: the filter decides. */
#define VICTIM_CALLS(name_, nr_)                                                                   \
	static void calls_##name_(struct rl_case *c)                                               \
	{                                                                                          \
		syscall(nr_, 0, 0, 0, 0, 0);                                                       \
		say_42(c);                                                                         \
	}                                                                                          \
	RL_GRADED(calls_##name_, .step = 8, .points = 1, .act = calls_##name_, .check = wants_42)

VICTIM_CALLS(process_madvise, SYS_process_madvise);
VICTIM_CALLS(io_uring_setup, SYS_io_uring_setup);
VICTIM_CALLS(userfaultfd, SYS_userfaultfd);
VICTIM_CALLS(remap_file_pages, SYS_remap_file_pages);

/*
 * Drops the act's copy of its own code page, so that the file's bytes would
 * fault back in (what tests/hide.c wrote gone): refused with EPERM.
 */
static void drops_its_code_pages(struct rl_case *c)
{
	long page = sysconf(_SC_PAGESIZE);
	void *code = (void *)((uintptr_t)say_42 & ~(uintptr_t)(page - 1));

	(void)c;
	rl_say_int("madvise", madvise(code, (size_t)page, MADV_DONTNEED) ? -errno : 0);
}

static void wants_it_done(struct rl_case *c)
{
	long long got = rl_said_int(c, "madvise");

	rl_expect(c, got == 0, "madvise(MADV_DONTNEED) on its code: expected 0, got %lld", got);
}

RL_GRADED(drops_its_code_pages, .step = 8, .points = 1, .act = drops_its_code_pages,
	  .check = wants_it_done);

/* The descriptors of the parent are not the act's: it has 0 to 4, no more. */
static void writes_fd_5(struct rl_case *c)
{
	(void)c;
	rl_say_int("errno", write(5, "x", 1) < 0 ? errno : 0);
}

static void wants_ebadf(struct rl_case *c)
{
	long long e = rl_said_int(c, "errno");

	rl_expect(c, e == EBADF, "expected EBADF writing to descriptor 5, got %lld", e);
}

RL_GRADED(has_no_descriptor_it_was_not_given, .step = 8, .points = 1, .act = writes_fd_5,
	  .check = wants_ebadf);

/* While the act holds, the check sees it alive (and what it said so far). */
static void holds(struct rl_case *c)
{
	(void)c;
	rl_say_int("pid", getpid());
	rl_hold();
}

static void sees_it_alive(struct rl_case *c)
{
	int pid = rl_act_pid(c);

	rl_expect(c, pid > 0 && pid == rl_said_int(c, "pid") && kill(pid, 0) == 0,
		  "expected the act alive as pid %lld while it holds, got pid %d",
		  rl_said_int(c, "pid"), pid);
}

RL_GRADED(holds_while_checked, .step = 8, .points = 1, .act = holds, .check = sees_it_alive);

/* A check with no act (a test of a whole program): the parent alone. */
static void by_itself(struct rl_case *c)
{
	rl_expect(c, rl_act_pid(c) == 0, "expected no act, got pid %d", rl_act_pid(c));
}

RL_GRADED(checks_without_an_act, .step = 8, .points = 1, .check = by_itself);

/* The kernel's view, as `rdma -j -d res show qp` prints it, read back. */
static void reads_rdma_res(struct rl_case *c)
{
	static const char text[] =
		"[{\"ifindex\":0,\"ifname\":\"rxe0\",\"port\":1,\"lqpn\":17,\"rqpn\":18,\"type\":\"RC\","
		"\"state\":\"RTS\",\"rq-psn\":0,\"sq-psn\":4660,\"pid\":81,\"comm\":\"a \\\"b\\\"\"},"
		"{\"ifindex\":0,\"lqpn\":1,\"type\":\"GSI\",\"state\":\"RTS\",\"comm\":\"ib_core\"}]\n";
	struct rl_res r[4];
	int n = rl_res_parse(text, r, 4);

	if (!rl_expect(c, n == 2, "expected 2 objects, got %d", n))
		return;
	rl_expect(c,
		  strcmp(rl_res_get(&r[0], "state"), "RTS") == 0 &&
			  strcmp(rl_res_get(&r[0], "sq-psn"), "4660") == 0 &&
			  strcmp(rl_res_get(&r[0], "comm"), "a \"b\"") == 0 &&
			  rl_res_get(&r[1], "pid") == NULL &&
			  rl_res_parse("[{\"a\":[1]}]", r, 4) == -1,
		  "expected RTS, 4660, a \"b\", no pid, and nesting refused; got %s, %s, %s",
		  rl_res_get(&r[0], "state"), rl_res_get(&r[0], "sq-psn"),
		  rl_res_get(&r[0], "comm"));
}

RL_GRADED(reads_what_the_kernel_says, .step = 8, .points = 1, .check = reads_rdma_res);

/* The act holds no capability, even when the tests run as root. */
static void says_its_capabilities(struct rl_case *c)
{
	char line[256], eff[64] = "?";
	FILE *f = fopen("/proc/self/status", "r");

	(void)c;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %63s", eff) == 1)
			break;
	if (f)
		fclose(f);
	rl_say_str("CapEff", eff);
}

static void wants_none(struct rl_case *c)
{
	const char *eff = rl_said_str(c, "CapEff");

	rl_expect(c, strspn(eff, "0") == strlen(eff) && eff[0],
		  "expected no capability in the act, got CapEff %s", eff);
}

RL_GRADED(holds_no_capability, .step = 8, .points = 1, .act = says_its_capabilities,
	  .check = wants_none);

/* The kit's own version of step 9, hidden in step 9's acts. */
static int victim_ref_step9(void)
{
	return 42;
}
RL_HIDDEN(victim_ref_step9, 9);

/* Code under test that calls the kit's own step at its address. */
static void borrows_the_kits_step(struct rl_case *c)
{
	int (*volatile fn)(void) = victim_ref_step9;

	(void)c;
	rl_say_int("answer", fn());
}

RL_GRADED(calls_the_kits_own_step, .step = 9, .points = 1, .act = borrows_the_kits_step,
	  .check = wants_42);

/* Code under test that calls a check at its address, for the expected value in its message. */
static void calls_a_check(struct rl_case *c)
{
	void (*volatile check)(struct rl_case *) = wants_43;

	check(c);
	say_42(c);
}

RL_GRADED(calls_a_check_for_its_answer, .step = 9, .points = 1, .act = calls_a_check,
	  .check = wants_42);

/* The pages of the hidden step in the program's file: its file offset, from the loaded one. */
static off_t page_in_file(uintptr_t page)
{
	return (off_t)(page - (uintptr_t)getauxval(AT_PHDR) + sizeof(Elf64_Ehdr));
}

/*
 * Code under test that maps the program's file back where the kit's step
 * was, readable only (User-Mode Linux would run it): the lockdown kills a
 * mapping at a fixed address.
 */
static void maps_the_step_back(struct rl_case *c)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t at = (uintptr_t)victim_ref_step9 & ~(uintptr_t)(page - 1);
	int fd = open("/proc/self/exe", O_RDONLY);

	mmap((void *)at, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, page_in_file(at));
	borrows_the_kits_step(c);
}

RL_GRADED(maps_the_kits_step_back_from_the_file, .step = 9, .points = 1,
	  .act = maps_the_step_back, .check = wants_42);

/* The same, mapped elsewhere first and then moved there (mremap): killed too. */
static void moves_the_step_back(struct rl_case *c)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t at = (uintptr_t)victim_ref_step9 & ~(uintptr_t)(page - 1);
	int fd = open("/proc/self/exe", O_RDONLY);
	void *p = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE, fd, page_in_file(at));

	if (p != MAP_FAILED)
		mremap(p, (size_t)page, (size_t)page, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)at);
	borrows_the_kits_step(c);
}

RL_GRADED(moves_the_kits_step_back_from_the_file, .step = 9, .points = 1,
	  .act = moves_the_step_back, .check = wants_42);

/* Code under test that writes where the kit's step was through /proc/self/mem: nothing is there. */
static void writes_where_the_step_was(struct rl_case *c)
{
	static const uint8_t ret42[] = { 0xb8, 42, 0, 0, 0, 0xc3 }; /* mov $42, %eax; ret */
	int fd = open("/proc/self/mem", O_RDWR);
	ssize_t n = pwrite(fd, ret42, sizeof(ret42), (off_t)(uintptr_t)victim_ref_step9);

	(void)c;
	rl_say_int("errno", n < 0 ? errno : 0);
}

static void wants_eio(struct rl_case *c)
{
	long long e = rl_said_int(c, "errno");

	rl_expect(c, e == EIO, "expected EIO writing where the kit's step was, got %lld (%s)", e,
		  strerror((int)e));
}

RL_GRADED(writes_where_the_kits_step_was_through_proc_mem, .step = 9, .points = 1,
	  .act = writes_where_the_step_was, .check = wants_eio);

/* In another step's act, the same function is there (a fixture may run it). */
RL_GRADED(uses_the_kits_step_in_another_step, .step = 10, .points = 1, .act = borrows_the_kits_step,
	  .check = wants_42);

/*
 * A check that ran a program into the test's limit says so (Lab 3's
 * reference does): its step counts as hung, as after an act's hang...
 */
static void a_program_it_ran_hung(struct rl_case *c)
{
	rl_graded_hung();
	rl_expect(c, false, "the program ran out of the time limit");
}

RL_GRADED(sees_its_program_hang, .step = 11, .points = 1, .act = say_42,
	  .check = a_program_it_ran_hung);

/* ...so the step's next test has a quarter of its limit, which its setup reads. */
static void reads_its_limit(struct rl_case *c)
{
	double full = RL_TEST_TIMEOUT_RDMA;

	rl_expect(c, rl_graded_after_a_hang() && rl_graded_limit() == full / 4,
		  "expected a quarter of %g s after the step's hang, got %g s (after a hang: %d)",
		  full, rl_graded_limit(), rl_graded_after_a_hang());
}

RL_GRADED(has_a_quarter_after_a_program_hang, .step = 11, .points = 1, .act = say_42,
	  .check = reads_its_limit);
