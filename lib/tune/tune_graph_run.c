/* SPDX-License-Identifier: MIT */
/*
 * One measurement of a clone graph: started as `ditto up` starts it,
 * loaded through its front tier, each tier's CPU time read around the
 * recorded run. The warm-up run before it connects the load's
 * connections and the tiers' pooled connections to their children, so
 * that the recorded run is the steady state the profile saw.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "tune_graph_int.h"

#include <ditto/synth.h>

#define WHAT "clone graph"

int graph_front_port(const struct ditto_synth_run *run, unsigned *port)
{
	const char *a = ditto_synth_up_front(run), *colon = a ? strrchr(a, ':') : NULL;

	*port = colon ? (unsigned)strtoul(colon + 1, NULL, 10) : 0;
	return *port ? 0 : ditto_err(-EPROTO, "tune: the graph's front tier has no address");
}

static int tier_pids(const struct ditto_synth_run *run, const struct gtier *tiers, size_t n,
		     pid_t *pids)
{
	for (size_t i = 0; i < n; i++) {
		pids[i] = 0;
		for (size_t k = 0; k < ditto_synth_up_tier_count(run); k++) {
			const char *name;
			int pid;

			if (!ditto_synth_up_tier(run, k, &name, &pid, NULL) &&
			    !strcmp(name, tiers[i].name))
				pids[i] = pid;
		}
		if (pids[i] <= 0)
			return ditto_err(-ESRCH, "tune: tier '%s' is not running", tiers[i].name);
	}
	return 0;
}

int graph_load_once(struct ditto_loadgen_opts *load, double seconds, const char *what,
		    uint64_t *completed, uint64_t *failed, struct glat *lat)
{
	struct ditto_load_result *res = NULL;
	double d = load->duration_s;
	int err;

	load->duration_s = seconds;
	err = ditto_load_run(load, &res);
	load->duration_s = d;
	if (!err && completed) {
		uint64_t e = ditto_load_result_errors(res);

		*completed = ditto_load_result_completed(res);
		if (lat) {
			lat->p50 = ditto_hist_quantile(ditto_load_result_latency(res), 0.5);
			lat->p99 = ditto_hist_quantile(ditto_load_result_latency(res), 0.99);
		}
		if (failed)
			*failed = e;
		if (e * 20 > *completed)
			ditto_warn("tune: %llu of the %s's %llu requests failed", (unsigned long long)e,
				   what, (unsigned long long)(*completed + e));
	}
	ditto_load_result_free(res);
	return err;
}

int graph_cpu_round(struct ditto_loadgen_opts *load, const pid_t *roots, size_t n,
		    const char *what, double *per_request, struct glat *lat, bool strict)
{
	uint64_t before[GRAPH_ROOTS_MAX], after[GRAPH_ROOTS_MAX], done = 0, failed = 0;
	int err;

	if (n > GRAPH_ROOTS_MAX)
		return ditto_err(-EINVAL, "tune: more than %d processes to measure", GRAPH_ROOTS_MAX);
	err = tier_cpu_ns(roots, n, before);
	err = err ? err : graph_load_once(load, load->duration_s, what, &done, &failed, lat);
	err = err ? err : tier_cpu_ns(roots, n, after);
	if (!err && !done)
		err = ditto_err(-EIO, "tune: the %s answered no request", what);
	if (!err && strict && failed * 20 > done)
		err = ditto_err(-EIO, "tune: the %s failed %llu of %llu requests: the CPU per "
				"request of a failing graph is no target", what,
				(unsigned long long)failed, (unsigned long long)(done + failed));
	/* A thread that ended took its time with it: never negative. */
	for (size_t i = 0; !err && i < n; i++)
		per_request[i] = after[i] > before[i] ? (double)(after[i] - before[i]) /
			(double)done : 0;
	return err;
}

enum which { BASE, BUSY, IDLE };

static double *measured_of(struct gtier *t, enum which w)
{
	return w == BUSY ? &t->busy_measured : w == IDLE ? &t->idle_measured : &t->measured;
}

/*
 * Under the idle load, what a request costs depends on what else the
 * host ran while the tier slept: one burst of it can move a tier's mean
 * by tens of percent between runs with the same knobs (docs/graph.md,
 * "The idle load"), and the footprint's step would follow it. The
 * median of three parts of the run does not.
 */
static double median3(double a, double b, double c)
{
	return a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
}

int graph_idle_round(struct ditto_loadgen_opts *load, size_t n, graph_round_fn round, void *ctx,
		     double *v)
{
	double part[IDLE_PARTS][GRAPH_NODES_MAX + 1], d = load->duration_s;
	int err = 0;

	load->duration_s = d / IDLE_PARTS;
	for (int k = 0; !err && k < IDLE_PARTS; k++)
		err = round(ctx, load, part[k]);
	load->duration_s = d;
	for (size_t i = 0; !err && i <= n; i++)
		v[i] = median3(part[0][i], part[1][i], part[2][i]);
	return err;
}

struct clone_roots {
	const pid_t *pids;
	size_t n;
};

static int clone_round(void *ctx, struct ditto_loadgen_opts *load, double *v)
{
	const struct clone_roots *c = ctx;
	struct glat lat = { 0 };
	int err = graph_cpu_round(load, c->pids, c->n, WHAT, v, &lat, false);

	v[c->n] = lat.p50;
	return err;
}

static int measure_run(struct ditto_synth_run *run, struct ditto_loadgen_opts *load,
		       struct gtier *tiers, size_t n, enum which w, struct gfront *front)
{
	pid_t pids[GRAPH_NODES_MAX];
	double v[GRAPH_NODES_MAX + 1];
	struct glat lat = { 0 };
	int err = graph_front_port(run, &load->port);

	err = err ? err : tier_pids(run, tiers, n, pids);
	err = err ? err : graph_load_once(load, 1, WHAT, NULL, NULL, NULL);
	if (!err && w == IDLE)
		err = graph_idle_round(load, n, clone_round,
				       &(struct clone_roots){ .pids = pids, .n = n }, v);
	else if (!err)
		err = graph_cpu_round(load, pids, n, WHAT, v, &lat, false);
	/* A tier that died meanwhile would read as cheap, or leave the front
	 * answering nothing: the runner says which and how it ended. */
	if (!err || err == -EIO) {
		int wt = ditto_synth_up_wait(run, 0);

		err = wt ? wt : err;
	}
	for (size_t i = 0; !err && i < n; i++)
		*measured_of(&tiers[i], w) = v[i];
	if (!err && w == IDLE)
		front->idle_p50 = v[n];
	if (!err && w == BASE) {
		front->base_p50 = lat.p50;
		front->base_p99 = lat.p99;
	}
	return err;
}

int graph_measure(const char *dir, const struct gloads *ld, struct gtier *tiers, size_t n,
		  struct gfront *front)
{
	/* No backstop of its own (a long --seconds would outlast one): the
	 * run is freed on every path, and PR_SET_PDEATHSIG covers a kill. */
	DITTO_OPTS(ditto_synth_up_opts, uo);
	struct ditto_synth_run *run = NULL;
	int err;

	if (n > GRAPH_NODES_MAX)
		return ditto_err(-EINVAL, "tune: more than %d tiers", GRAPH_NODES_MAX);
	if ((err = ditto_synth_up(dir, &uo, &run)))
		return err;
	err = measure_run(run, ld->base, tiers, n, BASE, front);
	if (!err && ld->busy)
		err = measure_run(run, ld->busy, tiers, n, BUSY, front);
	if (!err && ld->idle)
		err = measure_run(run, ld->idle, tiers, n, IDLE, front);
	ditto_synth_up_free(run);
	return err;
}
