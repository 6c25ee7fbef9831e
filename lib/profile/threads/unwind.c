/* SPDX-License-Identifier: MIT */
/*
 * Remote unwinding of a sample's copied user stack with libunwind. Our
 * accessors serve registers from the sample, memory from the stack copy,
 * then from the module files (read-only mappings), then from /proc/PID/mem;
 * unwind tables come from each module's .eh_frame_hdr through libunwind's
 * dwarf_search_unwind_table. Frame pointers are not needed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "threads_int.h"

/* Not in libunwind's public headers, but exported: the table search perf uses too. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					       unw_dyn_info_t *di, unw_proc_info_t *pi,
					       int need_unwind_info, void *arg);
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)

struct uw_arg {
	struct unwinder *u;
	struct proc *p;
	const struct sample *s;
	unsigned noinfo;	/* lookups that found no unwind table entry */
};

/* libunwind's x86-64 register numbers -> positions in the sampled registers. */
static const uint8_t unw_to_sreg[UNW_X86_64_RIP + 1] = {
	[UNW_X86_64_RAX] = SR_AX, [UNW_X86_64_RDX] = SR_DX, [UNW_X86_64_RCX] = SR_CX,
	[UNW_X86_64_RBX] = SR_BX, [UNW_X86_64_RSI] = SR_SI, [UNW_X86_64_RDI] = SR_DI,
	[UNW_X86_64_RBP] = SR_BP, [UNW_X86_64_RSP] = SR_SP, [UNW_X86_64_R8] = SR_R8,
	[UNW_X86_64_R9] = SR_R9, [UNW_X86_64_R10] = SR_R10, [UNW_X86_64_R11] = SR_R11,
	[UNW_X86_64_R12] = SR_R12, [UNW_X86_64_R13] = SR_R13, [UNW_X86_64_R14] = SR_R14,
	[UNW_X86_64_R15] = SR_R15, [UNW_X86_64_RIP] = SR_IP,
};

/* Mapping of addr; re-read the maps once per drain pass if none covers it (dlopen). */
static struct mapping *mapping_at(struct unwinder *u, struct proc *p, uint64_t addr)
{
	struct mapping *m = proc_find(p, addr);

	if (m || p->gone || p->reread_gen == u->gen)
		return m;
	p->reread_gen = u->gen;
	u->maps_reads++;
	if (proc_load_maps(p) != 0)
		return NULL;
	return proc_find(p, addr);
}

static int uw_find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			     int need_unwind_info, void *arg)
{
	struct uw_arg *a = arg;
	struct mapping *m = mapping_at(a->u, a->p, ip);
	struct module *mod = m ? proc_module(&a->u->mods, a->p, m) : NULL;
	unw_dyn_info_t di;
	int ret;

	if (!mod || !mod->has_table) {
		a->noinfo++;
		return -UNW_ENOINFO;
	}
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = m->bias + mod->lo;
	di.end_ip = m->bias + mod->hi;
	di.u.rti.segbase = m->bias + mod->hdr_vaddr;
	di.u.rti.table_data = m->bias + mod->table_vaddr;
	di.u.rti.table_len = mod->fde_count * 8 / sizeof(unw_word_t);
	ret = dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
	if (ret < 0)
		a->noinfo++;
	return ret;
}

static void uw_put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	/* dwarf_search_unwind_table's allocations are released by libunwind itself. */
	(void)as;
	(void)pi;
	(void)arg;
}

static int uw_get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dilap, void *arg)
{
	(void)as;
	(void)dilap;
	(void)arg;
	return -UNW_ENOINFO;	/* no JIT registration support */
}

/* Bytes of read-only file mappings come from the module image: no syscall. */
static bool read_file_backed(struct uw_arg *a, uint64_t addr, unw_word_t *valp)
{
	struct mapping *m = proc_find(a->p, addr);
	struct module *mod;
	uint64_t off;

	if (!m || (m->prot & PF_W) || !(mod = proc_module(&a->u->mods, a->p, m)))
		return false;
	off = m->pgoff + (addr - m->start);
	if (off > mod->size || mod->size - off < sizeof(*valp))
		return false;
	memcpy(valp, mod->image + off, sizeof(*valp));
	return true;
}

static int uw_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write,
			 void *arg)
{
	struct uw_arg *a = arg;
	const struct sample *s = a->s;
	uint64_t sp = s->regs[SR_SP];

	(void)as;
	if (write)
		return -UNW_EINVAL;
	if (addr >= sp && addr - sp < s->stack_len && s->stack_len - (addr - sp) >= sizeof(*valp)) {
		memcpy(valp, s->stack + (addr - sp), sizeof(*valp));
		return 0;
	}
	if (read_file_backed(a, addr, valp))
		return 0;
	/* Beyond the copy: outer frames of a live thread rarely change, read them now. */
	return proc_read(a->p, addr, valp, sizeof(*valp)) == 0 ? 0 : -UNW_EINVAL;
}

static int uw_access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp, int write,
			 void *arg)
{
	struct uw_arg *a = arg;

	(void)as;
	if (write || reg < 0 || reg > UNW_X86_64_RIP)
		return -UNW_EBADREG;
	*valp = a->s->regs[unw_to_sreg[reg]];
	return 0;
}

static int uw_access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
			   void *arg)
{
	(void)as;
	(void)reg;
	(void)val;
	(void)write;
	(void)arg;
	return -UNW_EBADREG;
}

static int uw_resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	(void)as;
	(void)c;
	(void)arg;
	return -UNW_EINVAL;
}

void unwinder_init(struct unwinder *u, struct labels *labels)
{
	*u = (struct unwinder){ .labels = labels };
	u->acc.find_proc_info = uw_find_proc_info;
	u->acc.put_unwind_info = uw_put_unwind_info;
	u->acc.get_dyn_info_list_addr = uw_get_dyn_info_list_addr;
	u->acc.access_mem = uw_access_mem;
	u->acc.access_reg = uw_access_reg;
	u->acc.access_fpreg = uw_access_fpreg;
	u->acc.resume = uw_resume;
	u->acc.get_proc_name = NULL;	/* symbols.c names frames */
	elf_version(EV_CURRENT);
}

void unwinder_new_pass(struct unwinder *u)
{
	u->gen++;
}

void unwinder_exec(struct unwinder *u, int tgid)
{
	uint32_t idx;

	if (idmap_get(&u->by_tgid, (uint32_t)tgid, &idx))
		u->procs[idx]->exec = true;
}

/* A new program: other mappings, and cached register rules for other code. */
static int reload(struct unwinder *u, struct proc *p)
{
	p->exec = false;
	p->gone = false;
	u->maps_reads++;
	unw_flush_cache(p->as, 0, 0);
	return proc_load_maps(p);
}

static int get_proc(struct unwinder *u, int tgid, struct proc **out)
{
	uint32_t idx;
	int err;

	if (idmap_get(&u->by_tgid, (uint32_t)tgid, &idx)) {
		*out = u->procs[idx];
		return (*out)->exec ? reload(u, *out) : 0;
	}
	if (u->nprocs == u->cap) {
		size_t cap = u->cap ? u->cap * 2 : 16;
		struct proc **v = realloc(u->procs, cap * sizeof(*v));

		if (!v)
			return ditto_err(-ENOMEM, "threads: out of memory");
		u->procs = v;
		u->cap = cap;
	}
	if ((err = proc_new(tgid, &u->acc, out)))
		return err;
	u->maps_reads++;
	(*out)->reread_gen = u->gen;
	u->procs[u->nprocs] = *out;
	return idmap_put(&u->by_tgid, (uint32_t)tgid, (uint32_t)u->nprocs++);
}

static int frame_label(struct unwinder *u, struct proc *p, uint64_t ip, uint32_t *id)
{
	struct mapping *m = mapping_at(u, p, ip);
	struct module *mod = m ? proc_module(&u->mods, p, m) : NULL;

	if (mod)
		return sym_label(u->labels, mod, ip - m->bias, id);
	/* JIT code, vanished or unreadable files: no stable offset to name. */
	if (!m)
		return labels_intern(u->labels, "[unmapped]", id);
	return labels_intern(u->labels, m->path ? m->path : "[anon]", id);
}

static bool known_outermost(const char *name)
{
	static const char *const ends[] = { "_start", "clone", "__clone", "clone3", "__clone3" };

	for (size_t i = 0; i < ARRAY_SIZE(ends); i++)
		if (!strcmp(name, ends[i]))
			return true;
	return false;
}

static int walk(struct uw_arg *a, unw_cursor_t *c, struct unwound *out)
{
	for (;;) {
		unw_word_t ip;
		unsigned before;
		int err, r;

		if (out->n == THREAD_SAMPLER_MAX_FRAMES || unw_get_reg(c, UNW_REG_IP, &ip) < 0 ||
		    !ip)
			return 0;
		/* A return address points after the call, maybe past its function's end. */
		if ((err = frame_label(a->u, a->p, out->n ? ip - 1 : ip, &out->label[out->n])))
			return err;
		out->n++;
		before = a->noinfo;
		r = unw_step(c);
		if (r > 0)
			continue;
		/* 0 from the frame's own CFI (return address undefined), not from a guess. */
		out->complete = r == 0 && a->noinfo == before;
		return 0;
	}
}

int unwind_sample(struct unwinder *u, const struct sample *s, struct unwound *out)
{
	struct uw_arg a = { .u = u, .s = s };
	unw_cursor_t c;
	int err;

	out->n = 0;
	out->complete = out->named_end = false;
	if (!s->regs)
		return 0;
	if ((err = get_proc(u, s->tgid, &a.p)))
		return err;
	if (unw_init_remote(&c, a.p->as, &a) == 0)
		err = walk(&a, &c, out);
	if (a.p->flush) {
		/* Only between unwinds: the cursor may hold entries of the cache. */
		unw_flush_cache(a.p->as, 0, 0);
		a.p->flush = false;
	}
	if (out->complete)
		out->named_end = known_outermost(labels_str(u->labels, out->label[out->n - 1]));
	return err;
}

void unwinder_fini(struct unwinder *u)
{
	for (size_t i = 0; i < u->nprocs; i++)
		proc_free(u->procs[i]);
	free(u->procs);
	idmap_free(&u->by_tgid);
	modcache_free(&u->mods);
	u->procs = NULL;
	u->nprocs = u->cap = 0;
}
