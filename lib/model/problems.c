/* SPDX-License-Identifier: MIT */
/*
 * A validation's reports, at the path being checked: problems (the model
 * is invalid) and warnings (valid, but this library cannot use it). Used
 * by the walk (validate.c) and by the schema's own section checks.
 */
#include <stdarg.h>
#include <stdio.h>

#include "model_int.h"

void vproblem(struct vctx *v, const char *field, const char *fmt, ...)
{
	char msg[512];
	size_t mark = field ? path_push_field(&v->path, field) : v->path.len;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	text_show_safely(msg, sizeof(msg));
	if (v->problems++ == 0)
		snprintf(v->first, sizeof(v->first), "%s: %s", path_str(&v->path), msg);
	if (v->problem)
		v->problem(path_str(&v->path), msg, v->user);
	path_pop(&v->path, mark);
}

void vwarning(struct vctx *v, const char *field, const char *fmt, ...)
{
	char msg[512];
	size_t mark;
	va_list ap;

	if (!v->warning)
		return;
	mark = field ? path_push_field(&v->path, field) : v->path.len;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	text_show_safely(msg, sizeof(msg));
	v->warning(path_str(&v->path), msg, v->user);
	path_pop(&v->path, mark);
}
