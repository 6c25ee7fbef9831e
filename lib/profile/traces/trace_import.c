/* SPDX-License-Identifier: MIT */
/* Which importer reads a document, and the pieces every importer shares. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "trace_import.h"

/* By content, never by file name: a document's top-level shape tells the
 * three formats apart ("resourceSpans"; "data" whose traces have
 * "spans"; a list of spans, or of traces, with "traceId"). */
enum ditto_trace_format trace_detect(json_t *doc)
{
	if (json_is_object(doc)) {
		json_t *data = json_object_get(doc, "data");
		json_t *first = json_is_array(data) ? json_array_get(data, 0) : NULL;

		if (json_object_get(doc, "resourceSpans"))
			return DITTO_TRACES_OTLP_JSON;
		if (json_is_array(data) &&
		    (!first || json_object_get(first, "spans") || json_object_get(first, "traceID")))
			return DITTO_TRACES_JAEGER_JSON;
		return DITTO_TRACES_AUTO;
	}
	if (json_is_array(doc)) {
		json_t *first = json_array_get(doc, 0);

		/* /api/v2/traces answers a list of traces, each a list of
		 * spans; /api/v2/trace/ID one list of spans. */
		if (json_is_array(first))
			first = json_array_get(first, 0);
		if (!first || (json_is_object(first) && json_object_get(first, "traceId")))
			return DITTO_TRACES_ZIPKIN_JSON;
	}
	return DITTO_TRACES_AUTO;
}

static const char *format_says(enum ditto_trace_format f)
{
	switch (f) {
	case DITTO_TRACES_OTLP_JSON:
		return "OTLP JSON (resourceSpans)";
	case DITTO_TRACES_JAEGER_JSON:
		return "Jaeger JSON (data[].spans)";
	case DITTO_TRACES_ZIPKIN_JSON:
		return "a Zipkin v2 span list";
	default:
		return "no trace export this library reads";
	}
}

struct import_ctx {
	struct trace_set *set;
	enum ditto_trace_format fmt;
};

static int import_doc(json_t *doc, struct json_ctx *c, void *user)
{
	struct import_ctx *ic = user;
	enum ditto_trace_format seen = trace_detect(doc);
	enum ditto_trace_format fmt = ic->fmt == DITTO_TRACES_AUTO ? seen : ic->fmt;

	if (seen == DITTO_TRACES_AUTO && ic->fmt == DITTO_TRACES_AUTO)
		return json_fail(c, -DITTO_ECORRUPT, NULL,
				 "not a trace export: expected OTLP JSON (resourceSpans), Jaeger "
				 "JSON (data[].spans) or a Zipkin v2 span list");
	if (seen != fmt)
		return json_fail(c, -DITTO_ECORRUPT, NULL,
				 "not %s as the format given says: the content looks like %s",
				 format_says(fmt), format_says(seen));
	switch (fmt) {
	case DITTO_TRACES_OTLP_JSON:
		return otlp_json_doc(doc, c, ic->set);
	case DITTO_TRACES_JAEGER_JSON:
		return jaeger_json_doc(doc, c, ic->set);
	case DITTO_TRACES_ZIPKIN_JSON:
		return zipkin_json_doc(doc, c, ic->set);
	default:
		return json_fail(c, -EINVAL, NULL, "unknown trace format %d", (int)fmt);
	}
}

int trace_import_buf(struct trace_set *set, const char *buf, size_t len, const char *name,
		     enum ditto_trace_format fmt, const struct json_limits *lim)
{
	struct import_ctx ic = { set, fmt };

	if ((unsigned)fmt > DITTO_TRACES_ZIPKIN_JSON)
		return ditto_err(-EINVAL, "%s: unknown trace format %d", name, (int)fmt);
	return json_each_doc(buf, len, name, lim, import_doc, &ic);
}

int trace_import_file(struct trace_set *set, const char *path, enum ditto_trace_format fmt,
		      const struct json_limits *lim)
{
	char *buf;
	size_t len;
	int err = json_read_file(path, lim ? lim->max_bytes : 0, &buf, &len);

	if (err)
		return err;
	err = trace_import_buf(set, buf, len, path, fmt, lim);
	free(buf);
	if (!err)
		set->files++;
	return err;
}
