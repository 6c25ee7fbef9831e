/* SPDX-License-Identifier: MIT */
/* One importer per format, each taking one decoded JSON document (internal
 * to the profile stage; trace_import.c picks one). */
#ifndef DITTO_TRACE_IMPORTERS_H
#define DITTO_TRACE_IMPORTERS_H

#include "json_bounded.h"
#include "trace_span.h"

/* Each adds the document's spans to set; -DITTO_ECORRUPT naming the
 * place for a value of the wrong type or a malformed id, -DITTO_ELIMIT
 * past the set's bound. Spans with a field out of range (an end before
 * the start) are counted in set->rejected and skipped. */
int otlp_json_doc(json_t *doc, struct json_ctx *c, struct trace_set *set);
int jaeger_json_doc(json_t *doc, struct json_ctx *c, struct trace_set *set);
int zipkin_json_doc(json_t *doc, struct json_ctx *c, struct trace_set *set);

#endif
