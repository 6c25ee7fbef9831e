/* SPDX-License-Identifier: MIT */
/*
 * The PostgreSQL frontend/backend protocol 3.0, enough for libpq clients
 * and pgbench: SSLRequest is declined ('N'), the StartupMessage is trusted
 * (AuthenticationOk, the parameters libpq reads, BackendKeyData,
 * ReadyForQuery). A request is a simple Query or an extended-protocol
 * batch up to its Sync (or Flush). Every statement succeeds with the tag
 * of its first keyword; one that returns rows gets one row, its first
 * column "0...01" (so a count(*) reads 1) grown to the drawn response
 * size, its other columns NULL. Anything else closes the connection.
 */
#include "rt_int.h"

#include <errno.h>
#include <string.h>

#define STARTUP_MAX 10000u	/* PostgreSQL's own limit on a startup packet */
#define PROTO_30 196608u
#define SSL_REQUEST 80877103u
#define GSSENC_REQUEST 80877104u
#define CANCEL_REQUEST 80877102u

enum { OP_DECLINE, OP_STARTUP, OP_QUERY, OP_BATCH };

static uint32_t be32(const char *p)
{
	return (uint32_t)(unsigned char)p[0] << 24 | (uint32_t)(unsigned char)p[1] << 16 |
	       (uint32_t)(unsigned char)p[2] << 8 | (unsigned char)p[3];
}

/* ---- cutting: every length and string checked here, once ---- */

static long cut_untyped(struct rt_conn *c, const char *p, size_t n, struct rt_req *req)
{
	uint32_t len, code;

	if (n < 8)
		return 0;
	len = be32(p);
	code = be32(p + 4);
	if (len < 8 || len > STARTUP_MAX)
		return -1;
	if (n < len)
		return 0;
	req->serve = false;
	if (code == SSL_REQUEST || code == GSSENC_REQUEST) {
		req->op = OP_DECLINE;
	} else if (code == PROTO_30) {
		req->op = OP_STARTUP;
		c->proto = 1;
	} else if (code == CANCEL_REQUEST) {	/* nothing runs long enough to cancel */
		req->quiet = req->close_after = true;
	} else {
		return -1;
	}
	return (long)len;
}

/* Offset past the NUL of the string at b[i..n), or 0 if there is none. */
static size_t cstr_end(const char *b, size_t n, size_t i)
{
	const char *z = i < n ? memchr(b + i, 0, n - i) : NULL;

	return z ? (size_t)(z - b) + 1 : 0;
}

/* The body of one extended-protocol message holds what its reply reads. */
static bool valid_body(char type, const char *b, size_t n)
{
	size_t i;

	switch (type) {
	case 'P':	/* statement name, query, parameter types */
		return (i = cstr_end(b, n, 0)) && cstr_end(b, n, i);
	case 'B':	/* portal name, statement name, ... */
		return (i = cstr_end(b, n, 0)) && cstr_end(b, n, i);
	case 'D': case 'C':	/* 'S' or 'P', then a name */
		return n >= 2 && (b[0] == 'S' || b[0] == 'P') && cstr_end(b, n, 1) == n;
	case 'E':	/* portal name, row limit */
		return (i = cstr_end(b, n, 0)) && i + 4 == n;
	case 'S': case 'H':
		return n == 0;
	default:
		return false;
	}
}

/* Parse/Bind/Describe/Execute/Close... up to a Sync or Flush: one request. */
static long cut_batch(const char *p, size_t n, struct rt_req *req)
{
	size_t pos = 0;

	while (pos + 5 <= n) {
		char type = p[pos];
		uint32_t len = be32(p + pos + 1);

		if (len < 4 || len > RT_FRAME_MAX - pos)
			return -1;
		if (pos + 1 + len > n)
			return 0;
		if (!valid_body(type, p + pos + 5, len - 4))
			return -1;
		pos += 1 + len;
		if (type == 'S' || type == 'H') {
			req->op = OP_BATCH;
			return (long)pos;
		}
	}
	return pos >= RT_FRAME_MAX ? -1 : 0;
}

static long cut_typed(const char *p, size_t n, struct rt_req *req)
{
	uint32_t len;

	if (n < 5)
		return 0;
	len = be32(p + 1);
	if (len < 4 || len > RT_FRAME_MAX)
		return -1;
	switch (p[0]) {
	case 'Q':	/* one NUL-terminated query string */
		if (n < 1 + (size_t)len)
			return 0;
		if (len < 5 || p[len] != 0)
			return -1;
		req->op = OP_QUERY;
		req->arg = p + 5;
		req->arglen = strnlen(req->arg, len - 4);
		return 1 + (long)len;
	case 'X':	/* Terminate */
		if (len != 4)
			return -1;
		req->serve = false;
		req->quiet = req->close_after = true;
		return 5;
	default:
		return cut_batch(p, n, req);
	}
}

long rt_pg_cut(struct rt_conn *c, const char *p, size_t n, struct rt_req *req)
{
	long len = c->proto ? cut_typed(p, n, req) : cut_untyped(c, p, n, req);

	req->p = p;
	req->len = len > 0 ? (size_t)len : 0;
	return len;
}

/* ---- responding ---- */

/* Where the first row's first value is, to grow it to the drawn size. */
struct reply {
	struct rt_buf *out;
	size_t row, val;	/* offsets of the DataRow and of its value */
	bool have_row;
	/* Where the answer must end: a statement of a few bytes can ask for
	 * a 64-column row description, so a hostile query or batch would
	 * otherwise grow the output ~250 times its size. */
	size_t limit;
	int err;
};

static void put(struct reply *r, const void *p, size_t n)
{
	if (!r->err && (r->out->len + n > r->limit || rt_buf_put(r->out, p, n)))
		r->err = -1;
}

static void put_be(struct reply *r, uint32_t v, int bytes)
{
	unsigned char b[4];

	for (int i = bytes - 1; i >= 0; i--, v >>= 8)
		b[i] = (unsigned char)v;
	put(r, b, (size_t)bytes);
}

static void set_be32(char *p, uint32_t v)
{
	for (int i = 3; i >= 0; i--, v >>= 8)
		p[i] = (char)(unsigned char)v;
}

/* A message: its type, a length patched by msg_end(). */
static size_t msg_begin(struct reply *r, char type)
{
	size_t at = r->out->len;

	put(r, &type, 1);
	put_be(r, 0, 4);
	return at;
}

static void msg_end(struct reply *r, size_t at)
{
	if (!r->err)
		set_be32(r->out->data + at + 1, (uint32_t)(r->out->len - at - 1));
}

static void msg_empty(struct reply *r, char type)
{
	msg_end(r, msg_begin(r, type));
}

static void param(struct reply *r, const char *name, const char *value)
{
	size_t at = msg_begin(r, 'S');

	put(r, name, strlen(name) + 1);
	put(r, value, strlen(value) + 1);
	msg_end(r, at);
}

static void ready(struct reply *r, const struct rt_conn *c)
{
	size_t at = msg_begin(r, 'Z');

	put(r, c->pg.in_txn ? "T" : "I", 1);
	msg_end(r, at);
}

/* The parameters libpq and pgbench read; a PostgreSQL 15 as they expect. */
static void startup(struct reply *r, const struct rt_conn *c)
{
	size_t at = msg_begin(r, 'R');

	put_be(r, 0, 4);	/* AuthenticationOk: trust */
	msg_end(r, at);
	param(r, "server_version", "15.0");
	param(r, "server_encoding", "UTF8");
	param(r, "client_encoding", "UTF8");
	param(r, "DateStyle", "ISO, MDY");
	param(r, "integer_datetimes", "on");
	param(r, "standard_conforming_strings", "on");
	param(r, "TimeZone", "UTC");
	param(r, "IntervalStyle", "postgres");
	param(r, "is_superuser", "on");
	at = msg_begin(r, 'K');
	put_be(r, (uint32_t)c->fd, 4);	/* process id, secret: nothing to cancel */
	put_be(r, 0, 4);
	msg_end(r, at);
	ready(r, c);
}

static void row_description(struct reply *r, unsigned cols)
{
	size_t at = msg_begin(r, 'T');

	put_be(r, cols, 2);
	for (unsigned i = 0; i < cols; i++) {
		put(r, "?column?", 9);
		put_be(r, 0, 4);	/* table oid */
		put_be(r, 0, 2);	/* attribute number */
		put_be(r, 25, 4);	/* type: text */
		put_be(r, 0xffff, 2);	/* type length: variable */
		put_be(r, 0xffffffffu, 4);	/* type modifier: none */
		put_be(r, 0, 2);	/* text format */
	}
	msg_end(r, at);
}

static void data_row(struct reply *r, unsigned cols)
{
	size_t at = msg_begin(r, 'D');

	put_be(r, cols, 2);
	put_be(r, 1, 4);
	if (!r->have_row && !r->err) {
		r->have_row = true;
		r->row = at;
		r->val = r->out->len;
	}
	put(r, "1", 1);
	for (unsigned i = 1; i < cols; i++)
		put_be(r, 0xffffffffu, 4);	/* NULL */
	msg_end(r, at);
}

static void complete(struct reply *r, const struct rt_pg_stmt *st)
{
	const struct rt_pg_kw *kw = rt_pg_kw(st->kw);
	size_t at = msg_begin(r, 'C');

	if (st->kw)
		put(r, kw->tag, strlen(kw->tag));
	for (size_t i = 0; !st->kw && i < st->wordlen; i++) {	/* the client's word, upper case */
		char ch = st->word[i];

		ch = ch >= 'a' && ch <= 'z' ? (char)(ch - 'a' + 'A') : ch;
		put(r, &ch, 1);
	}
	put(r, "", 1);
	msg_end(r, at);
}

/* The result of an executed statement, and its effect on the transaction. */
static void execute(struct reply *r, struct rt_conn *c, const struct rt_pg_stmt *st)
{
	const struct rt_pg_kw *kw = rt_pg_kw(st->kw);

	if (st->cols)
		data_row(r, st->cols);
	complete(r, st);
	if (kw->txn != RT_PG_TXN_KEEP)
		c->pg.in_txn = kw->txn == RT_PG_TXN_OPEN;
}

/* Grows the first value so that the response from start is the drawn
 * size: the model's response bytes, whatever the statements. */
static void fit(struct reply *r, size_t start, struct rt_rng *rng)
{
	struct rt_buf *out = r->out;
	size_t have = out->len - start, extra;

	if (r->err || !r->have_row)
		return;
	extra = (size_t)(rt_frame_size_min(rng, have) - have);
	if (!extra)
		return;
	if (rt_buf_reserve(out, extra)) {
		r->err = -1;
		return;
	}
	memmove(out->data + r->val + extra, out->data + r->val, out->len - r->val);
	memset(out->data + r->val, '0', extra);
	out->len += extra;
	set_be32(out->data + r->row + 1, be32(out->data + r->row + 1) + (uint32_t)extra);
	set_be32(out->data + r->val - 4, be32(out->data + r->val - 4) + (uint32_t)extra);
}

/* A simple Query: each statement's result, then ReadyForQuery. */
static void query(struct reply *r, struct rt_conn *c, const char *q, size_t n)
{
	bool any = false;

	for (size_t i = 0; i < n;) {
		size_t len = rt_pg_statement_len(q + i, n - i);
		struct rt_pg_stmt st = rt_pg_classify(q + i, len);

		if (!st.empty) {
			if (st.cols)
				row_description(r, st.cols);
			execute(r, c, &st);
			any = true;
		}
		i += len + 1;
	}
	if (!any)
		msg_empty(r, 'I');	/* EmptyQueryResponse */
	ready(r, c);
}

/* ---- the extended protocol ---- */

/* What a batch knows: the statement its Parse named, the bound portal's. */
struct batch {
	const char *parsed_name;	/* NULL: no Parse yet */
	struct rt_pg_stmt parsed, portal;
};

static unsigned slot(const char *name)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return h % RT_PG_STMTS;
}

/* A statement by name: this batch's own Parse, or one remembered (a
 * collision of names only changes the tag and columns, never the order
 * of replies, which the client checks). */
static struct rt_pg_stmt named(const struct rt_conn *c, const struct batch *b, const char *name)
{
	struct rt_pg_stmt st = { .kw = 0 };
	unsigned s = slot(name);

	if (b->parsed_name && !strcmp(b->parsed_name, name))
		return b->parsed;
	st.kw = c->pg.kw[s];
	st.cols = c->pg.cols[s];
	return st;
}

static void parse(struct reply *r, struct rt_conn *c, struct batch *b, const char *body)
{
	const char *q = body + strlen(body) + 1;
	unsigned s = slot(body);

	b->parsed = rt_pg_classify(q, rt_pg_statement_len(q, strlen(q)));
	b->parsed_name = body;
	c->pg.kw[s] = (uint8_t)b->parsed.kw;
	c->pg.cols[s] = (uint8_t)b->parsed.cols;
	msg_empty(r, '1');	/* ParseComplete */
}

static void describe(struct reply *r, const struct rt_conn *c, const struct batch *b, const char *body)
{
	struct rt_pg_stmt st = b->portal;

	if (body[0] == 'S') {
		size_t at = msg_begin(r, 't');	/* ParameterDescription: none known */

		put_be(r, 0, 2);
		msg_end(r, at);
		st = named(c, b, body + 1);
	}
	if (st.cols)
		row_description(r, st.cols);
	else
		msg_empty(r, 'n');	/* NoData */
}

/* One message of a batch; cut_batch() checked its body. */
static void batch_message(struct reply *r, struct rt_conn *c, struct batch *b, char type,
			  const char *body)
{
	switch (type) {
	case 'P':
		parse(r, c, b, body);
		break;
	case 'B':
		b->portal = named(c, b, body + strlen(body) + 1);
		msg_empty(r, '2');	/* BindComplete */
		break;
	case 'D':
		describe(r, c, b, body);
		break;
	case 'E':
		execute(r, c, &b->portal);
		break;
	case 'C':
		msg_empty(r, '3');	/* CloseComplete */
		break;
	case 'S':
		ready(r, c);
		break;
	default:	/* 'H', Flush: what came so far is sent */
		break;
	}
}

static void batch(struct reply *r, struct rt_conn *c, const char *p, size_t n)
{
	struct batch b = { .parsed_name = NULL };

	for (size_t pos = 0; pos + 5 <= n;) {
		uint32_t len = be32(p + pos + 1);

		batch_message(r, c, &b, p[pos], p + pos + 5);
		pos += 1 + len;
	}
}

int rt_pg_respond(struct rt_conn *c, const struct rt_req *req, struct rt_rng *rng, struct rt_buf *out)
{
	size_t start = out->len;
	struct reply r = { .out = out, .have_row = false, .limit = start + RT_RESPONSE_MAX, .err = 0 };

	switch (req->op) {
	case OP_DECLINE:
		put(&r, "N", 1);
		break;
	case OP_STARTUP:
		startup(&r, c);
		break;
	case OP_QUERY:
		query(&r, c, req->arg, req->arglen);
		break;
	default:
		batch(&r, c, req->p, req->len);
		break;
	}
	fit(&r, start, rng);
	return r.err ? -ENOMEM : 0;
}
