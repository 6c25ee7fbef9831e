/* SPDX-License-Identifier: MIT */
/*
 * The YAML the deployment files are written in: block mappings for
 * structure, and every string a double-quoted scalar, so that no value
 * (a name, an address, a namespace) can be read as YAML syntax, a
 * number, a boolean or a null. Only printable ASCII reaches the file: a
 * double-quoted "\xNN" is a code point, not a byte, so other bytes could
 * not be kept as they are, and nothing a generator writes needs them.
 */
#include <string.h>

#include "deploy_int.h"

int yaml_str(struct dbuf *b, const char *what, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p >= 0x7f)
			return ditto_err(-DITTO_EINVALID,
					 "deploy: %s holds byte 0x%02x (only printable ASCII is written)",
					 what, *p);
	dbuf_putc(b, '"');
	for (const char *p = s; *p; p++) {
		if (*p == '"' || *p == '\\')
			dbuf_putc(b, '\\');
		dbuf_putc(b, *p);
	}
	dbuf_putc(b, '"');
	return 0;
}

void yaml_key(struct dbuf *b, unsigned depth, const char *key)
{
	for (unsigned i = 0; i < depth; i++)
		dbuf_puts(b, "  ");
	dbuf_puts(b, key);
	dbuf_puts(b, ":");
}
