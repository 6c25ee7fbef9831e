/* SPDX-License-Identifier: MIT */
/*
 * Why a tune did not converge: per tuned metric, whether its knob had no
 * effect, is at its limit or was still moving, and the report's one-line
 * verdict. A loop that ends out of bound says which metric and why, so a
 * caller (or the quick start) does not take a bad clone for a good one.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "synth_int.h"
#include "tune_int.h"

#include <ditto/model.h>

int report_stall(struct ditto_tune_report *r, const char *metric, const char *knob,
		 enum ditto_tune_stall_kind kind, unsigned steps, const char *text)
{
	struct tune_stall *p = realloc(r->stalls, (r->nstalls + 1) * sizeof(*p));

	if (!p)
		return ditto_err(-ENOMEM, "tune: out of memory");
	r->stalls = p;
	p = &r->stalls[r->nstalls];
	*p = (struct tune_stall){ strdup(metric), strdup(knob), strdup(text), kind, steps };
	if (!p->metric || !p->knob || !p->text) {
		free(p->metric);
		free(p->knob);
		free(p->text);
		return ditto_err(-ENOMEM, "tune: out of memory");
	}
	r->nstalls++;
	return 0;
}

static bool at_limit(const struct synth_knob *d, double x, double y, double goal)
{
	return d && fabs(x - (goal > y ? d->max : d->min)) <= 1e-9 * fmax(1, fabs(x));
}

static int diagnose_one(const struct track *t, const struct ditto_values *knobs,
			const struct ditto_metrics *target, const struct ditto_metrics *best,
			double bound, struct ditto_tune_report *r)
{
	const struct synth_knob *d = tune_knob_def(t->knob);
	double goal, y, x = d ? d->dflt : 0;
	char text[256];

	if (ditto_metrics_get(target, t->metric, &goal) || ditto_metrics_get(best, t->metric, &y))
		return 0;
	ditto_values_get(knobs, t->knob, &x);
	if (t->stalled) {
		snprintf(text, sizeof(text), "knob %s had no effect over %u steps (%g to %g)",
			 t->knob, t->idle, t->idle_from, x);
		return report_stall(r, t->metric, t->knob, DITTO_TUNE_NO_EFFECT, t->idle, text);
	}
	if (metric_error(t->metric, goal, y) <= metric_accept_bound(t->metric, bound))
		return 0;
	if (at_limit(d, x, y, goal)) {
		snprintf(text, sizeof(text), "knob %s at its limit (%g)", t->knob, x);
		return report_stall(r, t->metric, t->knob, DITTO_TUNE_AT_LIMIT, 0, text);
	}
	snprintf(text, sizeof(text), "knob %s still moving (at %g) when the loop ended", t->knob, x);
	return report_stall(r, t->metric, t->knob, DITTO_TUNE_UNFINISHED, 0, text);
}

int tracks_diagnose(const struct track *t, const struct ditto_values *knobs,
		    const struct ditto_metrics *target, const struct ditto_metrics *best,
		    double bound, struct ditto_tune_report *r)
{
	int err = 0;

	for (size_t i = 0; !err && i < TUNE_TRACKS; i++)
		err = diagnose_one(&t[i], knobs, target, best, bound, r);
	return err;
}

/* A row the graph tuner held (tune_graph.c): a tier's, or the graph's. */
static bool graph_row(const char *metric)
{
	return !strncmp(metric, TUNE_GRAPH_METRIC, strlen(TUNE_GRAPH_METRIC)) ||
	       !strncmp(metric, TUNE_GRAPH_BUSY_METRIC, strlen(TUNE_GRAPH_BUSY_METRIC)) ||
	       !strncmp(metric, TUNE_GRAPH_IDLE_METRIC, strlen(TUNE_GRAPH_IDLE_METRIC)) ||
	       !strcmp(metric, TUNE_GRAPH_IDLE_P50_METRIC) || !strcmp(metric, TUNE_GRAPH_P99_METRIC);
}

static bool tuned(const char *metric)
{
	if (graph_row(metric))
		return true;
	for (size_t i = 0; i < tune_metric_count; i++)
		if (!strcmp(tune_metrics[i], metric))
			return true;
	return false;
}

static const struct tune_stall *stall_of(const struct ditto_tune_report *r, const char *metric)
{
	for (size_t i = 0; i < r->nstalls; i++)
		if (!strcmp(r->stalls[i].metric, metric))
			return &r->stalls[i];
	return NULL;
}

/* A tuned row's bound as the loop held it: a graph row's is the one its
 * row carries (the loop's, or for the idle load's rows and
 * latency_p99_ns the original's spread when wider); one service's, the loop's accept bound (its row
 * may carry a checked bound the loop did not hold it to). */
static double loop_bound(const struct ditto_tune_report *r, const struct tune_row *row)
{
	return graph_row(row->metric) ? row->bound : metric_accept_bound(row->metric, r->bound);
}

/*
 * The row furthest out of its bound, that bound, and how many rows are
 * out of theirs. loop: the tuned rows against the bound the loop ends on
 * (the verdict agrees with `converged`); else every row against the
 * bound the report shows for it (a checked row may hold a tuned metric
 * tighter than the loop did: syscalls per request at 1% or the
 * original's own spread; the latency rows are checked only).
 */
static const struct tune_row *worst_row(const struct ditto_tune_report *r, bool loop,
					double *bound, unsigned *out)
{
	const struct tune_row *w = NULL;

	*out = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		const struct tune_row *row = &r->rows[i];
		double b = loop && r->bound > 0 ? loop_bound(r, row) : row->bound;

		if ((loop && !tuned(row->metric)) || !(b > 0) || !(row->error > b))
			continue;
		(*out)++;
		if (!w || row->error / b > w->error / *bound) {
			w = row;
			*bound = b;
		}
	}
	return w;
}

static void converged_text(struct dbuf *b, const struct ditto_tune_report *r)
{
	unsigned out;
	double bound = 0;
	const struct tune_row *w = worst_row(r, false, &bound, &out);

	dbuf_printf(b, "converged in %u iteration%s; every tuned metric within bounds",
		    r->iterations, r->iterations == 1 ? "" : "s");
	if (w)
		dbuf_printf(b, ", but %u row%s of the report out of %s own: %s %.2f%% off "
			    "(bound %.2f%%)", out, out == 1 ? "" : "s", out == 1 ? "its" : "their",
			    w->metric, 100 * w->error, 100 * bound);
}

/*
 * A loop that ended out of bound whose report, measured again, has every
 * tuned row in: the metric the loop ended on is named from its stall (out
 * of bound at the best iteration, with its knob's state), and the report's
 * rows are said to be in, so the verdict neither names nothing nor
 * contradicts its table.
 */
static void not_converged_rows_in(struct dbuf *b, const struct ditto_tune_report *r)
{
	const struct tune_stall *st = r->nstalls ? &r->stalls[0] : NULL;

	if (st)
		dbuf_printf(b, ": %s out of bound at the best iteration (%s)", st->metric,
			    st->text);
	dbuf_printf(b, "%severy tuned row of the report within bound when measured again",
		    st ? "; " : ": ");
}

int report_verdict(struct ditto_tune_report *r)
{
	const char *s = r->iterations == 1 ? "" : "s";
	struct dbuf b;
	unsigned out;
	double bound = 0;
	const struct tune_row *w = worst_row(r, true, &bound, &out);
	const struct tune_stall *st = w ? stall_of(r, w->metric) : NULL;

	dbuf_init(&b);
	if (r->converged) {
		converged_text(&b, r);
	} else {
		dbuf_printf(&b, "NOT converged after %u iteration%s", r->iterations, s);
		if (w)
			dbuf_printf(&b, ": %s %.2f%% off (bound %.2f%%)%s%s%s", w->metric,
				    100 * w->error, 100 * bound, st ? " (" : "",
				    st ? st->text : "", st ? ")" : "");
		else
			not_converged_rows_in(&b, r);
		if (out > 1)
			dbuf_printf(&b, "; %u tuned metrics out of bound", out);
	}
	if (b.oom) {
		dbuf_free(&b);
		return ditto_err(-ENOMEM, "tune: out of memory");
	}
	free(r->verdict);
	r->verdict = dbuf_steal(&b);
	return 0;
}

DITTO_API size_t ditto_tune_report_stall_count(const struct ditto_tune_report *r)
{
	return r ? r->nstalls : 0;
}

DITTO_API int ditto_tune_report_stall(const struct ditto_tune_report *r, size_t i,
				      const char **metric, const char **knob,
				      enum ditto_tune_stall_kind *kind, unsigned *steps,
				      const char **text)
{
	if (!r || i >= r->nstalls)
		return -DITTO_ENOTFOUND;
	if (metric)
		*metric = r->stalls[i].metric;
	if (knob)
		*knob = r->stalls[i].knob;
	if (kind)
		*kind = r->stalls[i].kind;
	if (steps)
		*steps = r->stalls[i].steps;
	if (text)
		*text = r->stalls[i].text;
	return 0;
}

DITTO_API const char *ditto_tune_report_verdict(const struct ditto_tune_report *r)
{
	if (!r)
		return NULL;
	return r->verdict ? r->verdict : r->converged ? "converged" : "NOT converged";
}
