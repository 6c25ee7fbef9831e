/* SPDX-License-Identifier: MIT */
/*
 * Internal interface of the CPU profiler (lib/profile/cpu): execution
 * windows of ptrace single-stepping, Capstone decoding and the analyses fed
 * by every executed instruction.
 */
#ifndef DITTO_CPU_INT_H
#define DITTO_CPU_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include <capstone/capstone.h>

#include <ditto/ditto.h>
#include <ditto/model.h>

/* Hash of an address or line number for the open-addressing tables. */
static inline uint64_t cpu_hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

/* ---- canonical registers: aliases (al/ax/eax/rax) are one register ---- */
enum {
	CR_NONE = 0,
	CR_GP0 = 1,		/* rax..r15: 1..16 in Capstone order of the table */
	CR_VEC0 = 17,		/* xmm/ymm/zmm 0..31 */
	CR_FLAGS = 49,
	CR_X87 = 50,		/* the x87 stack as one register */
	CR_MASK0 = 51,		/* k0..k7 */
	CR_RSP = 59,		/* kept apart from GP for pointer-chase logic */
	CR_COUNT = 64,
};

/* ---- instruction classes (insn_class.c) ---- */
enum insn_kind {
	IK_PLAIN = 0,
	IK_JCC,		/* conditional branch */
	IK_JMP,		/* direct or indirect jump */
	IK_CALL,
	IK_RET,
	IK_SYSCALL,
	IK_STRING,	/* movs/stos/lods/cmps/scas, maybe rep-prefixed */
};

struct mem_ref {
	uint16_t base, index, seg;	/* Capstone x86_reg ids, 0 when absent */
	uint8_t scale, size;
	uint8_t access;			/* 1 read, 2 write, 3 both */
	int64_t disp;
};

#define INSN_MAX_REGS 12
#define INSN_MAX_MEM 3

/* What the analyses need of one decoded instruction. */
struct insn {
	uint64_t addr;
	uint8_t len, kind;
	uint8_t nmem, nrd, nwr;
	bool undecoded;
	bool jit;		/* in writable memory: not cached */
	bool rep;		/* rep/repe/repne string instruction */
	bool loads_gp;		/* loads memory into a general-purpose register */
	bool move_gp;		/* reg-to-reg move between general-purpose registers */
	int8_t stack;		/* implicit stack access: -8 push/call, +8 pop/ret */
	bool leave;		/* the +8 access is at rbp */
	uint8_t str_size;	/* element size of a string instruction */
	uint8_t str_mask;	/* 1 reads [rsi], 2 writes [rdi], 4 reads [rdi] */
	uint16_t cls;		/* index of its class key in the decoder's table */
	uint8_t rd[INSN_MAX_REGS], wr[INSN_MAX_REGS];	/* canonical registers */
	struct mem_ref mem[INSN_MAX_MEM];
};

/* Capstone handle with details on, and its register alias table. */
struct insn_classifier;
int insn_classifier_new(struct insn_classifier **out);
void insn_classifier_free(struct insn_classifier *c);
csh insn_classifier_handle(const struct insn_classifier *c);
/* Fill `out` (not cls) and the class key "func.ops.mem.width.isa". */
void insn_classify(const struct insn_classifier *c, const cs_insn *ci, struct insn *out,
		   char *key, size_t keylen);
/* Canonical register of a Capstone register id (CR_NONE if none). */
uint8_t insn_canon_reg(const struct insn_classifier *c, unsigned reg);

/* ---- code reading and decode cache (decoder.c) ---- */
/* Class keys, shared by the decoders of one run so indexes agree. */
struct keytab;
struct keytab *keytab_new(void);
void keytab_free(struct keytab *kt);
const char *keytab_key(const struct keytab *kt, size_t i);

struct decoder;
int decoder_new(pid_t pid, struct keytab *kt, struct decoder **out);
void decoder_free(struct decoder *d);
/* Decoded instruction at addr of the target; never NULL unless out of
 * memory: undecodable bytes give an insn with undecoded set, len 1. */
const struct insn *decoder_get(struct decoder *d, uint64_t addr);
const struct insn_classifier *decoder_classifier(const struct decoder *d);

/* ---- reuse distance (reuse_distance.c): LRU stack distance of lines ---- */
struct reuse;
struct reuse *reuse_new(void);
void reuse_free(struct reuse *r);
void reuse_reset(struct reuse *r);
/* Distinct lines touched since the last access of `line` (itself
 * included: an immediate re-touch gives 1), or 0 for a first touch. */
uint64_t reuse_access(struct reuse *r, uint64_t line);

/* ---- analyses of one thread class (analysis.c) ---- */
struct analysis;
struct analysis *analysis_new(const struct insn_classifier *c);
void analysis_free(struct analysis *a);
/* A new execution window starts: distances do not span windows. */
void analysis_window(struct analysis *a);
/* One executed instruction: regs before it, next_rip after it. */
void analysis_insn(struct analysis *a, const struct insn *in, const struct user_regs_struct *r,
		   uint64_t next_rip);
/* A request was read: instructions since the previous one form a sample. */
void analysis_request_boundary(struct analysis *a);
/* Write everything into a model's cpu entry (adds to what is there). */
int analysis_store(struct analysis *a, const struct keytab *kt, struct ditto_cpu *out);
uint64_t analysis_instructions(const struct analysis *a);

/* Effective address of memory operand m of `in` with registers r. */
bool insn_mem_addr(const struct insn *in, const struct mem_ref *m, const struct user_regs_struct *r,
		   uint64_t *addr);

/* ---- ptrace windows (stepper.c) ---- */
struct step_opts {
	uint64_t insts;			/* stop after this many */
	double timeout_s;		/* or after this long */
	const volatile int *stop;	/* or when this becomes non-zero */
	int mode;			/* DITTO_STEP_BREAKPOINT or _SYSCALL_STOPS */
};
struct step_result {
	uint64_t insts;
	uint64_t ns;			/* wall time the thread was held */
	bool thread_exited;
	bool timed_out;
	bool bp_failed;			/* a breakpoint was refused or never fired:
					 * the window went on with syscall stops */
};
/* Seize tid, step one window feeding `a`, detach. Never leaves it stopped. */
int step_window(pid_t pid, pid_t tid, struct decoder *d, struct analysis *a,
		const struct step_opts *o, struct step_result *res);
/* Clear error for EPERM from PTRACE_SEIZE (Yama, capabilities). */
int ptrace_perm_error(pid_t tid, int err);

/* ---- the stepping mechanism (step_mode.c) ---- */
/* DITTO_STEP_BREAKPOINT or DITTO_STEP_SYSCALL_STOPS for a requested enum
 * ditto_step_mode (AUTO: DITTO_STEP_MODE, else what this host supports),
 * or -EOPNOTSUPP (breakpoints forced where they do not fire), -EINVAL. */
int step_mode_resolve(int requested);
/* DITTO_TEST_DEAD_BREAKPOINTS=1: windows' breakpoints never fire. */
bool step_breakpoints_dead(void);

#endif /* DITTO_CPU_INT_H */
