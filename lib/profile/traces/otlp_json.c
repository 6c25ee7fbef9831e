/* SPDX-License-Identifier: MIT */
/*
 * OTLP JSON (the OpenTelemetry protocol's JSON encoding, as the collector's
 * file exporter writes it, one document per line):
 *   {"resourceSpans":[{"resource":{"attributes":[{"key":..,"value":{..}}]},
 *     "scopeSpans":[{"spans":[{"traceId","spanId","parentSpanId","name",
 *       "kind","startTimeUnixNano","endTimeUnixNano","attributes",
 *       "traceState",...}]}]}]}
 * Older senders say "instrumentationLibrarySpans" for "scopeSpans". Ids
 * are hex (the OTLP spec's JSON rule, not protobuf JSON's base64); times
 * and intValue are strings or numbers; kind is the enum's number or name.
 * Links are not parents.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "trace_importers.h"
#include "trace_json.h"

static const char *const kind_names[] = {
	"SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER",
	"SPAN_KIND_CLIENT",	 "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER",
};

static int get_kind(struct json_ctx *c, json_t *span, enum span_kind *out)
{
	json_t *v = json_object_get(span, "kind");

	*out = SPAN_UNSPECIFIED;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_string(v)) {
		for (size_t i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
			if (strcmp(json_string_value(v), kind_names[i]) == 0) {
				*out = (enum span_kind)i;
				return 0;
			}
		return json_fail(c, -DITTO_ECORRUPT, "kind", "'%.64s' is no span kind",
				 json_string_value(v));
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 5)
		return json_fail(c, -DITTO_ECORRUPT, "kind", "not a span kind (0 to 5)");
	*out = (enum span_kind)json_integer_value(v);
	return 0;
}

/* One attribute {"key":..,"value":{"stringValue"|"intValue"|...}}; values
 * of other types (bool, arrays, bytes) say nothing the graph uses. */
static int apply_attr(struct json_ctx *c, json_t *kv, struct trace_span *sp)
{
	const char *key, *str;
	json_t *val, *v;
	uint64_t n;
	int err;

	if (!json_is_object(kv))
		return json_fail(c, -DITTO_ECORRUPT, NULL, "not an object");
	if ((err = json_get_str(c, kv, "key", true, &key)) ||
	    (err = json_get_object(c, kv, "value", false, &val)))
		return err;
	if (!val)
		return 0;
	size_t at = json_ctx_key(c, "value");

	if ((v = json_object_get(val, "stringValue"))) {
		if ((err = json_get_str(c, val, "stringValue", false, &str)))
			goto out;
		trace_span_attr(sp, key, str, 0);
	} else if ((v = json_object_get(val, "intValue"))) {
		/* A negative intValue names no size or port. */
		if (json_is_integer(v) && json_integer_value(v) < 0)
			goto out;
		if ((err = json_value_u64(c, v, "intValue", &n)))
			goto out;
		trace_span_attr(sp, key, NULL, n > INT64_MAX ? -1 : (int64_t)n);
	} else if ((v = json_object_get(val, "doubleValue"))) {
		if (!json_is_number(v)) {
			err = json_fail(c, -DITTO_ECORRUPT, "doubleValue", "not a number");
			goto out;
		}
		double d = json_number_value(v);

		if (d >= 0 && d < 9.2e18 && floor(d) == d)
			trace_span_attr(sp, key, NULL, (int64_t)d);
	}
out:
	json_ctx_restore(c, at);
	return err;
}

static int apply_attrs(struct json_ctx *c, json_t *obj, struct trace_span *sp)
{
	json_t *attrs, *kv;
	size_t i;
	int err = json_get_array(c, obj, "attributes", false, &attrs);

	if (err || !attrs)
		return err;
	size_t at = json_ctx_key(c, "attributes");

	json_array_foreach(attrs, i, kv) {
		size_t at2;

		if (i >= TRACE_MAX_ATTRS)
			break;
		at2 = json_ctx_index(c, i);
		err = apply_attr(c, kv, sp);
		json_ctx_restore(c, at2);
		if (err)
			break;
	}
	json_ctx_restore(c, at);
	return err;
}


static int one_span(struct json_ctx *c, json_t *span, const char *service,
		    struct trace_set *set)
{
	struct trace_span sp;
	const char *ts;
	int err;

	if (!json_is_object(span))
		return json_fail(c, -DITTO_ECORRUPT, NULL, "not an object");
	trace_span_init(&sp);
	if ((err = trace_json_trace_id(c, span, "traceId", sp.trace_id)) ||
	    (err = trace_json_span_id(c, span, "spanId", true, &sp.span_id)) ||
	    (err = trace_json_span_id(c, span, "parentSpanId", false, &sp.parent_id)) ||
	    (err = json_get_str(c, span, "name", false, (const char **)&sp.name)) ||
	    (err = get_kind(c, span, &sp.kind)) ||
	    (err = json_get_u64(c, span, "startTimeUnixNano", true, &sp.start_ns, NULL)) ||
	    (err = json_get_u64(c, span, "endTimeUnixNano", true, &sp.end_ns, NULL)) ||
	    (err = json_get_str(c, span, "traceState", false, &ts)) ||
	    (err = apply_attrs(c, span, &sp)))
		return err;
	/* The resource names the service; a span attribute does not. */
	sp.service = (char *)service;
	trace_declare_threshold(set, ts);
	return trace_add(set, c, &sp);
}

static int scope_spans(struct json_ctx *c, json_t *ss, const char *service,
		       struct trace_set *set)
{
	json_t *spans, *span;
	size_t i;
	int err;

	if (!json_is_object(ss))
		return json_fail(c, -DITTO_ECORRUPT, NULL, "not an object");
	if ((err = json_get_array(c, ss, "spans", false, &spans)) || !spans)
		return err;
	size_t at = json_ctx_key(c, "spans");

	json_array_foreach(spans, i, span) {
		size_t at2 = json_ctx_index(c, i);

		err = one_span(c, span, service, set);
		json_ctx_restore(c, at2);
		if (err)
			break;
	}
	json_ctx_restore(c, at);
	return err;
}

/* service.name of the resource; OpenTelemetry's own default when absent. */
static int resource_service(struct json_ctx *c, json_t *rs, const char **service)
{
	struct trace_span probe;
	json_t *res;
	int err = json_get_object(c, rs, "resource", false, &res);

	*service = "unknown_service";
	if (err || !res)
		return err;
	trace_span_init(&probe);
	size_t at = json_ctx_key(c, "resource");

	err = apply_attrs(c, res, &probe);
	json_ctx_restore(c, at);
	if (!err && probe.service && *probe.service)
		*service = probe.service;
	return err;
}

static int resource_spans(struct json_ctx *c, json_t *rs, struct trace_set *set)
{
	static const char *const scope_keys[] = { "scopeSpans", "instrumentationLibrarySpans" };
	const char *service;
	int err;

	if (!json_is_object(rs))
		return json_fail(c, -DITTO_ECORRUPT, NULL, "not an object");
	if ((err = resource_service(c, rs, &service)))
		return err;
	for (size_t k = 0; k < 2; k++) {
		json_t *arr, *ss;
		size_t i;

		if ((err = json_get_array(c, rs, scope_keys[k], false, &arr)))
			return err;
		if (!arr)
			continue;
		size_t at = json_ctx_key(c, scope_keys[k]);

		json_array_foreach(arr, i, ss) {
			size_t at2 = json_ctx_index(c, i);

			err = scope_spans(c, ss, service, set);
			json_ctx_restore(c, at2);
			if (err)
				break;
		}
		json_ctx_restore(c, at);
		if (err)
			return err;
	}
	return 0;
}

int otlp_json_doc(json_t *doc, struct json_ctx *c, struct trace_set *set)
{
	json_t *arr, *rs;
	size_t i;
	int err = json_get_array(c, doc, "resourceSpans", true, &arr);

	if (err)
		return err;
	size_t at = json_ctx_key(c, "resourceSpans");

	json_array_foreach(arr, i, rs) {
		size_t at2 = json_ctx_index(c, i);

		err = resource_spans(c, rs, set);
		json_ctx_restore(c, at2);
		if (err)
			break;
	}
	json_ctx_restore(c, at);
	return err;
}
