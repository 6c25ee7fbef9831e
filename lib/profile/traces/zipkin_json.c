/* SPDX-License-Identifier: MIT */
/*
 * Zipkin v2 JSON: a list of spans (/api/v2/trace/ID), or a list of traces
 * each a list of spans (/api/v2/traces):
 *   [{"traceId","id","parentId","kind":"CLIENT"|"SERVER"|"PRODUCER"|"CONSUMER",
 *     "name","timestamp" (us),"duration" (us),
 *     "localEndpoint":{"serviceName","ipv4","ipv6","port"},
 *     "remoteEndpoint":{..},"tags":{string:string},"shared":bool}]
 * A client and a server span may share one id (shared: true on the server
 * half): trace_graph.c splits them. A span without a timestamp (an
 * incomplete one, to be merged with its other half by a Zipkin server) is
 * skipped and counted as rejected. Zipkin declares no sampling. v1 spans
 * (binaryAnnotations) are refused: ask the server for v2.
 */
#include <errno.h>
#include <string.h>

#include "core_int.h"
#include "trace_importers.h"
#include "trace_json.h"

static enum span_kind kind_of(const char *v)
{
	if (!v)
		return SPAN_UNSPECIFIED;
	if (strcmp(v, "SERVER") == 0)
		return SPAN_SERVER;
	if (strcmp(v, "CLIENT") == 0)
		return SPAN_CLIENT;
	if (strcmp(v, "PRODUCER") == 0)
		return SPAN_PRODUCER;
	if (strcmp(v, "CONSUMER") == 0)
		return SPAN_CONSUMER;
	return (enum span_kind)-1;
}

/* An endpoint: its service, address and port. */
static int endpoint(struct json_ctx *c, json_t *span, const char *key, const char **service,
		    const char **address, uint16_t *port)
{
	json_t *ep;
	const char *v4, *v6;
	uint64_t p;
	int err = json_get_object(c, span, key, false, &ep);

	*service = *address = NULL;
	*port = 0;
	if (err || !ep)
		return err;
	size_t at = json_ctx_key(c, key);

	if (!(err = json_get_str(c, ep, "serviceName", false, service)) &&
	    !(err = json_get_str(c, ep, "ipv4", false, &v4)) &&
	    !(err = json_get_str(c, ep, "ipv6", false, &v6)) &&
	    !(err = json_get_u64(c, ep, "port", false, &p, NULL))) {
		if (p > 65535)
			err = json_fail(c, -DITTO_ECORRUPT, "port", "not a port");
		*address = trace_is_ip(v4) ? v4 : trace_is_ip(v6) ? v6 : NULL;
		*port = (uint16_t)p;
	}
	json_ctx_restore(c, at);
	return err;
}

static int apply_tags(struct json_ctx *c, json_t *span, struct trace_span *sp)
{
	json_t *tags, *v;
	const char *key;
	size_t n = 0;
	int err = json_get_object(c, span, "tags", false, &tags);

	if (err || !tags)
		return err;
	size_t at = json_ctx_key(c, "tags");

	json_object_foreach(tags, key, v) {
		if (n++ >= TRACE_MAX_ATTRS)
			break;
		/* Zipkin's tags are strings; a number where a string belongs
		 * is the file's mistake, said as such. */
		if (!json_is_string(v)) {
			err = json_fail(c, -DITTO_ECORRUPT, key, "not a string");
			break;
		}
		trace_span_attr(sp, key, json_string_value(v), 0);
	}
	json_ctx_restore(c, at);
	return err;
}

static int one_span(struct json_ctx *c, json_t *span, struct trace_set *set)
{
	const char *kind, *lsvc, *laddr, *rsvc, *raddr;
	uint16_t lport, rport;
	struct trace_span sp;
	uint64_t ts, dur;
	bool have_ts;
	json_t *shared;
	int err;

	if (!json_is_object(span))
		return json_fail(c, -DITTO_ECORRUPT, NULL, "not an object");
	if (json_object_get(span, "binaryAnnotations"))
		return json_fail(c, -DITTO_ECORRUPT, NULL,
				 "a Zipkin v1 span (binaryAnnotations): export v2 spans "
				 "(/api/v2/traces)");
	trace_span_init(&sp);
	if ((err = trace_json_trace_id(c, span, "traceId", sp.trace_id)) ||
	    (err = trace_json_span_id(c, span, "id", true, &sp.span_id)) ||
	    (err = trace_json_span_id(c, span, "parentId", false, &sp.parent_id)) ||
	    (err = json_get_str(c, span, "name", false, (const char **)&sp.name)) ||
	    (err = json_get_str(c, span, "kind", false, &kind)) ||
	    (err = json_get_u64(c, span, "timestamp", false, &ts, &have_ts)) ||
	    (err = json_get_u64(c, span, "duration", false, &dur, NULL)) ||
	    (err = trace_us_to_ns(c, "timestamp", ts, &sp.start_ns)) ||
	    (err = trace_us_to_ns(c, "duration", dur, &sp.end_ns)) ||
	    (err = endpoint(c, span, "localEndpoint", &lsvc, &laddr, &lport)) ||
	    (err = endpoint(c, span, "remoteEndpoint", &rsvc, &raddr, &rport)) ||
	    (err = apply_tags(c, span, &sp)))
		return err;
	sp.kind = kind_of(kind);
	if ((int)sp.kind < 0)
		return json_fail(c, -DITTO_ECORRUPT, "kind", "'%.32s' is no span kind", kind);
	shared = json_object_get(span, "shared");
	if (shared && !json_is_boolean(shared) && !json_is_null(shared))
		return json_fail(c, -DITTO_ECORRUPT, "shared", "not a boolean");
	sp.shared = json_is_true(shared);
	if (sp.end_ns > UINT64_MAX - sp.start_ns)
		return json_fail(c, -DITTO_ECORRUPT, "duration", "ends past 2^64 ns");
	sp.end_ns += sp.start_ns;
	if (!have_ts) {
		trace_set_reject(set);
		return 0;
	}
	sp.service = (char *)(lsvc && *lsvc ? lsvc : "unknown_service");
	/* The remote endpoint is the peer; tags said first win. */
	if (rsvc && *rsvc && !sp.peer_service)
		sp.peer_service = (char *)rsvc;
	if (raddr && !sp.peer_address)
		sp.peer_address = (char *)raddr;
	if (rport && !sp.peer_port)
		sp.peer_port = rport;
	if (lport && sp.kind == SPAN_SERVER)
		sp.local_port = lport;
	return trace_add(set, c, &sp);
}

static int span_list(struct json_ctx *c, json_t *list, struct trace_set *set, int level)
{
	json_t *v;
	size_t i;
	int err = 0;

	json_array_foreach(list, i, v) {
		size_t at = json_ctx_index(c, i);

		/* One level of lists of traces, no deeper. */
		if (json_is_array(v) && level == 0)
			err = span_list(c, v, set, 1);
		else
			err = one_span(c, v, set);
		json_ctx_restore(c, at);
		if (err)
			break;
	}
	return err;
}

int zipkin_json_doc(json_t *doc, struct json_ctx *c, struct trace_set *set)
{
	if (!json_is_array(doc))
		return json_fail(c, -DITTO_ECORRUPT, NULL, "not a list of spans");
	return span_list(c, doc, set, 0);
}
