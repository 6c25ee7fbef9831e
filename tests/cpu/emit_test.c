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
 *   emit_test WORKDIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int run(const char *cmd)
{
	int rc = system(cmd);

	if (rc)
		fprintf(stderr, "FAIL: '%s' exited %d\n", cmd, rc);
	return rc;
}

/* Function and memory direction: the first and third key fields. */
static void func_mem(const char *key, char *out, size_t len)
{
	const char *a = strchr(key, '.'), *b = a ? strchr(a + 1, '.') : NULL;
	const char *c = b ? strchr(b + 1, '.') : NULL;

	snprintf(out, len, "%.*s/%.*s", (int)(a - key), key, c ? (int)(c - b - 1) : 0, b ? b + 1 : "");
}

int main(int argc, char **argv)
{
	size_t n = sizeof(keys) / sizeof(keys[0]), exact = 0, close_ = 0, len = 0, off = 0;
	char path[512], cmd[2048], line[128];
	struct insn_classifier *cls;
	uint8_t code[65536];
	cs_insn *ci;
	FILE *f;

	if (argc != 2)
		return 2;
	snprintf(path, sizeof(path), "%s/emit.s", argv[1]);
	if (!(f = fopen(path, "w")))
		return 1;
	fputs(".intel_syntax noprefix\n.text\n", f);
	for (size_t i = 0; i < n; i++) {
		if (insn_emit(keys[i], NULL, line, sizeof(line))) {
			printf("FAIL: %s: %s\n", keys[i], ditto_last_error());
			return 1;
		}
		fprintf(f, "\t%s\n1:\n", line);
	}
	fclose(f);
	snprintf(cmd, sizeof(cmd), "as --64 -o %s/emit.o %s && objcopy -O binary --only-section=.text "
		 "%s/emit.o %s/emit.bin", argv[1], path, argv[1], argv[1]);
	if (run(cmd))
		return 1;
	snprintf(path, sizeof(path), "%s/emit.bin", argv[1]);
	if (!(f = fopen(path, "rb")))
		return 1;
	len = fread(code, 1, sizeof(code), f);
	fclose(f);
	if (insn_classifier_new(&cls) || !(ci = cs_malloc(insn_classifier_handle(cls))))
		return 1;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *p = code + off;
		size_t left = len - off;
		uint64_t addr = 0x1000 + off;
		struct insn in;
		char key[64], want[32], got[32], why[128];

		if (!cs_disasm_iter(insn_classifier_handle(cls), &p, &left, &addr, ci)) {
			printf("FAIL: %s: emitted bytes do not decode\n", keys[i]);
			return 1;
		}
		off += ci->size;
		insn_classify(cls, ci, &in, key, sizeof(key));
		if (!mix_key_check(keys[i], why, sizeof(why)) || !mix_key_check(key, why, sizeof(why))) {
			printf("FAIL: %s -> %s: the model's mix-key check says %s\n", keys[i], key, why);
			return 1;
		}
		func_mem(keys[i], want, sizeof(want));
		func_mem(key, got, sizeof(got));
		exact += !strcmp(key, keys[i]);
		close_ += !strcmp(want, got);
		if (strcmp(key, keys[i]))
			printf("%-28s -> %-28s (%s %s)\n", keys[i], key, ci->mnemonic, ci->op_str);
	}
	cs_free(ci, 1);
	insn_classifier_free(cls);
	printf("%zu keys: %zu exact, %zu same function and memory direction\n", n, exact, close_);
	if (close_ != n || exact * 10 < n * 9) {
		printf("FAIL: want all of the same function and direction, 90%% exact\n");
		return 1;
	}
	return 0;
}
