/* SPDX-License-Identifier: MIT */
/*
 * The clone's spans, exported as OTLP/HTTP JSON (POST /v1/traces) so that
 * the tracing pipeline that measured the original measures its clone: a
 * SERVER span per request, a CLIENT span per call to a child. Serving
 * threads only copy a finished span into a bounded queue (a full queue
 * drops the span and counts it); one exporter thread per process batches
 * the queue into requests, off the request path. No URL, no thread, and
 * recording costs one test.
 */
#ifndef DITTO_RT_OTLP_H
#define DITTO_RT_OTLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rt_buf;

enum rt_otlp_kind { RT_OTLP_SERVER = 2, RT_OTLP_CLIENT = 3 };	/* OTLP's SpanKind */

struct rt_otlp_span {
	uint8_t trace_id[16], span_id[8], parent_id[8];	/* parent all zero: a root */
	uint64_t start_ns, end_ns;	/* CLOCK_REALTIME, nanoseconds */
	uint64_t request_bytes, response_bytes;
	uint8_t kind;			/* enum rt_otlp_kind */
	bool error;
	bool http;			/* an HTTP request or call */
	bool sizes;			/* request_bytes, response_bytes known (bodies) */
	uint16_t port;			/* SERVER: its own; CLIENT: the child's */
	/* CLIENT: the child's node name and, for a database or cache,
	 * OTLP's db.system (redis, memcached, postgresql, mysql); static
	 * strings of the configuration. */
	const char *peer;
	const char *db_system;
};

/* A destination: "http://HOST:PORT[/PATH]" (PATH default /v1/traces). */
struct rt_otlp_url {
	char host[256];
	char port[8];
	char path[512];
};
/* 0, or -1 with the reason in why. */
int rt_otlp_url_parse(const char *url, struct rt_otlp_url *out, const char **why);

/* Starts this process's exporter to url (NULL or "": none) for the
 * service named service; 0, or -1 after a message. */
int rt_otlp_start(const char *url, const char *service);
bool rt_otlp_on(void);
void rt_otlp_record(const struct rt_otlp_span *s);
/* A CLOCK_MONOTONIC time (the runtime's clock) as Unix-epoch nanoseconds. */
uint64_t rt_otlp_wall_ns(uint64_t mono_ns);
/* rt_span_export.c: this process's exporter, to --otlp or the
 * environment's endpoint (rt_span_end() feeds it). 0, or -1 after a
 * message. */
int rt_spans_start(void);

/* In a process forked from one exporting: its exporter thread is not
 * there, so it records nothing (its spans are lost, counted nowhere). */
void rt_otlp_forked(void);
/* Flushes what is queued (for at most about a second), joins the exporter
 * and prints one line of counts on stderr. */
void rt_otlp_stop(void);

/* The request body of one batch: resourceSpans of service with spans
 * s[0..n), every string escaped. 0 or -ENOMEM. */
int rt_otlp_encode(struct rt_buf *b, const char *service, const struct rt_otlp_span *s, size_t n);

/* One POST of body to u over *fd (connected on demand, -1: none, kept
 * alive between batches); the HTTP status, or -1 when the request did
 * not complete (*fd is then closed). */
int rt_otlp_post(const struct rt_otlp_url *u, int *fd, const char *body, size_t len,
		 int timeout_ms);

#endif
