/* SPDX-License-Identifier: MIT */
/*
 * JSON files read under limits, for the trace importers: a file size, a
 * nesting depth and a count of values, all checked on the bytes before
 * jansson builds anything (jansson has no depth option of its own), and
 * both one document per file and JSON Lines (one document per line, as
 * the OpenTelemetry collector's file exporter writes). Errors name the
 * file, the line of the document and the JSON path of the value:
 * "traces.json:1: resourceSpans[3].scopeSpans[0].spans[12].startTimeUnixNano:
 * not a number". Shared by the stages (trace importers, deployment writer).
 */
#ifndef DITTO_JSON_BOUNDED_H
#define DITTO_JSON_BOUNDED_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSONB_MAX_BYTES ((size_t)256 << 20)	/* default file size bound */
#define JSONB_MAX_DEPTH 64u			/* nesting of [ and { */
#define JSONB_MAX_VALUES ((size_t)64 << 20)	/* values in one file */

struct json_limits {
	size_t max_bytes;	/* 0: JSONB_MAX_BYTES; never above INT_MAX (jansson's offsets) */
	unsigned max_depth;	/* 0: JSONB_MAX_DEPTH */
	size_t max_values;	/* 0: JSONB_MAX_VALUES */
};

/* Where a value is: the file, the line its document starts on, and its
 * path inside the document. */
struct json_ctx {
	const char *name;
	unsigned line;
	char path[256];
	size_t n;
};

/* Append ".key" or "[i]" to the path; returns the length to restore. */
size_t json_ctx_key(struct json_ctx *c, const char *key);
size_t json_ctx_index(struct json_ctx *c, size_t i);
void json_ctx_restore(struct json_ctx *c, size_t n);
/* Sets ditto_last_error() to "name:line: path[.key]: message" (key may be
 * NULL) and returns err. */
int json_fail(const struct json_ctx *c, int err, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Typed members of an object: an absent member or a null is "absent"
 * (NULL, *present false) unless required; any other type is an error
 * naming the member. Numbers come as JSON integers, as integral reals or
 * as strings of decimal digits (exports write 64-bit values both ways). */
int json_get_str(struct json_ctx *c, json_t *obj, const char *key, bool required,
		 const char **out);
int json_get_u64(struct json_ctx *c, json_t *obj, const char *key, bool required,
		 uint64_t *out, bool *present);
int json_get_array(struct json_ctx *c, json_t *obj, const char *key, bool required,
		   json_t **out);
int json_get_object(struct json_ctx *c, json_t *obj, const char *key, bool required,
		    json_t **out);
/* A value (not a member) as a u64, by the rules above. */
int json_value_u64(struct json_ctx *c, json_t *v, const char *key, uint64_t *out);

/* The whole file into a new buffer (NUL-terminated, free()), refusing
 * more than max_bytes (-DITTO_ELIMIT) without reading past it. */
int json_read_file(const char *path, size_t max_bytes, char **buf, size_t *len);

/* Called for each document of a buffer; a non-zero return stops. */
typedef int (*json_doc_fn)(json_t *doc, struct json_ctx *c, void *user);

/*
 * Check buf against the limits (depth, values; size when not read by
 * json_read_file), then decode its documents one after the other (one, or
 * several separated by white space: JSON Lines) and call fn for each.
 * -DITTO_ELIMIT past a limit, -DITTO_ECORRUPT for bytes that are not
 * JSON (the message says where), fn's error otherwise.
 */
int json_each_doc(const char *buf, size_t len, const char *name, const struct json_limits *lim,
		  json_doc_fn fn, void *user);
/* The same for a file of exactly one document (a second one is
 * -DITTO_ECORRUPT): the files libditto writes itself. */
int json_one_doc(const char *buf, size_t len, const char *name, const struct json_limits *lim,
		 json_doc_fn fn, void *user);

#endif
