/* SPDX-License-Identifier: MIT */
/*
 * Latency rows and curves of the report. Original and clone run natively
 * side by side; each one's saturation throughput is found with a closed
 * loop, then both take Poisson arrivals at the same low, medium and high
 * shares of the original's. A level's time is split into rounds that
 * alternate between the two services and pool their histograms: on a
 * small machine the tail of one 3-second run moves by tens of percent
 * with whatever else ran then, and alternating spreads that over both.
 * The original also takes a second turn in every round, pooled apart:
 * its p99 against its own is the noise floor the clone's is read against
 * (the p99_ns_*_noise rows).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "measure_int.h"
#include "synth_int.h"
#include "tune_graph_int.h"
#include "tune_int.h"

#include <ditto/model.h>
#include <ditto/synth.h>


static const struct {
	const char *name;
	double share;	/* of the original's saturation throughput */
} levels[] = { { "low", LATENCY_LOW }, { "medium", LATENCY_MEDIUM }, { "high", LATENCY_HIGH } };
#define NLEVELS (sizeof(levels) / sizeof(levels[0]))

/* One running service and the load aimed at it. */
struct live {
	char dir[32], path[PATH_MAX], **argv;
	struct mctx c;
	struct svc svc;
	struct ditto_synth_run *run;	/* a graph tree's tiers, instead of svc */
	struct ditto_hist *pool;	/* latency of the current level */
	double achieved;		/* summed over its rounds */
};

/* The graph's tiers as ditto up starts them; the load goes to its front. */
static int graph_start(struct live *l, const char *dir)
{
	DITTO_OPTS(ditto_synth_up_opts, uo);	/* stopped by live_stop() */
	int err = ditto_synth_up(dir, &uo, &l->run);

	return err ? err : graph_front_port(l->run, &l->c.load.port);
}

static int live_start(struct live *l, struct ditto_model *m, struct ditto_service *s,
		      const struct ditto_tune_opts *o, const struct tune_side *sd)
{
	int err;

	strcpy(l->dir, "/tmp/ditto-tune-XXXXXX");
	if (!mkdtemp(l->dir)) {
		l->dir[0] = 0;
		return ditto_err(-errno, "tune: temporary directory: %s", strerror(errno));
	}
	l->c = (struct mctx){ .argv = sd->argv, .host = "127.0.0.1", .startup_timeout_s = 30,
			      .dir = l->dir, .stop = o->stop };
	l->c.load = tune_base_load(m, s, o, sd->port);
	l->c.load.requests = 0;
	l->c.load.duration_s = o->latency_s;
	l->c.load.connections = 16;
	if (sd->http_path) {
		l->c.load.http_path = sd->http_path;
		l->c.load.write_share = -1;
	}
	if (!(l->pool = ditto_hist_new(DITTO_HIST_LOGLIN, 0)))
		return ditto_err(-ENOMEM, "tune: out of memory");
	if (sd->graph_dir)
		return graph_start(l, sd->graph_dir);
	err = native_argv(&l->c, l->path, &l->argv);
	err = err ? err : svc_start(&l->c, l->argv, "service.log", sd->name, &l->svc);
	return err ? err : svc_wait_ready(&l->c, &l->svc);
}

static void live_stop(struct live *l)
{
	if (l->svc.pid)
		svc_stop(&l->svc);
	ditto_synth_up_free(l->run);
	free(l->argv);
	ditto_hist_free(l->pool);
	if (l->dir[0])
		synth_rm_tree(l->dir);
}

/* One run of l's load, its latency pooled. */
static int live_run(struct live *l)
{
	struct ditto_load_result *res = NULL;
	int err = ditto_load_run(&l->c.load, &res);

	if (err) {	/* nothing answered, say: a failed run's result is ours too */
		ditto_load_result_free(res);
		return err;
	}
	/* A dead inner tier can make the front answer errors fast: a clone
	 * graph must still be whole after every run. */
	if (l->run && (err = ditto_synth_up_wait(l->run, 0))) {
		ditto_load_result_free(res);
		return err;
	}
	l->achieved += ditto_load_result_achieved_qps(res);
	err = ditto_hist_merge(l->pool, ditto_load_result_latency(res));
	ditto_load_result_free(res);
	return err;
}

/* The pooled histogram as a point; the pool starts again. */
static void live_point(struct live *l, double qps, unsigned runs, struct tune_point *p)
{
	const struct ditto_hist *h = l->pool;

	*p = (struct tune_point){ .qps = qps, .achieved = l->achieved / runs,
				  .p50 = ditto_hist_quantile(h, 0.5),
				  .p90 = ditto_hist_quantile(h, 0.9),
				  .p99 = ditto_hist_quantile(h, 0.99),
				  .p999 = ditto_hist_quantile(h, 0.999),
				  .max = ditto_hist_quantile(h, 1) };
	ditto_hist_clear(l->pool);
	l->achieved = 0;
}

/* A side that warms up as it runs (a compiler, caches) is loaded as long
 * as it took to settle before (tune_side.warm_s): a JIT-compiled original
 * just started costs two to three times its later CPU per request, and
 * its saturation would set every level too low. */
static int saturation(struct live *l, double warm_s, struct tune_point *p)
{
	double d = l->c.load.duration_s;
	int err = 0;

	if (warm_s > 0) {
		l->c.load.duration_s = warm_s;
		err = live_run(l);
		l->c.load.duration_s = d;
		live_point(l, 0, 1, p);	/* not a point: the pool starts again */
	}
	err = err ? err : live_run(l);

	if (!err)
		live_point(l, 0, 1, p);
	return err;
}

/* Every level over the n services of `live` at shares of base, rounds
 * rotating which one goes first; pts[j][level] gets live[j]'s points. */
static int levels_run(struct live *live, size_t n, double base, double level_s,
		      struct tune_point *pts[])
{
	unsigned rounds = level_s < 2 * ROUND_S ? 1 : (unsigned)(level_s / ROUND_S + 0.5);
	int err = 0;

	for (size_t i = 0; !err && i < NLEVELS; i++) {
		double qps = base * levels[i].share;

		for (unsigned k = 0; !err && k < rounds; k++)
			for (size_t j = 0; !err && j < n; j++) {
				struct live *l = &live[(j + k) % n];

				l->c.load.mode = DITTO_LOAD_POISSON;
				l->c.load.warmup_s = 0.5;
				l->c.load.qps = qps;
				l->c.load.duration_s = level_s / rounds;
				err = live_run(l);
			}
		for (size_t j = 0; !err && j < n; j++)
			live_point(&live[j], qps, rounds, &pts[j][i]);
	}
	return err;
}

/* A clone's tail cannot be told from its original's more finely than the
 * original's own two turns tell apart: the row's bound is at least that
 * (as the syscalls row's is; a graph's end-to-end rows too). */
static double p99_bound(const char *name, const struct tune_point *orig,
			const struct tune_point *again)
{
	if (orig->p99 <= 0 || again->p99 <= 0)
		return P99_BOUND;
	return fmax(P99_BOUND, metric_error(name, orig->p99, again->p99));
}

static void latency_rows(struct ditto_tune_report *r, const double sat[2],
			 const struct tune_point *noise)
{
	char name[64];

	for (size_t i = 0; r->ncurve[0] && i < NLEVELS; i++) {
		const struct tune_point *a = &r->curve[0][i], *b = &r->curve[1][i];

		snprintf(name, sizeof(name), "p50_ns_%s", levels[i].name);
		report_row(r, name, a->p50, b->p50, 0);
		snprintf(name, sizeof(name), "p99_ns_%s", levels[i].name);
		report_row(r, name, a->p99, b->p99, i < 2 ? p99_bound(name, a, &noise[i]) : 0);
	}
	for (size_t i = 0; r->ncurve[0] && i < NLEVELS; i++) {
		snprintf(name, sizeof(name), "p99_ns_%s_noise", levels[i].name);
		report_row(r, name, r->curve[0][i].p99, noise[i].p99, 0);
	}
	report_row(r, "saturation_qps", sat[0], sat[1], 0);
}

/* Without the original, its recorded throughput stands for its saturation
 * and it has no curve. */
void tune_latency(struct ditto_model *m, struct ditto_service *s, const struct ditto_tune_opts *o,
		  const struct tune_side *orig, const struct tune_side *clone,
		  struct ditto_tune_report *r)
{
	struct live live[3] = { 0 };
	size_t n = orig ? 2 : 1, first = 2 - n;	/* live[0]: the original, if any */
	const struct tune_side *sides[2] = { orig, clone };
	struct tune_point noise[NLEVELS] = { 0 };
	struct tune_point *pts[3] = { r->curve[first], r->curve[1], noise };
	double sat[2] = { 0, 0 };
	int err = 0;

	for (size_t j = 0; !err && j < n; j++)
		err = live_start(&live[j], m, s, o, sides[first + j]);
	if (!err && orig) {	/* the original's second turn: same process */
		live[2].c = live[0].c;
		if (!(live[2].pool = ditto_hist_new(DITTO_HIST_LOGLIN, 0)))
			err = ditto_err(-ENOMEM, "tune: out of memory");
	}
	for (size_t j = 0; !err && j < n; j++)
		err = saturation(&live[j], sides[first + j]->warm_s, &r->curve[first + j][NLEVELS]);
	if (err) {
		ditto_warn("tune: no latency rows: %s", ditto_last_error());
		goto out;
	}
	for (size_t j = 0; j < n; j++)
		sat[first + j] = r->curve[first + j][NLEVELS].achieved;
	if (!orig)
		sat[0] = ditto_observed_throughput_qps(ditto_service_observed(s));
	if (sat[0] <= 0) {
		ditto_warn("tune: no latency rows: the original's throughput is not known");
		goto out;
	}
	if ((err = levels_run(live, orig ? 3 : 1, sat[0], o->latency_s, pts))) {
		ditto_warn("tune: no latency rows: %s", ditto_last_error());
		goto out;
	}
	r->ncurve[0] = orig ? NLEVELS + 1 : 0;
	r->ncurve[1] = NLEVELS + 1;
	latency_rows(r, sat, noise);
out:
	for (size_t j = 0; j < 3; j++)
		live_stop(&live[j]);
}
