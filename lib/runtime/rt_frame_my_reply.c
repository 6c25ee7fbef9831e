/* SPDX-License-Identifier: MIT */
/*
 * The packets a MySQL clone answers with: OK, ERR, EOF, column
 * definitions and one row, each with its 3-byte length and the next
 * sequence number, and the growth of that row's first value to the drawn
 * response size less what the connection's replies sent beyond their
 * draws (rt_my_fit). Nothing written here comes from the client's bytes.
 */
#include "rt_int.h"

#include <string.h>

#define STATUS_IN_TRANS 0x0001
#define STATUS_AUTOCOMMIT 0x0002
#define TYPE_VAR_STRING 0xfd
#define CHARSET_UTF8MB4 45

void rt_my_put(struct rt_my_reply *r, const void *p, size_t n)
{
	if (!r->err && (r->out->len + n > r->limit || rt_buf_put(r->out, p, n)))
		r->err = -1;
}

/* bytes: 1 to 8 */
void rt_my_put_le(struct rt_my_reply *r, uint64_t v, int bytes)
{
	unsigned char b[8];

	for (int i = 0; i < bytes; i++, v >>= 8)
		b[i] = (unsigned char)v;
	rt_my_put(r, b, (size_t)bytes);
}

static unsigned lenenc_size(uint64_t v)
{
	return v < 251 ? 1 : v < (1u << 16) ? 3 : v < (1u << 24) ? 4 : 9;
}

void rt_my_put_lenenc(struct rt_my_reply *r, uint64_t v)
{
	static const unsigned char mark[] = { 0, 0, 0, 0xfc, 0xfd, 0, 0, 0, 0, 0xfe };
	unsigned n = lenenc_size(v);

	if (n == 1) {
		rt_my_put_le(r, v, 1);
		return;
	}
	rt_my_put(r, &mark[n], 1);
	rt_my_put_le(r, v, (int)n - 1);
}

static void put_lenenc_str(struct rt_my_reply *r, const char *s)
{
	rt_my_put_lenenc(r, strlen(s));
	rt_my_put(r, s, strlen(s));
}

static void set_le(char *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++, v >>= 8)
		p[i] = (char)(unsigned char)v;
}

size_t rt_my_begin(struct rt_my_reply *r)
{
	size_t at = r->out->len;

	rt_my_put_le(r, 0, 3);
	rt_my_put(r, &r->seq, 1);
	r->seq++;
	return at;
}

void rt_my_end(struct rt_my_reply *r, size_t at)
{
	if (!r->err)
		set_le(r->out->data + at, r->out->len - at - 4, 3);
}

uint16_t rt_my_status(const struct rt_conn *c)
{
	return STATUS_AUTOCOMMIT | (c->my.in_txn ? STATUS_IN_TRANS : 0);
}

void rt_my_ok(struct rt_my_reply *r, const struct rt_conn *c, uint64_t affected)
{
	size_t at = rt_my_begin(r);

	rt_my_put_le(r, 0x00, 1);
	rt_my_put_lenenc(r, affected);
	rt_my_put_lenenc(r, 0);		/* last insert id */
	rt_my_put_le(r, rt_my_status(c), 2);
	rt_my_put_le(r, 0, 2);		/* warnings */
	rt_my_end(r, at);
}

void rt_my_eof(struct rt_my_reply *r, const struct rt_conn *c)
{
	size_t at = rt_my_begin(r);

	rt_my_put_le(r, 0xfe, 1);
	rt_my_put_le(r, 0, 2);		/* warnings */
	rt_my_put_le(r, rt_my_status(c), 2);
	rt_my_end(r, at);
}

void rt_my_error(struct rt_my_reply *r, unsigned code, const char *state, const char *msg)
{
	size_t at = rt_my_begin(r);

	rt_my_put_le(r, 0xff, 1);
	rt_my_put_le(r, code, 2);
	rt_my_put(r, "#", 1);
	rt_my_put(r, state, 5);
	rt_my_put(r, msg, strlen(msg));
	rt_my_end(r, at);
}

/* A ColumnDefinition41 of a text column named "v", of any table. */
static void column(struct rt_my_reply *r)
{
	size_t at = rt_my_begin(r);

	put_lenenc_str(r, "def");	/* catalog */
	put_lenenc_str(r, "");		/* schema */
	put_lenenc_str(r, "");		/* table */
	put_lenenc_str(r, "");		/* original table */
	put_lenenc_str(r, "v");		/* name */
	put_lenenc_str(r, "");		/* original name */
	rt_my_put_lenenc(r, 0x0c);	/* length of the fixed fields */
	rt_my_put_le(r, CHARSET_UTF8MB4, 2);
	rt_my_put_le(r, 1020, 4);	/* column length: a VARCHAR(255) */
	rt_my_put_le(r, TYPE_VAR_STRING, 1);
	rt_my_put_le(r, 0, 2);		/* flags */
	rt_my_put_le(r, 0, 1);		/* decimals */
	rt_my_put_le(r, 0, 2);		/* filler */
	rt_my_end(r, at);
}

void rt_my_columns(struct rt_my_reply *r, const struct rt_conn *c, unsigned n)
{
	for (unsigned i = 0; i < n && !r->err; i++)
		column(r);
	rt_my_eof(r, c);
}

/* The text protocol's row is one length-encoded string per column (0xfb
 * for NULL); the binary protocol's a 0 byte, a NULL bitmap whose bits
 * start at 2, then the values that are not NULL. */
void rt_my_row(struct rt_my_reply *r, unsigned cols, bool binary)
{
	size_t at = rt_my_begin(r);

	if (binary) {
		unsigned char map[(RT_PG_COLS_MAX + 9) / 8] = { 0 };
		size_t bytes = (cols + 9) / 8;

		for (unsigned i = 1; i < cols; i++)
			map[(i + 2) / 8] |= (unsigned char)(1u << ((i + 2) % 8));
		rt_my_put_le(r, 0x00, 1);
		rt_my_put(r, map, bytes);
	}
	if (!r->have_row && !r->err) {
		r->have_row = true;
		r->row = at;
		r->val = r->out->len;
	}
	rt_my_put(r, "\x01" "1", 2);
	for (unsigned i = 1; !binary && i < cols; i++)
		rt_my_put_le(r, 0xfb, 1);
	rt_my_end(r, at);
}

/* The length L of a value that, with its length prefix, takes `room`
 * bytes; one or two fewer where the prefix grows by more than L does. */
static uint64_t value_len(uint64_t room)
{
	static const unsigned prefixes[] = { 1, 3, 4, 9 };

	for (uint64_t w = room; w > 1; w--)
		for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
			if (w > prefixes[i] && lenenc_size(w - prefixes[i]) == prefixes[i])
				return w - prefixes[i];
	return 1;
}

/* Grows the first row's value "1" to "0...01" by about extra bytes,
 * within one packet's payload. */
static void grow_value(struct rt_my_reply *r, size_t extra)
{
	struct rt_buf *out = r->out;
	size_t payload, grow, pre;
	uint64_t len;
	char *d;

	payload = (size_t)(unsigned char)out->data[r->row] |
		  (size_t)(unsigned char)out->data[r->row + 1] << 8 |
		  (size_t)(unsigned char)out->data[r->row + 2] << 16;
	if (payload + extra > RT_MY_PACKET_MAX)
		extra = RT_MY_PACKET_MAX - payload;
	len = value_len(2 + extra);
	pre = lenenc_size(len);
	grow = pre + (size_t)len - 2;
	if (!grow)
		return;
	if (rt_buf_reserve(out, grow)) {
		r->err = -1;
		return;
	}
	d = out->data + r->val;
	memmove(d + 2 + grow, d + 2, out->len - r->val - 2);
	out->len += grow;
	if (pre == 1) {
		d[0] = (char)len;
	} else {
		d[0] = (char)(pre == 3 ? 0xfc : pre == 4 ? 0xfd : 0xfe);
		set_le(d + 1, len, (int)pre - 1);
	}
	memset(d + pre, '0', (size_t)len - 1);
	d[pre + len - 1] = '1';
	set_le(out->data + r->row, payload + grow, 3);
}

/* How far the bytes sent may run ahead of or behind the draws: a service
 * whose replies cannot shrink or grow (all OK packets, say) must not make
 * its next result megabytes long. */
#define OWED_MAX (256.0 * 1024)

/*
 * Sizes the reply from start. Every reply draws a size from the whole
 * histogram, and the connection keeps the bytes it sent beyond its draws:
 * a reply with a row grows its first value to its draw less what is owed;
 * one without (an OK, an error) or already larger only adds to what is
 * owed. A draw among the buckets at least as large as each result (what
 * this replaced) left the small replies' share out of the results, and
 * sysbench's mean reply came out 8% large.
 */
void rt_my_fit(struct rt_my_reply *r, struct rt_my_conn *my, size_t start, struct rt_rng *rng)
{
	size_t have = r->out->len - start;
	double drawn = (double)rt_frame_size(rng, 0), want = drawn - my->owed;

	want = want > RT_RESPONSE_MAX ? RT_RESPONSE_MAX : want;

	if (!r->err && r->have_row && want > (double)have + 1)
		grow_value(r, (size_t)(want - (double)have));
	my->owed += (double)(r->out->len - start) - drawn;
	my->owed = my->owed > OWED_MAX ? OWED_MAX : my->owed < -OWED_MAX ? -OWED_MAX : my->owed;
}
