/* SPDX-License-Identifier: MIT */
/*
 * Building a path into the model for messages ("services[0].cpu"), one
 * segment pushed and popped at a time. Knows nothing of the schema, so
 * that the schema's own checks can report through it (problems.c).
 */
#include "model_int.h"

size_t path_push_field(struct dbuf *p, const char *name)
{
	size_t mark = p->len;

	if (p->len)
		dbuf_putc(p, '.');
	dbuf_puts(p, name);
	return mark;
}

size_t path_push_index(struct dbuf *p, size_t i)
{
	size_t mark = p->len;

	dbuf_printf(p, "[%zu]", i);
	return mark;
}

void path_pop(struct dbuf *p, size_t mark)
{
	p->len = mark;
	if (p->data)
		p->data[mark] = '\0';
}

const char *path_str(const struct dbuf *p)
{
	return p->len ? p->data : "(root)";
}
