/* SPDX-License-Identifier: MIT */
/* Library messages go through one caller-settable callback. */
#include <stdio.h>

#include "core_int.h"

static void log_stderr(enum ditto_log_level level, const char *msg, void *user)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };

	(void)user;
	fprintf(stderr, "libditto: %s: %s\n", names[level <= DITTO_LOG_DEBUG ? level : 0], msg);
}

static ditto_log_fn log_fn = log_stderr;
static void *log_user;
static enum ditto_log_level log_max = DITTO_LOG_WARN;

DITTO_API ditto_log_fn ditto_set_log(ditto_log_fn fn, void *user, enum ditto_log_level max_level)
{
	ditto_log_fn old = log_fn;

	log_fn = fn ? fn : log_stderr;
	log_user = fn ? user : NULL;
	log_max = fn ? max_level : DITTO_LOG_WARN;
	return old == log_stderr ? NULL : old;
}

void ditto_log(enum ditto_log_level level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (level > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_fn(level, msg, log_user);
}
