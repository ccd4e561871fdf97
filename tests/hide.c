/*
 * hide.c: the kit's own versions of a step, out of reach of the act that
 * tests that step. A test's act is a fork of the test program, so it holds
 * every function the program links: the fixtures' working version of each
 * step (a test of step 5 runs the kit's steps 1 to 4 around the student's
 * step 5) and the checks' reference code. A submission could call one at an
 * address it computes, which no rule on names sees, and pass a step it did
 * not do. So each such function is declared (RL_HIDDEN in tests/harness.h)
 * with the step it implements, or 0 when only checks use it; before the
 * act's first call into the lab's code, its body is overwritten with
 * traps (ud2: SIGILL) in the act's own copy of the program's pages. The
 * page goes back to read and execute; making it writable and executable
 * again, or mapping code anew, is what the lockdown kills.
 * tests/unit/test_hide.c proves it on the host's kernel, which enforces
 * no-execute as User-Mode Linux does not.
 *
 * A function's size comes from the program's own symbol table
 * (/proc/self/exe: the kit builds with symbols; a handout's archives keep
 * theirs, only debug sections are stripped).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graded.h"

/* Each declaration, put in this section by RL_HIDDEN. */
extern const struct rl_hidden *const __start_rl_hidden[] __attribute__((weak));
extern const struct rl_hidden *const __stop_rl_hidden[] __attribute__((weak));

/* The program's symbol table, mapped: its symbols and their names. */
struct symtab {
	const Elf64_Sym *sym;
	size_t n;
	const char *names;
	uintptr_t base; /* where the program is loaded (a PIE moves) */
};

static int first_object(struct dl_phdr_info *info, size_t size, void *base)
{
	(void)size;
	*(uintptr_t *)base = info->dlpi_addr;
	return 1;
}

/* Maps the program's symbol table into T; 0 or a negative errno. */
static int symtab_open(struct symtab *t)
{
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	struct stat st;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), i;

	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	eh = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (eh == MAP_FAILED)
		return -errno;
	if ((size_t)st.st_size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOEXEC;
	sh = (const Elf64_Shdr *)((const char *)eh + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		t->sym = (const Elf64_Sym *)((const char *)eh + sh[i].sh_offset);
		t->n = sh[i].sh_size / sizeof(*t->sym);
		t->names = (const char *)eh + sh[sh[i].sh_link].sh_offset;
		dl_iterate_phdr(first_object, &t->base);
		return 0;
	}
	return -ENOENT;
}

/* The size of the function at FN, from T: 0 when it has no symbol. */
static size_t size_of(const struct symtab *t, const void *fn)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (ELF64_ST_TYPE(t->sym[i].st_info) == STT_FUNC &&
		    t->base + t->sym[i].st_value == (uintptr_t)fn)
			return t->sym[i].st_size;
	return 0;
}

/*
 * Overwrites SIZE bytes at FN with traps, in this process's copy of its
 * pages. The pages stay executable while they are written: the code doing
 * the writing (this file, libc) may share a page with a hidden function,
 * and a kernel that enforces no-execute (any but User-Mode Linux) would
 * stop it there (Lab 2's tests did, on every real kernel).
 */
static int poison(void *fn, size_t size)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)fn & ~(uintptr_t)(page - 1);
	size_t len = (uintptr_t)fn + size - start, i;
	uint8_t *p = fn;

	if (mprotect((void *)start, len, PROT_READ | PROT_WRITE | PROT_EXEC))
		return -errno;
#if defined(__x86_64__)
	for (i = 0; i + 1 < size; i += 2) {
		p[i] = 0x0f; /* ud2 */
		p[i + 1] = 0x0b;
	}
	if (i < size)
		p[i] = 0xcc; /* int3 */
#else
	(void)i;
	memset(p, 0, size); /* aarch64: udf #0 */
#endif
	__builtin___clear_cache((char *)p, (char *)p + size);
	if (mprotect((void *)start, len, PROT_READ | PROT_EXEC))
		return -errno;
	return 0;
}

int rl_hide_steps(int step)
{
	const struct rl_hidden *const *h;
	struct symtab t = { 0 };
	size_t size;
	int ret;

	if (&__start_rl_hidden[0] == &__stop_rl_hidden[0])
		return 0;
	ret = symtab_open(&t);
	if (ret)
		return ret;
	for (h = __start_rl_hidden; h < __stop_rl_hidden; h++) {
		if ((*h)->step != 0 && (*h)->step != step)
			continue;
		size = size_of(&t, (*h)->fn);
		if (size == 0)
			return -ENOENT;
		ret = poison((void *)(uintptr_t)(*h)->fn, size);
		if (ret)
			return ret;
	}
	return 0;
}
