/* SPDX-License-Identifier: MIT */
/*
 * Cache geometry from CPUID, for hosts whose sysfs has no cache folder
 * (some VMs and containers). The only x86-specific file of host_info;
 * other architectures get the stub at the end and leave caches unknown.
 */
#include <string.h>

#include "profile_int.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* AMD's 4-bit associativity codes of leaf 0x80000006. 0 is a disabled
 * cache; 0xF fully associative; 3 and 9 mean "see leaf 0x8000001D" on Zen,
 * so they stay unknown (0) like any other reserved code. */
static unsigned amd_ways(unsigned code)
{
	static const unsigned ways[16] = { 0, 1, 2, 0, 4, 0, 8, 0, 16, 0, 32, 48, 64, 96, 128, 0 };

	return ways[code & 0xf];
}

static void put(struct host_caches *out, enum ditto_cache_level l, uint64_t bytes,
		unsigned line, unsigned ways)
{
	if (!bytes)
		return;
	out->bytes[l] = bytes;
	out->line[l] = line;
	out->ways[l] = ways;
}

/*
 * Intel's leaf 4 and AMD's 0x8000001D share one layout: one subleaf per
 * cache, type 0 ends the list. Of several caches past L2 the last (highest
 * level) is the LLC.
 */
static unsigned levels_found(const struct host_caches *out)
{
	unsigned n = 0;

	for (int l = 0; l < HOST_CACHE_LEVELS; l++)
		n += out->bytes[l] != 0;
	return n;
}

static unsigned deterministic(unsigned leaf, struct host_caches *out)
{
	unsigned found = 0;

	for (unsigned i = 0; i < 16; i++) {
		unsigned a, b, c, d, type, level, line, ways;
		uint64_t bytes;

		__cpuid_count(leaf, i, a, b, c, d);
		type = a & 0x1f;
		if (type == 0)
			break;
		level = (a >> 5) & 7;
		line = (b & 0xfff) + 1;
		/* fully associative: the ways field is meaningless */
		ways = (a >> 9) & 1 ? 0 : (b >> 22) + 1;
		bytes = (uint64_t)((b >> 22) + 1) * (((b >> 12) & 0x3ff) + 1) * line * ((uint64_t)c + 1);
		if (level == 1 && type == 1)
			put(out, DITTO_CACHE_L1D, bytes, line, ways);
		else if (level == 1 && type == 2)
			put(out, DITTO_CACHE_L1I, bytes, line, ways);
		else if (level == 2 && type != 2)
			put(out, DITTO_CACHE_L2, bytes, line, ways);
		else if (level >= 3 && type != 2)
			put(out, DITTO_CACHE_LLC, bytes, line, ways);
		else
			continue;
		found++;
	}
	return found;
}

/* AMD's older leaves: L1 in 0x80000005 (KiB, raw ways), L2 and L3 in
 * 0x80000006 (KiB and 512 KiB units, coded ways). */
static unsigned amd_legacy(unsigned ext_max, struct host_caches *out)
{
	unsigned a, b, c, d;

	if (ext_max >= 0x80000005) {
		__cpuid(0x80000005, a, b, c, d);
		put(out, DITTO_CACHE_L1D, (uint64_t)(c >> 24) << 10, c & 0xff,
		    ((c >> 16) & 0xff) == 0xff ? 0 : (c >> 16) & 0xff);
		put(out, DITTO_CACHE_L1I, (uint64_t)(d >> 24) << 10, d & 0xff,
		    ((d >> 16) & 0xff) == 0xff ? 0 : (d >> 16) & 0xff);
	}
	if (ext_max >= 0x80000006) {
		__cpuid(0x80000006, a, b, c, d);
		if ((c >> 12) & 0xf)
			put(out, DITTO_CACHE_L2, (uint64_t)(c >> 16) << 10, c & 0xff,
			    amd_ways(c >> 12));
		if ((d >> 12) & 0xf)
			put(out, DITTO_CACHE_LLC, (uint64_t)(d >> 18) << 19, d & 0xff,
			    amd_ways(d >> 12));
	}
	return levels_found(out);
}

unsigned host_cpuid_caches(struct host_caches *out)
{
	unsigned a, b, c, d, max, ext_max;

	memset(out, 0, sizeof(*out));
	if (!__get_cpuid(0, &max, &b, &c, &d))
		return 0;
	/* Leaf 4 reads as zeros where it is not implemented (AMD), so it is
	 * tried whatever the vendor. */
	if (max >= 4 && deterministic(4, out))
		return levels_found(out);
	ext_max = __get_cpuid_max(0x80000000, NULL);
	if (ext_max >= 0x8000001d) {
		__cpuid(0x80000001, a, b, c, d);
		if ((c >> 22) & 1 && deterministic(0x8000001d, out))	/* topology extensions */
			return levels_found(out);
	}
	memset(out, 0, sizeof(*out));
	return amd_legacy(ext_max, out);
}

#else

unsigned host_cpuid_caches(struct host_caches *out)
{
	memset(out, 0, sizeof(*out));
	return 0;
}

#endif
