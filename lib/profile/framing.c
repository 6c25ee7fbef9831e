/* SPDX-License-Identifier: MIT */
/*
 * Wire framing of a service from the first bytes of its first request.
 * Only the family is kept; the bytes never leave the profiler.
 */
#include <string.h>

#include "profile_int.h"

static bool starts(const unsigned char *b, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && memcmp(b, prefix, n) == 0;
}

static bool http_method(const unsigned char *b, size_t len)
{
	static const char *const methods[] = { "GET ", "POST ", "PUT ", "HEAD ", "DELETE ",
					       "OPTIONS ", "PATCH ", "CONNECT ", "TRACE " };

	for (size_t i = 0; i < ARRAY_SIZE(methods); i++)
		if (starts(b, len, methods[i]))
			return true;
	return false;
}

static bool memcache_text(const unsigned char *b, size_t len)
{
	static const char *const cmds[] = { "get ", "gets ", "set ", "add ", "replace ",
					    "append ", "prepend ", "cas ", "delete ", "incr ",
					    "decr ", "touch ", "gat ", "stats", "version",
					    "flush_all", "mg ", "ms ", "md ", "ma ", "mn" };

	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		if (starts(b, len, cmds[i]))
			return true;
	return false;
}

enum ditto_framing framing_detect(const unsigned char *b, size_t len)
{
	if (len == 0)
		return DITTO_FRAMING_UNKNOWN;
	/* RESP arrays ("*3\r\n$3\r\nSET") or inline commands redis accepts. */
	if (b[0] == '*' && len > 1 && b[1] >= '0' && b[1] <= '9')
		return DITTO_FRAMING_RESP;
	if (b[0] == 0x80)	/* memcached binary request magic */
		return DITTO_FRAMING_MEMCACHE_BINARY;
	if (http_method(b, len))
		return DITTO_FRAMING_HTTP1;
	if (memcache_text(b, len))
		return DITTO_FRAMING_MEMCACHE_TEXT;
	if (starts(b, len, "PING") || starts(b, len, "SET ") || starts(b, len, "GET"))
		return DITTO_FRAMING_RESP;
	/* A 4-byte big-endian length that is plausible for a request. */
	if (len >= 4 && b[0] == 0 && (b[1] || b[2] || b[3]))
		return DITTO_FRAMING_LENGTH_PREFIXED;
	return DITTO_FRAMING_RAW;
}
