/* SPDX-License-Identifier: MIT */
/* A growing open-addressing map from 64-bit keys (socket addresses,
 * thread ids) to 32-bit indexes, for the graph's event bookkeeping. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile_int.h"

#define EMPTY UINT64_MAX

static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

static int grow(struct idx_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024;
	uint64_t *keys = malloc(cap * sizeof(*keys));
	uint32_t *vals = malloc(cap * sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	memset(keys, 0xff, cap * sizeof(*keys));
	for (size_t i = 0; i < m->cap; i++) {
		size_t s;

		if (m->keys[i] == EMPTY)
			continue;
		for (s = slot_of(m->keys[i], cap); keys[s] != EMPTY; s = (s + 1) & (cap - 1))
			;
		keys[s] = m->keys[i];
		vals[s] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

int idx_map_put(struct idx_map *m, uint64_t key, uint32_t val)
{
	size_t s;

	if (key == EMPTY)
		return -EINVAL;
	if ((m->n + 1) * 2 > m->cap && grow(m))
		return -ENOMEM;
	for (s = slot_of(key, m->cap); m->keys[s] != EMPTY; s = (s + 1) & (m->cap - 1))
		if (m->keys[s] == key) {
			m->vals[s] = val;
			return 0;
		}
	m->keys[s] = key;
	m->vals[s] = val;
	m->n++;
	return 0;
}

bool idx_map_get(const struct idx_map *m, uint64_t key, uint32_t *val)
{
	if (!m->cap || key == EMPTY)
		return false;
	for (size_t s = slot_of(key, m->cap); m->keys[s] != EMPTY; s = (s + 1) & (m->cap - 1))
		if (m->keys[s] == key) {
			*val = m->vals[s];
			return true;
		}
	return false;
}

void idx_map_free(struct idx_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
