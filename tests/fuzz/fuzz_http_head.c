/* Fuzz the OTLP receiver's HTTP request heads: any bytes are a complete
 * head inside the buffer, "need more" (and then no prefix of them is
 * complete either), or malformed; never a read past the end. */
#include <ditto/ditto.h>

#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "http_head.h"

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
	if (rc == 0 && size)
		FUZZ_ASSERT(http_head_parse((const char *)data, size - 1, &h) == 0);
	return 0;
}
