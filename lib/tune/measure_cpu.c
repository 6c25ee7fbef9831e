/* SPDX-License-Identifier: MIT */
/*
 * The cpu backend: libditto's profiler single-steps the service's
 * request-serving threads in CPU windows while the load runs (the load
 * goes on until the windows are taken), and the busiest class's windows
 * give the shape of its code: loads per instruction, the share of loads
 * chased (address loaded by the load before) and the mean log2 register
 * dependency distance. No simulator: what the code does, not what a
 * cache makes of it.
 */
#include <errno.h>
#include <math.h>

#include <ditto/model.h>
#include <ditto/profile.h>

#include "core_int.h"
#include "measure_int.h"
#include "model_int.h"
#include "tune_int.h"

/* Windows of 20000 instructions: 8 hold a redis-server's thread for
 * about 4.5 s at ptrace's 36000 steps a second. */
#define CPU_WINDOWS 8
#define LOAD_S 120	/* ended once the windows are taken */

static double log2_mean(struct ditto_hist *h)
{
	double sum = 0, n = 0;
	uint64_t lo, hi, c;

	for (size_t i = 0; h && i < ditto_hist_bucket_count(h); i++)
		if (!ditto_hist_bucket(h, i, &lo, &hi, &c) && lo) {
			sum += (double)c * log2((double)lo);
			n += (double)c;
		}
	return n > 0 ? sum / n : 0;
}

int measure_cpu_metrics(struct ditto_cpu *cpu, struct ditto_metrics *m)
{
	double insts = (double)ditto_cpu_instructions(cpu), loads = (double)ditto_cpu_loads(cpu);
	int err;

	if (!(insts > 0) || !(loads > 0))
		return ditto_err(-EIO, "measure: cpu: the windows saw no %s",
				 insts > 0 ? "loads" : "instructions");
	if ((err = ditto_metrics_set(m, "loads_per_instruction", loads / insts)) ||
	    (err = ditto_metrics_set(m, "chased_load_share",
				     (double)ditto_cpu_chased_loads(cpu) / loads)))
		return err;
	return ditto_metrics_set(m, "raw_distance_log2_mean", log2_mean(ditto_cpu_raw(cpu)));
}

int measure_cpu(const struct mctx *c, struct ditto_metrics *m)
{
	DITTO_OPTS(ditto_profile_opts, po, .duration_s = 1, .cpu_windows = CPU_WINDOWS,
		   .sample_hz = -1);
	struct ditto_model *model = NULL;
	struct ditto_cpu *cpu = NULL;
	struct mctx cc = *c;
	uint64_t answered;
	int err;

	cc.load.requests = 0;
	cc.load.duration_s = LOAD_S;
	err = measure_profile_model(&cc, &po, &model, &answered);
	if (!err && ditto_model_service_count(model))
		cpu = model_main_cpu(ditto_model_service(model, 0));
	if (!err)
		err = cpu ? measure_cpu_metrics(cpu, m) :
		      ditto_err(-EIO, "measure: cpu: no CPU window was taken (no request-serving "
				"thread ran under the load)");
	ditto_model_free(model);
	return err;
}
