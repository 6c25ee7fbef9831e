/* SPDX-License-Identifier: MIT */
/*
 * ditto_synth_down(): stop a graph another process started, through
 * DIR/up.json. A pid is signalled only while it is still the tier that
 * was started (same start time, same executable): pids are reused.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "graph_run.h"

#include <ditto/synth.h>

static bool same_tier(pid_t pid, unsigned long long ticks, const char *exe)
{
	char link[64], real[PATH_MAX];
	ssize_t n;

	if (pid <= 0 || !ticks || proc_start_ticks(pid) != ticks)
		return false;
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	if ((n = readlink(link, real, sizeof(real) - 1)) < 0)
		return errno == EACCES;	/* not ours to read: the start time decides */
	real[n] = '\0';
	/* A rebuilt clone reads "PATH (deleted)": still that tier. */
	return !strncmp(real, exe, strlen(exe));
}

static size_t signal_all(struct up_tier *v, size_t n, int sig)
{
	size_t alive = 0;

	for (size_t i = 0; i < n; i++)
		if (same_tier(v[i].pid, v[i].ticks, v[i].exe)) {
			kill(v[i].pid, sig);
			alive++;
		}
	return alive;
}

static size_t count_alive(struct up_tier *v, size_t n)
{
	size_t alive = 0;

	for (size_t i = 0; i < n; i++)
		alive += same_tier(v[i].pid, v[i].ticks, v[i].exe);
	return alive;
}

static void stop_tiers(struct up_state *s, double grace)
{
	struct up_tier *v = s->tiers;
	struct timespec tick = { 0, 20 * 1000 * 1000 };
	size_t n = s->n;
	double waited = 0;

	/* Front first, as up.json lists leaves first. */
	for (size_t i = 0; i < n / 2; i++) {
		struct up_tier x = v[i];

		v[i] = v[n - 1 - i];
		v[n - 1 - i] = x;
	}
	signal_all(v, n, SIGTERM);
	while (count_alive(v, n) && waited < grace) {
		nanosleep(&tick, NULL);
		waited += 0.02;
	}
	if (signal_all(v, n, SIGKILL))
		ditto_warn("down: some tiers did not stop within %.1f s of SIGTERM: killed", grace);
}

DITTO_API int ditto_synth_down(const char *dir, const struct ditto_synth_up_opts *opts)
{
	char path[PATH_MAX], claimed[PATH_MAX + 32];
	struct up_state *s;
	double grace = OPTS_GET(opts, grace_s, 0) > 0 ? OPTS_GET(opts, grace_s, 0) : 3;
	int err = OPTS_CHECK(opts, ditto_synth_up_opts);

	if (err)
		return err;
	if (!dir)
		return ditto_err(-EINVAL, "down: a graph tree is needed");
	if (snprintf(path, sizeof(path), "%s/up.json", dir) >= (int)sizeof(path) ||
	    snprintf(claimed, sizeof(claimed), "%s/up.json.down.%d", dir, (int)getpid()) >=
	    (int)sizeof(claimed))
		return ditto_err(-ENAMETOOLONG, "down: %s: path too long", dir);
	/* Claimed first: the runner, seeing a tier go with no up.json, knows
	 * it was asked to stop and does not report a failure. */
	if (rename(path, claimed))
		return ditto_err(errno == ENOENT ? -ENOENT : -errno, "down: nothing is up in %s "
				 "(no up.json)", dir);
	/* up.json holds PATH_MAX per tier: too large for the stack. */
	if (!(s = malloc(sizeof(*s))))
		err = ditto_err(-ENOMEM, "down: out of memory");
	else if (!(err = up_json_read(claimed, s)))
		stop_tiers(s, grace);
	free(s);
	unlink(claimed);
	return err;
}
