/* SPDX-License-Identifier: MIT */
/*
 * The clone's spans (rt_trace.c: a SERVER span per request; rt_up_call.c:
 * a CLIENT span per call to a child) handed to the OTLP exporter
 * (rt_otlp*.c) with the attributes the trace importers name nodes by: the
 * service, a child's node name and, for a cache or database, OTLP's
 * db.system with its port, as the original's instrumentation wrote them.
 */
#include "rt_int.h"
#include "rt_otlp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The node a trace importer names an uninstrumented child after: the
 * db.system its client span carries ("redis-6379"). */
static const char *db_system(enum rt_framing f)
{
	switch (f) {
	case RT_FRAMING_RESP:
		return "redis";
	case RT_FRAMING_MEMCACHE_TEXT:
	case RT_FRAMING_MEMCACHE_BINARY:
		return "memcached";
	case RT_FRAMING_POSTGRES:
		return "postgresql";
	case RT_FRAMING_MYSQL:
		return "mysql";
	default:
		return NULL;
	}
}

/* --otlp, else the OpenTelemetry SDKs' variables: the traces endpoint as
 * it is, or the base endpoint with the OTLP/HTTP traces path. */
static const char *endpoint(char *buf, size_t len)
{
	const char *v;

	if (rt_opts.otlp_url)
		return rt_opts.otlp_url;
	if ((v = getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) && *v)
		return v;
	if (!(v = getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) || !*v)
		return NULL;
	snprintf(buf, len, "%s%sv1/traces", v, v[strlen(v) - 1] == '/' ? "" : "/");
	return buf;
}

int rt_spans_start(void)
{
	char buf[1024];
	const char *url = endpoint(buf, sizeof(buf));

	if (url && rt_config.untraced) {
		/* The original's spans are the graph's reference: a clone of
		 * a service that sent none (nginx in front) sends none. */
		fprintf(stderr, "clone: the original exported no spans: this clone exports none\n");
		return 0;
	}
	return rt_otlp_start(url, rt_config.service ? rt_config.service : "clone");
}

void rt_span_end(const struct rt_span *s)
{
	struct rt_otlp_span o = { .error = s->error };

	if (!rt_otlp_on())
		return;
	if (s->kind == RT_SPAN_SERVER) {
		o.kind = RT_OTLP_SERVER;
		o.port = rt_opts.port;
		o.http = rt_config.framing == RT_FRAMING_HTTP1;
	} else if (s->upstream >= 0 && (unsigned)s->upstream < rt_config.nupstreams) {
		const struct rt_upstream *u = &rt_config.upstreams[s->upstream];

		o.kind = RT_OTLP_CLIENT;
		o.peer = u->name;
		o.db_system = db_system(u->framing);
		o.http = u->framing == RT_FRAMING_HTTP1;
		o.port = rt_upstream_port((unsigned)s->upstream);
	} else {
		return;
	}
	memcpy(o.trace_id, s->trace_id, sizeof(o.trace_id));
	memcpy(o.span_id, s->span_id, sizeof(o.span_id));
	memcpy(o.parent_id, s->parent_id, sizeof(o.parent_id));
	o.start_ns = rt_otlp_wall_ns(s->start_ns);
	o.end_ns = rt_otlp_wall_ns(s->end_ns);
	rt_otlp_record(&o);
}
