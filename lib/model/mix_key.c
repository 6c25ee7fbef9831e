/* SPDX-License-Identifier: MIT */
/*
 * The instruction-mix key format of services[].cpu[].mix,
 * "func.ops.mem.width.isa" (see ditto_cpu_mix() in model.h), checked for
 * validation's warnings. The names are those lib/profile/cpu/insn_class.c
 * writes; tests/cpu/emit_test.c holds every key the classifier gives for
 * redis, memcached and the ground-truth programs to this check.
 */
#include <stdio.h>
#include <string.h>

#include "schema.h"

static const char *const funcs[] = {
	"mov", "alu", "shift", "mul", "div", "cmp", "jcc", "jmp", "jmpi", "call", "calli", "ret",
	"str", "atomic", "crc32", "bit", "cvt", "vint", "vfp", "x87", "nop", "sys", "other", NULL,
};
static const char *const mems[] = { "none", "r", "w", "rw", NULL };
static const char *const isas[] = {
	"base", "x87", "mmx", "sse", "sse2", "sse3", "ssse3", "sse4.1", "sse4.2", "avx", "avx2",
	"fma", "avx512", "bmi", "aes", "sha", NULL,
};

static bool in_table(const char *const *t, const char *s, size_t n)
{
	for (; *t; t++)
		if (strlen(*t) == n && strncmp(*t, s, n) == 0)
			return true;
	return false;
}

/* "-" or up to 7 operand letters, as many as an x86 instruction has. */
static bool ops_ok(const char *s, size_t n)
{
	if (n == 1 && *s == '-')
		return true;
	if (n == 0 || n > 7)
		return false;
	return strspn(s, "rmi") >= n;
}

/* Widest operand in bits: 0 or a whole number of bytes up to 512, in
 * plain decimal. */
static bool width_ok(const char *s, size_t n)
{
	unsigned w = 0;

	if (n == 0 || n > 3 || strspn(s, "0123456789") < n || (n > 1 && *s == '0'))
		return false;
	for (size_t i = 0; i < n; i++)
		w = w * 10 + (unsigned)(s[i] - '0');
	return w % 8 == 0 && w <= 512;
}

bool mix_key_check(const char *key, char *why, size_t len)
{
	static const char *const part[] = { "function", "operands", "memory direction", "width" };
	const char *p = key, *dot;
	size_t n;

	for (int i = 0; i < 4; i++, p = dot + 1) {
		bool ok;

		if (!(dot = strchr(p, '.'))) {
			snprintf(why, len, "has %d of the 5 parts func.ops.mem.width.isa", i + 1);
			return false;
		}
		n = (size_t)(dot - p);
		ok = i == 0 ? in_table(funcs, p, n) : i == 1 ? ops_ok(p, n) :
		     i == 2 ? in_table(mems, p, n) : width_ok(p, n);
		if (!ok) {
			snprintf(why, len, "%s '%.*s' is not one the profiler writes", part[i],
				 (int)n, p);
			return false;
		}
	}
	/* the rest is the isa, which may hold a dot itself ("sse4.2") */
	if (!in_table(isas, p, strlen(p))) {
		snprintf(why, len, "extension '%s' is not one the profiler writes", p);
		return false;
	}
	return true;
}
