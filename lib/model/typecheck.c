/* SPDX-License-Identifier: MIT */
/*
 * First pass over a decoded tree: every known field must have its schema
 * type. Numbers are normalised (floats stored as integers become floats)
 * and histogram maps become DN_HIST nodes; unknown keys are left alone.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

static int type_err(struct dbuf *path, const char *fmt, ...) DITTO_PRINTF(2, 3);

static int type_err(struct dbuf *path, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ditto_err(-DITTO_EINVALID, "%s: %s", path_str(path), msg);
}

static int expect(struct dbuf *path, const struct dnode *n, enum dn_type t)
{
	if (n->type == t)
		return 0;
	return type_err(path, "expected %s, got %s", dn_type_name(t), dn_type_name(n->type));
}

static int to_float(struct dbuf *path, struct dnode *n)
{
	double d;

	if (n->type == DN_FLOAT)
		return 0;
	if (!dn_number(n, &d))
		return type_err(path, "expected a number, got %s", dn_type_name(n->type));
	n->type = DN_FLOAT;
	n->f = d;
	return 0;
}

static int check_string(struct dbuf *path, const struct dnode *n)
{
	int err = expect(path, n, DN_STR);

	if (!err && memchr(n->s.p, '\0', n->s.len))
		err = type_err(path, "string contains a NUL byte");
	return err;
}

static int hist_bucket(struct dbuf *path, struct ditto_hist *h, const struct dnode *b)
{
	uint64_t lo, hi, key;

	if (b->type != DN_ARR || b->a.n != 2 || b->a.items[0]->type != DN_UINT ||
	    b->a.items[1]->type != DN_UINT)
		return type_err(path, "bucket is not [lo, count] with unsigned integers");
	key = hist_value_key(h, b->a.items[0]->u);
	hist_key_range(h, key, &lo, &hi);
	if (lo != b->a.items[0]->u)
		return type_err(path, "%llu is not the start of a %s bucket",
				(unsigned long long)b->a.items[0]->u, hist_kind_name(h->kind));
	/* Ascending order keeps decoding linear and the encoding canonical. */
	if (h->n && h->keys[h->n - 1] >= key)
		return type_err(path, "bucket %llu is out of order or repeated",
				(unsigned long long)lo);
	if (b->a.items[1]->u == 0)
		return type_err(path, "bucket %llu has count 0", (unsigned long long)lo);
	return hist_add_key(h, key, b->a.items[1]->u);
}

static int hist_header(struct dbuf *path, const struct field *f, const struct dnode *m,
		       struct ditto_hist **out)
{
	const struct dnode *kind = dn_get(m, "kind"), *prec = dn_get(m, "precision");
	enum ditto_hist_kind k;
	unsigned p = 0;

	if (!kind || kind->type != DN_STR || hist_kind_parse(kind->s.p, &k))
		return type_err(path, "histogram needs kind \"log2\", \"exact\" or \"loglin\"");
	if (k != f->hist_kind)
		return type_err(path, "histogram kind %s, expected %s", kind->s.p,
				hist_kind_name(f->hist_kind));
	if (prec) {
		if (prec->type != DN_UINT || prec->u > 64)
			return type_err(path, "histogram precision must be a small unsigned integer");
		p = (unsigned)prec->u;
	}
	if (!hist_kind_valid(k, p))
		return type_err(path, "histogram precision %u is not valid for %s", p, kind->s.p);
	*out = ditto_hist_new(k, p);
	return *out ? 0 : -ENOMEM;
}

static int to_hist(struct dbuf *path, const struct field *f, struct dnode *n)
{
	const struct dnode *buckets;
	struct ditto_hist *h = NULL;
	int err;

	if ((err = expect(path, n, DN_MAP)))
		return err;
	for (size_t i = 0; i < n->m.n; i++) {
		const char *k = n->m.m[i].key;

		if (strcmp(k, "kind") && strcmp(k, "precision") && strcmp(k, "buckets"))
			return type_err(path, "unknown key '%s' in a histogram", k);
	}
	buckets = dn_get(n, "buckets");
	if (!buckets || buckets->type != DN_ARR)
		return type_err(path, "histogram needs a buckets array");
	if ((err = hist_header(path, f, n, &h)))
		return err;
	for (size_t i = 0; i < buckets->a.n && !err; i++)
		err = hist_bucket(path, h, buckets->a.items[i]);
	if (err) {
		ditto_hist_free(h);
		return err;
	}
	/* Replace the map's contents by the histogram in place. */
	for (size_t i = 0; i < n->m.n; i++) {
		free(n->m.m[i].key);
		dn_free(n->m.m[i].val);
	}
	free(n->m.m);
	n->type = DN_HIST;
	n->h = h;
	return 0;
}

static int check_map_values(struct dbuf *path, struct dnode *n, bool counts)
{
	int err = expect(path, n, DN_MAP);

	for (size_t i = 0; i < n->m.n && !err; i++) {
		size_t mark = path_push_field(path, n->m.m[i].key);

		err = counts ? expect(path, n->m.m[i].val, DN_UINT) : to_float(path, n->m.m[i].val);
		path_pop(path, mark);
	}
	return err;
}

static int check_list(struct dbuf *path, const struct dnode *n, enum dn_type t)
{
	int err = expect(path, n, DN_ARR);

	for (size_t i = 0; i < n->a.n && !err; i++) {
		size_t mark = path_push_index(path, i);

		err = t == DN_STR ? check_string(path, n->a.items[i]) : expect(path, n->a.items[i], t);
		path_pop(path, mark);
	}
	return err;
}

static int check_section(struct dbuf *path, const struct section *s, struct dnode *map);

static int check_array(struct dbuf *path, const struct section *s, struct dnode *n)
{
	int err = expect(path, n, DN_ARR);

	for (size_t i = 0; i < n->a.n && !err; i++) {
		size_t mark = path_push_index(path, i);

		err = check_section(path, s, n->a.items[i]);
		path_pop(path, mark);
	}
	return err;
}

static int check_field(struct dbuf *path, const struct field *f, struct dnode *n)
{
	switch (f->type) {
	case FT_BOOL: return expect(path, n, DN_BOOL);
	case FT_U64: return expect(path, n, DN_UINT);
	case FT_F64: return to_float(path, n);
	case FT_STR:
	case FT_ENUM: return check_string(path, n);
	case FT_HIST: return to_hist(path, f, n);
	case FT_COUNTS: return check_map_values(path, n, true);
	case FT_VALUES: return check_map_values(path, n, false);
	case FT_U64LIST: return check_list(path, n, DN_UINT);
	case FT_STRLIST: return check_list(path, n, DN_STR);
	case FT_OBJ: return check_section(path, f->sub, n);
	case FT_ARR: return check_array(path, f->sub, n);
	}
	return 0;
}

static int check_section(struct dbuf *path, const struct section *s, struct dnode *map)
{
	int err = expect(path, map, DN_MAP);

	for (size_t i = 0; i < map->m.n && !err; i++) {
		const struct field *f = schema_field(s, map->m.m[i].key);
		size_t mark;

		if (!f) {
			/* Unknown keys come from newer writers: keep them as they are. */
			ditto_debug("%s: keeping unknown key '%s'", path_str(path), map->m.m[i].key);
			continue;
		}
		mark = path_push_field(path, f->name);
		err = check_field(path, f, map->m.m[i].val);
		path_pop(path, mark);
	}
	return err;
}

int typecheck_model(struct dnode *root)
{
	struct dbuf path;
	int err;

	dbuf_init(&path);
	err = check_section(&path, &schema_root, root);
	dbuf_free(&path);
	return err;
}
