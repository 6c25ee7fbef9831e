/* SPDX-License-Identifier: MIT */
/*
 * Ground truth for instruction mix and register dependency distances:
 * straight-line inline-asm loops of one instruction kind.
 *
 *   gt_mix add|load|div [SIZE] [ITERATIONS]
 *   gt_mix dep N [ITERATIONS]          N in 1, 2, 4, 8
 *
 * SIZE is ignored (pass 0). ITERATIONS: repetitions of 1024 loop iterations,
 * then exit 0; 0 (default): forever. Each repetition adds 2 insns (counter
 * mov, jmp; div 4: also mov rax, xor edx) to the per-iteration counts below,
 * 2 more with ITERATIONS > 0 (add/cmp/jne instead of jmp).
 * RAW distances count every register an insn reads, flags included, back
 * to the latest insn that wrote it; registers the loop never writes give none.
 *
 * add   16 x `add %rS, ACC` over 8 accumulators (twice round), sub $1,%rcx,
 *       jnz = 18 insns: 16 add reg,reg + 1 sub reg,imm + 1 jcc (taken
 *       1023/1024). RAW: 8 at 8, 8 at 10 (across sub/jnz), sub 18, jnz 1.
 * load  12 x `mov OFF(%rB), REG`, OFF = 0, 256 .. 2816 (12 lines of a 4 KiB
 *       buffer, 12 distinct dest regs), sub, jnz = 14 insns: 12 loads
 *       (8-byte, none chased) + 1 sub + 1 jcc. RAW: sub 14, jnz 1 (loads
 *       read only rB). Reuse distance of every load: 12 lines = 768 bytes;
 *       all hit a 32 KiB D1.
 * div   8 x `div %rD` (64-bit; rdx stays below the divisor as the previous
 *       remainder, so it never faults), sub, jnz = 10 insns: 8 div + 1 sub
 *       + 1 jcc. RAW: each div reads rax and rdx from the previous div:
 *       7 x 2 at 1, 1 x 2 at 3 (across sub/jnz); sub 10, jnz 1.
 * dep N 32 x `add $1, R[i % N]` over N registers, the last of which counts
 *       the loop up to zero, then jnz = 33 insns: 32 add reg,imm + 1 jcc.
 *       RAW per iteration: 32 - N at distance N, N at N + 1 (the first N
 *       adds, across the jnz), jnz 1 (flags). No other registers are read.
 *         N=1: 32 at 1, 1 at 2      N=2: 30 at 2, 2 at 3, 1 at 1
 *         N=4: 28 at 4, 4 at 5, 1 at 1    N=8: 24 at 8, 8 at 9, 1 at 1
 * gfni  4 x `gf2p8mulb %xmm1, %xmm0` (GFNI; Capstone 4 cannot decode it),
 *       sub, jnz = 6 insns: 4 undecodable of 6. Needs a CPU with gfni
 *       (/proc/cpuinfo); it dies of SIGILL otherwise.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gt_common.h"

#define ITERS 1024

static void run_add(uint64_t iters)
{
#define ADD_LOOP()							\
	asm volatile("mov %[n], %%rcx\n"				\
		     "1:\n\t"						\
		     ".rept 2\n\t"					\
		     ".irp acc, rax, rdx, rsi, rdi, r8, r9, r10, r11\n\t"	\
		     "add %[s], %%\\acc\n\t"				\
		     ".endr\n\t"					\
		     ".endr\n\t"					\
		     "sub $1, %%rcx\n\t"				\
		     "jnz 1b\n"						\
		     : : [s] "r"(1ull), [n] "i"(ITERS)			\
		     : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10",	\
		       "r11", "cc")
	GT_REPEAT(iters, ADD_LOOP());
}

/* A distinct register per load: Valgrind drops a load whose register is
 * overwritten unread in the same superblock, which would hide it from
 * cachegrind. 12 is what is left after the base and the counter. */
#define LD(off, reg) "mov " #off "(%[b]), %%" #reg "\n\t"

static void run_load(const char *buf, uint64_t iters)
{
#define LOAD_LOOP()							\
	asm volatile("mov %[n], %%rcx\n"				\
		     "1:\n\t"						\
		     LD(0, rax) LD(256, rbx) LD(512, rdx) LD(768, rsi)	\
		     LD(1024, rdi) LD(1280, r8) LD(1536, r9) LD(1792, r10)	\
		     LD(2048, r11) LD(2304, r12) LD(2560, r13) LD(2816, r14)	\
		     "sub $1, %%rcx\n\t"				\
		     "jnz 1b\n"						\
		     : : [b] "r"(buf), [n] "i"(ITERS)			\
		     : "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9",	\
		       "r10", "r11", "r12", "r13", "r14", "cc", "memory")
	GT_REPEAT(iters, LOAD_LOOP());
}

static void run_div(uint64_t iters)
{
#define DIV_LOOP()							\
	asm volatile("mov %[x], %%rax\n\t"				\
		     "xor %%edx, %%edx\n\t"				\
		     "mov %[n], %%rcx\n"				\
		     "1:\n\t"						\
		     ".rept 8\n\t"					\
		     "div %[d]\n\t"					\
		     ".endr\n\t"					\
		     "sub $1, %%rcx\n\t"				\
		     "jnz 1b\n"						\
		     : : [d] "r"(0x12345ull), [x] "r"(0x0123456789abcdefull),	\
		       [n] "i"(ITERS)					\
		     : "rax", "rcx", "rdx", "cc")
	GT_REPEAT(iters, DIV_LOOP());
}

/* The last register of REGS is the counter: it reaches 0 exactly at the
 * end of the final iteration, as it gains 32/N per iteration. */
#define DEP_LOOP(n, regs)						\
	asm volatile("mov %[c], %%" regs##_LAST "\n"			\
		     "1:\n\t"						\
		     ".rept 32 / " #n "\n\t"				\
		     ".irp r, " regs "\n\t"				\
		     "add $1, %%\\r\n\t"				\
		     ".endr\n\t"					\
		     ".endr\n\t"					\
		     "jnz 1b\n"						\
		     : : [c] "i"(-(ITERS * 32 / (n)))			\
		     : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10",	\
		       "cc")
#define REGS1 "rax"
#define REGS1_LAST "rax"
#define REGS2 "rax, rcx"
#define REGS2_LAST "rcx"
#define REGS4 "rax, rcx, rdx, rsi"
#define REGS4_LAST "rsi"
#define REGS8 "rax, rcx, rdx, rsi, rdi, r8, r9, r10"
#define REGS8_LAST "r10"

static void run_gfni(uint64_t iters)
{
	do {
		asm volatile("mov %[n], %%rcx\n"
			     "1:\n\t"
			     ".byte 0x66, 0x0f, 0x38, 0xcf, 0xc1\n\t"
			     ".byte 0x66, 0x0f, 0x38, 0xcf, 0xc1\n\t"
			     ".byte 0x66, 0x0f, 0x38, 0xcf, 0xc1\n\t"
			     ".byte 0x66, 0x0f, 0x38, 0xcf, 0xc1\n\t"
			     "sub $1, %%rcx\n\t"
			     "jnz 1b"
			     :
			     : [n] "i" (ITERS)
			     : "rcx", "xmm0", "cc");
	} while (!iters || --iters);
}

static void run_dep(uint64_t n, uint64_t iters)
{
	if (n == 1)
		GT_REPEAT(iters, DEP_LOOP(1, REGS1));
	else if (n == 2)
		GT_REPEAT(iters, DEP_LOOP(2, REGS2));
	else if (n == 4)
		GT_REPEAT(iters, DEP_LOOP(4, REGS4));
	else
		GT_REPEAT(iters, DEP_LOOP(8, REGS8));
}

int main(int argc, char **argv)
{
	static const char usage[] = "add|load|div|gfni [SIZE] [ITERATIONS] | dep 1|2|4|8 [ITERATIONS]";
	static char buf[4096] __attribute__((aligned(4096)));
	struct gt_args a;

	gt_parse(argc, argv, 0, usage, &a);
	memset(buf, 1, sizeof(buf));
	if (!strcmp(a.mode, "add")) {
		gt_ready();
		run_add(a.iters);
	} else if (!strcmp(a.mode, "load")) {
		gt_ready();
		run_load(buf, a.iters);
	} else if (!strcmp(a.mode, "div")) {
		gt_ready();
		run_div(a.iters);
	} else if (!strcmp(a.mode, "gfni")) {
		gt_ready();
		run_gfni(a.iters);
	} else if (!strcmp(a.mode, "dep") && (a.size == 1 || a.size == 2 || a.size == 4 ||
					     a.size == 8)) {
		gt_ready();
		run_dep(a.size, a.iters);
	} else {
		fprintf(stderr, "usage: %s %s\n", argv[0], usage);
		return 2;
	}
	return 0;
}
