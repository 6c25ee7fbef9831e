/* SPDX-License-Identifier: MIT */
/*
 * The shared histogram: sparse sorted buckets of counts, with log2, exact
 * and log-linear bucketing. Counts (not probabilities) so merges add.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hist_int.h"

#define LOGLIN_DEFAULT 4
#define LOGLIN_MAX 8

bool hist_kind_valid(int kind, unsigned precision)
{
	switch (kind) {
	case DITTO_HIST_LOG2:
	case DITTO_HIST_EXACT:
		return precision == 0;
	case DITTO_HIST_LOGLIN:
		return precision >= 1 && precision <= LOGLIN_MAX;
	default:
		return false;
	}
}

const char *hist_kind_name(enum ditto_hist_kind kind)
{
	switch (kind) {
	case DITTO_HIST_LOG2: return "log2";
	case DITTO_HIST_EXACT: return "exact";
	case DITTO_HIST_LOGLIN: return "loglin";
	}
	return "unknown";
}

int hist_kind_parse(const char *name, enum ditto_hist_kind *out)
{
	static const enum ditto_hist_kind kinds[] = { DITTO_HIST_LOG2, DITTO_HIST_EXACT,
						      DITTO_HIST_LOGLIN };

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (strcmp(name, hist_kind_name(kinds[i])) == 0) {
			*out = kinds[i];
			return 0;
		}
	return -DITTO_ENOTFOUND;
}

static unsigned ilog2(uint64_t v)
{
	return 63u - (unsigned)__builtin_clzll(v);
}

uint64_t hist_value_key(const struct ditto_hist *h, uint64_t v)
{
	unsigned p = h->precision, e;

	switch (h->kind) {
	case DITTO_HIST_LOG2:
		return v ? ilog2(v) + 1 : 0;
	case DITTO_HIST_LOGLIN:
		if (v < (1ull << p))
			return v;
		e = ilog2(v);
		return (1ull << p) + (uint64_t)(e - p) * (1ull << p) +
		       ((v >> (e - p)) - (1ull << p));
	default:
		return v;
	}
}

bool hist_key_valid(const struct ditto_hist *h, uint64_t key)
{
	unsigned p = h->precision;

	switch (h->kind) {
	case DITTO_HIST_LOG2:
		return key <= 64;
	case DITTO_HIST_LOGLIN:
		/* Exact values below 2^p, then 2^p sub-buckets for e = p..63. */
		return key < (1ull << p) + (uint64_t)(64 - p) * (1ull << p);
	default:
		return true;
	}
}

void hist_key_range(const struct ditto_hist *h, uint64_t key, uint64_t *lo, uint64_t *hi)
{
	unsigned p = h->precision;
	uint64_t e, sub;

	switch (h->kind) {
	case DITTO_HIST_LOG2:
		*lo = key ? 1ull << (key - 1) : 0;
		*hi = key ? (key == 64 ? UINT64_MAX : (1ull << key) - 1) : 0;
		return;
	case DITTO_HIST_LOGLIN:
		if (key < (1ull << p)) {
			*lo = *hi = key;
			return;
		}
		e = (key >> p) - 1 + p;
		sub = key & ((1ull << p) - 1);
		*lo = ((1ull << p) + sub) << (e - p);
		*hi = *lo + ((1ull << (e - p)) - 1);
		return;
	default:
		*lo = *hi = key;
	}
}

DITTO_API struct ditto_hist *ditto_hist_new(enum ditto_hist_kind kind, unsigned precision)
{
	struct ditto_hist *h;

	if (kind == DITTO_HIST_LOGLIN && precision == 0)
		precision = LOGLIN_DEFAULT;
	if (kind != DITTO_HIST_LOGLIN)
		precision = 0;
	if (!hist_kind_valid(kind, precision)) {
		ditto_err(-EINVAL, "histogram: kind %d precision %u is not supported", kind,
			  precision);
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		ditto_err(-ENOMEM, "histogram: out of memory");
		return NULL;
	}
	h->kind = kind;
	h->precision = precision;
	return h;
}

/*
 * What a model's getter returns for a histogram field the model lacks
 * (hist_absent()): an empty histogram of the field's kind, shared and
 * read-only, so that reading a model never adds to it. Writing one is
 * refused; the fields' _ensure functions create the real one. Const
 * storage: a write path that forgot to refuse faults at once instead of
 * changing what every model's reader sees.
 */
static const struct ditto_hist absent_hists[] = {
	{ .kind = DITTO_HIST_LOG2 },
	{ .kind = DITTO_HIST_EXACT },
	{ .kind = DITTO_HIST_LOGLIN, .precision = LOGLIN_DEFAULT },
};

struct ditto_hist *hist_absent(enum ditto_hist_kind kind)
{
	for (size_t i = 0; i < ARRAY_SIZE(absent_hists); i++)
		if (absent_hists[i].kind == kind)
			return (struct ditto_hist *)&absent_hists[i];
	return (struct ditto_hist *)&absent_hists[0];
}

static bool hist_is_absent(const struct ditto_hist *h)
{
	for (size_t i = 0; i < ARRAY_SIZE(absent_hists); i++)
		if (h == &absent_hists[i])
			return true;
	return false;
}

static int absent_err(void)
{
	return ditto_err(-EINVAL, "histogram: absent from its model, so read-only: the "
			 "field's _ensure function creates it");
}

DITTO_API void ditto_hist_free(struct ditto_hist *h)
{
	if (!h || hist_is_absent(h))
		return;
	free(h->keys);
	free(h->counts);
	free(h);
}

static int hist_grow(struct ditto_hist *h)
{
	size_t cap = h->cap ? h->cap * 2 : 8;
	uint64_t *k, *c;

	k = realloc(h->keys, cap * sizeof(*k));
	if (!k)
		return ditto_err(-ENOMEM, "histogram: out of memory");
	h->keys = k;
	c = realloc(h->counts, cap * sizeof(*c));
	if (!c)
		return ditto_err(-ENOMEM, "histogram: out of memory");
	h->counts = c;
	h->cap = cap;
	return 0;
}

/* Index of the first bucket with keys[i] >= key. */
static size_t hist_find(const struct ditto_hist *h, uint64_t key)
{
	size_t lo = 0, hi = h->n;

	/* Values often arrive in ascending order: try the end first. */
	if (h->n && h->keys[h->n - 1] < key)
		return h->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (h->keys[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int hist_add_key(struct ditto_hist *h, uint64_t key, uint64_t count)
{
	size_t i;
	int err;

	if (count == 0)
		return 0;
	i = hist_find(h, key);
	if (i < h->n && h->keys[i] == key) {
		uint64_t sum;

		if (add_overflows(h->counts[i], count, &sum))
			return ditto_err(-EOVERFLOW, "histogram: bucket count overflows");
		h->counts[i] = sum;
		return 0;
	}
	if (h->n == h->cap && (err = hist_grow(h)))
		return err;
	memmove(h->keys + i + 1, h->keys + i, (h->n - i) * sizeof(*h->keys));
	memmove(h->counts + i + 1, h->counts + i, (h->n - i) * sizeof(*h->counts));
	h->keys[i] = key;
	h->counts[i] = count;
	h->n++;
	return 0;
}

DITTO_API int ditto_hist_add(struct ditto_hist *h, uint64_t value, uint64_t count)
{
	if (!h)
		return ditto_err(-EINVAL, "histogram: NULL");
	if (hist_is_absent(h))
		return absent_err();
	return hist_add_key(h, hist_value_key(h, value), count);
}

DITTO_API struct ditto_hist *ditto_hist_dup(const struct ditto_hist *h)
{
	struct ditto_hist *d = ditto_hist_new(h->kind, h->precision);

	if (!d)
		return NULL;
	if (h->n) {
		d->keys = malloc(h->n * sizeof(*d->keys));
		d->counts = malloc(h->n * sizeof(*d->counts));
		if (!d->keys || !d->counts) {
			ditto_hist_free(d);
			ditto_err(-ENOMEM, "histogram: out of memory");
			return NULL;
		}
		memcpy(d->keys, h->keys, h->n * sizeof(*d->keys));
		memcpy(d->counts, h->counts, h->n * sizeof(*d->counts));
		d->n = d->cap = h->n;
	}
	return d;
}

DITTO_API enum ditto_hist_kind ditto_hist_kind(const struct ditto_hist *h)
{
	return h->kind;
}

DITTO_API unsigned ditto_hist_precision(const struct ditto_hist *h)
{
	return h->precision;
}

static bool hist_compatible(const struct ditto_hist *a, const struct ditto_hist *b)
{
	return a->kind == b->kind && a->precision == b->precision;
}

DITTO_API int ditto_hist_merge(struct ditto_hist *dst, const struct ditto_hist *src)
{
	struct ditto_hist *tmp;
	int err = 0;

	if (hist_is_absent(dst))
		return absent_err();
	if (!hist_compatible(dst, src))
		return ditto_err(-DITTO_EMISMATCH, "histogram: cannot merge %s into %s",
				 hist_kind_name(src->kind), hist_kind_name(dst->kind));
	/* Merge into a copy so that dst is untouched if a count overflows. */
	tmp = ditto_hist_dup(dst);
	if (!tmp)
		return -ENOMEM;
	for (size_t i = 0; i < src->n && !err; i++)
		err = hist_add_key(tmp, src->keys[i], src->counts[i]);
	if (!err) {
		struct ditto_hist swap = *dst;

		*dst = *tmp;
		*tmp = swap;
	}
	ditto_hist_free(tmp);
	return err;
}

DITTO_API void ditto_hist_clear(struct ditto_hist *h)
{
	if (!hist_is_absent(h))	/* empty already, and shared */
		h->n = 0;
}

DITTO_API uint64_t ditto_hist_total(const struct ditto_hist *h)
{
	uint64_t t = 0;

	/* Saturate rather than wrap: totals are for ratios. */
	for (size_t i = 0; i < h->n; i++)
		if (add_overflows(t, h->counts[i], &t))
			return UINT64_MAX;
	return t;
}

DITTO_API size_t ditto_hist_bucket_count(const struct ditto_hist *h)
{
	return h->n;
}

DITTO_API int ditto_hist_bucket(const struct ditto_hist *h, size_t i, uint64_t *lo, uint64_t *hi,
				uint64_t *count)
{
	uint64_t l, u;

	if (i >= h->n)
		return ditto_err(-DITTO_ENOTFOUND, "histogram: bucket %zu of %zu", i, h->n);
	hist_key_range(h, h->keys[i], &l, &u);
	if (lo)
		*lo = l;
	if (hi)
		*hi = u;
	if (count)
		*count = h->counts[i];
	return 0;
}

static double total_d(const struct ditto_hist *h)
{
	double t = 0;

	for (size_t i = 0; i < h->n; i++)
		t += (double)h->counts[i];
	return t;
}

DITTO_API double ditto_hist_quantile(const struct ditto_hist *h, double q)
{
	double total = total_d(h), target, cum = 0;
	uint64_t lo, hi;

	if (h->n == 0)
		return 0;
	if (!(q > 0))
		q = 0;
	if (q > 1)
		q = 1;
	target = q * total;
	for (size_t i = 0; i < h->n; i++) {
		double c = (double)h->counts[i];

		hist_key_range(h, h->keys[i], &lo, &hi);
		if (cum + c >= target || i == h->n - 1) {
			double frac = c > 0 ? (target - cum) / c : 0;

			if (frac < 0)
				frac = 0;
			if (frac > 1)
				frac = 1;
			return (double)lo + ((double)hi - (double)lo) * frac;
		}
		cum += c;
	}
	return 0;
}

DITTO_API double ditto_hist_mean(const struct ditto_hist *h)
{
	double total = total_d(h), sum = 0;
	uint64_t lo, hi;

	if (total == 0)
		return 0;
	for (size_t i = 0; i < h->n; i++) {
		hist_key_range(h, h->keys[i], &lo, &hi);
		sum += ((double)lo + (double)hi) / 2 * (double)h->counts[i];
	}
	return sum / total;
}

DITTO_API double ditto_hist_distance(const struct ditto_hist *a, const struct ditto_hist *b)
{
	double ta, tb, d = 0;
	size_t i = 0, j = 0;

	if (!hist_compatible(a, b))
		return -1;
	ta = total_d(a);
	tb = total_d(b);
	if (ta == 0 || tb == 0)
		return ta == tb ? 0 : 1;
	/* Both are sorted: walk the union of keys once. */
	while (i < a->n || j < b->n) {
		double pa = 0, pb = 0;

		if (j >= b->n || (i < a->n && a->keys[i] < b->keys[j])) {
			pa = (double)a->counts[i++] / ta;
		} else if (i >= a->n || b->keys[j] < a->keys[i]) {
			pb = (double)b->counts[j++] / tb;
		} else {
			pa = (double)a->counts[i++] / ta;
			pb = (double)b->counts[j++] / tb;
		}
		d += fabs(pa - pb);
	}
	d /= 2;
	return d > 1 ? 1 : d;
}

bool hist_equal(const struct ditto_hist *a, const struct ditto_hist *b)
{
	if (!hist_compatible(a, b) || a->n != b->n)
		return false;
	return a->n == 0 ||
	       (!memcmp(a->keys, b->keys, a->n * sizeof(*a->keys)) &&
	       !memcmp(a->counts, b->counts, a->n * sizeof(*a->counts)));
}

int hist_merge_check(const struct ditto_hist *dst, const struct ditto_hist *src)
{
	size_t i = 0, j = 0;
	uint64_t sum;

	if (!hist_compatible(dst, src))
		return ditto_err(-DITTO_EMISMATCH, "histogram kind %s vs %s",
				 hist_kind_name(dst->kind), hist_kind_name(src->kind));
	while (i < dst->n && j < src->n) {
		if (dst->keys[i] < src->keys[j]) {
			i++;
		} else if (src->keys[j] < dst->keys[i]) {
			j++;
		} else {
			if (add_overflows(dst->counts[i], src->counts[j], &sum))
				return ditto_err(-EOVERFLOW, "histogram bucket count overflows");
			i++;
			j++;
		}
	}
	return 0;
}
