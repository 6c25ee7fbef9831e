/* SPDX-License-Identifier: MIT */
/*
 * Bounded msgpack reader building a document tree. msgpack-c's unpacker
 * reserves container storage from the declared element count before it
 * has seen the elements, so a 5-byte hostile header can ask for gigabytes;
 * here every count is checked against the bytes left (an element takes at
 * least one byte), nesting is capped, and memory stays proportional to
 * the input.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

/* Hard cap whatever the caller asks: recursion uses the C stack. */
#define DEPTH_CAP 1024

struct reader {
	const uint8_t *p, *end, *start;
	unsigned max_depth;
};

static int corrupt(const struct reader *r, const char *what)
{
	return ditto_err(-DITTO_ECORRUPT, "msgpack: %s at byte %zu", what,
			 (size_t)(r->p - r->start));
}

/* A container's count is checked before anything is allocated for it. */
static int too_many(const struct reader *r, const char *what, uint64_t n)
{
	return ditto_err(-DITTO_ECORRUPT,
			 "msgpack: %s of %llu entries at byte %zu cannot fit in the %zu bytes left "
			 "(truncated or corrupt input)",
			 what, (unsigned long long)n, (size_t)(r->p - r->start),
			 (size_t)(r->end - r->p));
}

static bool need(const struct reader *r, size_t n)
{
	return (size_t)(r->end - r->p) >= n;
}

static uint64_t be(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v = (v << 8) | p[i];
	return v;
}

/* Read an n-byte big-endian length or value. */
static int take(struct reader *r, unsigned n, uint64_t *v)
{
	if (!need(r, n))
		return corrupt(r, "truncated input");
	*v = be(r->p, n);
	r->p += n;
	return 0;
}

static int read_value(struct reader *r, unsigned depth, struct dnode **out);

static int read_bytes(struct reader *r, enum dn_type type, uint64_t len, struct dnode **out)
{
	struct dnode *n;

	if (!need(r, len))
		return corrupt(r, "string or binary length runs past the end");
	n = dn_str((const char *)r->p, (size_t)len);
	if (!n)
		return -ENOMEM;
	n->type = type;
	r->p += len;
	*out = n;
	return 0;
}

static int read_ext(struct reader *r, uint64_t len, struct dnode **out)
{
	int8_t t;
	int err;

	if (!need(r, 1))
		return corrupt(r, "truncated extension");
	t = (int8_t)*r->p++;
	err = read_bytes(r, DN_EXT, len, out);
	if (!err)
		(*out)->ext_type = t;
	return err;
}

static int read_array(struct reader *r, uint64_t n, unsigned depth, struct dnode **out)
{
	struct dnode *a;
	int err;

	if (n > (uint64_t)(r->end - r->p))
		return too_many(r, "array", n);
	a = dn_new(DN_ARR);
	if (!a)
		return -ENOMEM;
	if (n && !(a->a.items = malloc((size_t)n * sizeof(*a->a.items)))) {
		free(a);
		return ditto_err(-ENOMEM, "out of memory");
	}
	a->a.cap = (size_t)n;
	for (uint64_t i = 0; i < n; i++) {
		struct dnode *v;

		if ((err = read_value(r, depth + 1, &v))) {
			dn_free(a);
			return err;
		}
		a->a.items[a->a.n++] = v;
	}
	*out = a;
	return 0;
}

static int read_key(struct reader *r, char **key)
{
	uint8_t b;
	uint64_t len;
	int err;

	if (!need(r, 1))
		return corrupt(r, "truncated map");
	b = *r->p++;
	if ((b & 0xe0) == 0xa0)
		len = b & 0x1f;
	else if (b == 0xd9 || b == 0xda || b == 0xdb) {
		if ((err = take(r, 1u << (b - 0xd9), &len)))
			return err;
	} else {
		r->p--;
		return corrupt(r, "map key is not a string");
	}
	if (!need(r, len))
		return corrupt(r, "map key runs past the end");
	if (memchr(r->p, '\0', (size_t)len))
		return corrupt(r, "map key contains a NUL byte");
	*key = strndup((const char *)r->p, (size_t)len);
	if (!*key)
		return ditto_err(-ENOMEM, "out of memory");
	r->p += len;
	return 0;
}

static int cmp_member(const void *a, const void *b)
{
	return strcmp(((const struct dmember *)a)->key, ((const struct dmember *)b)->key);
}

/* Duplicate keys would make lookups ambiguous; sort a copy to find them. */
static const char *duplicate_key(const struct dnode *m)
{
	struct dmember *copy;
	const char *dup = NULL;

	if (m->m.n < 2)
		return NULL;
	copy = malloc(m->m.n * sizeof(*copy));
	if (!copy)
		return NULL;
	memcpy(copy, m->m.m, m->m.n * sizeof(*copy));
	qsort(copy, m->m.n, sizeof(*copy), cmp_member);
	for (size_t i = 1; i < m->m.n && !dup; i++)
		if (strcmp(copy[i - 1].key, copy[i].key) == 0)
			dup = copy[i].key;
	free(copy);
	return dup;
}

static int read_map(struct reader *r, uint64_t n, unsigned depth, struct dnode **out)
{
	struct dnode *m;
	const char *dup;
	int err;

	if (n > (uint64_t)(r->end - r->p) / 2)
		return too_many(r, "map", n);
	m = dn_new(DN_MAP);
	if (!m)
		return -ENOMEM;
	if (n && !(m->m.m = malloc((size_t)n * sizeof(*m->m.m)))) {
		free(m);
		return ditto_err(-ENOMEM, "out of memory");
	}
	m->m.cap = (size_t)n;
	for (uint64_t i = 0; i < n; i++) {
		char *key;
		struct dnode *v;

		if ((err = read_key(r, &key)))
			goto fail;
		if ((err = read_value(r, depth + 1, &v))) {
			free(key);
			goto fail;
		}
		m->m.m[m->m.n].key = key;
		m->m.m[m->m.n++].val = v;
	}
	if ((dup = duplicate_key(m))) {
		err = ditto_err(-DITTO_ECORRUPT, "msgpack: map has key '%s' twice (before byte %zu)",
				dup, (size_t)(r->p - r->start));
		goto fail;
	}
	*out = m;
	return 0;
fail:
	dn_free(m);
	return err;
}

static int read_scalar(struct reader *r, enum dn_type t, uint64_t bits, struct dnode **out)
{
	struct dnode *n = dn_new(t);

	(void)r;
	if (!n)
		return -ENOMEM;
	n->u = bits;
	*out = n;
	return 0;
}

static int read_int(struct reader *r, unsigned bytes, struct dnode **out)
{
	uint64_t v = 0;
	int64_t s;
	int err;

	if ((err = take(r, bytes, &v)))
		return err;
	/* Sign-extend; non-negative values are stored as unsigned. */
	s = bytes == 8 ? (int64_t)v : (int64_t)(v << (64 - 8 * bytes)) >> (64 - 8 * bytes);
	if (s >= 0)
		return read_scalar(r, DN_UINT, (uint64_t)s, out);
	return read_scalar(r, DN_INT, (uint64_t)s, out);
}

static int read_float(struct reader *r, unsigned bytes, struct dnode **out)
{
	uint64_t v = 0;
	int err;

	if ((err = take(r, bytes, &v)))
		return err;
	if (bytes == 4) {
		uint32_t b32 = (uint32_t)v;
		float f;

		memcpy(&f, &b32, sizeof(f));
		err = read_scalar(r, DN_FLOAT, 0, out);
		if (!err)
			(*out)->f = f;
		return err;
	}
	err = read_scalar(r, DN_FLOAT, 0, out);
	if (!err)
		memcpy(&(*out)->f, &v, sizeof(double));
	return err;
}

static int read_sized(struct reader *r, uint8_t b, unsigned depth, struct dnode **out)
{
	static const unsigned width[] = { 1, 2, 4 };
	uint64_t n;
	int err;

	switch (b) {
	case 0xc4: case 0xc5: case 0xc6:
		if ((err = take(r, width[b - 0xc4], &n)))
			return err;
		return read_bytes(r, DN_BIN, n, out);
	case 0xc7: case 0xc8: case 0xc9:
		if ((err = take(r, width[b - 0xc7], &n)))
			return err;
		return read_ext(r, n, out);
	case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
		return read_ext(r, 1u << (b - 0xd4), out);
	case 0xd9: case 0xda: case 0xdb:
		if ((err = take(r, width[b - 0xd9], &n)))
			return err;
		return read_bytes(r, DN_STR, n, out);
	case 0xdc: case 0xdd:
		if ((err = take(r, b == 0xdc ? 2 : 4, &n)))
			return err;
		return read_array(r, n, depth, out);
	case 0xde: case 0xdf:
		if ((err = take(r, b == 0xde ? 2 : 4, &n)))
			return err;
		return read_map(r, n, depth, out);
	}
	r->p--;
	return corrupt(r, "invalid type byte 0xc1");
}

static int read_value(struct reader *r, unsigned depth, struct dnode **out)
{
	uint8_t b;
	uint64_t v = 0;
	int err;

	*out = NULL;
	if (depth > r->max_depth)
		return ditto_err(-DITTO_ELIMIT, "msgpack: nesting deeper than %u at byte %zu",
				 r->max_depth, (size_t)(r->p - r->start));
	if (!need(r, 1))
		return corrupt(r, "truncated input");
	b = *r->p++;
	if (b <= 0x7f)
		return read_scalar(r, DN_UINT, b, out);
	if (b >= 0xe0)
		return read_scalar(r, DN_INT, (uint64_t)(int64_t)(int8_t)b, out);
	if ((b & 0xf0) == 0x80)
		return read_map(r, b & 0x0f, depth, out);
	if ((b & 0xf0) == 0x90)
		return read_array(r, b & 0x0f, depth, out);
	if ((b & 0xe0) == 0xa0)
		return read_bytes(r, DN_STR, b & 0x1f, out);
	switch (b) {
	case 0xc0: return read_scalar(r, DN_NIL, 0, out);
	case 0xc2: case 0xc3:
		err = read_scalar(r, DN_BOOL, 0, out);
		if (!err)
			(*out)->b = b == 0xc3;
		return err;
	case 0xca: return read_float(r, 4, out);
	case 0xcb: return read_float(r, 8, out);
	case 0xcc: case 0xcd: case 0xce: case 0xcf:
		if ((err = take(r, 1u << (b - 0xcc), &v)))
			return err;
		return read_scalar(r, DN_UINT, v, out);
	case 0xd0: case 0xd1: case 0xd2: case 0xd3:
		return read_int(r, 1u << (b - 0xd0), out);
	}
	return read_sized(r, b, depth, out);
}

int msgpack_read(const void *buf, size_t len, const struct read_limits *lim, struct dnode **out)
{
	struct reader r = { buf, (const uint8_t *)buf + len, buf, lim->max_depth };
	int err;

	*out = NULL;
	if (r.max_depth > DEPTH_CAP)
		r.max_depth = DEPTH_CAP;
	if (len > lim->max_bytes)
		return ditto_err(-DITTO_ELIMIT, "input is %zu bytes, over the limit of %zu", len,
				 lim->max_bytes);
	if (len == 0)
		return ditto_err(-DITTO_ECORRUPT, "input is empty");
	if ((err = read_value(&r, 0, out)))
		return err;
	if (r.p != r.end) {
		dn_free(*out);
		*out = NULL;
		return corrupt(&r, "trailing bytes after the model");
	}
	return 0;
}
