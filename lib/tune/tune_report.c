/* SPDX-License-Identifier: MIT */
/* The tune report: rows of original vs clone, latency curves, JSON. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "tune_int.h"

int report_row(struct ditto_tune_report *r, const char *metric, double original, double clone,
	       double bound)
{
	return report_row_error(r, metric, original, clone, metric_error(metric, original, clone),
				bound);
}

int report_row_error(struct ditto_tune_report *r, const char *metric, double original,
		     double clone, double error, double bound)
{
	struct tune_row *row;

	if (r->nrows == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		struct tune_row *p = realloc(r->rows, cap * sizeof(*p));

		if (!p)
			return ditto_err(-ENOMEM, "tune: out of memory");
		r->rows = p;
		r->cap = cap;
	}
	row = &r->rows[r->nrows];
	if (!(row->metric = strdup(metric)))
		return ditto_err(-ENOMEM, "tune: out of memory");
	row->original = original;
	row->clone = clone;
	row->error = error;
	row->bound = bound;
	r->nrows++;
	return 0;
}

DITTO_API void ditto_tune_report_free(struct ditto_tune_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nrows; i++)
		free(r->rows[i].metric);
	free(r->rows);
	for (size_t i = 0; i < r->nstalls; i++) {
		free(r->stalls[i].metric);
		free(r->stalls[i].knob);
		free(r->stalls[i].text);
	}
	free(r->stalls);
	free(r->verdict);
	free(r);
}

DITTO_API unsigned ditto_tune_report_iterations(const struct ditto_tune_report *r)
{
	return r ? r->iterations : 0;
}

DITTO_API bool ditto_tune_report_converged(const struct ditto_tune_report *r)
{
	return r && r->converged;
}

DITTO_API size_t ditto_tune_report_count(const struct ditto_tune_report *r)
{
	return r ? r->nrows : 0;
}

DITTO_API int ditto_tune_report_row(const struct ditto_tune_report *r, size_t i, const char **metric,
				    double *original, double *clone, double *error, double *bound)
{
	if (!r || i >= r->nrows)
		return -DITTO_ENOTFOUND;
	if (metric)
		*metric = r->rows[i].metric;
	if (original)
		*original = r->rows[i].original;
	if (clone)
		*clone = r->rows[i].clone;
	if (error)
		*error = r->rows[i].error;
	if (bound)
		*bound = r->rows[i].bound;
	return 0;
}

/* JSON has no infinities: a non-finite figure is null. */
static void num(struct dbuf *b, const char *key, double v, const char *sep)
{
	if (isfinite(v))
		dbuf_printf(b, "\"%s\":%.17g%s", key, v, sep);
	else
		dbuf_printf(b, "\"%s\":null%s", key, sep);
}

static void curve_json(struct dbuf *b, const struct ditto_tune_report *r, int side)
{
	dbuf_printf(b, "\"%s\":[", side ? "clone" : "original");
	for (size_t i = 0; i < r->ncurve[side]; i++) {
		const struct tune_point *p = &r->curve[side][i];

		dbuf_puts(b, i ? ",{" : "{");
		num(b, "qps", p->qps, ",");
		num(b, "achieved_qps", p->achieved, ",");
		num(b, "p50_ns", p->p50, ",");
		num(b, "p90_ns", p->p90, ",");
		num(b, "p99_ns", p->p99, ",");
		num(b, "p999_ns", p->p999, ",");
		num(b, "max_ns", p->max, "}");
	}
	dbuf_puts(b, "]");
}

/* Strings we write (verdicts, stall reasons) hold no control
 * characters; quotes and backslashes are escaped all the same. */
static void json_string(struct dbuf *b, const char *s)
{
	dbuf_puts(b, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			dbuf_printf(b, "\\%c", *s);
		else if ((unsigned char)*s >= 0x20)
			dbuf_printf(b, "%c", *s);
	}
	dbuf_puts(b, "\"");
}

static const char *const stall_kinds[] = {
	[DITTO_TUNE_NO_EFFECT] = "no_effect",
	[DITTO_TUNE_AT_LIMIT] = "at_limit",
	[DITTO_TUNE_UNFINISHED] = "unfinished",
};

static void stalls_json(struct dbuf *b, const struct ditto_tune_report *r)
{
	for (size_t i = 0; i < r->nstalls; i++) {
		const struct tune_stall *s = &r->stalls[i];

		dbuf_printf(b, "%s{\"metric\":\"%s\",\"knob\":\"%s\",\"kind\":\"%s\",\"steps\":%u,"
			    "\"text\":", i ? "," : "", s->metric, s->knob, stall_kinds[s->kind], s->steps);
		json_string(b, s->text);
		dbuf_puts(b, "}");
	}
}

DITTO_API int ditto_tune_report_to_json(const struct ditto_tune_report *r, char **out)
{
	struct dbuf b;

	if (!r || !out)
		return ditto_err(-EINVAL, "tune: a report and an out pointer are needed");
	dbuf_init(&b);
	dbuf_printf(&b, "{\"converged\":%s,\"iterations\":%u,\"verdict\":",
		    r->converged ? "true" : "false", r->iterations);
	json_string(&b, ditto_tune_report_verdict(r));
	dbuf_puts(&b, ",\"rows\":[");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct tune_row *row = &r->rows[i];

		dbuf_printf(&b, "%s{\"metric\":\"%s\",", i ? "," : "", row->metric);
		num(&b, "original", row->original, ",");
		num(&b, "clone", row->clone, ",");
		num(&b, "error", row->error, ",");
		num(&b, "bound", row->bound, "}");
	}
	dbuf_puts(&b, "],\"stalls\":[");
	stalls_json(&b, r);
	dbuf_puts(&b, "],\"latency\":{");
	curve_json(&b, r, 0);
	dbuf_puts(&b, ",");
	curve_json(&b, r, 1);
	dbuf_puts(&b, "}}");
	if (b.oom) {
		dbuf_free(&b);
		return ditto_err(-ENOMEM, "tune: out of memory");
	}
	*out = dbuf_steal(&b);
	return 0;
}
