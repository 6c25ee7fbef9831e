/* SPDX-License-Identifier: MIT */
/* Error codes and the thread-local, context-carrying error message. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"

#define MSG_MAX 1024

static _Thread_local char last_msg[MSG_MAX];

static const struct {
	int code;
	const char *text;
} ditto_codes[] = {
	{ DITTO_ECORRUPT, "malformed input" },
	{ DITTO_ESCHEMA, "unsupported model schema version" },
	{ DITTO_EINVALID, "invalid model" },
	{ DITTO_ELIMIT, "input exceeds a safety limit" },
	{ DITTO_EMISMATCH, "objects cannot be combined" },
	{ DITTO_ENOTFOUND, "no such element" },
	{ DITTO_ETYPE, "element has another type" },
	{ DITTO_EOPTS, "unsupported options" },
	{ DITTO_EBUILD, "clone build failed" },
};

DITTO_API const char *ditto_strerror(int err)
{
	if (err == INT_MIN)
		return "unknown error";
	if (err < 0)
		err = -err;
	if (err == 0)
		return "success";
	for (size_t i = 0; i < ARRAY_SIZE(ditto_codes); i++)
		if (ditto_codes[i].code == err)
			return ditto_codes[i].text;
	if (err < DITTO_ECORRUPT) {
		/* strerror's text for errno values is static in glibc. */
		const char *s = strerror(err);
		if (s && strncmp(s, "Unknown error", 13) != 0)
			return s;
	}
	return "unknown error";
}

DITTO_API const char *ditto_last_error(void)
{
	return last_msg;
}

int ditto_verr(int err, const char *fmt, va_list ap)
{
	vsnprintf(last_msg, sizeof(last_msg), fmt, ap);
	return err;
}

int ditto_err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ditto_verr(err, fmt, ap);
	va_end(ap);
	return err;
}

void ditto_err_prefix(const char *fmt, ...)
{
	char old[MSG_MAX], pre[MSG_MAX];
	va_list ap;
	int n;

	memcpy(old, last_msg, sizeof(old));
	va_start(ap, fmt);
	vsnprintf(pre, sizeof(pre), fmt, ap);
	va_end(ap);
	n = snprintf(last_msg, sizeof(last_msg), "%s: ", pre);
	if (n > 0 && (size_t)n < sizeof(last_msg))
		memcpy(last_msg + n, old, strnlen(old, sizeof(last_msg) - (size_t)n - 1) + 1);
	last_msg[sizeof(last_msg) - 1] = '\0';
}

void ditto_err_clear(void)
{
	last_msg[0] = '\0';
}

DITTO_API void ditto_free(void *ptr)
{
	free(ptr);
}

int ditto_opts_check(const void *opts, size_t known, const char *type)
{
	const unsigned char *p = opts;
	size_t sz;

	if (!opts)
		return 0;
	memcpy(&sz, opts, sizeof(sz));
	if (sz < sizeof(size_t))
		return ditto_err(-DITTO_EOPTS, "struct %s: sz %zu is too small", type, sz);
	for (size_t i = known; i < sz; i++)
		if (p[i])
			return ditto_err(-DITTO_EOPTS,
					 "struct %s: field at byte %zu is unknown to libditto %s",
					 type, i, DITTO_VERSION_STRING);
	return 0;
}
