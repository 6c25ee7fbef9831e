/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the CPU profiler's pure parts: instruction classes of known
 * encodings (one or more per function class) and the one-pass reuse
 * distance against a plain LRU stack on random traces.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_int.h"

static int failures;

#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		if (!(cond)) {                                                \
			failures++;                                           \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);           \
			printf(__VA_ARGS__);                                  \
			printf("\n");                                         \
		}                                                             \
	} while (0)

struct case_ {
	const char *hex;
	const char *key;	/* expected prefix of the class key */
	int kind;
	int nmem;
};

static const struct case_ cases[] = {
	{ "4801d8", "alu.rr.none.64.base", IK_PLAIN, 0 },	/* add rax, rbx */
	{ "488d0418", "alu.rm.none.64.base", IK_PLAIN, 0 },	/* lea: no access */
	{ "488b03", "mov.rm.r.64.base", IK_PLAIN, 1 },		/* mov rax, [rbx] */
	{ "488903", "mov.mr.w.64.base", IK_PLAIN, 1 },		/* mov [rbx], rax */
	{ "480103", "alu.mr.rw.64.base", IK_PLAIN, 1 },		/* add [rbx], rax */
	{ "8b0425", "mov.rm.r.32.base", IK_PLAIN, 1 },		/* mov eax, [abs] (truncated ok) */
	{ "48d3e0", "shift.rr.none.64.base", IK_PLAIN, 0 },	/* shl rax, cl */
	{ "480fafc3", "mul.rr.none.64.base", IK_PLAIN, 0 },	/* imul rax, rbx */
	{ "48f7f3", "div.r.none.64.base", IK_PLAIN, 0 },	/* div rbx */
	{ "4839d8", "cmp.rr.none.64.base", IK_PLAIN, 0 },	/* cmp rax, rbx */
	{ "7400", "jcc.i.none.", IK_JCC, 0 },			/* je */
	{ "eb00", "jmp.i.none.", IK_JMP, 0 },			/* jmp rel8 */
	{ "ffe0", "jmpi.r.none.64.base", IK_JMP, 0 },		/* jmp rax */
	{ "e800000000", "call.i.w.64.base", IK_CALL, 0 },	/* call rel32 */
	{ "ffd0", "calli.r.w.64.base", IK_CALL, 0 },		/* call rax */
	{ "c3", "ret.-.r.64.base", IK_RET, 0 },
	{ "f348a5", "str.", IK_STRING, 0 },			/* rep movsq */
	{ "f0480fb10b", "atomic.mr.rw.64.base", IK_PLAIN, 1 },	/* lock cmpxchg [rbx], rcx */
	{ "f2480f38f1c3", "crc32.rr.none.64.sse4.2", IK_PLAIN, 0 },
	{ "f3480fb8c3", "bit.rr.none.64.", IK_PLAIN, 0 },	/* popcnt rax, rbx */
	{ "4898", "cvt.-.none.0.base", IK_PLAIN, 0 },		/* cdqe */
	{ "f2480f2ac0", "cvt.rr.none.", IK_PLAIN, 0 },		/* cvtsi2sd xmm0, rax */
	{ "660ffec1", "vint.rr.none.128.sse2", IK_PLAIN, 0 },	/* paddd xmm0, xmm1 */
	{ "f20f58c1", "vfp.rr.none.", IK_PLAIN, 0 },		/* addsd xmm0, xmm1 */
	{ "c5fdfec1", "vint.rrr.none.256.avx2", IK_PLAIN, 0 },	/* vpaddd ymm0, ymm0, ymm1 */
	{ "62f17d48fec1", "vint.rrr.none.512.avx512", IK_PLAIN, 0 }, /* vpaddd zmm */
	{ "d9c0", "x87.", IK_PLAIN, 0 },			/* fld st(0) */
	{ "90", "nop.-.none.0.base", IK_PLAIN, 0 },
	{ "0f1f4000", "nop.m.none.", IK_PLAIN, 0 },		/* nop [rax]: no access */
	{ "0f05", "sys.-.none.0.base", IK_SYSCALL, 0 },
	{ "50", "mov.r.w.64.base", IK_PLAIN, 0 },		/* push rax */
	{ "58", "mov.r.r.64.base", IK_PLAIN, 0 },		/* pop rax */
	{ "0f31", "sys.", IK_PLAIN, 0 },			/* rdtsc */
	{ "803b05", "cmp.mi.r.8.base", IK_PLAIN, 1 },		/* cmp byte [rbx], 5: reads */
	{ "0f1103", "vfp.mr.w.128.sse", IK_PLAIN, 1 },		/* movups [rbx], xmm0: writes */
	{ "c5fa7f03", "vint.mr.w.128.avx", IK_PLAIN, 1 },	/* vmovdqu [rbx], xmm0 */
	{ "660f6f03", "vint.rm.r.128.sse2", IK_PLAIN, 1 },	/* movdqa xmm0, [rbx] */
};

static size_t unhex(const char *h, uint8_t *out)
{
	size_t n = 0;

	for (; h[0] && h[1]; h += 2) {
		unsigned v;

		sscanf(h, "%2x", &v);
		out[n++] = (uint8_t)v;
	}
	return n;
}

static void test_classes(void)
{
	struct insn_classifier *c;
	cs_insn *ci;

	if (insn_classifier_new(&c) || !(ci = cs_malloc(insn_classifier_handle(c)))) {
		CHECK(0, "classifier");
		return;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t code[16] = { 0 };
		size_t n = unhex(cases[i].hex, code);
		const uint8_t *p = code;
		uint64_t addr = 0x1000;
		struct insn in;
		char key[64];

		/* Pad so truncated forms still decode as written. */
		n = n < 8 ? 8 : n;
		if (!cs_disasm_iter(insn_classifier_handle(c), &p, &n, &addr, ci)) {
			CHECK(0, "%s does not decode", cases[i].hex);
			continue;
		}
		insn_classify(c, ci, &in, key, sizeof(key));
		CHECK(!strncmp(key, cases[i].key, strlen(cases[i].key)), "%s (%s %s): key %s, want %s*",
		      cases[i].hex, ci->mnemonic, ci->op_str, key, cases[i].key);
		CHECK(in.kind == cases[i].kind, "%s: kind %d, want %d", cases[i].hex, in.kind,
		      cases[i].kind);
		CHECK(in.nmem == cases[i].nmem, "%s: %u memory operands, want %d", cases[i].hex,
		      in.nmem, cases[i].nmem);
	}
	cs_free(ci, 1);
	insn_classifier_free(c);
}

static void test_details(void)
{
	struct insn_classifier *c;
	cs_insn *ci;
	uint8_t code[] = { 0x48, 0x8b, 0x03, 0x48, 0x89, 0xc1, 0xf3, 0x48, 0xa5, 0x0f, 0x1f, 0x40, 0x00 };
	const uint8_t *p = code;
	size_t n = sizeof(code);
	uint64_t addr = 0x1000;
	struct insn in;
	char key[64];

	if (insn_classifier_new(&c) || !(ci = cs_malloc(insn_classifier_handle(c))))
		return;
	cs_disasm_iter(insn_classifier_handle(c), &p, &n, &addr, ci);	/* mov rax, [rbx] */
	insn_classify(c, ci, &in, key, sizeof(key));
	CHECK(in.loads_gp && !in.move_gp, "mov rax,[rbx] loads a GP register");
	CHECK(in.nwr == 1 && in.wr[0] == CR_GP0, "mov rax,[rbx] writes rax only (%u)", in.nwr);
	CHECK(in.nrd == 1 && in.rd[0] == CR_GP0 + 1, "mov rax,[rbx] reads rbx");
	cs_disasm_iter(insn_classifier_handle(c), &p, &n, &addr, ci);	/* mov rcx, rax */
	insn_classify(c, ci, &in, key, sizeof(key));
	CHECK(in.move_gp && !in.loads_gp, "mov rcx,rax is a register move");
	cs_disasm_iter(insn_classifier_handle(c), &p, &n, &addr, ci);	/* rep movsq */
	insn_classify(c, ci, &in, key, sizeof(key));
	CHECK(in.rep && in.str_size == 8 && in.str_mask == 3, "rep movsq: rep %d size %u mask %u",
	      in.rep, in.str_size, in.str_mask);
	CHECK(!strcmp(key, "str.mm.rw.64.base"), "rep movsq key %s", key);
	cs_free(ci, 1);
	insn_classifier_free(c);
}

/* Plain LRU stack: position of the line, moved to the top. */
static uint64_t naive(uint64_t *stack, size_t *n, uint64_t line)
{
	for (size_t i = 0; i < *n; i++)
		if (stack[i] == line) {
			memmove(stack + 1, stack, i * sizeof(*stack));
			stack[0] = line;
			return i + 1;
		}
	memmove(stack + 1, stack, *n * sizeof(*stack));
	stack[0] = line;
	(*n)++;
	return 0;
}

static void test_reuse(void)
{
	uint64_t *stack = malloc(4096 * sizeof(*stack)), seed = 42;
	struct reuse *r = reuse_new();
	size_t n = 0, bad = 0;

	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 200000; i++) {
			uint64_t line, want, got;

			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			/* Mostly a small hot set, sometimes a wide one. */
			line = (seed >> 33) % ((seed >> 20) & 7 ? 64 : 3000);
			want = naive(stack, &n, line);
			got = reuse_access(r, line);
			bad += want != got;
		}
		CHECK(bad == 0, "reuse distance differs from the LRU stack in %zu accesses", bad);
		reuse_reset(r);
		n = 0;
	}
	/* A sweep over 256 lines: every access after the first pass is 256. */
	for (int pass = 0; pass < 3; pass++)
		for (uint64_t l = 0; l < 256; l++) {
			uint64_t d = reuse_access(r, l);

			CHECK(d == (pass ? 256 : 0), "sweep pass %d line %llu: %llu", pass,
			      (unsigned long long)l, (unsigned long long)d);
		}
	reuse_free(r);
	free(stack);
}

int main(void)
{
	test_classes();
	test_details();
	test_reuse();
	if (failures) {
		printf("%d failures\n", failures);
		return 1;
	}
	printf("cpu unit tests passed\n");
	return 0;
}
