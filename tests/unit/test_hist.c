/* SPDX-License-Identifier: MIT */
/* struct ditto_hist: bucketing, merge, statistics, iteration. */
#include <errno.h>
#include <math.h>

#include "tu.h"

/* The single bucket a lone value lands in. */
static void only_bucket(enum ditto_hist_kind kind, unsigned prec, uint64_t v, uint64_t *lo,
			uint64_t *hi)
{
	struct ditto_hist *h = ditto_hist_new(kind, prec);
	uint64_t c = 0;

	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(ditto_hist_add(h, v, 3), 0);
	ck_assert_uint_eq(ditto_hist_bucket_count(h), 1);
	ck_assert_int_eq(ditto_hist_bucket(h, 0, lo, hi, &c), 0);
	ck_assert_uint_eq(c, 3);
	ck_assert_uint_eq(ditto_hist_total(h), 3);
	ditto_hist_free(h);
}

START_TEST(test_new_kinds_and_precision)
{
	struct ditto_hist *h;

	h = ditto_hist_new(DITTO_HIST_LOG2, 0);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(ditto_hist_kind(h), DITTO_HIST_LOG2);
	ck_assert_uint_eq(ditto_hist_total(h), 0);
	ck_assert_uint_eq(ditto_hist_bucket_count(h), 0);
	ditto_hist_free(h);

	h = ditto_hist_new(DITTO_HIST_EXACT, 0);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(ditto_hist_kind(h), DITTO_HIST_EXACT);
	ditto_hist_free(h);

	/* precision 0 means 4 for loglin */
	h = ditto_hist_new(DITTO_HIST_LOGLIN, 0);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(ditto_hist_kind(h), DITTO_HIST_LOGLIN);
	ck_assert_uint_eq(ditto_hist_precision(h), 4);
	ditto_hist_free(h);

	for (unsigned p = 1; p <= 8; p++) {
		h = ditto_hist_new(DITTO_HIST_LOGLIN, p);
		ck_assert_ptr_nonnull(h);
		ck_assert_uint_eq(ditto_hist_precision(h), p);
		ditto_hist_free(h);
	}
	ck_assert_ptr_null(ditto_hist_new(DITTO_HIST_LOGLIN, 9));
	ck_assert_ptr_null(ditto_hist_new((enum ditto_hist_kind)0, 0));
	ck_assert_ptr_null(ditto_hist_new((enum ditto_hist_kind)77, 0));
	ck_assert_str_ne(ditto_last_error(), "");
	ditto_hist_free(NULL); /* no-op */
}
END_TEST

START_TEST(test_log2_bucket_bounds)
{
	uint64_t lo, hi;

	only_bucket(DITTO_HIST_LOG2, 0, 0, &lo, &hi);
	ck_assert_uint_eq(lo, 0);
	ck_assert_uint_eq(hi, 0);
	only_bucket(DITTO_HIST_LOG2, 0, 1, &lo, &hi);
	ck_assert_uint_eq(lo, 1);
	ck_assert_uint_eq(hi, 1);
	only_bucket(DITTO_HIST_LOG2, 0, 2, &lo, &hi);
	ck_assert_uint_eq(lo, 2);
	ck_assert_uint_eq(hi, 3);
	only_bucket(DITTO_HIST_LOG2, 0, 3, &lo, &hi);
	ck_assert_uint_eq(lo, 2);
	ck_assert_uint_eq(hi, 3);
	only_bucket(DITTO_HIST_LOG2, 0, 5, &lo, &hi);
	ck_assert_uint_eq(lo, 4);
	ck_assert_uint_eq(hi, 7);
	only_bucket(DITTO_HIST_LOG2, 0, UINT64_MAX, &lo, &hi);
	ck_assert_uint_eq(lo, 1ull << 63);
	ck_assert_uint_eq(hi, UINT64_MAX);
	only_bucket(DITTO_HIST_LOG2, 0, 1ull << 63, &lo, &hi);
	ck_assert_uint_eq(lo, 1ull << 63);
	ck_assert_uint_eq(hi, UINT64_MAX);

	/* every bucket k holds [2^(k-1), 2^k - 1]: check both edges */
	for (unsigned k = 1; k <= 64; k++) {
		uint64_t first = 1ull << (k - 1);
		uint64_t last = k == 64 ? UINT64_MAX : (1ull << k) - 1;

		only_bucket(DITTO_HIST_LOG2, 0, first, &lo, &hi);
		ck_assert_uint_eq(lo, first);
		ck_assert_uint_eq(hi, last);
		only_bucket(DITTO_HIST_LOG2, 0, last, &lo, &hi);
		ck_assert_uint_eq(lo, first);
		ck_assert_uint_eq(hi, last);
	}
}
END_TEST

START_TEST(test_log2_values_share_bucket)
{
	struct ditto_hist *h = ditto_hist_new(DITTO_HIST_LOG2, 0);
	uint64_t lo, hi, c;

	ck_assert_int_eq(ditto_hist_add(h, 4, 1), 0);
	ck_assert_int_eq(ditto_hist_add(h, 5, 2), 0);
	ck_assert_int_eq(ditto_hist_add(h, 7, 4), 0);
	ck_assert_int_eq(ditto_hist_add(h, 8, 8), 0);
	ck_assert_uint_eq(ditto_hist_bucket_count(h), 2);
	ck_assert_int_eq(ditto_hist_bucket(h, 0, &lo, &hi, &c), 0);
	ck_assert_uint_eq(lo, 4);
	ck_assert_uint_eq(hi, 7);
	ck_assert_uint_eq(c, 7);
	ck_assert_int_eq(ditto_hist_bucket(h, 1, &lo, &hi, &c), 0);
	ck_assert_uint_eq(lo, 8);
	ck_assert_uint_eq(hi, 15);
	ck_assert_uint_eq(c, 8);
	ck_assert_uint_eq(ditto_hist_total(h), 15);
	ditto_hist_free(h);
}
END_TEST

START_TEST(test_exact_one_bucket_per_value)
{
	struct ditto_hist *h = ditto_hist_new(DITTO_HIST_EXACT, 0);
	static const uint64_t vals[] = { 0, 1, 2, 3, 4, 1000, 1001, UINT64_MAX };
	uint64_t lo, hi, c;

	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		ck_assert_int_eq(ditto_hist_add(h, vals[i], i + 1), 0);
	ck_assert_uint_eq(ditto_hist_bucket_count(h), 8);
	for (size_t i = 0; i < 8; i++) {
		ck_assert_int_eq(ditto_hist_bucket(h, i, &lo, &hi, &c), 0);
		ck_assert_uint_eq(lo, vals[i]);
		ck_assert_uint_eq(hi, vals[i]);
		ck_assert_uint_eq(c, i + 1);
	}
	ck_assert_uint_eq(ditto_hist_total(h), 36);
	ditto_hist_free(h);
}
END_TEST

START_TEST(test_loglin_precision_bound)
{
	uint64_t state = 42;

	for (unsigned p = 1; p <= 8; p++) {
		for (int i = 0; i < 400; i++) {
			uint64_t v, lo, hi;
			unsigned shift = (unsigned)(tu_rand(&state) % 64);

			v = tu_rand(&state) >> shift;
			if (i < 3)
				v = i == 0 ? 0 : i == 1 ? UINT64_MAX : (1ull << p);
			only_bucket(DITTO_HIST_LOGLIN, p, v, &lo, &hi);
			ck_assert_msg(lo <= v && v <= hi, "p=%u v=%llu not in [%llu,%llu]", p,
				      (unsigned long long)v, (unsigned long long)lo,
				      (unsigned long long)hi);
			uint64_t width = hi - lo; /* + 1, kept from wrapping */
			uint64_t bound = v >> p;
			ck_assert_msg(width < (bound ? bound : 1),
				      "p=%u v=%llu bucket [%llu,%llu] wider than v/2^p", p,
				      (unsigned long long)v, (unsigned long long)lo,
				      (unsigned long long)hi);
			/* the bucket's own lower edge obeys the bound too */
			ck_assert(hi - lo < ((lo >> p) ? (lo >> p) : 1));
		}
	}
}
END_TEST

START_TEST(test_loglin_small_values_exact)
{
	uint64_t lo, hi;

	for (uint64_t v = 0; v < 16; v++) {
		only_bucket(DITTO_HIST_LOGLIN, 4, v, &lo, &hi);
		ck_assert_uint_eq(lo, v);
		ck_assert_uint_eq(hi, v);
	}
	/* 1000 = 0b1111101000 in [512, 1023]: 16 sub-buckets 32 wide */
	only_bucket(DITTO_HIST_LOGLIN, 4, 1000, &lo, &hi);
	ck_assert_uint_eq(lo, 992);
	ck_assert_uint_eq(hi, 1023);
}
END_TEST

START_TEST(test_buckets_iterate_ascending)
{
	struct ditto_hist *h = ditto_hist_new(DITTO_HIST_LOGLIN, 3);
	uint64_t state = 7, prev_hi = 0, lo, hi, c, sum = 0;

	for (int i = 0; i < 2000; i++)
		ck_assert_int_eq(ditto_hist_add(h, tu_rand(&state) >> (tu_rand(&state) % 64), 1),
				 0);
	size_t n = ditto_hist_bucket_count(h);
	ck_assert_uint_gt(n, 10);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(ditto_hist_bucket(h, i, &lo, &hi, &c), 0);
		ck_assert_uint_le(lo, hi);
		if (i)
			ck_assert_uint_gt(lo, prev_hi);
		ck_assert_uint_gt(c, 0);
		prev_hi = hi;
		sum += c;
	}
	ck_assert_uint_eq(sum, 2000);
	ck_assert_uint_eq(ditto_hist_total(h), 2000);
	ck_assert_int_eq(ditto_hist_bucket(h, n, &lo, &hi, &c), -DITTO_ENOTFOUND);
	ck_assert_int_eq(ditto_hist_bucket(h, (size_t)-1, NULL, NULL, NULL), -DITTO_ENOTFOUND);
	/* NULL out pointers are allowed */
	ck_assert_int_eq(ditto_hist_bucket(h, 0, NULL, NULL, NULL), 0);
	ditto_hist_free(h);
}
END_TEST

START_TEST(test_add_zero_count_adds_nothing)
{
	struct ditto_hist *h = ditto_hist_new(DITTO_HIST_LOG2, 0);

	ck_assert_int_eq(ditto_hist_add(h, 100, 0), 0);
	ck_assert_uint_eq(ditto_hist_total(h), 0);
	ditto_hist_free(h);
}
END_TEST

START_TEST(test_merge_adds_counts)
{
	struct ditto_hist *a = ditto_hist_new(DITTO_HIST_LOG2, 0);
	struct ditto_hist *b = ditto_hist_new(DITTO_HIST_LOG2, 0);
	uint64_t lo, hi, c;

	ditto_hist_add(a, 1, 10);
	ditto_hist_add(a, 100, 5);
	ditto_hist_add(b, 100, 7);
	ditto_hist_add(b, 5000, 3);
	ck_assert_int_eq(ditto_hist_merge(a, b), 0);
	ck_assert_uint_eq(ditto_hist_total(a), 25);
	ck_assert_uint_eq(ditto_hist_bucket_count(a), 3);
	ditto_hist_bucket(a, 0, &lo, &hi, &c);
	ck_assert_uint_eq(c, 10);
	ditto_hist_bucket(a, 1, &lo, &hi, &c);
	ck_assert_uint_eq(lo, 64);
	ck_assert_uint_eq(c, 12);
	ditto_hist_bucket(a, 2, &lo, &hi, &c);
	ck_assert_uint_eq(lo, 4096);
	ck_assert_uint_eq(c, 3);
	/* src untouched */
	ck_assert_uint_eq(ditto_hist_total(b), 10);
	/* merging an empty one changes nothing */
	struct ditto_hist *e = ditto_hist_new(DITTO_HIST_LOG2, 0);
	ck_assert_int_eq(ditto_hist_merge(a, e), 0);
	ck_assert_uint_eq(ditto_hist_total(a), 25);
	ck_assert_int_eq(ditto_hist_merge(e, a), 0);
	ck_assert_uint_eq(ditto_hist_total(e), 25);
	ck_assert_double_eq(ditto_hist_distance(a, e), 0);
	ditto_hist_free(a);
	ditto_hist_free(b);
	ditto_hist_free(e);
}
END_TEST

START_TEST(test_merge_mismatch_fails)
{
	struct ditto_hist *l2 = ditto_hist_new(DITTO_HIST_LOG2, 0);
	struct ditto_hist *ex = ditto_hist_new(DITTO_HIST_EXACT, 0);
	struct ditto_hist *ll4 = ditto_hist_new(DITTO_HIST_LOGLIN, 4);
	struct ditto_hist *ll5 = ditto_hist_new(DITTO_HIST_LOGLIN, 5);

	ditto_hist_add(l2, 3, 1);
	ditto_hist_add(ex, 3, 1);
	ditto_hist_add(ll4, 3, 1);
	ditto_hist_add(ll5, 3, 1);
	ck_assert_int_eq(ditto_hist_merge(l2, ex), -DITTO_EMISMATCH);
	ck_assert_str_ne(ditto_last_error(), "");
	ck_assert_int_eq(ditto_hist_merge(ex, l2), -DITTO_EMISMATCH);
	ck_assert_int_eq(ditto_hist_merge(ll4, ll5), -DITTO_EMISMATCH);
	ck_assert_int_eq(ditto_hist_merge(ll4, l2), -DITTO_EMISMATCH);
	/* dst unchanged */
	ck_assert_uint_eq(ditto_hist_total(l2), 1);
	ck_assert_uint_eq(ditto_hist_total(ll4), 1);
	ditto_hist_free(l2);
	ditto_hist_free(ex);
	ditto_hist_free(ll4);
	ditto_hist_free(ll5);
}
END_TEST

START_TEST(test_add_overflow_fails)
{
	struct ditto_hist *h = ditto_hist_new(DITTO_HIST_EXACT, 0);
	uint64_t c;

	ck_assert_int_eq(ditto_hist_add(h, 9, UINT64_MAX - 1), 0);
	ck_assert_int_eq(ditto_hist_add(h, 9, 1), 0);
	ck_assert_int_eq(ditto_hist_add(h, 9, 1), -EOVERFLOW);
	ck_assert_str_ne(ditto_last_error(), "");
	ditto_hist_bucket(h, 0, NULL, NULL, &c);
	ck_assert_uint_eq(c, UINT64_MAX);
	ditto_hist_free(h);
}
END_TEST

START_TEST(test_merge_overflow_fails_dst_unchanged)
{
	struct ditto_hist *a = ditto_hist_new(DITTO_HIST_LOG2, 0);
	struct ditto_hist *b = ditto_hist_new(DITTO_HIST_LOG2, 0);
	uint64_t c;

	ditto_hist_add(a, 1, 5);
	ditto_hist_add(a, 1000, UINT64_MAX);
	ditto_hist_add(b, 1, 5);
	ditto_hist_add(b, 1000, 1);
	ck_assert_int_eq(ditto_hist_merge(a, b), -EOVERFLOW);
	ditto_hist_bucket(a, 0, NULL, NULL, &c);
	ck_assert_uint_eq(c, 5);
	ditto_hist_bucket(a, 1, NULL, NULL, &c);
	ck_assert_uint_eq(c, UINT64_MAX);
	ditto_hist_free(a);
	ditto_hist_free(b);
}
END_TEST

START_TEST(test_quantile_exact_kind_is_exact)
{
	struct ditto_hist *h = ditto_hist_new(DITTO_HIST_EXACT, 0);

	ck_assert_double_eq(ditto_hist_quantile(h, 0.5), 0);
	ditto_hist_add(h, 10, 1);
	ditto_hist_add(h, 20, 98);
	ditto_hist_add(h, 30, 1);
	ck_assert_double_eq(ditto_hist_quantile(h, 0.0), 10);
	ck_assert_double_eq(ditto_hist_quantile(h, 0.25), 20);
	ck_assert_double_eq(ditto_hist_quantile(h, 0.5), 20);
	ck_assert_double_eq(ditto_hist_quantile(h, 0.9), 20);
	ck_assert_double_eq(ditto_hist_quantile(h, 1.0), 30);
	ditto_hist_free(h);

	h = ditto_hist_new(DITTO_HIST_EXACT, 0);
	ditto_hist_add(h, 7, 1);
	for (double q = 0; q <= 1.0; q += 0.125)
		ck_assert_double_eq(ditto_hist_quantile(h, q), 7);
	ditto_hist_free(h);
}
END_TEST

START_TEST(test_quantile_log2_within_bucket)
{
	struct ditto_hist *h = ditto_hist_new(DITTO_HIST_LOG2, 0);
	double prev = -1;

	ditto_hist_add(h, 100, 1000); /* bucket [64, 127] */
	for (double q = 0; q <= 1.0; q += 0.05) {
		double v = ditto_hist_quantile(h, q);

		ck_assert_msg(v >= 64 && v <= 128, "q=%g gave %g outside [64,127]", q, v);
		ck_assert(v >= prev);
		prev = v;
	}
	ditto_hist_add(h, 5000, 1000); /* bucket [4096, 8191] */
	double med_lo = ditto_hist_quantile(h, 0.25);
	double med_hi = ditto_hist_quantile(h, 0.75);
	ck_assert(med_lo >= 64 && med_lo <= 128);
	ck_assert(med_hi >= 4096 && med_hi <= 8192);
	ck_assert(ditto_hist_quantile(h, 1.0) <= 8192);
	ck_assert(ditto_hist_quantile(h, 1.0) >= 4096);
	ditto_hist_free(h);
}
END_TEST

START_TEST(test_quantile_monotonic_loglin)
{
	struct ditto_hist *h = ditto_hist_new(DITTO_HIST_LOGLIN, 4);
	uint64_t state = 99;
	double prev = -1;

	for (int i = 0; i < 5000; i++)
		ditto_hist_add(h, 1000 + tu_rand(&state) % 100000, 1);
	for (double q = 0; q <= 1.0; q += 0.01) {
		double v = ditto_hist_quantile(h, q);
		ck_assert(v >= prev);
		ck_assert(v >= 960 && v <= 101000 * 1.07);
		prev = v;
	}
	/* a uniform distribution: median near the middle (bucket error 1/16) */
	double med = ditto_hist_quantile(h, 0.5);
	ck_assert_msg(fabs(med - 51000) < 51000 * 0.1, "median %g", med);
	ditto_hist_free(h);
}
END_TEST

START_TEST(test_mean_uses_bucket_midpoints)
{
	struct ditto_hist *h = ditto_hist_new(DITTO_HIST_EXACT, 0);

	ck_assert_double_eq(ditto_hist_mean(h), 0);
	ditto_hist_add(h, 10, 1);
	ditto_hist_add(h, 30, 3);
	ck_assert_double_eq_tol(ditto_hist_mean(h), 25.0, 1e-9);
	ditto_hist_free(h);

	h = ditto_hist_new(DITTO_HIST_LOG2, 0);
	ditto_hist_add(h, 2, 1); /* [2,3] -> 2.5 */
	ck_assert_double_eq_tol(ditto_hist_mean(h), 2.5, 1e-9);
	ditto_hist_add(h, 0, 1); /* [0,0] -> 0 */
	ck_assert_double_eq_tol(ditto_hist_mean(h), 1.25, 1e-9);
	ditto_hist_add(h, 1000, 2); /* [512,1023] -> 767.5 */
	ck_assert_double_eq_tol(ditto_hist_mean(h), (2.5 + 0 + 2 * 767.5) / 4, 1e-9);
	ditto_hist_free(h);
}
END_TEST

START_TEST(test_distance_identical_disjoint_partial)
{
	struct ditto_hist *a = ditto_hist_new(DITTO_HIST_EXACT, 0);
	struct ditto_hist *b = ditto_hist_new(DITTO_HIST_EXACT, 0);

	ditto_hist_add(a, 1, 3);
	ditto_hist_add(a, 2, 1);
	ditto_hist_add(b, 1, 30); /* same shape, ten times the counts */
	ditto_hist_add(b, 2, 10);
	ck_assert_double_eq_tol(ditto_hist_distance(a, a), 0, 1e-12);
	ck_assert_double_eq_tol(ditto_hist_distance(a, b), 0, 1e-12);
	ditto_hist_clear(b);
	ck_assert_uint_eq(ditto_hist_total(b), 0);
	ditto_hist_add(b, 5, 1);
	ditto_hist_add(b, 6, 1);
	ck_assert_double_eq_tol(ditto_hist_distance(a, b), 1, 1e-12);
	ck_assert_double_eq_tol(ditto_hist_distance(b, a), 1, 1e-12);
	ditto_hist_clear(b);
	ditto_hist_add(b, 2, 1);
	ditto_hist_add(b, 3, 1);
	/* a = {1: .75, 2: .25}, b = {2: .5, 3: .5}: (.75 + .25 + .5) / 2 */
	ck_assert_double_eq_tol(ditto_hist_distance(a, b), 0.75, 1e-12);
	ck_assert_double_eq_tol(ditto_hist_distance(b, a), 0.75, 1e-12);
	ditto_hist_free(a);
	ditto_hist_free(b);
}
END_TEST

START_TEST(test_distance_empty_cases)
{
	struct ditto_hist *a = ditto_hist_new(DITTO_HIST_LOG2, 0);
	struct ditto_hist *b = ditto_hist_new(DITTO_HIST_LOG2, 0);

	ck_assert_double_eq(ditto_hist_distance(a, b), 0);
	ditto_hist_add(a, 4, 1);
	ck_assert_double_eq(ditto_hist_distance(a, b), 1);
	ck_assert_double_eq(ditto_hist_distance(b, a), 1);
	ditto_hist_free(a);
	ditto_hist_free(b);
}
END_TEST

START_TEST(test_distance_mismatch_is_minus_one)
{
	struct ditto_hist *a = ditto_hist_new(DITTO_HIST_LOG2, 0);
	struct ditto_hist *b = ditto_hist_new(DITTO_HIST_EXACT, 0);
	struct ditto_hist *c = ditto_hist_new(DITTO_HIST_LOGLIN, 2);
	struct ditto_hist *d = ditto_hist_new(DITTO_HIST_LOGLIN, 3);

	ditto_hist_add(a, 4, 1);
	ditto_hist_add(b, 4, 1);
	ck_assert_double_eq(ditto_hist_distance(a, b), -1);
	ck_assert_double_eq(ditto_hist_distance(c, d), -1);
	ditto_hist_free(a);
	ditto_hist_free(b);
	ditto_hist_free(c);
	ditto_hist_free(d);
}
END_TEST

START_TEST(test_dup_is_deep)
{
	struct ditto_hist *a = ditto_hist_new(DITTO_HIST_LOGLIN, 6);
	uint64_t lo1, hi1, c1, lo2, hi2, c2;

	for (uint64_t v = 1; v < 100000; v = v * 3 + 1)
		ditto_hist_add(a, v, v);
	struct ditto_hist *d = ditto_hist_dup(a);
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(ditto_hist_kind(d), DITTO_HIST_LOGLIN);
	ck_assert_uint_eq(ditto_hist_precision(d), 6);
	ck_assert_uint_eq(ditto_hist_bucket_count(d), ditto_hist_bucket_count(a));
	ck_assert_uint_eq(ditto_hist_total(d), ditto_hist_total(a));
	for (size_t i = 0; i < ditto_hist_bucket_count(a); i++) {
		ditto_hist_bucket(a, i, &lo1, &hi1, &c1);
		ditto_hist_bucket(d, i, &lo2, &hi2, &c2);
		ck_assert_uint_eq(lo1, lo2);
		ck_assert_uint_eq(hi1, hi2);
		ck_assert_uint_eq(c1, c2);
	}
	ck_assert_double_eq(ditto_hist_distance(a, d), 0);
	uint64_t before = ditto_hist_total(a);
	ditto_hist_add(d, 7, 1000);
	ditto_hist_clear(d);
	ck_assert_uint_eq(ditto_hist_total(a), before);
	ck_assert_uint_eq(ditto_hist_total(d), 0);

	struct ditto_hist *e = ditto_hist_new(DITTO_HIST_EXACT, 0);
	struct ditto_hist *ed = ditto_hist_dup(e);
	ck_assert_ptr_nonnull(ed);
	ck_assert_uint_eq(ditto_hist_bucket_count(ed), 0);
	ditto_hist_free(a);
	ditto_hist_free(d);
	ditto_hist_free(e);
	ditto_hist_free(ed);
}
END_TEST

START_TEST(test_clear_then_reuse)
{
	struct ditto_hist *h = ditto_hist_new(DITTO_HIST_LOG2, 0);
	uint64_t lo, hi, c;

	ditto_hist_add(h, 100, 1);
	ditto_hist_clear(h);
	ck_assert_uint_eq(ditto_hist_bucket_count(h), 0);
	ck_assert_double_eq(ditto_hist_mean(h), 0);
	ck_assert_double_eq(ditto_hist_quantile(h, 0.5), 0);
	ditto_hist_add(h, 3, 2);
	ck_assert_uint_eq(ditto_hist_bucket_count(h), 1);
	ditto_hist_bucket(h, 0, &lo, &hi, &c);
	ck_assert_uint_eq(lo, 2);
	ck_assert_uint_eq(c, 2);
	ditto_hist_free(h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hist");
	TCase *tc = tu_tcase("hist");

	tcase_add_test(tc, test_new_kinds_and_precision);
	tcase_add_test(tc, test_log2_bucket_bounds);
	tcase_add_test(tc, test_log2_values_share_bucket);
	tcase_add_test(tc, test_exact_one_bucket_per_value);
	tcase_add_test(tc, test_loglin_precision_bound);
	tcase_add_test(tc, test_loglin_small_values_exact);
	tcase_add_test(tc, test_buckets_iterate_ascending);
	tcase_add_test(tc, test_add_zero_count_adds_nothing);
	tcase_add_test(tc, test_merge_adds_counts);
	tcase_add_test(tc, test_merge_mismatch_fails);
	tcase_add_test(tc, test_add_overflow_fails);
	tcase_add_test(tc, test_merge_overflow_fails_dst_unchanged);
	tcase_add_test(tc, test_quantile_exact_kind_is_exact);
	tcase_add_test(tc, test_quantile_log2_within_bucket);
	tcase_add_test(tc, test_quantile_monotonic_loglin);
	tcase_add_test(tc, test_mean_uses_bucket_midpoints);
	tcase_add_test(tc, test_distance_identical_disjoint_partial);
	tcase_add_test(tc, test_distance_empty_cases);
	tcase_add_test(tc, test_distance_mismatch_is_minus_one);
	tcase_add_test(tc, test_dup_is_deep);
	tcase_add_test(tc, test_clear_then_reuse);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
