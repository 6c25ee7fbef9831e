/* SPDX-License-Identifier: MIT */
/* Open-addressing hash map from 64-bit keys to 32-bit ids (threads, processes, tree children). */
#include <errno.h>
#include <stdlib.h>

#include "core_int.h"

static size_t slot_of(uint64_t key, size_t cap)
{
	/* Fibonacci hashing: consecutive tids and (parent, label) keys spread out. */
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 29) & (cap - 1);
}

static void place(uint64_t *keys, uint32_t *vals, size_t cap, uint64_t key, uint32_t val)
{
	size_t i = slot_of(key, cap);

	while (vals[i] != IDMAP_EMPTY && keys[i] != key)
		i = (i + 1) & (cap - 1);
	keys[i] = key;
	vals[i] = val;
}

static int grow(struct idmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	uint64_t *keys = malloc(ncap * sizeof(*keys));
	uint32_t *vals = malloc(ncap * sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return ditto_err(-ENOMEM, "threads: out of memory");
	}
	for (size_t i = 0; i < ncap; i++)
		vals[i] = IDMAP_EMPTY;
	for (size_t i = 0; i < m->cap; i++)
		if (m->vals[i] != IDMAP_EMPTY)
			place(keys, vals, ncap, m->keys[i], m->vals[i]);
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = ncap;
	return 0;
}

int idmap_put(struct idmap *m, uint64_t key, uint32_t val)
{
	uint32_t old;

	if (!idmap_get(m, key, &old)) {
		/* Keep the load under 1/2 so probes stay short. */
		if ((m->n + 1) * 2 > m->cap) {
			int err = grow(m);

			if (err)
				return err;
		}
		m->n++;
	}
	place(m->keys, m->vals, m->cap, key, val);
	return 0;
}

bool idmap_get(const struct idmap *m, uint64_t key, uint32_t *val)
{
	if (!m->cap)
		return false;
	for (size_t i = slot_of(key, m->cap); m->vals[i] != IDMAP_EMPTY; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			*val = m->vals[i];
			return true;
		}
	}
	return false;
}

void idmap_free(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
	*m = (struct idmap){ 0 };
}
