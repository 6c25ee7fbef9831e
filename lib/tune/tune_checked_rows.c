/* SPDX-License-Identifier: MIT */
/*
 * The report rows the loop checks but does not tune. Syscalls and bytes per
 * request come from the profile backend (original measured the same way
 * when it can be run, else the model's figures); the CPU windows' rows
 * in tune_cpu_rows.c; latency in tune_latency.c.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_int.h"
#include <ditto/profile.h>
#include "measure_int.h"
#include "synth_int.h"
#include "tune_int.h"

#include <ditto/model.h>

static const char *const profile_metrics[] = { "syscalls_per_request", "socket_bytes_per_request",
					       "read_calls_per_request", "write_calls_per_request" };

static int profile_side(struct ditto_model *m, struct ditto_service *s,
			const struct ditto_tune_opts *o, const struct tune_side *sd,
			struct ditto_metrics **out)
{
	struct ditto_loadgen_opts load = tune_base_load(m, s, o, sd->port);

	DITTO_OPTS(ditto_measure_opts, mo, .backends = DITTO_BACKEND_PROFILE, .argv = sd->argv,
		   .load = &load, .stop = o->stop);
	return ditto_measure(&mo, out);
}

/* sums[j]: side j's averages over the rounds (0 original, 1 clone, 2 the
 * original's second turn); n sides (1: the clone alone). */
static int call_rounds(struct ditto_model *m, struct ditto_service *s,
		       const struct ditto_tune_opts *o, const struct tune_side *sides[3], size_t n,
		       struct ditto_metrics *sums[3])
{
	size_t first = n == 1 ? 1 : 0;
	int err = 0;

	for (unsigned k = 0; !err && k < CALL_ROUNDS; k++)
		for (size_t j = 0; !err && j < n; j++) {
			size_t side = first + (j + k) % n;
			struct ditto_metrics *one = NULL;

			err = profile_side(m, s, o, sides[side], &one);
			err = err ? err : sums[side] ? 0 : ditto_metrics_new(&sums[side]);
			err = err ? err : tune_metrics_add(sums[side], one, 1.0 / CALL_ROUNDS);
			ditto_metrics_free(one);
		}
	return err;
}

static void profile_rows(struct ditto_model *m, struct ditto_service *s,
			 const struct ditto_tune_opts *o, const struct tune_side *orig,
			 const struct tune_side *clone, struct ditto_tune_report *r)
{
	const struct tune_side *sides[3] = { orig, clone, orig };
	struct ditto_metrics *sums[3] = { NULL, NULL, NULL };
	double x, y, x0 = 0, y0 = 0, noise = 0;
	bool again;

	if (call_rounds(m, s, o, sides, orig ? 3 : 1, sums) ||
	    (!orig && tune_model_calls(s, &sums[0]))) {
		ditto_warn("tune: no syscall rows in the report: %s", ditto_last_error());
		goto out;
	}
	/* The original against itself: a clone cannot be told from it more
	 * finely than that, so the calls row's bound is at least this noise
	 * (its figures: README, "Tuning a clone"). */
	again = sums[2] && !ditto_metrics_get(sums[0], "syscalls_per_request", &x0) &&
		!ditto_metrics_get(sums[2], "syscalls_per_request", &y0);
	if (again)
		noise = metric_error("syscalls_per_request", x0, y0);
	for (size_t i = 0; i < ARRAY_SIZE(profile_metrics); i++)
		if (!ditto_metrics_get(sums[0], profile_metrics[i], &x) &&
		    !ditto_metrics_get(sums[1], profile_metrics[i], &y))
			report_row(r, profile_metrics[i], x, y,
				   strcmp(profile_metrics[i], "syscalls_per_request") ? TUNE_CALLS_BOUND :
				   fmax(TUNE_CALLS_BOUND, noise));
	if (again)
		report_row(r, "syscalls_per_request_noise", x0, y0, 0);
out:
	for (size_t j = 0; j < 3; j++)
		ditto_metrics_free(sums[j]);
}

int tune_checked_rows(struct ditto_model *m, struct ditto_service *s,
		    const struct ditto_tune_opts *o, struct ditto_tune_report *r)
{
	struct tune_clone_cmd cmd;	/* the best clone, in opts->dir */
	unsigned port = synth_free_port(NULL, 0);
	struct tune_side clone, orig = { .argv = o->original_argv,
						     .port = o->original_port, .name = "original" };

	tune_clone_cmd_init(&cmd, o->dir, port);
	clone = (struct tune_side){ .argv = cmd.argv, .port = port, .name = "clone" };
	profile_rows(m, s, o, o->original_argv ? &orig : NULL, &clone, r);
	tune_cpu_rows(m, s, o, &clone, r);
	if (o->latency)
		tune_latency(m, s, o, o->original_argv ? &orig : NULL, &clone, r);
	return 0;
}
