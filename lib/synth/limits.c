/* SPDX-License-Identifier: MIT */
/*
 * What a model may ask of its clone. A model travels between
 * organisations: a valid one can still ask for 10,000 processes or 10^12
 * instructions per request, and a clone built as asked would exhaust the
 * host it is meant to stand in on. Each figure the generator writes that
 * could do so passes synth_limit(), which brings it within its limit and
 * names the clamp once per generation in a warning. --no-clamp lifts the
 * limits that only protect the host, up to what the runtime can represent;
 * the runtime's own caps (a response, one file call, one sleep) hold
 * always and are named the same way.
 *
 * The table is documented in include/ditto/synth.h: keep both in step.
 */
#include <stdio.h>

#include "core_int.h"
#include "synth_int.h"

struct limit_def {
	const char *what;	/* "<figure> <what>" reads as a phrase */
	double clamp;		/* the limit */
	double hard;		/* with --no-clamp (== clamp: the runtime's own cap) */
};

static const struct limit_def defs[SYNTH_LIMIT_COUNT] = {
	[SYNTH_LIMIT_PROCESSES] = { "processes", 64, 4096 },
	[SYNTH_LIMIT_THREADS] = { "serving threads per process", 256, 4096 },
	[SYNTH_LIMIT_CLASSES] = { "background thread classes", 64, 4096 },
	[SYNTH_LIMIT_CLASS_THREADS] = { "threads in one background class", 256, 4096 },
	[SYNTH_LIMIT_BG_THREADS] = { "background threads per process", 1024, 16384 },
	[SYNTH_LIMIT_ALL_THREADS] = { "threads in all processes", 4096, 65536 },
	[SYNTH_LIMIT_INSTS] = { "body instructions per request", 1e9, 1.8e19 },
	[SYNTH_LIMIT_CALLS] = { "calls per request of one system call", 1000, 1e12 },
	[SYNTH_LIMIT_REGION] = { "bytes in one data region of the body", 64u << 20, 240u << 20 },
	[SYNTH_LIMIT_ALL_REGIONS] = { "bytes of body data regions in all processes", 1u << 30,
				      64.0 * (1u << 30) },
	[SYNTH_LIMIT_RESPONSE] = { "bytes per response", 16u << 20, 16u << 20 },
	[SYNTH_LIMIT_SCRATCH] = { "bytes of scratch file", 1u << 30, 64.0 * (1u << 30) },
	[SYNTH_LIMIT_FILE_CALL] = { "bytes moved by one file call", 16u << 20, 16u << 20 },
	[SYNTH_LIMIT_SLEEP] = { "nanoseconds in one replayed sleep", 250e6, 250e6 },
	[SYNTH_LIMIT_MMAP] = { "bytes in one replayed mmap", 1u << 30, 1u << 30 },
	/* the runtime's REGION_MAX (rt_replay.c) */
	[SYNTH_LIMIT_PAGES] = { "bytes in one replayed mprotect or madvise", 64u << 20, 64u << 20 },
	[SYNTH_LIMIT_WRITES] = { "writes per response", 1024, 1024 },
};

void synth_limits_init(struct synth_limits *l, const char *service, bool no_clamp)
{
	l->service = service;
	l->no_clamp = no_clamp;
	l->warned = 0;
	l->processes = 1;
}

double synth_limit_max(const struct synth_limits *l, enum synth_limit id)
{
	return l && l->no_clamp ? defs[id].hard : defs[id].clamp;
}

double synth_limit(struct synth_limits *l, enum synth_limit id, double v)
{
	const struct limit_def *d = &defs[id];
	double max = synth_limit_max(l, id);
	bool runtime = d->hard == d->clamp;

	if (!(v > max))
		return v;
	if (l && !(l->warned & 1u << id)) {
		l->warned |= 1u << id;
		ditto_warn("synth: %s: the model asks for up to %.0f %s; the clone %s %.0f (%s)",
			   l->service ? l->service : "?", v, d->what,
			   runtime ? "runtime's cap is" : "is limited to", max,
			   runtime ? "no option lifts it" :
			   l->no_clamp ? "the most the runtime represents" : "--no-clamp lifts the limit");
	}
	return max;
}
