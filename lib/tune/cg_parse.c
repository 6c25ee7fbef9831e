/* SPDX-License-Identifier: MIT */
/*
 * Totals of a cachegrind output file. Only the "events:" line (the column
 * names) and the "summary:" line (the totals) matter to a measurement;
 * per-line data is skipped unread, so the format of those lines may vary.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "measure_int.h"

/* cachegrind writes 13 columns at most; others are tolerated up to this. */
#define CG_MAX_COLS 64
/* A cachegrind file of a big program is a few MiB. */
#define CG_MAX_BYTES (1u << 30)

static const char *const cg_names[CG_N] = {
	"Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw",
	"Bc", "Bcm", "Bi", "Bim",
};

struct cg_state {
	const char *name;
	size_t line;
	int col[CG_MAX_COLS];	/* column -> enum cg_event, or -1 */
	size_t ncols;
	bool summary;
	struct cg_totals *out;
};

static int bad(const struct cg_state *s, int err, const char *what)
{
	return ditto_err(err, "%s: line %zu: %s", s->name, s->line, what);
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Next space-separated word of [*p, end); false at the end. */
static bool word(const char **p, const char *end, const char **w, size_t *n)
{
	while (*p < end && blank(**p))
		(*p)++;
	if (*p == end)
		return false;
	*w = *p;
	while (*p < end && !blank(**p))
		(*p)++;
	*n = (size_t)(*p - *w);
	return true;
}

static int event_of(const char *w, size_t n)
{
	for (int i = 0; i < CG_N; i++)
		if (strlen(cg_names[i]) == n && memcmp(cg_names[i], w, n) == 0)
			return i;
	return -1;
}

static int parse_events(struct cg_state *s, const char *p, const char *end)
{
	const char *w;
	size_t n;

	if (s->ncols)
		return bad(s, -DITTO_ECORRUPT, "a second events: line");
	while (word(&p, end, &w, &n)) {
		int e = event_of(w, n);

		if (s->ncols == CG_MAX_COLS)
			return bad(s, -DITTO_ELIMIT, "more than 64 events");
		if (e >= 0 && (s->out->have & (1u << e)))
			return bad(s, -DITTO_ECORRUPT, "an event named twice");
		s->col[s->ncols++] = e;
		if (e >= 0)
			s->out->have |= 1u << e;
	}
	if (!s->ncols)
		return bad(s, -DITTO_ECORRUPT, "events: names no event");
	return 0;
}

static int parse_count(const struct cg_state *s, const char *w, size_t n, uint64_t *v)
{
	*v = 0;
	for (size_t i = 0; i < n; i++) {
		if (w[i] < '0' || w[i] > '9')
			return bad(s, -DITTO_ECORRUPT, "summary: a count is not a number");
		if (__builtin_mul_overflow(*v, 10, v) || add_overflows(*v, (uint64_t)(w[i] - '0'), v))
			return bad(s, -DITTO_ECORRUPT, "summary: a count overflows 64 bits");
	}
	return 0;
}

static int parse_summary(struct cg_state *s, const char *p, const char *end)
{
	const char *w;
	size_t n, col = 0;

	if (!s->ncols)
		return bad(s, -DITTO_ECORRUPT, "summary: before any events: line");
	if (s->summary)
		return bad(s, -DITTO_ECORRUPT, "a second summary: line");
	for (; word(&p, end, &w, &n); col++) {
		uint64_t v;
		int err;

		if (col == s->ncols)
			return bad(s, -DITTO_ECORRUPT, "summary: more counts than events");
		if ((err = parse_count(s, w, n, &v)))
			return err;
		if (s->col[col] >= 0)
			s->out->v[s->col[col]] = v;
	}
	if (col != s->ncols)
		return bad(s, -DITTO_ECORRUPT, "summary: fewer counts than events");
	s->summary = true;
	return 0;
}

static bool starts(const char *p, const char *end, const char *key)
{
	size_t n = strlen(key);

	return (size_t)(end - p) >= n && memcmp(p, key, n) == 0;
}

static int parse_line(struct cg_state *s, const char *p, const char *end)
{
	if (starts(p, end, "events:"))
		return parse_events(s, p + 7, end);
	if (starts(p, end, "summary:"))
		return parse_summary(s, p + 8, end);
	return 0;
}

int cg_parse(const char *text, size_t len, const char *name, struct cg_totals *out)
{
	struct cg_state s = { .name = name ? name : "cachegrind output", .out = out };
	const char *p = text, *end = text + len;
	int err;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;

		s.line++;
		if ((err = parse_line(&s, p, eol)))
			return err;
		p = nl ? nl + 1 : end;
	}
	if (!s.ncols)
		return ditto_err(-DITTO_ECORRUPT, "%s: no events: line (not a cachegrind output file?)",
				 s.name);
	if (!s.summary)
		return ditto_err(-DITTO_ECORRUPT,
				 "%s: no summary: line (was valgrind killed before it finished?)", s.name);
	return 0;
}

static int read_all(const char *path, const char *name, struct dbuf *b)
{
	FILE *f = fopen(path, "re");
	char chunk[65536];
	size_t n;
	int err = 0;

	if (!f)
		return ditto_err(-errno, "%s: %s", path, strerror(errno));
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0 && !err) {
		dbuf_put(b, chunk, n);
		if (b->oom)
			err = ditto_err(-ENOMEM, "%s: out of memory", name);
		else if (b->len > CG_MAX_BYTES)
			err = ditto_err(-DITTO_ELIMIT, "%s: larger than 1 GiB", name);
	}
	if (!err && ferror(f))
		err = ditto_err(-EIO, "%s: read error", path);
	fclose(f);
	return err;
}

int cg_parse_file(const char *path, struct cg_totals *out)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	struct dbuf b;
	int err;

	memset(out, 0, sizeof(*out));
	dbuf_init(&b);
	err = read_all(path, name, &b);
	if (!err)
		err = cg_parse(b.data ? b.data : "", b.len, name, out);
	dbuf_free(&b);
	return err;
}

int cg_totals_add(struct cg_totals *a, const struct cg_totals *b)
{
	struct cg_totals sum;

	if (!a->have) {
		*a = *b;
		return 0;
	}
	sum.have = a->have & b->have;
	for (int i = 0; i < CG_N; i++)
		if (add_overflows(a->v[i], b->v[i], &sum.v[i]))
			return ditto_err(-ERANGE, "cachegrind: the %s totals of the processes overflow",
					 cg_names[i]);
	*a = sum;
	return 0;
}
