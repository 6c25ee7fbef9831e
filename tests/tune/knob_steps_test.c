/* SPDX-License-Identifier: MIT */
/*
 * Unit test of the tuner's knob steps (lib/tune/tune_knobs.c) on metrics
 * that are known functions of their knob: one that grows with it
 * (instructions per request and synth.body_scale) and one that falls
 * (system calls per request and synth.hold_share: held responses gather
 * more requests per wake-up). Each must reach its target within the
 * bound, stepping the knob the right way, and never be called stalled.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tu.h"
#include "tune_int.h"

#include <ditto/model.h>
#include <ditto/tune.h>

/* Steps the knob of metric until y(knob) is within bound of goal. */
static void converge(const char *metric, const char *knob, double goal, double dflt,
		     double (*y)(double))
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_values *knobs = ditto_tuning_knobs_ensure(ditto_model_tuning_ensure(m));
	struct ditto_metrics *target = NULL, *clone = NULL;
	struct track t[TUNE_TRACKS];
	double x = dflt, err = 1;
	int steps = 0;

	tracks_init(t);
	ditto_metrics_new(&target);
	ditto_metrics_set(target, metric, goal);
	for (; steps < 12; steps++) {
		if (ditto_values_get(knobs, knob, &x))
			x = dflt;
		err = fabs(y(x) - goal) / goal;
		if (err <= 0.01)
			break;
		ditto_metrics_free(clone);
		ditto_metrics_new(&clone);
		ditto_metrics_set(clone, metric, y(x));
		tracks_step(t, knobs, target, clone, 0.05);
	}
	for (size_t i = 0; i < TUNE_TRACKS; i++)
		ck_assert_msg(!t[i].stalled, "%s: %s called stalled", metric, t[i].knob);
	ck_assert_msg(err <= 0.01, "%s: %.3f for %.3f after %d steps (%s %.3f)", metric, y(x), goal,
		      steps, knob, x);
	printf("ok %s: %.3f for %.3f in %d steps (%s %.3f)\n", metric, y(x), goal, steps, knob, x);
	ditto_metrics_free(clone);
	ditto_metrics_free(target);
	ditto_model_free(m);
}

static double insts(double scale)
{
	return 1000 * scale;
}

/* 1.2 calls per request unheld, 0.8 with every response held */
static double calls(double hold)
{
	return 1.2 - 0.4 * hold;
}

START_TEST(growing_metric_reaches_1500_insts_per_request)
{
	converge("insts_per_request", "synth.body_scale", 1500, 1, insts);
}
END_TEST

/* Two targets of the falling metric: most responses held, and a few. */
START_TEST(falling_metric_reaches_0_9_calls_per_request)
{
	converge("syscalls_per_request", "synth.hold_share", 0.9, 0, calls);
}
END_TEST

START_TEST(falling_metric_reaches_1_1_calls_per_request)
{
	converge("syscalls_per_request", "synth.hold_share", 1.1, 0, calls);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("knob_steps");
	TCase *tc = tcase_create("converge");

	tcase_add_test(tc, growing_metric_reaches_1500_insts_per_request);
	tcase_add_test(tc, falling_metric_reaches_0_9_calls_per_request);
	tcase_add_test(tc, falling_metric_reaches_1_1_calls_per_request);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
