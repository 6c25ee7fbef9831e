/* SPDX-License-Identifier: MIT */
/*
 * The collector's kernel histograms (log2 buckets, loglin latencies; see
 * bpf/collector.h) into the model's, each bucket at its smallest value.
 */
#include "profile_int.h"

/* Smallest value of each kernel bucket, in the model's value space. */
static uint64_t log2_lo(size_t k)
{
	return k ? 1ull << (k - 1) : 0;
}

static uint64_t lat_lo(size_t idx)
{
	const unsigned p = LAT_PRECISION;
	uint64_t e, sub;

	if (idx < (1u << p))
		return idx;
	e = (idx >> p) - 1 + p;
	sub = idx & ((1u << p) - 1);
	return ((1ull << p) + sub) << (e - p);
}

int hist_add_log2(struct ditto_hist *h, const unsigned long long *b, size_t n)
{
	int err = 0;

	for (size_t k = 0; k < n && !err; k++)
		if (b[k])
			err = ditto_hist_add(h, log2_lo(k), b[k]);
	return err;
}

int hist_add_lat(struct ditto_hist *h, const unsigned long long *b, size_t n)
{
	int err = 0;

	for (size_t k = 0; k < n && !err; k++)
		if (b[k])
			err = ditto_hist_add(h, lat_lo(k), b[k]);
	return err;
}
