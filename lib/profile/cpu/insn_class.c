/* SPDX-License-Identifier: MIT */
/*
 * Instruction classes: a decoded x86-64 instruction -> the class key
 * "func.ops.mem.width.isa" recorded in the model's mix, plus what the
 * analyses need (registers, memory operands, control-flow kind).
 *
 *   func   mov alu shift mul div cmp jcc jmp jmpi call calli ret str atomic
 *          crc32 bit cvt vint vfp x87 nop sys other   (table below)
 *   ops    explicit operands in Intel order: r register, m memory,
 *          i immediate ("-" for none), e.g. "rm" for add rax,[rbx]
 *   mem    none, r, w, rw: memory direction, implicit stack and string
 *          accesses included
 *   width  widest explicit operand in bits (0 without operands; 64 for
 *          stack-only instructions)
 *   isa    base x87 mmx sse sse2 sse3 ssse3 sse4.1 sse4.2 avx avx2 fma
 *          avx512 bmi aes sha other (the most specific extension)
 *
 * The function table is the one the synthesizer reads to emit at least one
 * encoding per class, so both stages agree on what a class means.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "cpu_int.h"

struct insn_classifier {
	csh cs;
	uint8_t canon[X86_REG_ENDING];
};

/* Mnemonic -> function, for everything not decided by groups or prefixes. */
struct func_row {
	const char *mnemonic;
	const char *func;
};

static const struct func_row func_table[] = {
	{ "mov", "mov" }, { "movabs", "mov" }, { "movzx", "mov" }, { "movsx", "mov" },
	{ "movsxd", "mov" }, { "push", "mov" }, { "pop", "mov" }, { "xchg", "mov" },
	{ "bswap", "mov" }, { "movbe", "mov" }, { "pushfq", "mov" }, { "popfq", "mov" },
	{ "lahf", "mov" }, { "sahf", "mov" }, { "leave", "mov" },
	{ "add", "alu" }, { "adc", "alu" }, { "sub", "alu" }, { "sbb", "alu" }, { "and", "alu" },
	{ "or", "alu" }, { "xor", "alu" }, { "not", "alu" }, { "neg", "alu" }, { "inc", "alu" },
	{ "dec", "alu" }, { "lea", "alu" }, { "andn", "alu" }, { "adcx", "alu" }, { "adox", "alu" },
	{ "shl", "shift" }, { "shr", "shift" }, { "sar", "shift" }, { "sal", "shift" },
	{ "rol", "shift" }, { "ror", "shift" }, { "rcl", "shift" }, { "rcr", "shift" },
	{ "shld", "shift" }, { "shrd", "shift" }, { "shlx", "shift" }, { "shrx", "shift" },
	{ "sarx", "shift" }, { "rorx", "shift" },
	{ "mul", "mul" }, { "imul", "mul" }, { "mulx", "mul" },
	{ "div", "div" }, { "idiv", "div" },
	{ "cmp", "cmp" }, { "test", "cmp" },
	{ "jmp", "jmp" }, { "call", "call" }, { "ret", "ret" }, { "retf", "ret" },
	{ "cmpxchg", "atomic" }, { "cmpxchg8b", "atomic" }, { "cmpxchg16b", "atomic" },
	{ "xadd", "atomic" },
	{ "crc32", "crc32" },
	{ "popcnt", "bit" }, { "lzcnt", "bit" }, { "tzcnt", "bit" }, { "bsf", "bit" },
	{ "bsr", "bit" }, { "bt", "bit" }, { "bts", "bit" }, { "btr", "bit" }, { "btc", "bit" },
	{ "blsr", "bit" }, { "blsi", "bit" }, { "blsmsk", "bit" }, { "bextr", "bit" },
	{ "pdep", "bit" }, { "pext", "bit" }, { "bzhi", "bit" },
	{ "cbw", "cvt" }, { "cwde", "cvt" }, { "cdqe", "cvt" }, { "cwd", "cvt" }, { "cdq", "cvt" },
	{ "cqo", "cvt" },
	{ "nop", "nop" }, { "endbr64", "nop" }, { "endbr32", "nop" }, { "pause", "nop" },
	{ "syscall", "sys" }, { "sysenter", "sys" }, { "int", "sys" }, { "int3", "sys" },
	{ "rdtsc", "sys" }, { "rdtscp", "sys" }, { "cpuid", "sys" }, { "xgetbv", "sys" },
	{ "lfence", "sys" }, { "mfence", "sys" }, { "sfence", "sys" }, { "rdrand", "sys" },
	{ "rdseed", "sys" }, { "rdpid", "sys" }, { "ud2", "sys" }, { "hlt", "sys" },
	{ "xsave", "sys" }, { "xsavec", "sys" }, { "xsaveopt", "sys" }, { "xrstor", "sys" },
	{ "fxsave", "sys" }, { "fxrstor", "sys" }, { "fxsave64", "sys" }, { "fxrstor64", "sys" },
	{ "xsave64", "sys" }, { "xrstor64", "sys" }, { "xsavec64", "sys" }, { "rdfsbase", "sys" },
	{ "rdgsbase", "sys" }, { "wrfsbase", "sys" }, { "wrgsbase", "sys" },
	{ "cld", "other" }, { "std", "other" }, { "clc", "other" }, { "stc", "other" },
	{ "cmc", "other" },
};

/* Extension groups, most specific first. */
static const struct {
	unsigned grp;
	const char *isa;
} isa_table[] = {
	{ X86_GRP_AVX512, "avx512" }, { X86_GRP_FMA, "fma" }, { X86_GRP_AVX2, "avx2" },
	{ X86_GRP_AVX, "avx" }, { X86_GRP_AES, "aes" }, { X86_GRP_SHA, "sha" },
	{ X86_GRP_PCLMUL, "aes" }, { X86_GRP_SSE42, "sse4.2" }, { X86_GRP_SSE41, "sse4.1" },
	{ X86_GRP_SSSE3, "ssse3" }, { X86_GRP_SSE3, "sse3" }, { X86_GRP_SSE2, "sse2" },
	{ X86_GRP_SSE1, "sse" }, { X86_GRP_MMX, "mmx" }, { X86_GRP_FPU, "x87" },
	{ X86_GRP_BMI, "bmi" }, { X86_GRP_BMI2, "bmi" }, { X86_GRP_ADX, "bmi" },
};

static const char *const string_ops[] = { "movs", "stos", "lods", "cmps", "scas" };

static int cmp_row(const void *a, const void *b)
{
	return strcmp(((const struct func_row *)a)->mnemonic, ((const struct func_row *)b)->mnemonic);
}

static struct func_row sorted_table[ARRAY_SIZE(func_table)];
static pthread_once_t sorted_once = PTHREAD_ONCE_INIT;

static void sort_table(void)
{
	memcpy(sorted_table, func_table, sizeof(func_table));
	qsort(sorted_table, ARRAY_SIZE(sorted_table), sizeof(sorted_table[0]), cmp_row);
}

static const char *table_func(const char *mn)
{
	struct func_row key = { mn, NULL }, *row;

	row = bsearch(&key, sorted_table, ARRAY_SIZE(sorted_table), sizeof(key), cmp_row);
	return row ? row->func : NULL;
}

static bool has_group(const cs_detail *d, unsigned grp)
{
	for (unsigned i = 0; i < d->groups_count; i++)
		if (d->groups[i] == grp)
			return true;
	return false;
}

/* EVEX encoding (0x62 after legacy prefixes): AVX-512, which Capstone 4
 * leaves without a group for many AVX-512VL/BW forms. */
static bool is_evex(const cs_insn *ci)
{
	for (unsigned i = 0; i < ci->size; i++) {
		uint8_t b = ci->bytes[i];

		if (b == 0x66 || b == 0x67 || b == 0xf2 || b == 0xf3 || b == 0x2e || b == 0x3e ||
		    b == 0x26 || b == 0x36 || b == 0x64 || b == 0x65)
			continue;
		return b == 0x62;
	}
	return false;
}

static const char *isa_of(const cs_insn *ci)
{
	if (is_evex(ci))
		return "avx512";
	for (size_t i = 0; i < ARRAY_SIZE(isa_table); i++)
		if (has_group(ci->detail, isa_table[i].grp))
			return isa_table[i].isa;
	return "base";
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* movs/stos/... with element suffix b/w/d/q and no register operand. */
static unsigned string_size(const char *mn, const cs_x86 *x)
{
	static const char sizes[] = "bwdq";

	for (size_t i = 0; i < ARRAY_SIZE(string_ops); i++) {
		const char *sfx;

		if (!starts(mn, string_ops[i]))
			continue;
		sfx = mn + strlen(string_ops[i]);
		if (strlen(sfx) != 1 || !strchr(sizes, *sfx))
			return 0;
		for (unsigned k = 0; k < x->op_count; k++)
			if (x->operands[k].type == X86_OP_REG &&
			    x->operands[k].size > 8)	/* xmm: SSE movsd */
				return 0;
		return 1u << (strchr(sizes, *sfx) - sizes);
	}
	return 0;
}

/* Vector instructions: integer or floating point by the usual suffixes. */
static const char *vector_func(const char *mn)
{
	const char *m = mn[0] == 'v' ? mn + 1 : mn;
	size_t n = strlen(m);

	if (starts(m, "cvt"))
		return "cvt";
	if (n > 2 && (!strcmp(m + n - 2, "ps") || !strcmp(m + n - 2, "pd") ||
		      !strcmp(m + n - 2, "ss") || !strcmp(m + n - 2, "sd")))
		return "vfp";
	if (starts(m, "fmadd") || starts(m, "fmsub") || starts(m, "fnmadd") || starts(m, "fnmsub"))
		return "vfp";
	return "vint";
}

/* Capstone writes prefixes into the mnemonic ("rep movsq", "lock add"). */
static const char *bare_mnemonic(const char *mn)
{
	static const char *const prefixes[] = { "rep ", "repe ", "repne ", "repz ", "repnz ",
						"lock ", "notrack ", "bnd " };

	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (starts(mn, prefixes[i]))
			return bare_mnemonic(mn + strlen(prefixes[i]));
	return mn;
}

static const char *func_of(const cs_insn *ci, const cs_detail *d, enum insn_kind *kind)
{
	const cs_x86 *x = &d->x86;
	const char *mn = bare_mnemonic(ci->mnemonic), *f;
	bool indirect = x->op_count > 0 && x->operands[0].type != X86_OP_IMM;

	*kind = IK_PLAIN;
	if (has_group(d, X86_GRP_JUMP) && strcmp(mn, "jmp") != 0 && !starts(mn, "ljmp")) {
		*kind = IK_JCC;
		return "jcc";
	}
	if (!strcmp(mn, "jmp") || starts(mn, "ljmp")) {
		*kind = IK_JMP;
		return indirect ? "jmpi" : "jmp";
	}
	if (has_group(d, X86_GRP_CALL)) {
		*kind = IK_CALL;
		return indirect ? "calli" : "call";
	}
	if (has_group(d, X86_GRP_RET)) {
		*kind = IK_RET;
		return "ret";
	}
	if (!strcmp(mn, "syscall")) {
		*kind = IK_SYSCALL;
		return "sys";
	}
	if (string_size(mn, x)) {
		*kind = IK_STRING;
		return "str";
	}
	if (x->prefix[0] == X86_PREFIX_LOCK)
		return "atomic";
	if (!strcmp(mn, "xchg"))
		for (unsigned k = 0; k < x->op_count; k++)
			if (x->operands[k].type == X86_OP_MEM)
				return "atomic";	/* implicitly locked */
	if ((f = table_func(mn)))
		return f;
	if (starts(mn, "cmov") || starts(mn, "set"))
		return "mov";
	if (has_group(d, X86_GRP_FPU) || mn[0] == 'f')
		return "x87";
	if (starts(mn, "prefetch"))
		return "nop";
	for (size_t i = 0; i < ARRAY_SIZE(isa_table); i++)
		if (isa_table[i].grp != X86_GRP_FPU && has_group(d, isa_table[i].grp) &&
		    strcmp(isa_table[i].isa, "bmi") != 0)
			return vector_func(mn);
	if (is_evex(ci))
		return vector_func(mn);
	return "other";
}

static void add_reg(uint8_t *list, uint8_t *n, uint8_t r)
{
	if (r == CR_NONE)
		return;
	for (unsigned i = 0; i < *n; i++)
		if (list[i] == r)
			return;
	if (*n < INSN_MAX_REGS)
		list[(*n)++] = r;
}

static void fill_regs(const struct insn_classifier *c, const cs_insn *ci, struct insn *out)
{
	cs_regs rd, wr;
	uint8_t nrd = 0, nwr = 0;

	if (cs_regs_access(c->cs, ci, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		nrd = nwr = 0;
	for (unsigned i = 0; i < nrd; i++)
		add_reg(out->rd, &out->nrd, c->canon[rd[i] < X86_REG_ENDING ? rd[i] : 0]);
	for (unsigned i = 0; i < nwr; i++)
		add_reg(out->wr, &out->nwr, c->canon[wr[i] < X86_REG_ENDING ? wr[i] : 0]);
}

static bool is_move(const char *mn)
{
	return starts(mn, "mov") || starts(mn, "vmov");
}

/* Memory operands that really access memory (not lea, nop, prefetch). */
static void fill_mem(const cs_x86 *x, const char *mn, const char *func, struct insn *out,
		     unsigned *dir)
{
	bool hint = !strcmp(func, "nop") || !strcmp(mn, "lea");

	for (unsigned k = 0; k < x->op_count && out->nmem < INSN_MAX_MEM; k++) {
		const cs_x86_op *op = &x->operands[k];
		struct mem_ref *m;

		if (op->type != X86_OP_MEM || hint)
			continue;
		m = &out->mem[out->nmem++];
		m->base = op->mem.base;
		m->index = op->mem.index;
		m->seg = op->mem.segment;
		m->scale = (uint8_t)op->mem.scale;
		m->disp = op->mem.disp;
		m->size = op->size;
		/* Capstone leaves access empty for some forms: a read then; and
		 * atomics read and write whatever it says. */
		m->access = op->access & (CS_AC_READ | CS_AC_WRITE) ? op->access & 3 : CS_AC_READ;
		if (!strcmp(func, "atomic"))
			m->access = CS_AC_READ | CS_AC_WRITE;
		/* Capstone 4 marks some compares as writing and some vector
		 * stores as reading: a compare reads; a move writes its first
		 * operand and reads its second. */
		if (!strcmp(func, "cmp"))
			m->access = CS_AC_READ;
		else if (is_move(mn) && x->op_count == 2)
			m->access = k == 0 ? CS_AC_WRITE : CS_AC_READ;
		*dir |= m->access;
	}
}

static void ops_string(const cs_x86 *x, char *buf, size_t len, unsigned *width)
{
	size_t n = 0;

	*width = 0;
	for (unsigned k = 0; k < x->op_count && n + 1 < len; k++) {
		const cs_x86_op *op = &x->operands[k];

		buf[n++] = op->type == X86_OP_REG ? 'r' : op->type == X86_OP_MEM ? 'm' : 'i';
		if (op->size * 8u > *width)
			*width = op->size * 8u;
	}
	if (n == 0)
		buf[n++] = '-';
	buf[n] = '\0';
}

static void control_and_stack(const char *mn, struct insn *out, unsigned *dir)
{
	if (out->kind == IK_CALL || !strcmp(mn, "push") || !strcmp(mn, "pushfq")) {
		out->stack = -8;
		*dir |= 2;
	} else if (out->kind == IK_RET || !strcmp(mn, "pop") || !strcmp(mn, "popfq") ||
		   !strcmp(mn, "leave")) {
		out->stack = 8;
		out->leave = !strcmp(mn, "leave");
		*dir |= 1;
	}
}

static void string_info(const cs_insn *ci, struct insn *out, unsigned *dir)
{
	const cs_x86 *x = &ci->detail->x86;
	const char *mn = bare_mnemonic(ci->mnemonic);

	out->str_size = (uint8_t)string_size(mn, x);
	out->rep = x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE;
	if (starts(mn, "movs"))
		out->str_mask = 1 | 2;
	else if (starts(mn, "stos"))
		out->str_mask = 2;
	else if (starts(mn, "lods"))
		out->str_mask = 1;
	else if (starts(mn, "cmps"))
		out->str_mask = 1 | 4;
	else
		out->str_mask = 4;	/* scas */
	*dir |= (out->str_mask & 5 ? 1 : 0) | (out->str_mask & 2 ? 2 : 0);
	out->nmem = 0;	/* the stepper walks the ranges from rsi/rdi/rcx */
}

static bool is_gp(uint8_t r)
{
	return (r >= CR_GP0 && r < CR_GP0 + 16) || r == CR_RSP;
}

static void dataflow_flags(const cs_insn *ci, const char *func, struct insn *out)
{
	const cs_x86 *x = &ci->detail->x86;

	out->loads_gp = false;
	out->move_gp = false;
	if (strcmp(func, "mov") != 0 || x->op_count != 2 || x->operands[0].type != X86_OP_REG)
		return;
	if (x->operands[1].type == X86_OP_MEM)
		out->loads_gp = out->nwr > 0 && is_gp(out->wr[0]);
	else if (x->operands[1].type == X86_OP_REG)
		out->move_gp = true;
}

void insn_classify(const struct insn_classifier *c, const cs_insn *ci, struct insn *out,
		   char *key, size_t keylen)
{
	const cs_detail *d = ci->detail;
	const cs_x86 *x = &d->x86;
	const char *func, *mdir[] = { "none", "r", "w", "rw" };
	enum insn_kind kind;
	unsigned dir = 0, width;
	char ops[8];

	memset(out, 0, sizeof(*out));
	out->addr = ci->address;
	out->len = (uint8_t)ci->size;
	func = func_of(ci, d, &kind);
	out->kind = (uint8_t)kind;
	fill_regs(c, ci, out);
	ops_string(x, ops, sizeof(ops), &width);
	fill_mem(x, bare_mnemonic(ci->mnemonic), func, out, &dir);
	control_and_stack(bare_mnemonic(ci->mnemonic), out, &dir);
	if (kind == IK_STRING)
		string_info(ci, out, &dir);
	dataflow_flags(ci, func, out);
	if (width == 0 && out->stack)
		width = 64;
	snprintf(key, keylen, "%s.%s.%s.%u.%s", func, ops, mdir[dir & 3], width, isa_of(ci));
}

uint8_t insn_canon_reg(const struct insn_classifier *c, unsigned reg)
{
	return reg < X86_REG_ENDING ? c->canon[reg] : CR_NONE;
}

csh insn_classifier_handle(const struct insn_classifier *c)
{
	return c->cs;
}

/* Canonical register from a Capstone register name. */
static uint8_t canon_of_name(const char *n)
{
	static const char *const gp64[] = { "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp" };
	static const char *const gp_alias[][4] = {
		{ "eax", "ax", "al", "ah" }, { "ebx", "bx", "bl", "bh" }, { "ecx", "cx", "cl", "ch" },
		{ "edx", "dx", "dl", "dh" }, { "esi", "si", "sil", NULL }, { "edi", "di", "dil", NULL },
		{ "ebp", "bp", "bpl", NULL },
	};
	unsigned k;
	char suffix[4];

	if (!strcmp(n, "rsp") || !strcmp(n, "esp") || !strcmp(n, "sp") || !strcmp(n, "spl"))
		return CR_RSP;
	for (size_t i = 0; i < ARRAY_SIZE(gp64); i++) {
		if (!strcmp(n, gp64[i]))
			return (uint8_t)(CR_GP0 + i);
		for (size_t j = 0; j < 4; j++)
			if (gp_alias[i][j] && !strcmp(n, gp_alias[i][j]))
				return (uint8_t)(CR_GP0 + i);
	}
	if (sscanf(n, "r%u%3s", &k, suffix) >= 1 && k >= 8 && k <= 15)
		return (uint8_t)(CR_GP0 + 7 + (k - 8));
	if ((sscanf(n, "xmm%u", &k) == 1 || sscanf(n, "ymm%u", &k) == 1 ||
	     sscanf(n, "zmm%u", &k) == 1) && k < 32)
		return (uint8_t)(CR_VEC0 + k);
	if (!strcmp(n, "rflags") || !strcmp(n, "eflags") || !strcmp(n, "flags"))
		return CR_FLAGS;
	if (n[0] == 's' && n[1] == 't')
		return CR_X87;
	if (sscanf(n, "k%u", &k) == 1 && k < 8)
		return (uint8_t)(CR_MASK0 + k);
	return CR_NONE;
}

int insn_classifier_new(struct insn_classifier **out)
{
	struct insn_classifier *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return ditto_err(-ENOMEM, "out of memory");
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &c->cs) != CS_ERR_OK) {
		free(c);
		return ditto_err(-ENOTSUP, "capstone: cannot open an x86-64 decoder");
	}
	cs_option(c->cs, CS_OPT_DETAIL, CS_OPT_ON);
	for (unsigned r = 1; r < X86_REG_ENDING; r++) {
		const char *n = cs_reg_name(c->cs, r);

		c->canon[r] = n ? canon_of_name(n) : CR_NONE;
	}
	pthread_once(&sorted_once, sort_table);
	*out = c;
	return 0;
}

void insn_classifier_free(struct insn_classifier *c)
{
	if (!c)
		return;
	cs_close(&c->cs);
	free(c);
}
