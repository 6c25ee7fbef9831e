/* SPDX-License-Identifier: MIT */
/*
 * The report rows beyond the tuned metrics. Syscalls and bytes per
 * request come from the profile backend (original measured the same way
 * when it can be run, else the model's figures). Latency: original and
 * clone run natively; the original's saturation throughput is found with
 * a closed loop, then both take Poisson arrivals at the same low, medium
 * and high shares of it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_int.h"
#include <ditto/profile.h>
#include "measure_int.h"
#include "synth_int.h"
#include "tune_int.h"

#include <ditto/model.h>

static const char *const profile_metrics[] = { "syscalls_per_request", "socket_bytes_per_request",
					       "read_calls_per_request", "write_calls_per_request" };
/* The bound for per-request syscalls and bytes. */
#define CALLS_BOUND 0.01
#define P99_BOUND 0.10

static const struct {
	const char *name;
	double share;	/* of the original's saturation throughput */
} levels[] = { { "low", 0.25 }, { "medium", 0.5 }, { "high", 0.75 } };
#define NLEVELS (sizeof(levels) / sizeof(levels[0]))

struct side {
	char *const *argv;
	unsigned port;
	const char *name;
};

static void clone_side(const struct ditto_tune_opts *o, struct side *s, char *bin, char *port)
{
	static char *argv[6];
	unsigned p = tune_free_port();

	snprintf(bin, 4200, "%s/clone", o->dir);
	snprintf(port, 16, "%u", p);
	argv[0] = bin;
	argv[1] = "--port";
	argv[2] = port;
	argv[3] = "--max-seconds";
	argv[4] = "3600";
	argv[5] = NULL;
	*s = (struct side){ argv, p, "clone" };
}

static struct ditto_loadgen_opts base_load(struct ditto_model *m, struct ditto_service *s,
					   const struct ditto_tune_opts *o, unsigned port)
{
	unsigned f = ditto_service_framing(s);

	return (struct ditto_loadgen_opts){ .sz = sizeof(struct ditto_loadgen_opts), .port = port,
					    .framing = f ? f : DITTO_FRAMING_RAW, .model = m,
					    .service = ditto_service_name(s), .seed = o->seed,
					    .mode = DITTO_LOAD_CLOSED, .connections = o->connections,
					    .requests = o->requests, .stop = o->stop };
}

static int profile_side(struct ditto_model *m, struct ditto_service *s,
			const struct ditto_tune_opts *o, const struct side *sd,
			struct ditto_metrics **out)
{
	struct ditto_loadgen_opts load = base_load(m, s, o, sd->port);

	DITTO_OPTS(ditto_measure_opts, mo, .backends = DITTO_BACKEND_PROFILE, .argv = sd->argv,
		   .load = &load, .stop = o->stop);
	return ditto_measure(&mo, out);
}

static void profile_rows(struct ditto_model *m, struct ditto_service *s,
			 const struct ditto_tune_opts *o, const struct side *orig,
			 const struct side *clone, struct ditto_tune_report *r)
{
	struct ditto_metrics *a = NULL, *b = NULL;
	double x, y;

	if (profile_side(m, s, o, clone, &b) ||
	    (orig ? profile_side(m, s, o, orig, &a) : tune_model_calls(s, &a))) {
		ditto_warn("tune: no syscall rows in the report: %s", ditto_last_error());
		goto out;
	}
	for (size_t i = 0; i < sizeof(profile_metrics) / sizeof(profile_metrics[0]); i++)
		if (!ditto_metrics_get(a, profile_metrics[i], &x) &&
		    !ditto_metrics_get(b, profile_metrics[i], &y))
			report_row(r, profile_metrics[i], x, y, CALLS_BOUND);
out:
	ditto_metrics_free(a);
	ditto_metrics_free(b);
}

static int load_point(struct ditto_loadgen_opts *lo, struct tune_point *p)
{
	struct ditto_load_result *res;
	const struct ditto_hist *h;
	int err = ditto_load_run(lo, &res);

	if (err)
		return err;
	h = ditto_load_result_latency(res);
	*p = (struct tune_point){ .qps = lo->qps, .achieved = ditto_load_result_achieved_qps(res),
				  .p50 = ditto_hist_quantile(h, 0.5), .p90 = ditto_hist_quantile(h, 0.9),
				  .p99 = ditto_hist_quantile(h, 0.99),
				  .p999 = ditto_hist_quantile(h, 0.999),
				  .max = ditto_hist_quantile(h, 1) };
	ditto_load_result_free(res);
	return 0;
}

/* The service of one side started natively: its saturation throughput
 * *own (closed loop), then Poisson arrivals at each level's share of
 * `base` (0: of *own). pts gets the levels, then the saturation point. */
static int curve(struct ditto_model *m, struct ditto_service *s, const struct ditto_tune_opts *o,
		 const struct side *sd, double base, double *own, struct tune_point *pts)
{
	char dir[] = "/tmp/ditto-tune-XXXXXX", path[PATH_MAX], **argv = NULL;
	struct mctx c = { .host = "127.0.0.1", .startup_timeout_s = 30, .dir = dir, .stop = o->stop };
	struct svc svc = { 0 };
	int err;

	if (!mkdtemp(dir))
		return ditto_err(-errno, "tune: temporary directory: %s", strerror(errno));
	c.argv = sd->argv;
	c.load = base_load(m, s, o, sd->port);
	c.load.requests = 0;
	c.load.duration_s = o->latency_s;
	c.load.connections = 16;
	err = native_argv(&c, path, &argv);
	err = err ? err : svc_start(&c, argv, "service.log", sd->name, &svc);
	err = err ? err : svc_wait_ready(&c, &svc);
	err = err ? err : load_point(&c.load, &pts[NLEVELS]);
	*own = err ? 0 : pts[NLEVELS].achieved;
	c.load.mode = DITTO_LOAD_POISSON;
	c.load.warmup_s = 0.5;
	for (size_t i = 0; !err && i < NLEVELS; i++) {
		c.load.qps = (base > 0 ? base : *own) * levels[i].share;
		err = load_point(&c.load, &pts[i]);
	}
	if (svc.pid)
		svc_stop(&svc);
	free(argv);
	synth_rm_tree(dir);
	return err;
}

static void latency_rows(struct ditto_tune_report *r, const double sat[2])
{
	char name[64];

	for (size_t i = 0; r->ncurve[0] && i < NLEVELS; i++) {
		const struct tune_point *a = &r->curve[0][i], *b = &r->curve[1][i];

		snprintf(name, sizeof(name), "p50_ns_%s", levels[i].name);
		report_row(r, name, a->p50, b->p50, 0);
		snprintf(name, sizeof(name), "p99_ns_%s", levels[i].name);
		report_row(r, name, a->p99, b->p99, i < 2 ? P99_BOUND : 0);
	}
	report_row(r, "saturation_qps", sat[0], sat[1], 0);
}

/* Both curves at the original's load levels; without the original, its
 * recorded throughput stands for its saturation and it has no curve. */
static void latency(struct ditto_model *m, struct ditto_service *s, const struct ditto_tune_opts *o,
		    const struct side *orig, const struct side *clone, struct ditto_tune_report *r)
{
	double sat[2] = { 0, 0 };

	if (orig && curve(m, s, o, orig, 0, &sat[0], r->curve[0])) {
		ditto_warn("tune: no latency rows: the original: %s", ditto_last_error());
		return;
	}
	r->ncurve[0] = orig ? NLEVELS + 1 : 0;
	if (!orig)
		sat[0] = ditto_observed_throughput_qps(ditto_service_observed(s));
	if (curve(m, s, o, clone, sat[0], &sat[1], r->curve[1])) {
		ditto_warn("tune: no latency rows: the clone: %s", ditto_last_error());
		return;
	}
	r->ncurve[1] = NLEVELS + 1;
	if (sat[0] > 0)
		latency_rows(r, sat);
}

/* Total-variation distance of two instruction mixes (0 same, 1 disjoint). */
static double mix_distance(struct ditto_cpu *a, struct ditto_cpu *b)
{
	struct ditto_counts *ma = ditto_cpu_mix(a), *mb = ditto_cpu_mix(b);
	double ta = (double)ditto_counts_total(ma), tb = (double)ditto_counts_total(mb), d = 0;
	const char *k;
	uint64_t n;

	if (ta <= 0 || tb <= 0)
		return 1;
	for (size_t i = 0; !ditto_counts_entry(ma, i, &k, &n); i++)
		d += fabs((double)n / ta - (double)ditto_counts_get(mb, k) / tb);
	for (size_t i = 0; !ditto_counts_entry(mb, i, &k, &n); i++)
		if (!ditto_counts_get(ma, k))
			d += (double)n / tb;
	return d / 2;
}

/* The clone's instruction mix as the profiler's CPU windows see it under
 * the load, against the model's (the original's) serving class. */
static void mix_row(struct ditto_model *m, struct ditto_service *s, const struct ditto_tune_opts *o,
		    const struct side *clone, struct ditto_tune_report *r)
{
	DITTO_OPTS(ditto_profile_opts, po, .duration_s = 1, .cpu_windows = 4, .sample_hz = -1);
	char dir[] = "/tmp/ditto-tune-XXXXXX";
	struct mctx c = { .argv = clone->argv, .host = "127.0.0.1", .startup_timeout_s = 30,
			  .dir = dir, .stop = o->stop };
	struct ditto_cpu *want = tune_main_cpu(s), *got;
	struct ditto_model *cm = NULL;
	uint64_t answered;
	int err;

	if (!want)
		return;
	if (!mkdtemp(dir)) {
		ditto_warn("tune: no mix row: temporary directory: %s", strerror(errno));
		return;
	}
	c.load = base_load(m, s, o, clone->port);
	c.load.requests = 0;
	c.load.duration_s = 30;	/* ended once the CPU windows are taken */
	err = measure_profile_model(&c, &po, &cm, &answered);
	got = !err && ditto_model_service_count(cm) ? tune_main_cpu(ditto_model_service(cm, 0)) : NULL;
	if (got)
		report_row_error(r, "mix_distance", 0, mix_distance(want, got), mix_distance(want, got),
				 0);
	else
		ditto_warn("tune: no mix row: %s", err ? ditto_last_error() : "no CPU windows taken");
	ditto_model_free(cm);
	synth_rm_tree(dir);
}

int tune_extra_rows(struct ditto_model *m, struct ditto_service *s,
		    const struct ditto_tune_opts *o, struct ditto_tune_report *r)
{
	char bin[4200], port[16];
	struct side clone, orig = { o->original_argv, o->original_port, "original" };

	clone_side(o, &clone, bin, port);
	profile_rows(m, s, o, o->original_argv ? &orig : NULL, &clone, r);
	mix_row(m, s, o, &clone, r);
	if (o->latency)
		latency(m, s, o, o->original_argv ? &orig : NULL, &clone, r);
	return 0;
}
