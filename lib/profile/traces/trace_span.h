/* SPDX-License-Identifier: MIT */
/*
 * Spans as the trace importers hand them over, whatever the format (OTLP
 * JSON or protobuf, Jaeger JSON, Zipkin v2 JSON): one flat record per
 * span, then one derivation of graph edges from a set of them
 * (trace_graph.c). Internal to the profile stage.
 */
#ifndef DITTO_TRACE_SPAN_H
#define DITTO_TRACE_SPAN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum span_kind {
	SPAN_UNSPECIFIED = 0,
	SPAN_INTERNAL,
	SPAN_SERVER,
	SPAN_CLIENT,
	SPAN_PRODUCER,
	SPAN_CONSUMER,
};

/* Bounds every importer enforces: a hostile file is refused, never
 * followed into unbounded memory. */
#define TRACE_MAX_SPANS (4u << 20)	/* per set */
#define TRACE_MAX_STR 1024		/* bytes of one kept string */
#define TRACE_MAX_ATTRS 512		/* attributes looked at per span */

struct trace_span {
	uint8_t trace_id[16];	/* Zipkin's and Jaeger's 64-bit ids: high half 0 */
	uint64_t span_id;
	uint64_t parent_id;	/* 0: a root (or the parent is unknown) */
	bool follows_from;	/* the parent does not wait (Jaeger FOLLOWS_FROM) */
	bool parent_elsewhere;	/* the parent is in another trace: an orphan here */
	bool shared;		/* Zipkin: the server half of the client's span id */
	enum span_kind kind;
	uint64_t start_ns;	/* Unix time */
	uint64_t end_ns;
	/* Strings are owned by the set (NULL when absent). */
	char *service;		/* service.name / serviceName / localEndpoint */
	char *name;
	char *peer_service;	/* peer.service / remoteEndpoint.serviceName */
	char *db_system;	/* db.system: redis, memcached, postgresql, mysql */
	char *peer_address;	/* an IPv4 or IPv6 literal: server.address, net.peer.name,
				 * remoteEndpoint (host names are not kept) */
	uint16_t peer_port;	/* server.port, net.peer.port, remoteEndpoint */
	uint16_t local_port;	/* a SERVER span's own port: server.port, ... */
	int64_t request_bytes;	/* body sizes from the size attributes; -1: none */
	int64_t response_bytes;
	bool http;		/* some http.* or url.* attribute: an HTTP call */
};

/* Spans from any number of files or requests; safe to add to from several
 * threads (the OTLP receiver's) through trace_set_add(). */
struct trace_set {
	pthread_mutex_t lock;
	struct trace_span *spans;
	size_t n, cap;
	size_t max_spans;	/* TRACE_MAX_SPANS unless set lower */
	uint64_t files;		/* files or requests the spans came from */
	uint64_t rejected;	/* spans refused (out of range, over the bound) */
	double sample_ratio;	/* declared sampling ratio; 0: none declared */
	bool sample_conflict;	/* several ratios were declared: none is used */
};

void trace_set_init(struct trace_set *set);
void trace_set_free(struct trace_set *set);
/* Copies sp and its strings into the set; -ENOSPC past max_spans (the span
 * is counted as rejected), -EINVAL for a span with no id or end before
 * start (rejected too), -ENOMEM. */
int trace_set_add(struct trace_set *set, const struct trace_span *sp);
/* Frees sp's strings (a span taken out of a set's array). */
void trace_span_free(struct trace_span *sp);
/* A span the importer had to skip (no timestamp): counted as rejected. */
void trace_set_reject(struct trace_set *set);
/* A sampling ratio an export declared, in (0, 1]: the first one is kept; a
 * different one later marks the set as conflicting (then nothing is
 * corrected). Out of range: ignored. */
void trace_set_declare_ratio(struct trace_set *set, double ratio);
/* A span with every field absent (sizes -1). */
void trace_span_init(struct trace_span *sp);

/*
 * Semantic-convention attributes, in the names of old and new conventions,
 * applied to sp: what an importer calls for every attribute of a span
 * (and of its resource, for service.name). str is NUL-terminated or NULL
 * for a number (then num holds it). The strings stay the caller's until
 * trace_set_add() copies them.
 */
void trace_span_attr(struct trace_span *sp, const char *key, const char *str, int64_t num);

/* Whether s is an IPv4 or IPv6 address literal. */
bool trace_is_ip(const char *s);

/* Hex ids as the formats write them (case-insensitive, up to 32 digits for
 * a trace id, 16 for a span id, shorter ones left-padded): 0 or -EINVAL. */
int trace_parse_trace_id(const char *hex, uint8_t out[16]);
int trace_parse_span_id(const char *hex, uint64_t *out);

/* The sampling a span's W3C tracestate declares (OpenTelemetry's "ot=th:"),
 * into set's declared ratio; NULL or no threshold: nothing. */
void trace_declare_threshold(struct trace_set *set, const char *tracestate);

#endif
