/* SPDX-License-Identifier: MIT */
/*
 * The model's schema as tables: one row per field, naming its type and
 * what merge, compare and validation do with it. The codec, validator,
 * merger, comparer and path getter all walk these tables.
 */
#ifndef DITTO_SCHEMA_H
#define DITTO_SCHEMA_H

#include "dom.h"

enum ftype {
	FT_BOOL = 1,
	FT_U64,
	FT_F64,
	FT_STR,
	FT_ENUM,	/* string from `enums` */
	FT_HIST,	/* struct ditto_hist of kind hist_kind */
	FT_COUNTS,	/* map string -> uint */
	FT_VALUES,	/* map string -> number */
	FT_U64LIST,	/* array of uint */
	FT_STRLIST,	/* array of string */
	FT_OBJ,		/* map described by `sub` */
	FT_ARR,		/* array of maps described by `sub` */
};

enum fmerge {
	MG_SUM = 1,	/* counts, histograms, counts maps add */
	MG_MAX,		/* keep the larger */
	MG_FIRST,	/* keep dst's value (src's when dst has none) */
	MG_SAME,	/* configuration: values must agree */
	MG_OR,
	MG_MEAN,	/* floats averaged, weighted by meta.sources */
	MG_UNION,	/* lists: add missing elements */
	MG_KEY,		/* element identity: equal by construction */
	MG_REC,		/* objects and arrays: recurse */
};

enum fcmp {
	CP_NONE = 0,
	CP_RAW,		/* scalar as is */
	CP_PER_REQ,	/* scalar divided by the service's requests.count */
	CP_PER_FIELD,	/* scalar divided by sibling field `per` */
	CP_DIST,	/* distribution distance, plus the mean for histograms */
	CP_LATENCY,	/* distribution distance plus p50 and p99 */
	CP_REC,		/* objects and arrays: recurse */
};

/* Field flags. */
#define F_KEY 0x01	/* part of the element key of its array */
#define F_NONEMPTY 0x02	/* string must not be empty */
#define F_POSITIVE 0x04	/* number must be > 0 */
#define F_PORT 0x08	/* 1..65535 */
#define F_SIGNED 0x10	/* float may be negative */
#define F_KEY_DEFAULT 0x20 /* enum key that may be absent (its first name), left out of
			    * labels at that name: a key added after files existed */

struct section;

struct field {
	const char *name;
	enum ftype type;
	enum fmerge merge;
	enum fcmp cmp;
	unsigned flags;
	enum ditto_hist_kind hist_kind;
	const char *const *enums;	/* FT_ENUM: NULL-terminated */
	const struct section *sub;	/* FT_OBJ, FT_ARR */
	const char *per;		/* CP_PER_FIELD */
};

struct vctx;

struct section {
	const char *name;
	const struct field *fields;
	size_t nfields;
	/* Rules across fields; NULL when none. */
	void (*check)(struct vctx *v, const struct dnode *obj);
	/* Bool field that must be true on both sides for compare to look inside. */
	const char *gate;
};

extern const struct section schema_root;
extern const struct section schema_meta, schema_service, schema_thread, schema_network,
	schema_syscall, schema_requests, schema_cpu, schema_observed, schema_load_point,
	schema_counters, schema_graph, schema_edge, schema_tuning, schema_iteration,
	schema_sockopt, schema_outbound, schema_external, schema_traces;

/* Enum name tables (index = C enum value), NULL-terminated. */
extern const char *const enum_framing[], *const enum_role[], *const enum_io_model[],
	*const enum_fd_kind[], *const enum_call_mode[], *const enum_call_order[],
	*const enum_edge_source[];

const struct field *schema_field(const struct section *s, const char *name);
/* Index of name in a NULL-terminated table, or -1. */
int enum_index(const char *const *names, const char *name);

/* "a:b:c" label of an array element from its F_KEY fields. */
void element_label(const struct section *s, const struct dnode *obj, struct dbuf *out);
/* all_keys: keys at their default (F_KEY_DEFAULT) are written too. */
void element_label_as(const struct section *s, const struct dnode *obj, bool all_keys,
		      struct dbuf *out);
/* Element of arr whose key fields equal those of obj, or NULL. */
struct dnode *element_match(const struct section *s, const struct dnode *arr,
			    const struct dnode *obj);

/* Validation context, shared by validate.c and the section checks. */
struct vctx {
	struct dbuf path;
	ditto_problem_fn problem;
	ditto_problem_fn warning;	/* NULL: warnings are not looked for */
	void *user;
	size_t problems;
	char first[1024];	/* "path: message" of the first problem */
	const struct dnode *service;	/* service being checked, for cross refs */
	const struct dnode *graph;
};
void vproblem(struct vctx *v, const char *field, const char *fmt, ...) DITTO_PRINTF(3, 4);
/* Something this library cannot use that leaves the model valid (a newer
 * writer's name, or a typo): reported, never counted as a problem. */
void vwarning(struct vctx *v, const char *field, const char *fmt, ...) DITTO_PRINTF(3, 4);

/* Whether key is an instruction-mix key "func.ops.mem.width.isa" with the
 * names the profiler writes (mix_key.c); else why not, in why. */
bool mix_key_check(const char *key, char *why, size_t len);

#endif /* DITTO_SCHEMA_H */
