/* SPDX-License-Identifier: MIT */
/*
 * Picks the framing's request cutter and response builder, and the
 * helpers they share: the drawn response size and fitting a decimal
 * length field into a total. Memcached framings decide text or binary per
 * connection from its first byte, as memcached itself does; PostgreSQL's
 * and MySQL's cutter and builder take the connection, whose state they
 * keep; MySQL's server speaks first (rt_frame_greet).
 */
#include "rt_int.h"

#include <errno.h>
#include <string.h>

struct framing {
	rt_cut_fn cut;
	rt_respond_fn respond;
};

static const struct framing framings[] = {
	[RT_FRAMING_RAW] = { rt_raw_cut, rt_raw_respond },
	[RT_FRAMING_HTTP1] = { rt_http_cut, rt_http_respond },
	[RT_FRAMING_RESP] = { rt_resp_cut, rt_resp_respond },
	[RT_FRAMING_MEMCACHE_TEXT] = { rt_mctext_cut, rt_mctext_respond },
	[RT_FRAMING_MEMCACHE_BINARY] = { rt_mcbin_cut, rt_mcbin_respond },
	[RT_FRAMING_LENGTH_PREFIXED] = { rt_lp_cut, rt_lp_respond },
};

static const struct framing *framing_of(struct rt_conn *c, const char *p, size_t n)
{
	enum rt_framing f = rt_config.framing;

	if (f == RT_FRAMING_MEMCACHE_TEXT || f == RT_FRAMING_MEMCACHE_BINARY) {
		if (!c->proto && n)
			c->proto = (unsigned char)p[0] == 0x80 ? 2 : 1;
		return &framings[c->proto == 2 ? RT_FRAMING_MEMCACHE_BINARY : RT_FRAMING_MEMCACHE_TEXT];
	}
	if ((unsigned)f >= sizeof(framings) / sizeof(framings[0]))
		f = RT_FRAMING_RAW;
	return &framings[f];
}

long rt_frame_cut(struct rt_conn *c, const char *p, size_t n, struct rt_req *req)
{
	memset(req, 0, sizeof(*req));
	req->serve = true;
	if (!n)
		return 0;
	if (rt_config.framing == RT_FRAMING_POSTGRES)
		return rt_pg_cut(c, p, n, req);
	if (rt_config.framing == RT_FRAMING_MYSQL)
		return rt_my_cut(c, p, n, req);
	return framing_of(c, p, n)->cut(p, n, req);
}

bool rt_frame_needs_more(struct rt_conn *c, const char *p, size_t n)
{
	struct rt_req req;

	switch (rt_config.framing) {
	case RT_FRAMING_MYSQL:
		return rt_my_needs_more(p, n);
	case RT_FRAMING_POSTGRES:
		return false;
	default:	/* pure cutters */
		return rt_frame_cut(c, p, n, &req) == 0;
	}
}

int rt_frame_respond(struct rt_conn *c, const struct rt_req *req, struct rt_rng *rng, struct rt_buf *out)
{
	if (req->quiet)
		return 0;
	if (rt_config.framing == RT_FRAMING_POSTGRES)
		return rt_pg_respond(c, req, rng, out);
	if (rt_config.framing == RT_FRAMING_MYSQL)
		return rt_my_respond(c, req, rng, out);
	return framing_of(c, req->p, req->len)->respond(req, rng, out);
}

int rt_frame_greet(struct rt_conn *c, struct rt_buf *out)
{
	if (rt_config.framing == RT_FRAMING_MYSQL)
		return rt_my_greet(c, out) ? -ENOMEM : 0;
	return 0;
}

static uint64_t clamp(uint64_t v, uint64_t min)
{
	v = v < min ? min : v;
	return v > RT_RESPONSE_MAX ? (min > RT_RESPONSE_MAX ? min : RT_RESPONSE_MAX) : v;
}

uint64_t rt_frame_size(struct rt_rng *rng, uint64_t min)
{
	return clamp(rt_hist_draw(&rt_config.response_bytes, rng), min);
}

uint64_t rt_frame_size_min(struct rt_rng *rng, uint64_t min)
{
	return clamp(rt_hist_draw_min(&rt_config.response_bytes, rng, min), min);
}

unsigned rt_digits(uint64_t v)
{
	unsigned d = 1;

	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

/* The largest n with fixed + digits(n) + n <= total (0 if none): a length
 * field and the bytes it counts, filling the total exactly when possible. */
uint64_t rt_fit_decimal(uint64_t total, uint64_t fixed)
{
	uint64_t room;
	unsigned d;

	/* n + digits(n) == room has a solution with digits(room) or one fewer
	 * digits; take the larger n. Two tries, not a search: this runs per
	 * response and its cost counts against the body's instructions. */
	if (total <= fixed)
		return 0;
	room = total - fixed;
	d = rt_digits(room);
	if (room > d && rt_digits(room - d) == d)
		return room - d;
	return d > 1 && room > d - 1 && rt_digits(room - (d - 1)) <= d - 1 ? room - (d - 1) : 0;
}
