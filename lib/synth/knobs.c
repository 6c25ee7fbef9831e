/* SPDX-License-Identifier: MIT */
/*
 * The generator's tuning knobs: names in the model's tuning.knobs map,
 * defaults and the ranges the tuner keeps them in. A knob absent from the
 * model takes its default, so an untuned model gives the plain clone.
 */
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "synth_int.h"

#include <ditto/model.h>

const struct synth_knob synth_knob_table[] = {
	{ "synth.body_scale", offsetof(struct synth_knobs, body_scale), 1, 0.02, 50 },
	{ "synth.branch_bias", offsetof(struct synth_knobs, branch_bias), 0, -6, 16 },
	{ "synth.d1_mpki", offsetof(struct synth_knobs, d1_mpki), 0, 0, 500 },
	{ "synth.ll_mpki", offsetof(struct synth_knobs, ll_mpki), 0, 0, 500 },
	{ "synth.far_code_scale", offsetof(struct synth_knobs, far_code_scale), 1, 0, 20 },
	{ "synth.runtime_insts", offsetof(struct synth_knobs, runtime_insts), -1, -1, 1e7 },
	{ "synth.background_rate", offsetof(struct synth_knobs, background_rate), 1, 0.01, 100 },
	{ "synth.hold_share", offsetof(struct synth_knobs, hold_share), 0, 0, 1 },
	{ "synth.chase_scale", offsetof(struct synth_knobs, chase_scale), 1, 0, 10 },
};
const size_t synth_knob_count = sizeof(synth_knob_table) / sizeof(synth_knob_table[0]);

const struct synth_knob *synth_knob_find(const char *name)
{
	for (size_t i = 0; i < synth_knob_count; i++)
		if (strcmp(synth_knob_table[i].name, name) == 0)
			return &synth_knob_table[i];
	return NULL;
}

double *synth_knob_ptr(struct synth_knobs *k, const struct synth_knob *d)
{
	return (double *)((char *)k + d->offset);
}

void synth_knobs_defaults(struct synth_knobs *k)
{
	for (size_t i = 0; i < synth_knob_count; i++)
		*synth_knob_ptr(k, &synth_knob_table[i]) = synth_knob_table[i].dflt;
}

/*
 * DITTO_SYNTH_PIN_KNOBS="synth.NAME=VALUE[,...]" makes the generator use
 * VALUE whatever the model says: a knob cut from its code, as a defect
 * would. It exists for the tuner's tests, which must see a knob without
 * effect measured for real (tests/tune); a warning says it is in force.
 */
#define PIN_ENV "DITTO_SYNTH_PIN_KNOBS"

/* Said once per process: the tuner synthesizes at every iteration. */
static atomic_bool pin_warned;

static void pin_knobs(struct synth_knobs *k)
{
	const char *env = getenv(PIN_ENV), *p = env;
	bool warned = atomic_load(&pin_warned);

	while (p && *p) {
		size_t n = strcspn(p, ",");
		const char *eq = memchr(p, '=', n);

		for (size_t i = 0; eq && i < synth_knob_count; i++) {
			const struct synth_knob *d = &synth_knob_table[i];
			double x = strtod(eq + 1, NULL);

			if ((size_t)(eq - p) == strlen(d->name) && !strncmp(p, d->name, eq - p) &&
			    isfinite(x)) {
				*synth_knob_ptr(k, d) = fmin(fmax(x, d->min), d->max);
				if (!warned)
					ditto_warn("synth: %s pinned to %g by %s: the model's value "
						   "is ignored", d->name, *synth_knob_ptr(k, d), PIN_ENV);
			}
		}
		p += n + (p[n] == ',');
	}
	if (env && *env)
		atomic_store(&pin_warned, true);
}

/* Values outside a knob's range are clamped, not refused: a hand-edited
 * model still synthesizes. */
void synth_knobs_read(const struct ditto_model *m, struct synth_knobs *k)
{
	const struct ditto_values *v = ditto_tuning_knobs(ditto_model_tuning(m));

	synth_knobs_defaults(k);
	for (size_t i = 0; v && i < synth_knob_count; i++) {
		const struct synth_knob *d = &synth_knob_table[i];
		double x;

		if (!ditto_values_get(v, d->name, &x) && isfinite(x))
			*synth_knob_ptr(k, d) = fmin(fmax(x, d->min), d->max);
	}
	pin_knobs(k);
}
