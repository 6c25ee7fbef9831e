/* SPDX-License-Identifier: MIT */
/* What every importer shares: ids, times and adding a span. */
#include <errno.h>

#include "core_int.h"
#include "trace_json.h"

int trace_json_trace_id(struct json_ctx *c, json_t *obj, const char *key, uint8_t out[16])
{
	const char *s;
	int err = json_get_str(c, obj, key, true, &s);

	if (err)
		return err;
	if (trace_parse_trace_id(s, out))
		return json_fail(c, -DITTO_ECORRUPT, key,
				 "not a hex trace id of up to 32 digits (base64 ids are the "
				 "protobuf JSON mapping, which trace exports do not use)");
	return 0;
}

int trace_json_span_id(struct json_ctx *c, json_t *obj, const char *key, bool required,
		       uint64_t *out)
{
	const char *s;
	int err = json_get_str(c, obj, key, required, &s);

	*out = 0;
	if (err || !s || (!required && !*s))
		return err;
	if (trace_parse_span_id(s, out))
		return json_fail(c, -DITTO_ECORRUPT, key,
				 "not a hex span id of up to 16 digits (base64 ids are the "
				 "protobuf JSON mapping, which trace exports do not use)");
	return 0;
}

int trace_us_to_ns(struct json_ctx *c, const char *key, uint64_t us, uint64_t *ns)
{
	if (us > UINT64_MAX / 1000)
		return json_fail(c, -DITTO_ECORRUPT, key, "microseconds out of range");
	*ns = us * 1000;
	return 0;
}

int trace_add(struct trace_set *set, struct json_ctx *c, const struct trace_span *sp)
{
	int err = trace_set_add(set, sp);

	if (err == -EINVAL)	/* counted in set->rejected: not the file's fault alone */
		return 0;
	if (err == -ENOSPC)
		return json_fail(c, -DITTO_ELIMIT, NULL, "more than %zu spans", set->max_spans);
	if (err)
		return json_fail(c, err, NULL, "out of memory");
	return 0;
}
