/* SPDX-License-Identifier: MIT */
/*
 * OTLP protobuf (an ExportTraceServiceRequest, the body of POST
 * /v1/traces) into a set of spans. Bounded: the caller refuses bodies over
 * its size limit before calling, and decoding itself may not allocate more
 * than OTLP_PROTO_MEM_FACTOR times the body (protobuf-c builds a tree of
 * structs many times larger than the bytes it came from).
 */
#ifndef DITTO_OTLP_PROTO_H
#define DITTO_OTLP_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "trace_span.h"

#define OTLP_PROTO_MEM_FACTOR 32
#define OTLP_PROTO_MEM_MIN (1u << 20)

struct otlp_decode_counts {
	uint64_t spans;		/* added to the set */
	uint64_t rejected;	/* refused: ids of the wrong length, bad kind, set full */
};

/*
 * Decodes buf and adds its spans to set. 0 (even when some spans were
 * rejected: they are counted), -EBADMSG when buf is not an
 * ExportTraceServiceRequest, -E2BIG when decoding needs more memory than
 * the bound above, -ENOMEM. err says what, for every non-zero return.
 */
int otlp_proto_parse_buffer(const uint8_t *buf, size_t len, struct trace_set *set,
			    struct otlp_decode_counts *counts, char *err, size_t errlen);

#endif
