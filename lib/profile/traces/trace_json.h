/* SPDX-License-Identifier: MIT */
/* The pieces every trace importer shares (internal to the profile stage). */
#ifndef DITTO_TRACE_JSON_H
#define DITTO_TRACE_JSON_H

#include "json_bounded.h"
#include "trace_span.h"

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
