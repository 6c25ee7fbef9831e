/* SPDX-License-Identifier: MIT */
/*
 * The counters backend: hardware counters of every thread of the service
 * while the load runs, and whether the host has any. Encoding and the
 * per-thread events are the profiler's (lib/profile/cpu/hw_counters.c):
 * the same libpfm4 names, so the two stages count the same events.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ditto/model.h>

#include "core_int.h"
#include "hw_counters.h"
#include "measure_int.h"

#define RESCAN_MS 100
#define MAX_TIDS 4096

int counters_usable(void)
{
	struct hw_counters *h = NULL;
	/* No threads: only the probe on ourselves, which says what the host has. */
	int err = hw_counters_open(NULL, 0, &h, NULL, 0);

	hw_counters_free(h);
	return err;
}

DITTO_API bool ditto_counters_available(void)
{
	if (counters_usable())
		return false;
	ditto_err_clear();
	return true;
}

/* The process group of the service: its processes (forked workers too). */
static bool in_group(pid_t pid, pid_t pgid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int pgrp = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return false;
	/* comm may hold spaces and parentheses: fields follow the last ')'. */
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		sscanf(p + 1, " %*c %*d %d", &pgrp);
	fclose(f);
	return pgrp == pgid;
}

static void add_tasks(pid_t pid, pid_t *tids, size_t *n)
{
	char path[64];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return;
	while ((e = readdir(d)) && *n < MAX_TIDS)
		if (e->d_name[0] != '.')
			tids[(*n)++] = (pid_t)atoi(e->d_name);
	closedir(d);
}

/* Every thread of every process in the group. */
static size_t group_tids(pid_t pgid, pid_t *tids)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t n = 0;

	while (d && (e = readdir(d))) {
		pid_t pid = (pid_t)atoi(e->d_name);

		if (pid > 0 && in_group(pid, pgid))
			add_tasks(pid, tids, &n);
	}
	if (d)
		closedir(d);
	return n;
}

/* Count threads that appeared since the last scan (workers, pools). */
static int rescan(struct hw_counters *h, pid_t pgid, pid_t *tids)
{
	size_t n = group_tids(pgid, tids);
	int err = 0;

	for (size_t i = 0; i < n && !err; i++)
		err = hw_counters_add_thread(h, tids[i]);
	return err;
}

static int count_load(const struct mctx *c, struct svc *s, uint64_t d[HW_COUNTERS_N],
		      uint32_t *have)
{
	struct hw_counters *h = NULL;
	uint64_t before[HW_COUNTERS_N], after[HW_COUNTERS_N];
	struct load_thread lt;
	pid_t *tids = calloc(MAX_TIDS, sizeof(*tids));
	int err, lerr;

	if (!tids)
		return ditto_err(-ENOMEM, "measure: out of memory");
	if ((err = hw_counters_open(tids, group_tids(s->pid, tids), &h, NULL, 0)))
		goto out;
	hw_counters_read(h, before, NULL);
	if ((err = load_thread_start(&lt, c)))
		goto out;
	while (!load_thread_done(&lt) && !err) {
		if (c->stop && *c->stop)
			load_thread_stop(&lt);
		err = rescan(h, s->pid, tids);
		measure_nap_ms(RESCAN_MS);
	}
	if (err)
		load_thread_stop(&lt);
	lerr = load_thread_join(&lt);
	err = err ? err : lerr;
	hw_counters_read(h, after, have);
	for (int i = 0; i < HW_COUNTERS_N; i++)
		d[i] = after[i] - before[i];
out:
	hw_counters_free(h);
	free(tids);
	return err;
}

static int put_metrics(const uint64_t d[HW_COUNTERS_N], uint32_t have, struct ditto_metrics *m)
{
	static const struct {
		const char *name;
		enum ditto_counter num;
		double scale;	/* per instruction, or per thousand */
	} out[] = {
		{ "branch_mpki", DITTO_COUNTER_BRANCH_MISSES, 1000 },
		{ "l1i_mpki", DITTO_COUNTER_L1I_MISSES, 1000 },
		{ "l1d_mpki", DITTO_COUNTER_L1D_MISSES, 1000 },
		{ "llc_mpki", DITTO_COUNTER_LLC_MISSES, 1000 },
	};
	double insts = (double)d[DITTO_COUNTER_INSTRUCTIONS];
	int err;

	if (!insts || !d[DITTO_COUNTER_CYCLES])
		return ditto_err(-EIO, "measure: counters: no instructions counted during the load");
	if ((err = ditto_metrics_set(m, "ipc", insts / (double)d[DITTO_COUNTER_CYCLES])))
		return err;
	for (size_t i = 0; i < ARRAY_SIZE(out); i++) {
		if (!(have & (1u << out[i].num)))
			continue;	/* the host lacks this event: no metric, not a zero */
		if ((err = ditto_metrics_set(m, out[i].name, (double)d[out[i].num] * out[i].scale / insts)))
			return err;
	}
	return 0;
}

int measure_counters(const struct mctx *c, struct ditto_metrics *m)
{
	char path[PATH_MAX], **argv;
	uint64_t d[HW_COUNTERS_N] = { 0 };
	uint32_t have = 0;
	struct svc s;
	int err, alive, stop_err;

	if ((err = native_argv(c, path, &argv)))
		return err;
	if (!(err = svc_start(c, argv, "counters.log", c->argv[0], &s)) &&
	    !(err = svc_wait_ready(c, &s))) {
		err = count_load(c, &s, d, &have);
		alive = svc_check_alive(&s, "during the load");
		err = alive ? alive : err;
	}
	stop_err = svc_stop(&s);
	err = err ? err : stop_err;
	if (!err && c->stop && *c->stop)
		err = ditto_err(-ECANCELED, "measure: stopped");
	if (!err)
		err = put_metrics(d, have, m);
	free(argv);
	return err;
}
