/* SPDX-License-Identifier: MIT */
/*
 * Per-thread weighted prefix tree of stack frames. A node's weight is the
 * number of samples whose stack passes through it (inclusive count), and
 * children keep the order in which they were first sampled, as the artifact
 * builds them; tree_distance.c puts siblings in a canonical order.
 */
#include <errno.h>
#include <stdlib.h>

#include "threads_int.h"

static uint64_t kid_key(uint32_t parent, uint32_t label)
{
	return (uint64_t)parent << 32 | label;
}

static int new_node(struct calltree *t, uint32_t parent, uint32_t label, uint32_t *id)
{
	struct ctnode *n;

	if (t->n >= CT_NONE - 1)
		return ditto_err(-DITTO_ELIMIT, "threads: call tree too large");
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct ctnode *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return ditto_err(-ENOMEM, "threads: out of memory");
		t->v = v;
		t->cap = cap;
	}
	*id = (uint32_t)t->n;
	n = &t->v[t->n++];
	*n = (struct ctnode){ .label = label, .parent = parent, .first_child = CT_NONE,
			      .last_child = CT_NONE, .next_sibling = CT_NONE };
	if (parent == CT_NONE)
		return 0;
	/* Append, so siblings stay in first-seen order. */
	if (t->v[parent].last_child == CT_NONE)
		t->v[parent].first_child = *id;
	else
		t->v[t->v[parent].last_child].next_sibling = *id;
	t->v[parent].last_child = *id;
	return idmap_put(&t->kids, kid_key(parent, label), *id);
}

int calltree_init(struct calltree *t, uint32_t root_label)
{
	uint32_t root;

	*t = (struct calltree){ 0 };
	return new_node(t, CT_NONE, root_label, &root);
}

static int child(struct calltree *t, uint32_t parent, uint32_t label, uint32_t *id)
{
	if (idmap_get(&t->kids, kid_key(parent, label), id))
		return 0;
	return new_node(t, parent, label, id);
}

int calltree_add(struct calltree *t, const uint32_t *path, size_t len, uint64_t w)
{
	uint32_t at = 0;

	t->v[0].weight += w;
	for (size_t i = 0; i < len; i++) {
		int err = child(t, at, path[i], &at);

		if (err)
			return err;
		t->v[at].weight += w;
	}
	return 0;
}

void calltree_free(struct calltree *t)
{
	free(t->v);
	idmap_free(&t->kids);
	*t = (struct calltree){ 0 };
}
