/* SPDX-License-Identifier: MIT */
/*
 * OTLP JSON from a buffer: the importer's parser (otlp_json.c, the trace
 * file importers) applied to one request body of the OTLP/HTTP receiver,
 * so the receiver and `ditto graph import` read JSON alike.
 */
#ifndef DITTO_OTLP_JSON_H
#define DITTO_OTLP_JSON_H

#include <stddef.h>

#include "trace_span.h"

/* Adds the spans of one OTLP JSON document (a TracesData /
 * ExportTraceServiceRequest object: {"resourceSpans": [...]}) to set: 0,
 * or a negative code with what is wrong and where in err. It does not
 * count set->files: the receiver counts its requests itself. */
int otlp_json_parse_buffer(const char *buf, size_t len, struct trace_set *set, char *err,
			   size_t errlen);

#endif
