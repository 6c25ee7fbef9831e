/* SPDX-License-Identifier: MIT */
/*
 * Knob steps of the feedback loop. Each tuned metric has one generator
 * knob that moves it most and in one direction (more of the knob, more
 * of the metric, or less for synth.hold_share), so every knob follows its
 * own one-dimensional secant search; the couplings between them (a longer body dilutes every rate)
 * are small and the next iteration corrects them.
 */
#include <math.h>
#include <string.h>

#include "core_int.h"
#include "model_int.h"
#include "synth_int.h"
#include "tune_int.h"

#include <ditto/model.h>

/* System calls per request (profile backend, where the original can be
 * profiled): the knob aims at the 1% while the loop runs, but
 * the loop may end with the metric within its own bound: one service's
 * runs spread by up to 4% (redis: how many requests each epoll_wait
 * gathers; srv_epoll's 1-3%). The report's row, an average of three runs
 * per side, is held to 1%. */
struct pair {
	const char *metric, *knob;
	double slope;	/* first guess of d(metric)/d(knob); 0: metric/knob */
	double step;	/* largest step of the knob beyond twice its size
			 * (0: a factor of 4) */
	double down;	/* first guess of the slope when the metric must
			 * fall, relative to the metric (0: as `slope`) */
	double unit;	/* the knob's size, at least, for the step limit
			 * close to the target (0: its value) */
	double bound;	/* the knob moves while its metric is off by more
			 * than this (0: the loop's bound) */
	double accept;	/* the loop may end with the metric off by this
			 * (0: the loop's bound) */
	int sign;	/* -1: more of the knob, less of the metric (0: more) */
};

/* Slopes: a random branch mispredicts half the time and about a third of
 * the body's branches are conditional; one more miss per 1000 body
 * instructions, at about 0.45 data references per instruction, is 0.0022
 * of D1 references and 0.0007 of all references (LL's denominator).
 * Diluting (a negative branch knob) acts on the rate through the body's
 * share of the branches: a unit took redis from 1.6 to 1.1 times the
 * original's rate and memcached from 1.5 to 1.3, so a first step assumes
 * a unit moves the rate by half of itself, and the secant takes over. */
static const struct pair pairs[] = {
	{ "insts_per_request", "synth.body_scale", 0, 0, 0, 0, 0, 0, 0 },
	/* In its place when no window held a whole request (tune_targets.c):
	 * CPU time is the body's plus the runtime's and the kernel's, so the
	 * first step (proportional) falls short and the secant takes over;
	 * one service's runs spread by several percent. */
	{ "cpu_ns_per_request", "synth.cpu_scale", 0, 0, 0, 0, 0, TUNE_CPU_TIME_BOUND, 0 },
	{ "branch_mispredict_rate", "synth.branch_bias", 0.08, 1, 0.5, 0.25, 0, 0, 0 },
	{ "d1_miss_rate", "synth.d1_mpki", 0.0022, 5, 0, 0.5, 0, 0, 0 },
	{ "ll_miss_rate", "synth.ll_mpki", 0.0007, 1, 0, 0.2, 0, 0, 0 },
	{ "i1_miss_rate", "synth.far_code_scale", 0, 0, 0, 0, 0, 0, 0 },
	{ "background_calls_per_request", "synth.background_rate", 0, 0, 0, 0, 0, 0, 0 },
	/* Its first step goes to a limit (no slope guess fits every
	 * service); then the secant. */
	/* Held responses go out together and their clients' next requests
	 * come together: fewer wake-ups, fewer calls per request. */
	{ "syscalls_per_request", "synth.hold_share", 0, 0, 0, 0, TUNE_CALLS_BOUND, 0, -1 },
};
#define NPAIRS (sizeof(pairs) / sizeof(pairs[0]))
_Static_assert(NPAIRS == TUNE_TRACKS, "one track per pair");

const char *const tune_metrics[] = { "insts_per_request", "cpu_ns_per_request",
				     "branch_mispredict_rate", "i1_miss_rate",
				     "d1_miss_rate", "ll_miss_rate",
				     "background_calls_per_request", "syscalls_per_request" };
const size_t tune_metric_count = sizeof(tune_metrics) / sizeof(tune_metrics[0]);

double metric_accept_bound(const char *metric, double bound)
{
	for (size_t i = 0; i < NPAIRS; i++)
		if (!strcmp(pairs[i].metric, metric) && pairs[i].accept > 0)
			return fmax(pairs[i].accept, bound);
	return bound;
}

double metric_error(const char *metric, double original, double clone)
{
	size_t n = strlen(metric);

	if (!strcmp(metric, "background_calls_per_request") && fabs(original) < CALLS_FLOOR)
		return fabs(clone - original) / CALLS_FLOOR;
	if (n > 5 && !strcmp(metric + n - 5, "_rate") && fabs(original) < RATE_FLOOR)
		return fabs(clone - original) / RATE_FLOOR;
	return model_rel_error(original, clone);
}

void tracks_init(struct track *t)
{
	for (size_t i = 0; i < NPAIRS; i++)
		t[i] = (struct track){ .metric = pairs[i].metric, .knob = pairs[i].knob };
}

const struct synth_knob *tune_knob_def(const char *name)
{
	for (size_t i = 0; i < synth_knob_count; i++)
		if (!strcmp(synth_knob_table[i].name, name))
			return &synth_knob_table[i];
	return NULL;
}

static void remember(struct track *t, double x, double y)
{
	tune_remember(t->x, t->y, &t->n, TRACK_POINTS, x, y);
}

static int sign_of(const struct pair *p)
{
	return p->sign < 0 ? -1 : 1;
}

/* Slope through the latest point and the latest one before it at another
 * knob value; 0 when there is none or it points the wrong way (sign). */
static double secant(const struct track *t, int sign)
{
	size_t last = t->n - 1;

	for (size_t i = last; i-- > 0;) {
		double dx = t->x[last] - t->x[i];

		if (fabs(dx) > 1e-9) {
			double s = (t->y[last] - t->y[i]) / dx;

			return isfinite(s) && s * sign > 0 ? s : 0;
		}
	}
	return 0;
}

/* The nearest points seen on each side of the goal among the last
 * BRACKET_POINTS: for a metric that grows with its knob, the largest knob
 * value below the goal and the smallest above it (the other way round for
 * one that falls). False unless both exist in that order. Older points were measured with the other knobs elsewhere
 * and may hold the bracket around a spot the target has left. */

static bool bracket(const struct track *t, double goal, int sign, double lo[2], double hi[2])
{
	bool has_lo = false, has_hi = false;

	for (size_t i = t->n > BRACKET_POINTS ? t->n - BRACKET_POINTS : 0; i < t->n; i++) {
		double sx = sign * t->x[i];

		if (t->y[i] < goal && (!has_lo || sx > sign * lo[0])) {
			lo[0] = t->x[i];
			lo[1] = t->y[i];
			has_lo = true;
		} else if (t->y[i] > goal && (!has_hi || sx < sign * hi[0])) {
			hi[0] = t->x[i];
			hi[1] = t->y[i];
			has_hi = true;
		}
	}
	return has_lo && has_hi && sign * lo[0] < sign * hi[0];
}

/* Inside a bracket: interpolate, kept off its ends so that a rugged
 * metric still shrinks it. Else a secant or first-guess step. */
static double next_value(const struct pair *p, const struct track *t, double x, double y,
			 double target)
{
	double err = metric_error(p->metric, target, y);
	const struct synth_knob *d = tune_knob_def(p->knob);
	int sign = sign_of(p);
	double slope = secant(t, sign), nx, size, lo[2] = { 0, 0 }, hi[2] = { 0, 0 };

	if (bracket(t, target, sign, lo, hi)) {
		double a = fmin(lo[0], hi[0]), w = fabs(hi[0] - lo[0]);

		nx = lo[0] + (target - lo[1]) * (hi[0] - lo[0]) / (hi[1] - lo[1]);
		return fmin(fmax(nx, a + 0.1 * w), a + 0.9 * w);
	}

	if (slope == 0 && p->down > 0 && target < y && x <= 0)
		slope = p->down * y;
	else if (slope == 0)
		slope = sign * (p->slope > 0 ? p->slope : x > 0 && y > 0 ? y / x : 1e-3);
	nx = x + (target - y) / slope;
	if (p->step > 0)	/* at most `step`, or twice the knob's size */
		nx = fmin(fmax(nx, x - fmax(p->step, 2 * fabs(x))), x + fmax(p->step, 2 * fabs(x)));
	else if (x > 0)
		nx = fmin(fmax(nx, x / 4), x * 4);
	/* Close to the target, a secant through points that other knobs
	 * also moved can point far away: move the knob by at most four
	 * times the metric's relative error of its size, or of its unit
	 * where it is near 0 (redis wants a d1_mpki of a few hundredths,
	 * where a limit of its own size took a step per 1% of the rate). */
	size = fmax(fabs(x), p->unit);
	if (size > 0 && err < 0.25)
		nx = fmin(fmax(nx, x - 4 * err * size), x + 4 * err * size);
	return d ? fmin(fmax(nx, d->min), d->max) : nx;
}

/*
 * Stall detection. A step counts as idle when the knob moved by a
 * noticeable part of its size or range and the metric by less than
 * NO_EFFECT relative to itself (rates taken relative to at least their
 * floor, as errors are): cachegrind repeats a single-threaded service's
 * rates to a fraction of that, and a step near the target still moves
 * its metric by about its error, above the bound. Other knobs moving at
 * the same time can only hide a stall, not fake one.
 */

static bool knob_moved(const struct synth_knob *d, double from, double to)
{
	double size = fabs(from);

	if (d)
		size = fmax(size, 0.01 * (d->max - d->min));
	return fabs(to - from) > fmax(KNOB_MOVED * size, 1e-9);
}

/* After remember(): whether the latest step was idle, kept in t->idle. */
static void observe(struct track *t, const struct synth_knob *d)
{
	double x0, y0;

	if (t->n < 2)
		return;
	x0 = t->x[t->n - 2];
	y0 = t->y[t->n - 2];
	if (!knob_moved(d, x0, t->x[t->n - 1]))
		return;
	if (metric_error(t->metric, y0, t->y[t->n - 1]) >= NO_EFFECT) {
		t->idle = 0;
		return;
	}
	if (!t->idle++)
		t->idle_from = x0;
}

/* The larger step after STALL_STEPS - 1 idle ones: the knob's limit on
 * the side the metric must go. */
static double limit_toward(const struct synth_knob *d, int sign, double y, double goal, double x)
{
	if (!d)
		return x;
	return (goal > y) == (sign > 0) ? d->max : d->min;
}

static void stall(struct track *t, double x)
{
	t->stalled = true;
	ditto_warn("tune: %s: knob %s had no effect over %u steps (%g to %g): no longer stepped",
		   t->metric, t->knob, t->idle, t->idle_from, x);
}

unsigned tracks_step(struct track *t, struct ditto_values *knobs, const struct ditto_metrics *target,
		     const struct ditto_metrics *clone, double bound)
{
	unsigned moved = 0;

	for (size_t i = 0; i < NPAIRS; i++) {
		const struct synth_knob *d = tune_knob_def(pairs[i].knob);
		double x = d ? d->dflt : 0, y, goal, nx;

		if (ditto_metrics_get(target, pairs[i].metric, &goal) ||
		    ditto_metrics_get(clone, pairs[i].metric, &y))
			continue;
		ditto_values_get(knobs, pairs[i].knob, &x);
		remember(&t[i], x, y);
		observe(&t[i], d);
		if (t[i].stalled ||
		    metric_error(pairs[i].metric, goal, y) <= (pairs[i].bound > 0 ? pairs[i].bound : bound))
			continue;
		if (t[i].idle >= STALL_STEPS) {
			stall(&t[i], x);
			continue;
		}
		nx = t[i].idle == STALL_STEPS - 1 ? limit_toward(d, sign_of(&pairs[i]), y, goal, x) :
		     next_value(&pairs[i], &t[i], x, y, goal);
		if (t[i].idle == STALL_STEPS - 1 && !knob_moved(d, x, nx)) {
			/* Already at the limit: no larger step is left. */
			stall(&t[i], x);
			continue;
		}
		if (fabs(nx - x) > 1e-12 && !ditto_values_set(knobs, pairs[i].knob, nx))
			moved++;
	}
	return moved;
}
