/* SPDX-License-Identifier: MIT */
/*
 * Unit test of framing_detect() on the first bytes of requests, as the
 * collector keeps them (16 at most): every framing it names, and bytes
 * that only look like one; and of framing_vote() over several
 * connections' samples.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tu.h"
#include "profile_int.h"

static void check(const char *what, const void *bytes, size_t len, enum ditto_framing want)
{
	enum ditto_framing got = framing_detect(bytes, len > 16 ? 16 : len);

	ck_assert_msg(got == want, "%s: %s, want %s", what, ditto_framing_name(got),
		      ditto_framing_name(want));
}

/* The PostgreSQL openings: StartupMessage 3.0, SSLRequest, GSSENCRequest,
 * and typed messages of a window that opens mid-connection. */
START_TEST(postgres_openings)
{
	static const unsigned char startup[] = { 0, 0, 0, 0x54, 0, 3, 0, 0, 'u', 's', 'e', 'r', 0,
						 'p', 'o', 's' };
	static const unsigned char ssl[] = { 0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f };
	static const unsigned char gss[] = { 0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x30 };
	static const unsigned char query[] = { 'Q', 0, 0, 0, 0x28, 'S', 'E', 'L', 'E', 'C', 'T', ' ' };
	static const unsigned char parse[] = { 'P', 0, 0, 0, 0x30, 0, 'B', 'E', 'G', 'I', 'N', 0 };
	static const unsigned char bind[] = { 'B', 0, 0, 0, 0x20, 'P', '0', '_', '1', 0, 0, 0 };
	/* Protocol 2.0 is gone, a CancelRequest opens no session, and a
	 * length-prefixed payload is no startup: */
	static const unsigned char v2[] = { 0, 0, 0, 0x54, 0, 2, 0, 0, 'u', 's', 'e', 'r' };
	static const unsigned char huge[] = { 0, 1, 0, 0, 0, 3, 0, 0, 'u', 's', 'e', 'r' };
	static const unsigned char binq[] = { 'Q', 0, 0, 0, 0x28, 0, 1, 2, 3, 4 };

	check("startup", startup, sizeof(startup), DITTO_FRAMING_POSTGRES);
	check("startup, 8 bytes", startup, 8, DITTO_FRAMING_POSTGRES);
	check("SSLRequest", ssl, sizeof(ssl), DITTO_FRAMING_POSTGRES);
	check("GSSENCRequest", gss, sizeof(gss), DITTO_FRAMING_POSTGRES);
	check("Query", query, sizeof(query), DITTO_FRAMING_POSTGRES);
	check("Parse", parse, sizeof(parse), DITTO_FRAMING_POSTGRES);
	check("Bind", bind, sizeof(bind), DITTO_FRAMING_POSTGRES);
	check("protocol 2.0", v2, sizeof(v2), DITTO_FRAMING_LENGTH_PREFIXED);
	check("startup length over 10000", huge, sizeof(huge), DITTO_FRAMING_LENGTH_PREFIXED);
	check("Q then binary", binq, sizeof(binq), DITTO_FRAMING_RAW);
	check("startup, 7 bytes", startup, 7, DITTO_FRAMING_LENGTH_PREFIXED);
}
END_TEST

/* MySQL/MariaDB: the client's HandshakeResponse41 (the server's greeting
 * is a write, never a request), and commands of a window that opens
 * mid-connection. */
START_TEST(mysql_openings)
{
	/* length 0xb4, seq 1, caps 0x000aa20f, max packet 16 MiB, utf8mb4, filler */
	static const unsigned char hello[] = { 0xb4, 0, 0, 1, 0x0f, 0xa2, 0x0a, 0, 0, 0, 0, 1,
					       45, 0, 0, 0 };
	static const unsigned char query[] = { 0x21, 0, 0, 0, 0x03, 'S', 'E', 'L', 'E', 'C', 'T' };
	static const unsigned char prepare[] = { 0x2b, 0, 0, 0, 0x16, 'S', 'E', 'L', 'E', 'C', 'T' };
	static const unsigned char execute[] = { 0x12, 0, 0, 0, 0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0 };
	static const unsigned char ping[] = { 1, 0, 0, 0, 0x0e };
	static const unsigned char query128[] = { 0x80, 0, 0, 0, 0x03, 's', 'e', 'l' };
	/* Before protocol 4.1 (no CLIENT_PROTOCOL_41), a binary COM_QUERY,
	 * and a handshake response shorter than its fixed fields: */
	static const unsigned char old[] = { 0x40, 0, 0, 1, 0x0f, 0x00, 0, 0, 0, 0, 0, 1, 8, 0,
					     0, 0 };
	static const unsigned char binq[] = { 0x21, 0, 0, 0, 0x03, 0x01, 0x02 };
	static const unsigned char short_hello[] = { 0x10, 0, 0, 1, 0x0f, 0xa2, 0x0a, 0, 0, 0, 0,
						     1, 45, 0, 0, 0 };

	check("HandshakeResponse41", hello, sizeof(hello), DITTO_FRAMING_MYSQL);
	check("COM_QUERY", query, sizeof(query), DITTO_FRAMING_MYSQL);
	check("COM_STMT_PREPARE", prepare, sizeof(prepare), DITTO_FRAMING_MYSQL);
	check("COM_STMT_EXECUTE", execute, sizeof(execute), DITTO_FRAMING_MYSQL);
	check("COM_PING", ping, sizeof(ping), DITTO_FRAMING_MYSQL);
	check("COM_QUERY of 128 bytes", query128, sizeof(query128), DITTO_FRAMING_MYSQL);
	check("pre-4.1 handshake", old, sizeof(old), DITTO_FRAMING_RAW);
	check("COM_QUERY then binary", binq, sizeof(binq), DITTO_FRAMING_RAW);
	check("handshake of 16 bytes", short_hello, sizeof(short_hello), DITTO_FRAMING_RAW);
}
END_TEST

/* The other framings keep their names. */
START_TEST(other_framings)
{
	check("resp", "*3\r\n$3\r\nSET\r\n", 13, DITTO_FRAMING_RESP);
	check("http", "GET / HTTP/1.1\r\n", 16, DITTO_FRAMING_HTTP1);
	check("memcache text", "get key\r\n", 9, DITTO_FRAMING_MEMCACHE_TEXT);
	check("memcache binary", "\x80\x00\x00\x03", 4, DITTO_FRAMING_MEMCACHE_BINARY);
	check("length-prefixed", "\x00\x00\x00\x10payload", 11, DITTO_FRAMING_LENGTH_PREFIXED);
	check("PING inline", "PING\r\n", 6, DITTO_FRAMING_RESP);
	check("raw", "hello", 5, DITTO_FRAMING_RAW);
	check("nothing", "", 0, DITTO_FRAMING_UNKNOWN);
}
END_TEST

static size_t sample(struct dt_first *f, size_t n, const void *bytes, size_t len)
{
	memset(&f[n], 0, sizeof(f[n]));
	memcpy(f[n].bytes, bytes, len > 16 ? 16 : len);
	f[n].len = len > 16 ? 16 : (unsigned)len;
	return n + 1;
}

static void check_vote(const char *what, const struct dt_first *f, size_t n,
		       enum ditto_framing want)
{
	enum ditto_framing got = framing_vote(f, n);

	ck_assert_msg(got == want, "vote %s: %s, want %s", what, ditto_framing_name(got),
		      ditto_framing_name(want));
}

/* A window that opened mid-packet on some connections: their samples are
 * a payload without its header, or a header alone. */
START_TEST(vote_over_connections)
{
	static const unsigned char query[] = { 0x21, 0, 0, 0, 0x03, 'S', 'E', 'L', 'E', 'C', 'T' };
	static const unsigned char payload[] = { 0x03, 'S', 'E', 'L', 'E', 'C', 'T', ' ', 'c' };
	static const unsigned char header[] = { 0x21, 0, 0, 0 };
	/* Zeroed for the compiler's sake: a vote over no sample reads none. */
	struct dt_first f[FIRST_SAMPLES] = { 0 };
	size_t n = 0;

	check_vote("no sample", f, 0, DITTO_FRAMING_UNKNOWN);
	n = sample(f, n, payload, sizeof(payload));
	n = sample(f, n, header, sizeof(header));
	check_vote("mid-packet only", f, n, DITTO_FRAMING_RAW);
	n = sample(f, n, query, sizeof(query));
	check_vote("one whole COM_QUERY among two halves", f, n, DITTO_FRAMING_MYSQL);
	n = 0;
	n = sample(f, n, "\x00\x00\x00\x10payload", 11);
	n = sample(f, n, "\x00\x00\x00\x20payload", 11);
	n = sample(f, n, "junk", 4);
	check_vote("length-prefixed over raw", f, n, DITTO_FRAMING_LENGTH_PREFIXED);
	n = 0;
	n = sample(f, n, "GET / HTTP/1.1\r\n", 16);
	n = sample(f, n, "*3\r\n$3\r\nSET\r\n", 13);
	n = sample(f, n, "*2\r\n$3\r\nGET\r\n", 13);
	check_vote("most votes among protocols", f, n, DITTO_FRAMING_RESP);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("framing");
	TCase *tc = tcase_create("detect");

	tcase_add_test(tc, postgres_openings);
	tcase_add_test(tc, mysql_openings);
	tcase_add_test(tc, other_framings);
	tcase_add_test(tc, vote_over_connections);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
