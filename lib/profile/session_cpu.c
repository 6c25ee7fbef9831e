/* SPDX-License-Identifier: MIT */
/*
 * The CPU phase of a profile session: after the system window, windows of
 * single-stepping on the request-serving thread classes (those that read
 * and wrote accepted connections; else the busiest class), in the guard
 * child of cpu_child.c. Results land in services[0].cpu, one entry per
 * stepped class. Hardware counters of the system window go to observed.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile_int.h"
#include "cpu/cpu_run.h"
#include "hw_counters.h"

#define MAX_MEMBERS 16	/* threads per class taking turns */

struct session_cpu {
	struct cpu_child *child;
	int *cls;		/* cpu class k -> thread class index */
	unsigned n;
};

static bool thread_alive(const struct thread_rec *t)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/task/%u", t->info.tgid, t->tid);
	return t->info.exited_ns == 0 && access(path, F_OK) == 0;
}

/* Classes worth stepping: request serving ones, else the busiest. */
static unsigned choose(const struct classes *c, int *out)
{
	unsigned n = 0;
	int busiest = -1;

	for (size_t i = 0; i < c->n; i++) {
		if (c->cls[i].bits & TB_CONN_IO)
			out[n++] = (int)i;
		if (busiest < 0 || c->cls[i].cpu_ns > c->cls[busiest].cpu_ns)
			busiest = (int)i;
	}
	if (!n && busiest >= 0)
		out[n++] = busiest;
	return n;
}

static size_t members(const struct snapshot *s, const int *cls, unsigned ncls,
		      struct cpu_target *t)
{
	size_t n = 0;

	for (unsigned k = 0; k < ncls; k++) {
		size_t in_class = 0;

		for (size_t i = 0; i < s->nthreads && in_class < MAX_MEMBERS; i++) {
			const struct thread_rec *r = &s->threads[i];

			if (r->cls != cls[k] || !thread_alive(r))
				continue;
			t[n++] = (struct cpu_target){ (pid_t)r->info.tgid, (pid_t)r->tid, (int)k };
			in_class++;
		}
	}
	return n;
}

/* The tracer child names the classes in its warnings. */
static int start_child(struct session_cpu *sc, const struct classes *c,
		       const struct cpu_target *t, size_t nt, const struct cpu_run_opts *o)
{
	struct cpu_run_opts named = *o;
	const char **names = calloc(sc->n + 1, sizeof(*names));
	int err;

	if (!names)
		return ditto_err(-ENOMEM, "out of memory");
	for (unsigned k = 0; k < sc->n; k++)
		names[k] = c->cls[sc->cls[k]].name;
	named.class_names = names;
	/* The child has its copy once started: the array may go. */
	err = cpu_child_start(t, nt, sc->n, &named, &sc->child);
	free(names);
	return err;
}

int session_cpu_start(const struct snapshot *s, const struct classes *c,
		      const struct cpu_run_opts *o, struct session_cpu **out)
{
	struct session_cpu *sc = calloc(1, sizeof(*sc));
	struct cpu_target *t = calloc(s->nthreads + 1, sizeof(*t));
	size_t nt;
	int err = 0;

	*out = NULL;
	if (!sc || !t || !(sc->cls = calloc(c->n + 1, sizeof(int)))) {
		err = ditto_err(-ENOMEM, "out of memory");
		goto out;
	}
	sc->n = choose(c, sc->cls);
	nt = members(s, sc->cls, sc->n, t);
	if (!nt) {
		ditto_warn("cpu windows: no live thread of the request-serving classes is left to "
			   "step; the model has no cpu section");
		goto out;
	}
	if ((err = start_child(sc, c, t, nt, o)))
		goto out;
	*out = sc;
	sc = NULL;
out:
	free(t);
	session_cpu_free(sc);
	return err;
}

int session_cpu_fd(const struct session_cpu *sc)
{
	return cpu_child_fd(sc->child);
}

int session_cpu_poll(struct session_cpu *sc)
{
	return cpu_child_poll(sc->child);
}

void session_cpu_stop(struct session_cpu *sc)
{
	cpu_child_stop(sc->child);
}

/* Wait for the windows and add them under their thread class names. */
int session_cpu_store(struct session_cpu *sc, const struct classes *c, struct ditto_model *m)
{
	struct ditto_model *res = NULL;
	struct ditto_service *svc = ditto_model_service(m, 0), *rs;
	int err = cpu_child_finish(sc->child, &res), e = 0;

	/* A failed window is a warning (the system profile stands on its
	 * own), but a killed tracer is an error: it may have hurt the target. */
	if (err == -ECHILD) {
		ditto_model_free(res);
		return err;
	}
	if (err)
		ditto_warn("cpu windows: %s", ditto_last_error());
	rs = res ? ditto_model_service(res, 0) : NULL;
	for (unsigned k = 0; rs && svc && k < sc->n && !e; k++) {
		struct ditto_cpu *src = ditto_service_cpu(rs, k);
		struct ditto_cpu *dst = ditto_service_add_cpu(svc, c->cls[sc->cls[k]].name);

		if (src && ditto_cpu_instructions(src))
			e = dst ? cpu_merge(dst, src) : -ENOMEM;
	}
	ditto_model_free(res);
	return e;
}

void session_cpu_free(struct session_cpu *sc)
{
	if (!sc)
		return;
	cpu_child_free(sc->child);
	free(sc->cls);
	free(sc);
}

/* ---- hardware counters of the system window ---- */

static atomic_bool counters_warned;

int session_counters_store(struct hw_counters *h, const char *why, struct ditto_model *m)
{
	struct ditto_service *svc = ditto_model_service(m, 0);
	struct ditto_observed *o = svc ? ditto_service_observed_ensure(svc) : NULL;
	uint64_t v[HW_COUNTERS_N];
	uint32_t have = 0;
	int err;

	if (!o)
		return 0;
	if (!h) {
		/* Once per process: a tuning run profiles and measures dozens
		 * of times, and the host does not grow a PMU in between. */
		if (!atomic_exchange(&counters_warned, true))
			ditto_warn("hardware counters unavailable (%s); observed.counters.available "
				   "is false (said once per process)", why && *why ? why : "not opened");
		return ditto_observed_set_counters_available(o, false);
	}
	hw_counters_read(h, v, &have);
	if ((err = ditto_observed_set_counters_available(o, true)))
		return err;
	for (int i = 0; i < HW_COUNTERS_N && !err; i++)
		if (have & (1u << i))
			err = ditto_observed_set_counter(o, (enum ditto_counter)i, v[i]);
	return err;
}
