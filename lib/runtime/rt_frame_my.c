/* SPDX-License-Identifier: MIT */
/*
 * The MySQL/MariaDB client/server protocol 4.1, enough for libmysqlclient
 * and libmariadb clients and sysbench: after the handshake
 * (rt_frame_my_hello.c) a request is one command packet. Queries and
 * prepared statements succeed; one that returns rows gets one row, its
 * first column "0...01" grown to the drawn response size
 * (rt_frame_my_reply.c), its other columns NULL. Packets split over 16
 * MiB, out of sequence or shorter than their command's fields close the
 * connection.
 */
#include "rt_int.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

enum {
	COM_QUIT = 0x01, COM_INIT_DB = 0x02, COM_QUERY = 0x03, COM_FIELD_LIST = 0x04,
	COM_STATISTICS = 0x09, COM_PROCESS_KILL = 0x0c, COM_PING = 0x0e,
	COM_CHANGE_USER = 0x11, COM_STMT_PREPARE = 0x16, COM_STMT_EXECUTE = 0x17,
	COM_STMT_SEND_LONG_DATA = 0x18, COM_STMT_CLOSE = 0x19, COM_STMT_RESET = 0x1a,
	COM_SET_OPTION = 0x1b, COM_RESET_CONNECTION = 0x1f,
};

#define PARAMS_MAX 65535u	/* MySQL's own limit on placeholders */

static uint32_t le(const char *p, int bytes)
{
	uint32_t v = 0;

	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | (unsigned char)p[i];
	return v;
}

/* ---- prepared statements, by id ---- */

static struct rt_my_stmt *stmt_slot(struct rt_conn *c, uint32_t id)
{
	return &c->my.stmts[id % RT_MY_STMTS];
}

/* The statement of that id, or NULL: never prepared, closed, or pushed
 * out by one prepared RT_MY_STMTS later. */
static const struct rt_my_stmt *stmt_find(struct rt_conn *c, uint32_t id)
{
	const struct rt_my_stmt *s = stmt_slot(c, id);

	return id && s->id == id ? s : NULL;
}

/* ---- cutting: every length checked here, once ---- */

/* Whether a command's body (after its byte) holds its fixed fields. */
static bool command_fits(unsigned char cmd, size_t n)
{
	switch (cmd) {
	case COM_STMT_EXECUTE:	/* id, flags, iteration count */
		return n >= 9;
	case COM_STMT_SEND_LONG_DATA:	/* id, parameter */
		return n >= 6;
	case COM_STMT_CLOSE: case COM_STMT_RESET: case COM_PROCESS_KILL:
		return n == 4;
	case COM_SET_OPTION:
		return n == 2;
	default:
		return true;
	}
}

static int cut_command(struct rt_conn *c, const char *body, size_t n, uint8_t seq,
		       struct rt_req *req)
{
	unsigned char cmd = (unsigned char)body[0];

	if (seq != 0 || !command_fits(cmd, n - 1))
		return -1;
	req->op = cmd;
	req->arg = body + 1;
	req->arglen = n - 1;
	switch (cmd) {
	case COM_QUIT:
		req->serve = false;
		req->quiet = req->close_after = true;
		break;
	case COM_STMT_CLOSE:	/* no answer: forgotten here */
		if (stmt_find(c, le(body + 1, 4)))
			stmt_slot(c, le(body + 1, 4))->id = 0;
		/* fall through */
	case COM_STMT_SEND_LONG_DATA:
		req->serve = false;
		req->quiet = true;
		break;
	default:
		break;
	}
	return 0;
}

bool rt_my_needs_more(const char *p, size_t n)
{
	return n >= 4 && n < 4 + (size_t)le(p, 3);
}

long rt_my_cut(struct rt_conn *c, const char *p, size_t n, struct rt_req *req)
{
	uint32_t len;
	uint8_t seq;
	int r;

	if (n < 4)
		return 0;
	len = le(p, 3);
	seq = (uint8_t)p[3];
	/* 0xffffff continues in the next packet: more than any clone takes */
	if (len == 0 || len == 0xffffff)
		return -1;
	if (n < 4 + (size_t)len)
		return 0;
	req->p = p;
	req->len = 4 + (size_t)len;
	if (c->proto == RT_MY_COMMANDS)
		r = cut_command(c, p + 4, len, seq, req);
	else
		r = rt_my_cut_hello(c, p + 4, len, seq, req);
	return r ? -1 : (long)req->len;
}

/* ---- responding ---- */

/* Placeholders of a statement: '?' outside quotes and comments' reach. */
static unsigned placeholders(const char *s, size_t n)
{
	unsigned count = 0;
	char quote = 0;

	for (size_t i = 0; i < n; i++) {
		if (quote && s[i] == '\\')
			i++;	/* an escaped character, maybe the quote */
		else if (quote)
			quote = s[i] == quote ? 0 : quote;
		else if (s[i] == '\'' || s[i] == '"' || s[i] == '`')
			quote = s[i];
		else if (s[i] == '?')
			count++;
	}
	return count;
}

/* Columns of a statement's result (0: none, an OK), from its first
 * keyword: rt_pg_classify()'s, and MySQL's own that return rows. */
static unsigned result_columns(const char *s, size_t n)
{
	struct rt_pg_stmt st = rt_pg_classify(s, n);
	static const char *const rows[] = { "DESCRIBE", "DESC", "EXPLAIN" };

	for (size_t i = 0; !st.cols && i < sizeof(rows) / sizeof(rows[0]); i++)
		if (strlen(rows[i]) == st.wordlen && !strncasecmp(rows[i], st.word, st.wordlen))
			st.cols = 1;
	return st.cols;
}

static void transaction(struct rt_conn *c, unsigned txn)
{
	if (txn != RT_PG_TXN_KEEP)
		c->my.in_txn = txn == RT_PG_TXN_OPEN;
}

/* What a statement that returns no rows does: the transaction it opens
 * or closes, and the rows it says it changed. */
static uint64_t effect(struct rt_conn *c, const char *s, size_t n)
{
	struct rt_pg_stmt st = rt_pg_classify(s, n);
	static const char *const writes[] = { "INSERT", "UPDATE", "DELETE", "REPLACE" };

	transaction(c, rt_pg_kw(st.kw)->txn);
	for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]); i++)
		if (strlen(writes[i]) == st.wordlen && !strncasecmp(writes[i], st.word, st.wordlen))
			return 1;
	return 0;
}

static void result(struct rt_my_reply *r, const struct rt_conn *c, unsigned cols, bool binary)
{
	size_t at = rt_my_begin(r);

	rt_my_put_lenenc(r, cols);
	rt_my_end(r, at);
	rt_my_columns(r, c, cols);
	rt_my_row(r, cols, binary);
	rt_my_eof(r, c);
}

static void query(struct rt_my_reply *r, struct rt_conn *c, const char *q, size_t n)
{
	unsigned cols = result_columns(q, n);

	if (rt_pg_classify(q, n).empty)
		rt_my_error(r, 1065, "42000", "Query was empty");
	else if (cols)
		result(r, c, cols, false);
	else
		rt_my_ok(r, c, effect(c, q, n));
}

/* COM_STMT_PREPARE_OK, then a definition per parameter and per column. */
static void prepare(struct rt_my_reply *r, struct rt_conn *c, const char *q, size_t n)
{
	unsigned params = placeholders(q, n), cols = result_columns(q, n);
	struct rt_my_stmt *s;
	size_t at;

	if (params > PARAMS_MAX) {
		rt_my_error(r, 1390, "HY000", "Prepared statement contains too many placeholders");
		return;
	}
	if (!++c->my.next_id)	/* 0 marks a free slot */
		c->my.next_id = 1;
	s = stmt_slot(c, c->my.next_id);
	*s = (struct rt_my_stmt){ c->my.next_id, (uint16_t)params, (uint8_t)cols,
				  rt_pg_kw(rt_pg_classify(q, n).kw)->txn };
	at = rt_my_begin(r);
	rt_my_put_le(r, 0x00, 1);
	rt_my_put_le(r, s->id, 4);
	rt_my_put_le(r, cols, 2);
	rt_my_put_le(r, params, 2);
	rt_my_put_le(r, 0, 3);		/* reserved, warnings */
	rt_my_end(r, at);
	if (params)
		rt_my_columns(r, c, params);
	if (cols)
		rt_my_columns(r, c, cols);
}

/* The statement's result in the binary protocol. */
static void execute(struct rt_my_reply *r, struct rt_conn *c, const char *body)
{
	const struct rt_my_stmt *s = stmt_find(c, le(body, 4));

	if (!s) {
		rt_my_error(r, 1243, "HY000", "Unknown prepared statement handler");
	} else if (s->cols) {
		result(r, c, s->cols, true);
	} else {
		transaction(c, s->txn);
		rt_my_ok(r, c, 0);
	}
}

/* COM_RESET_CONNECTION and COM_CHANGE_USER start the session afresh. */
static void reset(struct rt_my_reply *r, struct rt_conn *c)
{
	memset(&c->my, 0, sizeof(c->my));
	rt_my_ok(r, c, 0);
}

static void statistics(struct rt_my_reply *r)
{
	static const char text[] = "Uptime: 1  Threads: 1  Questions: 1  Slow queries: 0  "
				   "Opens: 0  Open tables: 0  Queries per second avg: 1.000";
	size_t at = rt_my_begin(r);

	rt_my_put(r, text, sizeof(text) - 1);
	rt_my_end(r, at);
}

static void command(struct rt_my_reply *r, struct rt_conn *c, const struct rt_req *req)
{
	switch (req->op) {
	case RT_MY_OP_AUTH_SWITCH:
		rt_my_auth_switch(r);
		break;
	case COM_QUERY:
		query(r, c, req->arg, req->arglen);
		break;
	case COM_STMT_PREPARE:
		prepare(r, c, req->arg, req->arglen);
		break;
	case COM_STMT_EXECUTE:
		execute(r, c, req->arg);
		break;
	case COM_SET_OPTION: case COM_FIELD_LIST:	/* no fields of no table */
		rt_my_eof(r, c);
		break;
	case COM_STATISTICS:
		statistics(r);
		break;
	case COM_CHANGE_USER: case COM_RESET_CONNECTION:
		reset(r, c);
		break;
	case RT_MY_OP_AUTH_OK: case COM_INIT_DB: case COM_PING: case COM_STMT_RESET:
	case COM_PROCESS_KILL:
		rt_my_ok(r, c, 0);
		break;
	default:
		rt_my_error(r, 1047, "08S01", "Unknown command");
		break;
	}
}

int rt_my_respond(struct rt_conn *c, const struct rt_req *req, struct rt_rng *rng, struct rt_buf *out)
{
	size_t start = out->len;
	struct rt_my_reply r = { .out = out, .limit = start + RT_RESPONSE_MAX,
				 .seq = (uint8_t)(req->p[3] + 1) };

	command(&r, c, req);
	rt_my_fit(&r, &c->my, start, rng);
	return r.err ? -ENOMEM : 0;
}
