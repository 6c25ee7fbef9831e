/* SPDX-License-Identifier: MIT */
/*
 * What every executed instruction of a thread class feeds: mix, fetch and
 * data lines into reuse distances, register and store-to-load dependency
 * distances, pointer chasing, conditional branch outcomes and request
 * boundaries. Distances never span windows: what ran between two windows
 * was not observed.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "cpu_int.h"
#include "cpu_run.h"

#define LINE_SHIFT 6
#define DEP_CAP 1024		/* the artifact's last bin: 1024 and beyond */
#define STRING_MAX_LINES 65536	/* per string instruction, per stream */

struct branch {
	uint64_t addr;		/* 0 = empty */
	uint64_t execs, taken, changes;
	uint64_t window;	/* window of `last` */
	bool last;
};

struct store {
	uint64_t word;		/* word + 1; 0 = empty */
	uint64_t idx;
};

struct analysis {
	uint64_t insts, undecoded, jit, loads, stores, chased, dws_cold, iws_cold, windows;
	uint64_t *mix;
	size_t nmix;
	struct ditto_hist *ipr, *dws, *iws, *raw, *war, *waw, *mem_raw;
	struct reuse *dr, *ir;
	/* this window */
	uint64_t idx, req_idx;
	bool req_open;
	uint64_t last_wr[CR_COUNT], last_rd[CR_COUNT];
	bool chase[CR_COUNT];
	struct store *st;
	size_t stcap, stused;
	struct branch *br;
	size_t brcap, brused;
	const struct insn_classifier *cls;
	bool oom;
};

/* ---- store map: 8-byte word -> index of its last store in the window ---- */

static struct store *store_slot(struct store *t, size_t cap, uint64_t word)
{
	size_t j = cpu_hash64(word) & (cap - 1);

	while (t[j].word && t[j].word != word + 1)
		j = (j + 1) & (cap - 1);
	return &t[j];
}

static bool store_grow(struct analysis *a)
{
	size_t cap = a->stcap ? a->stcap * 2 : 4096;
	struct store *t = calloc(cap, sizeof(*t));

	if (!t)
		return false;
	for (size_t i = 0; i < a->stcap; i++)
		if (a->st[i].word)
			*store_slot(t, cap, a->st[i].word - 1) = a->st[i];
	free(a->st);
	a->st = t;
	a->stcap = cap;
	return true;
}

static void store_note(struct analysis *a, uint64_t word)
{
	struct store *s;

	if ((a->stused + 1) * 2 > a->stcap && !store_grow(a)) {
		a->oom = true;
		return;
	}
	s = store_slot(a->st, a->stcap, word);
	if (!s->word) {
		s->word = word + 1;
		a->stused++;
	}
	s->idx = a->idx;
}

static uint64_t store_last(struct analysis *a, uint64_t word)
{
	const struct store *s;

	if (!a->stcap)
		return 0;
	s = store_slot(a->st, a->stcap, word);
	return s->word ? s->idx : 0;
}

/* ---- branch table: per static conditional branch ---- */

static struct branch *branch_slot(struct branch *t, size_t cap, uint64_t addr)
{
	size_t j = cpu_hash64(addr) & (cap - 1);

	while (t[j].addr && t[j].addr != addr)
		j = (j + 1) & (cap - 1);
	return &t[j];
}

static struct branch *branch_get(struct analysis *a, uint64_t addr)
{
	struct branch *b;

	if ((a->brused + 1) * 2 > a->brcap) {
		size_t cap = a->brcap ? a->brcap * 2 : 1024;
		struct branch *t = calloc(cap, sizeof(*t));

		if (!t)
			return NULL;
		for (size_t i = 0; i < a->brcap; i++)
			if (a->br[i].addr)
				*branch_slot(t, cap, a->br[i].addr) = a->br[i];
		free(a->br);
		a->br = t;
		a->brcap = cap;
	}
	b = branch_slot(a->br, a->brcap, addr);
	if (!b->addr) {
		b->addr = addr;
		a->brused++;
	}
	return b;
}

static void on_branch(struct analysis *a, const struct insn *in, uint64_t next_rip)
{
	struct branch *b = branch_get(a, in->addr);
	bool taken = next_rip != in->addr + in->len;

	if (!b) {
		a->oom = true;
		return;
	}
	if (b->execs && b->window == a->windows && b->last != taken)
		b->changes++;
	b->execs++;
	b->taken += taken;
	b->last = taken;
	b->window = a->windows;
}

/* ---- memory ---- */

static void data_line(struct analysis *a, uint64_t addr)
{
	uint64_t d = reuse_access(a->dr, addr >> LINE_SHIFT);

	if (d)
		ditto_hist_add(a->dws, d << LINE_SHIFT, 1);
	else
		a->dws_cold++;
}

static bool chased_addr(const struct analysis *a, const struct mem_ref *m)
{
	uint8_t b = insn_canon_reg(a->cls, m->base), x = insn_canon_reg(a->cls, m->index);

	return (b && a->chase[b]) || (x && a->chase[x]);
}

static void load_at(struct analysis *a, uint64_t addr, unsigned size)
{
	uint64_t last = 0;

	for (uint64_t w = addr >> 3; w <= (addr + (size ? size : 1) - 1) >> 3; w++) {
		uint64_t s = store_last(a, w);

		if (s > last)
			last = s;
	}
	if (last)
		ditto_hist_add(a->mem_raw, a->idx - last < DEP_CAP ? a->idx - last : DEP_CAP, 1);
	for (uint64_t l = addr >> LINE_SHIFT; l <= (addr + (size ? size : 1) - 1) >> LINE_SHIFT; l++)
		data_line(a, l << LINE_SHIFT);
}

static void store_at(struct analysis *a, uint64_t addr, unsigned size)
{
	for (uint64_t w = addr >> 3; w <= (addr + (size ? size : 1) - 1) >> 3; w++)
		store_note(a, w);
	for (uint64_t l = addr >> LINE_SHIFT; l <= (addr + (size ? size : 1) - 1) >> LINE_SHIFT; l++)
		data_line(a, l << LINE_SHIFT);
}

/* A string instruction's stream: count elements from p, backwards if DF. */
static void string_stream(struct analysis *a, uint64_t p, uint64_t count, unsigned size,
			  bool back, bool write)
{
	uint64_t bytes = count * size, lo = back ? p - bytes + size : p;
	uint64_t first = lo >> LINE_SHIFT, last = (lo + bytes - 1) >> LINE_SHIFT;

	if (!count)
		return;
	if (last - first >= STRING_MAX_LINES)
		last = first + STRING_MAX_LINES - 1;
	for (uint64_t l = first; l <= last; l++) {
		uint64_t from = l << LINE_SHIFT, to = from + (1u << LINE_SHIFT), in_line;

		from = from > lo ? from : lo;
		to = to < lo + bytes ? to : lo + bytes;
		in_line = (to - from + size - 1) / size;
		if (write)
			store_note(a, l << (LINE_SHIFT - 3));
		data_line(a, l << LINE_SHIFT);
		/* Every element is an access, as a cache sees it: the rest of
		 * the line's elements reuse it at once. */
		if (in_line > 1)
			ditto_hist_add(a->dws, 1u << LINE_SHIFT, in_line - 1);
	}
}

static unsigned string_access(struct analysis *a, const struct insn *in,
			      const struct user_regs_struct *r)
{
	uint64_t count = in->rep ? r->rcx : 1;
	bool back = r->eflags & 0x400;

	if (in->str_mask & 1)
		string_stream(a, r->rsi, count, in->str_size, back, false);
	if (in->str_mask & 2)
		string_stream(a, r->rdi, count, in->str_size, back, true);
	if (in->str_mask & 4)
		string_stream(a, r->rdi, count, in->str_size, back, false);
	return (in->str_mask & 5 ? 1 : 0) | (in->str_mask & 2 ? 2 : 0);
}

/* Returns the directions accessed: 1 read, 2 write. */
static unsigned memory(struct analysis *a, const struct insn *in, const struct user_regs_struct *r,
		       bool *chased)
{
	unsigned dir = 0;

	for (unsigned i = 0; i < in->nmem; i++) {
		const struct mem_ref *m = &in->mem[i];
		uint64_t addr;

		if (!insn_mem_addr(in, m, r, &addr))
			continue;
		if (m->access & 1) {
			*chased |= chased_addr(a, m);
			load_at(a, addr, m->size);
		}
		if (m->access & 2)
			store_at(a, addr, m->size);
		dir |= m->access;
	}
	if (in->stack < 0)
		store_at(a, r->rsp - 8, 8);
	else if (in->stack > 0)
		load_at(a, in->leave ? r->rbp : r->rsp, 8);
	if (in->stack)
		dir |= in->stack < 0 ? 2 : 1;
	if (in->kind == IK_STRING)
		dir |= string_access(a, in, r);
	return dir;
}

/* ---- registers ---- */

static void dep_add(struct ditto_hist *h, uint64_t d)
{
	ditto_hist_add(h, d < DEP_CAP ? d : DEP_CAP, 1);
}

static void registers(struct analysis *a, const struct insn *in)
{
	for (unsigned i = 0; i < in->nrd; i++)
		if (a->last_wr[in->rd[i]])
			dep_add(a->raw, a->idx - a->last_wr[in->rd[i]]);
	for (unsigned i = 0; i < in->nwr; i++) {
		uint8_t w = in->wr[i];

		if (a->last_wr[w])
			dep_add(a->waw, a->idx - a->last_wr[w]);
		if (a->last_rd[w])
			dep_add(a->war, a->idx - a->last_rd[w]);
	}
	for (unsigned i = 0; i < in->nrd; i++)
		a->last_rd[in->rd[i]] = a->idx;
	for (unsigned i = 0; i < in->nwr; i++)
		a->last_wr[in->wr[i]] = a->idx;
}

/* A register holds a loaded pointer after a load, or a copy of one. */
static void chase_flags(struct analysis *a, const struct insn *in)
{
	bool v = false;

	if (in->loads_gp)
		v = true;
	else if (in->move_gp && in->nrd)
		v = a->chase[in->rd[0]];
	for (unsigned i = 0; i < in->nwr; i++)
		a->chase[in->wr[i]] = false;
	if ((in->loads_gp || in->move_gp) && in->nwr)
		a->chase[in->wr[0]] = v;
}

static bool count_mix(struct analysis *a, uint16_t cls)
{
	if (cls >= a->nmix) {
		size_t n = (size_t)cls + 64;
		uint64_t *m = realloc(a->mix, n * sizeof(*m));

		if (!m)
			return false;
		memset(m + a->nmix, 0, (n - a->nmix) * sizeof(*m));
		a->mix = m;
		a->nmix = n;
	}
	a->mix[cls]++;
	return true;
}

static void fetch(struct analysis *a, const struct insn *in)
{
	uint64_t first = in->addr >> LINE_SHIFT, last = (in->addr + in->len - 1) >> LINE_SHIFT;

	for (uint64_t l = first; l <= last; l++) {
		uint64_t d = reuse_access(a->ir, l);

		if (d)
			ditto_hist_add(a->iws, d << LINE_SHIFT, 1);
		else
			a->iws_cold++;
	}
}

void analysis_insn(struct analysis *a, const struct insn *in, const struct user_regs_struct *r,
		   uint64_t next_rip)
{
	unsigned dir;
	bool chased = false;

	a->idx++;
	a->insts++;
	fetch(a, in);
	if (in->undecoded) {
		a->undecoded++;
		return;
	}
	a->jit += in->jit;
	if (!count_mix(a, in->cls))
		a->oom = true;
	dir = memory(a, in, r, &chased);
	a->loads += dir & 1 ? 1 : 0;
	a->stores += dir & 2 ? 1 : 0;
	a->chased += chased;
	registers(a, in);
	chase_flags(a, in);
	if (in->kind == IK_JCC)
		on_branch(a, in, next_rip);
}

void analysis_request_boundary(struct analysis *a)
{
	if (a->req_open && a->idx > a->req_idx)
		ditto_hist_add(a->ipr, a->idx - a->req_idx, 1);
	a->req_idx = a->idx;
	a->req_open = true;
}

void analysis_window(struct analysis *a)
{
	a->windows++;
	a->idx = 0;
	a->req_open = false;
	memset(a->last_wr, 0, sizeof(a->last_wr));
	memset(a->last_rd, 0, sizeof(a->last_rd));
	memset(a->chase, 0, sizeof(a->chase));
	if (a->st)
		memset(a->st, 0, a->stcap * sizeof(*a->st));
	a->stused = 0;
	reuse_reset(a->dr);
	reuse_reset(a->ir);
}

/* Folded rate -> bin k for about 2^-k; 8 for never (at most 1/256). */
static unsigned rate_bin(double r)
{
	double k;

	if (r * 256.0 <= 1.0)
		return 8;
	k = floor(-log2(r) + 0.5);
	return k < 0 ? 0 : k > 7 ? 7 : (unsigned)k;
}

/* Per-branch rates, binned, weighted by executions. */
static int branch_hist(const struct analysis *a, struct ditto_hist *h)
{
	int err = 0;

	for (size_t i = 0; i < a->brcap && !err; i++) {
		const struct branch *b = &a->br[i];
		double taken, trans;

		if (!b->addr || !b->execs)
			continue;
		taken = (double)b->taken / (double)b->execs;
		if (taken > 0.5)
			taken = 1.0 - taken;
		trans = b->execs > 1 ? (double)b->changes / (double)(b->execs - 1) : 0.0;
		err = ditto_hist_add(h, rate_bin(taken) * 16 + rate_bin(trans), b->execs);
	}
	return err;
}

int analysis_store(struct analysis *a, const struct keytab *kt, struct ditto_cpu *out)
{
	const uint64_t c[CPU_NCOUNTS] = {
		[CPU_C_WINDOWS] = a->windows, [CPU_C_INSTRUCTIONS] = a->insts,
		[CPU_C_UNDECODED] = a->undecoded, [CPU_C_LOADS] = a->loads,
		[CPU_C_STORES] = a->stores, [CPU_C_CHASED] = a->chased,
		[CPU_C_DWS_COLD] = a->dws_cold, [CPU_C_IWS_COLD] = a->iws_cold,
		[CPU_C_JIT] = a->jit,
	};
	struct ditto_hist *br = ditto_hist_new(DITTO_HIST_EXACT, 0);
	const struct ditto_hist *h[CPU_NHISTS] = {
		[CPU_H_IPR] = a->ipr, [CPU_H_BRANCHES] = br, [CPU_H_DWS] = a->dws,
		[CPU_H_IWS] = a->iws, [CPU_H_RAW] = a->raw, [CPU_H_WAR] = a->war,
		[CPU_H_WAW] = a->waw, [CPU_H_MEM_RAW] = a->mem_raw,
	};
	int err = br ? branch_hist(a, br) : -ENOMEM;

	if (a->oom)
		err = -ENOMEM;
	for (size_t i = 0; i < a->nmix && !err; i++)
		if (a->mix[i])
			err = ditto_counts_add(ditto_cpu_mix_ensure(out), keytab_key(kt, i),
					       a->mix[i]);
	if (err)
		err = ditto_err(err, "cpu profile: cannot store results: %s", ditto_strerror(err));
	else
		err = cpu_add(out, c, h);
	ditto_hist_free(br);
	return err;
}

uint64_t analysis_instructions(const struct analysis *a)
{
	return a->insts;
}

struct analysis *analysis_new(const struct insn_classifier *c)
{
	struct analysis *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->cls = c;
	a->ipr = ditto_hist_new(DITTO_HIST_LOG2, 0);
	a->dws = ditto_hist_new(DITTO_HIST_LOG2, 0);
	a->iws = ditto_hist_new(DITTO_HIST_LOG2, 0);
	a->raw = ditto_hist_new(DITTO_HIST_LOG2, 0);
	a->war = ditto_hist_new(DITTO_HIST_LOG2, 0);
	a->waw = ditto_hist_new(DITTO_HIST_LOG2, 0);
	a->mem_raw = ditto_hist_new(DITTO_HIST_LOG2, 0);
	a->dr = reuse_new();
	a->ir = reuse_new();
	if (!a->ipr || !a->dws || !a->iws || !a->raw || !a->war || !a->waw || !a->mem_raw ||
	    !a->dr || !a->ir) {
		analysis_free(a);
		return NULL;
	}
	return a;
}

void analysis_free(struct analysis *a)
{
	if (!a)
		return;
	ditto_hist_free(a->ipr);
	ditto_hist_free(a->dws);
	ditto_hist_free(a->iws);
	ditto_hist_free(a->raw);
	ditto_hist_free(a->war);
	ditto_hist_free(a->waw);
	ditto_hist_free(a->mem_raw);
	reuse_free(a->dr);
	reuse_free(a->ir);
	free(a->mix);
	free(a->st);
	free(a->br);
	free(a);
}
