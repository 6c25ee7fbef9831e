/* SPDX-License-Identifier: MIT */
/*
 * The two framings without a protocol: length-prefixed messages (4-byte
 * big-endian length, then the payload) and raw streams, where each read's
 * bytes are one request.
 */
#include "rt_int.h"

long rt_lp_cut(const char *p, size_t n, struct rt_req *req)
{
	uint64_t len;

	if (n < 4)
		return 0;
	len = (uint64_t)(unsigned char)p[0] << 24 | (uint64_t)(unsigned char)p[1] << 16 |
	      (uint64_t)(unsigned char)p[2] << 8 | (unsigned char)p[3];
	if (len > RT_FRAME_MAX)
		return -1;
	if (n < 4 + len)
		return 0;
	req->p = p;
	req->len = 4 + (size_t)len;
	return (long)req->len;
}

int rt_lp_respond(const struct rt_req *req, struct rt_rng *rng, struct rt_buf *out)
{
	uint64_t s = rt_frame_size(rng, 4) - 4;
	unsigned char h[4] = { (unsigned char)(s >> 24), (unsigned char)(s >> 16), (unsigned char)(s >> 8),
			       (unsigned char)s };

	(void)req;
	return rt_buf_put(out, h, 4) || rt_buf_fill(out, s);
}

long rt_raw_cut(const char *p, size_t n, struct rt_req *req)
{
	req->p = p;
	req->len = n;
	return (long)n;
}

int rt_raw_respond(const struct rt_req *req, struct rt_rng *rng, struct rt_buf *out)
{
	(void)req;
	return rt_buf_fill(out, rt_frame_size(rng, 1));
}
