/* SPDX-License-Identifier: MIT */
/*
 * struct ditto_metrics: named measurements in the order they were first
 * set. A handful of entries per measurement, so a linear search is right.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "tune_int.h"

struct metric {
	char *name;
	double value;
};

struct ditto_metrics {
	struct metric *v;
	size_t n, cap;
};

DITTO_API int ditto_metrics_new(struct ditto_metrics **out)
{
	if (!out)
		return ditto_err(-EINVAL, "metrics: out is NULL");
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return ditto_err(-ENOMEM, "metrics: out of memory");
	return 0;
}

DITTO_API void ditto_metrics_free(struct ditto_metrics *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].name);
	free(m->v);
	free(m);
}

DITTO_API size_t ditto_metrics_count(const struct ditto_metrics *m)
{
	return m ? m->n : 0;
}

DITTO_API int ditto_metrics_entry(const struct ditto_metrics *m, size_t i, const char **name,
				  double *value)
{
	if (!m || i >= m->n)
		return ditto_err(-DITTO_ENOTFOUND, "metrics: no entry %zu (there are %zu)", i,
				 ditto_metrics_count(m));
	if (name)
		*name = m->v[i].name;
	if (value)
		*value = m->v[i].value;
	return 0;
}

static struct metric *find(const struct ditto_metrics *m, const char *name)
{
	for (size_t i = 0; m && name && i < m->n; i++)
		if (strcmp(m->v[i].name, name) == 0)
			return &m->v[i];
	return NULL;
}

DITTO_API int ditto_metrics_get(const struct ditto_metrics *m, const char *name, double *value)
{
	const struct metric *e = find(m, name);

	if (!e)
		return ditto_err(-DITTO_ENOTFOUND, "metrics: no metric '%s'", name ? name : "(null)");
	if (value)
		*value = e->value;
	return 0;
}

static int append(struct ditto_metrics *m, const char *name, double value)
{
	char *copy;

	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		struct metric *v = realloc(m->v, cap * sizeof(*v));

		if (!v)
			return ditto_err(-ENOMEM, "metrics: out of memory");
		m->v = v;
		m->cap = cap;
	}
	if (!(copy = strdup(name)))
		return ditto_err(-ENOMEM, "metrics: out of memory");
	m->v[m->n++] = (struct metric){ copy, value };
	return 0;
}

DITTO_API int ditto_metrics_set(struct ditto_metrics *m, const char *name, double value)
{
	struct metric *e;

	if (!m || !name || !*name)
		return ditto_err(-EINVAL, "metrics: a metric needs an object and a name");
	if (!isfinite(value))
		return ditto_err(-EINVAL, "metrics: %s: value %g is not finite", name, value);
	if ((e = find(m, name))) {
		e->value = value;
		return 0;
	}
	return append(m, name, value);
}

void tune_metrics_remove(struct ditto_metrics *m, const char *name)
{
	struct metric *e = find(m, name);

	if (!e)
		return;
	free(e->name);
	memmove(e, e + 1, (size_t)(m->v + m->n - (e + 1)) * sizeof(*e));
	m->n--;
}
