/* SPDX-License-Identifier: MIT */
/*
 * The graph tuner: every tier's CPU time per request of the graph, set
 * against its original's in the profile, in the graph itself (each tier
 * under the load its callers give it), one knob per tier. Every
 * candidate tree is written to DIR.try; the best so far is moved into
 * DIR, so DIR always holds a built graph tree whatever stops the loop.
 *
 * CPU time rather than cachegrind's counts: a tier's share of the
 * graph's time per request is what decides where the graph queues, it
 * is measured with every tier running at once, and it needs neither
 * valgrind (tens of times slower: the graph's timing would be another)
 * nor counters (this kind of host has none). The single-service tuner
 * (ditto_tune()) still matches one tier's code shape against its
 * original run alone.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "loadgen_int.h"
#include "measure_int.h"
#include "model_int.h"
#include "synth_int.h"
#include "tune_graph_int.h"
#include "tune_int.h"

#include <ditto/model.h>
#include <ditto/synth.h>

#define KNOB "synth.cpu_scale"
#define WAKE_KNOB "synth.wake_share"
#define FOOT_KNOB "synth.footprint_kib"
#define AFTER_KNOB "synth.footprint_after_share"
#define SPREAD_KNOB "synth.body_spread"

/* errors()'s worst row when it is the graph's, not a tier's */
#define WORST_P50 SIZE_MAX
#define WORST_P99 (SIZE_MAX - 1)

struct gloop {
	struct ditto_model *m;
	struct ditto_tune_graph_opts o;
	struct gplan plan;
	bool planned;
	const struct ditto_service *front;
	struct gtier t[GRAPH_NODES_MAX];
	size_t n;
	struct ditto_values *knobs;
	struct ditto_tune_report *report;
	double best_error;
	bool measured;
	bool busy;		/* busy rows: a busy profile, or the original measured busy */
	bool from_original;	/* targets from the original run (tune_graph_orig.c) */
	bool idle;		/* idle rows: the original measured under the idle load */
	struct gwide share;	/* the idle load's p50 and the footprints' after share */
	bool tail;		/* the p99 row: the original's p99 under the base load */
	struct gwide spread;	/* the base load's p99 and the bodies' spread */
	double p50_measured;	/* the clone's p50 under the base load (with tail) */
	double settle_s;	/* seconds of load the original took to settle */
	char try_dir[4096];
};

static bool stopped(const struct gloop *l)
{
	return l->o.stop && *l->o.stop;
}

static int opts_read(const struct ditto_tune_graph_opts *o, struct ditto_tune_graph_opts *r)
{
	int err = OPTS_CHECK(o, ditto_tune_graph_opts);

	if (err)
		return err;
	memset(r, 0, sizeof(*r));
	r->sz = sizeof(*r);
	r->dir = OPTS_GET(o, dir, NULL);
	r->original_argv = OPTS_GET(o, original_argv, NULL);
	r->original_port = OPTS_GET(o, original_port, 0);
	r->max_iterations = OPTS_GET(o, max_iterations, 0) ? OPTS_GET(o, max_iterations, 0) : 8;
	r->bound = OPTS_GET(o, bound, 0) > 0 ? OPTS_GET(o, bound, 0) : 0.05;
	r->connections = OPTS_GET(o, connections, 0) ? OPTS_GET(o, connections, 0) : 2;
	r->duration_s = OPTS_GET(o, duration_s, 0) > 0 ? OPTS_GET(o, duration_s, 0) : 4;
	r->latency = OPTS_GET(o, latency, false);
	r->latency_s = OPTS_GET(o, latency_s, 0) > 0 ? OPTS_GET(o, latency_s, 0) : 3;
	r->http_path = OPTS_GET(o, http_path, NULL);
	r->keep = OPTS_GET(o, keep, NULL);
	r->keep_count = OPTS_GET(o, keep_count, 0);
	r->seed = OPTS_GET(o, seed, 0) ? OPTS_GET(o, seed, 0) : 1;
	r->cc = OPTS_GET(o, cc, NULL);
	r->progress = OPTS_GET(o, progress, NULL);
	r->user = OPTS_GET(o, user, NULL);
	r->stop = OPTS_GET(o, stop, NULL);
	r->busy = OPTS_GET(o, busy, NULL);
	r->busy_connections = OPTS_GET(o, busy_connections, 0) ? OPTS_GET(o, busy_connections, 0) : 8;
	r->profile_targets = OPTS_GET(o, profile_targets, false);
	r->idle_qps = OPTS_GET(o, idle_qps, 0);
	r->tail = OPTS_GET(o, tail, false);
	if (!r->dir || !*r->dir)
		return ditto_err(-DITTO_EOPTS, "tune: a directory for the graph tree is needed");
	if (r->original_port > 65535)
		return ditto_err(-DITTO_EOPTS, "tune: original_port %u is not a port",
				 r->original_port);
	if (OPTS_GET(o, busy_connections, 0) && !r->busy && (!r->original_argv || r->profile_targets))
		return ditto_err(-DITTO_EOPTS, "tune: busy_connections without a busy profile, nor "
				 "the original's command to measure under that load");
	/* Below 1/s a measurement would last minutes; above 1000/s one
	 * connection's requests queue and no tier is idle between them. */
	if (r->idle_qps && !(r->idle_qps >= 1 && r->idle_qps <= 1000))
		return ditto_err(-DITTO_EOPTS, "tune: idle_qps %g is not a rate in [1, 1000]",
				 r->idle_qps);
	if (r->idle_qps > 0 && (!r->original_argv || r->profile_targets))
		return ditto_err(-DITTO_EOPTS, "tune: idle_qps needs the original's command to "
				 "measure under that load (a profile has no idle figure)");
	if (r->tail && (!r->original_argv || r->profile_targets))
		return ditto_err(-DITTO_EOPTS, "tune: tail needs the original's command to measure "
				 "its p99 latency (a profiled graph answers slower)");
	if (r->keep_count && !r->keep)
		return ditto_err(-DITTO_EOPTS, "tune: keep_count without keep");
	if (r->http_path && !loadgen_http_path_ok(r->http_path))
		return ditto_err(-EINVAL, "tune: HTTP path '%.64s' is not '/' and printable ASCII "
				 "without spaces (at most 1024 bytes)", r->http_path);
	return 0;
}

static void knob_key(const struct gtier *t, char *key, size_t len)
{
	snprintf(key, len, "%s/" KNOB, t->name);
}

static void wake_key(const struct gtier *t, char *key, size_t len)
{
	snprintf(key, len, "%s/" WAKE_KNOB, t->name);
}

static void foot_key(const struct gtier *t, char *key, size_t len)
{
	snprintf(key, len, "%s/" FOOT_KNOB, t->name);
}

/* t's footprint from the model's knobs (a tuned model resumes). */
static void foot_init(struct gloop *l, struct gtier *t)
{
	char key[GRAPH_NAME_MAX + 32];
	double f = 0;

	foot_key(t, key, sizeof(key));
	ditto_values_get(ditto_tuning_knobs(ditto_model_tuning(l->m)), key, &f);
	t->foot = t->best_foot = isfinite(f) ? fmin(fmax(f, 0), FOOT_MAX_KIB) : 0;
}

static void after_key(const struct gtier *t, char *key, size_t len)
{
	snprintf(key, len, "%s/" AFTER_KNOB, t->name);
}

static void spread_key(const struct gtier *t, char *key, size_t len)
{
	snprintf(key, len, "%s/" SPREAD_KNOB, t->name);
}

/* A graph-wide knob from the model's knobs: the first tier's (the loop
 * sets them all alike), within [0, hi]. */
static void wide_init(struct gloop *l, struct gwide *s,
		      void (*key_of)(const struct gtier *, char *, size_t), double hi)
{
	char key[GRAPH_NAME_MAX + 32];
	double v = 0;

	key_of(&l->t[0], key, sizeof(key));
	ditto_values_get(ditto_tuning_knobs(ditto_model_tuning(l->m)), key, &v);
	s->knob = s->best_knob = isfinite(v) ? fmin(fmax(v, 0), hi) : 0;
}

/* Whether the graph has its idle p50 row: idle rows and a target. */
static bool share_held(const struct gloop *l)
{
	return l->idle && l->share.target > 0;
}

/* Whether the graph has its p99 row: asked for and a target. */
static bool tail_held(const struct gloop *l)
{
	return l->tail && l->spread.target > 0;
}

/* Whether t's clone serves from an event loop (a busy row and a wake-up
 * share to move), and its share from the model's knobs. */
static void wake_init(struct gloop *l, struct gtier *t, const struct ditto_service *svc)
{
	enum ditto_io_model io = synth_io_model(svc);
	char key[GRAPH_NAME_MAX + 32];
	double w = 0;

	t->loop = io != DITTO_IO_BLOCKING && io != DITTO_IO_NONBLOCKING;
	wake_key(t, key, sizeof(key));
	ditto_values_get(ditto_tuning_knobs(ditto_model_tuning(l->m)), key, &w);
	t->wake = t->best_wake = isfinite(w) ? fmin(fmax(w, 0), 1) : 0;
}

/* Whether t has a busy row: busy rows asked for, an event loop to share
 * its wake-ups, and a busy target (a tier the original could not be
 * found by has none). */
static bool busy_held(const struct gloop *l, const struct gtier *t)
{
	return l->busy && t->loop && t->busy_target > 0;
}

/* Whether t has an idle row: idle rows asked for and an idle target. */
static bool idle_held(const struct gloop *l, const struct gtier *t)
{
	return l->idle && t->idle_target > 0;
}

/* The original's front port: original_port, else the model's. */
static unsigned front_port(const struct gloop *l)
{
	if (l->o.original_port)
		return l->o.original_port;
	return ditto_service_port_count(l->front) ? ditto_service_port(l->front, 0) : 0;
}

/* t's CPU per front request in the busy profile, by the services' names:
 * the second profile is of the same graph. */
static int busy_target(struct gloop *l, struct gtier *t, const struct ditto_service *svc)
{
	const struct ditto_service *front = ditto_model_find_service(l->o.busy,
								     ditto_service_name(l->front));
	const struct ditto_service *b = ditto_model_find_service(l->o.busy, ditto_service_name(svc));
	uint64_t req = front ? ditto_requests_count(ditto_service_requests(front)) : 0;
	uint64_t ns = b ? measure_service_cpu_ns(b) : 0;

	if (!req || !ns)
		return ditto_err(-EINVAL, "tune: the busy profile has no %s '%s'",
				 !req ? "requests of the front tier" : "CPU time of tier",
				 !req ? ditto_service_name(l->front) : ditto_service_name(svc));
	t->busy_target = (double)ns / (double)req;
	return 0;
}

/* Nodes the front's load reaches through the edges (reach[k]). */
static void reachable(const struct gplan *p, bool *reach)
{
	bool more = true;

	for (size_t k = 0; k < p->n; k++)
		reach[k] = k == p->front;
	while (more) {
		more = false;
		for (size_t i = 0; i < p->ne; i++)
			if (reach[p->edges[i].from] && !reach[p->edges[i].to])
				more = reach[p->edges[i].to] = true;
	}
}

/* Tiers to tune: cloned services of the plan with CPU time in the
 * profile that the front's load reaches (another root's tiers would get
 * no load whatever their knob); their knobs from the model's (a tuned
 * model resumes), within the knob's range. */
static int tiers_init(struct gloop *l)
{
	const struct ditto_tuning *tu = ditto_model_tuning(l->m);
	const struct synth_knob *d = synth_knob_find(KNOB);
	bool reach[GRAPH_NODES_MAX];
	uint64_t req;
	char key[GRAPH_NAME_MAX + 32];

	l->front = l->plan.nodes[l->plan.front].svc;
	req = l->front ? ditto_requests_count(ditto_service_requests(l->front)) : 0;
	if (!req)
		return ditto_err(-EINVAL, "tune: the front tier '%s' %s: nothing to hold the tiers' "
				 "CPU time per request to", l->plan.nodes[l->plan.front].name,
				 l->front ? "served no request in the profile" : "is no profiled service");
	reachable(&l->plan, reach);
	for (size_t k = 0; k < l->plan.n; k++) {
		const struct gnode *g = &l->plan.nodes[k];
		struct gtier *t = &l->t[l->n];
		uint64_t ns = g->svc ? measure_service_cpu_ns(g->svc) : 0;

		if (g->kind != GNODE_CLONE || !ns)
			continue;
		if (!reach[k]) {
			ditto_warn("tune: tier '%s' is not reached from the front '%s': not tuned",
				   g->name, l->plan.nodes[l->plan.front].name);
			continue;
		}
		*t = (struct gtier){ .name = g->name, .target = (double)ns / (double)req, .knob = 1 };
		knob_key(t, key, sizeof(key));
		ditto_values_get(ditto_tuning_knobs(tu), key, &t->knob);
		t->knob = isfinite(t->knob) ? fmin(fmax(t->knob, d->min), d->max) : 1;
		t->best_knob = t->knob;
		t->port = k == l->plan.front ? front_port(l) : ditto_service_port_count(g->svc) ?
			  ditto_service_port(g->svc, 0) : 0;
		wake_init(l, t, g->svc);
		foot_init(l, t);
		if (l->o.busy && !l->from_original && busy_target(l, t, g->svc))
			return -EINVAL;
		l->n++;
	}
	if (!l->n)
		return ditto_err(-EINVAL, "tune: no tier of the graph has CPU time in the model (a "
				 "profile of the tiers under load records it)");
	wide_init(l, &l->share, after_key, 1);
	wide_init(l, &l->spread, spread_key, SPREAD_MAX);
	return 0;
}

static int setup(struct gloop *l, struct ditto_model *m, const struct ditto_tune_graph_opts *o)
{
	const struct ditto_values *model_knobs = ditto_tuning_knobs(ditto_model_tuning(m));
	int err;

	l->m = m;
	if ((err = opts_read(o, &l->o)))
		return err;
	l->from_original = l->o.original_argv && !l->o.profile_targets;
	l->busy = l->o.busy || (l->from_original && OPTS_GET(o, busy_connections, 0));
	l->idle = l->o.idle_qps > 0;
	l->tail = l->o.tail;
	if (l->o.busy && l->from_original)
		ditto_warn("tune: the original graph is measured under the busy load too: the busy "
			   "profile's figures are not used (profile_targets uses them)");
	if (!graph_model_is_graph(m))
		return ditto_err(-EINVAL, "tune: the model is one service, not a graph: "
				 "ditto_tune() tunes it");
	if ((err = ditto_model_validate(m, NULL))) {
		ditto_err_prefix("tune: the model is invalid");
		return err;
	}
	if (l->o.busy && (err = ditto_model_validate(l->o.busy, NULL))) {
		ditto_err_prefix("tune: the busy profile is invalid");
		return err;
	}
	if ((err = gplan_build(m, l->o.keep, l->o.keep_count, &l->plan)))
		return err;
	l->planned = true;
	if ((err = tiers_init(l)) || (err = tune_dir_check(l->o.dir)))
		return err;
	if (snprintf(l->try_dir, sizeof(l->try_dir), "%s.try", l->o.dir) >=
	    (int)sizeof(l->try_dir))
		return ditto_err(-ENAMETOOLONG, "tune: %s: path too long", l->o.dir);
	l->report = calloc(1, sizeof(*l->report));
	l->knobs = ditto_values_new();
	if (!l->report || !l->knobs)
		return ditto_err(-ENOMEM, "tune: out of memory");
	/* Every other knob of the model (a tuned tier's code shape) stays;
	 * names this libditto does not know would be refused by synth. */
	for (size_t i = 0; i < ditto_values_size(model_knobs); i++) {
		const char *k;
		double v;
		size_t scope;

		if (!ditto_values_entry(model_knobs, i, &k, &v) && synth_knob_find_key(k, &scope))
			ditto_values_set(l->knobs, k, v);
	}
	return 0;
}

static int set_knobs(struct gloop *l)
{
	char key[GRAPH_NAME_MAX + 32];
	int err = 0;

	for (size_t i = 0; !err && i < l->n; i++) {
		knob_key(&l->t[i], key, sizeof(key));
		err = ditto_values_set(l->knobs, key, l->t[i].knob);
		wake_key(&l->t[i], key, sizeof(key));
		if (!err && l->busy)
			err = ditto_values_set(l->knobs, key, l->t[i].wake);
		foot_key(&l->t[i], key, sizeof(key));
		if (!err && l->idle)
			err = ditto_values_set(l->knobs, key, l->t[i].foot);
		after_key(&l->t[i], key, sizeof(key));
		if (!err && l->idle)
			err = ditto_values_set(l->knobs, key, l->share.knob);
		spread_key(&l->t[i], key, sizeof(key));
		if (!err && l->tail)
			err = ditto_values_set(l->knobs, key, l->spread.knob);
	}
	return err;
}

static int build_candidate(struct gloop *l)
{
	DITTO_OPTS(ditto_synth_graph_opts, so, .seed = l->o.seed, .knobs = l->knobs,
		   .keep = l->o.keep, .keep_count = l->o.keep_count);
	DITTO_OPTS(ditto_build_opts, bo, .cc = l->o.cc);
	int err;

	synth_rm_tree(l->try_dir);
	if ((err = set_knobs(l)))
		return ditto_err(err, "tune: out of memory");
	err = ditto_synth_graph_write(l->m, l->try_dir, &so);
	return err ? err : ditto_synth_graph_build(l->try_dir, &bo);
}

/* At least this many requests in a measurement under the idle load. */
#define IDLE_REQUESTS 100

/* The base load, the busy and the idle one, as the clone and the
 * original take them (ld's loads in *load, *busy, *idle). */
static void loads(struct gloop *l, struct ditto_loadgen_opts *load,
		  struct ditto_loadgen_opts *busy, struct ditto_loadgen_opts *idle,
		  struct gloads *ld)
{
	*load = (struct ditto_loadgen_opts){
		.sz = sizeof(*load), .mode = DITTO_LOAD_CLOSED,
		.framing = ditto_service_framing(l->front), .connections = l->o.connections,
		.duration_s = l->o.duration_s, .model = l->m, .service = ditto_service_name(l->front),
		.seed = l->o.seed, .stop = l->o.stop, .http_path = l->o.http_path };
	/* An HTTP front is loaded as its clients load it: GETs of a path. */
	if (load->framing == DITTO_FRAMING_HTTP1)
		load->write_share = -1;
	if (load->framing == DITTO_FRAMING_UNKNOWN)
		load->framing = DITTO_FRAMING_RAW;
	*busy = *load;
	busy->connections = l->o.busy_connections;
	/* Evenly spaced: every request finds the graph idle as long. */
	*idle = *load;
	idle->mode = DITTO_LOAD_FIXED;
	idle->qps = l->o.idle_qps;
	idle->connections = 1;
	if (l->idle)
		idle->duration_s = fmax(l->o.duration_s, IDLE_REQUESTS / l->o.idle_qps);
	*ld = (struct gloads){ .base = load, .busy = l->busy ? busy : NULL,
			       .idle = l->idle ? idle : NULL };
}

static int measure(struct gloop *l)
{
	struct ditto_loadgen_opts load, busy, idle;
	struct gloads ld;
	struct gfront front = { 0 };
	int err;

	loads(l, &load, &busy, &idle, &ld);
	if ((err = graph_measure(l->try_dir, &ld, l->t, l->n, &front)))
		return err;
	l->share.measured = front.idle_p50;
	l->spread.measured = front.base_p99;
	l->p50_measured = front.base_p50;
	return 0;
}

/* The targets from the original graph run by its command under the same
 * loads; a tier whose profile says otherwise by more than the bound is
 * named, with both figures (the profiler's cost, or a profile of a tier
 * still compiling). */
static int original_targets(struct gloop *l)
{
	struct ditto_loadgen_opts load, busy, idle;
	struct gloads ld;
	double base[GRAPH_NODES_MAX], busy_v[GRAPH_NODES_MAX];
	struct gidle idle_v = { .p50 = 0 };
	struct gtail tail = { 0 };
	unsigned ports[GRAPH_NODES_MAX];
	const char *names[GRAPH_NODES_MAX];
	struct gorig o = { .argv = l->o.original_argv, .ports = ports, .names = names,
			   .n = l->n, .bound = l->o.bound, .stop = l->o.stop,
			   .front_port = front_port(l), .tail = l->tail ? &tail : NULL };
	int err;

	for (size_t k = 0; k < l->n; k++) {
		ports[k] = l->t[k].port;
		names[k] = l->t[k].name;
		base[k] = l->t[k].target;
		busy_v[k] = l->t[k].busy_target;
	}
	loads(l, &load, &busy, &idle, &ld);
	if ((err = graph_original_measure(&o, &ld, base, busy_v, &idle_v, &l->settle_s)))
		return err;
	for (size_t k = 0; k < l->n; k++) {
		struct gtier *t = &l->t[k];

		if (!t->port)
			ditto_warn("tune: tier '%s' has no TCP port in the model to find it by in the "
				   "original graph: its target is the profile's%s%s", t->name,
				   l->busy ? ", and it has no busy row" : "",
				   l->idle ? ", and no idle row" : "");
		else if (model_rel_error(base[k], t->target) > l->o.bound)
			ditto_warn("tune: tier '%s': %.0f ns per front request in the original graph "
				   "run without the profiler, %.0f in the profile: the clone is held "
				   "to the first", t->name, base[k], t->target);
		t->target = base[k];
		t->busy_target = busy_v[k];
		t->idle_target = idle_v.cpu[k];
		t->idle_bound = fmax(l->o.bound, idle_v.cpu_spread[k]);
	}
	l->share.target = l->idle ? idle_v.p50 : 0;
	l->share.bound = fmax(l->o.bound, idle_v.p50_spread);
	l->spread.target = tail.p99;
	l->spread.bound = fmax(l->o.bound, tail.p99_spread);
	return 0;
}

/* Measured again and averaged: near the bound either way, one run's
 * noise (a tier's CPU per request moves by several percent from run to
 * run on a small host) would decide. */
static int measure_again(struct gloop *l)
{
	double first[GRAPH_NODES_MAX], busy[GRAPH_NODES_MAX], idle[GRAPH_NODES_MAX];
	double p50 = l->share.measured, p99 = l->spread.measured, base_p50 = l->p50_measured;
	int err;

	for (size_t k = 0; k < l->n; k++) {
		first[k] = l->t[k].measured;
		busy[k] = l->t[k].busy_measured;
		idle[k] = l->t[k].idle_measured;
	}
	if ((err = measure(l)))
		return err;
	for (size_t k = 0; k < l->n; k++) {
		l->t[k].measured = (first[k] + l->t[k].measured) / 2;
		l->t[k].busy_measured = (busy[k] + l->t[k].busy_measured) / 2;
		l->t[k].idle_measured = (idle[k] + l->t[k].idle_measured) / 2;
	}
	l->share.measured = (p50 + l->share.measured) / 2;
	l->spread.measured = (p99 + l->spread.measured) / 2;
	l->p50_measured = (base_p50 + l->p50_measured) / 2;
	return 0;
}

/* A tier that serves from no event loop has no knob for its busy load:
 * its error there is not the loop's (finish() warns with it). */
static double busy_error(const struct gtier *t)
{
	return t->busy_target > 0 && t->loop ? model_rel_error(t->busy_target, t->busy_measured) : 0;
}

static double idle_error(const struct gtier *t)
{
	return t->idle_target > 0 ? model_rel_error(t->idle_target, t->idle_measured) : 0;
}

/* An error as the loop weighs it when its row has a bound of its own
 * (the original's spread, when wider than the loop's): scaled to the
 * loop's bound, so that it is in exactly when within its own, and the
 * rows are ranked by how far out of their own bounds they are. */
static double loop_error(const struct gloop *l, double e, double own_bound)
{
	return own_bound > 0 ? e * l->o.bound / own_bound : e;
}

static double idle_loop_error(const struct gloop *l, const struct gtier *t)
{
	return loop_error(l, idle_error(t), t->idle_bound);
}

/* A graph-wide row's latency against the original's (held rows only). */
static double wide_error(const struct gwide *s)
{
	return model_rel_error(s->target, s->measured);
}

static double wide_loop_error(const struct gloop *l, const struct gwide *s)
{
	return loop_error(l, wide_error(s), s->bound);
}

/* A graph-wide row into rec, and into *max and *worst (as which) when
 * it is the worst so far. */
static void wide_row(const struct gloop *l, const struct gwide *s, const char *metric,
		     size_t which, struct ditto_values *rec, double *max, size_t *worst)
{
	double e = wide_loop_error(l, s);

	ditto_values_set(rec, metric, wide_error(s));
	if (e > *max) {
		*max = e;
		*worst = which;
	}
}

/* The largest error of the candidate; its tier's index in *worst
 * (WORST_P50, WORST_P99: the graph's rows). */
static double errors(struct gloop *l, struct ditto_values *rec, size_t *worst)
{
	char key[GRAPH_NAME_MAX + 32];
	double max = -1;

	for (size_t i = 0; i < l->n; i++) {
		double e = model_rel_error(l->t[i].target, l->t[i].measured), eb = 0, ei = 0;

		snprintf(key, sizeof(key), TUNE_GRAPH_METRIC "%s", l->t[i].name);
		ditto_values_set(rec, key, e);
		if (busy_held(l, &l->t[i])) {
			eb = busy_error(&l->t[i]);
			snprintf(key, sizeof(key), TUNE_GRAPH_BUSY_METRIC "%s", l->t[i].name);
			ditto_values_set(rec, key, eb);
		}
		if (idle_held(l, &l->t[i])) {
			ei = idle_loop_error(l, &l->t[i]);
			snprintf(key, sizeof(key), TUNE_GRAPH_IDLE_METRIC "%s", l->t[i].name);
			ditto_values_set(rec, key, idle_error(&l->t[i]));
		}
		if (fmax(e, fmax(eb, ei)) > max) {
			max = fmax(e, fmax(eb, ei));
			*worst = i;
		}
	}
	if (share_held(l))
		wide_row(l, &l->share, TUNE_GRAPH_IDLE_P50_METRIC, WORST_P50, rec, &max, worst);
	if (tail_held(l))
		wide_row(l, &l->spread, TUNE_GRAPH_P99_METRIC, WORST_P99, rec, &max, worst);
	return max;
}

static int keep_best(struct gloop *l)
{
	return tune_keep_best(l->try_dir, l->o.dir);
}

static void progress(struct gloop *l, unsigned i, double e, const char *worst, bool best,
		     const char *note)
{
	tune_progress(l->o.progress, l->o.user, i, e, worst, best, note);
}

static int record_failure(struct gloop *l, struct ditto_tuning_iter *it, unsigned i)
{
	char note[512];

	snprintf(note, sizeof(note), "clone graph failed: %s", ditto_last_error());
	ditto_tuning_iter_set_note(it, note);
	progress(l, i, 1, "none", false, note);
	if (stopped(l))
		return -ECANCELED;
	for (size_t k = 0; k < l->n; k++) {	/* back to the best knobs */
		l->t[k].knob = l->t[k].best_knob;
		l->t[k].wake = l->t[k].best_wake;
		l->t[k].foot = l->t[k].best_foot;
	}
	l->share.knob = l->share.best_knob;
	l->spread.knob = l->spread.best_knob;
	return l->measured ? 0 : -ECHILD;
}

/* What the worst row of an iteration is, and by how much. */
static void iteration_note(const struct gloop *l, const struct gtier *t, double e, bool twice,
			   char *note, size_t len)
{
	bool busy = l->busy && busy_error(t) == e;
	bool idle = !busy && l->idle && idle_loop_error(l, t) == e;
	double measured = busy ? t->busy_measured : idle ? t->idle_measured : t->measured;
	double target = busy ? t->busy_target : idle ? t->idle_target : t->target;
	char bound[48] = "";

	if (idle)
		snprintf(bound, sizeof(bound), ", bound %.1f%%", 100 * t->idle_bound);
	c_snprintf(note, len, "%s: %.0f ns per request against %.0f (%.1f%% off%s)%s%s", t->name,
		   measured, target, 100 * model_rel_error(target, measured), bound,
		   busy ? " under the busy load" : idle ? " under the idle load" : "",
		   twice ? " (mean of 2 runs)" : "");
}

/* What a graph-wide row is at: which latency, under which load, and
 * its knob. */
static void wide_note(const struct gwide *s, const char *what, const char *knob, bool twice,
		      char *note, size_t len)
{
	c_snprintf(note, len, "%s %.0f ns against %.0f (%.1f%% off, bound %.1f%%, %s %.2f)%s",
		   what, s->measured, s->target, 100 * wide_error(s), 100 * s->bound, knob,
		   s->knob, twice ? " (mean of 2 runs)" : "");
}

/*
 * The p99 the spread's step is given: the clone's as if its tiers' CPU
 * per request were their targets. Its tail above its p50 grows with its
 * bodies' length as much as with their spread, and while the tiers'
 * knobs are far off (the first iterations run bodies a fifth of their
 * targets' length) the spread would chase their CPU time: the excess
 * over the p50 is scaled by the tiers' targets over what they measured,
 * summed; the p99 as measured once they are their targets, so that the
 * step aims at the row. Beyond a factor of TAIL_REACH either way the
 * clone's tail says little of its bodies' spread (the host's noise, or
 * bodies queued behind each other): 0, no step.
 */
#define TAIL_REACH 2.0

/* The tiers' CPU per request under the base load, summed: their
 * targets (the bodies the scaled p99 stands for, and so what the spread
 * draws out), or with measured what the candidate ran. */
static double tiers_ns(const struct gloop *l, bool measured)
{
	double sum = 0;

	for (size_t k = 0; k < l->n; k++)
		sum += measured ? l->t[k].measured : l->t[k].target;
	return sum;
}

static double tail_p99(const struct gloop *l)
{
	double body = tiers_ns(l, true), f;

	if (!(l->p50_measured > 0) || !(body > 0))
		return 0;
	f = tiers_ns(l, false) / body;
	if (f > TAIL_REACH || f < 1 / TAIL_REACH)
		return 0;
	return l->p50_measured + fmax(l->spread.measured - l->p50_measured, 0) * f;
}

/* What the tiers' footprints cost more after idle time, summed over the
 * tiers that have one: what the after share moves at most. */
static double walk_ns(const struct gloop *l)
{
	double sum = 0;

	for (size_t k = 0; k < l->n; k++)
		if (l->t[k].foot > 0)
			sum += fmax(l->t[k].idle_measured - l->t[k].measured, 0);
	return sum;
}

/* 1: every tier within bound; 0: go on; 2: no tier out of bound can
 * move; < 0: an error that ends the loop. */
static int iteration(struct gloop *l)
{
	struct ditto_tuning_iter *it = ditto_tuning_add_iteration(ditto_model_tuning_ensure(l->m));
	const struct synth_knob *d = synth_knob_find(KNOB);
	size_t worst = 0;
	unsigned i, moving = 0;
	char note[512];
	double e;
	bool best, twice;
	int err;

	if (!it || set_knobs(l))
		return ditto_err(-ENOMEM, "tune: out of memory");
	i = (unsigned)ditto_tuning_iter_index(it);
	tune_values_copy(ditto_tuning_iter_knobs_ensure(it), l->knobs);
	if ((err = build_candidate(l)) || (err = measure(l)))
		return record_failure(l, it, i);
	e = errors(l, ditto_tuning_iter_errors_ensure(it), &worst);
	twice = e > l->o.bound / 2 && e < 2 * l->o.bound;
	if (twice && (err = measure_again(l)))
		return record_failure(l, it, i);
	e = twice ? errors(l, ditto_tuning_iter_errors_ensure(it), &worst) : e;
	if (worst == WORST_P50)
		wide_note(&l->share, "p50 latency under the idle load", AFTER_KNOB, twice, note,
			  sizeof(note));
	else if (worst == WORST_P99)
		wide_note(&l->spread, "p99 latency under the base load", SPREAD_KNOB, twice, note,
			  sizeof(note));
	else
		iteration_note(l, &l->t[worst], e, twice, note, sizeof(note));
	ditto_tuning_iter_set_note(it, note);
	best = !l->measured || e < l->best_error;
	if (best) {
		if ((err = keep_best(l)))
			return err;
		l->measured = true;
		l->best_error = e;
		for (size_t k = 0; k < l->n; k++) {
			l->t[k].best_knob = l->t[k].knob;
			l->t[k].best_measured = l->t[k].measured;
			l->t[k].best_wake = l->t[k].wake;
			l->t[k].best_busy_measured = l->t[k].busy_measured;
			l->t[k].best_foot = l->t[k].foot;
			l->t[k].best_idle_measured = l->t[k].idle_measured;
		}
		l->share.best_knob = l->share.knob;
		l->share.best_measured = l->share.measured;
		l->spread.best_knob = l->spread.knob;
		l->spread.best_measured = l->spread.measured;
		ditto_tuning_iter_set_accepted(it, true);
	}
	progress(l, i, e, worst >= WORST_P99 ? "end to end" : l->t[worst].name, best, note);
	if (e <= l->o.bound)
		return 1;
	/* the footprints measured, before their own steps move them */
	if (share_held(l) && wide_error(&l->share) > l->share.bound &&
	    gshare_step(&l->share, walk_ns(l)))
		moving += !l->share.at_limit;
	if (tail_held(l) && wide_error(&l->spread) > l->spread.bound &&
	    gtail_step(&l->spread, tail_p99(l), tiers_ns(l, false)))
		moving += !l->spread.at_limit;
	for (size_t k = 0; k < l->n; k++) {
		if (model_rel_error(l->t[k].target, l->t[k].measured) > l->o.bound) {
			gtier_step(&l->t[k], d->min, d->max);
			moving += !l->t[k].at_limit;
		}
		if (busy_error(&l->t[k]) > l->o.bound) {
			gtier_wake_step(&l->t[k]);
			moving += !l->t[k].wake_at_limit;
		}
		if (idle_error(&l->t[k]) > l->t[k].idle_bound) {
			gtier_foot_step(&l->t[k]);
			moving += !l->t[k].foot_at_limit;
		}
	}
	return moving ? 0 : 2;
}

/* A second or third row of t out of bound at its best: why, in the
 * report (its knob key at value v at a limit, what that means when v is
 * above 0 or at 0, or the iterations ran out). */
struct row_stall {
	const char *prefix;	/* the row's metric prefix */
	char key[GRAPH_NAME_MAX + 32];
	double v;
	bool at_limit;
	const char *at_max, *at_zero;
};

static void row_stall(struct gloop *l, const struct gtier *t, const struct row_stall *st,
		      unsigned ran)
{
	char metric[GRAPH_NAME_MAX + 32], text[GRAPH_NAME_MAX + 256];

	snprintf(metric, sizeof(metric), "%s%s", st->prefix, t->name);
	if (st->at_limit)
		snprintf(text, sizeof(text), "%s is at its limit %g: %s", st->key, st->v,
			 st->v > 0 ? st->at_max : st->at_zero);
	else
		snprintf(text, sizeof(text), "%s was still moving after %u iterations", st->key,
			 ran);
	report_stall(l->report, metric, st->key, st->at_limit ? DITTO_TUNE_AT_LIMIT :
		     DITTO_TUNE_UNFINISHED, ran, text);
}

/* Why an event-loop tier's busy row is out (its synth.wake_share), and
 * a tier's idle row (its synth.footprint_kib). */
static void busy_idle_stalls(struct gloop *l, const struct gtier *t, unsigned ran)
{
	struct row_stall busy = {
		.prefix = TUNE_GRAPH_BUSY_METRIC, .v = t->wake_limit, .at_limit = t->wake_at_limit,
		.at_max = "the clone's CPU per request cannot fall further with its load than "
			  "the original's",
		.at_zero = "the clone's CPU per request falls more with its load than the "
			   "original's" };
	struct row_stall idle = {
		.prefix = TUNE_GRAPH_IDLE_METRIC, .v = t->foot_limit, .at_limit = t->foot_at_limit,
		.at_max = "the clone's CPU per request after idle time cannot rise further than "
			  "the original's",
		.at_zero = "the clone's CPU per request after idle time already rises more than "
			   "the original's" };

	wake_key(t, busy.key, sizeof(busy.key));
	foot_key(t, idle.key, sizeof(idle.key));
	if (busy_held(l, t) && model_rel_error(t->busy_target, t->best_busy_measured) > l->o.bound)
		row_stall(l, t, &busy, ran);
	if (idle_held(l, t) && model_rel_error(t->idle_target, t->best_idle_measured) >
	    t->idle_bound)
		row_stall(l, t, &idle, ran);
}

/* Why a graph-wide row is out: its knob at a limit (and whether the
 * clone graph's latency is above the original's or below: said from the
 * row, not from the limit, as the spread steps on a scaled p99), never
 * stepped (why), or the iterations ran out. */
struct wide_why {
	const char *metric, *knob, *slower, *faster, *still;
};

static void wide_stall(struct gloop *l, const struct gwide *s, const struct wide_why *w,
		       unsigned ran)
{
	char text[256];

	if (model_rel_error(s->target, s->best_measured) <= s->bound)
		return;
	if (s->at_limit)
		snprintf(text, sizeof(text), "every tier's %s is at its limit %g: %s", w->knob,
			 s->limit, s->best_measured > s->target ? w->slower : w->faster);
	else if (!s->stepped || s->held)
		snprintf(text, sizeof(text), "every tier's %s stood still%s: %s", w->knob,
			 s->stepped ? " at the end" : "", w->still);
	else
		snprintf(text, sizeof(text), "every tier's %s was still moving after %u "
			 "iterations", w->knob, ran);
	report_stall(l->report, w->metric, w->knob, s->at_limit ? DITTO_TUNE_AT_LIMIT :
		     DITTO_TUNE_UNFINISHED, ran, text);
}

/* The idle load's p50 (at 1 every walk is after the response, at 0
 * before it) and the base load's p99 (at 2 the bodies spread most, at 0
 * every body of a tier is the same length). */
static void wide_stalls(struct gloop *l, unsigned ran)
{
	static const struct wide_why share = {
		.metric = TUNE_GRAPH_IDLE_P50_METRIC, .knob = AFTER_KNOB,
		.slower = "the clone graph answers slower after idle time than the original",
		.faster = "the clone graph answers faster after idle time than the original",
		.still = "no tier has a footprint that costs more after idle time" };
	static const struct wide_why spread = {
		.metric = TUNE_GRAPH_P99_METRIC, .knob = SPREAD_KNOB,
		.slower = "the clone graph's slowest requests are slower than the original's",
		.faster = "the clone graph's slowest requests are faster than the original's",
		.still = "the tiers' CPU per request, summed, was beyond a factor of 2 of their "
			 "targets', where the clone's tail tells little of its bodies' spread" };

	if (share_held(l))
		wide_stall(l, &l->share, &share, ran);
	if (tail_held(l))
		wide_stall(l, &l->spread, &spread, ran);
}

/* Why each tier left out of bound is out: its knob at a limit, or the
 * iterations ran out while it moved. */
static void stalls(struct gloop *l, unsigned ran)
{
	char metric[GRAPH_NAME_MAX + 32], key[GRAPH_NAME_MAX + 32], text[256];

	for (size_t k = 0; k < l->n; k++) {
		const struct gtier *t = &l->t[k];

		if (model_rel_error(t->target, t->best_measured) <= l->o.bound)
			continue;
		snprintf(metric, sizeof(metric), TUNE_GRAPH_METRIC "%s", t->name);
		knob_key(t, key, sizeof(key));
		if (t->at_limit)
			snprintf(text, sizeof(text), "%s is at its limit %g: %s", key, t->limit,
				 t->best_measured > t->target ? "the clone's runtime alone costs "
				 "more than the original's tier" : "the body cannot grow further");
		else
			snprintf(text, sizeof(text), "%s was still moving after %u iterations", key,
				 ran);
		report_stall(l->report, metric, key, t->at_limit ? DITTO_TUNE_AT_LIMIT :
			     DITTO_TUNE_UNFINISHED, ran, text);
	}
	for (size_t k = 0; k < l->n; k++)
		busy_idle_stalls(l, &l->t[k], ran);
	wide_stalls(l, ran);
}

/* End to end: the original graph (its command) against the best clone
 * graph in dir, at low, medium and high load, with noise rows. */
static void latency(struct gloop *l)
{
	DITTO_OPTS(ditto_tune_opts, to, .dir = l->o.dir, .seed = l->o.seed,
		   .connections = l->o.connections, .latency = true, .latency_s = l->o.latency_s,
		   .stop = l->o.stop);
	bool http = ditto_service_framing(l->front) == DITTO_FRAMING_HTTP1;
	const char *path = !http ? NULL : l->o.http_path ? l->o.http_path : "/";
	struct tune_side orig, clone = { .graph_dir = l->o.dir, .name = "clone graph",
					 .http_path = path };

	/* Warmed as long as it took to settle for the targets (none when they
	 * are the profile's: nothing says how long it needs). */
	orig = (struct tune_side){ .argv = l->o.original_argv, .port = front_port(l),
				   .name = "original graph", .http_path = path,
				   .warm_s = l->settle_s };
	tune_latency(l->m, (struct ditto_service *)l->front, &to,
		     l->o.original_argv ? &orig : NULL, &clone, l->report);
}

/* The end-to-end check is part of the verdict: tiers each within bound
 * whose graph answers in twice the original's p99 do not stand in for
 * it, and the loop is not called converged then. */
static int verdict(struct ditto_tune_report *r, bool latency)
{
	const struct tune_row *w = NULL;
	bool rows = false;
	char *v;
	int err;

	for (size_t i = 0; i < r->nrows; i++) {
		const struct tune_row *row = &r->rows[i];

		rows |= !strncmp(row->metric, "p99_ns_", 7) && row->bound > 0;
		if (!strncmp(row->metric, "p99_ns_", 7) && row->bound > 0 &&
		    row->error > row->bound && (!w || row->error > w->error))
			w = row;
	}
	/* Asked for and not measured (the original failed, a stop): the
	 * whole was not checked, which is no pass. */
	r->converged &= !w && (rows || !latency);
	if ((err = report_verdict(r)) || (!w && (rows || !latency)))
		return err;
	if (!w)
		err = asprintf(&v, "%s; end to end: not measured (the warning before the "
			       "report says why)", r->verdict);
	else
		err = asprintf(&v, "%s; end to end: %s %.2f%% off the original graph's "
			       "(bound %.2f%%)", r->verdict, w->metric, 100 * w->error,
			       100 * w->bound);
	if (err < 0)
		return ditto_err(-ENOMEM, "tune: out of memory");
	free(r->verdict);
	r->verdict = v;
	return 0;
}

/* Whether t has a busy row: else a warning says what its busy load gave. */
static bool busy_row(const struct gtier *t)
{
	if (t->loop)
		return true;
	ditto_warn("tune: tier '%s' serves from no event loop (a thread per connection, or busy "
		   "polling): its CPU per request under the busy load, %.0f ns against the "
		   "original's %.0f, has no wake-ups to share and is not tuned", t->name,
		   t->best_busy_measured, t->busy_target);
	return false;
}

/* The best knobs go to the model; the report compares the original's
 * tiers with the best clone's. */
static int finish(struct gloop *l, unsigned ran, bool converged)
{
	struct ditto_values *knobs = ditto_tuning_knobs_ensure(ditto_model_tuning_ensure(l->m));
	char metric[GRAPH_NAME_MAX + 32];

	for (size_t k = 0; k < l->n; k++) {
		l->t[k].knob = l->t[k].best_knob;
		l->t[k].wake = l->t[k].best_wake;
		l->t[k].foot = l->t[k].best_foot;
	}
	l->share.knob = l->share.best_knob;
	l->spread.knob = l->spread.best_knob;
	if (set_knobs(l))
		return ditto_err(-ENOMEM, "tune: out of memory");
	tune_values_copy(knobs, l->knobs);
	for (size_t k = 0; k < l->n; k++) {
		snprintf(metric, sizeof(metric), TUNE_GRAPH_METRIC "%s", l->t[k].name);
		report_row(l->report, metric, l->t[k].target, l->t[k].best_measured, l->o.bound);
		if (l->busy && l->t[k].busy_target > 0 && busy_row(&l->t[k])) {
			snprintf(metric, sizeof(metric), TUNE_GRAPH_BUSY_METRIC "%s", l->t[k].name);
			report_row(l->report, metric, l->t[k].busy_target,
				   l->t[k].best_busy_measured, l->o.bound);
		}
		if (!idle_held(l, &l->t[k]))
			continue;
		snprintf(metric, sizeof(metric), TUNE_GRAPH_IDLE_METRIC "%s", l->t[k].name);
		report_row(l->report, metric, l->t[k].idle_target, l->t[k].best_idle_measured,
			   l->t[k].idle_bound);
	}
	if (share_held(l))
		report_row(l->report, TUNE_GRAPH_IDLE_P50_METRIC, l->share.target,
			   l->share.best_measured, l->share.bound);
	if (tail_held(l))
		report_row(l->report, TUNE_GRAPH_P99_METRIC, l->spread.target,
			   l->spread.best_measured, l->spread.bound);
	l->report->iterations = ran;
	l->report->converged = converged;
	l->report->bound = l->o.bound;
	stalls(l, ran);
	if (l->o.latency && !stopped(l))
		latency(l);
	return verdict(l->report, l->o.latency && l->o.original_argv);
}

static void cleanup(struct gloop *l)
{
	synth_rm_tree(l->try_dir);
	ditto_values_free(l->knobs);
	ditto_tune_report_free(l->report);
	if (l->planned)
		gplan_free(&l->plan);
}

DITTO_API int ditto_tune_graph(struct ditto_model *m, const struct ditto_tune_graph_opts *opts,
			       struct ditto_tune_report **out)
{
	struct gloop l = { 0 };
	unsigned i = 0;
	int err, rc = 0;

	if (!out || !m)
		return ditto_err(-DITTO_EOPTS, "tune: a model and an out pointer are needed");
	*out = NULL;
	err = setup(&l, m, opts);
	if (!err && l.from_original && (err = original_targets(&l))) {
		cleanup(&l);
		return err;
	}
	for (; !err && i < l.o.max_iterations && rc == 0; i++) {
		if (stopped(&l)) {
			err = -ECANCELED;
			break;
		}
		rc = iteration(&l);
		err = rc < 0 ? rc : 0;
	}
	if (l.measured) {
		int ferr = finish(&l, i, rc == 1);

		err = err == -ECANCELED ? 0 : err ? err : ferr;
		*out = l.report;
		l.report = NULL;
	} else if (err == -ECANCELED) {
		ditto_err(err, "tune: stopped before any clone graph was measured");
	} else if (err == -ECHILD) {
		ditto_err_prefix("tune: no clone graph could be built and measured");
	}
	cleanup(&l);
	return err;
}
