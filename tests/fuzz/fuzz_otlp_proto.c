/* Fuzz the OTLP receiver's body decoding: any bytes (gzip'd when they
 * start with gzip's magic, as a Content-Encoding: gzip body) give spans
 * or a clean -EBADMSG / -E2BIG with a message; every span kept is one the
 * set accepts, and the counts match the set. */
#include <ditto/ditto.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "otlp_gzip.h"
#include "otlp_proto.h"

#define MAX_INFLATED (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct otlp_decode_counts c;
	struct trace_set set;
	uint8_t *inflated = NULL;
	char err[256] = "";
	int rc;

	if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
		size_t n;

		rc = otlp_gunzip(data, size, MAX_INFLATED, &inflated, &n);
		FUZZ_ASSERT(rc == 0 || rc == -EBADMSG || rc == -E2BIG);
		if (rc)
			return 0;
		FUZZ_ASSERT(n <= MAX_INFLATED);
		data = inflated;
		size = n;
	}
	trace_set_init(&set);
	set.max_spans = 64;	/* the full-set path too */
	rc = otlp_proto_parse_buffer(data, size, &set, &c, err, sizeof(err));
	FUZZ_ASSERT(rc == 0 || rc == -EBADMSG || rc == -E2BIG);
	FUZZ_ASSERT(rc == 0 || err[0]);
	if (rc == 0) {
		FUZZ_ASSERT(c.spans == set.n && set.n <= 64);
		FUZZ_ASSERT(set.files == 1);
		for (size_t i = 0; i < set.n; i++) {
			const struct trace_span *sp = &set.spans[i];

			FUZZ_ASSERT(sp->span_id != 0 && sp->end_ns >= sp->start_ns);
			FUZZ_ASSERT(sp->kind <= SPAN_CONSUMER);
			FUZZ_ASSERT(!sp->service || strlen(sp->service) <= TRACE_MAX_STR);
		}
	} else {
		FUZZ_ASSERT(set.n == 0);
	}
	trace_set_free(&set);
	free(inflated);
	return 0;
}
