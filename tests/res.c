/*
 * res.c: what the kernel's RDMA resource tracking says a process holds (its
 * PDs, CQs, QPs and MRs, with their states, keys and sizes), read with
 * iproute2's `rdma -j -d res show KIND` for a graded test's check
 * (tests/harness.h): the kernel, not the process that ran the student's
 * code, says what that code made. Its output is an array of flat objects;
 * this reads just that.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Skips blanks in *P. */
static void blanks(const char **p)
{
	while (isspace((unsigned char)**p))
		(*p)++;
}

/* Reads a string or a bare value (number, true, false, null) at *P into OUT. */
static int value(const char **p, char *out, size_t size)
{
	size_t n = 0;
	bool quoted = **p == '"';

	if (quoted)
		(*p)++;
	while (**p &&
	       (quoted ? **p != '"' : (**p != ',' && **p != '}' && !isspace((unsigned char)**p)))) {
		if (quoted && **p == '\\' && (*p)[1])
			(*p)++;
		if (n + 1 < size)
			out[n++] = **p;
		(*p)++;
	}
	out[n] = '\0';
	if (quoted) {
		if (**p != '"')
			return -1;
		(*p)++;
	}
	return 0;
}

/* Reads one flat object at *P into R. */
static int object(const char **p, struct rl_res *r)
{
	struct rl_res_member *m;

	r->n = 0;
	if (**p != '{')
		return -1;
	(*p)++;
	for (;;) {
		blanks(p);
		if (**p == '}') {
			(*p)++;
			return 0;
		}
		m = &r->m[r->n < RL_RES_MEMBERS ? r->n : RL_RES_MEMBERS - 1];
		if (**p != '"' || value(p, m->key, sizeof(m->key)))
			return -1;
		blanks(p);
		if (**p != ':')
			return -1;
		(*p)++;
		blanks(p);
		if (**p == '{' || **p == '[' || value(p, m->val, sizeof(m->val)))
			return -1; /* nothing nested in the objects this reads */
		if (r->n < RL_RES_MEMBERS)
			r->n++;
		blanks(p);
		if (**p == ',')
			(*p)++;
	}
}

/* Parses TEXT, an array of flat objects, into OUT (at most MAX): their number, or -1. */
int rl_res_parse(const char *text, struct rl_res *out, int max)
{
	const char *p = text;
	struct rl_res r;
	int n = 0;

	blanks(&p);
	if (*p != '[')
		return -1;
	p++;
	for (;;) {
		blanks(&p);
		if (*p == ']')
			return n;
		if (object(&p, &r))
			return -1;
		if (n < max)
			out[n] = r;
		n++;
		blanks(&p);
		if (*p == ',')
			p++;
	}
}

const char *rl_res_get(const struct rl_res *r, const char *key)
{
	int i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->m[i].key, key) == 0)
			return r->m[i].val;
	return NULL;
}

int rl_rdma_res(const char *kind, int pid, struct rl_res *out, int max)
{
	struct rl_res all[256];
	char cmd[128], *text = NULL;
	size_t cap = 0;
	int n, i, kept = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma -j -d res show %s 2>/dev/null", kind);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (getdelim(&text, &cap, '\0', f) < 0) {
		free(text);
		text = NULL;
	}
	pclose(f);
	n = text ? rl_res_parse(text, all, 256) : -1;
	free(text);
	if (n < 0)
		return -1;
	for (i = 0; i < n && i < 256; i++) {
		const char *owner = rl_res_get(&all[i], "pid");

		if (pid && (!owner || atoi(owner) != pid))
			continue;
		if (kept < max)
			out[kept] = all[i];
		kept++;
	}
	return kept;
}
