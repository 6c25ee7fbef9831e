/* SPDX-License-Identifier: MIT */
/* xoshiro256** seeded through splitmix64: fast, deterministic per seed. */
#include "core_int.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void ditto_rng_seed(struct ditto_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

uint64_t ditto_rng_next(struct ditto_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

uint64_t ditto_rng_below(struct ditto_rng *r, uint64_t n)
{
	/* Rejection sampling keeps the result unbiased for any n. */
	uint64_t limit = UINT64_MAX - UINT64_MAX % n;
	uint64_t v;

	do
		v = ditto_rng_next(r);
	while (v >= limit);
	return v % n;
}

double ditto_rng_double(struct ditto_rng *r)
{
	return (double)(ditto_rng_next(r) >> 11) * 0x1.0p-53;
}
