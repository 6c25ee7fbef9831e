/* SPDX-License-Identifier: MIT */
/*
 * The generator's tuning knobs read from a model (the table that names
 * them is lib/model/knob_table.c). A knob absent from the model takes its
 * default, so an untuned model gives the plain clone.
 */
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "synth_int.h"

#include <ditto/model.h>
#include <ditto/synth.h>

/*
 * DITTO_SYNTH_PIN_KNOBS="synth.NAME=VALUE[,...]" makes the generator use
 * VALUE whatever the model says: a knob cut from its code, as a defect
 * would. It exists for the tuner's tests, which must see a knob without
 * effect measured for real (tests/tune); a warning says it is in force.
 */
#define PIN_ENV "DITTO_SYNTH_PIN_KNOBS"

/* Said once per process: the tuner synthesizes at every iteration. The
 * first call that finds the variable set claims the warning (an exchange:
 * one call, also when threads synthesize at once). */
static atomic_bool pin_warned;

static void pin_knobs(struct synth_knobs *k)
{
	const char *env = getenv(PIN_ENV), *p = env;
	bool warned = env && *env ? atomic_exchange(&pin_warned, true) : true;

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
}

DITTO_API size_t ditto_synth_knob_count(void)
{
	return synth_knob_count;
}

DITTO_API int ditto_synth_knob(size_t i, const char **name, double *dflt, double *min,
			       double *max)
{
	const struct synth_knob *d = i < synth_knob_count ? &synth_knob_table[i] : NULL;

	if (!d)
		return ditto_err(-DITTO_ENOTFOUND, "synth: no knob %zu (there are %zu)", i,
				 synth_knob_count);
	if (name)
		*name = d->name;
	if (dflt)
		*dflt = d->dflt;
	if (min)
		*min = d->min;
	if (max)
		*max = d->max;
	return 0;
}

/* Keys of v scoped to `service` (scoped) or to every service. */
static void read_keys(const struct ditto_values *v, const char *service, bool scoped,
		      struct synth_knobs *k)
{
	for (size_t i = 0; i < ditto_values_size(v); i++) {
		const struct synth_knob *d;
		const char *key;
		size_t n;
		double x;

		if (ditto_values_entry(v, i, &key, &x) || !(d = synth_knob_find_key(key, &n)) ||
		    !isfinite(x) || (n > 0) != scoped)
			continue;
		if (scoped && (!service || strlen(service) != n || strncmp(key, service, n)))
			continue;
		*synth_knob_ptr(k, d) = fmin(fmax(x, d->min), d->max);
	}
}

/* Values outside a knob's range are clamped, not refused: a hand-edited
 * model still synthesizes. A service's own keys win over everyone's. */
void synth_knobs_read(const struct ditto_values *v, const char *service, struct synth_knobs *k)
{
	synth_knobs_defaults(k);
	read_keys(v, service, false, k);
	read_keys(v, service, true, k);
	pin_knobs(k);
}
