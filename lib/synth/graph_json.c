/* SPDX-License-Identifier: MIT */
/*
 * Bounded JSON for the graph tree's manifests: a recursive-descent reader
 * into a small tree (depth, size and member counts bounded, every error
 * with its offset) and the string escaping the writers share.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ditto/ditto.h>

#include "graph_json.h"

struct jp {
	const char *s, *what;
	size_t len, pos;
};

static int jp_err(const struct jp *p, const char *why)
{
	return ditto_err(-DITTO_ECORRUPT, "%s: not the JSON expected at byte %zu: %s", p->what,
			 p->pos, why);
}

static void skip_ws(struct jp *p)
{
	while (p->pos < p->len && strchr(" \t\r\n", p->s[p->pos]))
		p->pos++;
}

static bool eat(struct jp *p, char c)
{
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == c) {
		p->pos++;
		return true;
	}
	return false;
}

static int hex4(struct jp *p, unsigned *out)
{
	unsigned v = 0;

	if (p->len - p->pos < 4)
		return jp_err(p, "short \\u escape");
	for (int i = 0; i < 4; i++) {
		char c = p->s[p->pos++];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return jp_err(p, "bad \\u escape");
	}
	*out = v;
	return 0;
}

static void put_utf8(struct dbuf *b, unsigned cp)
{
	if (cp < 0x80) {
		dbuf_putc(b, (char)cp);
	} else if (cp < 0x800) {
		dbuf_putc(b, (char)(0xc0 | (cp >> 6)));
		dbuf_putc(b, (char)(0x80 | (cp & 0x3f)));
	} else {
		dbuf_putc(b, (char)(0xe0 | (cp >> 12)));
		dbuf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
		dbuf_putc(b, (char)(0x80 | (cp & 0x3f)));
	}
}

/* Only the basic plane: a surrogate (and NUL, which no C string holds) is
 * refused, since nothing the manifests carry needs one. */
static int escape(struct jp *p, struct dbuf *b)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *k;
	unsigned cp = 0;
	int err;

	if (p->pos >= p->len)
		return jp_err(p, "unterminated string");
	if (p->s[p->pos] != 'u') {
		if (!(k = strchr(from, p->s[p->pos])) || !*k)
			return jp_err(p, "bad escape");
		dbuf_putc(b, to[k - from]);
		p->pos++;
		return 0;
	}
	p->pos++;
	if ((err = hex4(p, &cp)))
		return err;
	if (!cp || (cp >= 0xd800 && cp < 0xe000))
		return jp_err(p, "\\u escape of NUL or a surrogate");
	put_utf8(b, cp);
	return 0;
}

static int parse_str(struct jp *p, char **out)
{
	struct dbuf b;
	int err = 0;

	dbuf_init(&b);
	p->pos++;	/* the opening quote */
	while (!err) {
		unsigned char c;

		if (p->pos >= p->len) {
			err = jp_err(p, "unterminated string");
			break;
		}
		c = (unsigned char)p->s[p->pos++];
		if (c == '"')
			break;
		if (c < 0x20)
			err = jp_err(p, "control character in a string");
		else if (c == '\\')
			err = escape(p, &b);
		else
			dbuf_putc(&b, (char)c);
	}
	dbuf_putc(&b, '\0');
	if (!err && b.oom)
		err = ditto_err(-ENOMEM, "%s: out of memory", p->what);
	if (err) {
		dbuf_free(&b);
		return err;
	}
	*out = dbuf_steal(&b);
	return 0;
}

static int parse_val(struct jp *p, struct jval *v, int depth);

static int grow(struct jp *p, struct jval *v, bool obj)
{
	size_t cap = v->cap ? v->cap * 2 : 8;
	struct jval *items;

	if (v->n >= GJSON_MAX_ITEMS)
		return ditto_err(-DITTO_ELIMIT, "%s: more than %u members at byte %zu", p->what,
				 GJSON_MAX_ITEMS, p->pos);
	if (v->n < v->cap)
		return 0;
	if (!(items = realloc(v->items, cap * sizeof(*items))))
		return ditto_err(-ENOMEM, "%s: out of memory", p->what);
	v->items = items;
	if (obj) {
		char **keys = realloc(v->keys, cap * sizeof(*keys));

		if (!keys)
			return ditto_err(-ENOMEM, "%s: out of memory", p->what);
		v->keys = keys;
	}
	v->cap = cap;
	return 0;
}

static int parse_members(struct jp *p, struct jval *v, int depth, bool obj)
{
	char close = obj ? '}' : ']';
	int err;

	p->pos++;
	if (eat(p, close))
		return 0;
	do {
		char *key = NULL;

		if ((err = grow(p, v, obj)))
			return err;
		if (obj) {
			skip_ws(p);
			if (p->pos >= p->len || p->s[p->pos] != '"')
				return jp_err(p, "expected a member name");
			if ((err = parse_str(p, &key)))
				return err;
		}
		memset(&v->items[v->n], 0, sizeof(v->items[0]));
		if (obj)
			v->keys[v->n] = key;
		v->n++;
		if (obj && !eat(p, ':'))
			return jp_err(p, "expected ':'");
		if ((err = parse_val(p, &v->items[v->n - 1], depth + 1)))
			return err;
	} while (eat(p, ','));
	return eat(p, close) ? 0 : jp_err(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
}

static int parse_word(struct jp *p, struct jval *v)
{
	static const struct { const char *w; enum jtype t; bool b; } words[] = {
		{ "true", J_BOOL, true }, { "false", J_BOOL, false }, { "null", J_NULL, false },
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t n = strlen(words[i].w);

		if (p->len - p->pos >= n && !memcmp(p->s + p->pos, words[i].w, n)) {
			p->pos += n;
			v->t = words[i].t;
			v->b = words[i].b;
			return 0;
		}
	}
	return jp_err(p, "unexpected character");
}

static int parse_num(struct jp *p, struct jval *v)
{
	char buf[64];
	size_t n = 0;
	char *end;

	while (p->pos + n < p->len && n < sizeof(buf) - 1 && strchr("+-.eE0123456789", p->s[p->pos + n]))
		n++;
	memcpy(buf, p->s + p->pos, n);
	buf[n] = '\0';
	v->num = c_strtod(buf, &end);
	if (!n || *end)
		return jp_err(p, "bad number");
	p->pos += n;
	v->t = J_NUM;
	return 0;
}

static int parse_val(struct jp *p, struct jval *v, int depth)
{
	char c;

	if (depth > GJSON_MAX_DEPTH)
		return ditto_err(-DITTO_ELIMIT, "%s: nested deeper than %d at byte %zu", p->what,
				 GJSON_MAX_DEPTH, p->pos);
	skip_ws(p);
	if (p->pos >= p->len)
		return jp_err(p, "unexpected end");
	c = p->s[p->pos];
	if (c == '{' || c == '[') {
		v->t = c == '{' ? J_OBJ : J_ARR;
		return parse_members(p, v, depth, c == '{');
	}
	if (c == '"') {
		v->t = J_STR;
		return parse_str(p, &v->str);
	}
	if (c == '-' || (c >= '0' && c <= '9'))
		return parse_num(p, v);
	return parse_word(p, v);
}

void gjson_free(struct jval *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		gjson_free(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
	memset(v, 0, sizeof(*v));
}

int gjson_parse(const char *text, size_t len, const char *what, struct jval *out)
{
	struct jp p = { text, what, len, 0 };
	int err;

	memset(out, 0, sizeof(*out));
	if (len > GJSON_MAX_BYTES)
		return ditto_err(-DITTO_ELIMIT, "%s: larger than %u bytes", what, GJSON_MAX_BYTES);
	err = parse_val(&p, out, 0);
	skip_ws(&p);
	if (!err && p.pos != len)
		err = jp_err(&p, "trailing bytes");
	if (err)
		gjson_free(out);
	return err;
}

int gjson_load(const char *path, struct jval *out)
{
	struct dbuf b;
	char chunk[8192];
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	ssize_t n;

	if (fd < 0)
		return ditto_err(-errno, "%s: %s", path, strerror(errno));
	dbuf_init(&b);
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = ditto_err(-errno, "%s: %s", path, strerror(errno));
			break;
		}
		if (b.len + (size_t)n > GJSON_MAX_BYTES) {
			err = ditto_err(-DITTO_ELIMIT, "%s: larger than %u bytes", path,
					GJSON_MAX_BYTES);
			break;
		}
		dbuf_put(&b, chunk, (size_t)n);
	}
	close(fd);
	if (!err && b.oom)
		err = ditto_err(-ENOMEM, "%s: out of memory", path);
	if (!err)
		err = gjson_parse(b.data ? b.data : "", b.len, path, out);
	dbuf_free(&b);
	return err;
}

const struct jval *gjson_get(const struct jval *v, const char *key)
{
	if (!v || v->t != J_OBJ)
		return NULL;
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->keys[i], key))
			return &v->items[i];
	return NULL;
}

const char *gjson_str(const struct jval *v, const char *key)
{
	const struct jval *m = gjson_get(v, key);

	return m && m->t == J_STR ? m->str : NULL;
}

double gjson_num(const struct jval *v, const char *key, double dflt)
{
	const struct jval *m = gjson_get(v, key);

	return m && m->t == J_NUM ? m->num : dflt;
}

void gjson_put_str(struct dbuf *b, const char *s)
{
	dbuf_putc(b, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			dbuf_printf(b, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			dbuf_printf(b, "\\u%04x", c);
		else
			dbuf_putc(b, (char)c);
	}
	dbuf_putc(b, '"');
}
