/* SPDX-License-Identifier: MIT */
/*
 * The report rows of the clone's CPU windows: the profiler single-steps
 * the best clone under the load. Its instruction mix and register
 * dependency distances are set against the model's request-serving class
 * (total-variation distances); its loads per instruction, share of chased
 * loads and mean log2 dependency distance against the cpu backend's run
 * of the original under the same load. Informational rows (bound 0):
 * cachegrind judges the rates.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include <ditto/profile.h>
#include "measure_int.h"
#include "model_int.h"
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

static const char *const cpu_metrics[] = { "loads_per_instruction", "chased_load_share",
					   "raw_distance_log2_mean" };

/* The original's side of the scalar rows: the cpu backend on it under the
 * same load when it can be run (the model's windows saw another load),
 * else the model's windows. */
static int original_cpu(struct ditto_model *m, struct ditto_service *s,
			const struct ditto_tune_opts *o, struct ditto_cpu *model_cpu,
			struct ditto_metrics **out)
{
	struct ditto_loadgen_opts load = tune_base_load(m, s, o, o->original_port);
	int err;

	if (o->original_argv) {
		DITTO_OPTS(ditto_measure_opts, mo, .backends = DITTO_BACKEND_CPU,
			   .argv = o->original_argv, .load = &load, .stop = o->stop);
		if (!(err = ditto_measure(&mo, out)))
			return 0;
		ditto_warn("tune: the original's CPU windows: %s; the model's are used",
			   ditto_last_error());
	}
	err = ditto_metrics_new(out);
	return err ? err : measure_cpu_metrics(model_cpu, *out);
}

static void put_rows(struct ditto_model *m, struct ditto_service *s,
		     const struct ditto_tune_opts *o, struct ditto_cpu *want, struct ditto_cpu *got,
		     struct ditto_tune_report *r)
{
	struct ditto_metrics *a = NULL, *b = NULL;
	double d = mix_distance(want, got), x, y;

	report_row_error(r, "mix_distance", 0, d, d, 0);
	d = ditto_hist_distance(ditto_cpu_raw(want), ditto_cpu_raw(got));
	d = d < 0 ? 1 : d;	/* kinds differ: not comparable */
	report_row_error(r, "dependency_distance", 0, d, d, 0);
	if (ditto_metrics_new(&b) || measure_cpu_metrics(got, b) ||
	    original_cpu(m, s, o, want, &a)) {
		ditto_warn("tune: no chased-load rows: %s", ditto_last_error());
		goto out;
	}
	for (size_t i = 0; i < ARRAY_SIZE(cpu_metrics); i++)
		if (!ditto_metrics_get(a, cpu_metrics[i], &x) &&
		    !ditto_metrics_get(b, cpu_metrics[i], &y))
			report_row(r, cpu_metrics[i], x, y, 0);
out:
	ditto_metrics_free(a);
	ditto_metrics_free(b);
}

void tune_cpu_rows(struct ditto_model *m, struct ditto_service *s, const struct ditto_tune_opts *o,
		   const struct tune_side *clone, struct ditto_tune_report *r)
{
	DITTO_OPTS(ditto_profile_opts, po, .duration_s = 1, .cpu_windows = CPU_ROW_WINDOWS,
		   .sample_hz = -1);
	char dir[] = "/tmp/ditto-tune-XXXXXX";
	struct mctx c = { .argv = clone->argv, .host = "127.0.0.1", .startup_timeout_s = 30,
			  .dir = dir, .stop = o->stop };
	struct ditto_cpu *want = model_main_cpu(s), *got;
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
	got = !err && ditto_model_service_count(cm) ? model_main_cpu(ditto_model_service(cm, 0)) : NULL;
	if (got)
		put_rows(m, s, o, want, got, r);
	else
		ditto_warn("tune: no CPU rows: %s", err ? ditto_last_error() : "no CPU windows taken");
	ditto_model_free(cm);
	synth_rm_tree(dir);
}
