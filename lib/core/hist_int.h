/* SPDX-License-Identifier: MIT */
/* Layout of struct ditto_hist, for the model codec inside the library. */
#ifndef DITTO_HIST_INT_H
#define DITTO_HIST_INT_H

#include "core_int.h"

/* Sorted, sparse buckets: keys[i] ascending, counts[i] > 0. */
struct ditto_hist {
	enum ditto_hist_kind kind;
	unsigned precision;	/* LOGLIN sub-bucket bits, else 0 */
	size_t n, cap;
	uint64_t *keys;
	uint64_t *counts;
};

bool hist_kind_valid(int kind, unsigned precision);
/* The empty, shared, read-only histogram of kind (log-linear: precision
 * 4) that a model's getters return for a field the model lacks.
 * ditto_hist_add() and ditto_hist_merge() into it fail with -EINVAL;
 * ditto_hist_clear() and ditto_hist_free() leave it alone. */
struct ditto_hist *hist_absent(enum ditto_hist_kind kind);
/* Whether key can be produced by values of this kind. */
bool hist_key_valid(const struct ditto_hist *h, uint64_t key);
/* Add count to bucket key directly (decoder, merge). */
int hist_add_key(struct ditto_hist *h, uint64_t key, uint64_t count);
/* Bucket key of a value. */
uint64_t hist_value_key(const struct ditto_hist *h, uint64_t v);
/* Inclusive value range of bucket key. */
void hist_key_range(const struct ditto_hist *h, uint64_t key, uint64_t *lo, uint64_t *hi);
const char *hist_kind_name(enum ditto_hist_kind kind);
int hist_kind_parse(const char *name, enum ditto_hist_kind *out);
bool hist_equal(const struct ditto_hist *a, const struct ditto_hist *b);
/* 0 if src can be merged into dst without a count wrapping. */
int hist_merge_check(const struct ditto_hist *dst, const struct ditto_hist *src);

#endif /* DITTO_HIST_INT_H */
