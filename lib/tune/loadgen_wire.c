/* SPDX-License-Identifier: MIT */
/*
 * The load generator's side of each wire framing: request encoders (what
 * both the real services and the clone runtime's rt_frame_*.c accept) and
 * incremental response parsers that say how many bytes complete one answer.
 * Parsers start over from the answer's first byte on every call: answers
 * are small, and this keeps them free of state.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <ditto/model.h>

#include "loadgen_int.h"

/* ------------------------------------------------------------------ */
/* Encoders                                                             */
/* ------------------------------------------------------------------ */

static void fill(struct dbuf *out, uint64_t n)
{
	if (n > LOADGEN_FRAME_MAX || !dbuf_reserve(out, (size_t)n)) {
		out->oom = true;
		return;
	}
	memset(out->data + out->len, 'x', (size_t)n);
	out->len += (size_t)n;
	out->data[out->len] = '\0';
}

/* bytes <= 8 */
static void put_be(struct dbuf *out, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--)
		dbuf_putc(out, (char)(v >> (8 * i)));
}

static void zeros(struct dbuf *out, unsigned n)
{
	while (n--)
		dbuf_putc(out, 0);
}

static void resp(const struct loadgen_req *r, const char *key, struct dbuf *out)
{
	if (!r->write) {
		dbuf_printf(out, "*2\r\n$3\r\nGET\r\n$%zu\r\n%s\r\n", strlen(key), key);
		return;
	}
	dbuf_printf(out, "*3\r\n$3\r\nSET\r\n$%zu\r\n%s\r\n$%llu\r\n", strlen(key), key,
		    (unsigned long long)r->value_bytes);
	fill(out, r->value_bytes);
	dbuf_puts(out, "\r\n");
}

static void mctext(const struct loadgen_req *r, const char *key, struct dbuf *out)
{
	if (!r->write) {
		dbuf_printf(out, "get %s\r\n", key);
		return;
	}
	dbuf_printf(out, "set %s 0 0 %llu\r\n", key, (unsigned long long)r->value_bytes);
	fill(out, r->value_bytes);
	dbuf_puts(out, "\r\n");
}

/* GET: key only. SET: 8 bytes of extras (flags, expiry: both 0), key, value. */
static void mcbin(const struct loadgen_req *r, const char *key, struct dbuf *out)
{
	size_t klen = strlen(key);
	unsigned extlen = r->write ? 8 : 0;
	uint64_t body = extlen + klen + (r->write ? r->value_bytes : 0);

	dbuf_putc(out, (char)0x80);
	dbuf_putc(out, r->write ? 0x01 : 0x00);
	put_be(out, klen, 2);
	dbuf_putc(out, (char)extlen);
	zeros(out, 3);			/* data type, vbucket */
	put_be(out, body, 4);
	zeros(out, 12);			/* opaque, cas */
	zeros(out, extlen);
	dbuf_put(out, key, klen);
	if (r->write)
		fill(out, r->value_bytes);
}

static void http1(const struct loadgen_req *r, struct dbuf *out)
{
	const char *host = r->host ? r->host : "127.0.0.1", *path = r->path ? r->path : "/";

	if (!r->write) {
		dbuf_printf(out, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, host);
		return;
	}
	dbuf_printf(out, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %llu\r\n\r\n", path,
		    host, (unsigned long long)r->value_bytes);
	fill(out, r->value_bytes);
}

/* A simple Query whose text grows with the value in a comment: the
 * answer (one row, "1") stays the same for the service and its clone. */
static void pg_query(const struct loadgen_req *r, struct dbuf *out)
{
	static const char text[] = "SELECT 1 --";

	dbuf_putc(out, 'Q');
	put_be(out, 4 + sizeof(text) - 1 + r->value_bytes + 1, 4);
	dbuf_puts(out, text);
	fill(out, r->value_bytes);
	dbuf_putc(out, 0);
}

static void put_le(struct dbuf *out, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++, v >>= 8)
		dbuf_putc(out, (char)(unsigned char)v);
}

/* MySQL: a COM_QUERY whose text grows with the value in a comment, as
 * pg_query(); the answer is one row, from the service and its clone. One
 * packet: a value past 16 MiB is cut to what one packet holds. */
#define MY_QUERY "SELECT 1 -- "
#define MY_PACKET_MAX 0xfffffeu
static void my_query(const struct loadgen_req *r, struct dbuf *out)
{
	uint64_t v = r->value_bytes, room = MY_PACKET_MAX - 1 - (sizeof(MY_QUERY) - 1);

	v = v > room ? room : v;
	put_le(out, 1 + sizeof(MY_QUERY) - 1 + v, 3);
	dbuf_putc(out, 0);		/* sequence */
	dbuf_putc(out, 0x03);		/* COM_QUERY */
	dbuf_puts(out, MY_QUERY);
	fill(out, v);
}

/* HandshakeResponse41 (sequence 1) as "root" without a password, for
 * mysql_native_password: protocol 4.1, secure connection, plugin auth
 * and transactions; no TLS, no database, no EOF deprecation (results end
 * in EOF packets, which my_parse() counts). A service that refuses it
 * answers ERR: a clone takes any user. */
static void my_hello(struct dbuf *out)
{
	static const char user[] = "root", plugin[] = "mysql_native_password";
	const uint32_t caps = 0x1 | 0x200 | 0x2000 | 0x8000 | 0x80000;

	put_le(out, 4 + 4 + 1 + 23 + sizeof(user) + 1 + sizeof(plugin), 3);
	dbuf_putc(out, 1);
	put_le(out, caps, 4);
	put_le(out, 1u << 24, 4);	/* max packet */
	dbuf_putc(out, 45);		/* utf8mb4_general_ci */
	zeros(out, 23);
	dbuf_put(out, user, sizeof(user));
	dbuf_putc(out, 0);		/* auth response: none */
	dbuf_put(out, plugin, sizeof(plugin));
}

/* The StartupMessage of protocol 3.0 as user and database "postgres":
 * the one role every cluster has (authentication must be trust). */
bool loadgen_greeting(unsigned framing, struct dbuf *out)
{
	static const char params[] = "user\0postgres\0database\0postgres\0application_name\0ditto load\0";

	if (framing == DITTO_FRAMING_MYSQL) {
		my_hello(out);
		return true;
	}
	if (framing != DITTO_FRAMING_POSTGRES)
		return false;
	put_be(out, 4 + 4 + sizeof(params), 4);	/* sizeof: the list's closing NUL */
	put_be(out, 196608, 4);
	dbuf_put(out, params, sizeof(params));
	return true;
}

bool loadgen_server_first(unsigned framing)
{
	return framing == DITTO_FRAMING_MYSQL;
}

bool loadgen_has_writes(unsigned framing)
{
	return framing == DITTO_FRAMING_RESP || framing == DITTO_FRAMING_MEMCACHE_TEXT ||
	       framing == DITTO_FRAMING_MEMCACHE_BINARY || framing == DITTO_FRAMING_HTTP1;
}

/* Every key has the same length, so a request's size depends on its value only. */
static void key_name(uint64_t k, char key[24])
{
	snprintf(key, 24, "key:%06llu", (unsigned long long)(k % LOADGEN_KEYS));
}

int loadgen_encode(unsigned framing, const struct loadgen_req *r, struct dbuf *out)
{
	char key[24];

	key_name(r->key, key);
	switch (framing) {
	case DITTO_FRAMING_RESP: resp(r, key, out); break;
	case DITTO_FRAMING_MEMCACHE_TEXT: mctext(r, key, out); break;
	case DITTO_FRAMING_MEMCACHE_BINARY: mcbin(r, key, out); break;
	case DITTO_FRAMING_HTTP1: http1(r, out); break;
	case DITTO_FRAMING_POSTGRES: pg_query(r, out); break;
	case DITTO_FRAMING_MYSQL: my_query(r, out); break;
	case DITTO_FRAMING_LENGTH_PREFIXED:
		put_be(out, r->value_bytes, 4);
		fill(out, r->value_bytes);
		break;
	case DITTO_FRAMING_RAW:
		/* No framing: the service sees whatever one read returns. */
		fill(out, r->value_bytes ? r->value_bytes : 1);
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

uint64_t loadgen_overhead(unsigned framing, const char *host)
{
	struct loadgen_req r = { .write = true, .value_bytes = 0, .host = host };
	struct dbuf b;
	uint64_t n;

	dbuf_init(&b);
	n = loadgen_encode(framing, &r, &b) || b.oom ? 0 : b.len;
	dbuf_free(&b);
	/* raw sends at least one byte even for a value of 0 */
	return framing == DITTO_FRAMING_RAW ? 0 : n;
}

static uint64_t request_bytes(unsigned framing, bool write, uint64_t value_bytes)
{
	struct loadgen_req r = { .write = write, .value_bytes = value_bytes };
	struct dbuf b;
	uint64_t n;

	dbuf_init(&b);
	n = loadgen_encode(framing, &r, &b) || b.oom ? 0 : b.len;
	dbuf_free(&b);
	return n;
}

/* What redis and memcached answer to our SET and to a GET that hits:
 * "+OK" and a bulk string; STORED and one VALUE block; a bare binary
 * header and one with 4 bytes of flags before the value. */
static void answer_bytes(unsigned framing, uint64_t v, struct loadgen_costs *c)
{
	char key[24];
	int digits = snprintf(NULL, 0, "%llu", (unsigned long long)v);

	key_name(0, key);
	switch (framing) {
	case DITTO_FRAMING_RESP:
		c->ans_write = 5;
		c->ans_read = 1 + (uint64_t)digits + 2 + v + 2;
		break;
	case DITTO_FRAMING_MEMCACHE_TEXT:
		c->ans_write = 8;
		c->ans_read = (uint64_t)snprintf(NULL, 0, "VALUE %s 0 %llu\r\n", key,
						 (unsigned long long)v) + v + 2 + 5;
		break;
	default:		/* memcache binary */
		c->ans_write = 24;
		c->ans_read = 24 + 4 + v;
	}
}

bool loadgen_costs(unsigned framing, uint64_t value_bytes, struct loadgen_costs *c)
{
	if (framing != DITTO_FRAMING_RESP && framing != DITTO_FRAMING_MEMCACHE_TEXT &&
	    framing != DITTO_FRAMING_MEMCACHE_BINARY)
		return false;
	c->acked_writes = framing != DITTO_FRAMING_RESP;
	c->req_write = request_bytes(framing, true, value_bytes);
	c->req_read = request_bytes(framing, false, value_bytes);
	answer_bytes(framing, value_bytes, c);
	return true;
}

/* ------------------------------------------------------------------ */
/* Parsers: absolute end positions, 0 for "need more", -1 for malformed */
/* ------------------------------------------------------------------ */

/* End (past "\r\n") of the line that starts at p[i]. */
static long line_end(const char *p, size_t n, size_t i)
{
	size_t avail = n - i, lim = avail < LOADGEN_LINE_MAX ? avail : LOADGEN_LINE_MAX;
	const char *nl = memchr(p + i, '\n', lim);

	if (!nl)
		return avail >= LOADGEN_LINE_MAX ? -1 : 0;
	if (nl == p + i || nl[-1] != '\r')
		return -1;
	return nl - p + 1;
}

/* A decimal integer filling [s, e) exactly. */
static bool parse_int(const char *s, const char *e, long long *v)
{
	bool neg = s < e && *s == '-';

	s += neg;
	if (s == e || e - s > 18)
		return false;
	for (*v = 0; s < e; s++) {
		if (*s < '0' || *s > '9')
			return false;
		*v = *v * 10 + (*s - '0');
	}
	*v = neg ? -*v : *v;
	return true;
}

/* "<length>\r\n" + length bytes + "\r\n" from p[i]; nil is "$-1\r\n". */
static long resp_bulk(const char *p, size_t n, size_t i)
{
	long e = line_end(p, n, i);
	long long len;

	if (e <= 0)
		return e;
	if (!parse_int(p + i + 1, p + e - 2, &len) || len < -1 || len > LOADGEN_FRAME_MAX)
		return -1;
	if (len == -1)
		return p[i] == '$' ? e : -1;
	if (n - (size_t)e < (size_t)len + 2)
		return 0;
	if (p[e + len] != '\r' || p[e + len + 1] != '\n')
		return -1;
	return e + (long)len + 2;
}

static long resp_elem(const char *p, size_t n, size_t i, int depth);

/* "<count>\r\n" then count elements (twice that for a map). */
static long resp_agg(const char *p, size_t n, size_t i, int depth)
{
	long e = line_end(p, n, i);
	long long count;

	if (e <= 0)
		return e;
	if (!parse_int(p + i + 1, p + e - 2, &count) || count < -1 || count > LOADGEN_FRAME_MAX)
		return -1;
	if (count == -1)
		return p[i] == '*' ? e : -1;
	if (p[i] == '%')
		count *= 2;
	/* each element is at least 3 bytes, so n bounds the loop */
	for (long long k = 0; k < count && e > 0; k++)
		e = resp_elem(p, n, (size_t)e, depth + 1);
	return e;
}

static long resp_elem(const char *p, size_t n, size_t i, int depth)
{
	if (i >= n)
		return 0;
	if (depth > 32)
		return -1;
	switch (p[i]) {
	case '+': case '-': case ':': case '_': case ',': case '#': case '(':
		return line_end(p, n, i);
	case '$': case '!': case '=':
		return resp_bulk(p, n, i);
	case '*': case '~': case '%': case '>':
		return resp_agg(p, n, i, depth);
	default:
		return -1;
	}
}

/* The byte count of "VALUE <key> <flags> <bytes>[ <cas>]" in [s, e). */
static bool value_bytes(const char *s, const char *e, long long *bytes)
{
	const char *tok[6], *end[6];
	int k = 0;

	while (s < e && k < 6) {
		while (s < e && *s == ' ')
			s++;
		if (s == e)
			break;
		tok[k] = s;
		while (s < e && *s != ' ')
			s++;
		end[k++] = s;
	}
	if (s != e || k < 4 || k > 5)
		return false;
	return parse_int(tok[3], end[3], bytes) && *bytes >= 0 && *bytes <= LOADGEN_FRAME_MAX;
}

static bool line_is(const char *s, const char *e, const char *w)
{
	size_t n = strlen(w);

	return (size_t)(e - s) >= n && !memcmp(s, w, n) && ((size_t)(e - s) == n || s[n] == ' ');
}

/* One line (STORED, ERROR, ...) or VALUE blocks closed by END. */
static long mctext_parse(const char *p, size_t n, bool *failed)
{
	size_t i = 0;

	for (;;) {
		long e = line_end(p, n, i);
		const char *s = p + i, *le;
		long long bytes;

		if (e <= 0)
			return e;
		le = p + e - 2;
		if (line_is(s, le, "VALUE")) {
			if (!value_bytes(s, le, &bytes))
				return -1;
			if (n - (size_t)e < (size_t)bytes + 2)
				return 0;
			if (p[e + bytes] != '\r' || p[e + bytes + 1] != '\n')
				return -1;
			i = (size_t)e + (size_t)bytes + 2;
			continue;
		}
		if (le - s == 3 && !memcmp(s, "END", 3))
			return e;
		if (i > 0 || le == s)	/* only END closes a VALUE list */
			return -1;
		*failed = line_is(s, le, "ERROR") || line_is(s, le, "CLIENT_ERROR") ||
			  line_is(s, le, "SERVER_ERROR");
		return e;
	}
}

static uint32_t be16(const char *p)
{
	return (uint32_t)(unsigned char)p[0] << 8 | (unsigned char)p[1];
}

static uint32_t be32(const char *p)
{
	return be16(p) << 16 | be16(p + 2);
}

static long mcbin_parse(const char *p, size_t n, bool *failed)
{
	uint32_t body, status;

	if ((unsigned char)p[0] != 0x81)
		return -1;
	if (n < 24)
		return 0;
	body = be32(p + 8);
	if (body > LOADGEN_FRAME_MAX || be16(p + 2) + (uint32_t)(unsigned char)p[4] > body)
		return -1;
	if (n - 24 < body)
		return 0;
	status = be16(p + 6);
	*failed = status != 0 && status != 1;	/* 1: key not found, a normal miss */
	return 24 + (long)body;
}

static long lp_parse(const char *p, size_t n)
{
	uint32_t len;

	if (n < 4)
		return 0;
	len = be32(p);
	if (len > LOADGEN_FRAME_MAX)
		return -1;
	return n - 4 < len ? 0 : 4 + (long)len;
}

/* PostgreSQL: backend messages up to ReadyForQuery; an ErrorResponse, or
 * an authentication request other than AuthenticationOk, is a failure. */
static long pg_parse(const char *p, size_t n, bool *failed)
{
	size_t i = 0;

	while (n - i >= 5) {
		uint32_t len = be32(p + i + 1);
		char type = p[i];

		if (len < 4 || len > LOADGEN_FRAME_MAX - i)
			return -1;
		if (n - i - 1 < len)
			return 0;
		if (type == 'E' || (type == 'R' && (len < 8 || be32(p + i + 5) != 0)))
			*failed = true;
		i += 1 + len;
		if (type == 'Z')
			return (long)i;
	}
	return i >= LOADGEN_FRAME_MAX ? -1 : 0;
}

/* MySQL: the packet at p[i]: its end, 0 for more, -1 when it cannot be
 * one (an empty payload, or a length that does not fit one answer). */
static long my_packet_at(const char *p, size_t n, size_t i)
{
	size_t len;

	if (n - i < 4)
		return 0;
	len = (size_t)(unsigned char)p[i] | (size_t)(unsigned char)p[i + 1] << 8 |
	      (size_t)(unsigned char)p[i + 2] << 16;
	if (!len || len > MY_PACKET_MAX || len > LOADGEN_FRAME_MAX - 4 - i)
		return -1;
	return n - i - 4 < len ? 0 : (long)(i + 4 + len);
}

/* An EOF packet: 0xfe and at most 8 bytes (a row's first value of 0xfe
 * has 8 length bytes after it). */
static bool my_eof(const char *p, size_t i, long end)
{
	return (unsigned char)p[i + 4] == 0xfe && end - (long)i - 4 < 9;
}

long loadgen_my_packet(const char *p, size_t n, bool *failed)
{
	long e = my_packet_at(p, n, 0);

	*failed = e > 0 && ((unsigned char)p[4] == 0xff || (unsigned char)p[4] == 0xfe);
	return e;
}

/* An answer to a command: OK, ERR or a lone EOF; or a result set, its
 * column count, definitions, EOF, rows and EOF (an ERR among them ends
 * it, failed). A request for a local file (0xfb) is no answer of ours. */
static long my_parse(const char *p, size_t n, bool *failed)
{
	int eofs = 0;
	long e;

	for (size_t i = 0; (e = my_packet_at(p, n, i)) > 0; i = (size_t)e) {
		unsigned char b = (unsigned char)p[i + 4];

		if (b == 0xff) {
			*failed = true;
			return e;
		}
		if (i == 0 && (b == 0x00 || my_eof(p, i, e)))
			return e;
		if (i == 0 && b == 0xfb)
			return -1;
		if (i > 0 && my_eof(p, i, e) && ++eofs == 2)
			return e;
	}
	return e;
}

/* ------------------------------------------------------------------ */
/* HTTP/1.1                                                             */
/* ------------------------------------------------------------------ */

struct http_head {
	int status;
	long long clen;		/* -1: none */
	bool chunked;
	long end;		/* past the blank line */
};

static bool has_chunked(const char *v, const char *e)
{
	for (; e - v >= 7; v++)
		if (!strncasecmp(v, "chunked", 7))
			return true;
	return false;
}

static int header(const char *s, const char *e, struct http_head *h)
{
	const char *colon = memchr(s, ':', (size_t)(e - s)), *v, *ve = e;

	if (!colon)
		return -1;
	for (v = colon + 1; v < e && (*v == ' ' || *v == '\t'); v++)
		;
	while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
		ve--;
	if (colon - s == 14 && !strncasecmp(s, "Content-Length", 14)) {
		if (!parse_int(v, ve, &h->clen) || h->clen < 0 || h->clen > LOADGEN_FRAME_MAX)
			return -1;
	} else if (colon - s == 17 && !strncasecmp(s, "Transfer-Encoding", 17)) {
		h->chunked |= has_chunked(v, ve);
	}
	return 0;
}

/* "HTTP/1.x SSS[ reason]" and the headers of the head starting at p[i]. */
static long http_head(const char *p, size_t n, size_t i, struct http_head *h)
{
	long e = line_end(p, n, i);
	const char *s = p + i;

	if (e <= 0)
		return e;
	if (e - (long)i < 14 || memcmp(s, "HTTP/1.", 7) || (s[7] != '0' && s[7] != '1') || s[8] != ' ' ||
	    s[9] < '1' || s[9] > '5' || s[10] < '0' || s[10] > '9' || s[11] < '0' || s[11] > '9' ||
	    (s[12] != ' ' && s[12] != '\r'))
		return -1;
	h->status = (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
	h->clen = -1;
	h->chunked = false;
	for (;;) {
		long l = line_end(p, n, (size_t)e);

		if (l <= 0)
			return l;
		if (l - e == 2)
			return h->end = l;
		if ((size_t)l - i > LOADGEN_LINE_MAX || header(p + e, p + l - 2, h))
			return -1;
		e = l;
	}
}

/* Chunks "<hex>[;ext]\r\n" + data + "\r\n" up to the 0 chunk and trailers. */
static long chunked_body(const char *p, size_t n, size_t i)
{
	for (;;) {
		long e = line_end(p, n, i);
		uint64_t size = 0;
		size_t k = i;

		if (e <= 0)
			return e;
		for (; k < (size_t)e - 2 && p[k] != ';'; k++) {
			int d = p[k] >= '0' && p[k] <= '9' ? p[k] - '0' :
				(p[k] | 0x20) >= 'a' && (p[k] | 0x20) <= 'f' ? (p[k] | 0x20) - 'a' + 10 : -1;

			if (d < 0 || size > LOADGEN_FRAME_MAX)
				return -1;
			size = size * 16 + (uint64_t)d;
		}
		if (k == i || size > LOADGEN_FRAME_MAX)
			return -1;
		i = (size_t)e;
		if (!size)
			break;
		if (n - i < size + 2)
			return 0;
		if (p[i + size] != '\r' || p[i + size + 1] != '\n' || i + size > LOADGEN_FRAME_MAX)
			return -1;
		i += (size_t)size + 2;
	}
	for (;;) {		/* trailers up to the blank line */
		long e = line_end(p, n, i);

		if (e <= 0 || e - (long)i == 2)
			return e;
		i = (size_t)e;
	}
}

static long http_parse(const char *p, size_t n, bool *failed)
{
	struct http_head h;
	size_t i = 0;
	long e;

	/* interim 1xx answers (100 Continue) precede the real one */
	while ((e = http_head(p, n, i, &h)) > 0 && h.status < 200 && h.status != 101)
		i = (size_t)e;
	if (e <= 0)
		return e;
	*failed = h.status >= 400;	/* a 404 to our GET / is no measurement of the service */
	if (h.status == 204 || h.status == 304 || h.status == 101)
		return e;
	if (h.chunked)
		return chunked_body(p, n, (size_t)e);
	/* without a length the body runs to the close: no keep-alive answer */
	if (h.clen < 0)
		return -1;
	return n - (size_t)e < (size_t)h.clen ? 0 : e + (long)h.clen;
}

long loadgen_parse(unsigned framing, const char *p, size_t n, bool *failed)
{
	*failed = false;
	if (!n)
		return 0;
	switch (framing) {
	case DITTO_FRAMING_RESP: {
		long e = resp_elem(p, n, 0, 0);

		*failed = e > 0 && (p[0] == '-' || p[0] == '!');
		return e;
	}
	case DITTO_FRAMING_MEMCACHE_TEXT: return mctext_parse(p, n, failed);
	case DITTO_FRAMING_MEMCACHE_BINARY: return mcbin_parse(p, n, failed);
	case DITTO_FRAMING_HTTP1: return http_parse(p, n, failed);
	case DITTO_FRAMING_LENGTH_PREFIXED: return lp_parse(p, n);
	case DITTO_FRAMING_POSTGRES: return pg_parse(p, n, failed);
	case DITTO_FRAMING_MYSQL: return my_parse(p, n, failed);
	case DITTO_FRAMING_RAW: return n > LOADGEN_FRAME_MAX ? LOADGEN_FRAME_MAX : (long)n;
	default: return -1;
	}
}
