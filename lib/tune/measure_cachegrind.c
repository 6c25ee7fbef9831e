/* SPDX-License-Identifier: MIT */
/*
 * The cachegrind backend: the service under valgrind's cache and branch
 * simulation, run once without load and once with it. Valgrind 3.19
 * cannot switch instrumentation on mid-run, so the difference of the two
 * runs is what serving the requests cost: startup and shutdown cancel.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_int.h"
#include "measure_int.h"

#define CG_BIT(e) (1u << (e))

/* The geometry the metrics are documented with (tune.h), not the host's. */
static const char *const cg_args[] = {
	"--tool=cachegrind", "-q", "--cache-sim=yes", "--branch-sim=yes",
	"--I1=32768,8,64", "--D1=32768,8,64", "--LL=1048576,16,64",
	/* Forked processes stay under valgrind anyway, and with this so do
	 * programs the command execs (a wrapper such as env or prlimit, a
	 * master that execs its workers); %p in the output name gives each
	 * process its own file, all summed. */
	"--trace-children=yes",
};

int cachegrind_available(void)
{
	char path[PATH_MAX];

	if (cmd_resolve("valgrind", path, sizeof(path)))
		return ditto_err(-ENOENT, "valgrind is not installed (Debian: apt-get install valgrind)");
	return 0;
}

/* The paths one run's command line holds. */
struct cg_cmd {
	char valgrind[PATH_MAX], service[PATH_MAX];
	char out_opt[PATH_MAX + 32], log_opt[PATH_MAX + 32];
};

/* valgrind [cg_args] --cachegrind-out-file=DIR/cg-TAG.%p.out
 * --log-file=DIR/cg-TAG.valgrind.log SERVICE ARGS...: valgrind's own
 * messages apart, so that the service's log says why it failed. */
static int make_argv(const struct mctx *c, const char *tag, struct cg_cmd *cmd, char ***out)
{
	size_t argc = 0, n = 0;
	char **v;

	while (c->argv[argc])
		argc++;
	if (!(v = calloc(ARRAY_SIZE(cg_args) + argc + 4, sizeof(*v))))
		return ditto_err(-ENOMEM, "measure: out of memory");
	snprintf(cmd->out_opt, sizeof(cmd->out_opt), "--cachegrind-out-file=%s/cg-%s.%%p.out",
		 c->dir, tag);
	snprintf(cmd->log_opt, sizeof(cmd->log_opt), "--log-file=%s/cg-%s.valgrind.log", c->dir,
		 tag);
	v[n++] = cmd->valgrind;
	for (size_t i = 0; i < ARRAY_SIZE(cg_args); i++)
		v[n++] = (char *)cg_args[i];
	v[n++] = cmd->out_opt;
	v[n++] = cmd->log_opt;
	v[n++] = cmd->service;
	for (size_t i = 1; i < argc; i++)
		v[n++] = c->argv[i];
	*out = v;
	return 0;
}

static bool is_output(const char *name, const char *tag)
{
	size_t t = strlen(tag), n = strlen(name);

	return n > t + 7 && !strncmp(name, "cg-", 3) && !strncmp(name + 3, tag, t) &&
	       name[3 + t] == '.' && !strcmp(name + n - 4, ".out");
}

/* A kept work directory may hold an earlier run's files: they must not
 * be summed with this one's. */
static void remove_outputs(const struct mctx *c, const char *tag)
{
	DIR *d = opendir(c->dir);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (is_output(e->d_name, tag))
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
}

/* Sum the files of every process of the run. */
static int sum_outputs(const struct mctx *c, const char *tag, const struct svc *s,
		       struct cg_totals *sum)
{
	DIR *d = opendir(c->dir);
	struct dirent *e;
	char path[PATH_MAX], tail[400], vtail[400];
	int err = 0, files = 0;

	memset(sum, 0, sizeof(*sum));
	while (d && !err && (e = readdir(d))) {
		struct cg_totals t;

		if (!is_output(e->d_name, tag))
			continue;
		snprintf(path, sizeof(path), "%s/%s", c->dir, e->d_name);
		if (!(err = cg_parse_file(path, &t)))
			err = cg_totals_add(sum, &t);
		files++;
	}
	if (d)
		closedir(d);
	if (!err && !files) {
		svc_log_tail(s, tail, sizeof(tail));
		snprintf(path, sizeof(path), "%s/cg-%s.valgrind.log", c->dir, tag);
		measure_log_tail_line(path, vtail, sizeof(vtail));
		err = ditto_err(-EIO, "measure: valgrind wrote no cachegrind output for %s (does it "
				"end cleanly on SIGTERM?); its output: %s; valgrind's: %s", s->name,
				tail, vtail);
	}
	if (!err && (sum->have & CG_ALL) != CG_ALL)
		err = ditto_err(-DITTO_ECORRUPT, "measure: %s: cachegrind output lacks cache or "
				"branch events", tag);
	return err;
}

/* One run: start, wait for accept, load (or only connect), stop, sum. */
static int run_once(const struct mctx *c, struct cg_cmd *cmd, const char *tag, bool load,
		    struct cg_totals *t, uint64_t *answered)
{
	char log[64], name[300], **argv = NULL;
	struct svc s;
	int err, alive, stop_err;

	snprintf(log, sizeof(log), "cg-%s.log", tag);
	snprintf(name, sizeof(name), "%s (under valgrind)", c->argv[0]);
	*answered = 0;
	remove_outputs(c, tag);
	if ((err = make_argv(c, tag, cmd, &argv)))
		return err;
	if (!(err = svc_start(c, argv, log, name, &s)) && !(err = svc_wait_ready(c, &s))) {
		err = load ? measure_load(c, answered) : measure_idle_connects(c);
		if (load && !err)
			measure_settle();
		/* A service that died explains a failed load better. */
		alive = svc_check_alive(&s, load ? "during the load" : "while idle");
		err = alive ? alive : err;
	}
	stop_err = svc_stop(&s);
	free(argv);
	if (!err && c->stop && *c->stop)
		err = ditto_err(-ECANCELED, "measure: stopped");
	if (!err)
		err = stop_err;
	if (!err)
		err = sum_outputs(c, tag, &s, t);
	return err;
}

/* Loaded minus idle, over the events of mask (never negative: small
 * counts differ a little from run to run). */
static double dsum(const struct cg_totals *l, const struct cg_totals *b, uint32_t mask)
{
	double x = 0;

	for (int i = 0; i < CG_N; i++)
		if (mask & CG_BIT(i))
			x += (double)l->v[i] - (double)b->v[i];
	return x > 0 ? x : 0;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static int put_metrics(const struct cg_totals *l, const struct cg_totals *b, uint64_t requests,
		       struct ditto_metrics *m)
{
	double n = (double)requests, ir = dsum(l, b, CG_BIT(CG_IR));
	double i1 = dsum(l, b, CG_BIT(CG_I1MR));
	double d = dsum(l, b, CG_BIT(CG_DR) | CG_BIT(CG_DW));
	double d1 = dsum(l, b, CG_BIT(CG_D1MR) | CG_BIT(CG_D1MW));
	double ll = dsum(l, b, CG_BIT(CG_ILMR) | CG_BIT(CG_DLMR) | CG_BIT(CG_DLMW));
	double br = dsum(l, b, CG_BIT(CG_BC) | CG_BIT(CG_BI));
	double bm = dsum(l, b, CG_BIT(CG_BCM) | CG_BIT(CG_BIM));
	const struct {
		const char *name;
		double v;
	} out[] = {
		{ "insts_per_request", ir / n },
		{ "i1_miss_rate", ratio(i1, ir) },
		{ "d1_miss_rate", ratio(d1, d) },
		{ "ll_miss_rate", ratio(ll, ir + d) },
		{ "branch_mispredict_rate", ratio(bm, br) },
		{ "i1_misses_per_request", i1 / n },
		{ "d1_misses_per_request", d1 / n },
		{ "ll_misses_per_request", ll / n },
		{ "data_refs_per_request", d / n },
		{ "branches_per_request", br / n },
		{ "branch_mispredicts_per_request", bm / n },
	};
	int err = 0;

	if (ir <= 0)
		return ditto_err(-EIO, "measure: cachegrind: the loaded run executed no more "
				 "instructions than the idle one");
	for (size_t i = 0; i < ARRAY_SIZE(out) && !err; i++)
		err = ditto_metrics_set(m, out[i].name, out[i].v);
	return err;
}

int measure_cachegrind(const struct mctx *c, struct ditto_metrics *m)
{
	struct cg_totals idle, loaded;
	uint64_t none, answered;
	struct cg_cmd *cmd = calloc(1, sizeof(*cmd));
	int err;

	if (!cmd)
		return ditto_err(-ENOMEM, "measure: out of memory");
	if (!(err = cmd_resolve("valgrind", cmd->valgrind, sizeof(cmd->valgrind))) &&
	    !(err = cmd_resolve(c->argv[0], cmd->service, sizeof(cmd->service))) &&
	    /* The idle run first: a service that does not start fails cheaply. */
	    !(err = run_once(c, cmd, "idle", false, &idle, &none)) &&
	    !(err = run_once(c, cmd, "load", true, &loaded, &answered)))
		err = put_metrics(&loaded, &idle, answered, m);
	free(cmd);
	return err;
}
