/* SPDX-License-Identifier: MIT */
/*
 * Chunked transfer coding (HTTP/1.1), decoded in place and as bytes
 * arrive: the OpenTelemetry JavaScript exporter pipes its body into the
 * request, so Node sends it chunked, with no Content-Length.
 */
#ifndef DITTO_HTTP_CHUNKED_H
#define DITTO_HTTP_CHUNKED_H

#include <stddef.h>
#include <stdint.h>

/* A chunk-size line or a trailer field is at most this long. */
#define HTTP_CHUNK_LINE_MAX 1024
/* All trailer fields together. */
#define HTTP_TRAILER_MAX (16u << 10)

struct http_chunked {
	int state;
	uint64_t left;		/* data bytes of the current chunk still to come */
	size_t line;		/* bytes of the current size or trailer line */
	size_t trailer;		/* bytes of trailer fields so far */
	uint64_t size;		/* the size being read */
	int digits;
	_Bool ext;		/* inside a chunk extension (";name=value") */
};

void http_chunked_init(struct http_chunked *c);

/*
 * buf[*out .. len) holds raw chunked bytes not yet decoded (what came
 * before *out is decoded body). Decodes them in place: the data moves
 * down to *out, which grows. *len becomes *out plus the raw bytes left
 * over. Returns 1 when the body ended (bytes left over belong to the next
 * request), 0 when more are needed, -E2BIG when the body would pass
 * max_body bytes (counted from body0, where it started), -EBADMSG when
 * the coding is malformed.
 */
int http_chunked_decode(struct http_chunked *c, char *buf, size_t body0, size_t *out,
			size_t *len, size_t max_body);

#endif
