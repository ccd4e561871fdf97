/*
 * roster.c: the course's own files, in CSV. --make-tokens reads a roster
 * and prints each student's token beside the roster's other columns;
 * --verify-file checks a class's keys at once and prints one verdict a
 * line, which the class views read (docs/receiver.md, "Checking keys in a
 * batch"). Both skip blank lines and lines starting with '#', stop at the
 * first line they cannot read with one line naming it, and print nothing
 * then: their output is all or nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "receiver.h"

#define RCV_CSV_MAX_FIELDS 64
#define RCV_CSV_MAX_KEY 128 /* a longer "key" is not one: BAD */

/* The verdicts of --verify-file, and what its class views read. */
#define RCV_VERDICT_HEADER "id,verdict,detail"

/* What a reader needs besides its file: the secret, and the verdicts' note on it. */
struct rcv_csv_job {
	const uint8_t *secret;
	size_t secret_len;
	const char *kind; /* after each detail: " (self-study secret)" or "" */
};

/* One field of a CSV line: its raw text, quotes and spaces included. */
struct rcv_csv_field {
	const char *raw;
	size_t len;
};

/* A CSV file being read: where from, the line read last and its fields. */
struct rcv_csv {
	FILE *in;
	const char *name; /* for messages */
	char *line;
	size_t cap;
	int lineno;
	struct rcv_csv_field f[RCV_CSV_MAX_FIELDS];
	int nf;
};

/* Split S into C's fields at each comma outside double quotes; 0, or -EINVAL after one line. */
static int rcv_csv_split(struct rcv_csv *c, const char *s)
{
	const char *start = s;
	bool quoted = false;

	c->nf = 0;
	for (;; s++) {
		if (*s == '"')
			quoted = !quoted;
		if (*s && (quoted || *s != ','))
			continue;
		if (quoted) {
			rl_err("%s line %d: a quote that never closes (a field over two lines is "
			       "not supported)",
			       c->name, c->lineno);
			return -EINVAL;
		}
		if (c->nf == RCV_CSV_MAX_FIELDS) {
			rl_err("%s line %d: more than %d columns", c->name, c->lineno,
			       RCV_CSV_MAX_FIELDS);
			return -EINVAL;
		}
		c->f[c->nf++] = (struct rcv_csv_field){ start, (size_t)(s - start) };
		if (!*s)
			return 0;
		start = s + 1;
	}
}

/*
 * Read C's next line that holds data (not blank, not starting with '#')
 * and split it. A UTF-8 byte-order mark and the line end ("\n" or "\r\n")
 * are dropped. 1 if a line was read, 0 at the end, -errno after one line.
 */
static int rcv_csv_next(struct rcv_csv *c)
{
	ssize_t n;
	char *s;

	while ((n = getline(&c->line, &c->cap, c->in)) >= 0) {
		c->lineno++;
		while (n > 0 && (c->line[n - 1] == '\n' || c->line[n - 1] == '\r'))
			c->line[--n] = '\0';
		s = c->line;
		if (c->lineno == 1 && !strncmp(s, "\xef\xbb\xbf", 3))
			s += 3;
		s += strspn(s, " \t");
		if (!*s || *s == '#')
			continue;
		return rcv_csv_split(c, s) ? -EINVAL : 1;
	}
	if (ferror(c->in))
		return rl_fail("read", errno, "%s after line %d", c->name, c->lineno);
	return 0;
}

/*
 * The value of field F into OUT (SIZE bytes): spaces and tabs around it
 * dropped, then its quotes if it is quoted ("" inside stands for one ").
 * Its length; -EMSGSIZE if it does not fit, -EINVAL if a quote is misplaced.
 */
static int rcv_csv_value(const struct rcv_csv_field *f, char *out, size_t size)
{
	const char *s = f->raw, *end = f->raw + f->len;
	bool quoted;
	size_t n = 0;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	quoted = s < end && *s == '"';
	if (quoted && (end - s < 2 || end[-1] != '"'))
		return -EINVAL;
	if (quoted) {
		s++;
		end--;
	}
	for (; s < end; s++) {
		if (quoted && *s == '"' && (++s == end || *s != '"'))
			return -EINVAL;
		if (n + 1 >= size)
			return -EMSGSIZE;
		out[n++] = *s;
	}
	out[n] = '\0';
	return (int)n;
}

/* Write S as one CSV field: in quotes, each quote doubled, when it holds a comma or a quote. */
static void rcv_csv_put(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

/*
 * The student ID in field COL of C's line into ID; 0, or -EINVAL after one
 * line. MAX is the longest ID allowed (RCV_CLASS_MAX_ID for a roster, as a
 * token must fit beside it).
 */
static int rcv_csv_id(const struct rcv_csv *c, int col, int max, char id[RL_PROTO_MAX_ID + 1])
{
	int n = col < c->nf ? rcv_csv_value(&c->f[col], id, RL_PROTO_MAX_ID + 1) : -ENOENT;

	if (n == -ENOENT || n == 0)
		rl_err("%s line %d: no student ID (column %d is empty or missing)", c->name,
		       c->lineno, col + 1);
	else if (n == -EINVAL)
		rl_err("%s line %d: a misplaced quote in column %d", c->name, c->lineno, col + 1);
	else if (n < 0 || n > max)
		rl_err("%s line %d: student ID longer than %d characters%s", c->name, c->lineno,
		       max,
		       max < RL_PROTO_MAX_ID ? " (with ':' and its token it must fit in 64)" : "");
	else if (!rl_proto_id_valid(id, (size_t)n))
		rl_err("%s line %d: student ID '%s' is not 1 to %d characters from '!' to '~'",
		       c->name, c->lineno, id, max);
	else
		return 0;
	return -EINVAL;
}

/* The column of C's line whose value is NAME (any case), or -1. */
static int rcv_csv_column(const struct rcv_csv *c, const char *name)
{
	char v[32];
	int i;

	for (i = 0; i < c->nf; i++)
		if (rcv_csv_value(&c->f[i], v, sizeof(v)) >= 0 && !strcasecmp(v, name))
			return i;
	return -1;
}

/* The raw fields of C's line but columns SKIP1 and SKIP2, each after a comma, then the line end. */
static void rcv_csv_put_rest(FILE *out, const struct rcv_csv *c, int skip1, int skip2)
{
	int i;

	for (i = 0; i < c->nf; i++)
		if (i != skip1 && i != skip2)
			fprintf(out, ",%.*s", (int)c->f[i].len, c->f[i].raw);
	fputc('\n', out);
}

/* One roster line: its ID, its token, its other columns. */
static int rcv_roster_row(const struct rcv_csv *c, FILE *out, int idcol, int tokcol,
			  const struct rcv_csv_job *job)
{
	char id[RL_PROTO_MAX_ID + 1], token[RCV_TOKEN_LEN + 1];

	if (rcv_csv_id(c, idcol, RCV_CLASS_MAX_ID, id))
		return -EINVAL;
	if (rcv_token_for(job->secret, job->secret_len, id, token))
		return -EIO;
	rcv_csv_put(out, id);
	fprintf(out, ",%s", token);
	rcv_csv_put_rest(out, c, idcol, tokcol);
	return 0;
}

/* --make-tokens into OUT; 0, or -errno after one line. */
static int rcv_roster_tokens(struct rcv_csv *c, FILE *out, const struct rcv_csv_job *job)
{
	int idcol, tokcol, ret = rcv_csv_next(c);

	if (ret <= 0) {
		if (ret == 0)
			rl_err("%s: no header line: a roster starts with one, naming a column 'id'",
			       c->name);
		return -EINVAL;
	}
	idcol = rcv_csv_column(c, "id");
	if (idcol < 0) {
		rl_err("%s line %d: no column 'id' in the header (a roster starts with a header "
		       "line naming its columns, one of them 'id')",
		       c->name, c->lineno);
		return -EINVAL;
	}
	tokcol = rcv_csv_column(c, "token"); /* a roster made before: its tokens are made anew */
	fputs("id,token", out);
	rcv_csv_put_rest(out, c, idcol, tokcol);
	while ((ret = rcv_csv_next(c)) > 0)
		if (rcv_roster_row(c, out, idcol, tokcol, job))
			return -EINVAL;
	return ret;
}

/* One "id,key" line: its verdict row into OUT; 0 if OK, 1 if BAD or MISSING, -EINVAL. */
static int rcv_verify_row(const struct rcv_csv *c, FILE *out, const struct rcv_csv_job *job)
{
	char id[RL_PROTO_MAX_ID + 1], key[RCV_CSV_MAX_KEY];
	const char *verdict = "BAD", *detail = "not the key of this ID";
	int n;

	if (c->nf != 2) {
		rl_err("%s line %d: %d fields: each line is id,key", c->name, c->lineno, c->nf);
		return -EINVAL;
	}
	if (rcv_csv_id(c, 0, RL_PROTO_MAX_ID, id))
		return -EINVAL;
	n = rcv_csv_value(&c->f[1], key, sizeof(key));
	if (n == -EINVAL) {
		rl_err("%s line %d: a misplaced quote in the key", c->name, c->lineno);
		return -EINVAL;
	}
	if (n == 0) {
		verdict = "MISSING";
		detail = "no key given";
	} else if (n > 0 && rcv_key_matches(job->secret, job->secret_len, id, key)) {
		verdict = "OK";
		detail = "the key of this ID";
	}
	rcv_csv_put(out, id);
	fprintf(out, ",%s,%s%s\n", verdict, detail, job->kind);
	return strcmp(verdict, "OK") != 0;
}

/* --verify-file into OUT; 0 if every key is OK, 1 if not, -errno after one line. */
static int rcv_verify_lines(struct rcv_csv *c, FILE *out, const struct rcv_csv_job *job)
{
	char first[8];
	int ret, row, bad = 0, rows = 0;

	fputs(RCV_VERDICT_HEADER "\n", out);
	while ((ret = rcv_csv_next(c)) > 0) {
		/* A header: the first line, when its first field is "id". */
		if (rows++ == 0 && rcv_csv_value(&c->f[0], first, sizeof(first)) >= 0 &&
		    !strcasecmp(first, "id"))
			continue;
		row = rcv_verify_row(c, out, job);
		if (row < 0)
			return row;
		bad += row;
	}
	return ret < 0 ? ret : bad > 0;
}

/*
 * Run READ over IN (named NAME) for JOB, its output into memory; copy that
 * to OUT only if READ succeeded. READ's status, or 2 if it failed.
 */
static int rcv_csv_run(FILE *in, const char *name, FILE *out,
		       int (*read)(struct rcv_csv *, FILE *, const struct rcv_csv_job *),
		       const struct rcv_csv_job *job)
{
	struct rcv_csv c = { .in = in, .name = name };
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	int ret;

	if (!mem) {
		rl_fail("open_memstream", errno, "for the output of %s", name);
		return 2;
	}
	ret = read(&c, mem, job);
	fclose(mem);
	if (ret >= 0 && fwrite(text, 1, len, out) != len)
		ret = rl_fail("write", errno, "the output of %s", name);
	free(text);
	free(c.line);
	return ret < 0 ? 2 : ret;
}

int rcv_make_tokens(FILE *in, const char *name, FILE *out, const uint8_t *secret, size_t secret_len)
{
	struct rcv_csv_job job = { secret, secret_len, "" };

	return rcv_csv_run(in, name, out, rcv_roster_tokens, &job);
}

int rcv_verify_file(FILE *in, const char *name, FILE *out, const uint8_t *secret, size_t secret_len,
		    bool self_study)
{
	struct rcv_csv_job job = { secret, secret_len, self_study ? " (self-study secret)" : "" };

	return rcv_csv_run(in, name, out, rcv_verify_lines, &job);
}
