/* Fuzz the histogram type with a little program read from the input: each
 * step adds a value to one of two histograms, merges them, or queries
 * them, and the documented invariants are checked after every step. */
#include <ditto/ditto.h>

#include <errno.h>
#include <math.h>
#include <string.h>

#include "fuzz.h"

struct reader {
	const uint8_t *p;
	size_t left;
};

static uint64_t take(struct reader *r, size_t n)
{
	uint64_t v = 0;
	for (; n && r->left; n--, r->left--)
		v = v << 8 | *r->p++;
	return v;
}

/* Totals saturate at UINT64_MAX (lib/core/hist.c): bucket counts cannot
 * wrap, but their sum may exceed 64 bits. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* Buckets ascend without overlap and their counts sum to the total. */
static void check(const struct ditto_hist *h)
{
	uint64_t sum = 0, lo, hi, count, prev_hi = 0;
	size_t n = ditto_hist_bucket_count(h);
	for (size_t i = 0; i < n; i++) {
		FUZZ_ASSERT(ditto_hist_bucket(h, i, &lo, &hi, &count) == 0);
		FUZZ_ASSERT(lo <= hi && count > 0);
		FUZZ_ASSERT(i == 0 || lo > prev_hi);
		if (ditto_hist_kind(h) == DITTO_HIST_LOG2)
			FUZZ_ASSERT(lo == 0 ? hi == 0 : (lo & (lo - 1)) == 0 && hi == 2 * (lo - 1) + 1);
		if (ditto_hist_kind(h) == DITTO_HIST_EXACT)
			FUZZ_ASSERT(lo == hi);
		sum = sat_add(sum, count);
		prev_hi = hi;
	}
	FUZZ_ASSERT(ditto_hist_bucket(h, n, &lo, &hi, &count) == -DITTO_ENOTFOUND);
	FUZZ_ASSERT(sum == ditto_hist_total(h));

	double q0 = ditto_hist_quantile(h, 0), prev = q0;
	for (int i = 1; i <= 8; i++) {
		double q = ditto_hist_quantile(h, i / 8.0);
		FUZZ_ASSERT(q >= prev - 1e-9 * fabs(prev));
		prev = q;
	}
	if (n == 0) {
		FUZZ_ASSERT(q0 == 0 && ditto_hist_mean(h) == 0);
		return;
	}
	ditto_hist_bucket(h, 0, &lo, &hi, &count);
	double first = (double)lo;
	ditto_hist_bucket(h, n - 1, &lo, &hi, &count);
	double last = (double)hi, mean = ditto_hist_mean(h), slack = 1e-9 * last + 1;
	FUZZ_ASSERT(q0 >= first - slack && prev <= last + slack);
	FUZZ_ASSERT(mean >= first - slack && mean <= last + slack);
}

static struct ditto_hist *make(struct reader *r)
{
	static const enum ditto_hist_kind kinds[] = { DITTO_HIST_LOG2, DITTO_HIST_EXACT,
						      DITTO_HIST_LOGLIN };
	unsigned k = (unsigned)take(r, 1);
	struct ditto_hist *h = ditto_hist_new(kinds[k % 3], k / 3 % 10);
	/* Precision beyond 1..8 (0 means 4) is refused, never accepted. */
	bool ok = kinds[k % 3] != DITTO_HIST_LOGLIN || k / 3 % 10 <= 8;
	FUZZ_ASSERT(ok ? h != NULL : h == NULL);
	return h ? h : ditto_hist_new(DITTO_HIST_LOG2, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reader r = { data, size };
	struct ditto_hist *h[2] = { make(&r), make(&r) };
	FUZZ_ASSERT(h[0] && h[1]);

	while (r.left) {
		unsigned op = (unsigned)take(&r, 1);
		struct ditto_hist *a = h[op & 1], *b = h[!(op & 1)];
		uint64_t before = ditto_hist_total(a), v, count, lo, hi, c;
		int err;
		switch (op >> 1 & 7) {
		case 0: /* add a small value */
		case 1: /* add any value */
			v = take(&r, (op >> 1 & 7) ? 8 : 2);
			count = take(&r, 1) + 1;
			err = ditto_hist_add(a, v, count);
			FUZZ_ASSERT(err == 0 || err == -EOVERFLOW);
			if (err == 0) {
				FUZZ_ASSERT(ditto_hist_total(a) == sat_add(before, count));
				/* v landed in some bucket */
				size_t i, n = ditto_hist_bucket_count(a);
				for (i = 0; i < n; i++) {
					ditto_hist_bucket(a, i, &lo, &hi, &c);
					if (lo <= v && v <= hi)
						break;
				}
				FUZZ_ASSERT(i < n);
			} else {
				FUZZ_ASSERT(ditto_hist_total(a) == before);
			}
			break;
		case 2: /* add a huge count */
			err = ditto_hist_add(a, take(&r, 1), UINT64_MAX - take(&r, 1));
			FUZZ_ASSERT(err == 0 || err == -EOVERFLOW);
			break;
		case 3:
			err = ditto_hist_merge(a, b);
			if (ditto_hist_kind(a) != ditto_hist_kind(b) ||
			    ditto_hist_precision(a) != ditto_hist_precision(b))
				FUZZ_ASSERT(err == -DITTO_EMISMATCH);
			else
				FUZZ_ASSERT(err == 0 || err == -EOVERFLOW);
			if (err == 0)
				FUZZ_ASSERT(ditto_hist_total(a) == sat_add(before, ditto_hist_total(b)));
			break;
		case 4: {
			double d = ditto_hist_distance(a, b);
			if (ditto_hist_kind(a) != ditto_hist_kind(b) ||
			    ditto_hist_precision(a) != ditto_hist_precision(b))
				FUZZ_ASSERT(d == -1);
			else
				FUZZ_ASSERT(d >= 0 && d <= 1 + 1e-9);
			FUZZ_ASSERT(ditto_hist_distance(a, a) == 0);
			break;
		}
		case 5: {
			struct ditto_hist *d = ditto_hist_dup(a);
			FUZZ_ASSERT(d != NULL);
			FUZZ_ASSERT(ditto_hist_distance(a, d) == 0);
			FUZZ_ASSERT(ditto_hist_total(d) == before);
			FUZZ_ASSERT(ditto_hist_bucket_count(d) == ditto_hist_bucket_count(a));
			ditto_hist_free(h[op & 1]);
			h[op & 1] = d;
			break;
		}
		case 6:
			ditto_hist_clear(a);
			FUZZ_ASSERT(ditto_hist_total(a) == 0 && ditto_hist_bucket_count(a) == 0);
			break;
		case 7: /* start over with another kind */
			ditto_hist_free(a);
			h[op & 1] = make(&r);
			break;
		}
		check(h[0]);
		check(h[1]);
	}
	ditto_hist_free(h[0]);
	ditto_hist_free(h[1]);
	ditto_hist_free(NULL);
	return 0;
}
