/* SPDX-License-Identifier: MIT */
/*
 * Average-linkage agglomerative clustering on a precomputed distance
 * matrix, with a distance threshold instead of a class count: the same
 * contract as the artifact's sklearn call (merge while the two nearest
 * classes are closer than the threshold).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "threads_int.h"

struct linkage {
	double *d;	/* n*n: average distance between active classes */
	size_t *size;
	size_t *owner;	/* item -> class it was merged into (follow to a root) */
	bool *active;
	int *cls;	/* root -> class number, while numbering */
	size_t n;
};

static double clean(double x)
{
	/* A distance that could not be computed counts as "unrelated". */
	return isnan(x) ? 1.0 : x;
}

static bool nearest(const struct linkage *l, size_t *p, size_t *q, double *best)
{
	bool found = false;

	for (size_t i = 0; i < l->n; i++) {
		if (!l->active[i])
			continue;
		for (size_t j = i + 1; j < l->n; j++) {
			/* Strict <: ties go to the lowest pair, so results are reproducible. */
			if (l->active[j] && (!found || l->d[i * l->n + j] < *best)) {
				*best = l->d[i * l->n + j];
				*p = i;
				*q = j;
				found = true;
			}
		}
	}
	return found;
}

/* Lance-Williams update for average linkage: size-weighted mean of distances. */
static void merge(struct linkage *l, size_t p, size_t q)
{
	double sp = (double)l->size[p], sq = (double)l->size[q];

	for (size_t k = 0; k < l->n; k++) {
		if (!l->active[k] || k == p || k == q)
			continue;
		double v = (sp * l->d[p * l->n + k] + sq * l->d[q * l->n + k]) / (sp + sq);

		l->d[p * l->n + k] = l->d[k * l->n + p] = v;
	}
	l->size[p] += l->size[q];
	l->active[q] = false;
	l->owner[q] = p;
}

static size_t root_of(const struct linkage *l, size_t i)
{
	while (l->owner[i] != i)
		i = l->owner[i];
	return i;
}

/* Classes numbered in order of first appearance of a member. */
static void number_classes(struct linkage *l, int *class_of, size_t *nclasses)
{
	size_t next = 0;

	for (size_t i = 0; i < l->n; i++)
		l->cls[i] = -1;
	for (size_t i = 0; i < l->n; i++) {
		size_t r = root_of(l, i);

		if (l->cls[r] < 0)
			l->cls[r] = (int)next++;
		class_of[i] = l->cls[r];
	}
	*nclasses = next;
}

int cluster_average(const double *d, size_t n, double threshold, int *class_of,
		    size_t *nclasses)
{
	struct linkage l = { .n = n };
	size_t p, q;
	double best;
	int err = 0;

	if (!(threshold >= 0 && threshold <= 1))
		return ditto_err(-EINVAL, "threads: cluster threshold %g is not in [0,1]", threshold);
	*nclasses = 0;
	if (!n)
		return 0;
	if (n > SIZE_MAX / n / sizeof(double))
		return ditto_err(-DITTO_ELIMIT, "threads: %zu threads to cluster", n);
	l.d = malloc(n * n * sizeof(*l.d));
	l.size = malloc(n * sizeof(*l.size));
	l.owner = malloc(n * sizeof(*l.owner));
	l.active = malloc(n * sizeof(*l.active));
	l.cls = malloc(n * sizeof(*l.cls));
	if (!l.d || !l.size || !l.owner || !l.active || !l.cls) {
		err = ditto_err(-ENOMEM, "threads: out of memory");
		goto done;
	}
	for (size_t i = 0; i < n * n; i++)
		l.d[i] = clean(d[i]);
	for (size_t i = 0; i < n; i++) {
		l.size[i] = 1;
		l.owner[i] = i;
		l.active[i] = true;
	}
	while (nearest(&l, &p, &q, &best) && best < threshold)
		merge(&l, p, q);
	number_classes(&l, class_of, nclasses);
done:
	free(l.cls);
	free(l.d);
	free(l.size);
	free(l.owner);
	free(l.active);
	return err;
}
