/* SPDX-License-Identifier: MIT */
/*
 * Merge of models of several replicas or runs of one service, driven by the
 * schema's merge rules. A dry pass first finds conflicts and overflows, so
 * that the real pass cannot fail half-way (except for lack of memory) and
 * handles into dst stay valid.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "model_int.h"

struct mctx {
	struct dbuf path;
	bool dry;
	double wd, ws;	/* weights of dst and src: their meta.sources */
};

static int merge_err(struct mctx *c, int err, const char *fmt, ...) DITTO_PRINTF(3, 4);

static int merge_err(struct mctx *c, int err, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ditto_err(err, "%s: %s", path_str(&c->path), msg);
}

static void describe(const struct dnode *n, char *buf, size_t len)
{
	switch (n->type) {
	case DN_STR: snprintf(buf, len, "'%s'", n->s.p); break;
	case DN_BOOL: snprintf(buf, len, "%s", n->b ? "true" : "false"); break;
	case DN_UINT: snprintf(buf, len, "%llu", (unsigned long long)n->u); break;
	default: snprintf(buf, len, "%s", dn_type_name(n->type)); break;
	}
}

static int merge_same(struct mctx *c, const struct dnode *d, const struct dnode *s)
{
	char a[128], b[128];

	if (dn_equal(d, s))
		return 0;
	describe(d, a, sizeof(a));
	describe(s, b, sizeof(b));
	return merge_err(c, -DITTO_EMISMATCH, "models disagree: %s vs %s", a, b);
}

static int merge_counts(struct mctx *c, struct dnode *d, const struct dnode *s)
{
	for (size_t i = 0; i < s->m.n; i++) {
		struct dnode *e = dn_get(d, s->m.m[i].key);
		uint64_t sum;

		if (!e) {
			if (!c->dry && dn_set(d, s->m.m[i].key, dn_dup(s->m.m[i].val)))
				return -ENOMEM;
		} else if (add_overflows(e->u, s->m.m[i].val->u, &sum)) {
			return merge_err(c, -EOVERFLOW, "count of '%s' overflows", s->m.m[i].key);
		} else if (!c->dry) {
			e->u = sum;
		}
	}
	return 0;
}

static int merge_sum(struct mctx *c, struct dnode *d, const struct dnode *s)
{
	uint64_t sum;
	int err;

	switch (d->type) {
	case DN_UINT:
		if (add_overflows(d->u, s->u, &sum))
			return merge_err(c, -EOVERFLOW, "sum overflows");
		if (!c->dry)
			d->u = sum;
		return 0;
	case DN_FLOAT:
		if (!c->dry)
			d->f += s->f;
		return 0;
	case DN_HIST:
		err = c->dry ? hist_merge_check(d->h, s->h) : ditto_hist_merge(d->h, s->h);
		if (err)
			return merge_err(c, err, "%s", ditto_last_error());
		return 0;
	case DN_MAP:
		return merge_counts(c, d, s);
	default:
		return 0;
	}
}

static int merge_union(struct mctx *c, struct dnode *d, const struct dnode *s)
{
	for (size_t i = 0; i < s->a.n && !c->dry; i++) {
		bool have = false;

		for (size_t j = 0; j < d->a.n && !have; j++)
			have = dn_equal(d->a.items[j], s->a.items[i]);
		if (!have && dn_push(d, dn_dup(s->a.items[i])))
			return -ENOMEM;
	}
	return 0;
}

static int merge_section(struct mctx *c, const struct section *sec, struct dnode *d,
			 const struct dnode *s);

static int merge_array(struct mctx *c, const struct section *sec, struct dnode *d,
		       const struct dnode *s)
{
	int err = 0;

	for (size_t i = 0; i < s->a.n && !err; i++) {
		const struct dnode *e = s->a.items[i];
		struct dnode *match = element_match(sec, d, e);
		size_t mark = path_push_label(&c->path, sec, e);

		if (match)
			err = merge_section(c, sec, match, e);
		else if (!c->dry)
			err = dn_push(d, dn_dup(e));
		path_pop(&c->path, mark);
	}
	return err;
}

static int merge_field(struct mctx *c, const struct field *f, struct dnode *d,
		       const struct dnode *s)
{
	if (d->type != s->type)
		return merge_err(c, -DITTO_EMISMATCH, "%s vs %s", dn_type_name(d->type),
				 dn_type_name(s->type));
	switch (f->merge) {
	case MG_SUM: return merge_sum(c, d, s);
	case MG_MAX:
		if (!c->dry && s->u != d->u)
			ditto_log(DITTO_LOG_INFO, "merge: %s: %llu vs %llu, keeping the larger",
				  path_str(&c->path), (unsigned long long)d->u,
				  (unsigned long long)s->u);
		if (!c->dry && s->u > d->u)
			d->u = s->u;
		return 0;
	case MG_SAME: return merge_same(c, d, s);
	case MG_OR:
		if (!c->dry)
			d->b = d->b || s->b;
		return 0;
	case MG_MEAN:
		if (!c->dry)
			d->f = (d->f * c->wd + s->f * c->ws) / (c->wd + c->ws);
		return 0;
	case MG_UNION: return merge_union(c, d, s);
	case MG_REC:
		return f->type == FT_ARR ? merge_array(c, f->sub, d, s)
					 : merge_section(c, f->sub, d, s);
	default:
		return 0; /* MG_FIRST, MG_KEY: dst's value stays */
	}
}

static int merge_section(struct mctx *c, const struct section *sec, struct dnode *d,
			 const struct dnode *s)
{
	int err = 0;

	for (size_t i = 0; i < s->m.n && !err; i++) {
		const char *key = s->m.m[i].key;
		const struct field *f = schema_field(sec, key);
		struct dnode *dv = dn_get(d, key);
		size_t mark;

		if (!dv) {
			/* Absent in dst, known or not: take src's. */
			if (!c->dry)
				err = dn_set(d, key, dn_dup(s->m.m[i].val));
			continue;
		}
		if (!f)
			continue; /* unknown key present in both: dst's stays */
		mark = path_push_field(&c->path, key);
		err = merge_field(c, f, dv, s->m.m[i].val);
		path_pop(&c->path, mark);
	}
	return err;
}

static double sources(const struct dnode *root)
{
	uint64_t n = dn_get_u64(dn_get(root, "meta"), "sources");

	return n ? (double)n : 1;
}

static int merge_pass(struct dnode *d, const struct dnode *s, bool dry)
{
	struct mctx c = { .dry = dry, .wd = sources(d), .ws = sources(s) };
	struct dnode *meta;
	int err;

	dbuf_init(&c.path);
	err = merge_section(&c, &schema_root, d, s);
	dbuf_free(&c.path);
	if (err || dry)
		return err;
	meta = dn_child(d, "meta", DN_MAP);
	if (!meta)
		return -ENOMEM;
	return dn_set_u64(meta, "sources", (uint64_t)(c.wd + c.ws));
}

DITTO_API int ditto_model_merge(struct ditto_model *dst, const struct ditto_model *src)
{
	struct ditto_model *copy = NULL;
	int err;

	if (!dst || !src)
		return ditto_err(-EINVAL, "merge: model is NULL");
	/* Merging a model into itself would walk arrays while growing them. */
	if (dst == src) {
		if ((err = ditto_model_dup(src, &copy)))
			return err;
		src = copy;
	}
	err = merge_pass(dst->root, src->root, true);
	if (!err)
		err = merge_pass(dst->root, src->root, false);
	ditto_model_free(copy);
	return err;
}
