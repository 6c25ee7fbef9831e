/* SPDX-License-Identifier: MIT */
/*
 * Trace exports into a trace_set: one importer per format, each taking one
 * decoded JSON document, and the detection that picks one by content.
 * Internal to the profile stage.
 */
#ifndef DITTO_TRACE_IMPORT_H
#define DITTO_TRACE_IMPORT_H

#include <ditto/ditto.h>
#include <ditto/profile.h>

#include "json_bounded.h"
#include "trace_span.h"

/* What a document looks like, whatever it was said to be
 * (DITTO_TRACES_AUTO: like none of the three). */
enum ditto_trace_format trace_detect(json_t *doc);

/* Each adds the document's spans to set; -DITTO_ECORRUPT naming the
 * place for a value of the wrong type or a malformed id, -DITTO_ELIMIT
 * past the set's bound. Spans with a field out of range (an end before
 * the start) are counted in set->rejected and skipped. */
int otlp_json_doc(json_t *doc, struct json_ctx *c, struct trace_set *set);
int jaeger_json_doc(json_t *doc, struct json_ctx *c, struct trace_set *set);
int zipkin_json_doc(json_t *doc, struct json_ctx *c, struct trace_set *set);

/*
 * Every document of buf (one, or JSON Lines) in format fmt: with
 * DITTO_TRACES_AUTO each document's content decides; a format given
 * explicitly that the content contradicts is an error saying what the
 * content looks like. name is used in messages.
 */
int trace_import_buf(struct trace_set *set, const char *buf, size_t len, const char *name,
		     enum ditto_trace_format fmt, const struct json_limits *lim);
/* The file at path, read under lim->max_bytes; counts set->files. */
int trace_import_file(struct trace_set *set, const char *path, enum ditto_trace_format fmt,
		      const struct json_limits *lim);

/* Hex ids of a member, named in the error ("not a hex id"); an absent or
 * empty parent id is 0. */
int trace_json_trace_id(struct json_ctx *c, json_t *obj, const char *key, uint8_t out[16]);
int trace_json_span_id(struct json_ctx *c, json_t *obj, const char *key, bool required,
		       uint64_t *out);
/* A time in microseconds as nanoseconds; an error past 2^64 ns. */
int trace_us_to_ns(struct json_ctx *c, const char *key, uint64_t us, uint64_t *ns);
/* Adds sp, turning the set's refusals into errors where they are errors
 * (-ENOSPC past its bound: -DITTO_ELIMIT naming the place; a span out of
 * range is only counted). */
int trace_add(struct trace_set *set, struct json_ctx *c, const struct trace_span *sp);

#endif
