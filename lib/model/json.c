/* SPDX-License-Identifier: MIT */
/* JSON text of a document tree, for people and jq; msgpack stays the format of record. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codec.h"

static void newline(struct dbuf *out, bool pretty, int depth)
{
	if (!pretty)
		return;
	dbuf_putc(out, '\n');
	for (int i = 0; i < depth; i++)
		dbuf_puts(out, "  ");
}

static void json_double(struct dbuf *out, double d)
{
	if (!isfinite(d))
		dbuf_puts(out, "null");
	else
		dbuf_printf(out, "%.17g", d);
}

static void json_hex(struct dbuf *out, const struct dnode *n)
{
	dbuf_putc(out, '"');
	for (size_t i = 0; i < n->s.len; i++)
		dbuf_printf(out, "%02x", (unsigned char)n->s.p[i]);
	dbuf_putc(out, '"');
}

static void json_key(struct dbuf *out, const char *key, bool pretty)
{
	dbuf_put_json_str(out, key, strlen(key));
	dbuf_puts(out, pretty ? ": " : ":");
}

static void json_hist(struct dbuf *out, const struct ditto_hist *h, bool pretty, int depth)
{
	dbuf_putc(out, '{');
	newline(out, pretty, depth + 1);
	json_key(out, "kind", pretty);
	dbuf_put_json_str(out, hist_kind_name(h->kind), strlen(hist_kind_name(h->kind)));
	if (h->kind == DITTO_HIST_LOGLIN) {
		dbuf_putc(out, ',');
		newline(out, pretty, depth + 1);
		json_key(out, "precision", pretty);
		dbuf_printf(out, "%u", h->precision);
	}
	dbuf_putc(out, ',');
	newline(out, pretty, depth + 1);
	json_key(out, "total", pretty);
	dbuf_printf(out, "%llu,", (unsigned long long)ditto_hist_total(h));
	newline(out, pretty, depth + 1);
	json_key(out, "buckets", pretty);
	dbuf_putc(out, '[');
	for (size_t i = 0; i < h->n; i++) {
		uint64_t lo, hi;

		hist_key_range(h, h->keys[i], &lo, &hi);
		if (i)
			dbuf_putc(out, ',');
		newline(out, pretty, depth + 2);
		dbuf_printf(out, "{\"lo\":%llu,\"hi\":%llu,\"count\":%llu}", (unsigned long long)lo,
			    (unsigned long long)hi, (unsigned long long)h->counts[i]);
	}
	if (h->n)
		newline(out, pretty, depth + 1);
	dbuf_putc(out, ']');
	newline(out, pretty, depth);
	dbuf_putc(out, '}');
}

static void json_container(struct dbuf *out, const struct dnode *n, bool pretty, int depth)
{
	bool map = n->type == DN_MAP;
	size_t count = map ? n->m.n : n->a.n;

	dbuf_putc(out, map ? '{' : '[');
	for (size_t i = 0; i < count; i++) {
		if (i)
			dbuf_putc(out, ',');
		newline(out, pretty, depth + 1);
		if (map)
			json_key(out, n->m.m[i].key, pretty);
		json_write(out, map ? n->m.m[i].val : n->a.items[i], pretty, depth + 1);
	}
	if (count)
		newline(out, pretty, depth);
	dbuf_putc(out, map ? '}' : ']');
}

void json_write(struct dbuf *out, const struct dnode *n, bool pretty, int depth)
{
	switch (n->type) {
	case DN_NIL: dbuf_puts(out, "null"); break;
	case DN_BOOL: dbuf_puts(out, n->b ? "true" : "false"); break;
	case DN_INT: dbuf_printf(out, "%lld", (long long)n->i); break;
	case DN_UINT: dbuf_printf(out, "%llu", (unsigned long long)n->u); break;
	case DN_FLOAT: json_double(out, n->f); break;
	case DN_STR: dbuf_put_json_str(out, n->s.p, n->s.len); break;
	case DN_BIN:
		dbuf_puts(out, pretty ? "{\"$bin\": " : "{\"$bin\":");
		json_hex(out, n);
		dbuf_putc(out, '}');
		break;
	case DN_EXT:
		dbuf_printf(out, "{\"$ext\":%d,\"$bin\":", n->ext_type);
		json_hex(out, n);
		dbuf_putc(out, '}');
		break;
	case DN_ARR:
	case DN_MAP: json_container(out, n, pretty, depth); break;
	case DN_HIST: json_hist(out, n->h, pretty, depth); break;
	}
}
