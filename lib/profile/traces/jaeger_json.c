/* SPDX-License-Identifier: MIT */
/*
 * Jaeger JSON, as the query service's /api/traces answers (and the UI
 * downloads):
 *   {"data":[{"traceID","spans":[{"traceID","spanID","operationName",
 *     "references":[{"refType":"CHILD_OF"|"FOLLOWS_FROM","traceID","spanID"}],
 *     "startTime" (us),"duration" (us),"tags":[{"key","type","value"}],
 *     "processID"}],"processes":{"p1":{"serviceName","tags":[..]}}}]}
 * The kind is the span.kind tag. Of several references the first CHILD_OF
 * is the parent; with none, the first FOLLOWS_FROM is, and marks the span
 * as not waited for. A reference into another trace leaves a parent no
 * span of this trace has: an orphan. Sampling: Jaeger's clients record
 * sampler.type and sampler.param as tags (on the root span, or the
 * process); "probabilistic" declares param as the ratio, "const" 1 as 1.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "trace_importers.h"
#include "trace_json.h"

struct sampler {
	const char *type;
	double param;
	bool have_param;
};

static void declare(struct trace_set *set, const struct sampler *s)
{
	if (!s->type || !s->have_param)
		return;
	if (strcmp(s->type, "probabilistic") == 0 ||
	    (strcmp(s->type, "const") == 0 && s->param == 1))
		trace_set_declare_ratio(set, s->param);
}

static enum span_kind kind_of(const char *v)
{
	static const struct {
		const char *name;
		enum span_kind kind;
	} kinds[] = { { "server", SPAN_SERVER },     { "client", SPAN_CLIENT },
		      { "producer", SPAN_PRODUCER }, { "consumer", SPAN_CONSUMER },
		      { "internal", SPAN_INTERNAL } };

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(v, kinds[i].name) == 0)
			return kinds[i].kind;
	return SPAN_UNSPECIFIED;
}

/* One tag: its value is a string, a number or a bool whatever "type"
 * says (Jaeger writes int64 as a JSON number). sp may be NULL (process
 * tags, where only the sampler matters besides service attributes). */
static int apply_tag(struct json_ctx *c, json_t *tag, struct trace_span *sp, struct sampler *smp)
{
	const char *key;
	json_t *v;
	int err;

	if (!json_is_object(tag))
		return json_fail(c, -DITTO_ECORRUPT, NULL, "not an object");
	if ((err = json_get_str(c, tag, "key", true, &key)))
		return err;
	v = json_object_get(tag, "value");
	if (strcmp(key, "sampler.type") == 0 && json_is_string(v)) {
		smp->type = json_string_value(v);
	} else if (strcmp(key, "sampler.param") == 0) {
		if (json_is_number(v)) {
			smp->param = json_number_value(v);
			smp->have_param = true;
		} else if (json_is_string(v)) {
			char *end;

			smp->param = strtod(json_string_value(v), &end);
			smp->have_param = end != json_string_value(v) && !*end;
		}
	} else if (sp && strcmp(key, "span.kind") == 0 && json_is_string(v)) {
		sp->kind = kind_of(json_string_value(v));
	} else if (sp && json_is_string(v)) {
		trace_span_attr(sp, key, json_string_value(v), 0);
	} else if (sp && json_is_integer(v) && json_integer_value(v) >= 0) {
		trace_span_attr(sp, key, NULL, json_integer_value(v));
	} else if (sp && json_is_real(v) && json_real_value(v) >= 0 &&
		   json_real_value(v) < 9.2e18 && floor(json_real_value(v)) == json_real_value(v)) {
		trace_span_attr(sp, key, NULL, (int64_t)json_real_value(v));
	}
	return 0;
}

static int apply_tags(struct json_ctx *c, json_t *obj, struct trace_span *sp, struct sampler *smp)
{
	json_t *tags, *tag;
	size_t i;
	int err = json_get_array(c, obj, "tags", false, &tags);

	if (err || !tags)
		return err;
	size_t at = json_ctx_key(c, "tags");

	json_array_foreach(tags, i, tag) {
		size_t at2;

		if (i >= TRACE_MAX_ATTRS)
			break;
		at2 = json_ctx_index(c, i);
		err = apply_tag(c, tag, sp, smp);
		json_ctx_restore(c, at2);
		if (err)
			break;
	}
	json_ctx_restore(c, at);
	return err;
}

/* The parent from the references (see the header comment): pick, then
 * read the one picked. */
static int parent_of(struct json_ctx *c, json_t *span, struct trace_span *sp)
{
	json_t *refs, *ref;
	size_t i, chosen = SIZE_MAX;
	bool follows = false;
	int err = json_get_array(c, span, "references", false, &refs);

	if (err || !refs)
		return err;
	size_t at = json_ctx_key(c, "references");

	json_array_foreach(refs, i, ref) {
		const char *type = NULL;
		size_t at2 = json_ctx_index(c, i);

		err = json_is_object(ref) ? json_get_str(c, ref, "refType", true, &type)
					  : json_fail(c, -DITTO_ECORRUPT, NULL, "not an object");
		if (!err && strcmp(type, "CHILD_OF") == 0) {
			if (chosen == SIZE_MAX || follows) {
				chosen = i;
				follows = false;
			}
		} else if (!err && strcmp(type, "FOLLOWS_FROM") == 0) {
			if (chosen == SIZE_MAX) {
				chosen = i;
				follows = true;
			}
		} else if (!err) {
			err = json_fail(c, -DITTO_ECORRUPT, "refType", "'%.32s' is no reference type",
					type);
		}
		json_ctx_restore(c, at2);
		if (err)
			break;
	}
	if (!err && chosen != SIZE_MAX) {
		uint8_t tid[16];
		size_t at2 = json_ctx_index(c, chosen);

		ref = json_array_get(refs, chosen);
		if (!(err = trace_json_span_id(c, ref, "spanID", true, &sp->parent_id)) &&
		    !(err = trace_json_trace_id(c, ref, "traceID", tid)))
			sp->parent_elsewhere = memcmp(tid, sp->trace_id, 16) != 0;
		sp->follows_from = follows;
		json_ctx_restore(c, at2);
	}
	json_ctx_restore(c, at);
	return err;
}

static int one_span(struct json_ctx *c, json_t *span, json_t *processes, struct trace_set *set)
{
	struct sampler smp = { 0 };
	struct trace_span sp;
	const char *pid;
	json_t *proc = NULL;
	uint64_t start, dur;
	int err;

	if (!json_is_object(span))
		return json_fail(c, -DITTO_ECORRUPT, NULL, "not an object");
	trace_span_init(&sp);
	if ((err = trace_json_trace_id(c, span, "traceID", sp.trace_id)) ||
	    (err = trace_json_span_id(c, span, "spanID", true, &sp.span_id)) ||
	    (err = json_get_str(c, span, "operationName", false, (const char **)&sp.name)) ||
	    (err = json_get_u64(c, span, "startTime", true, &start, NULL)) ||
	    (err = json_get_u64(c, span, "duration", false, &dur, NULL)) ||
	    (err = trace_us_to_ns(c, "startTime", start, &sp.start_ns)) ||
	    (err = trace_us_to_ns(c, "duration", dur, &sp.end_ns)) ||
	    (err = parent_of(c, span, &sp)) || (err = apply_tags(c, span, &sp, &smp)) ||
	    (err = json_get_str(c, span, "processID", false, &pid)))
		return err;
	if (sp.end_ns > UINT64_MAX - sp.start_ns)
		return json_fail(c, -DITTO_ECORRUPT, "duration", "ends past 2^64 ns");
	sp.end_ns += sp.start_ns;
	/* The process: by id in the trace's processes, or inline (older
	 * exports). */
	if (pid && processes)
		proc = json_object_get(processes, pid);
	if (!proc && (err = json_get_object(c, span, "process", false, &proc)))
		return err;
	if (pid && !proc)
		return json_fail(c, -DITTO_ECORRUPT, "processID", "'%.64s' is in no processes",
				 pid);
	if (proc) {
		const char *service;
		size_t at = json_ctx_key(c, "process");

		err = json_is_object(proc) ? json_get_str(c, proc, "serviceName", false, &service)
					   : json_fail(c, -DITTO_ECORRUPT, NULL, "not an object");
		if (!err)
			err = apply_tags(c, proc, NULL, &smp);
		json_ctx_restore(c, at);
		if (err)
			return err;
		sp.service = (char *)service;
	}
	if (!sp.service || !*sp.service)
		sp.service = "unknown_service";
	declare(set, &smp);
	return trace_add(set, c, &sp);
}

static int one_trace(struct json_ctx *c, json_t *trace, struct trace_set *set)
{
	json_t *spans, *processes, *span;
	size_t i;
	int err;

	if (!json_is_object(trace))
		return json_fail(c, -DITTO_ECORRUPT, NULL, "not an object");
	if ((err = json_get_array(c, trace, "spans", true, &spans)) ||
	    (err = json_get_object(c, trace, "processes", false, &processes)))
		return err;
	size_t at = json_ctx_key(c, "spans");

	json_array_foreach(spans, i, span) {
		size_t at2 = json_ctx_index(c, i);

		err = one_span(c, span, processes, set);
		json_ctx_restore(c, at2);
		if (err)
			break;
	}
	json_ctx_restore(c, at);
	return err;
}

int jaeger_json_doc(json_t *doc, struct json_ctx *c, struct trace_set *set)
{
	json_t *data, *trace;
	size_t i;
	int err = json_get_array(c, doc, "data", true, &data);

	if (err)
		return err;
	size_t at = json_ctx_key(c, "data");

	json_array_foreach(data, i, trace) {
		size_t at2 = json_ctx_index(c, i);

		err = one_trace(c, trace, set);
		json_ctx_restore(c, at2);
		if (err)
			break;
	}
	json_ctx_restore(c, at);
	return err;
}
