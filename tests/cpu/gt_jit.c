/* SPDX-License-Identifier: MIT */
/*
 * JIT and self-modifying code: a loop generated at run time into an
 * anonymous read-write-execute mapping, whose add immediate is rewritten
 * before every call. The profiler must count these instructions as JIT
 * (decoded afresh, never cached) and keep going.
 *
 *   gt_jit     runs forever after printing "ready"
 *
 * Generated function: mov ecx, 1000; L: add rax, IMM; dec ecx; jnz L; ret
 * so 3 instructions per iteration, 3002 per call, all in the mapping.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static const uint8_t code[] = {
	0xb9, 0xe8, 0x03, 0x00, 0x00,	/* mov ecx, 1000 */
	0x48, 0x83, 0xc0, 0x01,		/* L: add rax, 1 (imm at offset 8) */
	0xff, 0xc9,			/* dec ecx */
	0x75, 0xf8,			/* jnz L */
	0xc3,				/* ret */
};

int main(void)
{
	uint8_t *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t (*fn)(void);
	volatile uint64_t sink = 0;

	if (m == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memcpy(m, code, sizeof(code));
	fn = (uint64_t (*)(void))(uintptr_t)m;
	fputs("ready\n", stdout);
	fflush(stdout);
	for (uint8_t imm = 1;; imm = (uint8_t)(imm % 100 + 1)) {
		m[8] = imm;	/* self-modification between calls */
		__builtin___clear_cache((char *)m, (char *)m + sizeof(code));
		sink += fn();
	}
}
