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

#include "profile_int.h"

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

static void assign_roles(struct classes *c)
{
	for (size_t i = 0; i < c->n; i++) {
		c->cls[i].role = role_of(&c->cls[i]);
		c->cls[i].io = io_of(c->cls[i].bits);
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

/*
 * Background classes that the network or acceptor class wakes for most of
 * their wake-ups, and that do real work (a tenth of the network class's
 * CPU time or more), are workers: requests are handed to them. Periodic
 * housekeeping threads woken now and then stay background.
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
		    k->cpu_ns * 10 >= net_cpu)
			k->role = DITTO_ROLE_WORKER;
	}
	free(from_net);
}

int classify_threads(struct snapshot *s, struct classes *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	if ((err = group_threads(s, out))) {
		classes_free(out);
		return err;
	}
	assign_roles(out);
	find_workers(s, out);
	name_classes(out);
	return 0;
}

void classes_free(struct classes *c)
{
	free(c->cls);
	memset(c, 0, sizeof(*c));
}
