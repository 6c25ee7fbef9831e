/* SPDX-License-Identifier: MIT */
/*
 * The generator's tuning knobs, named once: what a model's tuning.knobs
 * may hold (validation warns about other names), their defaults and the
 * ranges the tuner keeps them in. Here, below synth and tune, because the
 * model's validation, the generator and the tuner all read the table.
 */
#ifndef DITTO_KNOB_TABLE_H
#define DITTO_KNOB_TABLE_H

#include <stddef.h>

/* The generator's tuning knobs: model tuning.knobs entries named
 * "synth.<field>". */
struct synth_knobs {
	double body_scale;	/* multiplies the body's instructions per request */
	double branch_bias;	/* > 0: extra branches taken at random with this
				 * strength; < 0: extra always-taken ones */
	double d1_mpki;		/* extra D1 misses per 1000 body instructions */
	double ll_mpki;		/* of which also LL misses */
	double far_code_scale;	/* multiplies the share of far instruction fetches */
	double runtime_insts;	/* the runtime's own instructions per request (< 0: estimate) */
	double background_rate;	/* multiplies the background classes' wake-up rate */
	double hold_share;	/* share of epoll wake-ups whose responses wait for
				 * the wake-up's last read (rt_net.hold_share) */
	double chase_scale;	/* multiplies the profile's share of chased loads */
	double cpu_scale;	/* multiplies the body again: the graph tuner's, for a
				 * tier's CPU time per request in its graph */
	double wake_share;	/* share of the body an event loop runs per wake-up
				 * that began requests (rt_net.wake_share) */
	double footprint_kib;	/* KiB of data each request walks as one chain of
				 * dependent loads (rt_config.footprint_bytes) */
	double footprint_after_share;	/* of which walked after the response
					 * (rt_config.footprint_after_share) */
	double body_spread;	/* coefficient of variation of each request's body
				 * length around its draw (rt_config.body_spread) */
};
struct synth_knob {
	const char *name;
	size_t offset;
	double dflt, min, max;
};
extern const struct synth_knob synth_knob_table[];
extern const size_t synth_knob_count;
/* The knob called name, or NULL. */
const struct synth_knob *synth_knob_find(const char *name);
/* The knob a tuning.knobs key names: "synth.NAME" for every service, or
 * "SERVICE/synth.NAME" for one service only (the graph tuner's per-tier
 * knobs, which take precedence there); *scope_len is the length of
 * SERVICE (0 for an unscoped key). NULL when no knob is named. */
const struct synth_knob *synth_knob_find_key(const char *key, size_t *scope_len);
double *synth_knob_ptr(struct synth_knobs *k, const struct synth_knob *d);
void synth_knobs_defaults(struct synth_knobs *k);

#endif /* DITTO_KNOB_TABLE_H */
