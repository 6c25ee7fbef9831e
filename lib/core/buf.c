/* SPDX-License-Identifier: MIT */
/* Growable byte buffer used for JSON text, paths and messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"

void dbuf_init(struct dbuf *b)
{
	memset(b, 0, sizeof(*b));
}

void dbuf_free(struct dbuf *b)
{
	free(b->data);
	dbuf_init(b);
}

bool dbuf_reserve(struct dbuf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (b->oom)
		return false;
	if (__builtin_add_overflow(b->len, extra + 1, &need))
		goto oom;
	if (need <= b->cap)
		return true;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		if (__builtin_mul_overflow(cap, 2, &cap))
			goto oom;
	p = realloc(b->data, cap);
	if (!p)
		goto oom;
	b->data = p;
	b->cap = cap;
	return true;
oom:
	b->oom = true;
	return false;
}

void dbuf_put(struct dbuf *b, const void *p, size_t n)
{
	if (!dbuf_reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void dbuf_puts(struct dbuf *b, const char *s)
{
	dbuf_put(b, s, strlen(s));
}

void dbuf_putc(struct dbuf *b, char c)
{
	dbuf_put(b, &c, 1);
}

void dbuf_printf(struct dbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = c_vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !dbuf_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	c_vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *dbuf_steal(struct dbuf *b)
{
	char *p;

	if (b->oom) {
		dbuf_free(b);
		return NULL;
	}
	if (!b->data && !dbuf_reserve(b, 0))
		return NULL;
	if (b->len == 0)
		b->data[0] = '\0';
	p = b->data;
	dbuf_init(b);
	return p;
}
