/* SPDX-License-Identifier: MIT */
/*
 * The windows of the D1 and LL miss knobs. Once per iteration a window
 * loads the lines of an area from its cursor on and moves the cursor by
 * as many 64ths of a line's byte as the knob asks for: only the lines it
 * enters miss, a number that need not be whole per iteration (redis's D1
 * knob sits at a byte or two).
 *
 * An area is set-confined: its line n lies at 64 (n mod S) + stride (n /
 * S), the stride being the cache's way size (4 KiB for cachegrind's
 * 32 KiB D1, 64 KiB for its 1 MiB LL), so its lines fill S sets only and
 * the rest of the cache keeps the clone's own lines where the profile put
 * them (a window over all of D1 evicts them too; its effect on the spread
 * of a memcached clone's D1 rate between runs was within the noise). S is
 * sized to the demand: the smallest power of two from 16 whose sets hold
 * the window twice over, all of the cache's sets (the plain linear area)
 * for a knob that asks for more (a service missing D1 on 40% of its
 * references thrashes it anyway).
 */
#include <stdint.h>

#include "core_int.h"
#include "synth_int.h"

/* The most lines a window loads per iteration. */
#define MISS_WINDOW 256
#define MIN_SETS_SHIFT 4

static const struct {
	unsigned way_shift;	/* log2 of the stride: one way's bytes */
	unsigned ways;
} caches[2] = { { 12, 8 }, { 16, 16 } };	/* cachegrind's D1 and LL */

static uint64_t window_lines(uint64_t step)
{
	uint64_t lines = step / (64 * 64) + 2;

	return lines > MISS_WINDOW ? MISS_WINDOW : lines;
}

/* log2 of the sets the window of `lines` lines needs in cache c. */
static unsigned sets_shift(int c, uint64_t lines)
{
	unsigned s = MIN_SETS_SHIFT, all = caches[c].way_shift - 6;

	while (s < all && 2 * (lines + (1ull << s)) > caches[c].ways << s)
		s++;
	return s;
}

void synth_miss_layout(const struct synth_knobs *k, uint64_t loop_insts, uint64_t *total,
		       struct synth_miss m[2])
{
	double ll = k->ll_mpki, d1 = k->d1_mpki - ll;	/* LL misses miss D1 too */
	const double mpki[2] = { d1 > 0 ? d1 : 0, ll };
	uint64_t d1_sets = 0;

	for (int i = 0; i < 2; i++) {
		uint64_t stride = 1ull << caches[i].way_shift, sets, groups;

		m[i] = (struct synth_miss){ .slot = *total, .stride_shift = caches[i].way_shift };
		*total += 8;
		m[i].step = (uint64_t)(mpki[i] * (double)loop_insts / 1000 * 64 * 64 + 0.5);
		if (!m[i].step)
			continue;
		m[i].window = window_lines(m[i].step);
		m[i].sets_shift = sets_shift(i, m[i].window);
		sets = 1ull << m[i].sets_shift;
		/* four times the ways per set: a line entered again has left */
		groups = 4 * caches[i].ways;
		m[i].lines = groups * sets;
		*total = (*total + stride - 1) / stride * stride;
		/* LL's lines start in the D1 sets after D1's window's */
		m[i].off = *total + (i ? 64 * d1_sets % 4096 : 0);
		/* a window reaches past the last group by its own length */
		*total += stride * (groups + (m[i].window + sets) / sets + 1);
		if (!i)
			d1_sets = sets;
	}
}

uint64_t synth_miss_window(struct dbuf *out, const struct synth_miss *m)
{
	uint64_t sets = 1ull << m->sets_shift, n = m->window + sets, stride = 1ull << m->stride_shift;

	if (!m->step)
		return 0;
	dbuf_printf(out, "\t# miss window: %llu/64 bytes a turn over %llu lines in %llu sets\n",
		    (unsigned long long)m->step, (unsigned long long)m->lines,
		    (unsigned long long)sets);
	dbuf_printf(out, "\tmov rax, [r12 + %llu]\n\tmov rdx, rax\n",
		    (unsigned long long)m->slot);
	/* 64ths of bytes -> the cursor's group of `sets` lines -> its stride */
	dbuf_printf(out, "\tshr rdx, %u\n\tshl rdx, %u\n\tadd rdx, r12\n", 12 + m->sets_shift,
		    m->stride_shift);
	/* Loads whose value is never used are dropped by valgrind's optimiser
	 * before cachegrind sees them: these add into r11. */
	for (uint64_t j = 0; j < n; j++)
		dbuf_printf(out, "\tadd r11, [rdx + %llu]\n",
			    (unsigned long long)(m->off + 64 * (j % sets) + stride * (j / sets)));
	dbuf_printf(out, "\tadd rax, %llu\n\tand rax, 0x%llx\n\tmov [r12 + %llu], rax\n",
		    (unsigned long long)m->step, (unsigned long long)(m->lines * 64 * 64 - 1),
		    (unsigned long long)m->slot);
	return n + 8;
}
