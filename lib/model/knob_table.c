/* SPDX-License-Identifier: MIT */
/*
 * The knob table (knob_table.h): names, defaults and ranges.
 */
#include <stddef.h>
#include <string.h>

#include "knob_table.h"

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
	/* A node.js tier spends milliseconds per request where the default
	 * body is 10000 additions (thousands of times that); the limit on
	 * body instructions per request (lib/synth/limits.c) caps it too. */
	{ "synth.cpu_scale", offsetof(struct synth_knobs, cpu_scale), 1, 0.01, 1e5 },
	{ "synth.wake_share", offsetof(struct synth_knobs, wake_share), 0, 0, 1 },
	/* 64 MiB: a million lines, indexes of 32 bits */
	{ "synth.footprint_kib", offsetof(struct synth_knobs, footprint_kib), 0, 0, 65536 },
	{ "synth.footprint_after_share", offsetof(struct synth_knobs, footprint_after_share), 0, 0,
	  1 },
	/* at 2 the cap of 100 times the drawn length costs under 0.2% of the
	 * mean (rt_rng_spread()) */
	{ "synth.body_spread", offsetof(struct synth_knobs, body_spread), 0, 0, 2 },
};
const size_t synth_knob_count = sizeof(synth_knob_table) / sizeof(synth_knob_table[0]);

const struct synth_knob *synth_knob_find(const char *name)
{
	for (size_t i = 0; i < synth_knob_count; i++)
		if (strcmp(synth_knob_table[i].name, name) == 0)
			return &synth_knob_table[i];
	return NULL;
}

const struct synth_knob *synth_knob_find_key(const char *key, size_t *scope_len)
{
	const char *slash = strrchr(key, '/');

	*scope_len = slash ? (size_t)(slash - key) : 0;
	if (slash && slash == key)
		return NULL;
	return synth_knob_find(slash ? slash + 1 : key);
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
