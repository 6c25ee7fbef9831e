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
#include "trace_importers.h"
#include "trace_span.h"

/* What a document looks like, whatever it was said to be
 * (DITTO_TRACES_AUTO: like none of the three). */
enum ditto_trace_format trace_detect(json_t *doc);

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

#endif
