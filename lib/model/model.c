/* SPDX-License-Identifier: MIT */
/* Model lifecycle, and the msgpack/JSON entry points with their limits. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model_int.h"

#define DEFAULT_MAX_BYTES (256u << 20)
#define DEFAULT_MAX_DEPTH 64

static struct ditto_model *model_wrap(struct dnode *root)
{
	struct ditto_model *m = malloc(sizeof(*m));

	if (!m) {
		dn_free(root);
		ditto_err(-ENOMEM, "out of memory");
		return NULL;
	}
	m->root = root;
	return m;
}

DITTO_API struct ditto_model *ditto_model_new(void)
{
	struct dnode *root = dn_new(DN_MAP), *meta;

	if (!root)
		return NULL;
	meta = dn_new(DN_MAP);
	if (dn_set_u64(root, "schema", DITTO_MODEL_SCHEMA) || dn_set(root, "meta", meta) ||
	    dn_set_str(meta, "tool_version", DITTO_VERSION_STRING) ||
	    dn_set_u64(meta, "created", (uint64_t)time(NULL)) || dn_set_u64(meta, "sources", 1) ||
	    dn_set(root, "services", dn_new(DN_ARR))) {
		dn_free(root);
		return NULL;
	}
	return model_wrap(root);
}

DITTO_API void ditto_model_free(struct ditto_model *m)
{
	if (!m)
		return;
	dn_free(m->root);
	free(m);
}

DITTO_API int ditto_model_dup(const struct ditto_model *m, struct ditto_model **out)
{
	struct dnode *root;

	*out = NULL;
	if (!m)
		return ditto_err(-EINVAL, "model is NULL");
	root = dn_dup(m->root);
	if (!root)
		return -ENOMEM;
	*out = model_wrap(root);
	return *out ? 0 : -ENOMEM;
}

DITTO_API int ditto_model_schema(const struct ditto_model *m)
{
	return (int)dn_get_u64(m->root, "schema");
}

static int check_schema(const struct dnode *root)
{
	const struct dnode *s;

	if (root->type != DN_MAP)
		return ditto_err(-DITTO_EINVALID, "model must be a map, got %s",
				 dn_type_name(root->type));
	s = dn_get(root, "schema");
	if (!s)
		return ditto_err(-DITTO_ESCHEMA, "schema: missing: not a libditto model?");
	if (s->type != DN_UINT)
		return ditto_err(-DITTO_ESCHEMA, "schema: expected an unsigned integer, got %s",
				 dn_type_name(s->type));
	if (s->u > DITTO_MODEL_SCHEMA)
		return ditto_err(-DITTO_ESCHEMA,
				 "schema: version %llu is newer than %d, the newest libditto %s reads",
				 (unsigned long long)s->u, DITTO_MODEL_SCHEMA, DITTO_VERSION_STRING);
	if (s->u != DITTO_MODEL_SCHEMA)
		return ditto_err(-DITTO_ESCHEMA, "schema: version %llu is not supported",
				 (unsigned long long)s->u);
	return 0;
}

DITTO_API int ditto_model_decode(const void *buf, size_t len, const struct ditto_load_opts *opts,
				 struct ditto_model **out)
{
	struct read_limits lim;
	struct ditto_model *m;
	struct dnode *root;
	int err;

	if (!out)
		return ditto_err(-EINVAL, "decode: out is NULL");
	*out = NULL;
	if ((err = OPTS_CHECK(opts, ditto_load_opts)))
		return err;
	if (!buf && len)
		return ditto_err(-EINVAL, "decode: buffer is NULL");
	lim.max_bytes = OPTS_GET(opts, max_bytes, 0) ? opts->max_bytes : DEFAULT_MAX_BYTES;
	lim.max_depth = OPTS_GET(opts, max_depth, 0) ? opts->max_depth : DEFAULT_MAX_DEPTH;
	if ((err = msgpack_read(buf, len, &lim, &root)))
		goto fail;
	if ((err = check_schema(root)) || (err = typecheck_model(root))) {
		dn_free(root);
		goto fail;
	}
	if (!(m = model_wrap(root)))
		return -ENOMEM;
	if (!OPTS_GET(opts, no_validate, false) && (err = ditto_model_validate(m, NULL))) {
		ditto_model_free(m);
		goto fail;
	}
	*out = m;
	ditto_debug("decoded a model of %zu bytes", len);
	return 0;
fail:
	ditto_debug("decode failed: %s", ditto_last_error());
	return err;
}

static int read_file(const char *path, size_t max, void **buf, size_t *len)
{
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return ditto_err(-errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return ditto_err(-EINVAL, "%s: not a regular file", path);
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return ditto_err(-DITTO_ELIMIT, "%s: %lld bytes, over the limit of %zu", path,
				 (long long)st.st_size, max);
	}
	*len = (size_t)st.st_size;
	*buf = malloc(*len ? *len : 1);
	if (!*buf) {
		close(fd);
		return ditto_err(-ENOMEM, "out of memory");
	}
	for (size_t off = 0; off < *len; off += (size_t)n) {
		n = read(fd, (char *)*buf + off, *len - off);
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;

			free(*buf);
			close(fd);
			return ditto_err(-e, "%s: read failed: %s", path, strerror(e));
		}
	}
	close(fd);
	return 0;
}

DITTO_API int ditto_model_load(const char *path, const struct ditto_load_opts *opts,
			       struct ditto_model **out)
{
	size_t max, len = 0;
	void *buf = NULL;
	int err;

	if (!out || !path)
		return ditto_err(-EINVAL, "load: path and out must not be NULL");
	*out = NULL;
	if ((err = OPTS_CHECK(opts, ditto_load_opts)))
		return err;
	max = OPTS_GET(opts, max_bytes, 0) ? opts->max_bytes : DEFAULT_MAX_BYTES;
	if ((err = read_file(path, max, &buf, &len)))
		return err;
	err = ditto_model_decode(buf, len, opts, out);
	free(buf);
	if (err)
		ditto_err_prefix("%s", path);
	return err;
}

DITTO_API int ditto_model_encode(const struct ditto_model *m, void **buf, size_t *len)
{
	if (!m || !buf || !len)
		return ditto_err(-EINVAL, "encode: NULL argument");
	return msgpack_write(m->root, buf, len);
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

DITTO_API int ditto_model_save(const struct ditto_model *m, const char *path)
{
	size_t len = 0, plen;
	char *tmp;
	void *buf = NULL;
	int fd, err;

	if (!path)
		return ditto_err(-EINVAL, "save: path is NULL");
	if ((err = ditto_model_encode(m, &buf, &len)))
		return err;
	plen = strlen(path) + 16;
	tmp = malloc(plen);
	if (!tmp) {
		free(buf);
		return ditto_err(-ENOMEM, "out of memory");
	}
	/* Write beside the target and rename: readers never see half a model. */
	snprintf(tmp, plen, "%s.tmpXXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = ditto_err(-errno, "%s: cannot create: %s", path, strerror(errno));
		goto out;
	}
	err = write_all(fd, buf, len);
	/* mkostemp creates 0600; a model is meant to be shared. */
	if (!err && fchmod(fd, 0644))
		err = -errno;
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		ditto_err(err, "%s: cannot write: %s", path, strerror(-err));
	}
out:
	free(tmp);
	free(buf);
	return err;
}

DITTO_API int ditto_model_to_json(const struct ditto_model *m, const struct ditto_json_opts *opts,
				  char **out)
{
	return ditto_model_get_json(m, "", opts, out);
}
