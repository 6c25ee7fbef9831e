/* SPDX-License-Identifier: MIT */
/* Test helpers for the OTLP/HTTP receiver (see otlp_client.h). */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "otlp_client.h"
#include "otlp_trace.pb-c.h"

static Ditto__Otlp__KeyValue *kv_str(const char *k, const char *v)
{
	Ditto__Otlp__KeyValue *kv = calloc(1, sizeof(*kv));
	Ditto__Otlp__AnyValue *av = calloc(1, sizeof(*av));

	ditto__otlp__key_value__init(kv);
	ditto__otlp__any_value__init(av);
	av->value_case = DITTO__OTLP__ANY_VALUE__VALUE_STRING_VALUE;
	av->string_value = (char *)v;
	kv->key = (char *)k;
	kv->value = av;
	return kv;
}

static Ditto__Otlp__KeyValue *kv_int(const char *k, int64_t v)
{
	Ditto__Otlp__KeyValue *kv = kv_str(k, "");

	kv->value->value_case = DITTO__OTLP__ANY_VALUE__VALUE_INT_VALUE;
	kv->value->int_value = v;
	return kv;
}

static void free_kvs(Ditto__Otlp__KeyValue **kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(kv[i]->value);
		free(kv[i]);
	}
}

static uint8_t trace_id[16] = { 0x0a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
static uint8_t ids[4][8] = { { 0, 0, 0, 0, 0, 0, 0, 1 }, { 0, 0, 0, 0, 0, 0, 0, 2 },
			     { 0, 0, 0, 0, 0, 0, 0, 3 }, { 0xff, 0, 0, 0, 0, 0, 0, 4 } };

static void span(Ditto__Otlp__Span *s, const char *name, int kind, int id, int parent,
		 uint64_t start)
{
	ditto__otlp__span__init(s);
	s->trace_id = (ProtobufCBinaryData){ 16, trace_id };
	s->span_id = (ProtobufCBinaryData){ 8, ids[id] };
	if (parent >= 0)
		s->parent_span_id = (ProtobufCBinaryData){ 8, ids[parent] };
	s->name = (char *)name;
	s->kind = kind;
	s->start_time_unix_nano = start;
	s->end_time_unix_nano = start + 1000000;
}

uint8_t *otlp_sample_request(size_t *len)
{
	Ditto__Otlp__ExportTraceServiceRequest req = DITTO__OTLP__EXPORT_TRACE_SERVICE_REQUEST__INIT;
	Ditto__Otlp__ResourceSpans rs[2], *rsp[2] = { &rs[0], &rs[1] };
	Ditto__Otlp__Resource res[2];
	Ditto__Otlp__ScopeSpans ss[2], *ssp0 = &ss[0], *ssp1 = &ss[1];
	Ditto__Otlp__Span sp[4], *front[3] = { &sp[0], &sp[1], &sp[3] }, *back[1] = { &sp[2] };
	Ditto__Otlp__KeyValue *rattr0[1] = { kv_str("service.name", "front") };
	Ditto__Otlp__KeyValue *rattr1[1] = { kv_str("service.name", "back") };
	Ditto__Otlp__KeyValue *cattr[3] = { kv_str("server.address", "10.1.2.3"),
					    kv_int("server.port", 8081),
					    kv_int("http.request.body.size", 42) };
	static uint8_t short_id[3] = { 1, 2, 3 };
	uint8_t *buf;

	for (int i = 0; i < 2; i++) {
		ditto__otlp__resource_spans__init(&rs[i]);
		ditto__otlp__resource__init(&res[i]);
		ditto__otlp__scope_spans__init(&ss[i]);
		rs[i].resource = &res[i];
	}
	res[0].n_attributes = 1;
	res[0].attributes = rattr0;
	res[1].n_attributes = 1;
	res[1].attributes = rattr1;
	span(&sp[0], "GET /", 2, 0, -1, 1700000000000000000ull);
	span(&sp[1], "GET /api", 3, 1, 0, 1700000000000100000ull);
	sp[1].n_attributes = 3;
	sp[1].attributes = cattr;
	span(&sp[2], "GET /api", 2, 2, 1, 1700000000000200000ull);
	span(&sp[3], "bad", 1, 3, -1, 1700000000000000000ull);
	sp[3].trace_id = (ProtobufCBinaryData){ 3, short_id };
	ss[0].n_spans = 3;
	ss[0].spans = front;
	ss[1].n_spans = 1;
	ss[1].spans = back;
	rs[0].n_scope_spans = 1;
	rs[0].scope_spans = &ssp0;
	/* The pre-1.0 field name of the same messages. */
	rs[1].n_instrumentation_library_spans = 1;
	rs[1].instrumentation_library_spans = &ssp1;
	req.n_resource_spans = 2;
	req.resource_spans = rsp;

	*len = ditto__otlp__export_trace_service_request__get_packed_size(&req);
	buf = malloc(*len);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(ditto__otlp__export_trace_service_request__pack(&req, buf), *len);
	free_kvs(rattr0, 1);
	free_kvs(rattr1, 1);
	free_kvs(cattr, 3);
	return buf;
}

int otlp_connect(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = 5 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

void otlp_send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		ck_assert_int_gt(n, 0);
		p += n;
		len -= (size_t)n;
	}
}

int otlp_read_answer(int fd, char *rbody, size_t rsize)
{
	char buf[4096];
	size_t len = 0;
	char *end = NULL, *cl;
	size_t clen = 0;
	int status;

	/* The head, then Content-Length bytes of body. */
	for (;;) {
		ssize_t n;

		if (len) {
			buf[len] = '\0';
			end = strstr(buf, "\r\n\r\n");
			if (end) {
				cl = strcasestr(buf, "content-length:");
				clen = cl && cl < end ? strtoul(cl + 15, NULL, 10) : 0;
				if ((size_t)(buf + len - (end + 4)) >= clen)
					break;
			}
		}
		if (len == sizeof(buf) - 1)
			return -1;
		n = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);
		if (n <= 0)
			return -1;
		len += (size_t)n;
	}
	if (sscanf(buf, "HTTP/1.1 %d", &status) != 1)
		return -1;
	if (rbody && rsize) {
		size_t n = clen < rsize - 1 ? clen : rsize - 1;

		memcpy(rbody, end + 4, n);
		rbody[n] = '\0';
	}
	return status;
}

int otlp_post(int fd, const char *ctype, const char *extra, const void *body, size_t len,
	      char *rbody, size_t rsize)
{
	char head[1024];
	int n = snprintf(head, sizeof(head),
			 "POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: %s\r\n"
			 "Content-Length: %zu\r\n%s\r\n",
			 ctype, len, extra);

	otlp_send_all(fd, head, (size_t)n);
	if (len)
		otlp_send_all(fd, body, len);
	return otlp_read_answer(fd, rbody, rsize);
}
