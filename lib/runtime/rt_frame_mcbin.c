/* SPDX-License-Identifier: MIT */
/*
 * The memcached binary protocol: a 24-byte header and its body. Every
 * request succeeds; gets return 4 bytes of flags (and the key for the K
 * variants) and a value sized from the draw; quiet mutations get no reply.
 */
#include "rt_int.h"

#include <string.h>

#define HDR 24

enum {
	OP_GET = 0x00, OP_SET = 0x01, OP_ADD = 0x02, OP_REPLACE = 0x03, OP_DELETE = 0x04,
	OP_INCR = 0x05, OP_DECR = 0x06, OP_QUIT = 0x07, OP_FLUSH = 0x08, OP_GETQ = 0x09,
	OP_NOOP = 0x0a, OP_VERSION = 0x0b, OP_GETK = 0x0c, OP_GETKQ = 0x0d, OP_APPEND = 0x0e,
	OP_PREPEND = 0x0f, OP_STAT = 0x10, OP_SETQ = 0x11, OP_ADDQ = 0x12, OP_REPLACEQ = 0x13,
	OP_DELETEQ = 0x14, OP_INCRQ = 0x15, OP_DECRQ = 0x16, OP_QUITQ = 0x17, OP_FLUSHQ = 0x18,
	OP_APPENDQ = 0x19, OP_PREPENDQ = 0x1a, OP_VERBOSITY = 0x1b, OP_TOUCH = 0x1c,
	OP_GAT = 0x1d, OP_GATQ = 0x1e, OP_GATK = 0x23, OP_GATKQ = 0x24,
};

#define STATUS_UNKNOWN_COMMAND 0x0081

static uint32_t be16(const char *p)
{
	return (uint32_t)(unsigned char)p[0] << 8 | (unsigned char)p[1];
}

static uint32_t be32(const char *p)
{
	return be16(p) << 16 | be16(p + 2);
}

static void put_be(unsigned char *p, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

/* Mutations whose quiet form gets no reply on success. */
static bool quiet_op(int op)
{
	return (op >= OP_SETQ && op <= OP_FLUSHQ) || op == OP_APPENDQ || op == OP_PREPENDQ;
}

long rt_mcbin_cut(const char *p, size_t n, struct rt_req *req)
{
	uint32_t keylen, extlen, body;

	if ((unsigned char)p[0] != 0x80)
		return -1;
	if (n < HDR)
		return 0;
	keylen = be16(p + 2);
	extlen = (unsigned char)p[4];
	body = be32(p + 8);
	if (body > RT_FRAME_MAX || keylen + extlen > body)
		return -1;
	if (n < HDR + (size_t)body)
		return 0;
	req->p = p;
	req->len = HDR + (size_t)body;
	req->op = (unsigned char)p[1];
	req->arg = p + HDR + extlen;
	req->arglen = keylen;
	req->quiet = quiet_op(req->op);
	req->close_after = req->op == OP_QUIT || req->op == OP_QUITQ;
	return (long)req->len;
}

static int header(struct rt_buf *out, const struct rt_req *req, uint32_t keylen, uint32_t extlen,
		  uint32_t status, uint32_t body, uint64_t cas)
{
	unsigned char h[HDR];

	h[0] = 0x81;
	h[1] = (unsigned char)req->op;
	put_be(h + 2, keylen, 2);
	h[4] = (unsigned char)extlen;
	h[5] = 0;		/* raw bytes */
	put_be(h + 6, status, 2);
	put_be(h + 8, body, 4);
	memcpy(h + 12, req->p + 12, 4);	/* opaque, as sent */
	put_be(h + 16, cas, 8);
	return rt_buf_put(out, h, sizeof(h));
}

static int get_reply(const struct rt_req *req, struct rt_rng *rng, struct rt_buf *out)
{
	bool withkey = req->op == OP_GETK || req->op == OP_GETKQ || req->op == OP_GATK || req->op == OP_GATKQ;
	uint32_t klen = withkey ? (uint32_t)req->arglen : 0;
	uint64_t min = HDR + 4 + klen, value = rt_frame_size_min(rng, min) - min;
	static const char flags[4];

	if (header(out, req, klen, 4, 0, (uint32_t)(4 + klen + value), 1) || rt_buf_put(out, flags, 4) ||
	    rt_buf_put(out, req->arg, klen))
		return -1;
	return rt_buf_fill(out, value);
}

int rt_mcbin_respond(const struct rt_req *req, struct rt_rng *rng, struct rt_buf *out)
{
	static const char version[] = "1.6.21";
	unsigned char counter[8];

	switch (req->op) {
	case OP_GET: case OP_GETQ: case OP_GETK: case OP_GETKQ:
	case OP_GAT: case OP_GATQ: case OP_GATK: case OP_GATKQ:
		return get_reply(req, rng, out);
	case OP_SET: case OP_ADD: case OP_REPLACE: case OP_APPEND: case OP_PREPEND:
		return header(out, req, 0, 0, 0, 0, 1);
	case OP_DELETE: case OP_QUIT: case OP_FLUSH: case OP_NOOP: case OP_STAT:
	case OP_VERBOSITY: case OP_TOUCH:
		/* STAT: the empty packet that ends a stats listing */
		return header(out, req, 0, 0, 0, 0, 0);
	case OP_INCR: case OP_DECR:
		put_be(counter, 1, 8);
		return header(out, req, 0, 0, 0, 8, 1) || rt_buf_put(out, counter, 8);
	case OP_VERSION:
		return header(out, req, 0, 0, 0, sizeof(version) - 1, 0) ||
		       rt_buf_put(out, version, sizeof(version) - 1);
	default:
		return header(out, req, 0, 0, STATUS_UNKNOWN_COMMAND, 0, 0);
	}
}
