/* SPDX-License-Identifier: MIT */
/*
 * Stopping the command a session launched, when the session ends: SIGTERM
 * to it and its descendants, SIGKILL to whatever is left after a grace
 * period. A profile run from a script must not leave the service it
 * started behind (a pipeline waited 10 minutes on one).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

#include "profile_int.h"

#define DEFAULT_GRACE_S 5.0
#define POLL_NS 20000000L

struct pids {
	pid_t *v;
	size_t n, cap;
};

static int collect(pid_t pid, void *user)
{
	struct pids *p = user;

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		pid_t *v = realloc(p->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;	/* the child itself is still stopped */
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = pid;
	return 0;
}

static double mono_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Sends sig to the descendants still alive; returns how many were. */
static size_t signal_alive(const struct pids *d, int sig)
{
	size_t alive = 0;

	for (size_t i = 0; i < d->n; i++)
		if (proc_alive(d->v[i])) {
			alive++;
			if (sig)
				kill(d->v[i], sig);
		}
	return alive;
}

void launched_stop(pid_t child, double grace_s)
{
	struct timespec nap = { 0, POLL_NS };
	struct pids d = { 0 };
	bool child_gone = false;
	double deadline;

	/* Listed first: once the child is gone its children move to init. */
	proc_descendants(child, collect, &d);
	kill(child, SIGTERM);
	signal_alive(&d, SIGTERM);
	deadline = mono_s() + (grace_s > 0 ? grace_s : DEFAULT_GRACE_S);
	while (mono_s() < deadline) {
		child_gone = child_gone || waitpid(child, NULL, WNOHANG) == child;
		if (child_gone && !signal_alive(&d, 0))
			break;
		nanosleep(&nap, NULL);
	}
	if (!child_gone) {
		ditto_warn("launched command %d did not stop within %.1f s of SIGTERM: killed",
			   (int)child, grace_s > 0 ? grace_s : DEFAULT_GRACE_S);
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	signal_alive(&d, SIGKILL);
	free(d.v);
}
