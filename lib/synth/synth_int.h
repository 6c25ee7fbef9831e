/* SPDX-License-Identifier: MIT */
/* Internal interface of the synth stage. */
#ifndef DITTO_SYNTH_INT_H
#define DITTO_SYNTH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Registers and targets an emitted instruction uses (NULL: defaults). */
struct emit_regs {
	const char *gp[4][4];	/* operand slot -> 8/16/32/64-bit names; default r8..r11 */
	const char *base;	/* memory operands are [base + disp]; default r12 */
	unsigned disp;
	const char *label;	/* branch and call target; default "1f" */
};

/*
 * One instruction (GNU as, Intel syntax, no newline) of the class `key`
 * ("func.ops.mem.width.isa", see ditto_cpu_mix()). Every function of the
 * class table has a template; an operand shape without one gets the
 * nearest instruction of the same function and memory direction.
 * -EINVAL for a malformed key, -ENOENT for an unknown function.
 */
int insn_emit(const char *key, const struct emit_regs *r, char *buf, size_t len);

/*
 * The request body of cpu entry c as a standalone assembly function `name`
 * (see body_gen.c), appended to out; *region_bytes is what the caller
 * must allocate for its data regions. Deterministic for a seed.
 */
struct ditto_cpu;
struct dbuf;
int body_generate(struct ditto_cpu *c, uint64_t seed, const char *name, struct dbuf *out,
		  uint64_t *region_bytes);

#endif /* DITTO_SYNTH_INT_H */
