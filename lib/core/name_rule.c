/* SPDX-License-Identifier: MIT */
/*
 * The one rule for names in a model (services, thread classes, syscalls,
 * graph nodes; see DITTO_NAME_MAX in model.h). Validation enforces it on
 * load and the synthesizer checks it again before a name reaches a
 * generated file, so the two can never disagree.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "core_int.h"

#include <ditto/model.h>

/* Length of the UTF-8 sequence at s (at most n bytes), or 0 when it is
 * malformed: overlong, a surrogate, past U+10FFFF or truncated. */
static size_t utf8_len(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
	uint32_t min = len == 4 ? 0x10000 : len == 3 ? 0x800 : 0x80;

	if (s[0] < 0xc2 || s[0] > 0xf4 || len > n)
		return 0;
	*cp = s[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = *cp << 6 | (s[i] & 0x3f);
	}
	if (*cp < min || *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff))
		return 0;
	return len;
}

/*
 * NULL when the len bytes at s are text a model may hold, else why not. Tab and newline
 * are allowed (names are data and are always escaped where they are
 * written); other control characters are not, since a name also lands in
 * logs and terminals, where ESC sequences would act.
 */
const char *text_problem(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		uint32_t cp = p[i];
		size_t n = 1;

		if (p[i] >= 0x80 && !(n = utf8_len(p + i, len - i, &cp)))
			return "is not valid UTF-8";
		if (cp == 0)
			return "holds a NUL byte";
		if ((cp < 0x20 && cp != '\t' && cp != '\n') || (cp >= 0x7f && cp < 0xa0))
			return "holds a control character (only tab and newline are allowed)";
		i += n;
	}
	return NULL;
}

const char *name_problem(const char *s, size_t len)
{
	if (!s || len == 0)
		return "is empty";
	if (len > DITTO_NAME_MAX)
		return "is longer than 255 bytes";
	return text_problem(s, len);
}

/*
 * Messages quote model strings (an unknown enum value, a repeated name, a
 * dangling reference, a thread class) that may break the name rule:
 * control bytes (C0, DEL, C1) are shown as \xNN so that a message is one
 * line and a terminal never acts on what a model holds. Only the message
 * changes.
 */
void text_show_safely(char *msg, size_t size)
{
	char out[512];
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)msg; *p && o + 9 < sizeof(out); p++) {
		bool c1 = p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f;

		if (c1) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "\\x%02x\\x%02x", p[0],
					      p[1]);
			p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "\\x%02x", p[0]);
		} else {
			out[o++] = (char)*p;
		}
	}
	out[o] = '\0';
	snprintf(msg, size, "%s", out);
}
