/* SPDX-License-Identifier: MIT */
/*
 * ditto_measure(): read the options, make the work directory and run each
 * requested backend (measure_cachegrind.c, measure_profile.c, counters.c,
 * measure_cpu.c).
 * What the backends share is in measure_svc.c (the service's life) and
 * measure_load.c (the load).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "core_int.h"
#include "measure_int.h"

#define ALL_BACKENDS (DITTO_BACKEND_CACHEGRIND | DITTO_BACKEND_PROFILE | DITTO_BACKEND_COUNTERS | \
		      DITTO_BACKEND_CPU)

static const struct backend {
	unsigned bit;
	const char *name;
	int (*usable)(void);	/* 0, or why the host cannot run it (skipped) */
	int (*measure)(const struct mctx *c, struct ditto_metrics *m);
} backends[] = {
	{ DITTO_BACKEND_CACHEGRIND, "cachegrind", cachegrind_available, measure_cachegrind },
	/* The profiler's errors (no root, no BTF) are returned, not skipped:
	 * asking for it without the rights is a mistake to report. */
	{ DITTO_BACKEND_PROFILE, "profile", NULL, measure_profile },
	{ DITTO_BACKEND_COUNTERS, "counters", counters_usable, measure_counters },
	{ DITTO_BACKEND_CPU, "cpu", NULL, measure_cpu },
};

static int opts_read(const struct ditto_measure_opts *o, struct ditto_measure_opts *r)
{
	int err = OPTS_CHECK(o, ditto_measure_opts);

	if (err)
		return err;
	if (!o)
		return ditto_err(-EINVAL, "measure: options are required (argv and load)");
	memset(r, 0, sizeof(*r));
	r->backends = OPTS_GET(o, backends, 0) ? OPTS_GET(o, backends, 0) : DITTO_BACKEND_CACHEGRIND;
	r->argv = OPTS_GET(o, argv, NULL);
	r->load = OPTS_GET(o, load, NULL);
	r->startup_timeout_s = OPTS_GET(o, startup_timeout_s, 0);
	r->work_dir = OPTS_GET(o, work_dir, NULL);
	r->stop = OPTS_GET(o, stop, NULL);
	if (r->backends & ~(unsigned)ALL_BACKENDS)
		return ditto_err(-EINVAL, "measure: unknown backend bits 0x%x",
				 r->backends & ~(unsigned)ALL_BACKENDS);
	if (!r->argv || !r->argv[0] || !r->argv[0][0])
		return ditto_err(-EINVAL, "measure: argv names no command");
	if (!r->load)
		return ditto_err(-EINVAL, "measure: load options are required (they name the port)");
	if (!(r->startup_timeout_s >= 0) || !isfinite(r->startup_timeout_s))
		return ditto_err(-EINVAL, "measure: startup_timeout_s %g is not a duration",
				 r->startup_timeout_s);
	return 0;
}

/* The caller's load options, copied at their size (older callers' are
 * shorter) and completed. */
static int ctx_init(const struct ditto_measure_opts *o, struct mctx *c)
{
	const struct ditto_loadgen_opts *l = o->load;
	struct in_addr a;
	int err = OPTS_CHECK(l, ditto_loadgen_opts);

	if (err)
		return err;
	memset(c, 0, sizeof(*c));
	memcpy(&c->load, l, l->sz < sizeof(c->load) ? l->sz : sizeof(c->load));
	c->load.sz = sizeof(c->load);
	c->host = c->load.host ? c->load.host : "127.0.0.1";
	if (inet_pton(AF_INET, c->host, &a) != 1)
		return ditto_err(-EINVAL, "measure: host '%s' is not an IPv4 address", c->host);
	if (!c->load.port || c->load.port > 65535)
		return ditto_err(-EINVAL, "measure: port %u is not 1..65535", c->load.port);
	c->load.host = c->host;
	/* Backends divide whole-run totals by the requests answered: requests
	 * of a warmup would be served but not counted. */
	c->load.warmup_s = 0;
	/* Under valgrind a service runs tens of times slower than the load's
	 * default deadline assumes: ten times that. */
	if (c->load.duration_s == 0 && c->load.deadline_s == 0)
		c->load.deadline_s = fmin(600 + 0.1 * (double)c->load.requests, 1e6);
	c->stop = o->stop ? o->stop : c->load.stop;
	c->load.stop = c->stop;
	c->argv = o->argv;
	c->startup_timeout_s = o->startup_timeout_s > 0 ? o->startup_timeout_s : 30;
	return 0;
}

static int workdir_open(const char *want, char *dir, size_t len, bool *temp)
{
	const char *tmp = getenv("TMPDIR");

	*temp = !want;
	if (want) {
		if (snprintf(dir, len, "%s", want) >= (int)len)
			return ditto_err(-ENAMETOOLONG, "measure: work_dir: name too long");
		if (mkdir(dir, 0700) && errno != EEXIST)
			return ditto_err(-errno, "measure: %s: %s", dir, strerror(errno));
		return 0;
	}
	if (snprintf(dir, len, "%s/ditto-measure-XXXXXX", tmp && *tmp ? tmp : "/tmp") >= (int)len)
		return ditto_err(-ENAMETOOLONG, "measure: TMPDIR: name too long");
	if (!mkdtemp(dir))
		return ditto_err(-errno, "measure: cannot make a directory like %s: %s", dir,
				 strerror(errno));
	/* A service that drops privileges (memcached -u) still writes its
	 * cachegrind output here when it ends; sticky, like /tmp. */
	if (chmod(dir, 01777))
		return ditto_err(-errno, "measure: %s: %s", dir, strerror(errno));
	return 0;
}

/* Backends write files only, directly in the directory. */
static void workdir_remove(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
	rmdir(dir);
}


static int run_backends(const struct mctx *c, unsigned want, struct ditto_metrics *m)
{
	char why[512] = "";
	int skipped = 0, ran = 0, err;

	for (size_t i = 0; i < ARRAY_SIZE(backends); i++) {
		const struct backend *b = &backends[i];

		if (!(want & b->bit))
			continue;
		if (measure_stopped(c))
			return ditto_err(-ECANCELED, "measure: stopped");
		if (b->usable && (err = b->usable())) {
			ditto_warn("measure: %s skipped: %s", b->name, ditto_last_error());
			if (!skipped)
				snprintf(why, sizeof(why), "%s", ditto_last_error());
			skipped = skipped ? skipped : err;
			continue;
		}
		if ((err = b->measure(c, m)))
			return err;
		ran++;
	}
	if (!ran && skipped)	/* nothing measured: the caller must know why */
		return ditto_err(skipped, "measure: no backend can run here: %s", why);
	return 0;
}

DITTO_API int ditto_measure(const struct ditto_measure_opts *opts, struct ditto_metrics **out)
{
	struct ditto_measure_opts o;
	struct ditto_metrics *m;
	struct mctx c;
	char dir[PATH_MAX];
	bool temp;
	int err;

	if (!out)
		return ditto_err(-EINVAL, "measure: out is NULL");
	if ((err = opts_read(opts, &o)) || (err = ctx_init(&o, &c)))
		return err;
	if ((err = workdir_open(o.work_dir, dir, sizeof(dir), &temp)))
		return err;
	c.dir = dir;
	m = *out;
	if (!m && (err = ditto_metrics_new(&m)))
		goto out;
	err = run_backends(&c, o.backends, m);
	if (!*out && err)
		ditto_metrics_free(m);
	else
		*out = m;
out:
	if (temp)
		workdir_remove(dir);
	return err;
}

/* ------------------------------------------------------------------ */
/* The service: a process group we start, probe and always stop         */
/* ------------------------------------------------------------------ */
