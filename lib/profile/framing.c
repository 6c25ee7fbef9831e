/* SPDX-License-Identifier: MIT */
/*
 * Wire framing of a service from the first bytes of its first request
 * (the first bytes the service reads on a connection).
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

static uint32_t le24(const unsigned char *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16;
}

static bool text_byte(unsigned char ch)
{
	return (ch >= 0x20 && ch < 0x7f) || ch == '\n' || ch == '\t' || ch == '\r';
}

/*
 * MySQL/MariaDB: the server speaks first (its handshake is a write, no
 * request), so a connection's first read is the client's
 * HandshakeResponse41: a packet (3-byte little-endian length, sequence 1)
 * of at least 32 bytes, capabilities with CLIENT_PROTOCOL_41, a max
 * packet size, a character set and 23 zero bytes. A window that opens
 * mid-connection sees a command instead: sequence 0, then COM_QUERY or
 * COM_STMT_PREPARE with text, COM_STMT_EXECUTE with its 9 fixed bytes,
 * or a bare COM_PING / COM_QUIT.
 */
static bool mysql(const unsigned char *b, size_t len)
{
	uint32_t n;

	if (len < 5)
		return false;
	n = le24(b);
	if (b[3] == 1 && len >= 16) {
		uint32_t caps = (uint32_t)b[4] | (uint32_t)b[5] << 8;

		return n >= 32 && (caps & 0x200) && b[12] && !b[13] && !b[14] && !b[15];
	}
	if (b[3] != 0 || n == 0)
		return false;
	switch (b[4]) {
	case 0x03: case 0x16:	/* COM_QUERY, COM_STMT_PREPARE */
		return n >= 2 && (len < 6 || text_byte(b[5]));
	case 0x17:		/* COM_STMT_EXECUTE */
		return n >= 10;
	case 0x0e: case 0x01:	/* COM_PING, COM_QUIT */
		return n == 1;
	default:
		return false;
	}
}

enum ditto_framing framing_detect(const unsigned char *b, size_t len)
{
	if (len == 0)
		return DITTO_FRAMING_UNKNOWN;
	/* RESP arrays ("*3\r\n$3\r\nSET") or inline commands redis accepts. */
	if (b[0] == '*' && len > 1 && b[1] >= '0' && b[1] <= '9')
		return DITTO_FRAMING_RESP;
	/* Before memcached's magic: a MySQL packet of 128 bytes starts with it. */
	if (mysql(b, len))
		return DITTO_FRAMING_MYSQL;
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

/* A protocol named by its bytes, not a guess from their shape. */
static bool specific(enum ditto_framing f)
{
	return f != DITTO_FRAMING_UNKNOWN && f != DITTO_FRAMING_RAW &&
	       f != DITTO_FRAMING_LENGTH_PREFIXED;
}

/*
 * The framing of several connections' first requests: the one most of
 * them name, a specific protocol before a shape. A connection whose first
 * read in the window is the middle of a request (its header was read
 * before the window opened) looks raw; it never looks like a protocol
 * the others do not speak.
 */
enum ditto_framing framing_vote(const struct dt_first *firsts, size_t n)
{
	unsigned votes[32] = { 0 };	/* room for framings to come */
	enum ditto_framing best = DITTO_FRAMING_UNKNOWN;

	for (size_t i = 0; i < n && i < FIRST_SAMPLES; i++) {
		unsigned char b[16];
		enum ditto_framing f;

		memcpy(b, firsts[i].bytes, sizeof(b));
		f = framing_detect(b, firsts[i].len > 16 ? 16 : firsts[i].len);
		if ((unsigned)f < sizeof(votes) / sizeof(votes[0]))
			votes[f]++;
	}
	for (unsigned f = 0; f < sizeof(votes) / sizeof(votes[0]); f++) {
		if (!votes[f] || f == DITTO_FRAMING_UNKNOWN)
			continue;
		if (best == DITTO_FRAMING_UNKNOWN || specific(f) > specific(best) ||
		    (specific(f) == specific(best) && votes[f] > votes[best]))
			best = (enum ditto_framing)f;
	}
	return best;
}
