/* SPDX-License-Identifier: MIT */
/*
 * Ground truth for per-branch taken and transition rates: one conditional
 * branch whose outcome comes from a 4096-entry table of 0/1 bytes, so every
 * mode runs the same code and only the outcome pattern differs.
 *
 *   gt_branch always|alternate|one_in_8|random [SIZE] [ITERATIONS]
 *
 * SIZE is ignored (pass 0). ITERATIONS: passes over the table, 4096 loop
 * iterations each, then exit 0; 0 (default): forever.
 *
 * Loop (inline asm, so the branch cannot become a cmov):
 *     1: movzbl (%rsi,%rcx), %eax
 *        test   %eax, %eax
 *        jnz    2f              <- branch under test: taken when entry != 0
 *        add    $1, %rdx        (not-taken path only)
 *     2: add    $1, %rcx
 *        jnz    1b              <- loop back-edge
 * = 5 insns when taken, 6 when not: 6 - taken rate per iteration, with
 * 1 load (4 KiB table, always hits), 2 conditional branches.
 *
 *   mode       test branch taken  transitions   insns/iteration
 *   always     1.0                0.0           5
 *   alternate  0.5                1.0           5.5
 *   one_in_8   0.125              0.25          5.875
 *   random     0.487 (1995/4096)  0.484 (1984/4096)  5.513
 * random is the top bit of xorshift64 (fixed seed); its figures are this
 * table's, read cyclically, so whole passes give them exactly.
 * Transitions count outcome changes between consecutive executions.
 *
 * Back-edge: taken 4095/4096 (~1), transitions 2/4096 (~0): it falls
 * through once per pass, and the outer loop starts the next pass with
 * 2 insns (mov rcx, jmp) when ITERATIONS is 0, or with one more
 * conditional branch per pass otherwise.
 */
#include <stdint.h>
#include <string.h>

#include "gt_common.h"

#define TABLE 4096

static uint64_t xorshift64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int fill(uint8_t *t, const char *mode)
{
	uint64_t s = 0x2545f4914f6cdd1dull;

	for (unsigned i = 0; i < TABLE; i++) {
		if (!strcmp(mode, "always"))
			t[i] = 1;
		else if (!strcmp(mode, "alternate"))
			t[i] = i % 2 == 0;
		else if (!strcmp(mode, "one_in_8"))
			t[i] = i % 8 == 0;
		else if (!strcmp(mode, "random"))
			t[i] = (uint8_t)(xorshift64(&s) >> 63);
		else
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char usage[] = "always|alternate|one_in_8|random [SIZE] [ITERATIONS]";
	static uint8_t table[TABLE] __attribute__((aligned(64)));
	struct gt_args a;

	gt_parse(argc, argv, 0, usage, &a);
	if (fill(table, a.mode)) {
		fprintf(stderr, "usage: %s %s\n", argv[0], usage);
		return 2;
	}
	gt_ready();

	/* rsi points past the table and rcx runs -TABLE..-1. */
#define PASS()								\
	asm volatile("mov %[n], %%rcx\n"				\
		     "1:\n\t"						\
		     "movzbl (%[end],%%rcx), %%eax\n\t"			\
		     "test %%eax, %%eax\n\t"				\
		     "jnz 2f\n\t"					\
		     "add $1, %%rdx\n"					\
		     "2:\n\t"						\
		     "add $1, %%rcx\n\t"				\
		     "jnz 1b\n"						\
		     : : [end] "r"(table + TABLE), [n] "i"(-TABLE)	\
		     : "rax", "rcx", "rdx", "cc", "memory")
	GT_REPEAT(a.iters, PASS());
	return 0;
}
