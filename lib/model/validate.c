/* SPDX-License-Identifier: MIT */
/*
 * Strict validation: walk the schema tables over the model and report
 * every broken rule with the path of the bad field.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_int.h"

/* Stop early when nobody listens for more than the first problem. */
static bool done(const struct vctx *v)
{
	return v->problems && !v->problem;
}

static void check_number(struct vctx *v, const struct field *f, const struct dnode *n)
{
	double d = n->type == DN_FLOAT ? n->f : (double)n->u;

	if (n->type == DN_FLOAT && !isfinite(d))
		vproblem(v, NULL, "%g is not finite", d);
	else if (d < 0 && !(f->flags & F_SIGNED))
		vproblem(v, NULL, "%g is negative", d);
	else if ((f->flags & F_POSITIVE) && d <= 0)
		vproblem(v, NULL, "must be at least 1");
	else if ((f->flags & F_PORT) && (d < 1 || d > 65535))
		vproblem(v, NULL, "%g is not a port number (1-65535)", d);
}

static void check_enum(struct vctx *v, const struct field *f, const struct dnode *n)
{
	struct dbuf names;

	if (enum_index(f->enums, n->s.p) >= 0)
		return;
	dbuf_init(&names);
	for (size_t i = 0; f->enums[i]; i++)
		dbuf_printf(&names, "%s%s", i ? ", " : "", f->enums[i]);
	vproblem(v, NULL, "'%s' is not one of %s", n->s.p, names.data ? names.data : "");
	dbuf_free(&names);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* First label present twice, found by sorting: O(n log n) on hostile input. */
static char *find_duplicate(char **labels, size_t n)
{
	qsort(labels, n, sizeof(*labels), cmp_str);
	for (size_t i = 1; i < n; i++)
		if (strcmp(labels[i - 1], labels[i]) == 0)
			return labels[i];
	return NULL;
}

/* Labels of list items or array elements; NULL on no memory. */
static char **collect_labels(const struct section *s, const struct dnode *arr)
{
	char **labels = calloc(arr->a.n ? arr->a.n : 1, sizeof(*labels));
	struct dbuf b;

	if (!labels)
		return NULL;
	for (size_t i = 0; i < arr->a.n; i++) {
		const struct dnode *e = arr->a.items[i];

		dbuf_init(&b);
		if (s)
			element_label(s, e, &b);
		else if (e->type == DN_UINT)
			dbuf_printf(&b, "%llu", (unsigned long long)e->u);
		else if (e->type == DN_STR)
			dbuf_puts(&b, e->s.p);
		labels[i] = dbuf_steal(&b);
		if (!labels[i]) {
			while (i--)
				free(labels[i]);
			free(labels);
			return NULL;
		}
	}
	return labels;
}

static void check_unique(struct vctx *v, const struct section *s, const struct dnode *arr)
{
	char **labels, *dup;

	if (arr->a.n < 2 || done(v))
		return;
	labels = collect_labels(s, arr);
	if (!labels) {
		vproblem(v, NULL, "out of memory while checking for repeated keys");
		return;
	}
	if ((dup = find_duplicate(labels, arr->a.n)))
		vproblem(v, NULL, "'%s' appears twice", dup);
	for (size_t i = 0; i < arr->a.n; i++)
		free(labels[i]);
	free(labels);
}

/* Names (element keys, lists of names) follow the name rule, other
 * strings its character set (see DITTO_NAME_MAX in model.h): what passes
 * here is what the synthesizer accepts. The message never quotes the
 * string: it may hold what a terminal would act on. */
static void check_string(struct vctx *v, const struct field *f, const struct dnode *n)
{
	bool name = f->flags & (F_KEY | F_NONEMPTY);
	const char *why = name ? name_problem(n->s.p, n->s.len) : text_problem(n->s.p, n->s.len);

	if (why)
		vproblem(v, NULL, "%s %s", name ? "name" : "string", why);
}

static void check_list(struct vctx *v, const struct field *f, const struct dnode *n)
{
	for (size_t i = 0; i < n->a.n && !done(v); i++) {
		const struct dnode *e = n->a.items[i];
		size_t mark = path_push_index(&v->path, i);

		if (e->type == DN_UINT)
			check_number(v, f, e);
		else if (e->type == DN_STR)
			check_string(v, f, e);
		path_pop(&v->path, mark);
	}
	check_unique(v, NULL, n);
}

static void check_map(struct vctx *v, const struct field *f, const struct dnode *n)
{
	for (size_t i = 0; i < n->m.n && !done(v); i++) {
		const struct dnode *e = n->m.m[i].val;
		const char *why;

		if (n->m.m[i].key[0] == '\0')
			vproblem(v, NULL, "empty key");
		else if ((why = text_problem(n->m.m[i].key, strlen(n->m.m[i].key))))
			vproblem(v, NULL, "a key %s", why);
		else if (f->type == FT_VALUES && !isfinite(e->f))
			vproblem(v, n->m.m[i].key, "%g is not finite", e->f);
	}
}

static void check_section(struct vctx *v, const struct section *s, const struct dnode *map);

static void check_elements(struct vctx *v, const struct section *s, const struct dnode *arr)
{
	for (size_t i = 0; i < arr->a.n && !done(v); i++) {
		const struct dnode *e = arr->a.items[i];
		size_t mark = path_push_index(&v->path, i);

		if (s == &schema_service)
			v->service = e;
		check_section(v, s, e);
		path_pop(&v->path, mark);
	}
	if (s == &schema_service)
		v->service = NULL;
	check_unique(v, s, arr);
}

static void check_field(struct vctx *v, const struct field *f, const struct dnode *n)
{
	switch (f->type) {
	case FT_U64:
	case FT_F64: check_number(v, f, n); break;
	case FT_STR: check_string(v, f, n); break;
	case FT_ENUM: check_enum(v, f, n); break;
	case FT_U64LIST:
	case FT_STRLIST: check_list(v, f, n); break;
	case FT_COUNTS:
	case FT_VALUES: check_map(v, f, n); break;
	case FT_OBJ: check_section(v, f->sub, n); break;
	case FT_ARR: check_elements(v, f->sub, n); break;
	default: break;
	}
}

static void check_section(struct vctx *v, const struct section *s, const struct dnode *map)
{
	for (size_t i = 0; i < s->nfields && !done(v); i++) {
		const struct field *f = &s->fields[i];
		const struct dnode *n = dn_get(map, f->name);
		size_t mark;

		if (!n) {
			/* A key added later may be absent: its first name. */
			if ((f->flags & F_KEY) && !(f->flags & F_KEY_DEFAULT))
				vproblem(v, f->name, "missing (it identifies the element)");
			continue;
		}
		mark = path_push_field(&v->path, f->name);
		check_field(v, f, n);
		path_pop(&v->path, mark);
	}
	if (s->check && !done(v))
		s->check(v, map);
}

static void check_schema(struct vctx *v, const struct dnode *root)
{
	const struct dnode *s = dn_get(root, "schema");

	if (!s || s->type != DN_UINT || s->u != DITTO_MODEL_SCHEMA)
		vproblem(v, "schema", "must be %d", DITTO_MODEL_SCHEMA);
}

DITTO_API int ditto_model_validate(const struct ditto_model *m, const struct ditto_validate_opts *opts)
{
	struct vctx v = { 0 };
	int err;

	if ((err = OPTS_CHECK(opts, ditto_validate_opts)))
		return err;
	if (!m)
		return ditto_err(-EINVAL, "model is NULL");
	dbuf_init(&v.path);
	v.problem = OPTS_GET(opts, problem, NULL);
	v.user = OPTS_GET(opts, user, NULL);
	v.warning = OPTS_GET(opts, warning, NULL);
	v.graph = dn_get(m->root, "graph");
	check_schema(&v, m->root);
	if (!done(&v))
		check_section(&v, &schema_root, m->root);
	dbuf_free(&v.path);
	if (v.problems)
		return ditto_err(-DITTO_EINVALID, "%s", v.first);
	ditto_err_clear();
	return 0;
}
