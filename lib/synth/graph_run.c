/* SPDX-License-Identifier: MIT */
/*
 * Watching and stopping a running graph: a tier that exits stops the rest
 * (nothing is left running whatever dies when), up.json records what
 * `ditto down` needs to find the tiers again and check they are still
 * the processes started.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "graph_run.h"
#include "synth_int.h"

#include <ditto/synth.h>

#define TAIL SYNTH_LOG_TAIL

unsigned long long proc_start_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ticks = 0;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* comm may hold spaces and ')': the fields start after the last ')'. */
	if (!(p = strrchr(buf, ')')) || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return 0;
	p += 2;
	for (int field = 3; field < 22 && p; field++)
		if ((p = strchr(p, ' ')))
			p++;
	if (p)
		ticks = strtoull(p, NULL, 10);
	return ticks;
}

int run_write_up_json(struct ditto_synth_run *r)
{
	char tmp[PATH_MAX + 16];
	struct dbuf b;
	int fd, err = 0;

	dbuf_init(&b);
	dbuf_printf(&b, "{\"schema\":1, \"runner\":%d, \"runner_start_ticks\":%llu, "
		    "\"started\":%lld, \"pgid\":%d, \"front\":", (int)getpid(),
		    proc_start_ticks(getpid()), (long long)time(NULL), (int)r->pgid);
	dbuf_put_json_str(&b, r->front, strlen(r->front));
	dbuf_puts(&b, ",\n \"tiers\":[");
	for (size_t i = 0; i < r->n; i++) {
		const struct tier *t = &r->t[i];

		dbuf_puts(&b, i ? ",\n  {\"name\":" : "\n  {\"name\":");
		dbuf_put_json_str(&b, t->name, strlen(t->name));
		dbuf_printf(&b, ", \"pid\":%d, \"port\":%u, \"start_ticks\":%llu, \"exe\":",
			    (int)t->pid, t->port, t->start_ticks);
		dbuf_put_json_str(&b, t->exe, strlen(t->exe));
		dbuf_puts(&b, "}");
	}
	dbuf_puts(&b, "]}\n");
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", r->up_json) >= (int)sizeof(tmp) || b.oom)
		err = -ENOMEM;
	else if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		err = -errno;
	else {
		if (write(fd, b.data, b.len) != (ssize_t)b.len)
			err = errno ? -errno : -EIO;
		if (close(fd) && !err)
			err = -errno;
		if (!err && rename(tmp, r->up_json))
			err = -errno;
	}
	dbuf_free(&b);
	if (!err)
		r->published = true;
	return err ? ditto_err(err, "up: cannot write %s: %s", r->up_json, strerror(-err)) : 0;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reaped (or never ours) tiers get pid 0. */
static bool reap(struct tier *t)
{
	int status;

	if (t->pid && waitpid(t->pid, &status, WNOHANG) == t->pid)
		t->pid = 0;
	return t->pid == 0;
}

void run_stop_all(struct ditto_synth_run *r, bool remove_json)
{
	double deadline = now_s() + r->grace_s;
	bool all;

	for (size_t i = r->n; i-- > 0;)
		if (r->t[i].pid)
			kill(r->t[i].pid, SIGTERM);
	/* A tier's own processes (a pre-forked clone) are in the group. */
	if (r->pgid)
		kill(-r->pgid, SIGTERM);
	do {
		all = true;
		for (size_t i = 0; i < r->n; i++)
			all = reap(&r->t[i]) && all;
		if (!all)
			sleep_s(0.02);
	} while (!all && now_s() < deadline);
	if (r->pgid)
		kill(-r->pgid, SIGKILL);
	for (size_t i = 0; i < r->n; i++) {
		if (!r->t[i].pid)
			continue;
		ditto_warn("up: tier '%s' (pid %d) did not stop within %.1f s of SIGTERM: killed",
			   r->t[i].name, (int)r->t[i].pid, r->grace_s);
		kill(r->t[i].pid, SIGKILL);
		while (waitpid(r->t[i].pid, NULL, 0) < 0 && errno == EINTR)
			;
		r->t[i].pid = 0;
	}
	/* Only our own: a run refused because the graph is up leaves the
	 * other runner's up.json alone. */
	if (remove_json && r->published)
		unlink(r->up_json);
	r->stopped = true;
}

static int tier_died(struct ditto_synth_run *r, size_t i, pid_t pid, int status)
{
	char tail[TAIL + 1], how[64];
	struct tier *t = &r->t[i];
	bool claimed = r->published && access(r->up_json, F_OK) != 0;

	t->pid = 0;
	run_stop_all(r, true);
	if (claimed)
		return ditto_err(-ECANCELED, "up: %s was stopped by `ditto down`", r->dir);
	if (WIFSIGNALED(status))
		snprintf(how, sizeof(how), "was killed by signal %d", WTERMSIG(status));
	else
		snprintf(how, sizeof(how), "exited with status %d", WEXITSTATUS(status));
	synth_log_tail(t->log, tail, sizeof(tail));
	return ditto_err(-ECHILD, "up: tier '%s' (pid %d, port %u) %s; the other tiers were "
			 "stopped. The end of %s:\n%s", t->name, (int)pid, t->port, how, t->log,
			 tail);
}

int run_check(struct ditto_synth_run *r)
{
	for (size_t i = 0; i < r->n; i++) {
		int status;
		pid_t pid = r->t[i].pid;

		if (pid && waitpid(pid, &status, WNOHANG) == pid)
			return tier_died(r, i, pid, status);
	}
	if (r->published && access(r->up_json, F_OK)) {
		run_stop_all(r, false);
		return ditto_err(-ECANCELED, "up: %s was stopped by `ditto down`", r->dir);
	}
	return 0;
}

DITTO_API int ditto_synth_up_wait(struct ditto_synth_run *r, double seconds)
{
	double end = now_s() + seconds;
	int err;

	if (!r)
		return ditto_err(-EINVAL, "up: no run");
	if (r->stopped)
		return ditto_err(-ESRCH, "up: %s is stopped", r->dir);
	while (!(err = run_check(r)) && (seconds < 0 || now_s() < end))
		sleep_s(0.05);
	return err;
}

DITTO_API int ditto_synth_up_stop(struct ditto_synth_run *r)
{
	if (!r)
		return ditto_err(-EINVAL, "up: no run");
	if (r->stopped)
		return ditto_err(-ESRCH, "up: %s is stopped", r->dir);
	run_stop_all(r, true);
	return 0;
}

DITTO_API void ditto_synth_up_free(struct ditto_synth_run *r)
{
	if (!r)
		return;
	if (!r->stopped)
		run_stop_all(r, true);
	free(r);
}

DITTO_API const char *ditto_synth_up_front(const struct ditto_synth_run *r)
{
	return r ? r->front : NULL;
}

DITTO_API size_t ditto_synth_up_tier_count(const struct ditto_synth_run *r)
{
	return r ? r->n : 0;
}

DITTO_API int ditto_synth_up_tier(const struct ditto_synth_run *r, size_t i, const char **name,
				  int *pid, unsigned *port)
{
	if (!r || i >= r->n)
		return -DITTO_ENOTFOUND;
	if (name)
		*name = r->t[i].name;
	if (pid)
		*pid = (int)r->t[i].pid;
	if (port)
		*port = r->t[i].port;
	return 0;
}
