/* SPDX-License-Identifier: MIT */
/*
 * Cache miss rates predicted from a cpu entry's reuse-distance histograms,
 * for comparing a profile with a cache simulator (cachegrind) or counters.
 */
#include <ditto/model.h>

#include "core_int.h"

DITTO_API double ditto_cpu_miss_rate(const struct ditto_cpu *c, bool instructions,
				     uint64_t cache_bytes, bool count_cold)
{
	const struct ditto_hist *h = instructions ? ditto_cpu_iws(c) : ditto_cpu_dws(c);
	uint64_t cold = instructions ? ditto_cpu_iws_cold(c) : ditto_cpu_dws_cold(c);
	double miss = count_cold ? (double)cold : 0.0, total = miss;

	if (!h)
		return -1.0;
	for (size_t i = 0; i < ditto_hist_bucket_count(h); i++) {
		uint64_t lo, hi, n;

		if (ditto_hist_bucket(h, i, &lo, &hi, &n))
			break;
		total += (double)n;
		/* Sizes inside a bucket are taken as evenly spread; a bucket
		 * that ends at or below the cache size is all hits. */
		if (lo > cache_bytes)
			miss += (double)n;
		else if (hi > cache_bytes)
			miss += (double)n * (double)(hi - cache_bytes) / (double)(hi - lo + 1);
	}
	return total > 0 ? miss / total : 0.0;
}
