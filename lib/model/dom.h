/* SPDX-License-Identifier: MIT */
/*
 * The model's document tree: every value of a msgpack document, known or
 * not, so unknown keys survive a load/save cycle. Histogram fields are
 * held as struct ditto_hist nodes once the schema has typed them.
 */
#ifndef DITTO_DOM_H
#define DITTO_DOM_H

#include "core_int.h"
#include "hist_int.h"

enum dn_type {
	DN_NIL = 1,
	DN_BOOL,
	DN_INT,		/* negative integers only; non-negative ones are DN_UINT */
	DN_UINT,
	DN_FLOAT,
	DN_STR,
	DN_BIN,
	DN_EXT,
	DN_ARR,
	DN_MAP,
	DN_HIST,
};

struct dnode;

struct dmember {
	char *key;
	struct dnode *val;
};

struct dnode {
	enum dn_type type;
	int8_t ext_type;		/* DN_EXT */
	bool detached;			/* DN_MAP of ditto_values_new(): no
					 * model owns it, its caller frees it */
	union {
		bool b;
		int64_t i;
		uint64_t u;
		double f;
		struct {
			char *p;	/* NUL-terminated for convenience */
			size_t len;
		} s;			/* DN_STR, DN_BIN, DN_EXT */
		struct {
			struct dnode **items;
			size_t n, cap;
		} a;
		struct {
			struct dmember *m;
			size_t n, cap;
		} m;
		struct ditto_hist *h;
	};
};

struct dnode *dn_new(enum dn_type type);
struct dnode *dn_str(const char *p, size_t len);
struct dnode *dn_cstr(const char *s);
struct dnode *dn_uint(uint64_t v);
struct dnode *dn_float(double v);
struct dnode *dn_bool(bool v);
void dn_free(struct dnode *n);
struct dnode *dn_dup(const struct dnode *n);
bool dn_equal(const struct dnode *a, const struct dnode *b);

/* Arrays: take ownership of v. */
int dn_push(struct dnode *arr, struct dnode *v);

/* Maps: lookup by key (map may be NULL: nothing found); set replaces
 * (freeing the old value) or appends, taking ownership of v (freed on
 * error; -EINVAL when map is NULL or no map). */
struct dnode *dn_get(const struct dnode *map, const char *key);
int dn_set(struct dnode *map, const char *key, struct dnode *v);
/* Append without checking for an existing key (decoder). */
int dn_append(struct dnode *map, char *key, struct dnode *v);
/* Existing child map/array/hist, or a new empty one stored under key
 * (replacing a value of another type). NULL on no memory, or when map is
 * NULL or no map. For writers only: readers take dn_sub(). */
struct dnode *dn_child(struct dnode *map, const char *key, enum dn_type type);
/* Existing child of that type, or NULL: what dn_child() would return
 * without creating anything (map may be NULL). */
struct dnode *dn_sub(const struct dnode *map, const char *key, enum dn_type type);

/* Typed reads with defaults when absent or of another type. */
uint64_t dn_get_u64(const struct dnode *map, const char *key);
double dn_get_f64(const struct dnode *map, const char *key);
bool dn_get_bool(const struct dnode *map, const char *key);
const char *dn_get_str(const struct dnode *map, const char *key); /* "" if absent */
/* Typed writes. */
int dn_set_u64(struct dnode *map, const char *key, uint64_t v);
int dn_set_f64(struct dnode *map, const char *key, double v);
int dn_set_bool(struct dnode *map, const char *key, bool v);
int dn_set_str(struct dnode *map, const char *key, const char *v);

/* Numeric value of a UINT/INT/FLOAT node as a double. */
bool dn_number(const struct dnode *n, double *out);
const char *dn_type_name(enum dn_type t);

#endif /* DITTO_DOM_H */
