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
	unsigned port;		/* its original listens there (0: no TCP port) */
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
	double wake_limit;	/* the share when wake_at_limit */
	bool loop;		/* its clone serves from an event loop */
	/* Under the idle load (ditto_tune_graph_opts.idle_qps; idle_target
	 * 0: none): the same, and the tier's synth.footprint_kib. */
	double idle_target, idle_measured, best_idle_measured;
	double idle_bound;	/* the row's: at least the original's own spread */
	double foot, best_foot;
	double foot_x, foot_y;	/* the last (footprint, idle - base ns) stepped from */
	bool foot_stepped, foot_at_limit;
	double foot_limit;	/* the footprint when foot_at_limit */
	double x[GTIER_POINTS], y[GTIER_POINTS];	/* the last (knob, measured) */
	size_t points;
	bool at_limit;
	double limit;		/* the knob's value when at_limit */
};

/* t's next knob, within [min, max], after its measured value at the
 * knob it has (tune_graph_step.c); at_limit when it cannot move. */
void gtier_step(struct gtier *t, double min, double max);

/* The loads of one measurement: base always, busy and idle when not NULL. */
struct gloads {
	struct ditto_loadgen_opts *base, *busy, *idle;
};

/* The front's latency percentiles over a run (ns). */
struct glat {
	double p50, p99;
};

/* What one measurement reads at the front: its p50 under the idle load,
 * its p50 and p99 under the base load. */
struct gfront {
	double idle_p50, base_p50, base_p99;
};

/*
 * Start the graph tree in dir (ditto_synth_up()), drive its front tier
 * closed-loop (ld->base: port set here) for a warm-up second and then
 * the load's duration, and set tiers[i].measured to each tier's CPU ns
 * per request the front answered, and the front's p50 and p99 latency
 * there into front->base_p50 and base_p99; then the same under ld->busy into
 * tiers[i].busy_measured and under ld->idle (the median of three parts
 * of the run) into idle_measured, and the front's p50 latency there
 * (the same median) into front->idle_p50. Every tier is stopped before
 * returning.
 */
int graph_measure(const char *dir, const struct gloads *ld, struct gtier *tiers, size_t n,
		  struct gfront *front);

/* Processes one measurement reads at most (a tier's may be several). */
#define GRAPH_ROOTS_MAX (4 * GRAPH_NODES_MAX)

/* Run load for seconds; *completed and *failed (either may be NULL) the
 * requests answered and failed, with a warning naming what when more
 * than 5% failed; with completed, *lat (may be NULL) their latency. */
int graph_load_once(struct ditto_loadgen_opts *load, double seconds, const char *what,
		    uint64_t *completed, uint64_t *failed, struct glat *lat);
/* One recorded run of load's duration: each roots[i]'s CPU ns (its
 * process tree; a process under two roots counts for the nearer) per
 * request answered into per_request[i], and their latency into *lat
 * (may be NULL); -EIO (what names the graph) when none was answered,
 * or, strict, when more than 5% failed. */
int graph_cpu_round(struct ditto_loadgen_opts *load, const pid_t *roots, size_t n,
		    const char *what, double *per_request, struct glat *lat, bool strict);

/* Whether pid descends from (or is) root, by /proc's parents. */
bool pid_descends(pid_t pid, pid_t root);

/* The original graph under the idle load: each tier's CPU per request
 * and the front's p50, the medians of the rounds, with their spreads. */
struct gidle {
	double cpu[GRAPH_NODES_MAX], cpu_spread[GRAPH_NODES_MAX];
	double p50, p50_spread;
};

/* The original's front under the base load: the median of its rounds'
 * p99 latency, and how far they spread (half their range over their
 * median: how finely one measurement tells two figures apart). */
struct gtail {
	double p99, p99_spread;
};

struct gorig {
	char *const *argv;
	unsigned front_port;
	const unsigned *ports;
	const char *const *names;	/* tiers' names, for messages */
	size_t n;
	double bound;
	const volatile int *stop;
	struct gtail *tail;	/* not NULL: the front's p99 under the base load */
};

/*
 * The original graph measured as graph_measure() measures a clone
 * (tune_graph_orig.c): argv started in a process group of its own, each
 * tier i found by ports[i] (the process tree under argv's that listens
 * there; 0: not measured, v[i] left alone), the front on front_port;
 * rounds of ld->base until each tier's CPU per request settles within
 * bound, into base[i], then the same under ld->busy into busy_v[i]
 * (when not NULL), and the median of a fixed number of rounds under
 * ld->idle into idle->cpu[i] (when not NULL; idle->p50 the front's p50
 * latency there, ns, the same median; each with how far its rounds
 * spread: half their range over their median); with o->tail, the
 * front's p99 latency under ld->base in a fixed number of rounds once it
 * settled into *o->tail; *settle_s the
 * seconds of base load that took (warm-up included). Everything argv
 * started is stopped before returning.
 */
int graph_original_measure(const struct gorig *o, const struct gloads *ld, double *base,
			   double *busy_v, struct gidle *idle, double *settle_s);

/* t's next synth.wake_share, from its CPU per request under the busy
 * load over that under the base load, against its original's
 * (tune_graph_step.c); wake_at_limit when it cannot move. */
void gtier_wake_step(struct gtier *t);

/* Parts of a run under the idle load, each tier's median kept (the
 * original's and a clone's alike: a median of means of fewer requests
 * sits lower where a few requests cost much more). */
#define IDLE_PARTS 3

/* One measurement of n tiers under load into v[0..n-1], the front's p50
 * latency (ns) into v[n] (a clone's or the original's rounds). */
typedef int (*graph_round_fn)(void *ctx, struct ditto_loadgen_opts *load, double *v);

/* round run over IDLE_PARTS parts of load's duration; each tier's
 * median into v[i], the p50's into v[n] (v holds n + 1). */
int graph_idle_round(struct ditto_loadgen_opts *load, size_t n, graph_round_fn round, void *ctx,
		     double *v);

/* t's next synth.footprint_kib, from its CPU per request under the idle
 * load less that under the base load, against its original's
 * (tune_graph_step.c); foot_at_limit when it cannot move. */
#define FOOT_MAX_KIB 65536
void gtier_foot_step(struct gtier *t);

/*
 * A knob set alike on every tier, held by one row of the front's: one
 * latency tells how much of the tiers' cost lies on the request's path,
 * or in its tail, not which tier's. The idle load's p50 and the share
 * of every tier's footprint walked after the response
 * (NODE/synth.footprint_after_share); the base load's p99 and the spread
 * of every tier's body length (NODE/synth.body_spread).
 */
struct gwide {
	double target, measured, best_measured;	/* the front's latency, ns */
	double bound;		/* the row's: at least the original's own spread */
	double knob, best_knob;
	double x, y;		/* the last (knob, latency) stepped from */
	bool stepped, at_limit;
	bool held;		/* its last step was not taken: no input to step on */
	double limit;		/* the knob when at_limit */
};

/* s's next after share in [0, 1] from its p50 against the target;
 * walk_ns the tiers' CPU per request under the idle load over that under
 * the base load, summed over tiers with a footprint (the most the share
 * takes off the path, tiers in series). False, and no step, while
 * walk_ns or the p50 is 0. */
bool gshare_step(struct gwide *s, double walk_ns);

/* s's next body spread in [0, SPREAD_MAX] (the knob table's maximum)
 * from p99 against the target (the loop passes tail_p99(): the clone's
 * p99 as if its tiers' CPU were their targets, 0 while they are beyond
 * a factor of 2); body_ns the tiers' targets under the base load,
 * summed (what the spread draws out, tiers in series). False, and no
 * step, while body_ns or p99 is 0. */
#define SPREAD_MAX 2.0
bool gtail_step(struct gwide *s, double p99, double body_ns);

#endif /* DITTO_TUNE_GRAPH_INT_H */
