/* SPDX-License-Identifier: MIT */
/* HTTP/1.x request heads (see http_head.h). */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "http_head.h"

/* The end of the head: the index just past the blank line, or 0. */
static size_t head_end(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* Optional whitespace trimmed from both ends of [*s, *e). */
static void trim(const char **s, const char **e)
{
	while (*s < *e && (**s == ' ' || **s == '\t'))
		(*s)++;
	while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r'))
		(*e)--;
}

static bool eq(const char *s, const char *e, const char *word)
{
	size_t n = strlen(word);

	return (size_t)(e - s) == n && strncasecmp(s, word, n) == 0;
}

/* Does the comma-separated list [s, e) hold token word? */
static bool list_has(const char *s, const char *e, const char *word)
{
	while (s < e) {
		const char *c = memchr(s, ',', (size_t)(e - s));
		const char *te = c ? c : e;
		const char *ts = s;

		trim(&ts, &te);
		if (eq(ts, te, word))
			return true;
		s = c ? c + 1 : e;
	}
	return false;
}

static int parse_length(const char *s, const char *e, int64_t *out)
{
	int64_t v = 0;

	if (s == e)
		return -EBADMSG;
	for (; s < e; s++) {
		if (*s < '0' || *s > '9' || v > (INT64_MAX - 9) / 10)
			return -EBADMSG;
		v = v * 10 + (*s - '0');
	}
	if (*out >= 0 && *out != v)	/* two that disagree: request smuggling */
		return -EBADMSG;
	*out = v;
	return 0;
}

static enum http_ctype media_type(const char *s, const char *e)
{
	const char *semi = memchr(s, ';', (size_t)(e - s));

	if (semi)	/* parameters (charset=utf-8) do not change the type */
		e = semi;
	trim(&s, &e);
	if (eq(s, e, "application/x-protobuf") || eq(s, e, "application/protobuf"))
		return HTTP_CT_PROTOBUF;
	if (eq(s, e, "application/json"))
		return HTTP_CT_JSON;
	return HTTP_CT_OTHER;
}

static int field(struct http_head *h, const char *s, const char *e, bool *conn_close,
		 bool *conn_keep)
{
	const char *colon = memchr(s, ':', (size_t)(e - s));
	const char *vs, *ve;

	if (s < e && (*s == ' ' || *s == '\t'))
		return -EBADMSG;	/* obsolete line folding */
	if (!colon || colon == s || colon[-1] == ' ' || colon[-1] == '\t')
		return -EBADMSG;
	vs = colon + 1;
	ve = e;
	trim(&vs, &ve);
	if (eq(s, colon, "content-length"))
		return parse_length(vs, ve, &h->content_length);
	if (eq(s, colon, "content-type"))
		h->ctype = media_type(vs, ve);
	else if (eq(s, colon, "transfer-encoding")) {
		if (list_has(vs, ve, "chunked"))
			h->chunked = true;
		if (!eq(vs, ve, "chunked") && !eq(vs, ve, "identity"))
			h->other_te = true;
	} else if (eq(s, colon, "content-encoding")) {
		if (eq(vs, ve, "gzip") || eq(vs, ve, "x-gzip"))
			h->gzip = true;
		else if (!eq(vs, ve, "identity") && vs != ve)
			h->other_ce = true;
	} else if (eq(s, colon, "connection")) {
		*conn_close |= list_has(vs, ve, "close");
		*conn_keep |= list_has(vs, ve, "keep-alive");
	} else if (eq(s, colon, "expect")) {
		h->expect_continue = eq(vs, ve, "100-continue");
	}
	return 0;
}

/* "METHOD SP target SP HTTP/1.x" */
static int request_line(struct http_head *h, const char *s, const char *e)
{
	const char *sp1 = memchr(s, ' ', (size_t)(e - s)), *sp2, *q;
	size_t n;

	while (e > s && e[-1] == '\r')
		e--;
	if (!sp1 || sp1 == s || (size_t)(sp1 - s) >= sizeof(h->method))
		return -EBADMSG;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(e - sp1 - 1));
	if (!sp2 || sp2 == sp1 + 1)
		return -EBADMSG;
	if (eq(sp2 + 1, e, "HTTP/1.0"))
		h->http10 = true;
	else if (!eq(sp2 + 1, e, "HTTP/1.1"))
		return -EBADMSG;
	memcpy(h->method, s, (size_t)(sp1 - s));
	h->method[sp1 - s] = '\0';
	q = memchr(sp1 + 1, '?', (size_t)(sp2 - sp1 - 1));
	n = (size_t)((q ? q : sp2) - (sp1 + 1));
	if (n >= sizeof(h->path)) {
		h->truncated_path = true;
		n = sizeof(h->path) - 1;
	}
	memcpy(h->path, sp1 + 1, n);
	h->path[n] = '\0';
	return 0;
}

int http_head_parse(const char *buf, size_t len, struct http_head *h)
{
	size_t end = head_end(buf, len);
	bool conn_close = false, conn_keep = false;
	const char *s = buf, *stop = buf + end;
	int err;

	if (!end)
		return 0;
	if (memchr(buf, '\0', end))
		return -EBADMSG;
	memset(h, 0, sizeof(*h));
	h->content_length = -1;
	h->head_len = end;
	for (bool first = true; s < stop; first = false) {
		const char *nl = memchr(s, '\n', (size_t)(stop - s));
		const char *e = nl;

		while (e > s && e[-1] == '\r')
			e--;
		if (e == s) {	/* the blank line */
			if (first)
				return -EBADMSG;
			break;
		}
		err = first ? request_line(h, s, e) : field(h, s, e, &conn_close, &conn_keep);
		if (err)
			return err;
		s = nl + 1;
	}
	h->keep_alive = h->http10 ? conn_keep && !conn_close : !conn_close;
	return 1;
}
