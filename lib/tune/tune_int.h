/* SPDX-License-Identifier: MIT */
/* Internal interface of the feedback loop (tune*.c). */
#ifndef DITTO_TUNE_INT_H
#define DITTO_TUNE_INT_H

#include "tune_policy.h"

#include <stdbool.h>
#include <stddef.h>

#include <ditto/tune.h>

/* ---- knobs (tune_knobs.c) ---- */

/* Tuned metric-knob pairs, and how many (knob, metric) points a knob
 * remembers for its secant steps. */
#define TUNE_TRACKS 8
#define TRACK_POINTS 16


/* One tuned metric and the generator knob that moves it. */
struct track {
	const char *metric;
	const char *knob;
	double x[TRACK_POINTS], y[TRACK_POINTS];
	size_t n;
	unsigned idle;		/* steps in a row that left the metric where it was */
	double idle_from;	/* the knob's value before the first of them */
	bool stalled;		/* idle STALL_STEPS times: no longer stepped */
};

/* The pairs the loop tunes (metric -> knob), in the order they are shown. */
extern const char *const tune_metrics[];
extern const size_t tune_metric_count;

/* The bound a metric must meet for the loop to end, given the loop's:
 * its own where one run's noise is larger than the target. */
double metric_accept_bound(const char *metric, double bound);

void tracks_init(struct track *t);
struct synth_knob;
/* The generator knob named so (NULL if none). */
const struct synth_knob *tune_knob_def(const char *name);
/* Record what the clone gave with the knobs in `knobs`, then move every
 * knob whose metric is out of bound towards its target (a secant step
 * through the knob's two latest distinct points, else a first guess of
 * the slope), inside the knob's range. Returns how many knobs moved. */
unsigned tracks_step(struct track *t, struct ditto_values *knobs, const struct ditto_metrics *target,
		     const struct ditto_metrics *clone, double bound);

struct ditto_tune_report;
/* Why each tuned metric that the best clone leaves out of bound (or
 * whose knob had no effect) is there, into r's stalls and verdict. */
int tracks_diagnose(const struct track *t, const struct ditto_values *knobs,
		    const struct ditto_metrics *target, const struct ditto_metrics *best,
		    double bound, struct ditto_tune_report *r);

/* ---- the original's targets (tune_targets.c) ---- */

struct ditto_service;
/* Targets from what the model recorded (warns that they are). */
int tune_model_targets(struct ditto_service *s, struct ditto_metrics *t);
/* The profile backend's per-request calls and bytes, as the model
 * recorded them (a new *out). */
int tune_model_calls(struct ditto_service *s, struct ditto_metrics **out);

/* The body has one length to tune: where the original's instructions per
 * request were measured, its CPU time per request (which the profiler
 * measures too) is dropped from the targets t. */
void tune_targets_one_body_metric(struct ditto_metrics *t);

/* ---- helpers (tune_util.c) ---- */

/* The graph tuner's rows: this prefix and the tier's name. */
#define TUNE_GRAPH_METRIC "cpu_ns_per_request:"
#define TUNE_GRAPH_BUSY_METRIC "cpu_ns_per_request_busy:"
#define TUNE_GRAPH_IDLE_METRIC "cpu_ns_per_request_idle:"
/* The front's p50 latency under the idle load, the graph's (no node). */
#define TUNE_GRAPH_IDLE_P50_METRIC "latency_p50_ns_idle"
/* The front's p99 latency under the base load, the graph's. */
#define TUNE_GRAPH_P99_METRIC "latency_p99_ns"

/* An iteration to the caller's progress function, else to the log. */
void tune_progress(ditto_tune_progress_fn fn, void *user, unsigned i, double e,
		   const char *worst, bool best, const char *note);
/* The candidate in try_dir becomes dir: the old dir is moved aside
 * first, so a crash between the renames leaves one of them whole (and a
 * failed second rename puts the old one back). */
int tune_keep_best(const char *try_dir, const char *dir);
/* Every entry of src set in dst. */
void tune_values_copy(struct ditto_values *dst, const struct ditto_values *src);
/* dst[name] += w * src[name] for every metric of src (0 where dst has
 * none yet). dst may be src: then it scales src by 1 + w. */
int tune_metrics_add(struct ditto_metrics *dst, const struct ditto_metrics *src, double w);
/* Drops the metric `name` from m, if it is there (metrics.c). */
void tune_metrics_remove(struct ditto_metrics *m, const char *name);

/* A TCP port on 127.0.0.1 free right now (0 when none was found). */
/* The point (xv, yv) after the last *n of x[] and y[] (cap each), the
 * oldest dropped when they are full: a knob's latest (knob, metric). */
void tune_remember(double *x, double *y, size_t *n, size_t cap, double xv, double yv);

/* How the loop and the report run a clone: DIR/clone --port PORT
 * --max-seconds 3600. The caller owns the storage (one per call, say on
 * its stack: no static, so distinct loops may run in distinct threads);
 * argv points into the struct itself, so it is filled in place by
 * tune_clone_cmd_init() and not copied. */
struct tune_clone_cmd {
	char bin[4200], port[16];
	char *argv[6];
};
void tune_clone_cmd_init(struct tune_clone_cmd *c, const char *dir, unsigned port);

/* DIR may be replaced by the loop: absent, empty or a clone tree
 * (-ENOTEMPTY otherwise, -ENOTDIR for a file). */
int tune_dir_check(const char *dir);

/* ---- report (tune_report.c, tune_svg.c, tune_checked_rows.c) ---- */

struct tune_row {
	char *metric;
	double original, clone, error, bound;
};

/* One load point of a latency curve. */
struct tune_point {
	double qps, achieved, p50, p90, p99, p999, max;
};

#define TUNE_POINTS 8

struct tune_stall {
	char *metric, *knob, *text;
	enum ditto_tune_stall_kind kind;
	unsigned steps;
};

struct ditto_tune_report {
	unsigned iterations;
	bool converged;
	struct tune_row *rows;
	size_t nrows, cap;
	struct tune_stall *stalls;
	size_t nstalls;
	char *verdict;
	double bound;	/* the loop's, for metric_accept_bound() */
	struct tune_point curve[2][TUNE_POINTS];	/* [0] original, [1] clone */
	size_t ncurve[2];
};

/* model_rel_error() (model_int.h), except that rates are taken relative
 * to at least 5e-4 and background calls per request to at least 0.2. */
double metric_error(const char *metric, double original, double clone);
int report_row(struct ditto_tune_report *r, const char *metric, double original, double clone,
	       double bound);
/* A stall entry (text: a one-line reason). */
int report_stall(struct ditto_tune_report *r, const char *metric, const char *knob,
		 enum ditto_tune_stall_kind kind, unsigned steps, const char *text);
/* The report's one-line verdict, from its rows and stalls. */
int report_verdict(struct ditto_tune_report *r);
/* A row whose error is not a relative one (a distance). */
int report_row_error(struct ditto_tune_report *r, const char *metric, double original,
		     double clone, double error, double bound);
/* The rows beyond the tuned metrics: syscalls and bytes per request
 * (profiler), and with opts->latency the latency curves, percentiles at
 * low, medium and high load and saturation throughput. The best clone is
 * in opts->dir. Failures are warnings: the report keeps what it has. */
int tune_checked_rows(struct ditto_model *m, struct ditto_service *s,
		    const struct ditto_tune_opts *opts, struct ditto_tune_report *r);

/* A service the report runs natively: its command, port and role. */
struct tune_side {
	char *const *argv;
	unsigned port;
	const char *name;
	/* A graph tree started with ditto_synth_up() instead of argv (its
	 * front's port then). */
	const char *graph_dir;
	/* Non-NULL: the load is GETs of this target (an HTTP front). */
	const char *http_path;
	/* Seconds of load before its saturation is measured (0: none). */
	double warm_s;
};

/* The rows of the clone's CPU windows: mix and dependency distances,
 * loads per instruction. */
void tune_cpu_rows(struct ditto_model *m, struct ditto_service *s, const struct ditto_tune_opts *o,
		   const struct tune_side *clone, struct ditto_tune_report *r);
/* Closed-loop load of the model's service on port, with opts' seed,
 * connections, requests and stop. */
struct ditto_loadgen_opts tune_base_load(struct ditto_model *m, struct ditto_service *s,
					 const struct ditto_tune_opts *opts, unsigned port);
/* The latency rows and curves (tune_latency.c); orig NULL: the model's
 * throughput stands for the original's. Failures are warnings. */
void tune_latency(struct ditto_model *m, struct ditto_service *s, const struct ditto_tune_opts *opts,
		  const struct tune_side *orig, const struct tune_side *clone,
		  struct ditto_tune_report *r);

#endif /* DITTO_TUNE_INT_H */
