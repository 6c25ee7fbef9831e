/* SPDX-License-Identifier: MIT */
/* Chunked transfer coding, in place and incremental (see http_chunked.h). */
#include <errno.h>
#include <string.h>

#include "http_chunked.h"

enum { CK_SIZE, CK_DATA, CK_DATA_CR, CK_DATA_LF, CK_TRAILER, CK_DONE };

void http_chunked_init(struct http_chunked *c)
{
	memset(c, 0, sizeof(*c));
	c->state = CK_SIZE;
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* One byte of a chunk-size line: 1 at its end, 0 to go on, or an error. */
static int size_byte(struct http_chunked *c, char ch, uint64_t room)
{
	if (++c->line > HTTP_CHUNK_LINE_MAX)
		return -EBADMSG;
	if (ch == '\n') {
		if (!c->digits)
			return -EBADMSG;
		return 1;
	}
	if (c->ext || ch == '\r')
		return 0;	/* extensions are ignored; CR before LF */
	if (ch == ';' || ch == ' ' || ch == '\t') {
		if (!c->digits)
			return -EBADMSG;
		c->ext = 1;
		return 0;
	}
	if (hexval(ch) < 0)
		return -EBADMSG;
	if (c->size > (room >> 4))	/* larger than what is left: no overflow either */
		return -E2BIG;
	c->size = c->size << 4 | (uint64_t)hexval(ch);
	c->digits++;
	return 0;
}

int http_chunked_decode(struct http_chunked *c, char *buf, size_t body0, size_t *out,
			size_t *len, size_t max_body)
{
	size_t r = *out, w = *out, end = *len;
	int rc = 0;

	while (r < end && c->state != CK_DONE && rc >= 0) {
		char ch = buf[r];

		switch (c->state) {
		case CK_SIZE:
			r++;
			rc = size_byte(c, ch, max_body - (w - body0));
			if (rc == 1) {
				if (c->size > max_body - (w - body0)) {
					rc = -E2BIG;
					break;
				}
				rc = 0;
				c->left = c->size;
				c->state = c->size ? CK_DATA : CK_TRAILER;
				c->size = 0;
				c->digits = 0;
				c->line = 0;
				c->ext = 0;
			}
			break;
		case CK_DATA: {
			size_t n = end - r < c->left ? end - r : (size_t)c->left;

			memmove(buf + w, buf + r, n);
			w += n;
			r += n;
			c->left -= n;
			if (!c->left)
				c->state = CK_DATA_CR;
			break;
		}
		case CK_DATA_CR:	/* the CRLF after a chunk's data (a bare LF too) */
			r++;
			if (ch == '\r')
				c->state = CK_DATA_LF;
			else if (ch == '\n')
				c->state = CK_SIZE;
			else
				rc = -EBADMSG;
			break;
		case CK_DATA_LF:
			r++;
			if (ch != '\n')
				rc = -EBADMSG;
			c->state = CK_SIZE;
			break;
		case CK_TRAILER:	/* fields until an empty line; ignored */
			r++;
			if (++c->trailer > HTTP_TRAILER_MAX)
				rc = -EBADMSG;
			else if (ch == '\n') {
				if (c->line == 0)
					c->state = CK_DONE;
				c->line = 0;
			} else if (ch != '\r') {
				c->line++;
			}
			break;
		}
	}
	/* What is left of the raw bytes moves down behind the data. */
	memmove(buf + w, buf + r, end - r);
	*out = w;
	*len = w + (end - r);
	if (rc < 0)
		return rc;
	return c->state == CK_DONE;
}
