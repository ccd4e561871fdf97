/*
 * hide.c: what a test's act must not hold, out of its address space. A
 * test's act is a fork of the test program, which links every function
 * the judge and the fixtures need: the judge's runner, every check and
 * setup, what only checks use, and the kit's own version of each step (a
 * test of step 5 runs the kit's steps 1 to 4 around the student's step
 * 5). A submission could call one at an address it computes, which no
 * rule on names sees, and pass a step it did not do.
 *
 * So the program is linked with its hide script (tests/harness.h, "What
 * the act holds"), which this file writes (`PROG --hide-script`, from the
 * program's declarations): page-aligned sections rl_hide_0 (the judge's
 * objects, every .check and .setup, every RL_HIDDEN(fn, 0)) and rl_hide_K
 * (every RL_HIDDEN(fn, K)). In the act of a test of step K, before the
 * lab's code runs, rl_hide_steps() checks that each such function lies in
 * rl_hide_0 or rl_hide_K and unmaps both: the bytes are not in the act's
 * memory, so no system call brings them back from there.
 *
 * Functions are placed by name (the compiler puts each in a section of
 * its own, -ffunction-sections) and only from the kit's test objects and
 * archives, so that a student's function of the same name stays where it
 * is. Sizes and names come from the program's own symbol table
 * (/proc/self/exe: the kit builds with symbols; a handout's archives keep
 * theirs, only debug sections are stripped).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graded.h"

/* Each declaration, put in its section by RL_HIDDEN and RL_GRADED. */
extern const struct rl_hidden *const __start_rl_hidden[] __attribute__((weak));
extern const struct rl_hidden *const __stop_rl_hidden[] __attribute__((weak));
extern const struct rl_graded *const __start_rl_graded[] __attribute__((weak));
extern const struct rl_graded *const __stop_rl_graded[] __attribute__((weak));

/* graded.c's. */
int main(int argc, char **argv);

/* The judge's objects, whole: none of their code runs in an act. */
static const char *const judge_objects[] = { "graded.o", "case.o", "res.o" };

#define MAX_STEP 64

/* The program's ELF file, mapped: its symbols and its sections. */
struct elf {
	const Elf64_Ehdr *eh;
	size_t len;
	const Elf64_Sym *sym;
	size_t nsym;
	const char *names;
	uintptr_t base; /* where the program is loaded (a PIE moves) */
};

/* WHY gets FMT's text; returns -1. */
static int say_why(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int say_why(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
	return -1;
}

static int first_object(struct dl_phdr_info *info, size_t size, void *base)
{
	(void)size;
	*(uintptr_t *)base = info->dlpi_addr;
	return 1;
}

static const Elf64_Shdr *sections(const struct elf *e)
{
	return (const Elf64_Shdr *)((const char *)e->eh + e->eh->e_shoff);
}

/* Maps the program's file into E: 0, or a negative errno. */
static int elf_open(struct elf *e)
{
	const Elf64_Shdr *sh;
	struct stat st;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), i;

	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	e->len = (size_t)st.st_size;
	e->eh = mmap(NULL, e->len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (e->eh == MAP_FAILED)
		return -errno;
	if (e->len < sizeof(*e->eh) || memcmp(e->eh->e_ident, ELFMAG, SELFMAG) ||
	    e->eh->e_ident[EI_CLASS] != ELFCLASS64) {
		munmap((void *)e->eh, e->len);
		return -ENOEXEC;
	}
	dl_iterate_phdr(first_object, &e->base);
	sh = sections(e);
	for (i = 0; i < e->eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		e->sym = (const Elf64_Sym *)((const char *)e->eh + sh[i].sh_offset);
		e->nsym = sh[i].sh_size / sizeof(*e->sym);
		e->names = (const char *)e->eh + sh[sh[i].sh_link].sh_offset;
	}
	return 0;
}

static void elf_close(struct elf *e)
{
	munmap((void *)e->eh, e->len);
}

/* The symbol of the function at FN, or NULL. */
static const Elf64_Sym *symbol_at(const struct elf *e, const void *fn)
{
	size_t i;

	for (i = 0; i < e->nsym; i++)
		if (ELF64_ST_TYPE(e->sym[i].st_info) == STT_FUNC &&
		    e->base + e->sym[i].st_value == (uintptr_t)fn)
			return &e->sym[i];
	return NULL;
}

/* Where section NAME is loaded, in [*START, *END): whether the program has it. */
static bool section_range(const struct elf *e, const char *name, uintptr_t *start, uintptr_t *end)
{
	const Elf64_Shdr *sh = sections(e);
	const char *names = (const char *)e->eh + sh[e->eh->e_shstrndx].sh_offset;
	int i;

	for (i = 0; i < e->eh->e_shnum; i++)
		if (strcmp(names + sh[i].sh_name, name) == 0 && sh[i].sh_addr) {
			*start = e->base + sh[i].sh_addr;
			*end = *start + sh[i].sh_size;
			return true;
		}
	return false;
}

/*
 * The step whose acts must not hold the function at FN: 0 for every act
 * (a check, a setup, RL_HIDDEN(fn, 0)), K for RL_HIDDEN(fn, K), -1 when
 * every act may hold it.
 */
static int hidden_step(const void *fn)
{
	const struct rl_hidden *const *h;
	const struct rl_graded *const *g;
	int step = -1;

	for (g = __start_rl_graded; g < __stop_rl_graded; g++)
		if ((const void *)(*g)->check == fn || (const void *)(*g)->setup == fn)
			return 0;
	for (h = __start_rl_hidden; h < __stop_rl_hidden; h++)
		if ((*h)->fn == fn)
			step = (*h)->step;
	return step;
}

/* Calls EACH on every function that must be hidden in some act, once (a check may serve twice). */
static int each_hidden(int (*each)(const void *fn, int step, void *arg), void *arg)
{
	const struct rl_hidden *const *h;
	const struct rl_graded *const *g;
	const void *fns[2];
	int i, ret;

	for (g = __start_rl_graded; g < __stop_rl_graded; g++) {
		fns[0] = (const void *)(*g)->check;
		fns[1] = (const void *)(*g)->setup;
		for (i = 0; i < 2; i++) {
			const struct rl_graded *const *e;

			for (e = __start_rl_graded; fns[i] && e < g; e++)
				if ((const void *)(*e)->check == fns[i] ||
				    (const void *)(*e)->setup == fns[i])
					break;
			if (fns[i] && e == g && (ret = each(fns[i], 0, arg)))
				return ret;
		}
	}
	for (h = __start_rl_hidden; h < __stop_rl_hidden; h++)
		if (hidden_step((*h)->fn) == (*h)->step && (ret = each((*h)->fn, (*h)->step, arg)))
			return ret;
	return 0;
}

/* --- the hide script ------------------------------------------------------ */

struct script {
	const struct elf *e;
	FILE *f;
	int step; /* the section being written */
	char *why;
	size_t size;
};

/* An act may not be hidden: it would never run. */
static bool is_an_act(const void *fn)
{
	const struct rl_graded *const *g;

	for (g = __start_rl_graded; g < __stop_rl_graded; g++)
		if ((const void *)(*g)->act == fn)
			return true;
	return false;
}

/*
 * The object SYM comes from, as a linker script pattern, into OBJ: a
 * static function's (two files may each have one of the same name) is
 * its file's, named by the symbol table (FILE.c: FILE.o); a global's, any.
 */
static void object_of(const struct elf *e, const Elf64_Sym *sym, char *obj, size_t size)
{
	const Elf64_Sym *f;
	const char *name, *dot;

	snprintf(obj, size, "*.o");
	if (ELF64_ST_BIND(sym->st_info) != STB_LOCAL)
		return;
	for (f = sym; f >= e->sym; f--)
		if (ELF64_ST_TYPE(f->st_info) == STT_FILE)
			break;
	if (f < e->sym)
		return;
	name = e->names + f->st_name;
	dot = strrchr(name, '.');
	if (dot && strcmp(dot, ".c") == 0)
		snprintf(obj, size, "%.*s.o", (int)(dot - name), name);
}

/* Writes FN's input sections, when it belongs in section S->step. */
static int put_function(const void *fn, int step, void *arg)
{
	struct script *s = arg;
	const Elf64_Sym *sym = symbol_at(s->e, fn);
	const char *n;
	char obj[256];

	if (!sym)
		return say_why(s->why, s->size, "a hidden function at %p has no symbol", fn);
	n = s->e->names + sym->st_name;
	if (is_an_act(fn))
		return say_why(s->why, s->size,
			       "%s is an act and a check, setup or hidden step: it cannot be both", n);
	if (step != s->step)
		return 0;
	object_of(s->e, sym, obj, sizeof(obj));
	fprintf(s->f,
		"\t\t*/tests/*%1$s(.text.%2$s .text.%2$s.* .text.unlikely.%2$s .text.unlikely.%2$s.*)\n"
		"\t\t*.a:%1$s(.text.%2$s .text.%2$s.* .text.unlikely.%2$s .text.unlikely.%2$s.*)\n",
		obj, n);
	return 0;
}

static int count_in(const void *fn, int step, void *arg)
{
	(void)fn;
	((int *)arg)[step]++;
	return 0;
}

int rl_hide_script(FILE *f, char *why, size_t size)
{
	struct elf e = { 0 };
	struct script s = { .e = &e, .f = f, .why = why, .size = size };
	int n[MAX_STEP] = { 0 }, ret = 0;
	size_t i;

	if (elf_open(&e))
		return say_why(why, size, "cannot read /proc/self/exe: %s", strerror(errno));
	each_hidden(count_in, n);
	fprintf(f, "/* What the acts of this program must not hold (tests/hide.c, --hide-script). */\n"
		   "SECTIONS\n{\n");
	for (s.step = 0; s.step < MAX_STEP && !ret; s.step++) {
		if (s.step > 0 && n[s.step] == 0)
			continue;
		fprintf(f, "\trl_hide_%d ALIGN(CONSTANT(MAXPAGESIZE)) : {\n", s.step);
		for (i = 0; s.step == 0 && i < sizeof(judge_objects) / sizeof(*judge_objects); i++)
			fprintf(f, "\t\t*/tests/%s(.text .text.*)\n", judge_objects[i]);
		ret = each_hidden(put_function, &s);
		fprintf(f, "\t\t. = ALIGN(CONSTANT(MAXPAGESIZE));\n\t}\n");
	}
	fprintf(f, "}\nINSERT AFTER .text;\n");
	elf_close(&e);
	return ret;
}

/* --- in the act ----------------------------------------------------------- */

struct hiding {
	const struct elf *e;
	int step;
	uintptr_t start[2], end[2]; /* rl_hide_0 and rl_hide_STEP; 0, 0 when absent */
	char *why;
	size_t size;
};

static bool inside(const struct hiding *h, uintptr_t a)
{
	return (a >= h->start[0] && a < h->end[0]) || (a >= h->start[1] && a < h->end[1]);
}

static int check_placed(const void *fn, int step, void *arg)
{
	struct hiding *h = arg;
	const Elf64_Sym *sym;

	if ((step != 0 && step != h->step) || inside(h, (uintptr_t)fn))
		return 0;
	sym = symbol_at(h->e, fn);
	return say_why(h->why, h->size,
		       "could not hide the kit's own code: %s (step %d) is not in section "
		       "rl_hide_%d: the test program was linked without its hide script, or "
		       "from objects built before the kit compiled with -ffunction-sections "
		       "(run make clean, then make check again)",
		       sym ? h->e->names + sym->st_name : "a function", step, step);
}

/* Unmaps [START, END), whole pages. */
static int unmap(uintptr_t start, uintptr_t end, char *why, size_t size)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	if (start == end)
		return 0;
	if (start % page || end % page)
		return say_why(why, size, "could not hide the kit's own code: rl_hide at %#" PRIxPTR
			       " is not page-aligned", start);
	if (munmap((void *)start, end - start))
		return say_why(why, size, "could not hide the kit's own code: munmap: %s",
			       strerror(errno));
	return 0;
}

int rl_hide_steps(int step, char *why, size_t size)
{
	struct elf e = { 0 };
	struct hiding h = { .e = &e, .step = step, .why = why, .size = size };
	char name[32];
	int ret;

	if (elf_open(&e))
		return say_why(why, size, "could not hide the kit's own code: cannot read "
			       "/proc/self/exe: %s", strerror(errno));
	section_range(&e, "rl_hide_0", &h.start[0], &h.end[0]);
	snprintf(name, sizeof(name), "rl_hide_%d", step);
	section_range(&e, name, &h.start[1], &h.end[1]);
	ret = each_hidden(check_placed, &h);
	elf_close(&e);
	if (!ret)
		ret = unmap(h.start[0], h.end[0], why, size);
	if (!ret)
		ret = unmap(h.start[1], h.end[1], why, size);
	return ret;
}

/* --- the act-memory test (PROG --act-memory) ------------------------------ */

void rl_hide_say_maps(struct rl_case *c)
{
	char *maps = NULL;
	size_t cap = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	(void)c;
	if (f && getdelim(&maps, &cap, '\0', f) >= 0)
		rl_say_str("maps", maps);
	if (f)
		fclose(f);
	free(maps);
}

struct verdict {
	const struct elf *e;
	struct rl_case *c;
	const char *maps;
	int step, hidden;
};

/* Whether [A, B) meets a mapping of MAPS. */
static bool mapped(const char *maps, uintptr_t a, uintptr_t b)
{
	unsigned long lo, hi;
	const char *line;

	for (line = maps; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && a < hi && b > lo)
			return true;
	return false;
}

static int check_unmapped(const void *fn, int step, void *arg)
{
	struct verdict *v = arg;
	const Elf64_Sym *sym = symbol_at(v->e, fn);
	uintptr_t size = sym && sym->st_size ? sym->st_size : 1;

	if (step != 0 && step != v->step)
		return 0;
	v->hidden++;
	rl_expect(v->c, !mapped(v->maps, (uintptr_t)fn, (uintptr_t)fn + size),
		  "%s (hidden in step %d's acts) is in the memory of an act of step %d",
		  sym ? v->e->names + sym->st_name : "a function", step, v->step);
	return 0;
}

int rl_hide_check_maps(struct rl_case *c)
{
	/* The judge's objects, by one function of each. */
	static const char *const judge_name[] = { "tests/graded.c", "tests/case.c", "tests/res.c" };
	const void *judge[] = { (const void *)main, (const void *)rl_run_case,
				(const void *)rl_rdma_res };
	struct elf e = { 0 };
	struct verdict v = { .e = &e, .c = c, .maps = rl_said_str(c, "maps"), .step = c->g->step };
	uintptr_t start, end;
	char name[32];
	int k;

	if (!rl_expect(c, elf_open(&e) == 0, "cannot read /proc/self/exe"))
		return 0;
	for (k = 0; k < 3; k++)
		rl_expect(c, !mapped(v.maps, (uintptr_t)judge[k], (uintptr_t)judge[k] + 1),
			  "the judge's code (%s) is in the act's memory", judge_name[k]);
	for (k = 0; k < 2; k++) {
		snprintf(name, sizeof(name), "rl_hide_%d", k ? v.step : 0);
		if (section_range(&e, name, &start, &end))
			rl_expect(c, !mapped(v.maps, start, end), "section %s is in the act's memory",
				  name);
	}
	each_hidden(check_unmapped, &v);
	elf_close(&e);
	return v.hidden;
}
