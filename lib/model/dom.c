/* SPDX-License-Identifier: MIT */
/* Document tree nodes: allocation, copy, comparison, map and array access. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dom.h"

static int oom(void)
{
	return ditto_err(-ENOMEM, "out of memory");
}

struct dnode *dn_new(enum dn_type type)
{
	struct dnode *n = calloc(1, sizeof(*n));

	if (!n) {
		oom();
		return NULL;
	}
	n->type = type;
	return n;
}

struct dnode *dn_str(const char *p, size_t len)
{
	struct dnode *n = dn_new(DN_STR);

	if (!n)
		return NULL;
	n->s.p = malloc(len + 1);
	if (!n->s.p) {
		free(n);
		oom();
		return NULL;
	}
	if (len)
		memcpy(n->s.p, p, len);
	n->s.p[len] = '\0';
	n->s.len = len;
	return n;
}

struct dnode *dn_cstr(const char *s)
{
	return dn_str(s, strlen(s));
}

struct dnode *dn_uint(uint64_t v)
{
	struct dnode *n = dn_new(DN_UINT);

	if (n)
		n->u = v;
	return n;
}

struct dnode *dn_float(double v)
{
	struct dnode *n = dn_new(DN_FLOAT);

	if (n)
		n->f = v;
	return n;
}

struct dnode *dn_bool(bool v)
{
	struct dnode *n = dn_new(DN_BOOL);

	if (n)
		n->b = v;
	return n;
}

void dn_free(struct dnode *n)
{
	if (!n)
		return;
	switch (n->type) {
	case DN_STR:
	case DN_BIN:
	case DN_EXT:
		free(n->s.p);
		break;
	case DN_ARR:
		for (size_t i = 0; i < n->a.n; i++)
			dn_free(n->a.items[i]);
		free(n->a.items);
		break;
	case DN_MAP:
		for (size_t i = 0; i < n->m.n; i++) {
			free(n->m.m[i].key);
			dn_free(n->m.m[i].val);
		}
		free(n->m.m);
		break;
	case DN_HIST:
		ditto_hist_free(n->h);
		break;
	default:
		break;
	}
	free(n);
}

static struct dnode *dup_children(const struct dnode *n, struct dnode *d)
{
	if (n->type == DN_ARR) {
		for (size_t i = 0; i < n->a.n; i++)
			if (dn_push(d, dn_dup(n->a.items[i])))
				goto fail;
	} else {
		for (size_t i = 0; i < n->m.n; i++) {
			char *k = strdup(n->m.m[i].key);

			if (!k) {
				oom();
				goto fail;
			}
			if (dn_append(d, k, dn_dup(n->m.m[i].val)))
				goto fail;
		}
	}
	return d;
fail:
	dn_free(d);
	return NULL;
}

struct dnode *dn_dup(const struct dnode *n)
{
	struct dnode *d;

	if (!n)
		return NULL;
	switch (n->type) {
	case DN_STR:
	case DN_BIN:
	case DN_EXT:
		d = dn_str(n->s.p, n->s.len);
		if (d) {
			d->type = n->type;
			d->ext_type = n->ext_type;
		}
		return d;
	case DN_ARR:
	case DN_MAP:
		d = dn_new(n->type);
		return d ? dup_children(n, d) : NULL;
	case DN_HIST:
		d = dn_new(DN_HIST);
		if (d && !(d->h = ditto_hist_dup(n->h))) {
			free(d);
			return NULL;
		}
		return d;
	default:
		d = dn_new(n->type);
		if (d)
			*d = *n;
		return d;
	}
}

bool dn_equal(const struct dnode *a, const struct dnode *b)
{
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case DN_NIL: return true;
	case DN_BOOL: return a->b == b->b;
	case DN_INT: return a->i == b->i;
	case DN_UINT: return a->u == b->u;
	case DN_FLOAT: return a->f == b->f || (isnan(a->f) && isnan(b->f));
	case DN_STR:
	case DN_BIN:
	case DN_EXT:
		return a->ext_type == b->ext_type && a->s.len == b->s.len &&
		       (a->s.len == 0 || !memcmp(a->s.p, b->s.p, a->s.len));
	case DN_ARR:
		if (a->a.n != b->a.n)
			return false;
		for (size_t i = 0; i < a->a.n; i++)
			if (!dn_equal(a->a.items[i], b->a.items[i]))
				return false;
		return true;
	case DN_MAP:
		if (a->m.n != b->m.n)
			return false;
		for (size_t i = 0; i < a->m.n; i++) {
			const struct dnode *v = dn_get(b, a->m.m[i].key);

			if (!v || !dn_equal(a->m.m[i].val, v))
				return false;
		}
		return true;
	case DN_HIST:
		return hist_equal(a->h, b->h);
	}
	return false;
}

int dn_push(struct dnode *arr, struct dnode *v)
{
	if (!v)
		return -ENOMEM;
	if (arr->a.n == arr->a.cap) {
		size_t cap = arr->a.cap ? arr->a.cap * 2 : 4;
		struct dnode **p = realloc(arr->a.items, cap * sizeof(*p));

		if (!p) {
			dn_free(v);
			return oom();
		}
		arr->a.items = p;
		arr->a.cap = cap;
	}
	arr->a.items[arr->a.n++] = v;
	return 0;
}

int dn_append(struct dnode *map, char *key, struct dnode *v)
{
	if (!v) {
		free(key);
		return -ENOMEM;
	}
	if (map->m.n == map->m.cap) {
		size_t cap = map->m.cap ? map->m.cap * 2 : 4;
		struct dmember *p = realloc(map->m.m, cap * sizeof(*p));

		if (!p) {
			free(key);
			dn_free(v);
			return oom();
		}
		map->m.m = p;
		map->m.cap = cap;
	}
	map->m.m[map->m.n].key = key;
	map->m.m[map->m.n].val = v;
	map->m.n++;
	return 0;
}

static struct dmember *member(const struct dnode *map, const char *key)
{
	if (!map || map->type != DN_MAP)
		return NULL;
	for (size_t i = 0; i < map->m.n; i++)
		if (strcmp(map->m.m[i].key, key) == 0)
			return &map->m.m[i];
	return NULL;
}

struct dnode *dn_get(const struct dnode *map, const char *key)
{
	struct dmember *m = member(map, key);

	return m ? m->val : NULL;
}

int dn_set(struct dnode *map, const char *key, struct dnode *v)
{
	struct dmember *m;
	char *k;

	if (!v)
		return -ENOMEM;
	if (!map || map->type != DN_MAP) {
		dn_free(v);
		return ditto_err(-EINVAL, "%s: no section to set it in (a NULL or absent handle)",
				 key);
	}
	m = member(map, key);
	if (m) {
		dn_free(m->val);
		m->val = v;
		return 0;
	}
	k = strdup(key);
	if (!k) {
		dn_free(v);
		return oom();
	}
	return dn_append(map, k, v);
}

struct dnode *dn_child(struct dnode *map, const char *key, enum dn_type type)
{
	struct dnode *c = dn_get(map, key);

	if (c && c->type == type)
		return c;
	c = dn_new(type);
	if (!c || dn_set(map, key, c))
		return NULL;
	return c;
}

struct dnode *dn_sub(const struct dnode *map, const char *key, enum dn_type type)
{
	struct dnode *c = dn_get(map, key);

	return c && c->type == type ? c : NULL;
}

bool dn_number(const struct dnode *n, double *out)
{
	if (!n)
		return false;
	switch (n->type) {
	case DN_UINT: *out = (double)n->u; return true;
	case DN_INT: *out = (double)n->i; return true;
	case DN_FLOAT: *out = n->f; return true;
	default: return false;
	}
}

uint64_t dn_get_u64(const struct dnode *map, const char *key)
{
	const struct dnode *n = dn_get(map, key);

	return n && n->type == DN_UINT ? n->u : 0;
}

double dn_get_f64(const struct dnode *map, const char *key)
{
	double v;

	return dn_number(dn_get(map, key), &v) ? v : 0;
}

bool dn_get_bool(const struct dnode *map, const char *key)
{
	const struct dnode *n = dn_get(map, key);

	return n && n->type == DN_BOOL && n->b;
}

const char *dn_get_str(const struct dnode *map, const char *key)
{
	const struct dnode *n = dn_get(map, key);

	return n && n->type == DN_STR ? n->s.p : "";
}

int dn_set_u64(struct dnode *map, const char *key, uint64_t v)
{
	return dn_set(map, key, dn_uint(v));
}

int dn_set_f64(struct dnode *map, const char *key, double v)
{
	return dn_set(map, key, dn_float(v));
}

int dn_set_bool(struct dnode *map, const char *key, bool v)
{
	return dn_set(map, key, dn_bool(v));
}

int dn_set_str(struct dnode *map, const char *key, const char *v)
{
	return dn_set(map, key, dn_cstr(v));
}

const char *dn_type_name(enum dn_type t)
{
	static const char *const names[] = {
		[DN_NIL] = "nil", [DN_BOOL] = "a boolean", [DN_INT] = "a negative integer",
		[DN_UINT] = "an unsigned integer", [DN_FLOAT] = "a float",
		[DN_STR] = "a string", [DN_BIN] = "binary data", [DN_EXT] = "an extension value",
		[DN_ARR] = "an array", [DN_MAP] = "a map", [DN_HIST] = "a histogram",
	};

	return t >= DN_NIL && t <= DN_HIST ? names[t] : "?";
}
