/* Fuzz the clone runtime's reply parsers (its client side): the first
 * byte picks the framing and whether the connection ended, the rest is
 * what a child sent. A parser never claims more bytes than it was given,
 * and a reply it takes whole is taken whole again from the same bytes
 * followed by more (a reply's end does not depend on what follows). */
#include "../../lib/runtime/rt_int.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

static const char *ditto_last_error(void)
{
	return "";
}

static const enum rt_framing framings[] = {
	RT_FRAMING_HTTP1, RT_FRAMING_RESP, RT_FRAMING_MEMCACHE_TEXT,
	RT_FRAMING_MEMCACHE_BINARY, RT_FRAMING_LENGTH_PREFIXED, RT_FRAMING_RAW,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum rt_framing f;
	bool eof, failed = false, again = false;
	const char *p = (const char *)data + 1;
	size_t n = size ? size - 1 : 0;
	char *more;
	long r;

	if (!size)
		return 0;
	f = framings[(data[0] & 0x7f) % (sizeof(framings) / sizeof(framings[0]))];
	eof = data[0] & 0x80;
	r = rt_up_reply(f, p, n, eof, &failed);
	FUZZ_ASSERT(r >= -1 && r <= (long)n);
	if (r <= 0 || eof || f == RT_FRAMING_RAW)
		return 0;
	more = malloc(n + 16);
	FUZZ_ASSERT(more);
	memcpy(more, p, n);
	memset(more + n, 'x', 16);
	FUZZ_ASSERT(rt_up_reply(f, more, n + 16, false, &again) == r);
	FUZZ_ASSERT(again == failed);
	free(more);
	return 0;
}
