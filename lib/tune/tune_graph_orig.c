/* SPDX-License-Identifier: MIT */
/*
 * The original graph measured as a clone graph is: started by its
 * command, each tier found by the port it listens on in the model, the
 * front loaded closed-loop with the tuner's own load, each tier's CPU
 * time read from /proc around the run; nothing attached to it. A
 * profiled tier also pays for the profiler's probes in every system
 * call it makes, and a tier that compiles as it runs (node) may still be
 * warming up in a short profile: the traced shop's tiers cost 1.4 to 3.7
 * times more per request profiled than unprofiled (docs/graph.md), and
 * targets from the profile held their clones to that.
 *
 * The command must keep its tiers in its process tree, in the
 * foreground: a tier that daemonizes out of it is neither found (its
 * port is held by a process not under the command) nor stopped.
 *
 * A tier's CPU per request settles as its compiler finishes: rounds of
 * the load run until two in a row agree within the tuner's bound for
 * every tier, and the target is their mean. Under the idle load a
 * request's cost depends on what else the host ran while the tiers slept
 * (docs/graph.md, "The idle load"): a fixed number of rounds there, each
 * measured as a clone's is, and each tier's median kept.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core_int.h"
#include "measure_int.h"
#include "synth_int.h"
#include "tune_graph_int.h"

#include <ditto/profile.h>

#define WHAT "original graph"
#define STARTUP_S 60	/* until the front answers */
#define TIERS_S 20	/* then until every tier listens */
#define ROUNDS_MAX 8
#define IDLE_ROUNDS 5
#define ROOTS_PER_TIER 8

/* The processes that measure tier i: roots[j] for owner[j] == i. */
struct oroots {
	pid_t pid[GRAPH_ROOTS_MAX];
	size_t owner[GRAPH_ROOTS_MAX];
	size_t n;
};

static const char *tier_name(const struct gorig *o, size_t i)
{
	return o->names && o->names[i] ? o->names[i] : "?";
}

static unsigned tier_port(const struct gorig *o, size_t i)
{
	return o->ports ? o->ports[i] : 0;
}

/* The process trees under leader that listen on port; 0 found none. */
static size_t listeners_under(unsigned port, pid_t leader, pid_t *out, size_t max,
			      pid_t *stranger)
{
	/* Not a compound literal in DITTO_OPTS: its statement expression
	 * would end the literal's life before the call. */
	uint16_t p16 = (uint16_t)port;
	DITTO_OPTS(ditto_discover_opts, d, .ports = &p16, .nports = 1);
	pid_t found[ROOTS_PER_TIER];
	size_t n = 0, k = 0;

	if (ditto_profile_discover(&d, found, ROOTS_PER_TIER, &n))
		n = 0;	/* nothing listens yet (or too much does: none is taken) */
	for (size_t i = 0; i < n; i++) {
		if (!pid_descends(found[i], leader))
			*stranger = found[i];
		else if (k < max)
			out[k++] = found[i];
	}
	ditto_err_clear();
	return k;
}

static int not_found(const struct gorig *o, size_t i, const struct svc *s, pid_t stranger)
{
	char tail[600];

	svc_log_tail(s, tail, sizeof(tail));
	return ditto_err(-ETIMEDOUT, "tune: tier '%s' of the original graph does not listen on "
			 "port %u (the model's) under its command %d s after its front "
			 "answered%s; its output: %s", tier_name(o, i), tier_port(o, i),
			 TIERS_S, stranger ? ": a process not under the command holds that port "
			 "(started elsewhere, or daemonized out of the command's process tree: "
			 "the command must run its tiers in the foreground)" : "", tail);
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A process already found for another tier: one process listening on two
 * tiers' ports would give one of them all the CPU and the other none. */
static int shared(const struct gorig *o, const struct oroots *r, size_t i, size_t k)
{
	for (size_t a = r->n; a < r->n + k; a++)
		for (size_t b = 0; b < r->n; b++)
			if (r->pid[a] == r->pid[b])
				return ditto_err(-EINVAL, "tune: process %d of the original graph "
						 "listens on the ports of tiers '%s' and '%s': their "
						 "CPU cannot be told apart", (int)r->pid[a],
						 tier_name(o, r->owner[b]), tier_name(o, i));
	return 0;
}

/* Every tier's listeners under the command, waiting for the slower ones
 * (the front answering says nothing of the tiers behind it). */
static int find_roots(const struct gorig *o, const struct mctx *c, struct svc *s,
		      struct oroots *r)
{
	double deadline = mono_s() + TIERS_S;

	for (size_t i = 0; i < o->n; i++) {
		pid_t stranger = 0;
		size_t k = 0;
		int err;

		if (!tier_port(o, i))
			continue;
		while (!(k = listeners_under(tier_port(o, i), s->pid, &r->pid[r->n],
					     GRAPH_ROOTS_MAX - r->n, &stranger))) {
			if ((err = svc_check_alive(s, "before its tiers listened")))
				return err;
			if (measure_stopped(c))
				return ditto_err(-ECANCELED, "tune: stopped while the original "
						 "graph started");
			if (mono_s() > deadline)
				return not_found(o, i, s, stranger);
			measure_nap_ms(100);
		}
		if ((err = shared(o, r, i, k)))
			return err;
		for (size_t j = 0; j < k; j++)
			r->owner[r->n + j] = i;
		r->n += k;
	}
	return 0;
}

/* A tier process that ended would read as cheap: every root must live. */
static int roots_alive(const struct gorig *o, const struct oroots *r)
{
	for (size_t j = 0; j < r->n; j++)
		if (kill(r->pid[j], 0) && errno == ESRCH)
			return ditto_err(-ECHILD, "tune: tier '%s' of the original graph (process "
					 "%d) ended while it was measured",
					 tier_name(o, r->owner[j]), (int)r->pid[j]);
	return 0;
}

/* One round: each tier's CPU per request, its roots summed. */
static int round_once(struct ditto_loadgen_opts *load, const struct oroots *r, size_t n,
		      double *v, struct glat *lat)
{
	double per_root[GRAPH_ROOTS_MAX];
	int err = graph_cpu_round(load, r->pid, r->n, WHAT, per_root, lat, true);

	for (size_t i = 0; i < n; i++)
		v[i] = 0;
	for (size_t j = 0; !err && j < r->n; j++)
		v[r->owner[j]] += per_root[j];
	return err;
}

static double moved(double a, double b)
{
	return fmax(a, b) > 0 ? fabs(a - b) / fmax(a, b) : 0;
}

static bool settled(const struct gorig *o, const struct oroots *r, const double *prev,
		    const double *cur)
{
	for (size_t j = 0; j < r->n; j++) {
		size_t i = r->owner[j];

		if (moved(prev[i], cur[i]) > o->bound)
			return false;
	}
	return true;
}

/* One round, then whether the graph still runs whole, and Ctrl-C; the
 * front's latency into *lat (may be NULL). */
static int checked_round(const struct gorig *o, struct svc *s, struct ditto_loadgen_opts *load,
			 const struct oroots *r, double *v, struct glat *lat)
{
	int err;

	if ((err = round_once(load, r, o->n, v, lat)) ||
	    (err = svc_check_alive(s, "while it was loaded")) ||
	    (err = roots_alive(o, r)))
		return err;
	if (o->stop && *o->stop)
		return ditto_err(-ECANCELED, "tune: stopped while the original graph was measured");
	return 0;
}

/* Rounds under load until they settle; the last two's mean into out[],
 * the seconds of load it took into *took. */
static int rounds(const struct gorig *o, struct svc *s, struct ditto_loadgen_opts *load,
		  const struct oroots *r, const char *which, double *out, double *took)
{
	double prev[GRAPH_NODES_MAX] = { 0 }, cur[GRAPH_NODES_MAX] = { 0 };
	size_t worst = r->owner[0];
	int err = graph_load_once(load, 1, WHAT, NULL, NULL, NULL), k;

	for (k = 0; !err && k < ROUNDS_MAX; k++) {
		memcpy(prev, cur, sizeof(cur));
		if ((err = checked_round(o, s, load, r, cur, NULL)))
			return err;
		if (k && settled(o, r, prev, cur))
			break;
	}
	if (err)
		return err;
	*took = 1 + (k + (k < ROUNDS_MAX)) * load->duration_s;
	for (size_t j = 0; j < r->n; j++) {
		size_t i = r->owner[j];

		out[i] = (prev[i] + cur[i]) / 2;
		if (moved(prev[i], cur[i]) > moved(prev[worst], cur[worst]))
			worst = i;
		if (!(out[i] > 0))
			return ditto_err(-EIO, "tune: tier '%s' of the original graph spent no CPU "
					 "time under the %s load: no target to hold its clone to",
					 tier_name(o, i), which);
	}
	if (k == ROUNDS_MAX)
		ditto_warn("tune: the original graph's CPU per request under the %s load did not "
			   "settle in %d rounds of %g s: tier '%s' %.0f then %.0f ns per request; "
			   "its target is their mean", which, ROUNDS_MAX, load->duration_s,
			   tier_name(o, worst), prev[worst], cur[worst]);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct orig_round {
	const struct gorig *o;
	struct svc *s;
	const struct oroots *r;
};

static int orig_round(void *ctx, struct ditto_loadgen_opts *load, double *v)
{
	const struct orig_round *c = ctx;
	struct glat lat = { 0 };
	int err = checked_round(c->o, c->s, load, c->r, v, &lat);

	v[c->o->n] = lat.p50;
	return err;
}

/* The median of col[0..n-1] (sorted here), and in *spread half their
 * range over it. */
static double median_spread(double *col, size_t n, double *spread)
{
	double m;

	qsort(col, n, sizeof(col[0]), cmp_double);
	m = col[n / 2];
	*spread = m > 0 ? (col[n - 1] - col[0]) / (2 * m) : 0;
	return m;
}

/* The median of column i of the rounds (a tier's CPU per request, or at
 * i == o->n the front's p50 latency), and in *spread half their range
 * over it (how finely one measurement tells two figures apart); a
 * warning when they spread widely. */
static double idle_median(const struct gorig *o, double (*v)[GRAPH_NODES_MAX + 1], size_t i,
			  double *spread)
{
	double col[IDLE_ROUNDS], m;

	for (int k = 0; k < IDLE_ROUNDS; k++)
		col[k] = v[k][i];
	m = median_spread(col, IDLE_ROUNDS, spread);
	if (col[IDLE_ROUNDS - 1] - col[0] > m / 2 && i < o->n)
		ditto_warn("tune: the original graph's tier '%s' spent %.0f to %.0f ns per request "
			   "in %d rounds under the idle load: its target is their median, %.0f",
			   tier_name(o, i), col[0], col[IDLE_ROUNDS - 1], IDLE_ROUNDS, m);
	else if (col[IDLE_ROUNDS - 1] - col[0] > m / 2)
		ditto_warn("tune: the original graph's p50 latency under the idle load was %.0f to "
			   "%.0f ns in %d rounds: its target is their median, %.0f", col[0],
			   col[IDLE_ROUNDS - 1], IDLE_ROUNDS, m);
	return m;
}

/* IDLE_ROUNDS rounds under the idle load; each tier's median and spread,
 * and the front's p50 latency's, into out. */
static int idle_rounds(const struct gorig *o, struct svc *s, struct ditto_loadgen_opts *load,
		       const struct oroots *r, struct gidle *out)
{
	double v[IDLE_ROUNDS][GRAPH_NODES_MAX + 1];
	bool found[GRAPH_NODES_MAX] = { false };
	struct orig_round ctx = { .o = o, .s = s, .r = r };
	int err = graph_load_once(load, 1, WHAT, NULL, NULL, NULL);

	/* each round measured as a clone's is (graph_idle_round()) */
	for (int k = 0; !err && k < IDLE_ROUNDS; k++)
		err = graph_idle_round(load, o->n, orig_round, &ctx, v[k]);
	for (size_t j = 0; j < r->n; j++)
		found[r->owner[j]] = true;
	for (size_t i = 0; !err && i < o->n; i++) {
		if (!found[i])
			continue;
		out->cpu[i] = idle_median(o, v, i, &out->cpu_spread[i]);
		if (!(out->cpu[i] > 0))
			return ditto_err(-EIO, "tune: tier '%s' of the original graph spent no CPU "
					 "time under the idle load: no target to hold its clone to",
					 tier_name(o, i));
	}
	if (!err)
		out->p50 = idle_median(o, v, o->n, &out->p50_spread);
	return err;
}

/*
 * The front's p99 under the base load: TAIL_ROUNDS more rounds once the
 * tiers' CPU settled. A p99 of a few thousand requests moves by tens of
 * percent between rounds (a burst of the host's other work lands in it
 * or does not): the median of the rounds, with their spread.
 */
#define TAIL_ROUNDS 5

static int tail_rounds(const struct gorig *o, struct svc *s, struct ditto_loadgen_opts *load,
		       const struct oroots *r, struct gtail *out)
{
	double v[GRAPH_NODES_MAX], col[TAIL_ROUNDS];
	struct glat lat = { 0 };
	int err = 0;

	for (int k = 0; !err && k < TAIL_ROUNDS; k++) {
		err = checked_round(o, s, load, r, v, &lat);
		col[k] = lat.p99;
	}
	if (err)
		return err;
	out->p99 = median_spread(col, TAIL_ROUNDS, &out->p99_spread);
	if (col[TAIL_ROUNDS - 1] - col[0] > out->p99 / 2)
		ditto_warn("tune: the original graph's p99 latency under the base load was %.0f to "
			   "%.0f ns in %d rounds: its target is their median, %.0f", col[0],
			   col[TAIL_ROUNDS - 1], TAIL_ROUNDS, out->p99);
	return out->p99 > 0 ? 0 :
	       ditto_err(-EIO, "tune: the original graph's front answered with no latency under "
			 "the base load");
}

static int run(const struct gorig *o, struct mctx *c, struct svc *s, const struct gloads *ld,
	       double *base, double *busy_v, struct gidle *idle, double *settle_s)
{
	struct oroots r = { .n = 0 };
	double took;
	int err = svc_wait_ready(c, s);

	err = err ? err : find_roots(o, c, s, &r);
	if (!err && !r.n)
		return ditto_err(-EINVAL, "tune: no tier of the original graph has a port to be "
				 "found by");
	ld->base->port = o->front_port;
	err = err ? err : rounds(o, s, ld->base, &r, "base", base, settle_s);
	if (!err && o->tail)
		err = tail_rounds(o, s, ld->base, &r, o->tail);
	if (!err && ld->busy) {
		ld->busy->port = o->front_port;
		err = rounds(o, s, ld->busy, &r, "busy", busy_v, &took);
	}
	if (!err && ld->idle) {
		ld->idle->port = o->front_port;
		err = idle_rounds(o, s, ld->idle, &r, idle);
	}
	return err;
}

int graph_original_measure(const struct gorig *o, const struct gloads *ld, double *base,
			   double *busy_v, struct gidle *idle, double *settle_s)
{
	char dir[32] = "/tmp/ditto-tune-XXXXXX", path[PATH_MAX];
	struct mctx c = { .argv = o->argv, .host = "127.0.0.1", .startup_timeout_s = STARTUP_S,
			  .dir = dir, .stop = o->stop, .load = *ld->base };
	struct svc s = { 0 };
	char **argv = NULL;
	int err;

	if (o->n > GRAPH_NODES_MAX)
		return ditto_err(-EINVAL, "tune: more than %d tiers", GRAPH_NODES_MAX);
	if (!mkdtemp(dir))
		return ditto_err(-errno, "tune: temporary directory: %s", strerror(errno));
	c.load.port = o->front_port;
	err = native_argv(&c, path, &argv);
	err = err ? err : svc_start(&c, argv, "original.log", WHAT, &s);
	err = err ? err : run(o, &c, &s, ld, base, busy_v, idle, settle_s);
	if (err)
		ditto_err_prefix("tune: measuring the original graph (%s)", o->argv[0]);
	if (s.pid > 0) {
		/* Its stop's own message (a SIGKILL) must not replace the cause. */
		char msg[1024];

		snprintf(msg, sizeof(msg), "%s", err ? ditto_last_error() : "");
		svc_stop(&s);
		if (err)
			ditto_err(err, "%s", msg);
	}
	free(argv);
	synth_rm_tree(dir);
	return err;
}
