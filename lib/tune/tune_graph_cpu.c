/* SPDX-License-Identifier: MIT */
/*
 * CPU time of a running tier: its process and every descendant, every
 * thread. Per process from its CPU-time clock (clock_getcpuclockid():
 * nanoseconds, threads that ended included; a tier that costs a fraction
 * of a millisecond per request would move by whole clock ticks in
 * /proc/PID/stat over a few seconds), else the sum of its live threads'
 * /proc/PID/task/TID/schedstat, else utime + stime in ticks.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core_int.h"
#include "tune_graph_int.h"

/* The parent and utime + stime (ticks) of pid, from /proc/PID/stat; the
 * command name may hold spaces and parentheses: fields follow the last ')'. */
static int proc_stat(pid_t pid, pid_t *ppid, uint64_t *ticks)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, st = 0;
	int pp = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	if (!(p = strrchr(buf, ')')) ||
	    sscanf(p + 1, " %*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &pp, &ut,
		   &st) != 3)
		return -EPROTO;
	*ppid = pp;
	*ticks = ut + st;
	return 0;
}

/* Nanoseconds on CPU of pid's threads (schedstat), or -ENOENT. */
static int threads_ns(pid_t pid, uint64_t *ns)
{
	char path[96];
	struct dirent *d;
	DIR *dir;
	int err = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(dir = opendir(path)))
		return -errno;
	*ns = 0;
	while ((d = readdir(dir))) {
		unsigned long long v;
		FILE *f;

		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.20s/schedstat", (int)pid, d->d_name);
		if (!(f = fopen(path, "re")))
			continue;	/* the thread ended */
		if (fscanf(f, "%llu", &v) == 1) {
			*ns += v;
			err = 0;
		}
		fclose(f);
	}
	closedir(dir);
	return err;
}

static uint64_t process_ns(pid_t pid, uint64_t ticks)
{
	uint64_t ns = 0;
	long hz = sysconf(_SC_CLK_TCK);
	clockid_t clk;
	struct timespec ts;

	if (!clock_getcpuclockid(pid, &clk) && !clock_gettime(clk, &ts))
		return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (!threads_ns(pid, &ns))
		return ns;
	return ticks * (uint64_t)(1000000000 / (hz > 0 ? hz : 100));
}

/* Every process, its parent and ticks: a snapshot to walk trees in. */
struct procs {
	pid_t *pid, *ppid;
	uint64_t *ticks;
	size_t n, cap;
};

static int procs_add(struct procs *p, pid_t pid, pid_t ppid, uint64_t ticks)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 256;
		pid_t *a = realloc(p->pid, cap * sizeof(*a)), *b;
		uint64_t *c;

		if (a)
			p->pid = a;
		b = a ? realloc(p->ppid, cap * sizeof(*b)) : NULL;
		if (b)
			p->ppid = b;
		c = b ? realloc(p->ticks, cap * sizeof(*c)) : NULL;
		if (!c)
			return -ENOMEM;
		p->ticks = c;
		p->cap = cap;
	}
	p->pid[p->n] = pid;
	p->ppid[p->n] = ppid;
	p->ticks[p->n++] = ticks;
	return 0;
}

static void procs_free(struct procs *p)
{
	free(p->pid);
	free(p->ppid);
	free(p->ticks);
}

static int procs_read(struct procs *p)
{
	struct dirent *d;
	DIR *dir = opendir("/proc");
	int err = 0;

	if (!dir)
		return ditto_err(-errno, "tune: /proc: %s", strerror(errno));
	while (!err && (d = readdir(dir))) {
		pid_t pid, ppid;
		uint64_t ticks;

		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		pid = (pid_t)atoi(d->d_name);
		if (!proc_stat(pid, &ppid, &ticks))	/* else it ended meanwhile */
			err = procs_add(p, pid, ppid, ticks);
	}
	closedir(dir);
	return err ? ditto_err(err, "tune: out of memory") : 0;
}

/* The index of the nearest of roots[] that process i is or descends
 * from (a tier that is a child of another tier's process counts for
 * itself), or n. */
static size_t nearest_root(const struct procs *p, size_t i, const pid_t *roots, size_t n)
{
	pid_t pid = p->pid[i];

	/* Depth-bounded: a pid reused while walking cannot loop us. */
	for (int depth = 0; depth < 64 && pid > 1; depth++) {
		size_t j;

		for (size_t k = 0; k < n; k++)
			if (roots[k] > 0 && roots[k] == pid)
				return k;
		for (j = 0; j < p->n && p->pid[j] != pid; j++)
			;
		if (j == p->n)
			return n;
		pid = p->ppid[j];
	}
	return n;
}

int tier_cpu_ns(const pid_t *roots, size_t n, uint64_t *ns)
{
	struct procs p = { 0 };
	int err = procs_read(&p);

	for (size_t k = 0; k < n; k++)
		ns[k] = 0;
	for (size_t i = 0; !err && i < p.n; i++) {
		size_t k = nearest_root(&p, i, roots, n);

		if (k < n)
			ns[k] += process_ns(p.pid[i], p.ticks[i]);
	}
	procs_free(&p);
	return err;
}

/* Not the profiler's proc_descends(): tune uses the profile stage through
 * its public API only (tests/layering). */
bool pid_descends(pid_t pid, pid_t root)
{
	/* Depth-bounded as nearest_root() is. */
	for (int depth = 0; depth < 64 && pid > 1; depth++) {
		pid_t ppid;
		uint64_t ticks;

		if (pid == root)
			return true;
		if (proc_stat(pid, &ppid, &ticks))
			return false;
		pid = ppid;
	}
	return false;
}
