/* SPDX-License-Identifier: MIT */
/*
 * Round trip of the instruction class table: every class key the profiler
 * produced for redis-server, memcached and the ground-truth programs (and
 * one per function and extension) is emitted by the synthesizer's
 * templates, assembled by GNU as, decoded by Capstone and classified again.
 * Every key must give an instruction of its function and memory direction;
 * at least 90% must come back as the very same key. Every key, listed or
 * classified, must also pass the model's mix-key check (validation warns
 * about keys that fail it), so the two vocabularies cannot drift apart.
 *
 *   emit_test WORKDIR    (CK_RUN_CASE=emit or round-trip picks one case)
 *
 * WORKDIR (meson passes the build directory) takes emit.s, emit.o and
 * emit.bin; main() keeps it in workdir before Check runs the tests, so a
 * forked test inherits it and a hand-run test takes it as it always did.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tu.h"
#include "cpu_int.h"
#include "schema.h"
#include "synth_int.h"

static const char *const keys[] = {
	/* redis-server and memcached windows */
	"alu.mi.rw.32.base", "alu.mi.rw.64.base", "alu.mr.rw.64.base", "alu.r.none.32.base",
	"alu.r.none.64.base", "alu.ri.none.32.base", "alu.ri.none.64.base", "alu.ri.none.8.base",
	"alu.rm.none.32.base", "alu.rm.none.64.base", "alu.rm.r.32.base", "alu.rm.r.64.base",
	"alu.rr.none.32.base", "alu.rr.none.64.base", "alu.rr.none.8.base", "atomic.mr.rw.32.base",
	"atomic.mr.rw.64.base", "bit.rr.none.32.base", "bit.rr.none.64.base", "call.i.w.64.base",
	"calli.m.rw.64.base", "calli.r.w.64.base", "cmp.mi.r.16.base", "cmp.mi.r.32.base",
	"cmp.mi.r.64.base", "cmp.mi.r.8.base", "cmp.mr.r.16.base", "cmp.mr.r.32.base",
	"cmp.mr.r.64.base", "cmp.ri.none.16.base", "cmp.ri.none.32.base", "cmp.ri.none.64.base",
	"cmp.ri.none.8.base", "cmp.rm.r.16.base", "cmp.rm.r.64.base", "cmp.rm.r.8.base",
	"cmp.rr.none.16.base", "cmp.rr.none.32.base", "cmp.rr.none.64.base", "cmp.rr.none.8.base",
	"cvt.-.none.0.base", "jcc.i.none.64.base", "jmp.i.none.64.base", "jmpi.m.r.64.base",
	"jmpi.r.none.64.base", "mov.mi.w.32.base", "mov.mi.w.64.base", "mov.mi.w.8.base",
	"mov.r.none.8.base", "mov.mr.w.16.base", "mov.mr.w.32.base", "mov.mr.w.64.base", "mov.mr.w.8.base",
	"mov.r.r.64.base", "mov.r.w.64.base", "mov.ri.none.32.base", "mov.ri.none.64.base",
	"mov.rm.r.32.base", "mov.rm.r.64.base", "mov.rm.r.8.base", "mov.rr.none.32.base",
	"mov.rr.none.64.base", "mov.rr.none.8.base", "mul.r.none.64.base", "mul.rr.none.64.base",
	"nop.-.none.0.base", "nop.m.none.32.base", "ret.-.r.64.base", "shift.ri.none.32.base",
	"shift.ri.none.64.base", "shift.ri.none.8.base", "shift.rr.none.32.base",
	"shift.rr.none.64.base", "sys.-.none.0.base", "vfp.rm.r.128.sse", "vfp.rr.none.128.sse",
	"vint.mr.w.128.sse2", "vint.rm.r.128.sse2", "vint.rr.none.128.sse2",
	"vint.rrr.none.256.avx2", "vint.rrr.none.128.avx", "vint.rrr.none.512.avx512",
	/* the rest of the functions */
	"div.r.none.64.base", "div.m.r.64.base", "crc32.rr.none.64.sse4.2", "str.mm.rw.64.base",
	"str.mr.w.8.base", "x87.rr.none.80.x87", "vfp.rrr.none.256.avx", "cvt.rr.none.64.sse2",
	"other.-.none.0.base", "atomic.mr.rw.8.base", "shift.mi.rw.64.base", "alu.m.rw.32.base",
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* The work directory of argv[1], set in main() before srunner_run_all(). */
static const char *workdir;

/* The classifier of the running test (checked fixture), and what it made
 * of each key's emitted bytes: the class key and the decoded text. */
static struct insn_classifier *cls;
static cs_insn *ci;
static char got[NKEYS][64];
static char text[NKEYS][256];

static void run(const char *cmd)
{
	int rc = system(cmd);

	ck_assert_msg(rc == 0, "'%s' exited %d", cmd, rc);
}

/* Function and memory direction: the first and third key fields. */
static void func_mem(const char *key, char *out, size_t len)
{
	const char *a = strchr(key, '.'), *b = a ? strchr(a + 1, '.') : NULL;
	const char *c = b ? strchr(b + 1, '.') : NULL;

	snprintf(out, len, "%.*s/%.*s", (int)(a - key), key, c ? (int)(c - b - 1) : 0, b ? b + 1 : "");
}

/* WORKDIR/emit.s: every key's template, one instruction per key. */
static void emit_source(void)
{
	char path[512], line[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/emit.s", workdir);
	f = fopen(path, "w");
	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	fputs(".intel_syntax noprefix\n.text\n", f);
	for (size_t i = 0; i < NKEYS; i++) {
		if (insn_emit(keys[i], NULL, line, sizeof(line))) {
			fclose(f);
			ck_abort_msg("%s: %s", keys[i], ditto_last_error());
		}
		fprintf(f, "\t%s\n1:\n", line);
	}
	ck_assert_msg(fclose(f) == 0, "%s: %s", path, strerror(errno));
}

/* GNU as, then the bare .text section into WORKDIR/emit.bin. */
static void assemble(void)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "as --64 -o %s/emit.o %s/emit.s && objcopy -O binary "
		 "--only-section=.text %s/emit.o %s/emit.bin", workdir, workdir, workdir, workdir);
	run(cmd);
}

/* Each key emitted and assembled, and a classifier to read it back. */
static void round_trip_setup(void)
{
	emit_source();
	assemble();
	ck_assert_msg(insn_classifier_new(&cls) == 0, "classifier");
	ck_assert_msg((ci = cs_malloc(insn_classifier_handle(cls))) != NULL, "classifier");
}

static void round_trip_teardown(void)
{
	if (ci)
		cs_free(ci, 1);
	insn_classifier_free(cls);
	ci = NULL;
	cls = NULL;
}

/* Decode WORKDIR/emit.bin, one instruction per key, into got[] and text[]. */
static void decode_all(void)
{
	static uint8_t code[65536];
	char path[512];
	size_t len, off = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/emit.bin", workdir);
	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	len = fread(code, 1, sizeof(code), f);
	fclose(f);
	for (size_t i = 0; i < NKEYS; i++) {
		const uint8_t *p = code + off;
		size_t left = len - off;
		uint64_t addr = 0x1000 + off;
		struct insn in;

		ck_assert_msg(cs_disasm_iter(insn_classifier_handle(cls), &p, &left, &addr, ci),
			      "%s: emitted bytes do not decode", keys[i]);
		off += ci->size;
		insn_classify(cls, ci, &in, got[i], sizeof(got[i]));
		snprintf(text[i], sizeof(text[i]), "%s %s", ci->mnemonic, ci->op_str);
	}
}

/* One iteration per key: the synthesizer has a template for it. */
START_TEST(every_key_has_a_template)
{
	char line[128];

	ck_assert_msg(insn_emit(keys[_i], NULL, line, sizeof(line)) == 0, "%s: %s", keys[_i],
		      ditto_last_error());
}
END_TEST

START_TEST(templates_assemble)
{
	emit_source();
	assemble();
}
END_TEST

START_TEST(emitted_bytes_decode_one_instruction_per_key)
{
	decode_all();
}
END_TEST

/* The two vocabularies cannot drift apart: the listed key and the one the
 * classifier gives back both pass the model's check. */
START_TEST(listed_and_classified_keys_pass_the_mix_key_check)
{
	char why[128];

	decode_all();
	for (size_t i = 0; i < NKEYS; i++) {
		ck_assert_msg(mix_key_check(keys[i], why, sizeof(why)),
			      "%s -> %s: the model's mix-key check says %s", keys[i], got[i], why);
		ck_assert_msg(mix_key_check(got[i], why, sizeof(why)),
			      "%s -> %s: the model's mix-key check says %s", keys[i], got[i], why);
	}
}
END_TEST

START_TEST(every_key_keeps_its_function_and_memory_direction)
{
	size_t close_ = 0;

	decode_all();
	for (size_t i = 0; i < NKEYS; i++) {
		char want[32], have[32];

		func_mem(keys[i], want, sizeof(want));
		func_mem(got[i], have, sizeof(have));
		if (!strcmp(want, have))
			close_++;
		else
			printf("%-28s -> %-28s (%s): %s, want %s\n", keys[i], got[i], text[i], have,
			       want);
	}
	fflush(stdout);
	ck_assert_msg(close_ == NKEYS, "%zu keys: %zu same function and memory direction; "
		      "want all of the same function and direction", NKEYS, close_);
}
END_TEST

START_TEST(ninety_percent_of_keys_come_back_exact)
{
	size_t exact = 0, close_ = 0;

	decode_all();
	for (size_t i = 0; i < NKEYS; i++) {
		char want[32], have[32];

		func_mem(keys[i], want, sizeof(want));
		func_mem(got[i], have, sizeof(have));
		exact += !strcmp(got[i], keys[i]);
		close_ += !strcmp(want, have);
		if (strcmp(got[i], keys[i]))
			printf("%-28s -> %-28s (%s)\n", keys[i], got[i], text[i]);
	}
	printf("%zu keys: %zu exact, %zu same function and memory direction\n", NKEYS, exact,
	       close_);
	fflush(stdout);
	ck_assert_msg(exact * 10 >= NKEYS * 9, "%zu keys: %zu exact; want 90%% exact", NKEYS,
		      exact);
}
END_TEST

/* Generous timeouts (Check's default is 4 s): each round-trip test runs
 * as and objcopy, under the sanitizers on a shared machine. */
static TCase *tcase(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, 50);
	suite_add_tcase(s, tc);
	return tc;
}

static Suite *emit_suite(void)
{
	Suite *s = suite_create("emit");
	TCase *emit = tcase(s, "emit"), *round_trip = tcase(s, "round-trip");

	tcase_add_loop_test(emit, every_key_has_a_template, 0, (int)NKEYS);
	tcase_add_test(emit, templates_assemble);
	tcase_add_checked_fixture(round_trip, round_trip_setup, round_trip_teardown);
	tcase_add_test(round_trip, emitted_bytes_decode_one_instruction_per_key);
	tcase_add_test(round_trip, listed_and_classified_keys_pass_the_mix_key_check);
	tcase_add_test(round_trip, every_key_keeps_its_function_and_memory_direction);
	tcase_add_test(round_trip, ninety_percent_of_keys_come_back_exact);
	return s;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s WORKDIR\n", argv[0]);
		return 2;
	}
	workdir = argv[1];
	return tu_run(emit_suite());
}
