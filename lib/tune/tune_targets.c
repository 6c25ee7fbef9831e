/* SPDX-License-Identifier: MIT */
/*
 * The original's side of the comparison when the original cannot be run:
 * what the model recorded. Miss rates are predicted from the reuse
 * histograms for the cache geometry the cachegrind backend simulates;
 * branch misprediction comes only from hardware counters.
 */
#include <errno.h>
#include <math.h>

#include "core_int.h"
#include "measure_int.h"
#include "model_int.h"
#include "tune_int.h"

#include <ditto/model.h>

#define L1_BYTES 32768
#define LL_BYTES (1u << 20)

static void cpu_targets(struct ditto_cpu *c, struct ditto_metrics *t)
{
	double insts = (double)ditto_cpu_instructions(c);
	double data = insts > 0 ? (double)(ditto_cpu_loads(c) + ditto_cpu_stores(c)) / insts : 0;
	double i_ll = ditto_cpu_miss_rate(c, true, LL_BYTES, false);
	double d_ll = ditto_cpu_miss_rate(c, false, LL_BYTES, false);
	double ipr = ditto_hist_mean(ditto_cpu_insts_per_request(c));

	if (ipr > 0)
		ditto_metrics_set(t, "insts_per_request", ipr);
	if (insts <= 0)
		return;
	ditto_metrics_set(t, "i1_miss_rate", fmax(ditto_cpu_miss_rate(c, true, L1_BYTES, false), 0));
	ditto_metrics_set(t, "d1_miss_rate", fmax(ditto_cpu_miss_rate(c, false, L1_BYTES, false), 0));
	/* cachegrind's LL rate is over instruction and data references. */
	if (i_ll >= 0 && d_ll >= 0)
		ditto_metrics_set(t, "ll_miss_rate", (i_ll + d_ll * data) / (1 + data));
}

static void counter_targets(struct ditto_observed *o, struct ditto_metrics *t)
{
	uint64_t br = ditto_observed_counter(o, DITTO_COUNTER_BRANCHES);

	if (o && ditto_observed_counters_available(o) && br)
		ditto_metrics_set(t, "branch_mispredict_rate",
				  (double)ditto_observed_counter(o, DITTO_COUNTER_BRANCH_MISSES) / (double)br);
}

/*
 * Without instructions per request (the model's CPU windows never held a
 * whole request, or it has none), the clone's body is held to the CPU
 * time per request the profiler measured, all classes, all requests:
 * apache's and MariaDB's requests outlast a window of 20,000 stepped
 * instructions, and their clones with the default body spent a third to
 * a half of the original's CPU time per request. Measured on another
 * host than the profile's, it would hold the clone to that host's speed.
 */
static void cpu_time_target(struct ditto_service *s, struct ditto_metrics *t)
{
	struct ditto_requests *r = ditto_service_requests(s);
	uint64_t ns = measure_service_cpu_ns(s), n = r ? ditto_requests_count(r) : 0;
	double v = n ? (double)ns / (double)n : 0;

	if (!ditto_metrics_get(t, "insts_per_request", NULL) || !(v > 0))
		return;
	ditto_metrics_set(t, "cpu_ns_per_request", v);
	ditto_warn("tune: %s: the model's CPU windows hold no whole request: the clone's CPU time "
		   "per request is tuned to the profile's (%.1f us; on the host it was profiled on, "
		   "that host's speed), not its instructions", ditto_service_name(s), v / 1000);
}

int tune_model_targets(struct ditto_service *s, struct ditto_metrics *t)
{
	struct ditto_cpu *c = model_main_cpu(s);

	if (c)
		cpu_targets(c, t);
	cpu_time_target(s, t);
	counter_targets(ditto_service_observed(s), t);
	if (!ditto_metrics_count(t))
		return ditto_err(-DITTO_ENOTFOUND, "tune: %s: the model has no cpu section nor "
				 "CPU time per request to take targets from, and the original was "
				 "not given to measure",
				 ditto_service_name(s));
	ditto_warn("tune: %s: the original is not measured: targets are the model's recorded "
		   "figures (miss rates predicted from its reuse histograms%s)", ditto_service_name(s),
		   ditto_metrics_get(t, "branch_mispredict_rate", &(double){ 0 }) ?
		   "; branch misprediction is not tuned: no counters were recorded" : "");
	return 0;
}

int tune_model_calls(struct ditto_service *s, struct ditto_metrics **out)
{
	struct ditto_requests *r = ditto_service_requests(s);
	int err = ditto_metrics_new(out);

	return err ? err : measure_service_metrics(s, r ? (double)ditto_requests_count(r) : 0, *out);
}

void tune_targets_one_body_metric(struct ditto_metrics *t)
{
	if (!ditto_metrics_get(t, "insts_per_request", NULL))
		tune_metrics_remove(t, "cpu_ns_per_request");
}
