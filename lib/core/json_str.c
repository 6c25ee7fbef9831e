/* SPDX-License-Identifier: MIT */
/*
 * The library's one JSON string writer: model exports and the graph
 * tree's manifests (graph.json, up.json) all quote strings through it.
 */
#include <stdint.h>

#include "core_int.h"

/* Length of a valid UTF-8 sequence at p, or 0. */
static size_t utf8_len(const unsigned char *p, size_t left)
{
	size_t n;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0)
		n = 2, cp = p[0] & 0x1f;
	else if ((p[0] & 0xf0) == 0xe0)
		n = 3, cp = p[0] & 0x0f;
	else if ((p[0] & 0xf8) == 0xf0)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (n > left)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	/* Reject overlong forms, surrogates and values past U+10FFFF. */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

void dbuf_put_json_str(struct dbuf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	dbuf_putc(out, '"');
	for (size_t i = 0; i < len;) {
		unsigned char c = p[i];
		size_t n;

		if (c == '"' || c == '\\') {
			dbuf_putc(out, '\\');
			dbuf_putc(out, (char)c);
			i++;
		} else if (c < 0x20) {
			dbuf_printf(out, "\\u%04x", c);
			i++;
		} else if ((n = utf8_len(p + i, len - i))) {
			dbuf_put(out, p + i, n);
			i += n;
		} else {
			dbuf_puts(out, "\\ufffd"); /* not UTF-8: JSON cannot carry it */
			i++;
		}
	}
	dbuf_putc(out, '"');
}
