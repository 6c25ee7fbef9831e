/* SPDX-License-Identifier: MIT */
/*
 * OTLP/JSON of a batch of spans, as the OpenTelemetry protocol's JSON
 * mapping writes them: ids in lower-case hex, nanosecond times and the
 * 64-bit integers as decimal strings, kinds as numbers. The service name
 * and peer names come from the model: every string is escaped.
 */
#include "rt_int.h"
#include "rt_otlp.h"

#include <errno.h>
#include <string.h>

static int put_hex(struct rt_buf *b, const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char out[64];

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	return rt_buf_put(b, out, 2 * n);
}

/* s as a JSON string: quotes, backslashes and control bytes escaped;
 * bytes >= 0x80 pass as they are (a model's names are UTF-8 or refused
 * by its validation; a stray byte makes the collector refuse one batch,
 * never our output ambiguous). */
static int put_str(struct rt_buf *b, const char *s)
{
	int err = rt_buf_put(b, "\"", 1);

	for (; !err && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			err = rt_buf_printf(b, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			err = rt_buf_printf(b, "\\u%04x", c);
		else
			err = rt_buf_put(b, s, 1);
	}
	return err ? err : rt_buf_put(b, "\"", 1);
}

static int put_attr_str(struct rt_buf *b, bool first, const char *key, const char *val)
{
	int err = rt_buf_puts(b, first ? "{\"key\":" : ",{\"key\":");

	err = err ? err : put_str(b, key);
	err = err ? err : rt_buf_puts(b, ",\"value\":{\"stringValue\":");
	err = err ? err : put_str(b, val);
	return err ? err : rt_buf_puts(b, "}}");
}

static int put_attr_int(struct rt_buf *b, bool first, const char *key, uint64_t v)
{
	int err = rt_buf_puts(b, first ? "{\"key\":" : ",{\"key\":");

	err = err ? err : put_str(b, key);
	err = err ? err : rt_buf_puts(b, ",\"value\":{\"intValue\":\"");
	err = err ? err : rt_buf_put_u64(b, v);
	return err ? err : rt_buf_puts(b, "\"}}");
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* The semantic-convention attributes the importers read: the peer (its
 * service, or the database it is, and its port), the own port of a
 * server, and the body sizes of an HTTP exchange. */
static int put_attrs(struct rt_buf *b, const struct rt_otlp_span *s)
{
	bool client = s->kind == RT_OTLP_CLIENT;
	int err = rt_buf_puts(b, ",\"attributes\":[");

	err = err ? err : put_attr_int(b, true, "server.port", s->port);
	if (!err && client && s->peer)
		err = put_attr_str(b, false, "peer.service", s->peer);
	if (!err && client && s->db_system)
		err = put_attr_str(b, false, "db.system", s->db_system);
	if (!err && s->http && s->sizes) {
		err = put_attr_int(b, false, "http.request.body.size", s->request_bytes);
		err = err ? err : put_attr_int(b, false, "http.response.body.size", s->response_bytes);
	}
	return err ? err : rt_buf_puts(b, "]");
}

static int put_span(struct rt_buf *b, const struct rt_otlp_span *s, bool first)
{
	int err = rt_buf_puts(b, first ? "{\"traceId\":\"" : ",{\"traceId\":\"");

	err = err ? err : put_hex(b, s->trace_id, sizeof(s->trace_id));
	err = err ? err : rt_buf_puts(b, "\",\"spanId\":\"");
	err = err ? err : put_hex(b, s->span_id, sizeof(s->span_id));
	if (!err && !all_zero(s->parent_id, sizeof(s->parent_id))) {
		err = rt_buf_puts(b, "\",\"parentSpanId\":\"");
		err = err ? err : put_hex(b, s->parent_id, sizeof(s->parent_id));
	}
	err = err ? err : rt_buf_puts(b, "\",\"name\":");
	err = err ? err : put_str(b, s->kind == RT_OTLP_SERVER ? "request" :
				     s->peer ? s->peer : "call");
	err = err ? err : rt_buf_printf(b, ",\"kind\":%u,\"startTimeUnixNano\":\"", s->kind);
	err = err ? err : rt_buf_put_u64(b, s->start_ns);
	err = err ? err : rt_buf_puts(b, "\",\"endTimeUnixNano\":\"");
	err = err ? err : rt_buf_put_u64(b, s->end_ns);
	err = err ? err : rt_buf_puts(b, "\"");
	err = err ? err : put_attrs(b, s);
	if (!err && s->error)
		err = rt_buf_puts(b, ",\"status\":{\"code\":2}");
	return err ? err : rt_buf_puts(b, "}");
}

int rt_otlp_encode(struct rt_buf *b, const char *service, const struct rt_otlp_span *s, size_t n)
{
	int err = rt_buf_puts(b, "{\"resourceSpans\":[{\"resource\":{\"attributes\":[");

	err = err ? err : put_attr_str(b, true, "service.name", service);
	err = err ? err : rt_buf_puts(b, "]},\"scopeSpans\":[{\"scope\":{\"name\":\"ditto-clone\"},"
				      "\"spans\":[");
	for (size_t i = 0; i < n && !err; i++)
		err = put_span(b, &s[i], i == 0);
	err = err ? err : rt_buf_puts(b, "]}]}]}");
	return err ? -ENOMEM : 0;
}
