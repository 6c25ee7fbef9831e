/* SPDX-License-Identifier: MIT */
/* JSON files under limits, and typed members that name where they fail. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_int.h"
#include "json_bounded.h"

/* ---- paths and errors ---- */

static size_t ctx_append(struct json_ctx *c, const char *s)
{
	size_t old = c->n;
	size_t room = sizeof(c->path) - c->n;
	int w = snprintf(c->path + c->n, room, "%s", s);

	/* A path longer than the buffer is cut, not overrun (depth is at
	 * most 64, but keys are the file's). */
	c->n = w < 0 ? c->n : (size_t)w >= room ? sizeof(c->path) - 1 : c->n + (size_t)w;
	return old;
}

size_t json_ctx_key(struct json_ctx *c, const char *key)
{
	size_t old = c->n;

	if (c->n)
		ctx_append(c, ".");
	ctx_append(c, key);
	return old;
}

size_t json_ctx_index(struct json_ctx *c, size_t i)
{
	char b[32];

	snprintf(b, sizeof(b), "[%zu]", i);
	return ctx_append(c, b);
}

void json_ctx_restore(struct json_ctx *c, size_t n)
{
	c->n = n;
	c->path[n] = '\0';
}

int json_fail(const struct json_ctx *c, int err, const char *key, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!c->n && !key)	/* the document itself */
		return ditto_err(err, "%s:%u: %s", c->name, c->line, msg);
	return ditto_err(err, "%s:%u: %s%s%s: %s", c->name, c->line, c->path,
			 key && c->n ? "." : "", key ? key : "", msg);
}

/* ---- typed members ---- */

static json_t *member(json_t *obj, const char *key)
{
	json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

	return json_is_null(v) ? NULL : v;
}

static int absent(struct json_ctx *c, const char *key, bool required)
{
	return required ? json_fail(c, -DITTO_ECORRUPT, key, "missing") : 0;
}

int json_get_str(struct json_ctx *c, json_t *obj, const char *key, bool required,
		 const char **out)
{
	json_t *v = member(obj, key);

	*out = NULL;
	if (!v)
		return absent(c, key, required);
	if (!json_is_string(v))
		return json_fail(c, -DITTO_ECORRUPT, key, "not a string");
	*out = json_string_value(v);
	return 0;
}

/* Decimal digits only: no sign, no space, no exponent; at most 2^64-1. */
static bool parse_digits(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return true;
}

int json_value_u64(struct json_ctx *c, json_t *v, const char *key, uint64_t *out)
{
	if (json_is_integer(v)) {
		if (json_integer_value(v) < 0)
			return json_fail(c, -DITTO_ECORRUPT, key, "negative");
		*out = (uint64_t)json_integer_value(v);
		return 0;
	}
	if (json_is_real(v)) {
		double d = json_real_value(v);

		/* 1.7e15 microseconds is a number a JavaScript exporter may
		 * write; a fraction or 2^64 is no count or time. */
		if (!(d >= 0 && d < 18446744073709551616.0) || floor(d) != d)
			return json_fail(c, -DITTO_ECORRUPT, key, "not a whole number");
		*out = (uint64_t)d;
		return 0;
	}
	if (json_is_string(v)) {
		if (!parse_digits(json_string_value(v), out))
			return json_fail(c, -DITTO_ECORRUPT, key, "not a number");
		return 0;
	}
	return json_fail(c, -DITTO_ECORRUPT, key, "not a number");
}

int json_get_u64(struct json_ctx *c, json_t *obj, const char *key, bool required,
		 uint64_t *out, bool *present)
{
	json_t *v = member(obj, key);

	*out = 0;
	if (present)
		*present = v != NULL;
	if (!v)
		return absent(c, key, required);
	return json_value_u64(c, v, key, out);
}

int json_get_array(struct json_ctx *c, json_t *obj, const char *key, bool required,
		   json_t **out)
{
	json_t *v = member(obj, key);

	*out = NULL;
	if (!v)
		return absent(c, key, required);
	if (!json_is_array(v))
		return json_fail(c, -DITTO_ECORRUPT, key, "not an array");
	*out = v;
	return 0;
}

int json_get_object(struct json_ctx *c, json_t *obj, const char *key, bool required,
		    json_t **out)
{
	json_t *v = member(obj, key);

	*out = NULL;
	if (!v)
		return absent(c, key, required);
	if (!json_is_object(v))
		return json_fail(c, -DITTO_ECORRUPT, key, "not an object");
	*out = v;
	return 0;
}

/* ---- files ---- */

int json_read_file(const char *path, size_t max_bytes, char **buf, size_t *len)
{
	struct stat st;
	size_t n = 0;
	char *b;
	int fd;

	*buf = NULL;
	*len = 0;
	if (!max_bytes || max_bytes > INT_MAX)
		max_bytes = max_bytes ? INT_MAX : JSONB_MAX_BYTES;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ditto_err(-errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size > max_bytes) {
		close(fd);
		return ditto_err(-DITTO_ELIMIT, "%s: %lld bytes, more than the limit of %zu",
				 path, (long long)st.st_size, max_bytes);
	}
	/* Read up to one byte past the limit: a pipe or a file that grows
	 * is held to it as well. */
	b = malloc(max_bytes + 1 < 65536 ? max_bytes + 1 : 65536);
	for (size_t cap = b ? (max_bytes + 1 < 65536 ? max_bytes + 1 : 65536) : 0; b;) {
		ssize_t r;

		if (n == cap) {
			size_t ncap = cap * 2 > max_bytes + 1 ? max_bytes + 1 : cap * 2;
			char *p = ncap > cap ? realloc(b, ncap) : NULL;

			if (!p)
				break;
			b = p;
			cap = ncap;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(b);
			close(fd);
			return ditto_err(-e, "%s: %s", path, strerror(e));
		}
		if (r == 0) {
			char *p = realloc(b, n + 1);

			close(fd);
			if (!p) {
				free(b);
				return ditto_err(-ENOMEM, "%s: out of memory", path);
			}
			p[n] = '\0';
			*buf = p;
			*len = n;
			return 0;
		}
		n += (size_t)r;
		if (n > max_bytes)
			break;
	}
	close(fd);
	free(b);
	if (n > max_bytes)
		return ditto_err(-DITTO_ELIMIT, "%s: more than the limit of %zu bytes", path,
				 max_bytes);
	return ditto_err(-ENOMEM, "%s: out of memory", path);
}

/* ---- bounds on the bytes, before decoding ---- */

static void where(const char *buf, size_t off, unsigned *line, unsigned *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off; i++) {
		if (buf[i] == '\n') {
			++*line;
			*col = 1;
		} else {
			++*col;
		}
	}
}

/* Depth of [ and { outside strings, and values (an upper bound: every
 * container and every comma), each against its limit. */
static int prescan(const char *buf, size_t len, const char *name, const struct json_limits *lim)
{
	unsigned max_depth = lim && lim->max_depth ? lim->max_depth : JSONB_MAX_DEPTH;
	size_t max_values = lim && lim->max_values ? lim->max_values : JSONB_MAX_VALUES;
	bool in_str = false, esc = false;
	size_t values = 0;
	unsigned depth = 0, line, col;

	for (size_t i = 0; i < len; i++) {
		char ch = buf[i];

		if (in_str) {
			if (esc)
				esc = false;
			else if (ch == '\\')
				esc = true;
			else if (ch == '"')
				in_str = false;
			continue;
		}
		if (ch == '"') {
			in_str = true;
		} else if (ch == '[' || ch == '{') {
			if (++depth > max_depth) {
				where(buf, i, &line, &col);
				return ditto_err(-DITTO_ELIMIT,
						 "%s:%u:%u: nested deeper than %u levels", name,
						 line, col, max_depth);
			}
			values++;
		} else if (ch == ']' || ch == '}') {
			if (depth)	/* unbalanced: jansson says where */
				depth--;
		} else if (ch == ',') {
			values++;
		}
		if (values > max_values) {
			where(buf, i, &line, &col);
			return ditto_err(-DITTO_ELIMIT, "%s:%u:%u: more than %zu values", name, line,
					 col, max_values);
		}
	}
	return 0;
}

static bool space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

int json_each_doc(const char *buf, size_t len, const char *name, const struct json_limits *lim,
		  json_doc_fn fn, void *user)
{
	size_t max_bytes = lim && lim->max_bytes ? lim->max_bytes : JSONB_MAX_BYTES;
	size_t off = 0;
	unsigned line = 1;
	int err, docs = 0;

	if (max_bytes > INT_MAX)
		max_bytes = INT_MAX;
	if (len > max_bytes)
		return ditto_err(-DITTO_ELIMIT, "%s: %zu bytes, more than the limit of %zu", name,
				 len, max_bytes);
	err = prescan(buf, len, name, lim);
	if (err)
		return err;
	for (;;) {
		struct json_ctx c = { .name = name };
		json_error_t je;
		json_t *doc;

		while (off < len && space(buf[off]))
			line += buf[off++] == '\n';
		if (off == len)
			break;
		/* One document at a time: JSON Lines and a single document
		 * alike (jansson stops after the value and says where). */
		doc = json_loadb(buf + off, len - off, JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES,
				 &je);
		if (!doc)
			return ditto_err(-DITTO_ECORRUPT, "%s:%u:%d: %s", name, line + (unsigned)je.line - 1,
					 je.column, je.text);
		c.line = line;
		err = fn(doc, &c, user);
		json_decref(doc);
		if (err)
			return err;
		docs++;
		if (je.position <= 0 || (size_t)je.position > len - off)
			return ditto_err(-DITTO_ECORRUPT, "%s:%u: cannot find the document's end", name,
					 line);
		for (size_t i = off; i < off + (size_t)je.position; i++)
			line += buf[i] == '\n';
		off += (size_t)je.position;
	}
	if (!docs)
		return ditto_err(-DITTO_ECORRUPT, "%s: no JSON document (empty file)", name);
	return 0;
}

struct one_doc {
	json_doc_fn fn;
	void *user;
	bool seen;
};

static int one_doc_fn(json_t *doc, struct json_ctx *c, void *user)
{
	struct one_doc *o = user;

	if (o->seen)
		return json_fail(c, -DITTO_ECORRUPT, NULL, "more than one document");
	o->seen = true;
	return o->fn(doc, c, o->user);
}

int json_one_doc(const char *buf, size_t len, const char *name, const struct json_limits *lim,
		 json_doc_fn fn, void *user)
{
	struct one_doc o = { fn, user, false };

	return json_each_doc(buf, len, name, lim, one_doc_fn, &o);
}
