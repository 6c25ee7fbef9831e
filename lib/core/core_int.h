/* SPDX-License-Identifier: MIT */
/*
 * Internal interface of lib/core, shared by every stage: error plumbing,
 * logging, growable buffers, the PRNG and options-struct checks.
 */
#ifndef DITTO_CORE_INT_H
#define DITTO_CORE_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdbool.h>

#include <ditto/ditto.h>

#define DITTO_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define ARRAY_SIZE(x) (sizeof(x) / sizeof((x)[0]))

/* --- errors: set the thread-local message and return err (negative) --- */
int ditto_err(int err, const char *fmt, ...) DITTO_PRINTF(2, 3);
int ditto_verr(int err, const char *fmt, va_list ap) DITTO_PRINTF(2, 0);
/* Prefix the current thread-local message with "prefix: ". */
void ditto_err_prefix(const char *fmt, ...) DITTO_PRINTF(1, 2);
void ditto_err_clear(void);

/* --- logging --- */
void ditto_log(enum ditto_log_level level, const char *fmt, ...) DITTO_PRINTF(2, 3);
#define ditto_warn(...) ditto_log(DITTO_LOG_WARN, __VA_ARGS__)
#define ditto_debug(...) ditto_log(DITTO_LOG_DEBUG, __VA_ARGS__)

/*
 * --- numbers for machines: printf/strtod in the "C" locale whatever the
 * caller's LC_NUMERIC (c_locale.c). Everything the library writes for a
 * program to read (JSON, SVG, generated sources) goes through these or
 * through dbuf_printf(), which uses them.
 */
int c_vsnprintf(char *buf, size_t len, const char *fmt, va_list ap) DITTO_PRINTF(3, 0);
int c_snprintf(char *buf, size_t len, const char *fmt, ...) DITTO_PRINTF(3, 4);
int c_fprintf(FILE *f, const char *fmt, ...) DITTO_PRINTF(2, 3);
double c_strtod(const char *s, char **end);

/* --- growable byte buffer; always NUL-terminated when len > 0 --- */
struct dbuf {
	char *data;
	size_t len;
	size_t cap;
	bool oom;	/* sticky: an append failed */
};
void dbuf_init(struct dbuf *b);
void dbuf_free(struct dbuf *b);
bool dbuf_reserve(struct dbuf *b, size_t extra);
void dbuf_put(struct dbuf *b, const void *p, size_t n);
void dbuf_puts(struct dbuf *b, const char *s);
void dbuf_putc(struct dbuf *b, char c);
/* Formats in the "C" locale (see c_snprintf): a dbuf holds machine-read text. */
void dbuf_printf(struct dbuf *b, const char *fmt, ...) DITTO_PRINTF(2, 3);
/* Hand the buffer (NUL-terminated) to the caller; NULL after an OOM. */
char *dbuf_steal(struct dbuf *b);
/* s[0..len) as a JSON string literal: quote, backslash and control bytes
 * escaped, valid UTF-8 verbatim, any other byte as U+FFFD (json_str.c). */
void dbuf_put_json_str(struct dbuf *b, const char *s, size_t len);

/* --- seeded PRNG (xoshiro256**), deterministic for a seed --- */
struct ditto_rng {
	uint64_t s[4];
};
void ditto_rng_seed(struct ditto_rng *r, uint64_t seed);
uint64_t ditto_rng_next(struct ditto_rng *r);
/* Uniform in [0, n); n > 0. */
uint64_t ditto_rng_below(struct ditto_rng *r, uint64_t n);
/* Uniform in [0, 1). */
double ditto_rng_double(struct ditto_rng *r);

/*
 * Options structs: `known` is sizeof the struct this library was built
 * with. A NULL opts is fine; sz smaller than a size_t is not; bytes past
 * `known` in a newer caller's struct must be zero.
 */
int ditto_opts_check(const void *opts, size_t known, const char *type);
#define OPTS_CHECK(opts, type) ditto_opts_check((opts), sizeof(struct type), #type)
/* Field of an options struct if the caller's struct has it, else dflt. */
#define OPTS_HAS(opts, field) \
	((opts) && (opts)->sz >= offsetof(__typeof__(*(opts)), field) + sizeof((opts)->field))
#define OPTS_GET(opts, field, dflt) (OPTS_HAS(opts, field) ? (opts)->field : (dflt))

/* Checked arithmetic for counts. */
static inline bool add_overflows(uint64_t a, uint64_t b, uint64_t *out)
{
	return __builtin_add_overflow(a, b, out);
}

/*
 * NULL when s (len bytes) is a valid model name (DITTO_NAME_MAX in
 * model.h: 1..255 bytes of UTF-8, no NUL, no control character but tab
 * and newline), else a phrase saying why not ("is empty", ...).
 */
const char *name_problem(const char *s, size_t len);
/* The same rule without the length limits: any other string of a model. */
const char *text_problem(const char *s, size_t len);
/* msg with control bytes (C0, DEL, C1) shown as \xNN, in place: every
 * message that quotes a name from a model or a target goes through it. */
void text_show_safely(char *msg, size_t size);

/* ---- idmap.c: open-addressing map from 64-bit keys to 32-bit ids ---- */
struct idmap {
	uint64_t *keys;
	uint32_t *vals;	/* IDMAP_EMPTY marks a free slot */
	size_t cap;	/* power of two, or 0 */
	size_t n;
};
#define IDMAP_EMPTY UINT32_MAX
int idmap_put(struct idmap *m, uint64_t key, uint32_t val);
bool idmap_get(const struct idmap *m, uint64_t key, uint32_t *val);
void idmap_free(struct idmap *m);

#endif /* DITTO_CORE_INT_H */
