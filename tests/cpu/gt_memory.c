/* SPDX-License-Identifier: MIT */
/*
 * Ground truth for data reuse distance: loads over a SIZE-byte buffer whose
 * LRU stack distances (64-byte lines) are known by construction.
 *
 *   gt_memory seq|chase|rand [SIZE] [ITERATIONS]
 *
 * SIZE: a power of two, 4096..2^32 (default 262144); N = SIZE/64 lines.
 * ITERATIONS: repetitions of N loads each, then exit 0; 0 (default): forever.
 * A repetition (sweep/cycle) adds 2 insns to the loop's: counter setup and
 * the outer jmp (with ITERATIONS > 0, an add/cmp/jne instead of the jmp).
 * Distance below counts the distinct lines since the last touch of a line,
 * the line itself included (an immediate re-touch is 1), times 64 bytes.
 * Every load is 8 bytes at offset 0 of a line. The forever loops touch no
 * stack; with ITERATIONS the outer loop may read its count from it.
 * Each unrolled load has its own destination register: Valgrind drops a
 * load whose register is overwritten unread in the same superblock, which
 * would hide it from cachegrind.
 *
 * seq    loop: 8 x `mov REG_k,[B+rcx+k*64]`, add rcx,512, cmp, jb
 *        = 11 insns per 8 lines (1.375 per load).
 *        Loads 8/11 of insns, none chased. Every load after the first sweep
 *        of a window: distance exactly SIZE. jb: taken 1 - 512/SIZE,
 *        transitions 1024/SIZE. Cache of C < SIZE bytes (LRU): every load
 *        misses; C >= SIZE: none after the first sweep.
 * chase  a single cycle through all N lines in random order (Sattolo,
 *        fixed seed); each line holds the address of the next.
 *        loop: 8 x `mov P,[P]`, sub rcx,1, jnz = 10 insns per 8 lines.
 *        Loads 8/10 of insns, all chased (address loaded by the previous
 *        load); their RAW distance is 1 (7 of 8) or 3 (1 of 8, across
 *        sub/jnz). Every load after the first cycle: distance exactly SIZE.
 *        Misses as seq, but no spatial/prefetch help on real hardware.
 * rand   independent loads at line (x >> 32) & (SIZE-64) of a multiplicative
 *        congruential generator x *= A (5 insns per load, far cheaper to
 *        single-step than xorshift); loop: 8 x {imul x; mov t,x; shr t,32;
 *        and t,mask; mov t,[B+t]}, sub, jnz = 42 insns per 8 lines.
 *        Loads 8/42, imul 8/42, none chased (t comes from arithmetic).
 *        Once all N lines were touched in a window, the distance is
 *        uniform over 64..SIZE (P = 1/N each), so an LRU cache of C < SIZE
 *        bytes misses 1 - C/SIZE of the loads.
 *
 * Window length: one sweep/cycle is N loads = 1.375 N (seq), 1.25 N (chase)
 * or 5.25 N (rand) instructions: 180k/164k/688k for SIZE = 8 MiB, 5.6k/
 * 5.1k/21.5k for 256 KiB. Reuse at SIZE needs a window longer than that.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gt_common.h"

#define LINE 64
#define MCG_A 6364136223846793005ull	/* = 5 mod 8: period 2^62 */

#define SEQ_LD(k, reg) "mov " #k "(%[b],%%rcx), %%" #reg "\n\t"

static void run_seq(const char *buf, uint64_t size, uint64_t iters)
{
#define SEQ_SWEEP()							\
	asm volatile("xor %%ecx, %%ecx\n"				\
		     "1:\n\t"						\
		     SEQ_LD(0, rax) SEQ_LD(64, rdx) SEQ_LD(128, rsi)	\
		     SEQ_LD(192, rdi) SEQ_LD(256, r8) SEQ_LD(320, r9)	\
		     SEQ_LD(384, r10) SEQ_LD(448, r11)			\
		     "add $512, %%rcx\n\t"				\
		     "cmp %[end], %%rcx\n\t"				\
		     "jb 1b\n"						\
		     : : [b] "r"(buf), [end] "r"(size)			\
		     : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10",	\
		       "r11", "cc", "memory")
	GT_REPEAT(iters, SEQ_SWEEP());
}

static void run_chase(const char *buf, uint64_t size, uint64_t iters)
{
	const void *p = buf;
	uint64_t n = size / LINE / 8;

#define CHASE_CYCLE()							\
	asm volatile("mov %[n], %%rcx\n"				\
		     "1:\n\t"						\
		     ".rept 8\n\t"					\
		     "mov (%[p]), %[p]\n\t"				\
		     ".endr\n\t"					\
		     "sub $1, %%rcx\n\t"				\
		     "jnz 1b\n"						\
		     : [p] "+r"(p) : [n] "r"(n)				\
		     : "rcx", "cc", "memory")
	GT_REPEAT(iters, CHASE_CYCLE());
}

/* One temporary per unrolled load holds the index, then the loaded value. */
#define RAND_LD(t)							\
	"imul %[a], %[x]\n\t"						\
	"mov %[x], %%" #t "\n\t"					\
	"shr $32, %%" #t "\n\t"					\
	"and %[mask], %%" #t "\n\t"					\
	"mov (%[b],%%" #t "), %%" #t "\n\t"

static void run_rand(const char *buf, uint64_t size, uint64_t iters)
{
	uint64_t x = 0x9e3779b97f4a7c15ull, a = MCG_A, n = size / LINE / 8;

#define RAND_WALK()							\
	asm volatile("mov %[n], %%rcx\n"				\
		     "1:\n\t"						\
		     RAND_LD(rax) RAND_LD(rdx) RAND_LD(rsi) RAND_LD(rdi)	\
		     RAND_LD(r8) RAND_LD(r9) RAND_LD(r10) RAND_LD(r11)	\
		     "sub $1, %%rcx\n\t"				\
		     "jnz 1b\n"						\
		     : [x] "+r"(x)					\
		     : [a] "r"(a), [b] "r"(buf), [mask] "r"(size - LINE),	\
		       [n] "r"(n)					\
		     : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10",	\
		       "r11", "cc", "memory")
	GT_REPEAT(iters, RAND_WALK());
}

static uint64_t xorshift64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Sattolo's shuffle gives a permutation that is one cycle over all lines. */
static int link_cycle(char *buf, uint64_t lines)
{
	uint32_t *next = malloc(lines * sizeof(*next));
	uint64_t s = 0x2545f4914f6cdd1dull;

	if (!next)
		return -1;
	for (uint64_t i = 0; i < lines; i++)
		next[i] = (uint32_t)i;
	for (uint64_t i = lines - 1; i > 0; i--) {
		uint64_t j = xorshift64(&s) % i;
		uint32_t t = next[i];

		next[i] = next[j];
		next[j] = t;
	}
	for (uint64_t i = 0; i < lines; i++)
		*(char **)(buf + i * LINE) = buf + (uint64_t)next[i] * LINE;
	free(next);
	return 0;
}

int main(int argc, char **argv)
{
	static const char usage[] = "seq|chase|rand [SIZE_BYTES] [ITERATIONS]";
	struct gt_args a;
	char *buf;

	gt_parse(argc, argv, 262144, usage, &a);
	if (a.size < 4096 || a.size > (1ull << 32) || (a.size & (a.size - 1))) {
		fprintf(stderr, "gt_memory: SIZE must be a power of two in 4096..2^32\n");
		return 2;
	}
	buf = aligned_alloc(4096, a.size);
	if (!buf) {
		perror("gt_memory");
		return 1;
	}
	memset(buf, 1, a.size);
	if (!strcmp(a.mode, "chase") && link_cycle(buf, a.size / LINE)) {
		perror("gt_memory");
		return 1;
	}

	if (!strcmp(a.mode, "seq")) {
		gt_ready();
		run_seq(buf, a.size, a.iters);
	} else if (!strcmp(a.mode, "chase")) {
		gt_ready();
		run_chase(buf, a.size, a.iters);
	} else if (!strcmp(a.mode, "rand")) {
		gt_ready();
		run_rand(buf, a.size, a.iters);
	} else {
		fprintf(stderr, "usage: %s %s\n", argv[0], usage);
		return 2;
	}
	free(buf);
	return 0;
}
