/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the CPU profiler's pure parts: instruction classes of known
 * encodings (one or more per function class) and the one-pass reuse
 * distance against a plain LRU stack on random traces.
 *
 * Check runs each test in a child of its own (CK_FORK=no runs them in one
 * process); CK_RUN_CASE=classes or reuse picks one test case.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tu.h"
#include "cpu_int.h"

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

/* Bytes of a hex string into out (at most cap); returns how many. */
static size_t unhex(const char *h, uint8_t *out, size_t cap)
{
	size_t n = 0;

	for (; h[0] && h[1] && n < cap; h += 2) {
		unsigned v;

		ck_assert_msg(sscanf(h, "%2x", &v) == 1, "bad hex in %s", h);
		out[n++] = (uint8_t)v;
	}
	return n;
}

/* The classifier of the running test, made by the checked fixture: a
 * forked test could not hand one back to its parent anyway. */
static struct insn_classifier *cls;
static cs_insn *ci;

static void classifier_setup(void)
{
	ck_assert_msg(insn_classifier_new(&cls) == 0, "classifier");
	ck_assert_msg((ci = cs_malloc(insn_classifier_handle(cls))) != NULL, "classifier");
}

static void classifier_teardown(void)
{
	if (ci)
		cs_free(ci, 1);
	insn_classifier_free(cls);
	ci = NULL;
	cls = NULL;
}

/* Decode the first instruction of hex and classify it; the bytes are
 * padded with zeros so that truncated forms still decode as written. */
static void classify_hex(const char *hex, struct insn *in, char *key, size_t keylen)
{
	uint8_t code[16] = { 0 };
	size_t n = unhex(hex, code, sizeof(code));
	const uint8_t *p = code;
	uint64_t addr = 0x1000;

	n = n < 8 ? 8 : n;
	ck_assert_msg(cs_disasm_iter(insn_classifier_handle(cls), &p, &n, &addr, ci),
		      "%s does not decode", hex);
	insn_classify(cls, ci, in, key, keylen);
}

/* One iteration per row of cases[]: key prefix, kind, memory operands. */
START_TEST(known_encoding_has_its_class)
{
	const struct case_ *c = &cases[_i];
	struct insn in;
	char key[64];

	classify_hex(c->hex, &in, key, sizeof(key));
	ck_assert_msg(!strncmp(key, c->key, strlen(c->key)), "%s (%s %s): key %s, want %s*",
		      c->hex, ci->mnemonic, ci->op_str, key, c->key);
	ck_assert_msg(in.kind == c->kind, "%s: kind %d, want %d", c->hex, in.kind, c->kind);
	ck_assert_msg(in.nmem == c->nmem, "%s: %u memory operands, want %d", c->hex, in.nmem,
		      c->nmem);
}
END_TEST

/* The register sets feed the dependency analysis: a load writes only its
 * destination and reads only its address register. */
START_TEST(load_reads_its_base_and_writes_its_destination)
{
	struct insn in;
	char key[64];

	classify_hex("488b03", &in, key, sizeof(key));	/* mov rax, [rbx] */
	ck_assert_msg(in.loads_gp && !in.move_gp, "mov rax,[rbx] loads a GP register");
	ck_assert_msg(in.nwr == 1 && in.wr[0] == CR_GP0, "mov rax,[rbx] writes rax only (%u)",
		      in.nwr);
	ck_assert_msg(in.nrd == 1 && in.rd[0] == CR_GP0 + 1, "mov rax,[rbx] reads rbx");
}
END_TEST

START_TEST(register_to_register_mov_is_a_move)
{
	struct insn in;
	char key[64];

	classify_hex("4889c1", &in, key, sizeof(key));	/* mov rcx, rax */
	ck_assert_msg(in.move_gp && !in.loads_gp, "mov rcx,rax is a register move");
}
END_TEST

/* String instructions carry their element size and which of [rsi]/[rdi]
 * they touch, for the memory analysis to replay each element. */
START_TEST(rep_movsq_copies_8_byte_elements)
{
	struct insn in;
	char key[64];

	classify_hex("f348a5", &in, key, sizeof(key));	/* rep movsq */
	ck_assert_msg(in.rep && in.str_size == 8 && in.str_mask == 3,
		      "rep movsq: rep %d size %u mask %u", in.rep, in.str_size, in.str_mask);
	ck_assert_msg(!strcmp(key, "str.mm.rw.64.base"), "rep movsq key %s", key);
}
END_TEST

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

/* Accesses of one random trace where r and a fresh LRU stack disagree. */
static size_t trace_mismatches(struct reuse *r, uint64_t *stack, uint64_t *seed)
{
	size_t n = 0, bad = 0;

	for (int i = 0; i < 200000; i++) {
		uint64_t line;

		*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
		/* Mostly a small hot set, sometimes a wide one. */
		line = (*seed >> 33) % ((*seed >> 20) & 7 ? 64 : 3000);
		bad += naive(stack, &n, line) != reuse_access(r, line);
	}
	return bad;
}

/* Two traces, the second after reuse_reset(): a reset must forget every
 * line, as a new LRU stack does. */
START_TEST(reuse_distance_matches_an_lru_stack)
{
	uint64_t *stack = malloc(4096 * sizeof(*stack)), seed = 42;
	struct reuse *r = reuse_new();

	ck_assert_ptr_nonnull(stack);
	ck_assert_ptr_nonnull(r);
	for (int round = 0; round < 2; round++) {
		size_t bad = trace_mismatches(r, stack, &seed);

		ck_assert_msg(bad == 0,
			      "round %d: reuse distance differs from the LRU stack in %zu accesses",
			      round, bad);
		reuse_reset(r);
	}
	reuse_free(r);
	free(stack);
}
END_TEST

/* A sweep over 256 lines: every access after the first pass is 256. Run
 * on a new tracker, then again after a reset. */
START_TEST(sweep_reuses_at_its_footprint)
{
	struct reuse *r = reuse_new();

	ck_assert_ptr_nonnull(r);
	for (int life = 0; life < 2; life++) {
		for (int pass = 0; pass < 3; pass++)
			for (uint64_t l = 0; l < 256; l++) {
				uint64_t d = reuse_access(r, l);

				ck_assert_msg(d == (pass ? 256 : 0), "sweep pass %d line %llu: %llu",
					      pass, (unsigned long long)l, (unsigned long long)d);
			}
		reuse_reset(r);
	}
	reuse_free(r);
}
END_TEST

/* Generous timeouts: Check's default of 4 s is short for the reuse traces
 * under the sanitizers. */
static TCase *tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, 50);
	return tc;
}

static Suite *cpu_suite(void)
{
	Suite *s = suite_create("cpu");
	TCase *classes = tcase("classes"), *reuse = tcase("reuse");

	tcase_add_checked_fixture(classes, classifier_setup, classifier_teardown);
	tcase_add_loop_test(classes, known_encoding_has_its_class, 0,
			    (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(classes, load_reads_its_base_and_writes_its_destination);
	tcase_add_test(classes, register_to_register_mov_is_a_move);
	tcase_add_test(classes, rep_movsq_copies_8_byte_elements);
	suite_add_tcase(s, classes);
	tcase_add_test(reuse, reuse_distance_matches_an_lru_stack);
	tcase_add_test(reuse, sweep_reuses_at_its_footprint);
	suite_add_tcase(s, reuse);
	return s;
}

int main(void)
{
	return tu_run(cpu_suite());
}
