/* SPDX-License-Identifier: MIT */
/*
 * Unit test of the graph tuner's step of a tier's synth.cpu_scale
 * (lib/tune/tune_graph_step.c) on tiers whose CPU per request is a known
 * function of the knob: the runtime's own work a plus the body's b per
 * unit, where a is most of an untuned tier's CPU (a slow tier's default
 * body is a small part of it), a line that bends (the tiers share the
 * cores), a tier over its target, and run-to-run noise. Each must come
 * within 5% of its target in a few steps, as the loop has 6 to 8 of them.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>

#include "tu.h"
#include "tune_graph_int.h"

#define KNOB_MIN 0.01
#define KNOB_MAX 1e5

/* A deterministic noise of +-amp, different at each step. */
static double noise(unsigned i, double amp)
{
	static const double u[] = { 0.9, -0.7, 0.3, -1.0, 0.6, -0.2, 1.0, -0.5, 0.1, -0.8 };

	return 1 + amp * u[i % (sizeof(u) / sizeof(u[0]))];
}

/* Steps until the tier is within aim of target; the steps it took. */
static int converge(double target, double (*cpu)(double, int), double amp, double aim, int most)
{
	struct gtier t = { .name = "tier", .target = target, .knob = 1 };
	int i;

	for (i = 0; i < most; i++) {
		t.measured = cpu(t.knob, i) * noise((unsigned)i, amp);
		if (fabs(t.measured - target) / target <= aim)
			break;
		gtier_step(&t, KNOB_MIN, KNOB_MAX);
		ck_assert_msg(!t.at_limit, "knob at its limit (%g)", t.knob);
	}
	printf("%.0f ns for %.0f after %d steps (knob %.1f)\n", t.measured, target, i, t.knob);
	ck_assert_msg(i < most, "%.0f ns for %.0f after %d steps (knob %g)", t.measured, target, i,
		      t.knob);
	return i;
}

/* A node tier: 170 us of runtime, 3 us a knob unit; it needs ~2100. */
static double node_tier(double k, int i)
{
	(void)i;
	return 170e3 + 3e3 * k;
}

/* A bending line: each unit costs more as the tier takes more of the
 * cores (the other tiers wait for them). */
static double bending(double k, int i)
{
	(void)i;
	return 140e3 + 900 * pow(k, 1.15);
}

/* Over its target untuned: the knob must shrink. */
static double heavy(double k, int i)
{
	(void)i;
	return 20e3 + 400e3 * k;
}

/* nginx in front of node tiers: its runtime's share grows by half once
 * the tiers behind it are tuned (step 2 on) and take the cores; the
 * points before that are off the line it is on now. */
static double shifting(double k, int i)
{
	return (i < 2 ? 140e3 : 210e3) + 900 * k;
}

START_TEST(far_below_target)
{
	ck_assert_int_le(converge(6.49e6, node_tier, 0, 0.05, 6), 5);
}
END_TEST

START_TEST(bending_line)
{
	converge(257e3, bending, 0, 0.05, 7);
}
END_TEST

START_TEST(shifting_line)
{
	converge(289e3, shifting, 0.03, 0.05, 7);
}
END_TEST

START_TEST(over_target)
{
	converge(100e3, heavy, 0, 0.05, 6);
}
END_TEST

/* With 4% noise a run lands within 5% by chance now and then; the steps
 * must not be thrown far by two noisy points close together. */
START_TEST(noisy_runs)
{
	converge(6.49e6, node_tier, 0.04, 0.05, 8);
	converge(257e3, bending, 0.04, 0.05, 8);
}
END_TEST

/*
 * synth.wake_share (gtier_wake_step()): a tier whose busy CPU per
 * request over its base one is r0 - k * share (the traced shop's node
 * tiers: r0 about 0.95, k 0.25-0.45 at 8 connections), with noise on
 * the busy measurement; steps until the busy CPU is within aim.
 */
static int wake_converge(double r0, double k, double want, double amp, int most)
{
	struct gtier t = { .name = "tier", .target = 1e6, .busy_target = want * 1e6 };
	int i;

	for (i = 0; i < most; i++) {
		t.measured = 1e6;
		t.busy_measured = 1e6 * (r0 - k * t.wake) * noise((unsigned)i, amp);
		if (fabs(t.busy_measured - t.busy_target) / t.busy_target <= 0.05)
			break;
		gtier_wake_step(&t);
		if (t.wake_at_limit)
			break;
	}
	printf("busy %.0f ns for %.0f after %d steps (share %.2f%s)\n", t.busy_measured,
	       t.busy_target, i, t.wake, t.wake_at_limit ? ", at its limit" : "");
	return t.wake_at_limit ? -1 : i < most ? i : -2;
}

START_TEST(wake_share_steps)
{
	/* the slope guessed (0.3) near the tier's, or half of it */
	ck_assert_int_ge(wake_converge(0.95, 0.3, 0.75, 0, 4), 0);
	ck_assert_int_ge(wake_converge(0.96, 0.45, 0.69, 0, 4), 0);
	ck_assert_int_ge(wake_converge(0.95, 0.15, 0.82, 0, 5), 0);
	ck_assert_int_ge(wake_converge(0.95, 0.3, 0.75, 0.03, 6), 0);
}
END_TEST

START_TEST(wake_share_limits)
{
	/* falling less with load than the clone does without the share, or
	 * more than all of the body per wake-up gives: at a limit, and said */
	ck_assert_int_eq(wake_converge(0.95, 0.3, 1.2, 0, 6), -1);
	ck_assert_int_eq(wake_converge(0.95, 0.3, 0.3, 0, 8), -1);
}
END_TEST

/*
 * synth.footprint_kib (gtier_foot_step()): a tier whose idle CPU per
 * request is its base one plus d0 + k * footprint (k in ns per KiB:
 * 1.3-1.8 us/KiB in bench/idle_chase.c; more where other tiers evict
 * the lines too), with noise on the idle measurement; steps until the
 * idle CPU is within 5% (-2: not within most steps).
 */
static int foot_converge(double d0, double k, double want, double amp, int most)
{
	struct gtier t = { .name = "tier", .target = 2e5, .idle_target = 2e5 + want };
	int i;

	for (i = 0; i < most; i++) {
		t.measured = 2e5;
		t.idle_measured = (2e5 + d0 + k * t.foot) * noise((unsigned)i, amp);
		if (fabs(t.idle_measured - t.idle_target) / t.idle_target <= 0.05)
			break;
		gtier_foot_step(&t);
		if (t.foot_at_limit)
			break;
	}
	printf("idle %.0f ns for %.0f after %d steps (footprint %.0f KiB%s)\n", t.idle_measured,
	       t.idle_target, i, t.foot, t.foot_at_limit ? ", at its limit" : "");
	return t.foot_at_limit ? -1 : i < most ? i : -2;
}

START_TEST(footprint_steps)
{
	/* the slope guessed (1 us/KiB), less, more; a target beyond the
	 * first step's 256 KiB; noise */
	ck_assert_int_ge(foot_converge(9e4, 1000, 2.5e5, 0, 4), 0);
	ck_assert_int_ge(foot_converge(9e4, 600, 2.5e5, 0, 5), 0);
	ck_assert_int_ge(foot_converge(9e4, 1500, 2.5e5, 0, 4), 0);
	ck_assert_int_ge(foot_converge(9e4, 1000, 1.2e6, 0, 5), 0);
	ck_assert_int_ge(foot_converge(9e4, 1000, 3e5, 0.03, 6), 0);
	ck_assert_int_ge(foot_converge(9e4, 2500, 3e5, 0, 5), 0);
	/* a little more than none asks for the least step, not the limit 0 */
	ck_assert_int_ge(foot_converge(0, 1000, 1.2e4, 0, 3), 0);
}
END_TEST

START_TEST(footprint_limits)
{
	/* a clone that pays more after idle time than its original with no
	 * footprint at all: at the limit 0, and said */
	ck_assert_int_eq(foot_converge(9e4, 1000, 2e4, 0, 4), -1);
}
END_TEST

/*
 * A graph-wide knob on a model graph: its latency at the knob times
 * noise, stepped until within aim of the target (-1: at a limit, -2: not
 * within most steps); step() is told k0, what the knob moves at most.
 */
struct wide_case {
	double (*latency)(double knob, double on_path);
	bool (*step)(struct gwide *s, double k0);
	double on_path, k0, target, aim, amp;
	int most;
	const char *what, *knob;
};

static int wide_converge(const struct wide_case *c)
{
	struct gwide s = { .target = c->target };
	int i;

	for (i = 0; i < c->most; i++) {
		s.measured = c->latency(s.knob, c->on_path) * noise((unsigned)i, c->amp);
		if (fabs(s.measured - s.target) / s.target <= c->aim)
			break;
		c->step(&s, c->k0);
		if (s.at_limit)
			break;
	}
	printf("%s %.0f ns for %.0f after %d steps (%s %.2f%s)\n", c->what, s.measured, s.target,
	       i, c->knob, s.knob, s.at_limit ? ", at its limit" : "");
	return s.at_limit ? -1 : i < c->most ? i : -2;
}

/*
 * The graph's synth.footprint_after_share (gshare_step()): a graph whose
 * p50 under the idle load is p0 + (1 - share) * on_path, on_path the
 * part of the walks' cost that the share moves (less than walk, what the
 * step is told the walks cost: a tier off the front's path, a walk
 * partly cached), with noise; within 5% of the target.
 */
static double share_latency(double share, double on_path)
{
	return 1e6 + (1 - share) * on_path;
}

static int share_converge(double on_path, double walk, double want, double amp, int most)
{
	return wide_converge(&(struct wide_case){
		.latency = share_latency, .step = gshare_step, .on_path = on_path, .k0 = walk,
		.target = 1e6 + want, .aim = 0.05, .amp = amp, .most = most, .what = "p50",
		.knob = "share" });
}

START_TEST(after_share_steps)
{
	/* the walks all on the path, half of them, a fifth; a target half
	 * way; noise */
	ck_assert_int_ge(share_converge(3e6, 3e6, 1e6, 0, 3), 0);
	ck_assert_int_ge(share_converge(1.5e6, 3e6, 0.5e6, 0, 4), 0);
	ck_assert_int_ge(share_converge(0.6e6, 3e6, 0.1e6, 0, 5), 0);
	ck_assert_int_ge(share_converge(3e6, 3e6, 0.3e6, 0.03, 6), 0);
	/* a walk of nothing: no step */
	{
		struct gwide s = { .target = 1e6, .measured = 2e6 };

		ck_assert(!gshare_step(&s, 0));
		ck_assert(!s.stepped && s.knob == 0);
	}
}
END_TEST

START_TEST(after_share_limits)
{
	/* slower than the original with every walk off the path: the limit
	 * 1; faster with every walk on it: the limit 0 */
	ck_assert_int_eq(share_converge(1e6, 1e6, -0.5e6, 0, 6), -1);
	{
		struct gwide s = { .target = 3e6, .measured = 2e6 };

		gshare_step(&s, 1e6);
		ck_assert(s.at_limit && s.limit == 0);
	}
}
END_TEST

/*
 * The graph's synth.body_spread (gtail_step()): a graph whose p99 under
 * the base load is p0 plus on_path times the lognormal factor's p99 less
 * 1 at the spread (on_path below body, what the step is told the bodies
 * cost: a request rarely meets every tier's slow draw, and the runtime's
 * share is not spread), with noise; within 10% of the target.
 */
static double lognormal_p99(double cv)
{
	double s2 = log(1 + cv * cv);

	return exp(-s2 / 2 + 2.326 * sqrt(s2));
}

static double tail_latency(double spread, double on_path)
{
	return 1e6 + on_path * (lognormal_p99(spread) - 1);
}

static bool tail_step(struct gwide *s, double body)
{
	return gtail_step(s, s->measured, body);
}

static int tail_converge(double on_path, double body, double want, double amp, int most)
{
	return wide_converge(&(struct wide_case){
		.latency = tail_latency, .step = tail_step, .on_path = on_path, .k0 = body,
		.target = tail_latency(want, on_path), .aim = 0.1, .amp = amp, .most = most,
		.what = "p99", .knob = "spread" });
}

START_TEST(body_spread_steps)
{
	/* the bodies all on the path, half, a fifth; small and large
	 * targets; noise */
	ck_assert_int_ge(tail_converge(1e6, 1e6, 1, 0, 4), 0);
	ck_assert_int_ge(tail_converge(0.5e6, 1e6, 1.5, 0, 6), 0);
	ck_assert_int_ge(tail_converge(0.2e6, 1e6, 2, 0, 7), 0);
	ck_assert_int_ge(tail_converge(1e6, 1e6, 0.3, 0, 4), 0);
	ck_assert_int_ge(tail_converge(0.5e6, 1e6, 1.2, 0.05, 7), 0);
	/* no body: no step */
	{
		struct gwide s = { .target = 2e6, .measured = 1e6 };

		ck_assert(!gtail_step(&s, s.measured, 0));
		ck_assert(!s.stepped && s.knob == 0);
	}
}
END_TEST

START_TEST(body_spread_limits)
{
	/* a tail longer than the widest spread gives: the limit 2; a clone
	 * slower than the original with no spread: the limit 0 */
	{
		struct gwide s = { .target = 1e6 + 1e6 * (lognormal_p99(5) - 1) };
		int i;

		for (i = 0; i < 12 && !s.at_limit; i++) {
			s.measured = 1e6 + 1e6 * (lognormal_p99(s.knob) - 1);
			gtail_step(&s, s.measured, 1e6);
		}
		ck_assert(s.at_limit && s.limit == SPREAD_MAX);
	}
	{
		struct gwide s = { .target = 2e6, .measured = 3e6 };

		gtail_step(&s, s.measured, 1e6);
		ck_assert(s.at_limit && s.limit == 0);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("graph_step");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, far_below_target);
	tcase_add_test(tc, bending_line);
	tcase_add_test(tc, shifting_line);
	tcase_add_test(tc, over_target);
	tcase_add_test(tc, noisy_runs);
	tcase_add_test(tc, wake_share_steps);
	tcase_add_test(tc, wake_share_limits);
	tcase_add_test(tc, footprint_steps);
	tcase_add_test(tc, footprint_limits);
	tcase_add_test(tc, after_share_steps);
	tcase_add_test(tc, after_share_limits);
	tcase_add_test(tc, body_spread_steps);
	tcase_add_test(tc, body_spread_limits);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
