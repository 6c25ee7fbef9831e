/* SPDX-License-Identifier: MIT */
/* ditto_profile_cpu(): CPU windows on chosen threads, outside a session. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core_int.h"
#include "cpu_int.h"
#include "cpu_run.h"
#include "profile_int.h"

struct tid_list {
	struct cpu_target *t;
	size_t n;
	pid_t tgid;
};

static int add_tid(pid_t tid, const char *comm, void *user)
{
	struct tid_list *l = user;
	struct cpu_target *t = realloc(l->t, (l->n + 1) * sizeof(*t));

	(void)comm;
	if (!t)
		return -ENOMEM;
	l->t = t;
	t[l->n++] = (struct cpu_target){ l->tgid, tid, 0 };
	return 0;
}

static int targets(pid_t pid, const pid_t *tids, size_t ntids, struct tid_list *l)
{
	l->tgid = pid;
	if (!ntids)
		return proc_threads(pid, add_tid, l) ? ditto_err(-ENOMEM, "out of memory") : 0;
	for (size_t i = 0; i < ntids; i++) {
		char path[64];
		int err;

		snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)tids[i]);
		if (access(path, F_OK))
			return ditto_err(-ESRCH, "thread %d is not a thread of process %d",
					 (int)tids[i], (int)pid);
		if ((err = add_tid(tids[i], NULL, l)))
			return err;
	}
	return 0;
}

/* Wait for the child, passing *stop on to it. */
static void wait_child(struct cpu_child *c, const volatile int *stop)
{
	struct pollfd p = { cpu_child_fd(c), POLLIN, 0 };
	bool stopped = false;

	while (cpu_child_poll(c) > 0) {
		if (stop && *stop && !stopped) {
			cpu_child_stop(c);
			stopped = true;
		}
		poll(&p, 1, 50);
	}
}

static int take_results(struct cpu_child *c, struct ditto_cpu *out)
{
	struct ditto_model *res = NULL;
	int err = cpu_child_finish(c, &res), e;

	if (res) {
		struct ditto_service *s = ditto_model_service(res, 0);

		e = s && ditto_service_cpu_count(s) ? cpu_merge(out, ditto_service_cpu(s, 0)) : 0;
		err = err ? err : e;
		ditto_model_free(res);
	}
	return err;
}

int cpu_opts_defaults(const struct ditto_cpu_opts *o, struct cpu_run_opts *r)
{
	double sp = OPTS_GET(o, spacing_s, 0.0);
	int mode = step_mode_resolve(OPTS_GET(o, step_mode, 0));

	r->windows = OPTS_GET(o, windows, 0u);
	r->window_insts = OPTS_GET(o, window_insts, (uint64_t)0);
	r->window_timeout_s = OPTS_GET(o, window_timeout_s, 0.0);
	r->spacing_s = sp < 0 ? 0 : sp == 0 ? 0.25 : sp;
	if (!r->windows)
		r->windows = 8;
	if (!r->window_insts)
		r->window_insts = 20000;
	if (r->window_timeout_s <= 0)
		r->window_timeout_s = 1.0;
	r->step_mode = mode;
	return mode < 0 ? mode : 0;
}

DITTO_API int ditto_profile_cpu(pid_t pid, const pid_t *tids, size_t ntids,
				const struct ditto_cpu_opts *opts, struct ditto_cpu *out)
{
	const volatile int *stop = OPTS_GET(opts, stop, NULL);
	struct tid_list l = { NULL, 0, 0 };
	struct cpu_run_opts ro;
	struct cpu_child *child = NULL;
	int err;

	if ((err = OPTS_CHECK(opts, ditto_cpu_opts)))
		return err;
	if (!out || (ntids && !tids))
		return ditto_err(-EINVAL, "cpu profile: NULL argument");
	if (!proc_alive(pid))
		return ditto_err(-ESRCH, "process %d does not exist", (int)pid);
	if ((err = proc_check_user(pid)))
		return err;
	if ((err = cpu_opts_defaults(opts, &ro)) || (err = targets(pid, tids, ntids, &l)) ||
	    (err = cpu_child_start(l.t, l.n, 1, &ro, &child)))
		goto out;
	wait_child(child, stop);
	/* Partial results are stored even when a later window failed. */
	err = take_results(child, out);
	if (!err && !ditto_cpu_instructions(out) && !proc_alive(pid))
		err = ditto_err(-ESRCH, "process %d exited before a window could be taken", (int)pid);
	else if (!proc_alive(pid))
		ditto_warn("process %d exited during the CPU windows: the results cover what was "
			   "stepped before", (int)pid);
out:
	cpu_child_free(child);
	free(l.t);
	return err;
}
