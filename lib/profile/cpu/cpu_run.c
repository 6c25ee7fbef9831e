/* SPDX-License-Identifier: MIT */
/*
 * A series of execution windows over chosen threads: windows go round-robin
 * over thread classes and, within a class, over its member threads, spaced
 * so the service runs freely between them. One decoder per process, one
 * analysis per class. Threads that exit drop out; their windows are kept.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core_int.h"
#include "cpu_int.h"
#include "cpu_run.h"

#include <ditto/profile.h>

struct run_class {
	struct analysis *a;
	uint64_t stepped_ns;
	uint64_t by_mode[3];	/* windows per enum ditto_step_mode */
	size_t next;		/* next member (round-robin) */
	unsigned idle;		/* windows in a row that found it blocked */
};

/* A class whose threads sat in a system call for this many whole windows
 * in a row is idle: more windows would only wait out their timeouts. */
#define IDLE_WINDOWS 2

struct proc_dec {
	pid_t tgid;
	struct decoder *d;
};

struct cpu_run {
	struct cpu_target *t;
	size_t nt;
	bool *dead;
	struct run_class *cls;
	unsigned ncls;
	struct proc_dec *dec;
	size_t ndec;
	struct keytab *kt;
	struct cpu_run_opts o;
	unsigned taken, next_cls;
	double next_due;
	bool perm_error;
};

static double mono_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static struct decoder *decoder_for(struct cpu_run *r, pid_t tgid)
{
	for (size_t i = 0; i < r->ndec; i++)
		if (r->dec[i].tgid == tgid)
			return r->dec[i].d;
	return NULL;
}

static int open_decoders(struct cpu_run *r)
{
	int err;

	r->dec = calloc(r->nt ? r->nt : 1, sizeof(*r->dec));
	r->kt = keytab_new();
	if (!r->dec || !r->kt)
		return ditto_err(-ENOMEM, "out of memory");
	for (size_t i = 0; i < r->nt; i++) {
		struct proc_dec *p;

		if (decoder_for(r, r->t[i].tgid))
			continue;
		p = &r->dec[r->ndec];
		p->tgid = r->t[i].tgid;
		if ((err = decoder_new(p->tgid, r->kt, &p->d)))
			return err;
		r->ndec++;
	}
	return 0;
}

int cpu_run_new(const struct cpu_target *t, size_t nt, unsigned ncls, const struct cpu_run_opts *o,
		struct cpu_run **out)
{
	struct cpu_run *r = calloc(1, sizeof(*r));
	int err = -ENOMEM;

	*out = NULL;
	if (!r)
		return ditto_err(-ENOMEM, "out of memory");
	r->o = *o;
	r->nt = nt;
	r->ncls = ncls;
	r->t = malloc((nt ? nt : 1) * sizeof(*t));
	r->dead = calloc(nt ? nt : 1, sizeof(bool));
	r->cls = calloc(ncls ? ncls : 1, sizeof(*r->cls));
	if (!r->t || !r->dead || !r->cls)
		goto fail;
	memcpy(r->t, t, nt * sizeof(*t));
	if ((err = open_decoders(r)))
		goto fail;
	if (!r->ndec) {
		err = ditto_err(-EINVAL, "cpu profile: no thread to step");
		goto fail;
	}
	for (unsigned c = 0; c < ncls; c++)
		if (!(r->cls[c].a = analysis_new(decoder_classifier(r->dec[0].d)))) {
			err = -ENOMEM;
			goto fail;
		}
	*out = r;
	return 0;
fail:
	cpu_run_free(r);
	return err == -ENOMEM ? ditto_err(err, "out of memory") : err;
}

/* Next live member of class c, round-robin; -1 when none is left. */
static ssize_t pick(struct cpu_run *r, unsigned c)
{
	struct run_class *k = &r->cls[c];

	for (size_t n = 0; n < r->nt; n++) {
		size_t i = (k->next + n) % r->nt;

		if (r->t[i].cls == (int)c && !r->dead[i]) {
			k->next = i + 1;
			return (ssize_t)i;
		}
	}
	return -1;
}

/* Next class with a live member, round-robin from next_cls. */
static ssize_t pick_target(struct cpu_run *r)
{
	for (unsigned n = 0; n < r->ncls; n++) {
		unsigned c = (r->next_cls + n) % r->ncls;
		ssize_t i = pick(r, c);

		if (i >= 0 && r->cls[c].idle < IDLE_WINDOWS) {
			r->next_cls = c + 1;
			return i;
		}
	}
	return -1;
}

/* Some class is neither idle nor without live members. */
static bool pick_possible(const struct cpu_run *r)
{
	for (size_t i = 0; i < r->nt; i++)
		if (!r->dead[i] && r->cls[r->t[i].cls].idle < IDLE_WINDOWS)
			return true;
	return false;
}

/* A class is named in messages, never numbered: an index means nothing
 * to whoever reads the warning (issue 18). */
static void warn_idle(const struct cpu_run *r, unsigned c)
{
	const char *name = r->o.class_names ? r->o.class_names[c] : NULL;
	char who[300];

	if (name) {
		snprintf(who, sizeof(who), "thread class '%s'", name);
		text_show_safely(who, sizeof(who));
	} else {
		snprintf(who, sizeof(who), "the stepped threads");
	}
	ditto_warn("cpu windows: %s stayed blocked in a system call for %d windows: no load? "
		   "the remaining windows of %s are skipped", who, IDLE_WINDOWS,
		   name ? "the class" : "them");
}

int cpu_run_step(struct cpu_run *r, const volatile int *stop)
{
	struct step_opts so = { r->o.window_insts, r->o.window_timeout_s, stop, r->o.step_mode };
	struct step_result res;
	struct run_class *k;
	ssize_t i;
	int err;

	if (r->taken >= r->o.windows * r->ncls || (stop && *stop))
		return 0;
	if ((i = pick_target(r)) < 0)
		return 0;
	k = &r->cls[r->t[i].cls];
	err = step_window(r->t[i].tgid, r->t[i].tid, decoder_for(r, r->t[i].tgid), k->a, &so, &res);
	r->taken++;
	k->stepped_ns += res.ns;
	k->by_mode[res.bp_failed ? DITTO_STEP_SYSCALL_STOPS : so.mode]++;
	if (res.bp_failed && r->o.step_mode == DITTO_STEP_BREAKPOINT) {
		ditto_warn("cpu windows: a hardware breakpoint did not fire on thread %d; the "
			   "remaining windows use syscall stops", (int)r->t[i].tid);
		r->o.step_mode = DITTO_STEP_SYSCALL_STOPS;
	}
	k->idle = res.insts == 0 && res.timed_out ? k->idle + 1 : 0;
	if (k->idle == IDLE_WINDOWS)
		warn_idle(r, (unsigned)r->t[i].cls);
	if (res.thread_exited)
		r->dead[i] = true;
	if (err)
		return err;
	r->next_due = mono_s() + r->o.spacing_s;
	return r->taken < r->o.windows * r->ncls && pick_possible(r);
}

double cpu_run_wait_s(const struct cpu_run *r)
{
	double left = r->next_due - mono_s();

	return left > 0 ? left : 0;
}

int cpu_run_store(struct cpu_run *r, unsigned c, struct ditto_cpu *out)
{
	struct run_class *k = &r->cls[c];
	int err;

	if (c >= r->ncls)
		return -EINVAL;
	if ((err = analysis_store(k->a, r->kt, out)))
		return err;
	for (int m = DITTO_STEP_BREAKPOINT; m <= DITTO_STEP_SYSCALL_STOPS && !err; m++)
		if (k->by_mode[m])
			err = ditto_counts_add(ditto_cpu_stepping_ensure(out),
					       ditto_step_mode_name(m), k->by_mode[m]);
	if (err)
		return err;
	return ditto_cpu_set_stepped_ns(out, ditto_cpu_stepped_ns(out) + k->stepped_ns);
}

uint64_t cpu_run_instructions(const struct cpu_run *r)
{
	uint64_t n = 0;

	for (unsigned c = 0; c < r->ncls; c++)
		n += analysis_instructions(r->cls[c].a);
	return n;
}

void cpu_run_free(struct cpu_run *r)
{
	if (!r)
		return;
	for (unsigned c = 0; r->cls && c < r->ncls; c++)
		analysis_free(r->cls[c].a);
	for (size_t i = 0; i < r->ndec; i++)
		decoder_free(r->dec[i].d);
	free(r->dec);
	keytab_free(r->kt);
	free(r->cls);
	free(r->dead);
	free(r->t);
	free(r);
}
