/* SPDX-License-Identifier: MIT */
/*
 * The client side's wire: a call's request in the child's framing, of the
 * edge's drawn size where the framing lets the size vary, and the child's
 * reply recognised whole. Replies come from the network: every parser is
 * bounded by the bytes it was given and by RT_FRAME_MAX / RT_LINE_MAX.
 * Requests ask for nothing that changes a real child's data except
 * memcache sets, which a large request needs (a key is at most 250 bytes).
 */
#include "rt_int.h"

#include <string.h>
#include <strings.h>

#define MC_KEY_MAX 250
#define KEY_BYTE 'k'

static unsigned digits(uint64_t v)
{
	unsigned d = 1;

	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

/* The largest n with fixed + digits(n) + n <= total, 0 if none. */
static uint64_t fit(uint64_t total, uint64_t fixed)
{
	uint64_t n;

	if (total <= fixed + 1)
		return 0;
	n = total - fixed - 1;
	while (n && fixed + digits(n) + n > total)
		n--;
	return n;
}

static int put_fill(struct rt_buf *out, size_t n, char c)
{
	if (rt_buf_reserve(out, n))
		return -1;
	memset(out->data + out->len, c, n);
	out->len += n;
	return 0;
}

/* GET without a body when it is as large as asked, its Host name
 * lengthened up to the size (a 35-byte request stays 35 bytes), else a
 * POST whose Content-Length body makes up the size. */
static int http_request(uint64_t size, const char *tp, struct rt_buf *out)
{
	static const char get[] = "GET / HTTP/1.1\r\nHost: ditto";
	static const char post[] = "POST / HTTP/1.1\r\nHost: ditto";
	static const char ctype[] = "Content-Type: application/octet-stream\r\nContent-Length: ";
	size_t tpl = tp ? strlen("traceparent: \r\n") + strlen(tp) : 0;
	uint64_t fixed = sizeof(post) - 1 + 2 + tpl + sizeof(ctype) - 1 + 4, n = fit(size, fixed);
	uint64_t get_len = sizeof(get) - 1 + 2 + tpl + 2;
	int err = 0;

	err |= rt_buf_puts(out, n ? post : get);
	if (!n && size > get_len)
		err |= put_fill(out, (size_t)(size - get_len), 'x');
	err |= rt_buf_puts(out, "\r\n");
	if (tp)
		err |= rt_buf_puts(out, "traceparent: ") | rt_buf_puts(out, tp) | rt_buf_puts(out, "\r\n");
	if (n)
		err |= rt_buf_puts(out, ctype) | rt_buf_put_u64(out, n);
	err |= rt_buf_puts(out, n ? "\r\n\r\n" : "\r\n");
	return err || put_fill(out, (size_t)n, 'x') ? -1 : 0;
}

/* GET of a key as long as makes up the size: "*2\r\n$3\r\nGET\r\n$K\r\nkey\r\n". */
static int resp_request(uint64_t size, struct rt_buf *out)
{
	uint64_t k = fit(size, 4 + 9 + 1 + 2 + 2);

	k = k ? k : 1;
	if (rt_buf_puts(out, "*2\r\n$3\r\nGET\r\n$") || rt_buf_put_u64(out, k) ||
	    rt_buf_puts(out, "\r\n") || put_fill(out, (size_t)k, KEY_BYTE))
		return -1;
	return rt_buf_puts(out, "\r\n");
}

/* "get KEY" up to the longest key; a set of a value past that. */
static int mctext_request(uint64_t size, struct rt_buf *out)
{
	uint64_t v = size > 6 + MC_KEY_MAX ? fit(size, 14 + 2 + 2) : 0;

	if (v) {
		if (rt_buf_puts(out, "set ditto 0 0 ") || rt_buf_put_u64(out, v) ||
		    rt_buf_puts(out, "\r\n") || put_fill(out, (size_t)v, 'x'))
			return -1;
		return rt_buf_puts(out, "\r\n");
	}
	v = size > 6 ? size - 6 : 1;
	if (rt_buf_puts(out, "get ") || put_fill(out, (size_t)v, KEY_BYTE))
		return -1;
	return rt_buf_puts(out, "\r\n");
}

static void be(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

/* A binary GET (opcode 0) of a key making up the size, or a SET (1) with
 * flags and expiry (8 bytes of extras) and key "ditto" past the longest key. */
static int mcbin_request(uint64_t size, struct rt_buf *out)
{
	uint8_t h[24] = { 0x80 };
	uint64_t key = size > 24 ? size - 24 : 1, value = 0;
	bool set = key > MC_KEY_MAX;

	if (set) {
		key = 5;
		value = size - 24 - 8 - key;
		value = value > RT_FRAME_MAX ? RT_FRAME_MAX : value;
	}
	h[1] = set ? 1 : 0;
	be(h + 2, key, 2);
	h[4] = set ? 8 : 0;
	be(h + 8, (set ? 8 : 0) + key + value, 4);
	if (rt_buf_put(out, h, sizeof(h)) ||
	    (set && rt_buf_put(out, "\0\0\0\0\0\0\0\0", 8)) ||
	    (set ? rt_buf_puts(out, "ditto") : put_fill(out, (size_t)key, KEY_BYTE)))
		return -1;
	return put_fill(out, (size_t)value, 'x');
}

int rt_up_request(enum rt_framing f, uint64_t size, const char *traceparent, struct rt_buf *out)
{
	uint8_t len[4];

	size = size > RT_FRAME_MAX ? RT_FRAME_MAX : size;
	switch (f) {
	case RT_FRAMING_HTTP1:
		return http_request(size, traceparent, out);
	case RT_FRAMING_RESP:
		return resp_request(size, out);
	case RT_FRAMING_MEMCACHE_TEXT:
		return mctext_request(size, out);
	case RT_FRAMING_MEMCACHE_BINARY:
		return mcbin_request(size, out);
	case RT_FRAMING_LENGTH_PREFIXED:
		size = size > 4 ? size - 4 : 0;
		be(len, size, 4);
		return rt_buf_put(out, len, 4) || put_fill(out, (size_t)size, 'x') ? -1 : 0;
	default:	/* raw, and the databases' protocols spoken as raw */
		return put_fill(out, (size_t)(size ? size : 1), 'x');
	}
}

/* ---- replies ---- */

/* The line at p[0..n) ending in CRLF: its length without them, -2 when
 * the CRLF has not come yet, -1 when it is too long or a bare LF ends it. */
static long line_len(const char *p, size_t n)
{
	size_t lim = n < RT_LINE_MAX ? n : RT_LINE_MAX;
	const char *nl = memchr(p, '\n', lim);

	if (!nl)
		return n >= RT_LINE_MAX ? -1 : -2;
	if (nl == p || nl[-1] != '\r')
		return -1;
	return (long)(nl - p - 1);
}

/* A decimal (RESP: optionally negative) at p[0..n) whole; -1 if not. */
static int decimal(const char *p, size_t n, bool neg_ok, int64_t *out)
{
	bool neg = n && *p == '-' && neg_ok;
	uint64_t v = 0;

	if (neg) {
		p++;
		n--;
	}
	if (!n || n > 18)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

/* RESP2 and RESP3 replies: elements are counted down, aggregates add
 * theirs, so nesting costs no stack; each element takes at least three
 * bytes, so the loop is bounded by n. */
static long resp_reply(const char *p, size_t n, bool *failed)
{
	uint64_t pending = 1;
	size_t pos = 0;

	while (pending) {
		long l;
		int64_t v = 0;
		char type;

		if (pos >= n)
			return 0;
		if ((l = line_len(p + pos, n - pos)) == -2)
			return 0;
		if (l < 1)
			return -1;
		type = p[pos];
		if (strchr("$!=*~>%|", type) && decimal(p + pos + 1, (size_t)l - 1, true, &v))
			return -1;
		if (v < -1 || v > (int64_t)RT_FRAME_MAX)
			return -1;
		*failed |= type == '-' || type == '!';
		pos += (size_t)l + 2;
		pending--;
		switch (type) {
		case '+': case '-': case ':': case '_': case '#': case ',': case '(':
			break;
		case '$': case '!': case '=':
			if (v >= 0) {
				if (n - pos < (uint64_t)v + 2)
					return 0;
				if (p[pos + v] != '\r' || p[pos + v + 1] != '\n')
					return -1;
				pos += (size_t)v + 2;
			}
			break;
		case '*': case '~': case '>':
			pending += v > 0 ? (uint64_t)v : 0;
			break;
		case '%': case '|':
			pending += v > 0 ? 2 * (uint64_t)v : 0;
			if (type == '|')
				pending++;	/* the attributes precede a reply */
			break;
		default:
			return -1;
		}
	}
	return (long)pos;
}

static bool starts(const char *p, size_t n, const char *w)
{
	size_t wl = strlen(w);

	return n >= wl && !memcmp(p, w, wl);
}

/* The fourth field of "VALUE key flags bytes [cas]": the data's length. */
static int value_bytes(const char *p, size_t n, int64_t *out)
{
	const char *q = p, *end = p + n, *f;
	int field = 0;

	for (; q < end && field < 3; field++) {
		q = memchr(q, ' ', (size_t)(end - q));
		if (!q)
			return -1;
		q++;
	}
	if (field < 3)
		return -1;
	f = memchr(q, ' ', (size_t)(end - q));
	return decimal(q, (size_t)((f ? f : end) - q), false, out);
}

/* memcached text: VALUE blocks up to END, or one status line. */
static long mctext_reply(const char *p, size_t n, bool *failed)
{
	size_t pos = 0;

	for (;;) {
		long l = pos < n ? line_len(p + pos, n - pos) : -2;
		const char *line = p + pos;
		int64_t v;

		if (l == -2)
			return 0;
		if (l < 0)
			return -1;
		if (starts(line, (size_t)l, "VALUE ")) {
			if (value_bytes(line, (size_t)l, &v) || v > (int64_t)RT_FRAME_MAX)
				return -1;
			pos += (size_t)l + 2;
			if (n - pos < (uint64_t)v + 2)
				return 0;
			if (p[pos + v] != '\r' || p[pos + v + 1] != '\n')
				return -1;
			pos += (size_t)v + 2;
			continue;
		}
		*failed |= starts(line, (size_t)l, "ERROR") || starts(line, (size_t)l, "CLIENT_ERROR") ||
			   starts(line, (size_t)l, "SERVER_ERROR");
		return (long)(pos + (size_t)l + 2);
	}
}

/* memcached binary: a 24-byte response header (magic 0x81) and its body.
 * Status 1 (key not found) is a get's normal miss. */
static long mcbin_reply(const unsigned char *p, size_t n, bool *failed)
{
	uint32_t body;
	unsigned status;

	if (n < 24)
		return n && p[0] != 0x81 ? -1 : 0;
	if (p[0] != 0x81)
		return -1;
	status = (unsigned)p[6] << 8 | p[7];
	body = (uint32_t)p[8] << 24 | (uint32_t)p[9] << 16 | (uint32_t)p[10] << 8 | p[11];
	if (body > RT_FRAME_MAX)
		return -1;
	if (n < 24 + (size_t)body)
		return 0;
	*failed |= status > 1;
	return (long)(24 + body);
}

static long lp_reply(const unsigned char *p, size_t n)
{
	uint32_t len;

	if (n < 4)
		return 0;
	len = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	if (len > RT_FRAME_MAX)
		return -1;
	return n < 4 + (size_t)len ? 0 : (long)(4 + len);
}

/* ---- HTTP/1.x responses ---- */

struct http_head {
	int status;
	int64_t clen;	/* -1: none */
	bool chunked;
};

static bool header_is(const char *p, size_t n, const char *name)
{
	size_t l = strlen(name);

	return n > l && p[l] == ':' && !strncasecmp(p, name, l);
}

static const char *value_of(const char *p, size_t n, size_t *vl)
{
	const char *v = memchr(p, ':', n) + 1, *end = p + n;

	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	*vl = (size_t)(end - v);
	return v;
}

/* The head's fields; its length with the blank line, 0: more, -1: bad. */
static long http_head(const char *p, size_t n, struct http_head *h)
{
	size_t pos = 0;
	long l = line_len(p, n);
	int64_t st;

	if (l == -2)
		return 0;
	if (l < 12 || !starts(p, (size_t)l, "HTTP/1.") || p[8] != ' ' ||
	    decimal(p + 9, 3, false, &st) || st < 200 || (l > 12 && p[12] != ' '))
		return -1;	/* 1xx are not asked for (no Expect) */
	h->status = (int)st;
	h->clen = -1;
	h->chunked = false;
	for (pos = (size_t)l + 2;; pos += (size_t)l + 2) {
		const char *line = p + pos, *v;
		size_t vl;

		if (pos > RT_LINE_MAX)
			return -1;
		l = pos < n ? line_len(line, n - pos) : -2;
		if (l == -2)
			return 0;
		if (l < 0)
			return -1;
		if (l == 0)
			return (long)(pos + 2);
		if (!memchr(line, ':', (size_t)l))
			return -1;
		v = value_of(line, (size_t)l, &vl);
		if (header_is(line, (size_t)l, "Content-Length") &&
		    (decimal(v, vl, false, &h->clen) || h->clen > (int64_t)RT_FRAME_MAX))
			return -1;
		if (header_is(line, (size_t)l, "Transfer-Encoding"))
			h->chunked = vl >= 7 && !strncasecmp(v + vl - 7, "chunked", 7);
	}
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)(c | 0x20);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Chunks from p: the body's length through the last chunk's trailers. */
static long http_chunks(const char *p, size_t n)
{
	size_t pos = 0;

	for (;;) {
		long l = pos < n ? line_len(p + pos, n - pos) : -2;
		uint64_t size = 0;
		int i = 0, d;

		if (l < 0)
			return l == -2 ? 0 : -1;
		for (; i < l && (d = hex_digit(p[pos + i])) >= 0; i++)
			if ((size = size * 16 + (uint64_t)d) > RT_FRAME_MAX)
				return -1;
		if (!i || (i < l && p[pos + i] != ';' && p[pos + i] != ' '))
			return -1;
		pos += (size_t)l + 2;
		if (!size)
			break;
		if (n - pos < size + 2)
			return 0;
		if (p[pos + size] != '\r' || p[pos + size + 1] != '\n')
			return -1;
		pos += (size_t)size + 2;
		if (pos > RT_FRAME_MAX)
			return -1;
	}
	for (;;) {	/* trailers up to the blank line */
		long l = pos < n ? line_len(p + pos, n - pos) : -2;

		if (l < 0)
			return l == -2 ? 0 : -1;
		pos += (size_t)l + 2;
		if (!l)
			return (long)pos;
		if (pos > RT_FRAME_MAX)
			return -1;
	}
}

static long http_reply(const char *p, size_t n, bool eof, bool *failed)
{
	struct http_head h;
	long head = http_head(p, n, &h), body;

	if (head <= 0)
		return head;
	*failed |= h.status >= 400;
	if (h.status == 204 || h.status == 304)
		return head;
	if (h.chunked) {
		body = http_chunks(p + head, n - (size_t)head);
		return body <= 0 ? body : head + body;
	}
	if (h.clen >= 0)
		return n - (size_t)head < (uint64_t)h.clen ? 0 : head + (long)h.clen;
	/* neither: the body runs to the connection's end */
	return eof ? (long)(n > RT_FRAME_MAX ? -1 : (long)n) : 0;
}

long rt_up_reply(enum rt_framing f, const char *p, size_t n, bool eof, bool *failed)
{
	switch (f) {
	case RT_FRAMING_HTTP1:
		return http_reply(p, n, eof, failed);
	case RT_FRAMING_RESP:
		return resp_reply(p, n, failed);
	case RT_FRAMING_MEMCACHE_TEXT:
		return mctext_reply(p, n, failed);
	case RT_FRAMING_MEMCACHE_BINARY:
		return mcbin_reply((const unsigned char *)p, n, failed);
	case RT_FRAMING_LENGTH_PREFIXED:
		return lp_reply((const unsigned char *)p, n);
	default:	/* raw: what the first read brings */
		return (long)(n > RT_FRAME_MAX ? RT_FRAME_MAX : n);
	}
}
