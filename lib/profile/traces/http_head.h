/* SPDX-License-Identifier: MIT */
/*
 * The head of one HTTP/1.x request (request line and header fields), as
 * the OTLP/HTTP receiver needs it: bounded, from bytes a hostile client
 * chose. Only what the receiver acts on is kept.
 */
#ifndef DITTO_HTTP_HEAD_H
#define DITTO_HTTP_HEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum http_ctype { HTTP_CT_NONE, HTTP_CT_PROTOBUF, HTTP_CT_JSON, HTTP_CT_OTHER };

struct http_head {
	char method[16];	/* as sent; longer ones are refused (400) */
	char path[128];		/* without the query; a longer one reads as truncated_path */
	bool truncated_path;
	bool http10;		/* HTTP/1.0: no keep-alive unless asked */
	bool keep_alive;	/* after Connection: close / keep-alive and the version */
	bool chunked;		/* Transfer-Encoding: chunked */
	bool other_te;		/* any other transfer coding */
	bool gzip;		/* Content-Encoding: gzip */
	bool other_ce;		/* any other content coding (not identity) */
	bool expect_continue;	/* Expect: 100-continue */
	int64_t content_length;	/* -1: absent */
	enum http_ctype ctype;
	size_t head_len;	/* bytes of the head, its blank line included */
};

/*
 * Parse the head at the start of buf[0..len): 1 when complete (h filled),
 * 0 when more bytes are needed, -EBADMSG when it is malformed (a bare LF
 * is accepted as a line end; NUL, obsolete line folding, a bad or
 * conflicting Content-Length, a bad request line are not).
 */
int http_head_parse(const char *buf, size_t len, struct http_head *h);

#endif
