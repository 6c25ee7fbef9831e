/* SPDX-License-Identifier: MIT */
/*
 * HTTP/1.x: a request line and headers up to the blank line, then a
 * Content-Length body (chunked bodies are refused: the connection closes).
 * The response is "200 OK" with a Content-Length body, the whole of it the
 * drawn size; Connection: close and HTTP/1.0 without keep-alive close.
 */
#include "rt_int.h"

#include <string.h>
#include <strings.h>

struct head {
	uint64_t clen;
	bool close, keepalive, chunked;
	const char *tp;		/* traceparent's value, checked when used */
	size_t tplen;
};

static const char *find_end(const char *p, size_t n)
{
	for (size_t i = 3; i < n; i++)
		if (p[i] == '\n' && p[i - 1] == '\r' && p[i - 2] == '\n' && p[i - 3] == '\r')
			return p + i + 1;
	return NULL;
}

/* Does the comma-separated header value hold token w? */
static bool has_token(const char *v, const char *end, const char *w)
{
	size_t wl = strlen(w);

	while (v < end) {
		const char *t;

		while (v < end && (*v == ' ' || *v == '\t' || *v == ','))
			v++;
		for (t = v; t < end && *t != ',' && *t != ' ' && *t != '\t'; t++)
			;
		if ((size_t)(t - v) == wl && !strncasecmp(v, w, wl))
			return true;
		v = t;
	}
	return false;
}

static int header_line(const char *p, const char *end, struct head *h)
{
	const char *colon = memchr(p, ':', (size_t)(end - p)), *v;

	if (!colon)
		return -1;
	for (v = colon + 1; v < end && (*v == ' ' || *v == '\t'); v++)
		;
	if (colon - p == 14 && !strncasecmp(p, "Content-Length", 14)) {
		if (v == end)
			return -1;
		for (h->clen = 0; v < end && *v != ' ' && *v != '\t'; v++) {
			if (*v < '0' || *v > '9' || h->clen > RT_FRAME_MAX)
				return -1;
			h->clen = h->clen * 10 + (uint64_t)(*v - '0');
		}
		return h->clen > RT_FRAME_MAX ? -1 : 0;
	}
	if (colon - p == 10 && !strncasecmp(p, "Connection", 10)) {
		h->close |= has_token(v, end, "close");
		h->keepalive |= has_token(v, end, "keep-alive");
	}
	if (colon - p == 11 && !strncasecmp(p, "traceparent", 11)) {
		h->tp = v;
		h->tplen = (size_t)(end - v);
	}
	if (colon - p == 17 && !strncasecmp(p, "Transfer-Encoding", 17))
		h->chunked |= has_token(v, end, "chunked");
	return 0;
}

/* "METHOD SP target SP HTTP/1.x": the minor version, or -1. */
static int request_line(const char *p, const char *end)
{
	const char *sp1 = memchr(p, ' ', (size_t)(end - p)), *sp2;

	if (!sp1 || sp1 == p)
		return -1;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1));
	if (!sp2 || sp2 == sp1 + 1 || end - sp2 != 9 || strncmp(sp2 + 1, "HTTP/1.", 7))
		return -1;
	return sp2[8] == '0' ? 0 : sp2[8] == '1' ? 1 : -1;
}

long rt_http_cut(const char *p, size_t n, struct rt_req *req)
{
	size_t lim = n < RT_LINE_MAX ? n : RT_LINE_MAX;
	const char *end = find_end(p, lim), *line, *nl;
	struct head h = { 0, false, false, false, NULL, 0 };
	size_t hlen;

	if (!end)
		return n >= RT_LINE_MAX ? -1 : 0;
	hlen = (size_t)(end - p);
	nl = memchr(p, '\n', hlen);
	if (nl == p || nl[-1] != '\r' || (req->minor = request_line(p, nl - 1)) < 0)
		return -1;
	for (line = nl + 1; line < end - 2; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(end - line));
		if (nl[-1] != '\r' || header_line(line, nl - 1, &h))
			return -1;
	}
	if (h.chunked)
		return -1;
	if (n < hlen + h.clen)
		return 0;
	req->p = p;
	req->len = hlen + (size_t)h.clen;
	req->close_after = h.close || (req->minor == 0 && !h.keepalive);
	req->traceparent = h.tp;
	req->traceparent_len = h.tplen;
	return (long)req->len;
}

int rt_http_respond(const struct rt_req *req, struct rt_rng *rng, struct rt_buf *out)
{
	static const char status[] = "HTTP/1.1 200 OK\r\nContent-Length: ";
	const char *conn = req->close_after ? "Connection: close\r\n"
			   : req->minor == 0 ? "Connection: keep-alive\r\n" : "";
	uint64_t fixed = sizeof(status) - 1 + 2 + strlen(conn) + 2;
	uint64_t n = rt_fit_decimal(rt_frame_size(rng, fixed + 1), fixed);

	if (rt_buf_puts(out, status) || rt_buf_put_u64(out, n) || rt_buf_puts(out, "\r\n") ||
	    rt_buf_puts(out, conn) || rt_buf_puts(out, "\r\n"))
		return -1;
	return rt_buf_fill(out, n);
}
