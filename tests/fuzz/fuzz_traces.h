/* Shared by the trace importers' fuzz targets: any bytes in one format
 * give spans or a clean error naming the file; the spans of an accepted
 * input always make a graph, and the model holding it is valid. */
#ifndef DITTO_FUZZ_TRACES_H
#define DITTO_FUZZ_TRACES_H

#include <ditto/ditto.h>
#include <ditto/profile.h>

#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "trace_graph.h"
#include "trace_import.h"

#define FUZZ_TRACES_NAME "traces.json"

static inline void fuzz_traces_one(const uint8_t *data, size_t size, enum ditto_trace_format fmt)
{
	struct json_limits lim = { .max_bytes = 1 << 20 };
	struct trace_graph_opts go = { .correct_sampling = true };
	struct trace_set set;
	struct ditto_model *m;
	int err;

	trace_set_init(&set);
	set.max_spans = 4096;
	err = trace_import_buf(&set, (const char *)data, size, FUZZ_TRACES_NAME, fmt, &lim);
	if (err) {
		FUZZ_ASSERT(err == -DITTO_ECORRUPT || err == -DITTO_ELIMIT || err == -ENOMEM);
		FUZZ_ASSERT(strncmp(ditto_last_error(), FUZZ_TRACES_NAME ":",
				    strlen(FUZZ_TRACES_NAME) + 1) == 0);
		trace_set_free(&set);
		return;
	}
	m = ditto_model_new();
	FUZZ_ASSERT(m != NULL);
	err = trace_graph_build(&set, m, &go);
	/* A service name no model may hold (invalid UTF-8) is refused, by
	 * name; anything else accepted must make a valid model. */
	FUZZ_ASSERT(err == 0 || err == -EINVAL || err == -DITTO_EINVALID);
	if (err == 0)
		FUZZ_ASSERT(ditto_model_validate(m, NULL) == 0);
	ditto_model_free(m);
	trace_set_free(&set);
}

#endif
