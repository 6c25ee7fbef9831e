/* SPDX-License-Identifier: MIT */
/*
 * The memcached text protocol: command lines, storage commands with their
 * data block, and the replies memcached gives. A get answers every key it
 * asks for with a value sized so that the whole reply is the drawn size.
 */
#include "rt_int.h"

#include <stdlib.h>
#include <string.h>

enum { MC_GET, MC_GETS, MC_STORE, MC_DELETE, MC_INCR, MC_TOUCH, MC_VERSION, MC_STATS, MC_OK, MC_QUIT, MC_ERROR };

#define MAX_TOKENS 24

struct line {
	const char *tok[MAX_TOKENS];
	size_t len[MAX_TOKENS];
	unsigned n;		/* tokens seen, possibly more than MAX_TOKENS */
	const char *end;	/* end of the line without "\r\n" */
};

static void tokenize(const char *p, const char *end, struct line *l)
{
	l->n = 0;
	l->end = end;
	while (p < end) {
		const char *t;

		while (p < end && *p == ' ')
			p++;
		for (t = p; t < end && *t != ' '; t++)
			;
		if (t > p) {
			if (l->n < MAX_TOKENS) {
				l->tok[l->n] = p;
				l->len[l->n] = (size_t)(t - p);
			}
			l->n++;
		}
		p = t;
	}
}

static bool tok_is(const struct line *l, unsigned i, const char *w)
{
	return i < l->n && i < MAX_TOKENS && l->len[i] == strlen(w) && !memcmp(l->tok[i], w, l->len[i]);
}

static bool noreply(const struct line *l)
{
	return l->n <= MAX_TOKENS && tok_is(l, l->n - 1, "noreply");
}

static bool parse_size(const char *p, size_t n, uint64_t *v)
{
	if (!n || n > 12)
		return false;
	for (*v = 0; n--; p++) {
		if (*p < '0' || *p > '9')
			return false;
		*v = *v * 10 + (uint64_t)(*p - '0');
	}
	return true;
}

/* set/add/replace/append/prepend/cas: the line, then bytes + "\r\n". */
static long cut_store(const char *p, size_t n, size_t linelen, const struct line *l, struct rt_req *req)
{
	bool cas = tok_is(l, 0, "cas");
	unsigned want = cas ? 6 : 5;
	uint64_t bytes;
	size_t total;

	if (l->n < want || l->n > want + 1 || !parse_size(l->tok[4], l->len[4], &bytes) || bytes > RT_FRAME_MAX)
		return -1;
	total = linelen + (size_t)bytes + 2;
	if (n < total)
		return 0;
	if (p[total - 2] != '\r' || p[total - 1] != '\n')
		return -1;
	req->op = MC_STORE;
	req->quiet = l->n == want + 1 && noreply(l);
	return (long)total;
}

/* The keys of a get: from the first key to the end of the line. */
static void keys(const struct line *l, unsigned first, struct rt_req *req)
{
	if (first >= l->n || first >= MAX_TOKENS) {
		req->op = MC_ERROR;
		return;
	}
	req->arg = l->tok[first];
	req->arglen = (size_t)(l->end - l->tok[first]);
}

static void simple(const struct line *l, struct rt_req *req)
{
	static const struct {
		const char *cmd;
		int op;
	} cmds[] = {
		{ "delete", MC_DELETE }, { "incr", MC_INCR },	    { "decr", MC_INCR },
		{ "touch", MC_TOUCH },	 { "version", MC_VERSION }, { "stats", MC_STATS },
		{ "flush_all", MC_OK },	 { "verbosity", MC_OK },    { "quit", MC_QUIT },
	};

	req->op = MC_ERROR;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (tok_is(l, 0, cmds[i].cmd))
			req->op = cmds[i].op;
	if (req->op == MC_INCR && l->n >= 3) {
		req->arg = l->tok[2];
		req->arglen = l->len[2];
	}
	if (req->op == MC_QUIT) {
		req->quiet = true;
		req->close_after = true;
	} else if (req->op != MC_ERROR && req->op != MC_VERSION && req->op != MC_STATS && noreply(l)) {
		req->quiet = true;
	}
}

long rt_mctext_cut(const char *p, size_t n, struct rt_req *req)
{
	const char *nl = memchr(p, '\n', n < RT_LINE_MAX ? n : RT_LINE_MAX);
	size_t linelen;
	struct line l;
	long total;

	if (!nl)
		return n >= RT_LINE_MAX ? -1 : 0;
	linelen = (size_t)(nl - p) + 1;
	tokenize(p, nl > p && nl[-1] == '\r' ? nl - 1 : nl, &l);
	total = (long)linelen;
	if (tok_is(&l, 0, "set") || tok_is(&l, 0, "add") || tok_is(&l, 0, "replace") ||
	    tok_is(&l, 0, "append") || tok_is(&l, 0, "prepend") || tok_is(&l, 0, "cas")) {
		total = cut_store(p, n, linelen, &l, req);
	} else if (tok_is(&l, 0, "get") || tok_is(&l, 0, "gets")) {
		req->op = tok_is(&l, 0, "gets") ? MC_GETS : MC_GET;
		keys(&l, 1, req);
	} else if (tok_is(&l, 0, "gat") || tok_is(&l, 0, "gats")) {
		req->op = tok_is(&l, 0, "gats") ? MC_GETS : MC_GET;
		keys(&l, 2, req);
	} else {
		simple(&l, req);
	}
	if (total > 0) {
		req->p = p;
		req->len = (size_t)total;
	}
	return total;
}

/* Per key: "VALUE <key> 0 <n>[ <cas>]\r\n" + n bytes + "\r\n", less n
 * and its digits. */
static uint64_t key_fixed(size_t klen, bool gets)
{
	return 6 + klen + 3 + (gets ? 2 : 0) + 2 + 2;
}

/* The next space-separated key in [*p, end), false at the end. */
static bool next_key(const char **p, const char *end, const char **key, size_t *len)
{
	const char *q = *p, *t;

	while (q < end && *q == ' ')
		q++;
	for (t = q; t < end && *t != ' '; t++)
		;
	*p = t;
	*key = q;
	*len = (size_t)(t - q);
	return t > q;
}

/* Each key gets its own minimum plus an equal share of the rest; the
 * draw only takes sizes at or above the smallest reply. */
static int get_reply(const struct rt_req *req, struct rt_rng *rng, struct rt_buf *out)
{
	const char *end = req->arg + req->arglen, *p = req->arg, *key;
	bool gets = req->op == MC_GETS;
	uint64_t min = 5, s, extra, m = 0, i = 0;
	size_t klen;

	while (next_key(&p, end, &key, &klen)) {
		min += key_fixed(klen, gets) + 1;
		m++;
	}
	s = rt_frame_size_min(rng, min);
	extra = s - min;
	for (p = req->arg; next_key(&p, end, &key, &klen); i++) {
		uint64_t share = key_fixed(klen, gets) + 1 + extra / m + (i + 1 == m ? extra % m : 0);
		uint64_t n = rt_fit_decimal(share, key_fixed(klen, gets));

		if (rt_buf_puts(out, "VALUE ") || rt_buf_put(out, key, klen) ||
		    rt_buf_puts(out, " 0 ") || rt_buf_put_u64(out, n) ||
		    rt_buf_puts(out, gets ? " 1\r\n" : "\r\n") ||
		    rt_buf_fill(out, n) || rt_buf_puts(out, "\r\n"))
			return -1;
	}
	return rt_buf_puts(out, "END\r\n");
}

static int incr_reply(const struct rt_req *req, struct rt_buf *out)
{
	uint64_t v;

	if (!req->arg || !parse_size(req->arg, req->arglen, &v))
		v = 1;
	return rt_buf_put_u64(out, v) || rt_buf_puts(out, "\r\n");
}

int rt_mctext_respond(const struct rt_req *req, struct rt_rng *rng, struct rt_buf *out)
{
	switch (req->op) {
	case MC_GET:
	case MC_GETS:
		return get_reply(req, rng, out);
	case MC_STORE:
		return rt_buf_puts(out, "STORED\r\n");
	case MC_DELETE:
		return rt_buf_puts(out, "DELETED\r\n");
	case MC_INCR:
		return incr_reply(req, out);
	case MC_TOUCH:
		return rt_buf_puts(out, "TOUCHED\r\n");
	case MC_VERSION:
		return rt_buf_puts(out, "VERSION 1.6.21\r\n");
	case MC_STATS:
		return rt_buf_puts(out, "END\r\n");
	case MC_OK:
		return rt_buf_puts(out, "OK\r\n");
	case MC_QUIT:
		return 0;
	default:
		return rt_buf_puts(out, "ERROR\r\n");
	}
}
