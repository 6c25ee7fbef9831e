/* SPDX-License-Identifier: MIT */
/*
 * One-pass LRU stack distance (Bennett-Kruskal): every line's last access
 * time carries a mark in a Fenwick tree over time, so the distinct lines
 * touched since a line's previous access are the marks after that time:
 * O(log n) per access. When time runs past the tree, live marks are
 * renumbered in order (compaction), so memory follows distinct lines.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_int.h"

struct slot {
	uint64_t line;		/* line + 1; 0 = empty */
	uint64_t t;
};

struct reuse {
	uint32_t *bit;		/* Fenwick tree, 1-based, over time */
	size_t n;		/* times 1..n */
	uint64_t now;
	uint64_t live;		/* marks in the tree = distinct lines */
	struct slot *slots;
	size_t cap, used;
	bool oom;
};

static void bit_add(struct reuse *r, size_t i, int v)
{
	for (; i <= r->n; i += i & -i)
		r->bit[i] += (uint32_t)v;
}

static uint64_t bit_sum(const struct reuse *r, size_t i)
{
	uint64_t s = 0;

	for (; i > 0; i -= i & -i)
		s += r->bit[i];
	return s;
}

static struct slot *find(struct reuse *r, uint64_t line)
{
	size_t j = cpu_hash64(line) & (r->cap - 1);

	while (r->slots[j].line && r->slots[j].line != line + 1)
		j = (j + 1) & (r->cap - 1);
	return &r->slots[j];
}

static bool grow_slots(struct reuse *r)
{
	size_t cap = r->cap ? r->cap * 2 : 1024;
	struct slot *old = r->slots, *s;
	size_t oldcap = r->cap;

	if (!(s = calloc(cap, sizeof(*s))))
		return false;
	r->slots = s;
	r->cap = cap;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].line)
			*find(r, old[i].line - 1) = old[i];
	free(old);
	return true;
}

static int by_time(const void *a, const void *b)
{
	const struct slot *x = *(struct slot *const *)a, *y = *(struct slot *const *)b;

	return x->t < y->t ? -1 : x->t > y->t;
}

/* Renumber live marks 1..live in time order into a tree of twice that. */
static bool compact(struct reuse *r)
{
	size_t n = r->live * 2 + 1024, k = 0;
	struct slot **order = malloc((r->used + 1) * sizeof(*order));
	uint32_t *bit = calloc(n + 1, sizeof(*bit));

	if (!order || !bit) {
		free(order);
		free(bit);
		return false;
	}
	for (size_t i = 0; i < r->cap; i++)
		if (r->slots[i].line)
			order[k++] = &r->slots[i];
	qsort(order, k, sizeof(*order), by_time);
	free(r->bit);
	r->bit = bit;
	r->n = n;
	for (size_t i = 0; i < k; i++) {
		order[i]->t = i + 1;
		bit_add(r, i + 1, 1);
	}
	r->now = k;
	free(order);
	return true;
}

uint64_t reuse_access(struct reuse *r, uint64_t line)
{
	struct slot *s;
	uint64_t dist = 0;

	if (r->oom)
		return 0;
	if ((r->now + 1 > r->n && !compact(r)) ||
	    ((r->used + 1) * 2 > r->cap && !grow_slots(r))) {
		r->oom = true;
		return 0;
	}
	s = find(r, line);
	r->now++;
	if (s->line) {
		dist = r->live - bit_sum(r, s->t) + 1;
		bit_add(r, s->t, -1);
	} else {
		s->line = line + 1;
		r->used++;
		r->live++;
	}
	s->t = r->now;
	bit_add(r, r->now, 1);
	return dist;
}

void reuse_reset(struct reuse *r)
{
	if (r->slots)
		memset(r->slots, 0, r->cap * sizeof(*r->slots));
	if (r->bit)
		memset(r->bit, 0, (r->n + 1) * sizeof(*r->bit));
	r->now = r->live = r->used = 0;
	r->oom = false;
}

struct reuse *reuse_new(void)
{
	return calloc(1, sizeof(struct reuse));
}

void reuse_free(struct reuse *r)
{
	if (!r)
		return;
	free(r->bit);
	free(r->slots);
	free(r);
}
