/* SPDX-License-Identifier: MIT */
/*
 * The clone runtime's client side, compiled in (it is no part of
 * libditto): the W3C traceparent parser and writer, the requests built
 * per framing (their sizes) and the reply parsers, with hostile input.
 */
#include "rt_int.h"

#include "tu.h"

static struct rt_trace tc;

static int parse(const char *v)
{
	memset(&tc, 0, sizeof(tc));
	return rt_traceparent_parse(v, strlen(v), &tc);
}

START_TEST(test_traceparent_valid_and_written_back)
{
	char out[RT_TRACEPARENT_LEN + 1];
	const char *v = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

	ck_assert_int_eq(parse(v), 0);
	ck_assert(tc.remote);
	ck_assert_uint_eq(tc.trace_id[0], 0x4b);
	ck_assert_uint_eq(tc.trace_id[15], 0x36);
	ck_assert_uint_eq(tc.parent_id[7], 0xb7);
	ck_assert_uint_eq(tc.flags, 1);
	rt_traceparent_format(out, tc.trace_id, tc.parent_id, tc.flags);
	ck_assert_str_eq(out, v);
	/* the header's blanks are not the value's */
	ck_assert_int_eq(parse(" \t00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00 "), 0);
	ck_assert_uint_eq(tc.flags, 0);
}
END_TEST

START_TEST(test_traceparent_refused)
{
	static const char *bad[] = {
		"",
		"00",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-011",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",	/* uppercase */
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",	/* version */
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",	/* zero trace */
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",	/* zero parent */
		"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(parse(bad[i]) == -1, "accepted '%s'", bad[i]);
	ck_assert_int_eq(rt_traceparent_parse(NULL, 0, &tc), -1);
	/* not NUL-terminated: only n bytes are read */
	ck_assert_int_eq(rt_traceparent_parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
					      30, &tc), -1);
}
END_TEST

static long reply(enum rt_framing f, const char *s, bool eof, bool *failed)
{
	*failed = false;
	return rt_up_reply(f, s, strlen(s), eof, failed);
}

START_TEST(test_resp_replies)
{
	bool failed;

	ck_assert_int_eq(reply(RT_FRAMING_RESP, "+OK\r\n", false, &failed), 5);
	ck_assert_int_eq(reply(RT_FRAMING_RESP, "$-1\r\n", false, &failed), 5);
	ck_assert_int_eq(reply(RT_FRAMING_RESP, "$3\r\nfoo\r\n+next", false, &failed), 9);
	ck_assert_int_eq(reply(RT_FRAMING_RESP, "$3\r\nfo", false, &failed), 0);
	ck_assert_int_eq(reply(RT_FRAMING_RESP, "*2\r\n$1\r\na\r\n*1\r\n:5\r\n", false, &failed), 19);
	ck_assert_int_eq(reply(RT_FRAMING_RESP, "*2\r\n$1\r\na\r\n", false, &failed), 0);
	ck_assert_int_eq(reply(RT_FRAMING_RESP, "%1\r\n+a\r\n+b\r\n", false, &failed), 12);
	ck_assert_int_eq(reply(RT_FRAMING_RESP, "-ERR no\r\n", false, &failed), 9);
	ck_assert(failed);
	ck_assert_int_eq(reply(RT_FRAMING_RESP, "$3\r\nfoobar\r\n", false, &failed), -1);
	ck_assert_int_eq(reply(RT_FRAMING_RESP, "*-5\r\n", false, &failed), -1);
	ck_assert_int_eq(reply(RT_FRAMING_RESP, "*99999999999999\r\n", false, &failed), -1);
	ck_assert_int_eq(reply(RT_FRAMING_RESP, "$1x\r\n", false, &failed), -1);
	ck_assert_int_eq(reply(RT_FRAMING_RESP, "?x\r\n", false, &failed), -1);
	ck_assert_int_eq(reply(RT_FRAMING_RESP, "+OK\n", false, &failed), -1);
	ck_assert_int_eq(reply(RT_FRAMING_RESP, "\r\n", false, &failed), -1);
}
END_TEST

START_TEST(test_memcache_replies)
{
	bool failed;
	unsigned char bin[30] = { 0x81, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 6 };

	ck_assert_int_eq(reply(RT_FRAMING_MEMCACHE_TEXT, "END\r\n", false, &failed), 5);
	ck_assert_int_eq(reply(RT_FRAMING_MEMCACHE_TEXT, "VALUE k 0 3\r\nabc\r\nEND\r\n", false,
			       &failed), 23);
	ck_assert_int_eq(reply(RT_FRAMING_MEMCACHE_TEXT, "VALUE k 0 3 77\r\nabc\r\nEND\r\n", false,
			       &failed), 26);
	ck_assert_int_eq(reply(RT_FRAMING_MEMCACHE_TEXT, "VALUE k 0 3\r\nab", false, &failed), 0);
	ck_assert_int_eq(reply(RT_FRAMING_MEMCACHE_TEXT, "VALUE k 0 3\r\nabcd\r\n", false, &failed), -1);
	ck_assert_int_eq(reply(RT_FRAMING_MEMCACHE_TEXT, "VALUE k 0\r\n", false, &failed), -1);
	ck_assert_int_eq(reply(RT_FRAMING_MEMCACHE_TEXT, "VALUE k 0 -3\r\n", false, &failed), -1);
	ck_assert_int_eq(reply(RT_FRAMING_MEMCACHE_TEXT, "STORED\r\n", false, &failed), 8);
	ck_assert(!failed);
	ck_assert_int_eq(reply(RT_FRAMING_MEMCACHE_TEXT, "SERVER_ERROR too large\r\n", false,
			       &failed), 24);
	ck_assert(failed);
	/* binary: a miss (status 1) is no failure; a body longer than sent waits */
	failed = false;
	ck_assert_int_eq(rt_up_reply(RT_FRAMING_MEMCACHE_BINARY, (char *)bin, 30, false, &failed), 30);
	ck_assert(!failed);
	ck_assert_int_eq(rt_up_reply(RT_FRAMING_MEMCACHE_BINARY, (char *)bin, 29, false, &failed), 0);
	bin[7] = 0x84;
	ck_assert_int_eq(rt_up_reply(RT_FRAMING_MEMCACHE_BINARY, (char *)bin, 30, false, &failed), 30);
	ck_assert(failed);
	bin[0] = 0x80;	/* a request's magic */
	ck_assert_int_eq(rt_up_reply(RT_FRAMING_MEMCACHE_BINARY, (char *)bin, 30, false, &failed), -1);
	bin[0] = 0x81;
	bin[8] = 0xff;	/* 4 GiB body */
	ck_assert_int_eq(rt_up_reply(RT_FRAMING_MEMCACHE_BINARY, (char *)bin, 30, false, &failed), -1);
}
END_TEST

START_TEST(test_http_replies)
{
	bool failed;
	const char *chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			      "3\r\nabc\r\n10;x=y\r\n0123456789abcdef\r\n0\r\nT: 1\r\n\r\n";

	ck_assert_int_eq(reply(RT_FRAMING_HTTP1, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
			       false, &failed), 40);
	ck_assert(!failed);
	ck_assert_int_eq(reply(RT_FRAMING_HTTP1, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok",
			       false, &failed), 0);
	ck_assert_int_eq(reply(RT_FRAMING_HTTP1, chunked, false, &failed), (long)strlen(chunked));
	ck_assert_int_eq(reply(RT_FRAMING_HTTP1, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			       "3\r\nab", false, &failed), 0);
	ck_assert_int_eq(reply(RT_FRAMING_HTTP1, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			       "zz\r\n", false, &failed), -1);
	ck_assert_int_eq(reply(RT_FRAMING_HTTP1, "HTTP/1.0 200 OK\r\n\r\nbody", false, &failed), 0);
	ck_assert_int_eq(reply(RT_FRAMING_HTTP1, "HTTP/1.0 200 OK\r\n\r\nbody", true, &failed), 23);
	ck_assert_int_eq(reply(RT_FRAMING_HTTP1, "HTTP/1.1 204 No Content\r\n\r\n", false, &failed), 27);
	ck_assert_int_eq(reply(RT_FRAMING_HTTP1, "HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n",
			       false, &failed), 40);
	ck_assert(failed);
	ck_assert_int_eq(reply(RT_FRAMING_HTTP1, "HTTP/1.1 100 Continue\r\n\r\n", false, &failed), -1);
	ck_assert_int_eq(reply(RT_FRAMING_HTTP1, "HTTP/1.1 2x0 OK\r\n\r\n", false, &failed), -1);
	ck_assert_int_eq(reply(RT_FRAMING_HTTP1, "SMTP 220\r\n\r\n", false, &failed), -1);
	ck_assert_int_eq(reply(RT_FRAMING_HTTP1, "HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n",
			       false, &failed), -1);
	ck_assert_int_eq(reply(RT_FRAMING_HTTP1, "HTTP/1.1 200 OK\r\nno colon\r\n\r\n", false,
			       &failed), -1);
}
END_TEST

/* Every framing's request is the size asked for, where it can be. */
START_TEST(test_requests_have_the_drawn_size)
{
	static const struct { enum rt_framing f; uint64_t size; } cases[] = {
		{ RT_FRAMING_HTTP1, 300 }, { RT_FRAMING_HTTP1, 5000 }, { RT_FRAMING_RESP, 40 },
		{ RT_FRAMING_RESP, 100000 }, { RT_FRAMING_MEMCACHE_TEXT, 40 },
		{ RT_FRAMING_MEMCACHE_TEXT, 4000 }, { RT_FRAMING_MEMCACHE_BINARY, 60 },
		{ RT_FRAMING_MEMCACHE_BINARY, 4000 }, { RT_FRAMING_LENGTH_PREFIXED, 64 },
		{ RT_FRAMING_RAW, 10 },
	};
	const char *tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rt_buf b = { 0 };

		ck_assert_int_eq(rt_up_request(cases[i].f, cases[i].size,
					       cases[i].f == RT_FRAMING_HTTP1 ? tp : NULL, &b), 0);
		ck_assert_msg(b.len == cases[i].size, "framing %d: %zu bytes for %llu", cases[i].f,
			      b.len, (unsigned long long)cases[i].size);
		if (cases[i].f == RT_FRAMING_HTTP1)
			ck_assert_ptr_nonnull(strstr(b.data, tp));
		rt_buf_free(&b);
	}
}
END_TEST

/* HTTP requests too small for a POST's headers are a GET of the size
 * asked for, with and without trace context (a 35-byte request of nginx
 * to its upstream stays 35 bytes), and still one whole request. */
START_TEST(test_small_http_requests_have_the_drawn_size)
{
	const char *tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
	static const struct { uint64_t size; bool traced; } cases[] = {
		{ 31, false }, { 35, false }, { 90, false }, { 101, true }, { 140, true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rt_buf b = { 0 };

		ck_assert_int_eq(rt_up_request(RT_FRAMING_HTTP1, cases[i].size,
					       cases[i].traced ? tp : NULL, &b), 0);
		ck_assert_msg(b.len == cases[i].size, "%zu bytes for %llu", b.len,
			      (unsigned long long)cases[i].size);
		ck_assert_int_eq(memcmp(b.data, "GET / HTTP/1.1\r\nHost: ditto", 27), 0);
		ck_assert_int_eq(memcmp(b.data + b.len - 4, "\r\n\r\n", 4), 0);
		ck_assert_ptr_null(memmem(b.data, b.len - 2, "\r\n\r\n", 4));
		rt_buf_free(&b);
	}
}
END_TEST

/* Random and mutated bytes: no parser reads past what it was given or
 * claims more than it was given (ASan watches the reads). */
START_TEST(test_hostile_replies_stay_in_bounds)
{
	static const char *seeds[] = {
		"*3\r\n$1\r\na\r\n$2\r\nbb\r\n:1\r\n", "VALUE k 0 3\r\nabc\r\nEND\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
	};
	static const enum rt_framing fr[] = { RT_FRAMING_RESP, RT_FRAMING_MEMCACHE_TEXT,
					      RT_FRAMING_HTTP1, RT_FRAMING_HTTP1,
					      RT_FRAMING_MEMCACHE_BINARY, RT_FRAMING_LENGTH_PREFIXED };
	uint64_t x = 88172645463325252ull;

	for (int iter = 0; iter < 200000; iter++) {
		size_t k = (size_t)iter % 6, n;
		char *p;
		bool failed = false, eof;
		long r;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		n = k < 4 ? strlen(seeds[k]) : 24 + x % 16;
		p = malloc(n ? n : 1);
		ck_assert_ptr_nonnull(p);
		if (k < 4)
			memcpy(p, seeds[k], n);
		else
			for (size_t i = 0; i < n; i++)
				p[i] = (char)(x >> (i % 56));
		p[x % n] = (char)(x >> 8);	/* one byte changed */
		n = (size_t)(x >> 20) % (n + 1);	/* and cut short */
		eof = x & 1;
		r = rt_up_reply(fr[k], p, n, eof, &failed);
		ck_assert_msg(r >= -1 && r <= (long)n, "framing %d: %ld of %zu", fr[k], r, n);
		free(p);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rt_client");
	TCase *tc = tu_tcase("rt_client");

	tcase_add_test(tc, test_traceparent_valid_and_written_back);
	tcase_add_test(tc, test_traceparent_refused);
	tcase_add_test(tc, test_resp_replies);
	tcase_add_test(tc, test_memcache_replies);
	tcase_add_test(tc, test_http_replies);
	tcase_add_test(tc, test_requests_have_the_drawn_size);
	tcase_add_test(tc, test_small_http_requests_have_the_drawn_size);
	tcase_add_test(tc, test_hostile_replies_stay_in_bounds);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
