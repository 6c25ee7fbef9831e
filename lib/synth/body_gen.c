/* SPDX-License-Identifier: MIT */
/*
 * Request body generator: a cpu section of a model -> a standalone x86-64
 * assembly function (System V ABI, callee-saved registers saved, no red
 * zone, no inline-asm state between statements):
 *
 *   void NAME(void *regions, uint64_t state[2]);
 *
 * One call is one request: LOOPS iterations of one block per data region.
 * Instructions are drawn from the mix; registers are chosen so that read
 * and write distances follow the RAW and WAW histograms (dynamic order is
 * layout order inside a block); each region block sweeps its own disjoint
 * region of the working-set size it stands for; conditional branches test
 * an iteration counter against masks that give their taken and transition
 * rates. state[0] is the caller's: the loop iterations of this call (0:
 * the built-in count, the mean instructions per request), each about
 * NAME_loop_insts instructions; state[1] keeps the branch counter between
 * requests; each region's sweep cursor lives in a slot after the regions.
 * The regions, NAME_region_bytes in size, belong to the caller.
 *
 * Tuning knobs (struct synth_knobs) add what the profile cannot place:
 * branch sites at the top of each iteration, taken with a probability
 * the knob sets on random bits (r15, a xorshift state kept in a slot),
 * or, for fewer mispredictions, always taken (more branches, the same
 * misses): the profile's own branches stay as they are, since a branch
 * predictor with global history (cachegrind's) reacts to any change of
 * their outcomes in ways no knob could follow; and misses: windows of
 * lines that move by as many bytes a turn as the knob asks for
 * (miss_gen.c).
 *
 * Loads are chased (their address loaded by the load before them) in the
 * profile's share: rbx walks a ring of pointers through the block's
 * region. The scaffolding stays out of the profile: a region of few lines
 * needs no cursor, the reserved registers are copied onto themselves
 * often enough that their reads are not long dependencies, and a branch's
 * test, a push's pop and such a copy each stand for one instruction of
 * their class drawn later.
 *
 * Every block draws from its own random stream (seed, block number), so a
 * knob that changes one block's length leaves the other blocks as they
 * were: the tuner's steps change what they aim at and little else.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "synth_int.h"

#include <ditto/model.h>

#define MAX_REGIONS 8
#define NPOOL 9
/* A block addresses up to SWEEP_LINES lines past its cursor before it
 * moves it; a region that small needs no cursor at all. */
#define SWEEP_LINES 128
#define REGION_PAD (64 * SWEEP_LINES)
/* A request body longer than this is a model error, not a workload. */
#define MAX_INSTS 1e8

/* Registers the stream may use; rbx chase pointer, r12 regions, r13
 * branch counter, r14 region cursor, r15 random bits, rbp loop counter
 * are reserved. */
static const char *const pool[NPOOL][4] = {
	{ "al", "ax", "eax", "rax" }, { "cl", "cx", "ecx", "rcx" }, { "dl", "dx", "edx", "rdx" },
	{ "sil", "si", "esi", "rsi" }, { "dil", "di", "edi", "rdi" },
	{ "r8b", "r8w", "r8d", "r8" }, { "r9b", "r9w", "r9d", "r9" },
	{ "r10b", "r10w", "r10d", "r10" }, { "r11b", "r11w", "r11d", "r11" },
};
enum { P_RAX = 0, P_RDX = 2, P_RSI = 3, P_RDI = 4, P_R8 = 5 };

struct weighted {
	uint64_t value;		/* bucket lo, or key index */
	uint64_t count;
};

/* What the generator does with one class of the mix, worked out once
 * per class from its key (see classify()), not once per instruction. */
enum kind { K_PLAIN, K_DIV, K_RET, K_JCC, K_CALL, K_CALLI, K_JMPI, K_JMP, K_PUSH_POP, K_STR };
enum credit { CR_NONE, CR_CMP, CR_STACK, CR_MOV };

struct kclass {
	char key[64];		/* the key, moved to what this host runs */
	enum kind kind;
	enum credit credit;	/* the credit it may be paid from */
	bool sweeps;		/* takes a line of the block's sweep */
	bool mem;		/* has a data operand */
	bool plain_read;	/* may be chased */
	bool step;		/* a 64-bit load: a chase's step to the next node */
	bool vector;		/* has vector register operands */
};

struct gen {
	struct ditto_rng rng;
	const char **keys;
	struct kclass *kc;
	struct weighted *mix;
	size_t nmix;
	struct weighted raw[80], waw[80], br[160];
	size_t nraw, nwaw, nbr;
	uint64_t region[MAX_REGIONS], regoff[MAX_REGIONS], regw[MAX_REGIONS];
	size_t nreg;
	uint64_t idx, last_wr[NPOOL];
	uint64_t cur_off;	/* offset of the region being emitted */
	bool cursor;		/* its operands' base is r12 + r14, not r12 alone */
	uint64_t cursors;	/* offset of the per-region cursor slots */
	uint64_t chases;	/* offset of the per-region chase pointer slots */
	size_t cur_region;
	double chase_p;		/* share of plain reads that are chased */
	bool chase_live;	/* rbx holds the region's chase pointer */
	/* Instructions the emulation of another class already emitted: a
	 * branch's test stands for a compare, a push for a pop. */
	unsigned credit_cmp, credit_stack, credit_mov;
	unsigned vturn;		/* the vector registers' turn (emit_regs.vturn) */
	uint64_t written[3];	/* line of r12, r13, r14's last write (see fresh()) */
	uint64_t lines;		/* instructions emitted so far */
	struct dbuf *out;
	const char *name;
	const struct synth_knobs *k;
	struct synth_limits *lim;
	uint64_t seed, blocks;	/* block streams: see stream() */
};

/* The random stream of the next block. */
static void stream(struct gen *g)
{
	ditto_rng_seed(&g->rng, g->seed * 0x9e3779b97f4a7c15ull + ++g->blocks);
}

static uint64_t draw(struct gen *g, const struct weighted *w, size_t n)
{
	uint64_t total = 0, x;

	for (size_t i = 0; i < n; i++)
		total += w[i].count;
	if (!total)
		return n ? w[0].value : 0;
	x = ditto_rng_below(&g->rng, total);
	for (size_t i = 0; i < n; i++) {
		if (x < w[i].count)
			return w[i].value;
		x -= w[i].count;
	}
	return w[n - 1].value;
}

static size_t hist_weights(const struct ditto_hist *h, struct weighted *w, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; h && i < ditto_hist_bucket_count(h) && n < max; i++) {
		uint64_t lo, hi, c;

		if (!ditto_hist_bucket(h, i, &lo, &hi, &c) && c)
			w[n++] = (struct weighted){ lo, c };
	}
	return n;
}

/* Register whose last write is closest to `dist` instructions back. */
static int pick(struct gen *g, uint64_t dist, int avoid)
{
	int best = 0;
	uint64_t best_err = UINT64_MAX;

	for (int r = 0; r < NPOOL; r++) {
		uint64_t age = g->idx - g->last_wr[r], err = age > dist ? age - dist : dist - age;

		if (r != avoid && err < best_err) {
			best = r;
			best_err = err;
		}
	}
	return best;
}

static void set_regs(struct emit_regs *er, int dst, int src)
{
	memset(er, 0, sizeof(*er));
	for (int w = 0; w < 4; w++) {
		er->gp[0][w] = pool[dst][w];
		er->gp[1][w] = pool[src][w];
	}
}

static void line(struct gen *g, const char *fmt, ...) DITTO_PRINTF(2, 3);
static void line(struct gen *g, const char *fmt, ...)
{
	char buf[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	dbuf_printf(g->out, "\t%s\n", buf);
	g->lines++;
}

static bool key_is(const char *key, const char *func)
{
	size_t n = strlen(func);

	return !strncmp(key, func, n) && key[n] == '.';
}

/* Mask over the branch counter: taken about 2^-t, changing about 2^-c. */
static uint64_t branch_mask(unsigned t, unsigned c)
{
	unsigned n1, n0;

	if (t >= 8 || t == 0)
		return 0xffffffffu;
	n1 = t;
	n0 = c >= 8 ? 31 - n1 : (c + 1 > n1 ? c + 1 - n1 : 0);
	if (n1 + n0 > 31)
		n0 = 31 - n1;
	return ((1ull << n1) - 1) << n0;
}

/* Keys this host may not run are moved to their AVX2 equivalent. */
static void portable_key(const char *in, char *out, size_t len)
{
	const char *p = strstr(in, ".avx512");

	if (!p) {
		snprintf(out, len, "%s", in);
		return;
	}
	snprintf(out, len, "%.*s", (int)(p - in), in);
	if (strstr(out, ".512"))
		memcpy(strstr(out, ".512"), ".256", 4);
	snprintf(out + strlen(out), len - strlen(out), ".avx2");
}

/* push and pop: register or memory operand alone, touching the stack. */
/* A one-operand move is a push or a pop (whatever its memory direction:
 * push [mem] is "m.rw"); the body emits those in balanced pairs only. */
static bool is_push_pop(const char *key)
{
	return key_is(key, "mov") && (!strncmp(key + 3, ".r.", 3) || !strncmp(key + 3, ".m.", 3));
}

/* The memory field of a func.ops.mem.width.isa key ("" if none). */
static const char *mem_field(const char *key)
{
	const char *m = strchr(key, '.');

	m = m ? strchr(m + 1, '.') : NULL;
	return m ? m + 1 : "";
}

static bool has_memory(const char *key);

/* A read and nothing else of a data operand: what may be chased. */
static bool plain_read(const char *key)
{
	return has_memory(key) && !strncmp(mem_field(key), "r.", 2) && !key_is(key, "str");
}

/*
 * The reserved registers are read by most instructions (r12 and r14 as
 * operand bases, r13 by every branch) but written once per call or
 * iteration: their reads alone would give the clone a tail of dependency
 * distances over 1000 that the profile does not have. A read more than
 * FRESH_LINES after the register's last write copies it onto itself
 * first, a move that stands for one of the mix's register moves.
 */
#define FRESH_LINES 16
enum { R_R12, R_R13, R_R14 };
static const char *const reserved[] = { "r12", "r13", "r14" };

static void written(struct gen *g, int r)
{
	g->written[r] = g->lines;
}

static void forget_written(struct gen *g)
{
	for (int r = 0; r < 3; r++)
		g->written[r] = UINT64_MAX;
}

static void fresh(struct gen *g, int r)
{
	if (g->written[r] != UINT64_MAX && g->lines - g->written[r] <= FRESH_LINES)
		return;
	line(g, "mov %s, %s", reserved[r], reserved[r]);
	written(g, r);
	g->credit_mov++;
}

static bool is_reg_move(const char *key)
{
	return key_is(key, "mov") && !strncmp(key + 3, ".rr.none.", 9);
}

/* The base of the current block's operands. */
static const char *base(const struct gen *g)
{
	return g->cursor ? "r12 + r14" : "r12";
}

/* A class whose instruction the emulation of another one already emitted. */
static bool take_credit(struct gen *g, const struct kclass *kc)
{
	unsigned *c = kc->credit == CR_CMP ? &g->credit_cmp : kc->credit == CR_STACK ?
		      &g->credit_stack : kc->credit == CR_MOV ? &g->credit_mov : NULL;

	if (!c || !*c)
		return false;
	--*c;
	return true;
}

/*
 * A chased read: rbx walks the region's ring of line-sized nodes (each
 * line's last quadword points to the next, see chase_rings()), so the
 * read's address comes from the load before it. A 64-bit move is the
 * step to the next node; other reads read the current node's first
 * bytes, which no store of the sweep touches past its 32 bytes.
 */
static bool chased(struct gen *g, const struct kclass *kc, struct emit_regs *er)
{
	bool chase = ditto_rng_below(&g->rng, 1u << 20) < g->chase_p * (1u << 20);

	if (!chase)
		return false;
	if (!g->chase_live)
		line(g, "mov rbx, [r12 + %llu]", (unsigned long long)(g->chases + 8 * g->cur_region));
	g->chase_live = true;
	if (kc->step) {
		line(g, "mov rbx, [rbx + 56]");
		return true;
	}
	er->base = "rbx";
	er->disp = 0;
	return false;
}

/* One instruction of class key; returns the instructions emitted. */
static unsigned emit_one(struct gen *g, const struct kclass *kc, unsigned memop)
{
	struct emit_regs er;
	char text[128];
	uint64_t raw = draw(g, g->raw, g->nraw), waw = draw(g, g->waw, g->nwaw);
	int src = pick(g, raw ? raw : 1, -1), dst;

	if (take_credit(g, kc))
		return 1;
	if (kc->kind == K_DIV) {
		src = P_R8 + (int)ditto_rng_below(&g->rng, 4);	/* r8..r11: never rax/rdx */
		line(g, "xor edx, edx");
		line(g, "or %s, 1", pool[src][3]);
		line(g, "div %s", pool[src][3]);
		g->last_wr[P_RAX] = g->last_wr[P_RDX] = ++g->idx;
		return 3;
	}
	dst = pick(g, waw ? waw : 8, src);
	set_regs(&er, dst, src);
	er.base = base(g);
	er.disp = (unsigned)(g->cur_off + 64 * memop);
	er.label = "1f";
	if (kc->mem || kc->kind == K_STR) {
		fresh(g, R_R12);
		if (g->cursor)
			fresh(g, R_R14);
	}
	if (kc->plain_read && chased(g, kc, &er)) {
		++g->idx;
		return 1;
	}
	if (kc->kind == K_RET)
		return 0;	/* each call brings its own */
	if (kc->kind == K_JCC) {
		uint64_t b = draw(g, g->br, g->nbr);

		fresh(g, R_R13);
		line(g, "test r13d, 0x%llx", (unsigned long long)branch_mask(b / 16, b % 16));
		line(g, "jz 1f");
		dbuf_puts(g->out, "1:\n");
		g->credit_cmp++;
		return 2;
	}
	if (kc->kind == K_CALLI) {
		line(g, "lea r11, [rip + .L%s_leaf]", g->name);
		line(g, "call r11");
		return 3;
	}
	if (kc->kind == K_CALL) {
		line(g, "call .L%s_leaf", g->name);
		return 2;
	}
	if (kc->kind == K_JMPI) {
		line(g, "lea r11, [rip + 1f]");
		line(g, "jmp r11");
		dbuf_puts(g->out, "1:\n");
		return 2;
	}
	if (kc->kind == K_PUSH_POP) {
		line(g, "push %s", pool[src][3]);	/* pushes and pops in pairs */
		line(g, "pop %s", pool[dst][3]);
		g->last_wr[dst] = ++g->idx;
		g->credit_stack++;
		return 2;
	}
	if (kc->kind == K_STR) {
		line(g, "lea rsi, [%s + %llu]", base(g), (unsigned long long)er.disp);
		line(g, "lea rdi, [%s + %llu]", base(g), (unsigned long long)er.disp + 32);
		g->last_wr[P_RSI] = g->last_wr[P_RDI] = ++g->idx;
	}
	er.vturn = kc->vector ? g->vturn++ : 0;
	if (insn_emit(kc->key, &er, text, sizeof(text)))
		return 0;
	line(g, "%s", text);
	if (kc->kind == K_JMP)
		dbuf_puts(g->out, "1:\n");
	g->last_wr[dst] = ++g->idx;
	return 1;
}

static bool has_memory(const char *key)
{
	const char *m = mem_field(key);

	return !is_push_pop(key) && *m && strncmp(m, "none", 4) != 0 && !key_is(key, "call") &&
	       !key_is(key, "calli") && !key_is(key, "ret") && !key_is(key, "jmpi");
}

static enum kind kind_of(const char *key)
{
	static const struct {
		const char *func;
		enum kind kind;
	} funcs[] = {
		{ "div", K_DIV }, { "ret", K_RET }, { "jcc", K_JCC }, { "call", K_CALL },
		{ "calli", K_CALLI }, { "jmpi", K_JMPI }, { "jmp", K_JMP }, { "str", K_STR },
	};

	if (is_push_pop(key))
		return K_PUSH_POP;
	for (size_t i = 0; i < ARRAY_SIZE(funcs); i++)
		if (key_is(key, funcs[i].func))
			return funcs[i].kind;
	return K_PLAIN;
}

/* A sweep line is taken by the key as profiled, the rest by the key this
 * host runs (the two differ in the isa and vector width alone, unless the
 * key was too long to keep whole). */
static void classify(const char *key, struct kclass *kc)
{
	struct emit_regs er;
	char text[128];

	portable_key(key, kc->key, sizeof(kc->key));
	kc->sweeps = has_memory(key);
	kc->kind = kind_of(kc->key);
	kc->credit = key_is(kc->key, "cmp") ? CR_CMP : is_push_pop(kc->key) ? CR_STACK :
		     is_reg_move(kc->key) ? CR_MOV : CR_NONE;
	kc->mem = has_memory(kc->key);
	kc->plain_read = plain_read(kc->key);
	kc->step = key_is(kc->key, "mov") && !strncmp(kc->key + 3, ".rm.r.64.", 9);
	kc->vector = insn_key_vector(kc->key);
	/* A key no template knows (another tool's, a newer schema's) still
	 * costs an instruction: a plain register add. Whether a template
	 * exists depends on the key alone, so this is asked (and logged) once. */
	set_regs(&er, 0, 1);
	er.base = "r12";
	if (insn_emit(kc->key, &er, text, sizeof(text)))
		snprintf(kc->key, sizeof(kc->key), "%s", "alu.rr.none.64.base");
}

/*
 * A block sweeps its region: operands address [r12 + r14 + region offset +
 * 64 * j] for up to SWEEP_LINES lines j, then the cursor r14 moves past
 * them and wraps at the region size, so a line comes back after the whole
 * region (reuse = region size). The cursor lives in a slot between calls.
 * A region of SWEEP_LINES or fewer is addressed from r12 alone: its lines
 * take turns without a cursor, which would otherwise cost two
 * instructions per operand of a one-line region.
 */
static void advance(struct gen *g, size_t k, uint64_t chunk)
{
	line(g, "add r14, %llu", (unsigned long long)(64 * chunk));
	line(g, "and r14, 0x%llx", (unsigned long long)(g->region[k] - 1));
	written(g, R_R14);
}

static void block(struct gen *g, size_t k, uint64_t n)
{
	uint64_t lines = g->region[k] / 64, done = 0;
	uint64_t chunk = lines < SWEEP_LINES ? lines : SWEEP_LINES;
	uint64_t slot = g->cursors + 8 * k;
	bool cursor = lines > SWEEP_LINES;
	unsigned memop = 0;

	stream(g);
	dbuf_printf(g->out, "\t# region %zu: %llu bytes\n", k, (unsigned long long)g->region[k]);
	g->cur_off = g->regoff[k];
	g->cur_region = k;
	g->cursor = cursor;
	if (cursor) {
		fresh(g, R_R12);
		line(g, "mov r14, [r12 + %llu]", (unsigned long long)slot);
		written(g, R_R14);
	}
	/* Keys that emit nothing (ret comes with call) are drawn again, but
	 * never forever. */
	for (uint64_t tries = 0; done < n && tries < 16 * n; tries++) {
		const struct kclass *kc = &g->kc[draw(g, g->mix, g->nmix)];
		bool mem = kc->sweeps;

		if (mem && memop == chunk) {
			if (cursor)
				advance(g, k, chunk);
			memop = 0;
		}
		done += emit_one(g, kc, mem ? memop : 0) ? 1 : 0;
		memop += mem;
	}
	if (cursor) {
		advance(g, k, chunk);
		line(g, "mov [r12 + %llu], r14", (unsigned long long)slot);
	}
	if (g->chase_live)
		line(g, "mov [r12 + %llu], rbx", (unsigned long long)(g->chases + 8 * k));
	g->chase_live = false;
}

/* The share of plain reads to chase for the profile's share of chased
 * loads: of all the mix's reads (pops and returns among them), only
 * plain reads can be. */
static double chase_share(const struct ditto_cpu *c, const struct gen *g)
{
	double reads = 0, plain = 0;
	uint64_t loads = ditto_cpu_loads(c);

	for (size_t i = 0; i < g->nmix; i++) {
		const char *m = mem_field(g->keys[i]);

		reads += m[0] == 'r' || (m[0] && m[1] == 'r') ? (double)g->mix[i].count : 0;
		plain += plain_read(g->keys[i]) ? (double)g->mix[i].count : 0;
	}
	if (!loads || !plain)
		return 0;
	return fmin((double)ditto_cpu_chased_loads(c) / (double)loads * reads / plain, 1);
}

/*
 * A region's size within the limits: its own, then all regions of all
 * the clone's processes together (each process maps its own), in the
 * order of the profile's weights. Every region keeps a line at least.
 */
static uint64_t region_size(struct gen *g, uint64_t size)
{
	uint64_t procs = g->lim && g->lim->processes ? g->lim->processes : 1, used = 0;
	double all = synth_limit_max(g->lim, SYNTH_LIMIT_ALL_REGIONS) / (double)procs;

	for (size_t k = 0; k < g->nreg; k++)
		used += g->region[k];
	size = (uint64_t)synth_limit(g->lim, SYNTH_LIMIT_REGION, (double)size);
	if ((double)(used + size) > all)
		size = (uint64_t)fmax(synth_limit(g->lim, SYNTH_LIMIT_ALL_REGIONS,
						  (double)(used + size) * (double)procs) / (double)procs -
				      (double)used, 64);
	return size;
}

static int load(struct gen *g, const struct ditto_cpu *c)
{
	const struct ditto_counts *mix = ditto_cpu_mix(c);
	struct weighted dws[80];
	size_t ndws;

	g->nmix = mix ? ditto_counts_size(mix) : 0;
	g->mix = calloc(g->nmix + 1, sizeof(*g->mix));
	g->keys = calloc(g->nmix + 1, sizeof(*g->keys));
	g->kc = calloc(g->nmix + 1, sizeof(*g->kc));
	if (!g->mix || !g->keys || !g->kc)
		return -ENOMEM;
	for (size_t i = 0; i < g->nmix; i++) {
		ditto_counts_entry(mix, i, &g->keys[i], &g->mix[i].count);
		g->mix[i].value = i;
	}
	if (!g->nmix) {
		g->keys[0] = "alu.rr.none.64.base";
		g->mix[0] = (struct weighted){ 0, 1 };
		g->nmix = 1;
	}
	for (size_t i = 0; i < g->nmix; i++)
		classify(g->keys[i], &g->kc[i]);
	g->chase_p = chase_share(c, g) * g->k->chase_scale;
	g->nraw = hist_weights(ditto_cpu_raw(c), g->raw, 80);
	g->nwaw = hist_weights(ditto_cpu_waw(c), g->waw, 80);
	g->nbr = hist_weights(ditto_cpu_branches(c), g->br, 160);
	ndws = hist_weights(ditto_cpu_dws(c), dws, 80);
	/* The heaviest reuse sizes become regions; the smallest is one line. */
	for (size_t i = 0; i < ndws; i++) {
		uint64_t size = dws[i].value < 64 ? 64 : dws[i].value;

		if (g->nreg < MAX_REGIONS && dws[i].count * 50 >= ditto_hist_total(ditto_cpu_dws(c))) {
			g->region[g->nreg] = region_size(g, size);
			g->regw[g->nreg++] = dws[i].count;
		}
	}
	if (!g->nreg) {
		g->region[0] = 4096;
		g->regw[0] = 1;
		g->nreg = 1;
	}
	return 0;
}

/*
 * Code working set: instruction fetches whose reuse distance is at least
 * FAR_CODE bytes (the share `*share` of the warm fetches, at a mean
 * distance of `*bytes`) come from rotating chunks: each loop iteration
 * calls the next of K chunks, so a chunk's lines come back after the
 * other K - 1 have run. The hot blocks stay in one place.
 */
#define FAR_CODE 4096
#define MAX_CHUNKS 256
#define FAR_CODE_MAX (256 << 10)
#define INSN_BYTES 4	/* mean encoded length of the generated instructions */

/*
 * The far code share per unit of the knob above its default where the
 * profile saw less than this. A short CPU window sees no reuse longer
 * than its own footprint: windows cut at their first system call (a few
 * hundred instructions each) record no fetch at 4 KiB or more, and a knob
 * that only multiplied that share left every clone byte for byte the same
 * (issue 16: I1 99.98% off for eight iterations). Its far distance is
 * then unknown: FAR_CODE_MAX, past I1 and within LL.
 */
#define FAR_SHARE_FLOOR 0.05

/* The far share the knob asks for: the profile's times the knob up to
 * its default, then FAR_SHARE_FLOOR at least per unit above it, so that
 * the default clone is the profile's and the knob always acts. */
static double far_share_scaled(double share, double scale)
{
	return share * fmin(scale, 1) + fmax(share, FAR_SHARE_FLOOR) * fmax(scale - 1, 0);
}

static void far_code(const struct ditto_cpu *c, double *share, double *bytes)
{
	const struct ditto_hist *h = ditto_cpu_iws(c);
	double total = 0, far = 0, sum = 0;

	for (size_t i = 0; h && i < ditto_hist_bucket_count(h); i++) {
		uint64_t lo, hi, n;

		if (ditto_hist_bucket(h, i, &lo, &hi, &n))
			continue;
		total += n;
		if (lo >= FAR_CODE) {
			far += n;
			sum += n * ((double)lo + (double)hi) / 2;
		}
	}
	*share = total ? far / total : 0;
	*bytes = far ? sum / far : 0;
}

/*
 * Instructions of a block: as many as the profile's hot code holds, so
 * the loop's code takes the share of I1 the original's did. Fetches that
 * leave their line (reuse from NEAR_LINE bytes) and stay below FAR_CODE
 * give the hot footprint at their 90th percentile. A fixed 2000 made a
 * 12-KiB loop of a service whose hot code is a few lines (a tight work
 * loop): with the tuner's branch and miss code on top it crowded I1 with
 * the runtime's lines and cost misses the original never had (the
 * detuned srv_epoll clone: 6.7 I1 misses per request, none in the
 * original). Without such fetches the block stays MAX_BLOCK long.
 */
#define NEAR_LINE 128
#define MIN_BLOCK 500
#define MAX_BLOCK 2000

static uint64_t block_insts(const struct ditto_cpu *c)
{
	const struct ditto_hist *h = ditto_cpu_iws(c);
	double near = 0, seen = 0;
	uint64_t lo, hi, n, bytes = 0;

	for (size_t i = 0; h && i < ditto_hist_bucket_count(h); i++)
		if (!ditto_hist_bucket(h, i, &lo, &hi, &n) && lo >= NEAR_LINE && lo < FAR_CODE)
			near += (double)n;
	for (size_t i = 0; near > 0 && i < ditto_hist_bucket_count(h) && !bytes; i++) {
		if (ditto_hist_bucket(h, i, &lo, &hi, &n) || lo < NEAR_LINE || lo >= FAR_CODE)
			continue;
		seen += (double)n;
		if (seen >= 0.9 * near)
			bytes = hi + 1;
	}
	if (!bytes)
		return MAX_BLOCK;
	return bytes / INSN_BYTES < MIN_BLOCK ? MIN_BLOCK :
	       bytes / INSN_BYTES > MAX_BLOCK ? MAX_BLOCK : bytes / INSN_BYTES;
}

/* The K chunks and the relative table the loop calls them through;
 * returns the mean instructions of a chunk (its ret included). */
static uint64_t chunks(struct gen *g, unsigned k, uint64_t size, uint64_t wsum)
{
	uint64_t lines = 0;

	for (unsigned i = 0; i < k; i++) {
		uint64_t before = g->lines, x;

		stream(g);
		x = ditto_rng_below(&g->rng, wsum);
		size_t r = 0;

		while (r + 1 < g->nreg && x >= g->regw[r])
			x -= g->regw[r++];
		dbuf_printf(g->out, ".L%s_chunk%u:\n", g->name, i);
		forget_written(g);
		block(g, r, size);
		line(g, "ret");
		lines += g->lines - before;
	}
	dbuf_printf(g->out, "\t.p2align 3\n.L%s_chunks:\n", g->name);
	for (unsigned i = 0; i < k; i++)
		dbuf_printf(g->out, "\t.long .L%s_chunk%u - .L%s_chunks\n", g->name, i, g->name);
	return k ? lines / k : 0;
}

/* One xorshift64 step of the random bits in r15. */
static void random_step(struct gen *g)
{
	static const char *const steps[] = { "shl", "13", "shr", "7", "shl", "17" };

	for (int i = 0; i < 6; i += 2) {
		line(g, "mov rax, r15");
		line(g, "%s rax, %s", steps[i], steps[i + 1]);
		line(g, "xor r15, rax");
	}
}

/* The chunks ahead of the function, generated from a copy of g so that
 * the function's blocks (their streams, registers and dependencies) do not
 * depend on the chunks; their streams are numbered apart. */
#define CHUNK_STREAMS (1ull << 20)

static uint64_t far_chunks(struct gen *g, unsigned k, uint64_t size, uint64_t wsum)
{
	struct gen cg = *g;
	uint64_t per;

	if (!k)
		return 0;
	cg.blocks = CHUNK_STREAMS;
	per = chunks(&cg, k, size, wsum);
	g->lines = cg.lines;
	return per;
}

/* NAME_warm(regions): every chunk once, called by the runtime at startup
 * after it touched the regions, so that the chunks' first fetches (up to
 * FAR_CODE_MAX of code, more than a measurement's share of LL misses) are
 * not counted against serving. */
/* Registers the body's functions save (rsi: the state pointer). */
static const char *const saved_regs[] = { "rbx", "rbp", "r12", "r13", "r14", "r15", "rsi" };
#define NSAVED (sizeof(saved_regs) / sizeof(saved_regs[0]))

/*
 * The chase rings: in each region, line i's last quadword points to line
 * (5i + 1) mod n, a single cycle through all n lines (n a power of two),
 * so a chased walk reuses a line after the whole region, like the sweep,
 * in an order no stride prefetcher follows. Each region's pointer slot
 * starts at its first line.
 */
static void chase_rings(struct gen *g)
{
	for (size_t k = 0; g->chase_p > 0 && k < g->nreg; k++) {
		unsigned long long n = g->region[k] / 64, off = g->regoff[k];

		dbuf_printf(g->out, "\txor ecx, ecx\n2:\n\tlea rax, [rcx + rcx * 4 + 1]\n"
			    "\tand rax, 0x%llx\n\tshl rax, 6\n\tlea rax, [r12 + rax + %llu]\n"
			    "\tmov rdx, rcx\n\tshl rdx, 6\n\tmov [r12 + rdx + %llu], rax\n"
			    "\tinc rcx\n\tcmp rcx, %llu\n\tjb 2b\n", n - 1, off, off + 56, n);
		dbuf_printf(g->out, "\tlea rax, [r12 + %llu]\n\tmov [r12 + %llu], rax\n", off,
			    (unsigned long long)(g->chases + 8 * k));
	}
}

static void warm_function(struct gen *g, unsigned k)
{
	dbuf_printf(g->out, "\t.globl %s_warm\n\t.type %s_warm, @function\n%s_warm:\n", g->name,
		    g->name, g->name);
	for (size_t i = 0; i < NSAVED; i++)
		dbuf_printf(g->out, "\tpush %s\n", saved_regs[i]);
	dbuf_puts(g->out, "\tmov r12, rdi\n\txor r13d, r13d\n");
	chase_rings(g);
	for (unsigned i = 0; i < k; i++)
		dbuf_printf(g->out, "\tcall .L%s_chunk%u\n", g->name, i);
	for (size_t i = NSAVED; i-- > 0;)
		dbuf_printf(g->out, "\tpop %s\n", saved_regs[i]);
	dbuf_puts(g->out, "\tret\n");
}

/* The call of a chunk drawn at random from the K: a chunk's lines come
 * back after a spread of distances around K chunks rather than after
 * exactly K - 1 others, so the miss rate of a cache smaller than the
 * chunks falls smoothly with its size (1 - C/S) instead of jumping from
 * all to none where K chunks stop fitting, and the I1 knob acts smoothly. */
static void chunk_call(struct gen *g, unsigned k)
{
	random_step(g);
	line(g, "mov eax, r15d");
	line(g, "imul rax, rax, %u", k);
	line(g, "shr rax, 32");
	line(g, "lea r11, [rip + .L%s_chunks]", g->name);
	line(g, "movsxd rdx, dword ptr [r11 + rax * 4]");
	line(g, "add rdx, r11");
	line(g, "call rdx");
}

/*
 * The branch knob's sites. 0 < bias <= 1: BIASED_SITES branches, each
 * taken when a fresh random byte is below 128 * bias, so their
 * mispredictions grow smoothly with the knob (from none to about half);
 * bias > 1: BIASED_SITES * bias such branches at even odds, for services
 * whose branches are mostly unpredictable; bias < 0: a loop of
 * -bias * DILUTE_SITES turns, whose branch is taken all but once.
 */
#define BIASED_SITES 32
#define DILUTE_SITES 400

static long branch_sites(struct gen *g)
{
	double bias = g->k->branch_bias;
	unsigned below = (unsigned)llround(128 * fmin(bias, 1));
	long dilute = bias < 0 ? lround(-bias * DILUTE_SITES) : 0;
	long sites = bias > 1 ? lround(bias * BIASED_SITES) : BIASED_SITES;

	for (long i = 0; bias > 0 && i < sites; i++) {
		if (i % 8 == 0)
			random_step(g);
		line(g, "rol r15, 8");
		line(g, "cmp r15b, %u", below);
		line(g, "jb 1f");
		dbuf_puts(g->out, "1:\n");
	}
	/* A counted loop, not a run of sites: the same branches in a few
	 * bytes of code, so diluting does not grow the code's footprint (and
	 * its I1 misses); its exit mispredicts about once per iteration. */
	if (dilute > 0) {
		line(g, "mov eax, %ld", dilute);
		dbuf_puts(g->out, "2:\n");
		line(g, "dec eax");
		line(g, "jnz 2b");
	}
	return dilute;
}

int body_generate(const struct ditto_cpu *c, uint64_t seed, const struct synth_knobs *knobs,
		  struct synth_limits *limits, const char *name, struct dbuf *out,
		  struct body_info *info)
{
	double far_share, far_bytes, cold0;
	uint64_t cold = 0, chunk_lines = 0, random_slot;
	struct synth_miss miss[2];
	unsigned nchunks = 0;
	long dilute;
	struct synth_knobs dflt;
	struct gen g = { .out = out, .name = name, .k = knobs, .lim = limits, .seed = seed };
	uint64_t n, per_block, total = 0, wsum = 0, loops, ipr, start;
	int err;

	if (!g.k) {
		synth_knobs_defaults(&dflt);
		g.k = &dflt;
	}
	ditto_rng_seed(&g.rng, seed);
	if ((err = load(&g, c)))
		goto out;
	ipr = (uint64_t)fmin(ditto_hist_mean(ditto_cpu_insts_per_request(c)), MAX_INSTS);
	n = ipr ? ipr : 10000;
	per_block = block_insts(c);
	per_block = n < per_block ? n : per_block;
	loops = n / per_block ? n / per_block : 1;
	far_code(c, &far_share, &far_bytes);
	/* The chunk count follows the profile's own far code; the knob then
	 * grows the chunks, so their share and footprint rise together and
	 * the misses of a smaller cache rise smoothly with it. */
	cold0 = fmax(per_block * far_share, 8);
	cold = (uint64_t)(per_block * fmin(far_share_scaled(far_share, g.k->far_code_scale), 0.95) +
			  0.5);
	if (far_bytes <= 0)
		far_bytes = FAR_CODE_MAX;
	if (cold >= 8) {
		double k = (far_bytes - (per_block - cold0) * INSN_BYTES) / (cold0 * INSN_BYTES);

		/* ...but not past FAR_CODE_MAX in all (or the profile's own
		 * distance), where the I1 misses would become LL misses. */
		k = fmin(k, fmax(far_bytes, FAR_CODE_MAX) / ((double)cold * INSN_BYTES));

		nchunks = k < 2 ? 2 : k > MAX_CHUNKS ? MAX_CHUNKS : (unsigned)k;
		per_block -= cold;
	} else {
		cold = 0;
	}
	for (size_t k = 0; k < g.nreg; k++) {
		g.regoff[k] = total;
		total += g.region[k];
		wsum += g.regw[k];
	}
	/* A block's operands reach up to 32 lines past its cursor; then one
	 * cursor slot per region. */
	total += REGION_PAD;
	g.cursors = total;
	total += 8 * MAX_REGIONS;
	g.chases = total;
	total += 8 * MAX_REGIONS;
	random_slot = total;
	total += 8;
	synth_miss_layout(g.k, per_block + cold, &total, miss);
	dbuf_printf(out, "# generated by libditto from a cpu profile: %llu instructions per call\n"
		    "\t.intel_syntax noprefix\n\t.section .rodata\n\t.globl %s_region_bytes\n"
		    "%s_region_bytes:\n\t.quad %llu\n\t.text\n", (unsigned long long)n, name, name,
		    (unsigned long long)total);
	chunk_lines = far_chunks(&g, nchunks, cold, wsum);
	warm_function(&g, nchunks);
	/* The function starts on a 16 KiB boundary whatever the chunks'
	 * size: its code keeps its cache sets and predictor slots. */
	dbuf_printf(out, "\t.p2align 14\n\t.globl %s\n\t.type %s, @function\n%s:\n", name, name,
		    name);
	for (size_t i = 0; i < NSAVED; i++)
		line(&g, "push %s", saved_regs[i]);
	line(&g, "cld");
	/* An address computed, not moved: the profiler takes a register
	 * moved from a loaded one for a loaded pointer, and every read of
	 * the regions would count as a chased load. */
	line(&g, "lea r12, [rdi]");
	/* The random bits start from a fixed non-zero state (xorshift's
	 * only bad one is zero). */
	line(&g, "mov r15, [r12 + %llu]", (unsigned long long)random_slot);
	line(&g, "mov rax, 0x9e3779b97f4a7c15");
	line(&g, "test r15, r15");
	line(&g, "cmovz r15, rax");
	line(&g, "mov r13, [rsi + 8]");
	line(&g, "mov rbp, [rsi]");
	line(&g, "mov eax, %llu", (unsigned long long)loops);
	line(&g, "test rbp, rbp");
	line(&g, "cmovz rbp, rax");
	dbuf_printf(out, ".L%s_loop:\n", name);
	forget_written(&g);
	start = g.lines;
	/* The profile's blocks first, the knobs' code after them: a knob
	 * step does not move the blocks' addresses. */
	for (size_t k = 0; k < g.nreg; k++)
		block(&g, k, per_block * g.regw[k] / wsum + 1);
	if (nchunks)
		chunk_call(&g, nchunks);
	dilute = branch_sites(&g);
	for (int i = 0; i < 2; i++)
		g.lines += synth_miss_window(out, &miss[i]);
	line(&g, "inc r13");
	line(&g, "dec rbp");
	line(&g, "jnz .L%s_loop", name);
	/* The dilution loop's three lines run 1 + 2 * dilute times: counted
	 * as executed, the runtime calls fewer iterations and the branch
	 * knob leaves the instructions per request where they were. */
	info->loop_insts = g.lines - start + (dilute > 0 ? 2 * (uint64_t)dilute - 2 : 0);
	line(&g, "pop rsi");
	line(&g, "mov [rsi + 8], r13");
	line(&g, "mov [r12 + %llu], r15", (unsigned long long)random_slot);
	for (size_t i = NSAVED - 1; i-- > 0;)	/* rsi came off first */
		line(&g, "pop %s", saved_regs[i]);
	line(&g, "ret");
	info->loop_insts += chunk_lines;
	dbuf_printf(out, ".L%s_leaf:\n\tret\n\t.size %s, .-%s\n\t.section .rodata\n"
		    "\t.globl %s_loop_insts\n%s_loop_insts:\n\t.quad %llu\n"
		    "\t.section .note.GNU-stack,\"\",@progbits\n", name, name, name, name, name,
		    (unsigned long long)info->loop_insts);
	info->region_bytes = total;
	err = out->oom ? -ENOMEM : 0;
out:
	free(g.mix);
	free(g.keys);
	free(g.kc);
	return err ? ditto_err(err, "synth: cannot generate the body: %s", ditto_strerror(err)) : 0;
}
