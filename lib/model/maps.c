/* SPDX-License-Identifier: MIT */
/* String-keyed maps of the model: counts (instruction mix) and values (knobs). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "model_int.h"

/* A NULL map (a getter's answer for an absent one) reads as empty; adding
 * to it fails with -EINVAL. */

static size_t map_size(const struct dnode *n)
{
	return n && n->type == DN_MAP ? n->m.n : 0;
}

DITTO_API size_t ditto_counts_size(const struct ditto_counts *c)
{
	return map_size(CNODE(c));
}

DITTO_API int ditto_counts_entry(const struct ditto_counts *c, size_t i, const char **key,
				 uint64_t *count)
{
	const struct dnode *n = CNODE(c);

	if (i >= map_size(n))
		return ditto_err(-DITTO_ENOTFOUND, "counts: no entry %zu", i);
	if (key)
		*key = n->m.m[i].key;
	if (count)
		*count = n->m.m[i].val->u;
	return 0;
}

DITTO_API uint64_t ditto_counts_get(const struct ditto_counts *c, const char *key)
{
	const struct dnode *v = dn_get(CNODE(c), key);

	return v ? v->u : 0;
}

DITTO_API int ditto_counts_add(struct ditto_counts *c, const char *key, uint64_t n)
{
	struct dnode *v;
	uint64_t sum;

	if (!key || !*key)
		return ditto_err(-EINVAL, "counts: key must not be empty");
	v = dn_get(CNODE(c), key);
	if (!v)
		return dn_set_u64(NODE(c), key, n);
	if (add_overflows(v->u, n, &sum))
		return ditto_err(-EOVERFLOW, "counts: '%s' overflows", key);
	v->u = sum;
	return 0;
}

DITTO_API uint64_t ditto_counts_total(const struct ditto_counts *c)
{
	const struct dnode *n = CNODE(c);
	uint64_t t = 0;

	for (size_t i = 0; i < map_size(n); i++)
		if (add_overflows(t, n->m.m[i].val->u, &t))
			return UINT64_MAX;
	return t;
}

DITTO_API struct ditto_values *ditto_values_new(void)
{
	struct dnode *n = dn_new(DN_MAP);

	if (!n) {
		ditto_err(-ENOMEM, "values: out of memory");
		return NULL;
	}
	n->detached = true;
	return (struct ditto_values *)n;
}

DITTO_API void ditto_values_free(struct ditto_values *v)
{
	struct dnode *n = NODE(v);

	if (!n)
		return;
	if (!n->detached) {
		ditto_warn("values: not freed: the map belongs to a model (only those of "
			   "ditto_values_new() are the caller's)");
		return;
	}
	dn_free(n);
}

DITTO_API size_t ditto_values_size(const struct ditto_values *v)
{
	return map_size(CNODE(v));
}

DITTO_API int ditto_values_entry(const struct ditto_values *v, size_t i, const char **key,
				 double *value)
{
	const struct dnode *n = CNODE(v);

	if (i >= map_size(n))
		return ditto_err(-DITTO_ENOTFOUND, "values: no entry %zu", i);
	if (key)
		*key = n->m.m[i].key;
	if (value)
		*value = n->m.m[i].val->f;
	return 0;
}

DITTO_API int ditto_values_get(const struct ditto_values *v, const char *key, double *value)
{
	const struct dnode *e = dn_get(CNODE(v), key);

	if (!e)
		return ditto_err(-DITTO_ENOTFOUND, "values: no key '%s'", key ? key : "(null)");
	*value = e->f;
	return 0;
}

DITTO_API int ditto_values_set(struct ditto_values *v, const char *key, double value)
{
	if (!key || !*key)
		return ditto_err(-EINVAL, "values: key must not be empty");
	if (!isfinite(value))
		return ditto_err(-EINVAL, "values: '%s' = %g is not finite", key, value);
	return dn_set_f64(NODE(v), key, value);
}
