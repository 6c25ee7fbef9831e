/* SPDX-License-Identifier: MIT */
/* One OTLP/HTTP JSON body through the file importers' OTLP JSON parser:
 * the receiver and `ditto graph import` read JSON alike. */
#include <stdio.h>

#include "otlp_json.h"
#include "trace_import.h"

int otlp_json_parse_buffer(const char *buf, size_t len, struct trace_set *set, char *err,
			   size_t errlen)
{
	int rc = trace_import_buf(set, buf, len, "OTLP/HTTP JSON body", DITTO_TRACES_OTLP_JSON,
				  NULL);

	if (rc && err && errlen)
		snprintf(err, errlen, "%s", ditto_last_error());
	return rc;
}
