/* SPDX-License-Identifier: MIT */
/*
 * Per-thread random numbers (xoshiro256**, seeded by splitmix64 from the
 * model's seed and a stream number) and draws from the model's histograms.
 */
#include <math.h>

#include "rt_int.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void rt_rng_seed(struct rt_rng *r, uint64_t seed, uint64_t stream)
{
	/* The stream goes through splitmix first so that neighbouring
	 * streams start far apart. */
	uint64_t x = stream, mix = splitmix64(&x);

	x = seed ^ mix;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

uint64_t rt_rng_next(struct rt_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

/* Multiply-high keeps the draw uniform enough without a division. */
uint64_t rt_rng_below(struct rt_rng *r, uint64_t bound)
{
	if (!bound)
		return 0;
	return (uint64_t)(((unsigned __int128)rt_rng_next(r) * bound) >> 64);
}

double rt_rng_unit(struct rt_rng *r)
{
	return (double)(rt_rng_next(r) >> 11) * 0x1.0p-53;
}

/*
 * A factor of mean 1 and coefficient of variation cv: lognormal, the shape
 * of service times with a long tail (a request now and then many times
 * the usual). At most 100: at cv 2 the cap takes under 0.2% off the mean.
 */
double rt_rng_spread(struct rt_rng *r, double cv)
{
	double s2, z, u1, u2;

	if (!(cv > 0))
		return 1;
	s2 = log1p(cv * cv);
	/* Box-Muller: 1 - u1 is in (0, 1], so the log is finite; the draws
	 * in a fixed order, so a seed gives the same lengths on any compiler */
	u1 = rt_rng_unit(r);
	u2 = rt_rng_unit(r);
	z = sqrt(-2 * log(1 - u1)) * cos(6.283185307179586 * u2);
	return fmin(exp(sqrt(s2) * z - s2 / 2), 100);
}

static uint64_t in_bucket(const struct rt_hist *h, uint32_t i, uint64_t min, struct rt_rng *r)
{
	uint64_t lo = h->lo[i] > min ? h->lo[i] : min, hi = h->hi[i];

	return hi > lo ? lo + rt_rng_below(r, hi - lo) : lo;
}

uint64_t rt_hist_draw(const struct rt_hist *h, struct rt_rng *r)
{
	uint32_t a = 0, b;
	uint64_t x;

	if (!h->n || !h->cum[h->n - 1])
		return h->dflt;
	x = rt_rng_below(r, h->cum[h->n - 1]);
	/* the first bucket whose cumulative weight is above x */
	for (b = h->n - 1; a < b;) {
		uint32_t m = a + (b - a) / 2;

		if (h->cum[m] > x)
			b = m;
		else
			a = m + 1;
	}
	return in_bucket(h, a, 0, r);
}

/* Only buckets holding values >= min take part, with their own weights;
 * a histogram without such a bucket gives min. */
uint64_t rt_hist_draw_min(const struct rt_hist *h, struct rt_rng *r, uint64_t min)
{
	uint64_t total = 0, x, prev = 0;

	if (!h->n)
		return h->dflt > min ? h->dflt : min;
	for (uint32_t i = 0; i < h->n; prev = h->cum[i], i++)
		if (h->hi[i] > min)
			total += h->cum[i] - prev;
	if (!total)
		return min;
	x = rt_rng_below(r, total);
	prev = 0;
	for (uint32_t i = 0; i < h->n; prev = h->cum[i], i++) {
		uint64_t w = h->cum[i] - prev;

		if (h->hi[i] <= min)
			continue;
		if (x < w)
			return in_bucket(h, i, min, r);
		x -= w;
	}
	return min;
}
