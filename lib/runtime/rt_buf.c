/* SPDX-License-Identifier: MIT */
/*
 * Growable byte buffers: a connection's input and output, the replay's
 * data. Growth doubles; a failed allocation leaves the buffer as it was.
 */
#include "rt_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rt_buf_reserve(struct rt_buf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 4096;
	char *p;

	if (b->cap - b->len >= more)
		return 0;
	while (cap - b->len < more)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

int rt_buf_put(struct rt_buf *b, const void *p, size_t n)
{
	if (rt_buf_reserve(b, n))
		return -ENOMEM;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

int rt_buf_puts(struct rt_buf *b, const char *s)
{
	return rt_buf_put(b, s, strlen(s));
}

int rt_buf_printf(struct rt_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || rt_buf_reserve(b, (size_t)n + 1))
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

/* Payload bytes carry nothing of the model: a fixed letter. */
int rt_buf_put_u64(struct rt_buf *b, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[sizeof(tmp) - ++n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return rt_buf_put(b, tmp + sizeof(tmp) - n, n);
}

int rt_buf_fill(struct rt_buf *b, size_t n)
{
	if (rt_buf_reserve(b, n))
		return -ENOMEM;
	memset(b->data + b->len, 'x', n);
	b->len += n;
	return 0;
}

void rt_buf_drop(struct rt_buf *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
}

void rt_buf_free(struct rt_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}
