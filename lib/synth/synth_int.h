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
	unsigned vturn;		/* vector operands: writes register vturn % 3 of
				 * three, reads the other two (see emit_vector()) */
};

/*
 * One instruction (GNU as, Intel syntax, no newline) of the class `key`
 * ("func.ops.mem.width.isa", see ditto_cpu_mix()). Every function of the
 * class table has a template; an operand shape without one gets the
 * nearest instruction of the same function and memory direction.
 * -EINVAL for a malformed key, -ENOENT for an unknown function.
 */
int insn_emit(const char *key, const struct emit_regs *r, char *buf, size_t len);
/* Whether the class's instruction has vector register operands (vint,
 * vfp, cvt: emit_regs.vturn applies). */
bool insn_key_vector(const char *key);

/* What a generated body needs from its caller. */
struct body_info {
	uint64_t region_bytes;	/* data regions to allocate */
	uint64_t loop_insts;	/* instructions per loop iteration */
};

/* The generator's tuning knobs (knobs.c): model tuning.knobs entries
 * named "synth.<field>". */
struct synth_knobs {
	double body_scale;	/* multiplies the body's instructions per request */
	double branch_bias;	/* > 0: extra branches taken at random with this
				 * strength; < 0: extra always-taken ones */
	double d1_mpki;		/* extra D1 misses per 1000 body instructions */
	double ll_mpki;		/* of which also LL misses */
	double far_code_scale;	/* multiplies the share of far instruction fetches */
	double runtime_insts;	/* the runtime's own instructions per request (< 0: estimate) */
	double background_rate;	/* multiplies the background classes' wake-up rate */
	double hold_share;	/* share of epoll wake-ups whose responses wait for
				 * the wake-up's last read (rt_net.hold_share) */
	double chase_scale;	/* multiplies the profile's share of chased loads */
};
struct synth_knob {
	const char *name;
	size_t offset;
	double dflt, min, max;
};
extern const struct synth_knob synth_knob_table[];
extern const size_t synth_knob_count;
struct ditto_model;
/* The knob called name, or NULL (model validation warns about those). */
const struct synth_knob *synth_knob_find(const char *name);
double *synth_knob_ptr(struct synth_knobs *k, const struct synth_knob *d);
void synth_knobs_defaults(struct synth_knobs *k);
void synth_knobs_read(const struct ditto_model *m, struct synth_knobs *k);

/* What a model may ask of its clone (limits.c; documented in synth.h). */
enum synth_limit {
	SYNTH_LIMIT_PROCESSES,
	SYNTH_LIMIT_THREADS,
	SYNTH_LIMIT_CLASSES,
	SYNTH_LIMIT_CLASS_THREADS,
	SYNTH_LIMIT_BG_THREADS,
	SYNTH_LIMIT_ALL_THREADS,
	SYNTH_LIMIT_INSTS,
	SYNTH_LIMIT_CALLS,
	SYNTH_LIMIT_REGION,
	SYNTH_LIMIT_ALL_REGIONS,
	SYNTH_LIMIT_RESPONSE,
	SYNTH_LIMIT_SCRATCH,
	SYNTH_LIMIT_FILE_CALL,
	SYNTH_LIMIT_SLEEP,
	SYNTH_LIMIT_MMAP,
	SYNTH_LIMIT_WRITES,
	SYNTH_LIMIT_COUNT
};
struct synth_limits {
	const char *service;	/* named in the warnings */
	bool no_clamp;		/* lift the limits that only protect the host */
	unsigned warned;	/* limits already named */
	uint64_t processes;	/* the clone's, once limited (config_processes()) */
};
void synth_limits_init(struct synth_limits *l, const char *service, bool no_clamp);
/* v within limit id (a NULL l: the default limits, no warning); each
 * limit that clamps is named once in a warning. */
double synth_limit(struct synth_limits *l, enum synth_limit id, double v);
double synth_limit_max(const struct synth_limits *l, enum synth_limit id);

/*
 * The request body of cpu entry c as a standalone assembly function `name`
 * (see body_gen.c), appended to out. Deterministic for a seed. Its data
 * regions stay within limits (NULL: the default limits, unnamed).
 */
struct ditto_cpu;
struct dbuf;
int body_generate(const struct ditto_cpu *c, uint64_t seed, const struct synth_knobs *knobs,
		  struct synth_limits *limits, const char *name, struct dbuf *out,
		  struct body_info *info);

/*
 * The windows of the D1 and LL miss knobs (miss_gen.c): their areas are
 * placed after `*total` bytes of the regions, from the knobs and the
 * instructions of one iteration; each window's code, run once per
 * iteration, is appended to out and its instruction count returned.
 */
struct synth_miss {
	uint64_t off, slot, step;	/* area, cursor slot, 64ths of a byte a turn */
	uint64_t lines, window;		/* lines of the area; loaded per turn */
	unsigned stride_shift, sets_shift;
};
void synth_miss_layout(const struct synth_knobs *k, uint64_t loop_insts, uint64_t *total,
		       struct synth_miss m[2]);
uint64_t synth_miss_window(struct dbuf *out, const struct synth_miss *m);

/* A file of the clone runtime, embedded at build time (runtime_files.c,
 * generated by scripts/embed-files.py from lib/runtime/). */
struct synth_file {
	const char *name;
	size_t len;
	const char *data;
};
extern const struct synth_file synth_runtime_files[];
extern const size_t synth_runtime_file_count;

struct ditto_service;
/*
 * Appends s as one C string literal (quotes included; c_literal.c): the
 * only way a string from a model may reach a generated file. Refuses,
 * with -DITTO_EINVALID and a message, a string that breaks the model's
 * name rule (DITTO_NAME_MAX in model.h) rather than repairing it.
 */
int c_literal(struct dbuf *out, const char *s);

/* What config_gen needs besides the service. */
struct config_in {
	uint64_t seed;
	uint16_t port;		/* 0: the model's first port, else 8080 */
	const char *body_name;	/* NULL: no body */
	uint64_t body_loop_insts;
	double window_s;	/* the profile window, for background periods */
	const struct synth_knobs *knobs;	/* NULL: the defaults */
	struct synth_limits *limits;	/* NULL: the default limits, unnamed */
};
/*
 * clone_config.c for service s: the network skeleton, framing, response
 * sizes, syscall replay table and background classes (see
 * lib/runtime/rt.h). Sections the model lacks get defaults, each named
 * once through ditto_warn().
 */
int config_generate(const struct ditto_service *s, const struct config_in *in, struct dbuf *out);

/* ---- outbound_note.c: outbound calls the clone drops ---- */
/* One warning naming the endpoints and calls per request; nothing when
 * the model has no outbound calls. */
void outbound_warn(const struct ditto_service *s);
/* The README's paragraph saying so. */
void outbound_readme(struct dbuf *b, const struct ditto_service *s);
/* `static const struct rt_sockopt sockopts[]` into b; returns its length
 * (sockopt_gen.c). Unknown options: TCP_NODELAY, with a warning. */
unsigned sockopt_section(const struct ditto_service *s, double requests, struct dbuf *b);
/* `.sendfile = {...},` of rt_config into b, from the sendfile calls on
 * class cls's sockets (NULL: any class); returns the share of response
 * bytes sent from a file (sendfile_gen.c). */
double sendfile_section(const struct ditto_service *s, const char *cls, double requests,
			double resp_mean, struct dbuf *b);
/* How a replayed call fails (fail_gen.c): errno and share of the calls,
 * SYNTH_FAILS at most (rt.h's RT_FAILS); returns how many. Errnos the
 * runtime cannot make for the kind are warned about and made its usual
 * one; kinds that cannot fail warn and return 0. */
#define SYNTH_FAILS 4
struct synth_fail {
	int err;
	double share;
};
struct replay_entry;
struct ditto_syscall;
unsigned synth_fails(const char *svc, const struct ditto_syscall *c, const struct replay_entry *e,
		     struct synth_fail out[SYNTH_FAILS]);
/* The clone's processes: the model's, within the limits (l->processes set). */
uint64_t config_processes(const struct ditto_service *s, struct synth_limits *l);

/* Write files into a new directory dir atomically (see tree_write.c). */
struct tree_entry {
	const char *name;
	const char *data;
	size_t len;
	bool executable;
};
int tree_write(const char *dir, const struct tree_entry *files, size_t n, bool force);
/* 0 when dir may be replaced (empty, or a clone tree); -errno of stat
 * (-ENOENT: absent), -ENOTDIR, -ENOTEMPTY with a message. */
int synth_tree_replaceable(const char *dir);
/* Remove a directory tree (errors ignored: what remains is left). */
void synth_rm_tree(const char *path);

#endif /* DITTO_SYNTH_INT_H */
