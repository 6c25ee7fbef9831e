/* SPDX-License-Identifier: MIT */
/*
 * Paths into the model: an element's label segment for messages, and
 * resolving paths for the generic getters, with [N], [element key] and
 * ["quoted map key"] segments (the schema tells keys from elements).
 * The rest of building a path is path_build.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model_int.h"

size_t path_push_label(struct dbuf *p, const struct section *s, const struct dnode *obj)
{
	size_t mark = p->len;

	dbuf_putc(p, '[');
	element_label(s, obj, p);
	dbuf_putc(p, ']');
	return mark;
}

/* ---- resolution ---- */

struct cursor {
	const struct dnode *n;
	/* Section of n when n is a map, of its elements when n is an array. */
	const struct section *s;
	const char *path;	/* whole path, for messages */
};

static int not_found(const struct cursor *c, const char *seg, size_t len)
{
	return ditto_err(-DITTO_ENOTFOUND, "path '%s': no element '%.*s'", c->path, (int)len, seg);
}

static int bad_path(const struct cursor *c, const char *why)
{
	return ditto_err(-EINVAL, "path '%s': %s", c->path, why);
}

static int step_key(struct cursor *c, const char *key, size_t len)
{
	const struct field *f = NULL;
	char *k = strndup(key, len);
	const struct dnode *next;

	if (!k)
		return ditto_err(-ENOMEM, "out of memory");
	next = c->n->type == DN_MAP ? dn_get(c->n, k) : NULL;
	if (next && c->s)
		f = schema_field(c->s, k);
	free(k);
	if (!next)
		return not_found(c, key, len);
	c->n = next;
	c->s = f && (f->type == FT_OBJ || f->type == FT_ARR) ? f->sub : NULL;
	return 0;
}

static bool all_digits(const char *s, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static int step_element(struct cursor *c, const char *seg, size_t len)
{
	struct dbuf label;

	if (c->n->type == DN_MAP)
		return step_key(c, seg, len);
	if (c->n->type != DN_ARR)
		return not_found(c, seg, len);
	if (all_digits(seg, len)) {
		unsigned long long i = strtoull(seg, NULL, 10);

		if (i >= c->n->a.n)
			return not_found(c, seg, len);
		c->n = c->n->a.items[i];
		return 0;
	}
	if (!c->s)
		return not_found(c, seg, len);
	dbuf_init(&label);
	/* A key at its default may be written or left out ("a:b" and
	 * "a:b:kernel" name the same edge). */
	for (int all = 0; all < 2; all++)
		for (size_t i = 0; i < c->n->a.n; i++) {
			path_pop(&label, 0);
			element_label_as(c->s, c->n->a.items[i], all, &label);
			if (label.len == len && !memcmp(label.data, seg, len)) {
				c->n = c->n->a.items[i];
				dbuf_free(&label);
				return 0;
			}
		}
	dbuf_free(&label);
	return not_found(c, seg, len);
}

/* ["..."] with \" and \\ escapes; *p points after '['. */
static int step_quoted(struct cursor *c, const char **p)
{
	struct dbuf key;
	const char *s = *p + 1;
	int err;

	dbuf_init(&key);
	while (*s && *s != '"') {
		if (*s == '\\' && (s[1] == '"' || s[1] == '\\'))
			s++;
		dbuf_putc(&key, *s++);
	}
	if (s[0] != '"' || s[1] != ']') {
		dbuf_free(&key);
		return bad_path(c, "unterminated quoted key");
	}
	*p = s + 2;
	err = c->n->type == DN_MAP ? step_key(c, key.data ? key.data : "", key.len)
				   : not_found(c, key.data ? key.data : "", key.len);
	dbuf_free(&key);
	return err;
}

static int step_bracket(struct cursor *c, const char **p)
{
	const char *s = *p, *end;

	if (*s == '"')
		return step_quoted(c, p);
	end = strchr(s, ']');
	if (!end)
		return bad_path(c, "missing ']'");
	if (end == s)
		return bad_path(c, "empty []");
	*p = end + 1;
	return step_element(c, s, (size_t)(end - s));
}

int path_resolve(const struct dnode *root, const char *path, const struct dnode **out)
{
	struct cursor c = { root, &schema_root, path };
	const char *p = path;
	int err = 0;

	while (*p && !err) {
		if (*p == '[') {
			p++;
			err = step_bracket(&c, &p);
			if (!err && *p && *p != '.' && *p != '[')
				return bad_path(&c, "expected '.' or '[' after ']'");
			continue;
		}
		if (*p == '.') {
			if (p == path || p[1] == '.' || p[1] == '\0' || p[1] == '[')
				return bad_path(&c, "empty field name");
			p++;
		}
		size_t len = strcspn(p, ".[");

		if (len == 0)
			return bad_path(&c, "empty field name");
		err = step_key(&c, p, len);
		p += len;
	}
	if (!err)
		*out = c.n;
	return err;
}
