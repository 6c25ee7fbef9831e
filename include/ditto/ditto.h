/* SPDX-License-Identifier: MIT */
/*
 * libditto: clone a networked cloud service from a statistical model of it.
 *
 * This umbrella header declares what every stage shares: version, error
 * codes, the thread-local error message, logging, the options-struct
 * convention and the histogram type. It includes the stage headers
 * (model.h, profile.h, synth.h, tune.h).
 *
 * Conventions (see DESIGN.md):
 *  - functions return 0 or a negative error code (-errno or -DITTO_E*);
 *    ditto_strerror() names a code, ditto_last_error() gives the message of
 *    the last failure on the calling thread, with context;
 *  - objects are opaque; ditto_X_free(NULL) is a no-op;
 *  - memory the library hands out as a plain buffer is released with
 *    ditto_free(); borrowed pointers stay valid until their owner is freed;
 *  - distinct objects may be used from distinct threads; one object must not
 *    be used from two threads at once without the caller's lock.
 */
#ifndef DITTO_DITTO_H
#define DITTO_DITTO_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h> /* memset in DITTO_OPTS */

#include <ditto/version.h> /* generated from the build's project version */

#ifdef __cplusplus
extern "C" {
#endif

#ifndef DITTO_API
#define DITTO_API __attribute__((visibility("default")))
#endif

/* ------------------------------------------------------------------ */
/* Version                                                              */
/* ------------------------------------------------------------------ */

/* DITTO_VERSION_MAJOR, _MINOR, _PATCH, _STRING and _NUMBER come from the
 * generated <ditto/version.h> included above. */

/* Version of the library actually loaded, "MAJOR.MINOR.PATCH". Static string. */
DITTO_API const char *ditto_version(void);
/* Same as DITTO_VERSION_NUMBER, for the loaded library. */
DITTO_API unsigned ditto_version_number(void);

/* ------------------------------------------------------------------ */
/* Errors                                                               */
/* ------------------------------------------------------------------ */

/*
 * Library-specific error codes, returned negated (-DITTO_ECORRUPT). They
 * start above the errno range so that -errno codes (-ENOMEM, -EINVAL,
 * -ENOENT, -EACCES, ...) can be returned as they are.
 */
enum ditto_error {
	DITTO_ECORRUPT = 4000,  /* input is not well-formed (bad msgpack, truncated) */
	DITTO_ESCHEMA = 4001,   /* model schema version not supported by this library */
	DITTO_EINVALID = 4002,  /* model is well-formed but breaks a rule (see message) */
	DITTO_ELIMIT = 4003,    /* input exceeds a safety limit (size, depth, count) */
	DITTO_EMISMATCH = 4004, /* objects cannot be combined (merge of conflicting models) */
	DITTO_ENOTFOUND = 4005, /* no such element (path, service, key) */
	DITTO_ETYPE = 4006,     /* element exists but has another type than asked */
	DITTO_EOPTS = 4007,     /* options struct has unknown non-zero fields or bad sz */
	DITTO_EBUILD = 4008,    /* a generated clone failed to build (see message) */
};

/*
 * Static description of an error code (negative or positive). Never NULL;
 * unknown codes give "unknown error".
 */
DITTO_API const char *ditto_strerror(int err);

/*
 * Message of the last error raised on the calling thread, with context
 * (for example "model.msgpack: services[0].threads[1].count: expected an
 * unsigned integer, got a string"). Valid until the next libditto call on
 * this thread. Empty string when no error was recorded.
 */
DITTO_API const char *ditto_last_error(void);

/* Release a buffer or string the library allocated for the caller. NULL ok. */
DITTO_API void ditto_free(void *ptr);

/* ------------------------------------------------------------------ */
/* Logging                                                              */
/* ------------------------------------------------------------------ */

enum ditto_log_level {
	DITTO_LOG_ERROR = 0,
	DITTO_LOG_WARN = 1,
	DITTO_LOG_INFO = 2,
	DITTO_LOG_DEBUG = 3,
};

/* Receives one message (no trailing newline). Called from any thread. */
typedef void (*ditto_log_fn)(enum ditto_log_level level, const char *msg, void *user);

/*
 * Route library messages at or below max_level to fn (NULL restores the
 * default: warnings and errors to stderr). Returns the previous callback.
 * Process-wide; set it before using the library from several threads.
 */
DITTO_API ditto_log_fn ditto_set_log(ditto_log_fn fn, void *user,
				     enum ditto_log_level max_level);

/* ------------------------------------------------------------------ */
/* Options structs                                                      */
/* ------------------------------------------------------------------ */

/*
 * Every options struct starts with `size_t sz`. Declare and initialise one
 * with DITTO_OPTS so that sz is right and unset fields are zero:
 *
 *     DITTO_OPTS(ditto_json_opts, jo, .pretty = true);
 *     ditto_model_to_json(m, &jo, &text);
 *
 * A library older than the header reads only the fields that fit in sz and
 * fails with -DITTO_EOPTS if a field it does not know is non-zero. A NULL
 * options pointer means all defaults.
 */
#define DITTO_OPTS(TYPE, NAME, ...)                                   \
	struct TYPE NAME = ({                                          \
		memset(&NAME, 0, sizeof(struct TYPE));                 \
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ }; \
	})

/* ------------------------------------------------------------------ */
/* Histograms                                                           */
/* ------------------------------------------------------------------ */

/*
 * The one histogram type of the model. It holds counts, not probabilities,
 * so histograms of several runs merge by addition. Three bucket schemes:
 *
 *  DITTO_HIST_LOG2    sizes and distances; bucket 0 holds the value 0 and
 *                     bucket k (1..64) holds [2^(k-1), 2^k - 1].
 *  DITTO_HIST_EXACT   small enumerations (flags, bins); one bucket per value.
 *  DITTO_HIST_LOGLIN  latencies; every power of two split into 2^precision
 *                     linear sub-buckets (precision 1..8), so a bucket is
 *                     never wider than 1/2^precision of its values.
 *
 * Buckets are stored sparsely; memory is proportional to distinct buckets.
 */
enum ditto_hist_kind {
	DITTO_HIST_LOG2 = 1,
	DITTO_HIST_EXACT = 2,
	DITTO_HIST_LOGLIN = 3,
};

struct ditto_hist;

/* New empty histogram; precision is used by DITTO_HIST_LOGLIN only (0 = 4).
 * NULL on bad arguments or no memory (see ditto_last_error()). */
DITTO_API struct ditto_hist *ditto_hist_new(enum ditto_hist_kind kind, unsigned precision);
DITTO_API void ditto_hist_free(struct ditto_hist *h);
/* Deep copy, NULL on no memory. */
DITTO_API struct ditto_hist *ditto_hist_dup(const struct ditto_hist *h);

DITTO_API enum ditto_hist_kind ditto_hist_kind(const struct ditto_hist *h);
DITTO_API unsigned ditto_hist_precision(const struct ditto_hist *h);

/* Count `count` occurrences of `value`. -EOVERFLOW if a count would wrap;
 * -EINVAL into NULL or into a model's read-only stand-in for a histogram
 * it lacks (see model.h: the field's _ensure function creates it). */
DITTO_API int ditto_hist_add(struct ditto_hist *h, uint64_t value, uint64_t count);
/* Add src into dst; -DITTO_EMISMATCH if kinds or precisions differ;
 * -EINVAL into a model's read-only stand-in, as ditto_hist_add(). */
DITTO_API int ditto_hist_merge(struct ditto_hist *dst, const struct ditto_hist *src);
/* Remove every bucket. */
DITTO_API void ditto_hist_clear(struct ditto_hist *h);

/* Sum of all counts, saturating at UINT64_MAX. */
DITTO_API uint64_t ditto_hist_total(const struct ditto_hist *h);
/* Number of non-empty buckets, and bucket i (ascending) as an inclusive
 * value range with its count. -DITTO_ENOTFOUND when i is out of range. */
DITTO_API size_t ditto_hist_bucket_count(const struct ditto_hist *h);
DITTO_API int ditto_hist_bucket(const struct ditto_hist *h, size_t i, uint64_t *lo,
				uint64_t *hi, uint64_t *count);

/*
 * Value at quantile q in [0, 1], interpolated linearly inside its bucket
 * (exact for DITTO_HIST_EXACT). 0 for an empty histogram.
 */
DITTO_API double ditto_hist_quantile(const struct ditto_hist *h, double q);
/* Mean, taking each bucket at its midpoint. 0 for an empty histogram. */
DITTO_API double ditto_hist_mean(const struct ditto_hist *h);
/*
 * Total-variation distance between the two normalised distributions:
 * 0 when identical, 1 when disjoint. Two empty histograms are at 0, an
 * empty and a non-empty one at 1. -1 if kinds or precisions differ.
 */
DITTO_API double ditto_hist_distance(const struct ditto_hist *a, const struct ditto_hist *b);

#ifdef __cplusplus
}
#endif

#include <ditto/model.h>
#include <ditto/profile.h>
#include <ditto/synth.h>
#include <ditto/tune.h>

#endif /* DITTO_DITTO_H */
