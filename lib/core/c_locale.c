/* SPDX-License-Identifier: MIT */
/*
 * Numbers in what the library writes for machines (JSON, SVG, generated C,
 * reports) and reads back must not follow the caller's LC_NUMERIC: an
 * embedding program that set a comma-decimal locale would otherwise get
 * "2,5" in JSON. Formatting and parsing run under a private "C" locale
 * installed with uselocale(), which is per thread, so neither the process
 * locale nor other threads are touched.
 */
#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "core_int.h"

static locale_t c_loc;
static pthread_once_t c_once = PTHREAD_ONCE_INIT;

static void c_loc_init(void)
{
	/* Only fails on no memory; then numbers follow the thread's locale,
	 * which is still right for every caller that never set one. */
	c_loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* The thread's previous locale, to hand back to c_leave(). */
static locale_t c_enter(void)
{
	pthread_once(&c_once, c_loc_init);
	return c_loc ? uselocale(c_loc) : (locale_t)0;
}

static void c_leave(locale_t old)
{
	if (old)
		uselocale(old);
}

int c_vsnprintf(char *buf, size_t len, const char *fmt, va_list ap)
{
	locale_t old = c_enter();
	int n = vsnprintf(buf, len, fmt, ap);

	c_leave(old);
	return n;
}

int c_snprintf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = c_vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n;
}

int c_fprintf(FILE *f, const char *fmt, ...)
{
	locale_t old = c_enter();
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vfprintf(f, fmt, ap);
	va_end(ap);
	c_leave(old);
	return n;
}

double c_strtod(const char *s, char **end)
{
	locale_t old = c_enter();
	int saved;
	double d;

	d = strtod(s, end);
	saved = errno;	/* uselocale() must not hide strtod's ERANGE */
	c_leave(old);
	errno = saved;
	return d;
}
