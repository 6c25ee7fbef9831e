/* SPDX-License-Identifier: MIT */
/*
 * Drives the clone runtime's span exporter (lib/runtime/rt_otlp*.c) as a
 * clone tier would, with spans of a known shape, for otlp_test.py:
 *
 *   otlp_driver URL SERVICE ROLE N      export N requests' spans to URL
 *   otlp_driver --dump SERVICE ROLE N   print them as one OTLP/JSON body
 *   otlp_driver --url URL               parse URL: "host port path", or why not
 *
 * ROLE front: per request a root SERVER span, a CLIENT span to "back" and
 * one to a redis at port 6379, one after the other, both answered before
 * the response. ROLE back: per request a SERVER span whose parent is the
 * front's call to back (the ids are derived from the request number).
 */
#include "rt_int.h"
#include "rt_otlp.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The runtime's own helpers this driver does without the rest of it. */
void rt_err(int err, const char *fmt, ...)
{
	va_list ap;

	fputs("clone: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (err)
		fprintf(stderr, ": %s", strerror(err));
	fputc('\n', stderr);
}

int rt_thread_start(pthread_t *t, void *(*fn)(void *), void *arg, const char *what)
{
	int rc = pthread_create(t, NULL, fn, arg);

	if (rc)
		rt_err(rc, "cannot start a %s thread", what);
	return rc ? -1 : 0;
}

static void id(uint8_t *out, size_t n, uint64_t req, uint8_t tag)
{
	memset(out, 0, n);
	for (size_t i = 0; i < 8 && i < n; i++)
		out[n - 1 - i] = (uint8_t)(req >> (8 * i));
	out[0] = tag;
}

static void request_spans(const char *role, uint64_t i, uint64_t base, struct rt_otlp_span *s,
			  size_t *n)
{
	uint64_t t = base + i * 1000000;	/* a request per millisecond */

	*n = 0;
	if (strcmp(role, "back") == 0) {
		s[0] = (struct rt_otlp_span){ .kind = RT_OTLP_SERVER, .http = true, .sizes = true, .port = 8081,
					 .start_ns = t + 110000, .end_ns = t + 290000,
					 .request_bytes = 0, .response_bytes = 300 };
		id(s[0].trace_id, 16, i, 0x7e);
		id(s[0].span_id, 8, i, 0xb0);
		id(s[0].parent_id, 8, i, 0xc1);
		*n = 1;
		return;
	}
	s[0] = (struct rt_otlp_span){ .kind = RT_OTLP_SERVER, .http = true, .sizes = true, .port = 8080,
				 .start_ns = t, .end_ns = t + 500000, .response_bytes = 700 };
	s[1] = (struct rt_otlp_span){ .kind = RT_OTLP_CLIENT, .http = true, .sizes = true, .port = 8081, .peer = "back",
				 .start_ns = t + 100000, .end_ns = t + 300000,
				 .response_bytes = 300 };
	s[2] = (struct rt_otlp_span){ .kind = RT_OTLP_CLIENT, .port = 6379, .peer = "redis-6379",
				 .db_system = "redis", .start_ns = t + 320000,
				 .end_ns = t + 400000 };
	for (int k = 0; k < 3; k++)
		id(s[k].trace_id, 16, i, 0x7e);
	id(s[0].span_id, 8, i, 0xf0);
	id(s[1].span_id, 8, i, 0xc1);
	id(s[2].span_id, 8, i, 0xc2);
	id(s[1].parent_id, 8, i, 0xf0);
	id(s[2].parent_id, 8, i, 0xf0);
	*n = 3;
}

static int dump(const char *service, const char *role, uint64_t n)
{
	struct rt_otlp_span *all = calloc(n * 3 + 1, sizeof(*all));
	struct rt_buf b = { 0 };
	size_t k = 0, got;

	for (uint64_t i = 0; all && i < n; i++, k += got)
		request_spans(role, i, 1700000000000000000ull, &all[k], &got);
	if (!all || rt_otlp_encode(&b, service, all, k))
		return 1;
	fwrite(b.data, 1, b.len, stdout);
	rt_buf_free(&b);
	free(all);
	return 0;
}

static int parse(const char *url)
{
	struct rt_otlp_url u;
	const char *why;

	if (rt_otlp_url_parse(url, &u, &why)) {
		printf("error: %s\n", why);
		return 0;
	}
	printf("%s %s %s\n", u.host, u.port, u.path);
	return 0;
}

int main(int argc, char **argv)
{
	struct rt_otlp_span s[3];
	uint64_t n, base = 1700000000000000000ull;	/* both roles: one timeline */
	size_t got;

	if (argc == 3 && strcmp(argv[1], "--url") == 0)
		return parse(argv[2]);
	if (argc != 5)
		return 2;
	n = strtoull(argv[4], NULL, 10);
	if (strcmp(argv[1], "--dump") == 0)
		return dump(argv[2], argv[3], n);
	if (rt_otlp_start(argv[1], argv[2]))
		return 1;
	for (uint64_t i = 0; i < n; i++) {
		request_spans(argv[3], i, base, s, &got);
		for (size_t k = 0; k < got; k++)
			rt_otlp_record(&s[k]);
		/* Paced as a served load: the exporter works meanwhile, and
		 * the stop drains what little is left. */
		if (i % 100 == 99)
			nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
	}
	rt_otlp_stop();
	return 0;
}
