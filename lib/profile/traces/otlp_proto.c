/* SPDX-License-Identifier: MIT */
/* OTLP protobuf export requests into trace spans (see otlp_proto.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "otlp_proto.h"
#include "otlp_trace.pb-c.h"

/*
 * protobuf-c has no limit of its own: a body of N bytes may become a tree
 * of many times N bytes of structs (every 2-byte empty span is a struct of
 * a hundred bytes). This allocator refuses past a budget, and
 * protobuf_c_message_unpack() then fails cleanly. Nesting depth needs no
 * limit: the messages of otlp_trace.proto do not recurse (AnyValue's
 * array and kvlist values are left out, skipped as unknown fields).
 */
struct budget {
	size_t left;
	bool exceeded;
};

static void *budget_alloc(void *data, size_t size)
{
	struct budget *b = data;

	if (size > b->left) {
		b->exceeded = true;
		return NULL;
	}
	b->left -= size;
	return malloc(size);
}

static void budget_free(void *data, void *p)
{
	(void)data;
	free(p);
}

/* A double attribute holds a size when it is a whole non-negative number
 * (some SDKs write every number as a double). */
static bool double_as_count(double d, int64_t *out)
{
	if (!isfinite(d) || d < 0 || d > 9007199254740992.0 || floor(d) != d)
		return false;
	*out = (int64_t)d;
	return true;
}

static void apply_attrs(struct trace_span *sp, Ditto__Otlp__KeyValue **kv, size_t n)
{
	if (n > TRACE_MAX_ATTRS)
		n = TRACE_MAX_ATTRS;
	for (size_t i = 0; i < n; i++) {
		const Ditto__Otlp__AnyValue *v = kv[i]->value;
		int64_t num;

		if (!v || !kv[i]->key)
			continue;
		switch (v->value_case) {
		case DITTO__OTLP__ANY_VALUE__VALUE_STRING_VALUE:
			trace_span_attr(sp, kv[i]->key, v->string_value, 0);
			break;
		case DITTO__OTLP__ANY_VALUE__VALUE_INT_VALUE:
			trace_span_attr(sp, kv[i]->key, NULL, v->int_value);
			break;
		case DITTO__OTLP__ANY_VALUE__VALUE_DOUBLE_VALUE:
			if (double_as_count(v->double_value, &num))
				trace_span_attr(sp, kv[i]->key, NULL, num);
			break;
		default:	/* bool, bytes: no attribute we map has them */
			break;
		}
	}
}

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* The span's own fields; false when they cannot make a span (the ids of
 * the wrong length, a kind past CONSUMER). */
static bool span_fields(struct trace_span *sp, const Ditto__Otlp__Span *s)
{
	if (s->trace_id.len != 16 || s->span_id.len != 8 ||
	    (s->parent_span_id.len != 0 && s->parent_span_id.len != 8) || s->kind < 0 ||
	    s->kind > SPAN_CONSUMER)
		return false;
	memcpy(sp->trace_id, s->trace_id.data, 16);
	sp->span_id = be64(s->span_id.data);
	sp->parent_id = s->parent_span_id.len ? be64(s->parent_span_id.data) : 0;
	sp->kind = (enum span_kind)s->kind;
	sp->start_ns = s->start_time_unix_nano;
	sp->end_ns = s->end_time_unix_nano;
	sp->name = s->name && *s->name ? s->name : NULL;
	return true;
}

static int add_scope(const Ditto__Otlp__ResourceSpans *rs, const Ditto__Otlp__ScopeSpans *ss,
		     struct trace_set *set, struct otlp_decode_counts *c)
{
	for (size_t i = 0; i < ss->n_spans; i++) {
		const Ditto__Otlp__Span *s = ss->spans[i];
		struct trace_span sp;
		int err;

		trace_span_init(&sp);
		if (!span_fields(&sp, s)) {
			c->rejected++;
			continue;
		}
		/* Resource first: service.name lives there; a span's own
		 * attributes come after and win. */
		if (rs->resource)
			apply_attrs(&sp, rs->resource->attributes, rs->resource->n_attributes);
		apply_attrs(&sp, s->attributes, s->n_attributes);
		if (s->trace_state && *s->trace_state)
			trace_declare_threshold(set, s->trace_state);
		err = trace_set_add(set, &sp);
		if (err == -ENOMEM)
			return err;
		if (err)
			c->rejected++;
		else
			c->spans++;
	}
	return 0;
}

int otlp_proto_parse_buffer(const uint8_t *buf, size_t len, struct trace_set *set,
			    struct otlp_decode_counts *counts, char *err, size_t errlen)
{
	struct budget b = { .left = len < OTLP_PROTO_MEM_MIN / OTLP_PROTO_MEM_FACTOR
					    ? OTLP_PROTO_MEM_MIN
					    : len * OTLP_PROTO_MEM_FACTOR };
	ProtobufCAllocator a = { .alloc = budget_alloc, .free = budget_free, .allocator_data = &b };
	Ditto__Otlp__ExportTraceServiceRequest *req;
	int rc = 0;

	memset(counts, 0, sizeof(*counts));
	req = ditto__otlp__export_trace_service_request__unpack(&a, len, buf);
	if (!req) {
		if (b.exceeded) {
			snprintf(err, errlen,
				 "decoding the %zu-byte protobuf body needs more than %zu bytes of memory",
				 len, len * OTLP_PROTO_MEM_FACTOR);
			return -E2BIG;
		}
		snprintf(err, errlen,
			 "the %zu-byte body is not a protobuf ExportTraceServiceRequest", len);
		return -EBADMSG;
	}
	for (size_t r = 0; r < req->n_resource_spans && !rc; r++) {
		const Ditto__Otlp__ResourceSpans *rs = req->resource_spans[r];

		for (size_t i = 0; i < rs->n_scope_spans && !rc; i++)
			rc = add_scope(rs, rs->scope_spans[i], set, counts);
		for (size_t i = 0; i < rs->n_instrumentation_library_spans && !rc; i++)
			rc = add_scope(rs, rs->instrumentation_library_spans[i], set, counts);
	}
	ditto__otlp__export_trace_service_request__free_unpacked(req, &a);
	if (rc) {
		snprintf(err, errlen, "out of memory adding spans");
		return rc;
	}
	pthread_mutex_lock(&set->lock);
	set->files++;
	pthread_mutex_unlock(&set->lock);
	return 0;
}
