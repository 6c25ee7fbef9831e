/* SPDX-License-Identifier: MIT */
/* Effective addresses of memory operands from a stopped thread's registers. */
#include "cpu_int.h"

/* 64-bit value of a general-purpose register (any alias width). */
static bool gp_value(const struct user_regs_struct *r, unsigned reg, uint64_t *v)
{
	switch (reg) {
	case X86_REG_RAX: case X86_REG_EAX: *v = r->rax; break;
	case X86_REG_RBX: case X86_REG_EBX: *v = r->rbx; break;
	case X86_REG_RCX: case X86_REG_ECX: *v = r->rcx; break;
	case X86_REG_RDX: case X86_REG_EDX: *v = r->rdx; break;
	case X86_REG_RSI: case X86_REG_ESI: *v = r->rsi; break;
	case X86_REG_RDI: case X86_REG_EDI: *v = r->rdi; break;
	case X86_REG_RBP: case X86_REG_EBP: *v = r->rbp; break;
	case X86_REG_RSP: case X86_REG_ESP: *v = r->rsp; break;
	case X86_REG_R8: case X86_REG_R8D: *v = r->r8; break;
	case X86_REG_R9: case X86_REG_R9D: *v = r->r9; break;
	case X86_REG_R10: case X86_REG_R10D: *v = r->r10; break;
	case X86_REG_R11: case X86_REG_R11D: *v = r->r11; break;
	case X86_REG_R12: case X86_REG_R12D: *v = r->r12; break;
	case X86_REG_R13: case X86_REG_R13D: *v = r->r13; break;
	case X86_REG_R14: case X86_REG_R14D: *v = r->r14; break;
	case X86_REG_R15: case X86_REG_R15D: *v = r->r15; break;
	default: return false;
	}
	return true;
}

static bool is_32bit(unsigned reg)
{
	return (reg >= X86_REG_R8D && reg <= X86_REG_R15D) || reg == X86_REG_EAX ||
	       reg == X86_REG_EBX || reg == X86_REG_ECX || reg == X86_REG_EDX ||
	       reg == X86_REG_ESI || reg == X86_REG_EDI || reg == X86_REG_EBP ||
	       reg == X86_REG_ESP;
}

static uint64_t regs_value(const struct user_regs_struct *r, unsigned reg, bool *ok)
{
	uint64_t v = 0;

	*ok = gp_value(r, reg, &v);
	return *ok && is_32bit(reg) ? (uint32_t)v : v;
}

/* base + index*scale + disp (+ FS/GS base); RIP-relative from the next
 * instruction. Vector (VSIB) indexes are not followed. */
bool insn_mem_addr(const struct insn *in, const struct mem_ref *m, const struct user_regs_struct *r,
		   uint64_t *addr)
{
	uint64_t a = (uint64_t)m->disp;
	bool ok = true;

	if (m->base == X86_REG_RIP)
		a += in->addr + in->len;
	else if (m->base)
		a += regs_value(r, m->base, &ok);
	if (ok && m->index)
		a += regs_value(r, m->index, &ok) * (m->scale ? m->scale : 1);
	if (m->seg == X86_REG_FS)
		a += r->fs_base;
	else if (m->seg == X86_REG_GS)
		a += r->gs_base;
	*addr = a;
	return ok;
}
