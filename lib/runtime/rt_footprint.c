/* SPDX-License-Identifier: MIT */
/*
 * The request's data footprint (synth.footprint_kib): an area whose
 * lines each hold the index of the next in one random cycle, walked in
 * full per request with every load waiting on the one before: a share
 * of it after the response (synth.footprint_after_share), the rest
 * before it.
 *
 * Why: a tier that sat idle finds its working set gone from the caches
 * (what else ran, or the host, took them), so its next request costs
 * more than one arriving while it is busy; a node.js tier's CPU per
 * request at 30 requests/s was 2-4 times that at 300 (docs/graph.md).
 * The body's own regions are small and stay cached; a chain through
 * its original's footprint pays the same misses after the same idle
 * time, and nothing when the lines are still there. Dependent loads,
 * because independent ones overlap their misses and a prefetcher learns
 * any fixed stride.
 */
#include "rt_int.h"

#include <errno.h>
#include <sys/mman.h>

#define LINE 64
/* Line indexes are 32 bits: 64 MiB is what synth.footprint_kib allows. */
#define MAX_BYTES (64ull << 20)

static uint32_t *area;
static size_t lines;
/* The walk before the response: its first `before` lines from line 0;
 * the one after: the rest, from after_start, where the first stopped.
 * Fixed at start, so a request parked on its calls while the thread
 * serves others needs no cursor of its own. */
static size_t before;
static uint32_t after_start;

static uint32_t *line_at(size_t i)
{
	return area + i * (LINE / sizeof(*area));
}

/* Sattolo's shuffle: one cycle through every line. */
static void link_cycle(void)
{
	struct rt_rng rng;

	rt_rng_seed(&rng, rt_config.seed, 1ull << 58);
	for (size_t i = 0; i < lines; i++)
		*line_at(i) = (uint32_t)i;
	for (size_t i = lines - 1; i > 0; i--) {
		size_t j = (size_t)rt_rng_below(&rng, i);
		uint32_t v = *line_at(i);

		*line_at(i) = *line_at(j);
		*line_at(j) = v;
	}
}

static uint32_t walk(uint32_t at, size_t n)
{
	for (size_t i = 0; i < n; i++)
		at = *(volatile uint32_t *)line_at(at);
	return at;
}

/* The lines before and after the response (synth.footprint_after_share;
 * an out-of-range share counts as 0). */
static void split(void)
{
	double share = rt_config.footprint_after_share;

	share = share > 0 && share <= 1 ? share : 0;
	before = lines - (size_t)((double)lines * share + 0.5);
	after_start = walk(0, before);
}

int rt_footprint_map(void)
{
	uint64_t bytes = rt_config.footprint_bytes < MAX_BYTES ? rt_config.footprint_bytes : MAX_BYTES;
	size_t size = (size_t)bytes / LINE * LINE;
	void *p;

	if (size < 2 * LINE)
		return 0;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		rt_err(errno, "cannot map the request footprint of %zu bytes", size);
		return -1;
	}
	area = p;
	lines = size / LINE;
	link_cycle();
	split();
	return 0;
}

void rt_footprint_unmap(void)
{
	if (area)
		munmap(area, lines * LINE);
	area = NULL;
	lines = before = 0;
	after_start = 0;
}

/* The cycle from line 0 up to the response's share. */
void rt_footprint_walk_before(void)
{
	walk(0, before);
}

/* The rest of it, back to line 0. */
void rt_footprint_walk_after(void)
{
	walk(after_start, lines - before);
}
