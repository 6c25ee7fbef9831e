/* SPDX-License-Identifier: MIT */
/*
 * Wire framing of a service from the first bytes of its first request.
 * Only the family is kept; the bytes never leave the profiler.
 */
#include <stdint.h>
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

static uint32_t be32(const unsigned char *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/*
 * PostgreSQL: a connection opens with an untyped message, int32 length
 * and int32 code: the StartupMessage of protocol 3.0 (196608), or an
 * SSLRequest / GSSENCRequest first. A window that opens mid-connection
 * sees a typed message instead: a query ('Q') or the extended protocol's
 * Parse / Bind ('P', 'B'), a type byte then an int32 length that is small
 * (its top byte 0) and counts at least itself.
 */
static bool postgres(const unsigned char *b, size_t len)
{
	if (len >= 8 && b[0] == 0) {
		uint32_t n = be32(b), code = be32(b + 4);

		if (code == 196608)
			return n >= 8 && n <= 10000;	/* PostgreSQL's own bound */
		return n == 8 && (code == 80877103 || code == 80877104);
	}
	if (len >= 6 && (b[0] == 'Q' || b[0] == 'P' || b[0] == 'B') && b[1] == 0) {
		uint32_t n = be32(b + 1);

		/* Q: the query's first byte is text, never a NUL; P and B
		 * start with a name that may be empty. */
		return n >= 5 && (b[0] != 'Q' || (b[5] >= 0x20 && b[5] < 0x7f) ||
				  b[5] == '\n' || b[5] == '\t');
	}
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
	/* Before the length prefix: a StartupMessage starts with one. */
	if (postgres(b, len))
		return DITTO_FRAMING_POSTGRES;
	/* A 4-byte big-endian length that is plausible for a request. */
	if (len >= 4 && b[0] == 0 && (b[1] || b[2] || b[3]))
		return DITTO_FRAMING_LENGTH_PREFIXED;
	return DITTO_FRAMING_RAW;
}
