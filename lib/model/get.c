/* SPDX-License-Identifier: MIT */
/* Generic, path-based reads of any model value, for tools. */
#include <errno.h>
#include <stdint.h>

#include "model_int.h"

static int lookup(const struct ditto_model *m, const char *path, const struct dnode **n)
{
	if (!m || !path)
		return ditto_err(-EINVAL, "model and path must not be NULL");
	return path_resolve(m->root, path, n);
}

static int wrong_type(const char *path, const struct dnode *n, const char *want)
{
	return ditto_err(-DITTO_ETYPE, "path '%s': is %s, not %s", path, dn_type_name(n->type), want);
}

DITTO_API int ditto_model_get_type(const struct ditto_model *m, const char *path,
				   enum ditto_value_type *out)
{
	static const enum ditto_value_type map[] = {
		[DN_NIL] = DITTO_VALUE_NIL, [DN_BOOL] = DITTO_VALUE_BOOL,
		[DN_INT] = DITTO_VALUE_INT, [DN_UINT] = DITTO_VALUE_UINT,
		[DN_FLOAT] = DITTO_VALUE_FLOAT, [DN_STR] = DITTO_VALUE_STRING,
		[DN_BIN] = DITTO_VALUE_BINARY, [DN_EXT] = DITTO_VALUE_BINARY,
		[DN_ARR] = DITTO_VALUE_ARRAY, [DN_MAP] = DITTO_VALUE_MAP,
		[DN_HIST] = DITTO_VALUE_HIST,
	};
	const struct dnode *n;
	int err = lookup(m, path, &n);

	if (!err)
		*out = map[n->type];
	return err;
}

DITTO_API int ditto_model_get_bool(const struct ditto_model *m, const char *path, bool *out)
{
	const struct dnode *n;
	int err = lookup(m, path, &n);

	if (err)
		return err;
	if (n->type != DN_BOOL)
		return wrong_type(path, n, "a boolean");
	*out = n->b;
	return 0;
}

DITTO_API int ditto_model_get_i64(const struct ditto_model *m, const char *path, int64_t *out)
{
	const struct dnode *n;
	int err = lookup(m, path, &n);

	if (err)
		return err;
	if (n->type == DN_INT) {
		*out = n->i;
		return 0;
	}
	if (n->type != DN_UINT)
		return wrong_type(path, n, "an integer");
	if (n->u > INT64_MAX)
		return ditto_err(-ERANGE, "path '%s': %llu does not fit in int64", path,
				 (unsigned long long)n->u);
	*out = (int64_t)n->u;
	return 0;
}

DITTO_API int ditto_model_get_u64(const struct ditto_model *m, const char *path, uint64_t *out)
{
	const struct dnode *n;
	int err = lookup(m, path, &n);

	if (err)
		return err;
	if (n->type == DN_INT)
		return ditto_err(-ERANGE, "path '%s': %lld is negative", path, (long long)n->i);
	if (n->type != DN_UINT)
		return wrong_type(path, n, "an integer");
	*out = n->u;
	return 0;
}

DITTO_API int ditto_model_get_f64(const struct ditto_model *m, const char *path, double *out)
{
	const struct dnode *n;
	int err = lookup(m, path, &n);

	if (err)
		return err;
	if (!dn_number(n, out))
		return wrong_type(path, n, "a number");
	return 0;
}

DITTO_API int ditto_model_get_str(const struct ditto_model *m, const char *path, const char **out)
{
	const struct dnode *n;
	int err = lookup(m, path, &n);

	if (err)
		return err;
	if (n->type != DN_STR)
		return wrong_type(path, n, "a string");
	*out = n->s.p;
	return 0;
}

DITTO_API int ditto_model_get_hist(const struct ditto_model *m, const char *path,
				   const struct ditto_hist **out)
{
	const struct dnode *n;
	int err = lookup(m, path, &n);

	if (err)
		return err;
	if (n->type != DN_HIST)
		return wrong_type(path, n, "a histogram");
	*out = n->h;
	return 0;
}

DITTO_API int ditto_model_get_len(const struct ditto_model *m, const char *path, size_t *out)
{
	const struct dnode *n;
	int err = lookup(m, path, &n);

	if (err)
		return err;
	switch (n->type) {
	case DN_ARR: *out = n->a.n; return 0;
	case DN_MAP: *out = n->m.n; return 0;
	case DN_STR:
	case DN_BIN:
	case DN_EXT: *out = n->s.len; return 0;
	case DN_HIST: *out = n->h->n; return 0;
	default: return wrong_type(path, n, "a container");
	}
}

DITTO_API int ditto_model_get_json(const struct ditto_model *m, const char *path,
				   const struct ditto_json_opts *opts, char **out)
{
	const struct dnode *n;
	struct dbuf b;
	int err;

	if ((err = OPTS_CHECK(opts, ditto_json_opts)) || (err = lookup(m, path, &n)))
		return err;
	dbuf_init(&b);
	json_write(&b, n, OPTS_GET(opts, pretty, false), 0);
	*out = dbuf_steal(&b);
	return *out ? 0 : ditto_err(-ENOMEM, "out of memory");
}
