/* SPDX-License-Identifier: MIT */
/* A growing set of spans, and the attribute names every format shares. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace_span.h"

void trace_span_init(struct trace_span *sp)
{
	memset(sp, 0, sizeof(*sp));
	sp->request_bytes = -1;
	sp->response_bytes = -1;
}

void trace_set_init(struct trace_set *set)
{
	memset(set, 0, sizeof(*set));
	pthread_mutex_init(&set->lock, NULL);
	set->max_spans = TRACE_MAX_SPANS;
}

static void span_free_strings(struct trace_span *sp)
{
	free(sp->service);
	free(sp->name);
	free(sp->peer_service);
	free(sp->db_system);
	free(sp->peer_address);
}

void trace_span_free(struct trace_span *sp)
{
	span_free_strings(sp);
	sp->service = sp->name = sp->peer_service = sp->db_system = sp->peer_address = NULL;
}

void trace_set_free(struct trace_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		span_free_strings(&set->spans[i]);
	free(set->spans);
	pthread_mutex_destroy(&set->lock);
	memset(set, 0, sizeof(*set));
}

/* A bounded copy: a kept string is at most TRACE_MAX_STR bytes. */
static int dup_bounded(const char *s, char **out)
{
	size_t n;

	*out = NULL;
	if (!s)
		return 0;
	n = strnlen(s, TRACE_MAX_STR);
	*out = malloc(n + 1);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, s, n);
	(*out)[n] = '\0';
	return 0;
}

static int copy_span(struct trace_span *dst, const struct trace_span *src)
{
	*dst = *src;
	dst->service = dst->name = dst->peer_service = dst->db_system = dst->peer_address = NULL;
	if (dup_bounded(src->service, &dst->service) || dup_bounded(src->name, &dst->name) ||
	    dup_bounded(src->peer_service, &dst->peer_service) ||
	    dup_bounded(src->db_system, &dst->db_system) ||
	    dup_bounded(src->peer_address, &dst->peer_address)) {
		span_free_strings(dst);
		return -ENOMEM;
	}
	return 0;
}

static bool span_valid(const struct trace_span *sp)
{
	static const uint8_t zero[16];

	return sp->span_id && memcmp(sp->trace_id, zero, sizeof(zero)) != 0 &&
	       sp->end_ns >= sp->start_ns && sp->kind <= SPAN_CONSUMER;
}

static int add_locked(struct trace_set *set, const struct trace_span *sp)
{
	if (!span_valid(sp)) {
		set->rejected++;
		return -EINVAL;
	}
	if (set->n >= set->max_spans) {
		set->rejected++;
		return -ENOSPC;
	}
	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 256;
		struct trace_span *p = realloc(set->spans, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		set->spans = p;
		set->cap = cap;
	}
	if (copy_span(&set->spans[set->n], sp))
		return -ENOMEM;
	set->n++;
	return 0;
}

int trace_set_add(struct trace_set *set, const struct trace_span *sp)
{
	int err;

	pthread_mutex_lock(&set->lock);
	err = add_locked(set, sp);
	pthread_mutex_unlock(&set->lock);
	return err;
}

void trace_set_reject(struct trace_set *set)
{
	pthread_mutex_lock(&set->lock);
	set->rejected++;
	pthread_mutex_unlock(&set->lock);
}

void trace_set_declare_ratio(struct trace_set *set, double ratio)
{
	if (!(ratio > 0 && ratio <= 1))
		return;
	pthread_mutex_lock(&set->lock);
	if (set->sample_ratio == 0)
		set->sample_ratio = ratio;
	else if (fabs(set->sample_ratio - ratio) > 1e-9)
		set->sample_conflict = true;
	pthread_mutex_unlock(&set->lock);
}

/* ---- attributes ---- */

/* A number from an int attribute or from a string of digits (Zipkin's tags
 * are all strings); -1 when it is neither. */
static int64_t attr_number(const char *str, int64_t num)
{
	char *end;
	long long v;

	if (!str)
		return num;
	errno = 0;
	v = strtoll(str, &end, 10);
	if (errno || end == str || *end || v < 0)
		return -1;
	return v;
}

static uint16_t attr_port(const char *str, int64_t num)
{
	int64_t v = attr_number(str, num);

	return v > 0 && v <= 65535 ? (uint16_t)v : 0;
}

bool trace_is_ip(const char *s)
{
	unsigned char buf[sizeof(struct in6_addr)];

	return s && (inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1);
}

static bool key_in(const char *key, const char *const *names)
{
	for (; *names; names++)
		if (strcmp(key, *names) == 0)
			return true;
	return false;
}

static const char *const peer_address_keys[] = { "server.address", "net.peer.name",
						 "net.peer.ip", "network.peer.address",
						 "peer.hostname", "peer.ipv4", NULL };
static const char *const peer_port_keys[] = { "net.peer.port", "network.peer.port",
					      "peer.port", NULL };
static const char *const local_port_keys[] = { "net.host.port", "host.port", NULL };
static const char *const request_size_keys[] = { "http.request.body.size",
						 "http.request_content_length",
						 "http.request_content_length_uncompressed",
						 "messaging.message.body.size", NULL };
static const char *const response_size_keys[] = { "http.response.body.size",
						  "http.response_content_length",
						  "http.response_content_length_uncompressed", NULL };

/* The first name given wins for addresses and ports: the newer
 * conventions are tried first by every importer's attribute order only
 * by chance, so an already-set field is not overwritten. */
void trace_span_attr(struct trace_span *sp, const char *key, const char *str, int64_t num)
{
	if (!key)
		return;
	if (strncmp(key, "http.", 5) == 0 || strncmp(key, "url.", 4) == 0)
		sp->http = true;
	if (strcmp(key, "service.name") == 0 && str)
		sp->service = (char *)str;
	else if (strcmp(key, "peer.service") == 0 && str)
		sp->peer_service = (char *)str;
	else if ((strcmp(key, "db.system") == 0 || strcmp(key, "db.system.name") == 0) && str)
		sp->db_system = (char *)str;	/* the old convention's name and the new one's */
	else if (key_in(key, peer_address_keys) && trace_is_ip(str) && !sp->peer_address)
		sp->peer_address = (char *)str;	/* a host name is no address a model holds */
	else if (strcmp(key, "server.port") == 0) {
		/* The callee's port: the peer's on a client span, the span's
		 * own on a server span (the kind may come later). */
		uint16_t p = attr_port(str, num);

		if (!sp->peer_port)
			sp->peer_port = p;
		if (!sp->local_port)
			sp->local_port = p;
	} else if (key_in(key, peer_port_keys) && !sp->peer_port)
		sp->peer_port = attr_port(str, num);
	else if (key_in(key, local_port_keys) && !sp->local_port)
		sp->local_port = attr_port(str, num);
	else if (key_in(key, request_size_keys) && sp->request_bytes < 0)
		sp->request_bytes = attr_number(str, num);
	else if (key_in(key, response_size_keys) && sp->response_bytes < 0)
		sp->response_bytes = attr_number(str, num);
}

/* ---- ids ---- */

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Right-aligned hex of up to `len` bytes into out[len]. */
static int parse_hex(const char *hex, uint8_t *out, size_t len)
{
	size_t n = hex ? strnlen(hex, 2 * len + 1) : 0;

	if (n == 0 || n > 2 * len)
		return -EINVAL;
	memset(out, 0, len);
	for (size_t i = 0; i < n; i++) {
		int d = hex_digit(hex[n - 1 - i]);
		size_t byte = len - 1 - i / 2;

		if (d < 0)
			return -EINVAL;
		out[byte] |= (uint8_t)(i % 2 ? d << 4 : d);
	}
	return 0;
}

int trace_parse_trace_id(const char *hex, uint8_t out[16])
{
	return parse_hex(hex, out, 16);
}

int trace_parse_span_id(const char *hex, uint64_t *out)
{
	uint8_t b[8];
	int err = parse_hex(hex, b, sizeof(b));

	if (err)
		return err;
	*out = 0;
	for (size_t i = 0; i < sizeof(b); i++)
		*out = *out << 8 | b[i];
	return 0;
}

/*
 * The sampling a span's W3C tracestate declares, OpenTelemetry's
 * "ot=th:HEX" (the consistent probability sampling threshold: a trace is
 * kept when its randomness is at least th/2^56, so the ratio is
 * 1 - th/2^56, th's hex digits padded on the right to 14). The SDKs'
 * consistent probability samplers write it; nothing else in OTLP says
 * how spans were sampled.
 */
void trace_declare_threshold(struct trace_set *set, const char *ts)
{
	const char *ot = ts ? strstr(ts, "ot=") : NULL;
	const char *th;
	uint64_t v = 0;
	int digits = 0;

	if (!ot || (ot != ts && ot[-1] != ',' && ot[-1] != ' '))
		return;
	th = strstr(ot, "th:");
	if (!th || (th[-1] != '=' && th[-1] != ';'))
		return;
	for (th += 3; digits < 14; th++, digits++) {
		char ch = *th;
		int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;

		if (d < 0)
			break;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits)
		return;
	v <<= 4 * (14 - digits);
	trace_set_declare_ratio(set, 1.0 - (double)v / 72057594037927936.0);
}
