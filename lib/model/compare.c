/* SPDX-License-Identifier: MIT */
/*
 * Feature-by-feature distance between two models (original a, clone b),
 * driven by the schema's compare rules: rates rather than raw counts,
 * total-variation distance for distributions.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_int.h"

struct metric {
	char *path;
	enum ditto_metric_kind kind;
	double a, b, error;
};

struct ditto_comparison {
	struct metric *m;
	size_t n, cap;
};

static const struct dnode empty_map = { .type = DN_MAP };

double model_rel_error(double original, double clone)
{
	if (original == clone)
		return 0;
	if (original == 0)
		return 1;
	return fabs(clone - original) / fabs(original);
}

void compare_emit(struct cctx *c, const char *suffix, enum ditto_metric_kind kind, double a,
		  double b, double error)
{
	struct ditto_comparison *o = c->out;
	size_t mark;

	if (c->err || (c->min_error > 0 && !(error > c->min_error)))
		return;
	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 64;
		struct metric *m = realloc(o->m, cap * sizeof(*m));

		if (!m) {
			c->err = ditto_err(-ENOMEM, "out of memory");
			return;
		}
		o->m = m;
		o->cap = cap;
	}
	mark = suffix ? path_push_field(&c->path, suffix) : c->path.len;
	o->m[o->n].path = strdup(path_str(&c->path));
	path_pop(&c->path, mark);
	if (!o->m[o->n].path) {
		c->err = ditto_err(-ENOMEM, "out of memory");
		return;
	}
	o->m[o->n].kind = kind;
	o->m[o->n].a = a;
	o->m[o->n].b = b;
	o->m[o->n].error = error;
	o->n++;
}

static void scalar(struct cctx *c, const char *suffix, double a, double b)
{
	compare_emit(c, suffix, DITTO_METRIC_SCALAR, a, b, model_rel_error(a, b));
}

/* Number for CP_RAW: numbers as they are, enums by index, bools 0/1. */
static double raw_value(const struct field *f, const struct dnode *n)
{
	double d;

	if (!n)
		return 0;
	if (n->type == DN_BOOL)
		return n->b;
	if (f->type == FT_ENUM && n->type == DN_STR)
		return enum_index(f->enums, n->s.p);
	return dn_number(n, &d) ? d : 0;
}

static double denominator(const struct dnode *obj, const char *field)
{
	const struct dnode *n = dn_get(obj, field);
	double d;

	if (n && n->type == DN_HIST)
		return (double)ditto_hist_total(n->h);
	return dn_number(n, &d) ? d : 0;
}

static double counts_total(const struct dnode *m)
{
	double t = 0;

	for (size_t i = 0; m && i < m->m.n; i++)
		t += (double)m->m.m[i].val->u;
	return t;
}

static double counts_distance(const struct dnode *a, const struct dnode *b)
{
	double ta = counts_total(a), tb = counts_total(b), d = 0;

	if (ta == 0 || tb == 0)
		return ta == tb ? 0 : 1;
	for (size_t i = 0; i < a->m.n; i++) {
		const struct dnode *e = dn_get(b, a->m.m[i].key);

		d += fabs((double)a->m.m[i].val->u / ta - (e ? (double)e->u / tb : 0));
	}
	for (size_t i = 0; i < b->m.n; i++)
		if (!dn_get(a, b->m.m[i].key))
			d += (double)b->m.m[i].val->u / tb;
	return d / 2 > 1 ? 1 : d / 2;
}

static void distribution(struct cctx *c, const struct field *f, const struct dnode *a,
			 const struct dnode *b)
{
	const struct ditto_hist *ha, *hb;
	struct ditto_hist empty;

	if (f->type == FT_COUNTS) {
		compare_emit(c, NULL, DITTO_METRIC_DISTRIBUTION, counts_total(a), counts_total(b),
		     counts_distance(a ? a : &empty_map, b ? b : &empty_map));
		return;
	}
	ha = a ? a->h : NULL;
	hb = b ? b->h : NULL;
	if (!ha || !hb) {
		/* An absent histogram is an empty one of the same kind. */
		empty = ha ? *ha : *hb;
		empty.n = 0;
		ha = ha ? ha : &empty;
		hb = hb ? hb : &empty;
		compare_emit(c, NULL, DITTO_METRIC_DISTRIBUTION, (double)ditto_hist_total(ha),
		     (double)ditto_hist_total(hb), ditto_hist_distance(ha, hb));
	} else {
		double d = ditto_hist_distance(ha, hb);

		compare_emit(c, NULL, DITTO_METRIC_DISTRIBUTION, (double)ditto_hist_total(ha),
		     (double)ditto_hist_total(hb), d < 0 ? 1 : d);
	}
	if (f->cmp == CP_LATENCY) {
		scalar(c, "p50", ditto_hist_quantile(ha, 0.5), ditto_hist_quantile(hb, 0.5));
		scalar(c, "p99", ditto_hist_quantile(ha, 0.99), ditto_hist_quantile(hb, 0.99));
	} else {
		scalar(c, "mean", ditto_hist_mean(ha), ditto_hist_mean(hb));
	}
}

static void only(struct cctx *c, const struct section *s, const struct dnode *e, bool in_a)
{
	size_t mark = path_push_label(&c->path, s, e);

	compare_emit(c, NULL, in_a ? DITTO_METRIC_ONLY_A : DITTO_METRIC_ONLY_B, in_a, !in_a, 1);
	path_pop(&c->path, mark);
}

/*
 * Two models of one service each are two sides of one comparison whatever
 * the services are named: a clone's service is named apart from its
 * original's, and matching by name compared nothing (only_a, only_b).
 */
static bool one_service_each(const struct section *s, const struct dnode *a,
			     const struct dnode *b)
{
	return s == &schema_service && a && b && a->a.n == 1 && b->a.n == 1;
}

void compare_elements(struct cctx *c, const struct section *s, const struct dnode *a,
		      const struct dnode *b)
{
	bool paired = one_service_each(s, a, b);

	for (size_t i = 0; a && i < a->a.n; i++) {
		const struct dnode *e = a->a.items[i];
		const struct dnode *m = paired ? b->a.items[0] : element_match(s, b, e);
		double ra = c->req_a, rb = c->req_b;
		size_t mark;

		if (!m) {
			only(c, s, e, true);
			continue;
		}
		if (s == &schema_service) {
			c->req_a = dn_get_u64(dn_get(e, "requests"), "count");
			c->req_b = dn_get_u64(dn_get(m, "requests"), "count");
		}
		mark = path_push_label(&c->path, s, e);
		compare_section(c, s, e, m);
		path_pop(&c->path, mark);
		c->req_a = ra;
		c->req_b = rb;
	}
	for (size_t i = 0; b && !paired && i < b->a.n; i++)
		if (!element_match(s, a, b->a.items[i]))
			only(c, s, b->a.items[i], false);
}

static double per_request(double v, double requests)
{
	return requests > 0 ? v / requests : v;
}

static void compare_field(struct cctx *c, const struct field *f, const struct dnode *pa,
			  const struct dnode *pb, const struct dnode *a, const struct dnode *b)
{
	char name[128];
	double da, db;

	size_t mark;

	switch (f->cmp) {
	case CP_RAW:
		if (f->type == FT_ENUM || f->type == FT_BOOL || f->type == FT_STR) {
			double va = raw_value(f, a), vb = raw_value(f, b);

			compare_emit(c, f->name, DITTO_METRIC_SCALAR, va, vb, va == vb ? 0 : 1);
		} else {
			scalar(c, f->name, raw_value(f, a), raw_value(f, b));
		}
		return;
	case CP_PER_REQ:
		snprintf(name, sizeof(name), "%s_per_request", f->name);
		scalar(c, name, per_request(raw_value(f, a), c->req_a),
		       per_request(raw_value(f, b), c->req_b));
		return;
	case CP_PER_FIELD:
		da = denominator(pa, f->per);
		db = denominator(pb, f->per);
		snprintf(name, sizeof(name), "%s_per_%s", f->name, f->per);
		scalar(c, name, da > 0 ? raw_value(f, a) / da : 0, db > 0 ? raw_value(f, b) / db : 0);
		return;
	default:
		break;
	}
	mark = path_push_field(&c->path, f->name);
	if (f->cmp == CP_DIST || f->cmp == CP_LATENCY)
		distribution(c, f, a, b);
	else if (f->type == FT_ARR)
		compare_elements(c, f->sub, a, b);
	else if (f->cmp == CP_REC)
		compare_section(c, f->sub, a ? a : &empty_map, b ? b : &empty_map);
	path_pop(&c->path, mark);
}

void compare_section(struct cctx *c, const struct section *s, const struct dnode *a,
		     const struct dnode *b)
{
	if (s->gate && !(dn_get_bool(a, s->gate) && dn_get_bool(b, s->gate)))
		return;
	for (size_t i = 0; i < s->nfields && !c->err; i++) {
		const struct field *f = &s->fields[i];
		const struct dnode *na = dn_get(a, f->name), *nb = dn_get(b, f->name);

		/* The graph pairs its edges across sources (graph_compare.c). */
		if (f->sub == &schema_graph)
			continue;
		if (f->cmp != CP_NONE && (na || nb))
			compare_field(c, f, a, b, na, nb);
	}
}

int compare_begin(struct cctx *c, const struct ditto_compare_opts *opts)
{
	int err;

	memset(c, 0, sizeof(*c));
	if ((err = OPTS_CHECK(opts, ditto_compare_opts)))
		return err;
	c->out = calloc(1, sizeof(*c->out));
	if (!c->out)
		return ditto_err(-ENOMEM, "out of memory");
	c->min_error = OPTS_GET(opts, min_error, 0.0);
	dbuf_init(&c->path);
	return 0;
}

int compare_end(struct cctx *c, struct ditto_comparison **out)
{
	dbuf_free(&c->path);
	if (c->err) {
		ditto_comparison_free(c->out);
		c->out = NULL;
		return c->err;
	}
	*out = c->out;
	return 0;
}

DITTO_API void ditto_comparison_free(struct ditto_comparison *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->m[i].path);
	free(c->m);
	free(c);
}

DITTO_API size_t ditto_comparison_count(const struct ditto_comparison *c)
{
	return c ? c->n : 0;
}

DITTO_API int ditto_comparison_metric(const struct ditto_comparison *c, size_t i, const char **path,
				      enum ditto_metric_kind *kind, double *a, double *b,
				      double *error)
{
	const struct metric *m;

	if (!c || i >= c->n)
		return ditto_err(-DITTO_ENOTFOUND, "comparison has no metric %zu", i);
	m = &c->m[i];
	if (path)
		*path = m->path;
	if (kind)
		*kind = m->kind;
	if (a)
		*a = m->a;
	if (b)
		*b = m->b;
	if (error)
		*error = m->error;
	return 0;
}

DITTO_API double ditto_comparison_max_error(const struct ditto_comparison *c)
{
	double max = 0;

	for (size_t i = 0; c && i < c->n; i++)
		if (c->m[i].error > max)
			max = c->m[i].error;
	return max;
}

static const char *kind_name(enum ditto_metric_kind k)
{
	switch (k) {
	case DITTO_METRIC_SCALAR: return "scalar";
	case DITTO_METRIC_DISTRIBUTION: return "distribution";
	case DITTO_METRIC_ONLY_A: return "only_a";
	case DITTO_METRIC_ONLY_B: return "only_b";
	}
	return "unknown";
}

static void json_number(struct dbuf *b, const char *key, double v)
{
	struct dnode n = { .type = DN_FLOAT, .f = v };

	dbuf_printf(b, ",\"%s\":", key);
	json_write(b, &n, false, 0);
}

DITTO_API int ditto_comparison_to_json(const struct ditto_comparison *c, char **out)
{
	struct dbuf b;

	if (!c)
		return ditto_err(-EINVAL, "comparison is NULL");
	dbuf_init(&b);
	dbuf_putc(&b, '[');
	for (size_t i = 0; i < c->n; i++) {
		struct dnode path = { .type = DN_STR };

		path.s.p = c->m[i].path;
		path.s.len = strlen(c->m[i].path);
		dbuf_puts(&b, i ? ",\n{\"path\":" : "\n{\"path\":");
		json_write(&b, &path, false, 0);
		dbuf_printf(&b, ",\"kind\":\"%s\"", kind_name(c->m[i].kind));
		json_number(&b, "a", c->m[i].a);
		json_number(&b, "b", c->m[i].b);
		json_number(&b, "error", c->m[i].error);
		dbuf_putc(&b, '}');
	}
	dbuf_puts(&b, c->n ? "\n]\n" : "]\n");
	*out = dbuf_steal(&b);
	return *out ? 0 : ditto_err(-ENOMEM, "out of memory");
}
