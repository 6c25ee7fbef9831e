/* SPDX-License-Identifier: MIT */
/*
 * Instruction class key -> one concrete instruction (GNU as, Intel syntax)
 * of that class: the synthesizer's side of the class table in
 * lib/profile/cpu/insn_class.c. Registers come from the caller (already
 * allocated); memory operands address [base + disp]. A key whose exact
 * shape has no template gets the nearest instruction of the same function
 * and memory direction, and says so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "synth_int.h"

struct key {
	char func[16], ops[8], mem[8], isa[16];
	unsigned width;
};

static int parse_key(const char *k, struct key *out)
{
	char buf[96], *f[5], *save = NULL;
	int n = 0;

	if (strlen(k) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, k);
	for (char *t = strtok_r(buf, ".", &save); t && n < 5; t = strtok_r(NULL, ".", &save))
		f[n++] = t;
	/* The isa may hold a dot itself ("sse4.2"). */
	if (n < 5 || strlen(f[0]) >= sizeof(out->func) || strlen(f[1]) >= sizeof(out->ops) ||
	    strlen(f[2]) >= sizeof(out->mem))
		return -EINVAL;
	strcpy(out->func, f[0]);
	strcpy(out->ops, f[1]);
	strcpy(out->mem, f[2]);
	out->width = (unsigned)strtoul(f[3], NULL, 10);
	snprintf(out->isa, sizeof(out->isa), "%s", k + (f[4] - buf));
	return 0;
}

static const char *gp(const struct emit_regs *r, int i, unsigned width)
{
	static const char *const names[4][4] = {
		{ "r8b", "r8w", "r8d", "r8" }, { "r9b", "r9w", "r9d", "r9" },
		{ "r10b", "r10w", "r10d", "r10" }, { "r11b", "r11w", "r11d", "r11" },
	};
	int w = width == 8 ? 0 : width == 16 ? 1 : width == 32 ? 2 : 3;

	return r && r->gp[i][w] ? r->gp[i][w] : names[i & 3][w];
}

static const char *ptr(unsigned width)
{
	switch (width) {
	case 8: return "byte ptr";
	case 16: return "word ptr";
	case 32: return "dword ptr";
	case 128: return "xmmword ptr";
	case 256: return "ymmword ptr";
	case 512: return "zmmword ptr";
	default: return "qword ptr";
	}
}

static const char *vreg(unsigned width, int i)
{
	static const char *const x[] = { "xmm0", "xmm1", "xmm2" };
	static const char *const y[] = { "ymm0", "ymm1", "ymm2" };
	static const char *const z[] = { "zmm0", "zmm1", "zmm2" };

	return width >= 512 ? z[i] : width >= 256 ? y[i] : x[i];
}

#define OUT(...) snprintf(buf, len, __VA_ARGS__)

static bool has(const struct key *k, const char *ops)
{
	return !strcmp(k->ops, ops);
}

/* General-purpose functions: mov alu shift mul div cmp bit crc32 atomic. */
static bool emit_gp(const struct key *k, const struct emit_regs *r, const char *m, char *buf,
		    size_t len)
{
	static const struct {
		const char *func, *op;
	} ops[] = {
		{ "mov", "mov" }, { "alu", "add" }, { "cmp", "cmp" }, { "atomic", "lock add" },
		{ "bit", "popcnt" }, { "crc32", "crc32" }, { "shift", "shl" }, { "mul", "imul" },
		{ "div", "div" },
	};
	unsigned w = k->width >= 8 && k->width <= 64 ? k->width : 64;
	const char *op = NULL, *a = gp(r, 0, w), *b = gp(r, 1, w);
	bool read = strchr(k->mem, 'r') != NULL, write = strchr(k->mem, 'w') != NULL;

	for (size_t i = 0; i < ARRAY_SIZE(ops) && !op; i++)
		if (!strcmp(k->func, ops[i].func))
			op = ops[i].op;
	if (!op)
		return false;
	if (!strcmp(k->func, "mov") && has(k, "r") && !read && !write)	/* setcc */
		return OUT("setnz %s", gp(r, 0, 8)) > 0;
	if (!strcmp(k->func, "mov") && (has(k, "r") || has(k, "m")))	/* push/pop */
		return OUT("%s %s", write ? "push" : "pop", has(k, "m") ? m : gp(r, 0, 64)) > 0;
	if (!strcmp(k->func, "alu") && has(k, "rm") && !read)		/* lea */
		return OUT("lea %s, [%s]", gp(r, 0, w == 8 ? 64 : w), r && r->base ? r->base : "r12") > 0;
	if (!strcmp(k->func, "shift"))
		return OUT("shl %s, %s", has(k, "m") || has(k, "mi") || has(k, "mr") ? m : a,
			   has(k, "rr") || has(k, "mr") ? "cl" : "1") > 0;
	if (!strcmp(k->func, "div") || (!strcmp(k->func, "mul") && (has(k, "r") || has(k, "m"))))
		return OUT("%s %s", !strcmp(k->func, "div") ? "div" : "mul",
			   has(k, "m") ? m : b) > 0;
	if (!strcmp(k->func, "bit") || !strcmp(k->func, "crc32") || !strcmp(k->func, "mul")) {
		if (!strcmp(k->func, "crc32"))
			a = gp(r, 0, w == 64 ? 64 : 32);
		if (w == 8 && strcmp(k->func, "crc32"))
			a = gp(r, 0, 16), b = gp(r, 1, 16);
		return OUT("%s %s, %s", op, a, has(k, "rm") ? m : b) > 0;
	}
	if (!strcmp(k->func, "atomic") && !has(k, "mr") && !has(k, "mi"))
		return OUT("lock xadd %s, %s", m, b) > 0;
	if (has(k, "rr"))
		return OUT("%s %s, %s", op, a, b) > 0;
	if (has(k, "rm"))
		return OUT("%s %s, %s", op, a, m) > 0;
	if (has(k, "mr"))
		return OUT("%s %s, %s", op, m, b) > 0;
	if (has(k, "mi"))
		return OUT("%s %s, 1", op, m) > 0;
	if (has(k, "ri"))
		return OUT("%s %s, 1", op, a) > 0;
	if (has(k, "r"))
		return OUT("%s %s", strcmp(k->func, "alu") ? "neg" : "inc", a) > 0;
	if (has(k, "m"))
		return OUT("inc %s", m) > 0;
	return OUT("%s %s, %s", op, a, b) > 0;	/* nearest */
}

/* The three vector registers take turns (emit_regs.vturn): an instruction
 * writes one and reads the two written before it, so the reads depend on
 * recent writes, as in the profile, not on ones from outside the body. */
static bool emit_vector(const struct key *k, const struct emit_regs *r, const char *m,
			char *buf, size_t len)
{
	bool vex = !strncmp(k->isa, "avx", 3) || !strcmp(k->isa, "fma");
	bool fp = !strcmp(k->func, "vfp");
	unsigned w = k->width >= 128 ? k->width : 128, t = r ? r->vturn % 3 : 0;
	const char *op = fp ? (vex ? "vaddps" : "addps") : (vex ? "vpaddd" : "paddd");
	const char *d = vreg(w, (int)t), *s = vreg(w, (int)(t + 2) % 3);

	if (!strcmp(k->func, "cvt"))
		return strchr(k->ops, 'r') ? OUT("cvtsi2sd %s, %s", vreg(128, (int)t), "r8") > 0 :
					     OUT("cdqe") > 0;
	if (!strcmp(k->mem, "w"))
		return OUT("%s %s, %s", vex ? "vmovdqu" : "movdqu", m, s) > 0;
	if (vex)
		return OUT("%s %s, %s, %s", op, d, s,
			   !strcmp(k->mem, "r") ? m : vreg(w, (int)(t + 1) % 3)) > 0;
	return OUT("%s %s, %s", op, d, !strcmp(k->mem, "r") ? m : s) > 0;
}

static bool emit_control(const struct key *k, const struct emit_regs *r, const char *m,
			 char *buf, size_t len)
{
	const char *target = r && r->label ? r->label : "1f";

	if (!strcmp(k->func, "jcc"))
		return OUT("jnz %s", target) > 0;
	if (!strcmp(k->func, "jmp"))
		return OUT("jmp %s", target) > 0;
	if (!strcmp(k->func, "jmpi"))
		return OUT("jmp %s", has(k, "m") ? m : gp(r, 0, 64)) > 0;
	if (!strcmp(k->func, "call"))
		return OUT("call %s", target) > 0;
	if (!strcmp(k->func, "calli"))
		return OUT("call %s", has(k, "m") ? m : gp(r, 0, 64)) > 0;
	if (!strcmp(k->func, "ret"))
		return OUT("ret") > 0;
	return false;
}

static bool emit_misc(const struct key *k, const char *m, char *buf, size_t len)
{
	static const char sfx[] = { 'b', 'w', 'd', 'q' };
	unsigned w = k->width == 8 ? 0 : k->width == 16 ? 1 : k->width == 32 ? 2 : 3;

	if (!strcmp(k->func, "str"))
		return OUT("%s%c", !strcmp(k->mem, "rw") ? "movs" : !strcmp(k->mem, "w") ? "stos" :
			   "lods", sfx[w]) > 0;
	if (!strcmp(k->func, "x87"))
		return strchr(k->ops, 'm') ? OUT("fld qword ptr %s", strchr(m, '[')) > 0 :
					     OUT("fadd st(0), st(1)") > 0;
	if (!strcmp(k->func, "nop"))
		return strchr(k->ops, 'm') ? OUT("nop dword ptr %s", strchr(m, '[')) > 0 :
					     OUT("nop") > 0;
	if (!strcmp(k->func, "sys"))
		return OUT("%s", !strcmp(k->isa, "base") ? "rdtsc" : "lfence") > 0;
	if (!strcmp(k->func, "other"))
		return OUT("cld") > 0;
	return false;
}

bool insn_key_vector(const char *key)
{
	static const char *const funcs[] = { "vint.", "vfp.", "cvt." };

	for (size_t i = 0; i < ARRAY_SIZE(funcs); i++)
		if (!strncmp(key, funcs[i], strlen(funcs[i])))
			return true;
	return false;
}

int insn_emit(const char *key, const struct emit_regs *r, char *buf, size_t len)
{
	struct key k;
	char m[64];
	unsigned mw;
	bool ok;

	if (parse_key(key, &k))
		return ditto_err(-EINVAL, "instruction class '%s' is not func.ops.mem.width.isa", key);
	mw = !strcmp(k.func, "vint") || !strcmp(k.func, "vfp") ? (k.width >= 128 ? k.width : 128)
							       : k.width ? k.width : 64;
	snprintf(m, sizeof(m), "%s [%s + %u]", ptr(mw), r && r->base ? r->base : "r12",
		 r ? r->disp : 0);
	if (insn_key_vector(key))
		ok = emit_vector(&k, r, m, buf, len);
	else
		ok = emit_gp(&k, r, m, buf, len) || emit_control(&k, r, m, buf, len) ||
		     emit_misc(&k, m, buf, len);
	if (!ok)
		return ditto_err(-ENOENT, "instruction class '%s': no template for '%s'", key,
				 k.func);
	return 0;
}
