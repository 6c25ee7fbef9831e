/* SPDX-License-Identifier: MIT */
/*
 * Thread classes, their roles and I/O models, from what the collector saw
 * each thread do. Threads are grouped by what they do (accept, serve
 * connections, multiplex with epoll/poll/select, connect out) and by
 * whether they are the target's main thread; names are not used, since
 * one pool's threads are often named apart ("bio_aof", "bio_lazy_free").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "profile_int.h"
#include "threads.h"

/* Within one behaviour group, threads whose call trees, each as shares of
 * its own samples, are further apart than this are different classes. The
 * shares leave load out: threads of one role on one code path serve what
 * the kernel or their clients give them (nginx's workers on a shared socket,
 * a load generator's connections on a busy host), which the clone cannot
 * choose either. Code that differs (another leaf, another loop) is far
 * apart at any load. */
#define SPLIT_THRESHOLD 0.4
/* Fewer samples than this give no usable tree: such threads follow the
 * largest class of their group. */
#define MIN_SAMPLES 30

#define BEHAVIOUR (TB_ACCEPTS | TB_CONN_IO | TB_EPOLL | TB_POLL | TB_SELECT | TB_CONNECTS)

struct group_key {
	uint32_t bits;
	bool main;
};

static void key_of(const struct snapshot *s, const struct thread_rec *t, struct group_key *k)
{
	memset(k, 0, sizeof(*k));
	k->bits = t->info.bits & BEHAVIOUR;
	k->main = t->tid == (uint32_t)s->target;
}

static enum ditto_role role_of(const struct thread_class_rec *c)
{
	if (c->bits & TB_CONN_IO)
		return DITTO_ROLE_NETWORK;
	if (c->bits & TB_ACCEPTS)
		return DITTO_ROLE_ACCEPTOR;
	if (c->has_main)
		return DITTO_ROLE_MAIN;
	return DITTO_ROLE_BACKGROUND;
}

static enum ditto_io_model io_of(uint32_t bits)
{
	if (bits & TB_EPOLL)
		return DITTO_IO_EPOLL;
	if (bits & TB_POLL)
		return DITTO_IO_POLL;
	if (bits & TB_SELECT)
		return DITTO_IO_SELECT;
	if (bits & TB_NONBLOCK_IO)
		return DITTO_IO_NONBLOCKING;
	return DITTO_IO_BLOCKING;
}

static int add_class(struct classes *c, size_t *cap)
{
	if (c->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct thread_class_rec *p = realloc(c->cls, ncap * sizeof(*p));

		if (!p)
			return ditto_err(-ENOMEM, "out of memory");
		c->cls = p;
		*cap = ncap;
	}
	memset(&c->cls[c->n], 0, sizeof(c->cls[0]));
	return (int)c->n++;
}

static void join(struct thread_class_rec *c, const struct thread_rec *t, bool main)
{
	c->count++;
	c->bits |= t->info.bits;
	c->cpu_ns += t->info.cpu_ns;
	c->ctx_switches += t->info.ctx_switches;
	c->wakeups += t->info.wakeups;
	c->threads_created += t->info.threads_created;
	c->processes_created += t->info.processes_created;
	c->has_main |= main;
	c->created |= (t->info.bits & TB_CREATED) != 0;
}

static int group_threads(struct snapshot *s, struct classes *c)
{
	struct group_key *keys = calloc(s->nthreads + 1, sizeof(*keys));
	size_t cap = 0;

	if (!keys)
		return ditto_err(-ENOMEM, "out of memory");
	for (size_t i = 0; i < s->nthreads; i++) {
		struct thread_rec *t = &s->threads[i];
		struct group_key k;
		int cls = -1;

		key_of(s, t, &k);
		for (size_t j = 0; j < c->n && cls < 0; j++)
			if (!memcmp(&keys[j], &k, sizeof(k)))
				cls = (int)j;
		if (cls < 0) {
			if ((cls = add_class(c, &cap)) < 0) {
				free(keys);
				return cls;
			}
			keys[cls] = k;
		}
		t->cls = cls;
		join(&c->cls[cls], t, k.main);
	}
	free(keys);
	return 0;
}

/*
 * Whether class cls waits on futexes (condition variables) and is woken
 * mostly by other classes: a pool fed by a listener thread. Its reads of
 * non-blocking sockets come after a hand-over, not in a spin: busy
 * polling never sleeps, so a spinning class has next to no wake-ups and
 * no futex waits (issue 18: such a pool, taken for busy polling, became a
 * clone of 100 spinning threads).
 */
static bool fed_through_futex(const struct snapshot *s, const struct thread_class_rec *k, int cls)
{
	uint64_t futex = 0, from_others = 0;

	for (size_t i = 0; i < s->nstats; i++) {
		const struct thread_rec *t = snapshot_thread(s, s->stats[i].key.tid);

		if (t && t->cls == cls && s->stats[i].key.nr == SYS_futex)
			futex += s->stats[i].val.calls;
	}
	for (size_t i = 0; i < s->nwakes; i++) {
		const struct thread_rec *a = snapshot_thread(s, s->wakes[i].key.waker);
		const struct thread_rec *b = snapshot_thread(s, s->wakes[i].key.wakee);

		if (a && b && b->cls == cls && a->cls >= 0 && a->cls != cls)
			from_others += s->wakes[i].count;
	}
	return futex && k->wakeups && from_others * 2 >= k->wakeups;
}

/* A non-blocking reader that sleeps on a futex until another class hands
 * it work blocks (in the futex), it does not poll: it is a blocking pool. */
static void assign_roles(const struct snapshot *s, struct classes *c)
{
	for (size_t i = 0; i < c->n; i++) {
		struct thread_class_rec *k = &c->cls[i];

		k->role = role_of(k);
		k->io = io_of(k->bits);
		if (k->io == DITTO_IO_NONBLOCKING && fed_through_futex(s, k, (int)i))
			k->io = DITTO_IO_BLOCKING;
	}
}

/* Names say what a class does ("network", "background2"), never what the
 * original called its threads. */
static void name_classes(struct classes *c)
{
	for (size_t i = 0; i < c->n; i++) {
		const char *role = ditto_role_name(c->cls[i].role);
		int same = 0;

		for (size_t j = 0; j < i; j++)
			same += c->cls[j].role == c->cls[i].role;
		if (same)
			snprintf(c->cls[i].name, sizeof(c->cls[i].name), "%s%d", role, same + 1);
		else
			snprintf(c->cls[i].name, sizeof(c->cls[i].name), "%s", role);
	}
}

/* Timed sleeps of class cls's threads: each ends in a timer's wake-up,
 * which the scheduler credits to whatever thread ran on that CPU. */
static uint64_t timer_sleeps(const struct snapshot *s, int cls)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->nstats; i++) {
		const struct thread_rec *t = snapshot_thread(s, s->stats[i].key.tid);
		unsigned nr = s->stats[i].key.nr;

		if (t && t->cls == cls && (nr == SYS_nanosleep || nr == SYS_clock_nanosleep))
			n += s->stats[i].val.calls;
	}
	return n;
}

/*
 * Background classes that the network or acceptor class wakes for most of
 * their wake-ups, and that do real work (a tenth of the network class's
 * CPU time or more), are workers: requests are handed to them. Periodic
 * housekeeping threads woken now and then stay background, and so do
 * threads that mostly wake from timed sleeps: with the service on one CPU
 * their timers fire while a network thread runs, and it is named the
 * waker (a memcached clone's five housekeeping threads became workers).
 */
static void find_workers(const struct snapshot *s, struct classes *c)
{
	uint64_t *from_net = calloc(c->n + 1, sizeof(*from_net)), net_cpu = 0;

	if (!from_net)
		return;
	for (size_t i = 0; i < c->n; i++)
		if (c->cls[i].role == DITTO_ROLE_NETWORK)
			net_cpu += c->cls[i].cpu_ns;
	for (size_t i = 0; i < s->nwakes; i++) {
		const struct thread_rec *a = snapshot_thread(s, s->wakes[i].key.waker);
		const struct thread_rec *b = snapshot_thread(s, s->wakes[i].key.wakee);
		enum ditto_role ra;

		if (!a || !b || a->cls < 0 || b->cls < 0 || a->cls == b->cls)
			continue;
		ra = c->cls[a->cls].role;
		if (ra == DITTO_ROLE_NETWORK || ra == DITTO_ROLE_ACCEPTOR)
			from_net[b->cls] += s->wakes[i].count;
	}
	for (size_t i = 0; i < c->n; i++) {
		struct thread_class_rec *k = &c->cls[i];

		if (k->role == DITTO_ROLE_BACKGROUND && from_net[i] && from_net[i] * 2 >= k->wakeups &&
		    k->cpu_ns * 10 >= net_cpu && timer_sleeps(s, (int)i) * 2 < k->wakeups)
			k->role = DITTO_ROLE_WORKER;
	}
	free(from_net);
}

static uint64_t samples_of(const struct thread_sampler *ts, uint32_t tid)
{
	struct thread_sampler_thread_info info;

	for (size_t i = 0; i < thread_sampler_thread_count(ts); i++)
		if (thread_sampler_thread(ts, i, &info) == 0 && (uint32_t)info.tid == tid)
			return info.samples;
	return 0;
}

/* Cluster the well-sampled members of group g; sub[i] gets the cluster of
 * s->threads[i] (members only), unsampled members the largest cluster. */
static int split_group(const struct snapshot *s, const struct thread_sampler *ts, int g, int *sub)
{
	int *tids = calloc(s->nthreads, sizeof(*tids)), *cls = calloc(s->nthreads, sizeof(*cls));
	size_t *idx = calloc(s->nthreads, sizeof(*idx)), n = 0, ncls = 0, size[64] = { 0 };
	int err = 0, largest = 0;

	if (!tids || !cls || !idx) {
		err = ditto_err(-ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i].cls == g && samples_of(ts, s->threads[i].tid) >= MIN_SAMPLES) {
			idx[n] = i;
			tids[n++] = (int)s->threads[i].tid;
		}
	if (n >= 2 && (err = thread_sampler_cluster(ts, tids, n, SPLIT_THRESHOLD, THREAD_SAMPLER_SHAPE,
						    cls, &ncls)))
		goto out;
	for (size_t j = 0; j < n; j++) {
		sub[idx[j]] = n >= 2 && cls[j] < 64 ? cls[j] : 0;
		size[sub[idx[j]]]++;
	}
	for (int k = 1; k < 64; k++)
		if (size[k] > size[largest])
			largest = k;
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i].cls == g && sub[i] < 0)
			sub[i] = largest;
out:
	free(tids);
	free(cls);
	free(idx);
	return err;
}

static int find_or_add(struct classes *c, size_t *cap, int group, int sub)
{
	int k;

	for (size_t i = 0; i < c->n; i++)
		if (c->cls[i].group == group && c->cls[i].sub == sub)
			return (int)i;
	if ((k = add_class(c, cap)) >= 0) {
		c->cls[k].group = group;
		c->cls[k].sub = sub;
	}
	return k;
}

/* Split every behaviour group by call-tree distance, then rebuild the
 * class records from the new assignment. */
static int split_groups(struct snapshot *s, const struct thread_sampler *ts, struct classes *c)
{
	int *sub = malloc((s->nthreads + 1) * sizeof(*sub)), err = 0;
	size_t ngroups = c->n, cap = c->n;

	if (!sub)
		return ditto_err(-ENOMEM, "out of memory");
	for (size_t i = 0; i < s->nthreads; i++)
		sub[i] = -1;
	for (size_t g = 0; g < ngroups && !err; g++)
		err = split_group(s, ts, (int)g, sub);
	c->n = 0;
	for (size_t i = 0; i < s->nthreads && !err; i++) {
		struct thread_rec *t = &s->threads[i];
		int k = find_or_add(c, &cap, t->cls, sub[i] < 0 ? 0 : sub[i]);

		if (k < 0) {
			err = k;
			break;
		}
		t->cls = k;
		join(&c->cls[k], t, t->tid == (uint32_t)s->target);
	}
	free(sub);
	return err;
}

int classify_threads(struct snapshot *s, const struct thread_sampler *ts, struct classes *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	if ((err = group_threads(s, out)) || (ts && (err = split_groups(s, ts, out)))) {
		classes_free(out);
		return err;
	}
	assign_roles(s, out);
	find_workers(s, out);
	name_classes(out);
	return 0;
}

void classes_free(struct classes *c)
{
	free(c->cls);
	memset(c, 0, sizeof(*c));
}
