/* SPDX-License-Identifier: MIT */
/*
 * The redis protocol (RESP): requests are arrays of bulk strings or inline
 * command lines; a response is one bulk string of the drawn size. CONFIG
 * GET, PING and QUIT get the replies redis-benchmark expects.
 */
#include "rt_int.h"

#include <string.h>
#include <strings.h>

enum { RESP_CMD, RESP_CONFIG_GET, RESP_CONFIG_OTHER, RESP_PING, RESP_QUIT };

struct args {
	const char *a[3];
	size_t len[3];
	long long count;
};

static bool is_word(const char *p, size_t n, const char *w)
{
	return strlen(w) == n && !strncasecmp(p, w, n);
}

/* The first three arguments decide the reply. */
static void classify(const struct args *a, struct rt_req *req)
{
	req->op = RESP_CMD;
	if (a->count >= 1 && is_word(a->a[0], a->len[0], "CONFIG")) {
		req->op = RESP_CONFIG_OTHER;
		if (a->count >= 2 && is_word(a->a[1], a->len[1], "GET")) {
			req->op = RESP_CONFIG_GET;
			req->arg = a->count >= 3 ? a->a[2] : "";
			req->arglen = a->count >= 3 ? a->len[2] : 0;
		}
	} else if (a->count >= 1 && is_word(a->a[0], a->len[0], "PING")) {
		req->op = RESP_PING;
	} else if (a->count >= 1 && is_word(a->a[0], a->len[0], "QUIT")) {
		req->op = RESP_QUIT;
		req->close_after = true;
	}
}

/* "<type><integer>\r\n": the line's length, 0 (need more) or -1. */
static long int_line(const char *p, size_t n, long long *v)
{
	const char *nl = memchr(p, '\n', n < RT_LINE_MAX ? n : RT_LINE_MAX);
	const char *q = p + 1;
	bool neg = false;

	if (!nl)
		return n >= RT_LINE_MAX ? -1 : 0;
	if (nl - p < 3 || nl[-1] != '\r')
		return -1;
	if (*q == '-') {
		neg = true;
		q++;
	}
	if (q == nl - 1 || nl - 1 - q > 18)
		return -1;
	for (*v = 0; q < nl - 1; q++) {
		if (*q < '0' || *q > '9')
			return -1;
		*v = *v * 10 + (*q - '0');
	}
	*v = neg ? -*v : *v;
	return nl - p + 1;
}

static long cut_array(const char *p, size_t n, struct rt_req *req)
{
	struct args a = { .count = 0 };
	long long count, len;
	long l = int_line(p, n, &count);
	size_t pos;

	if (l <= 0)
		return l;
	pos = (size_t)l;
	if (count <= 0) {	/* "*0" or "*-1": redis ignores it */
		req->serve = false;
		req->quiet = true;
		return (long)pos;
	}
	if (count > 1024 * 1024)
		return -1;
	for (long long i = 0; i < count; i++) {
		if (pos >= n)
			return 0;
		if (p[pos] != '$')
			return -1;
		l = int_line(p + pos, n - pos, &len);
		if (l <= 0)
			return l;
		if (len < 0 || pos + (size_t)l + (size_t)len + 2 > RT_FRAME_MAX)
			return -1;
		pos += (size_t)l;
		if (n - pos < (size_t)len + 2)
			return 0;
		if (p[pos + (size_t)len] != '\r' || p[pos + (size_t)len + 1] != '\n')
			return -1;
		if (i < 3) {
			a.a[i] = p + pos;
			a.len[i] = (size_t)len;
		}
		pos += (size_t)len + 2;
	}
	a.count = count;
	classify(&a, req);
	return (long)pos;
}

static long cut_inline(const char *p, size_t n, struct rt_req *req)
{
	const char *nl = memchr(p, '\n', n < RT_LINE_MAX ? n : RT_LINE_MAX), *q, *end;
	struct args a = { .count = 0 };

	if (!nl)
		return n >= RT_LINE_MAX ? -1 : 0;
	end = nl > p && nl[-1] == '\r' ? nl - 1 : nl;
	for (q = p; q < end;) {
		const char *t;

		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
		for (t = q; t < end && *t != ' ' && *t != '\t'; t++)
			;
		if (t > q && a.count < 3) {
			a.a[a.count] = q;
			a.len[a.count] = (size_t)(t - q);
		}
		a.count += t > q;
		q = t;
	}
	if (!a.count) {		/* an empty line: no reply */
		req->serve = false;
		req->quiet = true;
	}
	classify(&a, req);
	return nl - p + 1;
}

long rt_resp_cut(const char *p, size_t n, struct rt_req *req)
{
	long l = p[0] == '*' ? cut_array(p, n, req) : cut_inline(p, n, req);

	if (l > 0) {
		req->p = p;
		req->len = (size_t)l;
	}
	return l;
}

/* "$n\r\n" + n bytes + "\r\n" totalling the drawn size, or +OK when the
 * draw is below the smallest bulk string. */
static int bulk(struct rt_rng *rng, struct rt_buf *out)
{
	uint64_t s = rt_frame_size(rng, 5), n;

	if (s < 6)
		return rt_buf_puts(out, "+OK\r\n");
	n = rt_fit_decimal(s, 5);
	if (rt_buf_puts(out, "$") || rt_buf_put_u64(out, n) || rt_buf_puts(out, "\r\n") ||
	    rt_buf_fill(out, n))
		return -1;
	return rt_buf_puts(out, "\r\n");
}

int rt_resp_respond(const struct rt_req *req, struct rt_rng *rng, struct rt_buf *out)
{
	switch (req->op) {
	case RESP_CONFIG_GET:
		/* [parameter, ""]: what redis-benchmark reads its settings from */
		if (rt_buf_printf(out, "*2\r\n$%zu\r\n", req->arglen) || rt_buf_put(out, req->arg, req->arglen))
			return -1;
		return rt_buf_puts(out, "\r\n$0\r\n\r\n");
	case RESP_CONFIG_OTHER:
	case RESP_QUIT:
		return rt_buf_puts(out, "+OK\r\n");
	case RESP_PING:
		return rt_buf_puts(out, "+PONG\r\n");
	default:
		return bulk(rng, out);
	}
}
