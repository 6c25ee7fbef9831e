/* Fuzz the OTLP receiver's HTTP request heads: any bytes are a complete
 * head inside the buffer, "need more" (and then no prefix of them is
 * complete either), or malformed; never a read past the end. What follows
 * a chunked head goes through the chunked decoder twice, all at once and
 * byte by byte as a slow client sends it: the same body and verdict. */
#include <ditto/ditto.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "http_chunked.h"
#include "http_head.h"

#define MAX_BODY 4096

/* Decode raw[0..n) arriving `step` bytes at a time: the verdict, the
 * body in *body (malloc'd) of *blen bytes. */
static int decode(const uint8_t *raw, size_t n, size_t step, char **body, size_t *blen)
{
	struct http_chunked c;
	char *buf = malloc(n + 1);
	size_t out = 0, len = 0, fed = 0;
	int rc = 0;

	FUZZ_ASSERT(buf);
	http_chunked_init(&c);
	while (rc == 0 && fed < n) {
		size_t k = n - fed < step ? n - fed : step;

		memcpy(buf + len, raw + fed, k);
		len += k;
		fed += k;
		rc = http_chunked_decode(&c, buf, 0, &out, &len, MAX_BODY);
		FUZZ_ASSERT(out <= len && out <= MAX_BODY);
	}
	*body = buf;
	*blen = out;
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_head h;
	int rc = http_head_parse((const char *)data, size, &h);

	FUZZ_ASSERT(rc == 1 || rc == 0 || rc == -EBADMSG);
	if (rc == 1) {
		FUZZ_ASSERT(h.head_len >= 4 && h.head_len <= size);
		FUZZ_ASSERT(memchr(h.method, '\0', sizeof(h.method)) != NULL);
		FUZZ_ASSERT(memchr(h.path, '\0', sizeof(h.path)) != NULL);
		FUZZ_ASSERT(h.content_length >= -1);
		/* The same head followed by anything parses the same. */
		struct http_head again;
		FUZZ_ASSERT(http_head_parse((const char *)data, h.head_len, &again) == 1);
		FUZZ_ASSERT(memcmp(&h, &again, sizeof(h)) == 0);
	}
	if (rc == 1 && h.chunked) {
		char *a, *b;
		size_t alen, blen;
		int ra = decode(data + h.head_len, size - h.head_len, size, &a, &alen);
		int rb = decode(data + h.head_len, size - h.head_len, 1, &b, &blen);

		FUZZ_ASSERT(ra == 0 || ra == 1 || ra == -EBADMSG || ra == -E2BIG);
		FUZZ_ASSERT(ra == rb);
		if (ra >= 0)
			FUZZ_ASSERT(alen == blen && memcmp(a, b, alen) == 0);
		free(a);
		free(b);
	}
	if (rc == 0 && size)
		FUZZ_ASSERT(http_head_parse((const char *)data, size - 1, &h) == 0);
	return 0;
}
