/* SPDX-License-Identifier: MIT */
/*
 * The only way a string from a model reaches a generated file: as one
 * escaped C string literal. Whatever the name holds ("*\/", "#", "%n",
 * "??/", newlines), the compiler sees data, never code.
 */
#include <errno.h>
#include <string.h>

#include "core_int.h"
#include "synth_int.h"

/*
 * Escapes every byte a literal could misread: quote and backslash; '?'
 * always, so no trigraph ("??/" is a backslash under -trigraphs) can
 * form; tab and newline by name; every other byte outside printable
 * ASCII as three octal digits, so that a following digit is never taken
 * into the escape (as it would be after a short octal or any \x escape).
 * A name that breaks the model's name rule is refused, not repaired or
 * cut: validation should have stopped it, and a clone of a different
 * name would be a silent lie.
 */
int c_literal(struct dbuf *out, const char *s)
{
	const char *why = name_problem(s, s ? strlen(s) : 0);

	if (why)
		return ditto_err(-DITTO_EINVALID, "synth: a name in the model %s: run "
				 "`ditto model validate` on it", why);
	dbuf_putc(out, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\' || *p == '?') {
			dbuf_putc(out, '\\');
			dbuf_putc(out, (char)*p);
		} else if (*p == '\n') {
			dbuf_puts(out, "\\n");
		} else if (*p == '\t') {
			dbuf_puts(out, "\\t");
		} else if (*p < 0x20 || *p >= 0x7f) {
			dbuf_putc(out, '\\');
			dbuf_putc(out, (char)('0' + (*p >> 6)));
			dbuf_putc(out, (char)('0' + ((*p >> 3) & 7)));
			dbuf_putc(out, (char)('0' + (*p & 7)));
		} else {
			dbuf_putc(out, (char)*p);
		}
	}
	dbuf_putc(out, '"');
	return out->oom ? ditto_err(-ENOMEM, "synth: out of memory") : 0;
}
