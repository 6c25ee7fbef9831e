/* SPDX-License-Identifier: MIT */
/*
 * The report rows of the clone's CPU windows: the profiler single-steps
 * the best clone under the load, and its instruction mix, register
 * dependency distances, loads per instruction and share of chased loads
 * are set against the model's (the original's) request-serving class.
 * Informational rows (bound 0): cachegrind judges the rates.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include <ditto/profile.h>
#include "measure_int.h"
#include "synth_int.h"
#include "tune_int.h"

#include <ditto/model.h>

/* Total-variation distance of two instruction mixes (0 same, 1 disjoint). */
static double mix_distance(struct ditto_cpu *a, struct ditto_cpu *b)
{
	struct ditto_counts *ma = ditto_cpu_mix(a), *mb = ditto_cpu_mix(b);
	double ta = (double)ditto_counts_total(ma), tb = (double)ditto_counts_total(mb), d = 0;
	const char *k;
	uint64_t n;

	if (ta <= 0 || tb <= 0)
		return 1;
	for (size_t i = 0; !ditto_counts_entry(ma, i, &k, &n); i++)
		d += fabs((double)n / ta - (double)ditto_counts_get(mb, k) / tb);
	for (size_t i = 0; !ditto_counts_entry(mb, i, &k, &n); i++)
		if (!ditto_counts_get(ma, k))
			d += (double)n / tb;
	return d / 2;
}

/* Count of the bucket starting at lo (0 if none). */
static uint64_t bucket_at(struct ditto_hist *h, uint64_t lo)
{
	uint64_t l, hi, c;

	for (size_t i = 0; i < ditto_hist_bucket_count(h); i++)
		if (!ditto_hist_bucket(h, i, &l, &hi, &c) && l == lo)
			return c;
	return 0;
}

/* Total-variation distance of two histograms of the same kind, bucket
 * by bucket (0 same, 1 disjoint). */
static double hist_distance(struct ditto_hist *a, struct ditto_hist *b)
{
	double ta = (double)ditto_hist_total(a), tb = (double)ditto_hist_total(b), d = 0;
	uint64_t lo, hi, c;

	if (ta <= 0 || tb <= 0)
		return 1;
	for (size_t i = 0; i < ditto_hist_bucket_count(a); i++)
		if (!ditto_hist_bucket(a, i, &lo, &hi, &c))
			d += fabs((double)c / ta - (double)bucket_at(b, lo) / tb);
	for (size_t i = 0; i < ditto_hist_bucket_count(b); i++)
		if (!ditto_hist_bucket(b, i, &lo, &hi, &c) && !bucket_at(a, lo))
			d += (double)c / tb;
	return d / 2;
}

static double per(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

static void put_rows(struct ditto_cpu *want, struct ditto_cpu *got, struct ditto_tune_report *r)
{
	double d = mix_distance(want, got);

	report_row_error(r, "mix_distance", 0, d, d, 0);
	d = hist_distance(ditto_cpu_raw(want), ditto_cpu_raw(got));
	report_row_error(r, "dependency_distance", 0, d, d, 0);
	report_row(r, "loads_per_instruction", per(ditto_cpu_loads(want), ditto_cpu_instructions(want)),
		   per(ditto_cpu_loads(got), ditto_cpu_instructions(got)), 0);
	report_row(r, "chased_load_share", per(ditto_cpu_chased_loads(want), ditto_cpu_loads(want)),
		   per(ditto_cpu_chased_loads(got), ditto_cpu_loads(got)), 0);
}

void tune_cpu_rows(struct ditto_model *m, struct ditto_service *s, const struct ditto_tune_opts *o,
		   const struct tune_side *clone, struct ditto_tune_report *r)
{
	DITTO_OPTS(ditto_profile_opts, po, .duration_s = 1, .cpu_windows = 4, .sample_hz = -1);
	char dir[] = "/tmp/ditto-tune-XXXXXX";
	struct mctx c = { .argv = clone->argv, .host = "127.0.0.1", .startup_timeout_s = 30,
			  .dir = dir, .stop = o->stop };
	struct ditto_cpu *want = tune_main_cpu(s), *got;
	struct ditto_model *cm = NULL;
	uint64_t answered;
	int err;

	if (!want)
		return;
	if (!mkdtemp(dir)) {
		ditto_warn("tune: no CPU rows: temporary directory: %s", strerror(errno));
		return;
	}
	c.load = tune_base_load(m, s, o, clone->port);
	c.load.requests = 0;
	c.load.duration_s = 30;	/* ended once the CPU windows are taken */
	err = measure_profile_model(&c, &po, &cm, &answered);
	got = !err && ditto_model_service_count(cm) ? tune_main_cpu(ditto_model_service(cm, 0)) : NULL;
	if (got)
		put_rows(want, got, r);
	else
		ditto_warn("tune: no CPU rows: %s", err ? ditto_last_error() : "no CPU windows taken");
	ditto_model_free(cm);
	synth_rm_tree(dir);
}
