/* SPDX-License-Identifier: MIT */
/* Bounded gzip inflation of request bodies (see otlp_gzip.h). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <zlib.h>

#include "otlp_gzip.h"

int otlp_gunzip(const uint8_t *in, size_t len, size_t max_out, uint8_t **out, size_t *outlen)
{
	z_stream z = { 0 };
	size_t cap = len * 4 < 4096 ? 4096 : len * 4;
	uint8_t *buf;
	int zr, rc = 0;

	*out = NULL;
	*outlen = 0;
	if (len > UINT_MAX || max_out > SIZE_MAX - 1)
		return -E2BIG;
	if (cap > max_out + 1)
		cap = max_out + 1;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	/* 16 + MAX_WBITS: a gzip header and trailer, nothing else. */
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
		free(buf);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	for (;;) {
		if (z.total_out == cap) {
			/* One byte past max_out is the proof it is too big. */
			size_t ncap = cap * 2 > max_out + 1 ? max_out + 1 : cap * 2;
			uint8_t *p;

			if (ncap == cap) {
				rc = -E2BIG;
				break;
			}
			p = realloc(buf, ncap);
			if (!p) {
				rc = -ENOMEM;
				break;
			}
			buf = p;
			cap = ncap;
		}
		z.next_out = buf + z.total_out;
		z.avail_out = (uInt)(cap - z.total_out);
		zr = inflate(&z, Z_NO_FLUSH);
		if (zr == Z_STREAM_END) {
			/* Bytes after the stream (a second member, junk) are
			 * refused rather than silently dropped. */
			if (z.avail_in)
				rc = -EBADMSG;
			else if (z.total_out > max_out)
				rc = -E2BIG;
			break;
		}
		if (zr == Z_MEM_ERROR) {
			rc = -ENOMEM;
			break;
		}
		if (zr != Z_OK && !(zr == Z_BUF_ERROR && z.avail_out == 0)) {
			rc = -EBADMSG;	/* corrupt, or truncated (Z_BUF_ERROR with room) */
			break;
		}
		if (zr == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
			rc = -EBADMSG;	/* input ended inside the stream */
			break;
		}
	}
	if (rc) {
		free(buf);
	} else {
		*out = buf;
		*outlen = z.total_out;
	}
	inflateEnd(&z);
	return rc;
}
