/* SPDX-License-Identifier: MIT */
/* Interned frame labels: trees compare 32-bit ids instead of strings. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "threads_int.h"

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static size_t find_slot(const struct labels *l, const char *s)
{
	size_t i = hash_str(s) & (l->nslots - 1);

	while (l->slots[i] != IDMAP_EMPTY && strcmp(l->str[l->slots[i]], s) != 0)
		i = (i + 1) & (l->nslots - 1);
	return i;
}

static int rehash(struct labels *l)
{
	size_t n = l->nslots ? l->nslots * 2 : 256;
	uint32_t *slots = malloc(n * sizeof(*slots));

	if (!slots)
		return ditto_err(-ENOMEM, "threads: out of memory");
	for (size_t i = 0; i < n; i++)
		slots[i] = IDMAP_EMPTY;
	free(l->slots);
	l->slots = slots;
	l->nslots = n;
	for (uint32_t id = 0; id < l->n; id++)
		l->slots[find_slot(l, l->str[id])] = id;
	return 0;
}

static int append(struct labels *l, const char *s, uint32_t *id)
{
	char *copy;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		char **v = realloc(l->str, cap * sizeof(*v));

		if (!v)
			return ditto_err(-ENOMEM, "threads: out of memory");
		l->str = v;
		l->cap = cap;
	}
	copy = strdup(s);
	if (!copy)
		return ditto_err(-ENOMEM, "threads: out of memory");
	*id = (uint32_t)l->n;
	l->str[l->n++] = copy;
	return 0;
}

int labels_intern(struct labels *l, const char *s, uint32_t *id)
{
	size_t slot;
	int err;

	if ((l->n + 1) * 2 > l->nslots && (err = rehash(l)))
		return err;
	slot = find_slot(l, s);
	if (l->slots[slot] != IDMAP_EMPTY) {
		*id = l->slots[slot];
		return 0;
	}
	if (l->n >= IDMAP_EMPTY - 1)
		return ditto_err(-DITTO_ELIMIT, "threads: too many distinct frame labels");
	if ((err = append(l, s, id)))
		return err;
	l->slots[slot] = *id;
	return 0;
}

const char *labels_str(const struct labels *l, uint32_t id)
{
	return id < l->n ? l->str[id] : "?";
}

static int by_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int labels_rank(const struct labels *l, uint32_t **rank)
{
	char **sorted = malloc((l->n + 1) * sizeof(*sorted));
	uint32_t *r = malloc((l->n + 1) * sizeof(*r));

	if (!sorted || !r) {
		free(sorted);
		free(r);
		return ditto_err(-ENOMEM, "threads: out of memory");
	}
	if (l->n) {
		memcpy(sorted, l->str, l->n * sizeof(*sorted));
		qsort(sorted, l->n, sizeof(*sorted), by_string);
	}
	/* Strings are unique, so each sorted pointer finds its id by lookup. */
	for (uint32_t pos = 0; pos < l->n; pos++)
		r[l->slots[find_slot(l, sorted[pos])]] = pos;
	free(sorted);
	*rank = r;
	return 0;
}

void labels_free(struct labels *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->str[i]);
	free(l->str);
	free(l->slots);
	*l = (struct labels){ 0 };
}
