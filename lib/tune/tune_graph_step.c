/* SPDX-License-Identifier: MIT */
/*
 * The graph tuner's step of one tier's synth.cpu_scale, from the
 * (knob, CPU per request) points measured so far.
 */
#include <math.h>

#include "tune_graph_int.h"
#include "tune_int.h"

/*
 * A tier's CPU per request is about a + b * knob: a the runtime's own
 * work (reads, writes, calls to children), b the body's per unit, and a
 * run's noise on top (several percent on a small host). The line is
 * fitted by least squares (two close points alone give a slope that is
 * mostly noise) through the points near the target (within a factor of
 * NEAR of it) when their knobs span a factor of SPAN or more, else
 * through every point so far: a point far away, as the untuned one is,
 * was measured with the other tiers' knobs elsewhere too, and the line
 * moves with them (the tiers share two cores); near the target the local
 * slope is the one that matters. The knob goes where the line meets the
 * target. Since a >= 0, the proportional step (a = 0) is the least the
 * knob must grow when the tier is short of its target, and the most it
 * may shrink to when it is over: the fit is held to that side of it, to
 * a factor of 64 up and 8 down a step, and to NEAR squared from a point
 * near the target (a noisy local slope must not throw the knob far).
 * With one point the proportional step is taken; when the fit's slope
 * is not positive, the last move was lost in the noise (a tier whose
 * runtime is most of its CPU, as a slow tier's is with the default
 * body), and the step is the proportional one squared.
 */
#define NEAR 1.5
#define SPAN 1.5	/* the least spread of the near knobs for a local fit */
static bool near(const struct gtier *t, size_t i)
{
	return t->y[i] >= t->target / NEAR && t->y[i] <= t->target * NEAR;
}

static bool fit(const struct gtier *t, double *a, double *b)
{
	double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, d, lo = HUGE_VAL, hi = 0;
	bool local;

	for (size_t i = 0; i < t->points; i++) {
		if (near(t, i)) {
			lo = fmin(lo, t->x[i]);
			hi = fmax(hi, t->x[i]);
		}
	}
	local = hi >= lo * SPAN;
	for (size_t i = 0; i < t->points; i++) {
		if (local && !near(t, i))
			continue;
		n++;
		sx += t->x[i];
		sy += t->y[i];
		sxx += t->x[i] * t->x[i];
		sxy += t->x[i] * t->y[i];
	}
	d = n * sxx - sx * sx;
	if (n < 2 || d <= 1e-12 * n * sxx)
		return false;
	*b = (n * sxy - sx * sy) / d;
	*a = (sy - *b * sx) / n;
	return *b > 0;
}

void gtier_step(struct gtier *t, double min, double max)
{
	double x = t->knob, y = t->measured, prop, nx, a, b;

	tune_remember(t->x, t->y, &t->points, GTIER_POINTS, x, y);
	prop = y > 0 ? x * t->target / y : x * 8;
	nx = prop;
	if (t->points >= 2 && y > 0) {
		if (fit(t, &a, &b)) {
			nx = (t->target - a) / b;
			nx = y < t->target ? fmax(nx, prop) : fmin(nx, prop);
		} else {
			nx = x * pow(t->target / y, 2);
		}
		nx = fmin(fmax(nx, x / 8), x * 64);
		if (near(t, t->points - 1))
			nx = fmin(fmax(nx, x / (NEAR * NEAR)), x * NEAR * NEAR);
	}
	nx = fmin(fmax(nx, min), max);
	t->at_limit = nx == x && (nx == min || nx == max);
	t->limit = nx;
	t->knob = nx;
}

/*
 * A tier's synth.wake_share moves its body from per request to per
 * wake-up of its event loop: under the busy load, where a wake-up
 * begins several requests, its CPU per request falls; under the base
 * load (about one request per wake-up) it stays. The step works on the
 * ratio busy / base, which the tier's cpu_scale barely moves: about
 * r0 - k * share. k is the secant of the last two points when they are
 * apart and it is positive (else the move was lost in the noise), else
 * WAKE_SLOPE: a share of 1 took 20-45% off the busy CPU of the traced
 * shop's node tiers at 8 connections (docs/graph.md). A step is at most
 * WAKE_STEP_MAX.
 */
#define WAKE_SLOPE 0.3
#define WAKE_STEP_MAX 0.5

void gtier_wake_step(struct gtier *t)
{
	double r, want, k = WAKE_SLOPE, nx;

	if (!(t->measured > 0) || !(t->target > 0) || !(t->busy_measured > 0))
		return;
	r = t->busy_measured / t->measured;
	want = t->busy_target / t->target;
	if (t->wake_stepped && fabs(t->wake - t->wake_x) > 0.02) {
		double secant = (t->wake_y - r) / (t->wake - t->wake_x);

		if (secant > 0.05)
			k = secant;
	}
	nx = t->wake + fmin(fmax((r - want) / k, -WAKE_STEP_MAX), WAKE_STEP_MAX);
	nx = fmin(fmax(nx, 0), 1);
	t->wake_x = t->wake;
	t->wake_y = r;
	t->wake_stepped = true;
	t->wake_at_limit = nx == t->wake && (nx == 0 || nx == 1);
	t->wake_limit = nx;
	t->wake = nx;
}

/*
 * A tier's synth.footprint_kib is data its clone walks per request, as
 * a chain of dependent loads: cheap while the lines stay cached (the
 * base load, requests back to back), dear when the tier sat idle long
 * enough to lose them (the idle load). The step works on the difference
 * idle - base, what a request costs more after idle time: the tier's
 * cpu_scale moves both alike (a body in registers pays nothing for
 * idle time), the footprint about d0 + k * footprint. k is the secant
 * of the last two points when they are apart and it is positive, else
 * FOOT_SLOPE, below what this kind of host measured: a chain of 64 KiB
 * to 4 MiB cost 1.3-1.8 us more per KiB 30 ms after its last walk than
 * 1 ms after it (bench/idle_chase.c, docs/graph.md). A step at most
 * quadruples the footprint (or adds FOOT_FIRST_KIB to none) or takes
 * three quarters off it: one noisy run must not take it all. Only a
 * step down reaches 0; a step up is at least FOOT_MIN_KIB.
 */
#define FOOT_SLOPE 1000.0	/* ns per KiB */
#define FOOT_FIRST_KIB 256
#define FOOT_MIN_KIB 16

static double foot_next(const struct gtier *t, double d, double want)
{
	double k = FOOT_SLOPE, nx;

	if (t->foot_stepped && fabs(t->foot - t->foot_x) >= FOOT_MIN_KIB) {
		double secant = (d - t->foot_y) / (t->foot - t->foot_x);

		if (secant > FOOT_SLOPE / 10)
			k = secant;
	}
	nx = t->foot + (want - d) / k;
	nx = fmin(nx, t->foot > 0 ? 4 * t->foot : FOOT_FIRST_KIB);
	nx = fmax(nx, t->foot / 4);
	if (want > d)
		return fmin(fmax(round(nx), FOOT_MIN_KIB), FOOT_MAX_KIB);
	return nx < FOOT_MIN_KIB ? 0 : round(nx);
}

void gtier_foot_step(struct gtier *t)
{
	double d, want, nx;

	if (!(t->measured > 0) || !(t->target > 0) || !(t->idle_measured > 0))
		return;
	d = t->idle_measured - t->measured;
	want = t->idle_target - t->target;
	nx = foot_next(t, d, want);
	t->foot_x = t->foot;
	t->foot_y = d;
	t->foot_stepped = true;
	t->foot_at_limit = nx == t->foot && (nx == 0 || nx == FOOT_MAX_KIB);
	t->foot_limit = nx;
	t->foot = nx;
}

/*
 * A graph-wide knob moves the front's latency about y0 + sign * k * knob:
 * k the secant of the last two points when their knobs are more than
 * 0.02 apart and it is above a twentieth of k0 (a smaller one is noise),
 * else k0, about what the knob moves per unit. A step is at most
 * step_max: one noisy latency must not swing every tier at once.
 */
static bool wide_step(struct gwide *s, double y, double k0, double sign, double step_max,
		      double hi)
{
	double k = k0, nx;

	s->held = !(y > 0) || !(s->target > 0) || !(k0 > 0);
	if (s->held)
		return false;
	if (s->stepped && fabs(s->knob - s->x) > 0.02) {
		double secant = sign * (y - s->y) / (s->knob - s->x);

		if (secant > k0 / 20)
			k = secant;
	}
	nx = s->knob + sign * fmin(fmax((s->target - y) / k, -step_max), step_max);
	nx = fmin(fmax(nx, 0), hi);
	s->x = s->knob;
	s->y = y;
	s->stepped = true;
	s->at_limit = nx == s->knob && (nx == 0 || nx == hi);
	s->limit = nx;
	s->knob = nx;
	return true;
}

/*
 * The after share moves the footprints' walks off the request's path:
 * the p50 falls by at most walk_ns (the walks' whole cost, tiers in
 * series) from a share of 0 to 1.
 */
#define SHARE_STEP_MAX 0.5

bool gshare_step(struct gwide *s, double walk_ns)
{
	return wide_step(s, s->measured, walk_ns, -1, SHARE_STEP_MAX, 1);
}

/*
 * The body spread draws each request's body length times a lognormal
 * factor of mean 1 and that coefficient of variation: the factor's p99
 * is 1.7 at a spread of 0.25, 4.9 at 1 and 8.6 at 2, 3.7-3.9 more per
 * unit of spread over the range; TAIL_SLOPE is a little below, so that
 * the first step errs short. The front's p99 rises about that much
 * times body_ns (every tier's body in series, each at its own
 * p99 at once); the runtime's own work is not spread, and a request
 * rarely meets every tier's slow draw, so the secant takes over once two
 * spreads were measured.
 */
#define TAIL_SLOPE 3.5
#define TAIL_STEP_MAX 0.5

bool gtail_step(struct gwide *s, double p99, double body_ns)
{
	return wide_step(s, p99, TAIL_SLOPE * body_ns, 1, TAIL_STEP_MAX, SPREAD_MAX);
}
