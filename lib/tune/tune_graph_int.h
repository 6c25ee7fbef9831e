/* SPDX-License-Identifier: MIT */
/*
 * The graph tuner's parts: the tiers' CPU time from /proc
 * (tune_graph_cpu.c), one measurement of a running clone graph
 * (tune_graph_run.c) and the loop (tune_graph.c).
 */
#ifndef DITTO_TUNE_GRAPH_INT_H
#define DITTO_TUNE_GRAPH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <ditto/tune.h>

#include "graph_int.h"

/* CPU nanoseconds so far of each tree roots[k] (the process and its
 * descendants, every thread) into ns[k]; a root <= 0 gets 0. */
int tier_cpu_ns(const pid_t *roots, size_t n, uint64_t *ns);

#define GTIER_POINTS 6

struct ditto_synth_run;

/* The port of a running graph's front tier ("127.0.0.1:PORT"). */
int graph_front_port(const struct ditto_synth_run *run, unsigned *port);

/* One tier under tuning. */
struct gtier {
	const char *name;	/* the plan's node name */
	double target;		/* the original's CPU ns per front request */
	double knob;		/* its synth.cpu_scale now */
	double measured;	/* the candidate's CPU ns per front request */
	double best_knob, best_measured;
	/* Under the busy load (ditto_tune_graph_opts.busy; busy_target 0:
	 * none): the same, and the tier's synth.wake_share. */
	double busy_target, busy_measured, best_busy_measured;
	double wake, best_wake;
	double wake_x, wake_y;	/* the last (wake_share, busy ratio) stepped from */
	bool wake_stepped, wake_at_limit;
	bool loop;		/* its clone serves from an event loop */
	double x[GTIER_POINTS], y[GTIER_POINTS];	/* the last (knob, measured) */
	size_t points;
	bool at_limit;
	double limit;		/* the knob's value when at_limit */
};

/* t's next knob, within [min, max], after its measured value at the
 * knob it has (tune_graph_step.c); at_limit when it cannot move. */
void gtier_step(struct gtier *t, double min, double max);

/*
 * Start the graph tree in dir (ditto_synth_up()), drive its front tier
 * closed-loop (load: port set here) for a warm-up second and then the
 * load's duration, and set tiers[i].measured to each tier's CPU ns per
 * request the front answered; then, when busy is not NULL, the same
 * under that load into tiers[i].busy_measured. Every tier is stopped
 * before returning.
 */
int graph_measure(const char *dir, struct ditto_loadgen_opts *load,
		  struct ditto_loadgen_opts *busy, struct gtier *tiers, size_t n);

/* t's next synth.wake_share, from its CPU per request under the busy
 * load over that under the base load, against its original's
 * (tune_graph_step.c); wake_at_limit when it cannot move. */
void gtier_wake_step(struct gtier *t);

#endif /* DITTO_TUNE_GRAPH_INT_H */
