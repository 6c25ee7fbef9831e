/* SPDX-License-Identifier: MIT */
/*
 * The W3C traceparent header (version 00) read and written: a value from
 * the network is checked whole (length, dashes, lowercase hex, ids not
 * all zero) before anything of it is used.
 */
#include "rt_int.h"

#include <string.h>

static int hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')	/* the spec allows lowercase only */
		return c - 'a' + 10;
	return -1;
}

/* n hex digits at p into out[n / 2]; -1 on any other character. */
static int hex_bytes(const char *p, size_t n, uint8_t *out)
{
	for (size_t i = 0; i < n; i += 2) {
		int hi = hex_val(p[i]), lo = hex_val(p[i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

int rt_traceparent_parse(const char *v, size_t n, struct rt_trace *out)
{
	uint8_t version, flags;
	struct rt_trace tc;

	if (!v)
		return -1;
	/* surrounding blanks are the header's (OWS), not the value's */
	while (n && (*v == ' ' || *v == '\t')) {
		v++;
		n--;
	}
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	if (n != RT_TRACEPARENT_LEN || v[2] != '-' || v[35] != '-' || v[52] != '-')
		return -1;
	if (hex_bytes(v, 2, &version) || version != 0 || hex_bytes(v + 3, 32, tc.trace_id) ||
	    hex_bytes(v + 36, 16, tc.parent_id) || hex_bytes(v + 53, 2, &flags))
		return -1;
	if (all_zero(tc.trace_id, 16) || all_zero(tc.parent_id, 8))
		return -1;
	memcpy(out->trace_id, tc.trace_id, 16);
	memcpy(out->parent_id, tc.parent_id, 8);
	out->flags = flags;
	out->remote = true;
	return 0;
}

static char *put_hex(char *o, const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		*o++ = digits[p[i] >> 4];
		*o++ = digits[p[i] & 15];
	}
	return o;
}

void rt_traceparent_format(char out[RT_TRACEPARENT_LEN + 1], const uint8_t trace_id[16],
			   const uint8_t span_id[8], uint8_t flags)
{
	char *o = out;

	*o++ = '0';
	*o++ = '0';
	*o++ = '-';
	o = put_hex(o, trace_id, 16);
	*o++ = '-';
	o = put_hex(o, span_id, 8);
	*o++ = '-';
	o = put_hex(o, &flags, 1);
	*o = '\0';
}

