/* SPDX-License-Identifier: MIT */
/* ditto_profile_import_traces(): files into a set, the set into a graph. */
#include <errno.h>
#include <string.h>

#include "core_int.h"
#include "trace_graph.h"
#include "trace_import.h"

static const char *const format_names[] = { "auto", "otlp-json", "jaeger-json", "zipkin-json" };

DITTO_API const char *ditto_trace_format_name(enum ditto_trace_format f)
{
	return (unsigned)f < ARRAY_SIZE(format_names) ? format_names[f] : "unknown";
}

DITTO_API int ditto_trace_format_parse(const char *name, enum ditto_trace_format *out)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(format_names); i++)
		if (strcmp(name, format_names[i]) == 0) {
			*out = (enum ditto_trace_format)i;
			return 0;
		}
	return ditto_err(-EINVAL, "'%s' is no trace format (auto, otlp-json, jaeger-json, "
			 "zipkin-json)", name ? name : "(null)");
}

DITTO_API int ditto_profile_import_traces(struct ditto_model *m, const char *const *paths,
					  size_t n, const struct ditto_trace_opts *opts)
{
	struct json_limits lim = { 0 };
	struct trace_graph_opts go = { .correct_sampling = true };
	struct ditto_model *scratch = NULL;
	struct trace_set set;
	int err;

	if ((err = OPTS_CHECK(opts, ditto_trace_opts)))
		return err;
	if (!m || (!paths && n))
		return ditto_err(-EINVAL, "import traces: no model or no paths");
	if (opts && (unsigned)opts->format > DITTO_TRACES_ZIPKIN_JSON)
		return ditto_err(-EINVAL, "import traces: unknown format %d", opts->format);
	trace_set_init(&set);
	if (opts) {
		lim.max_bytes = opts->max_file_bytes;
		if (opts->max_spans)
			set.max_spans = opts->max_spans;
		go.correct_sampling = !opts->uncorrected;
	}
	for (size_t i = 0; i < n && !err; i++)
		err = trace_import_file(&set, paths[i],
					opts ? (enum ditto_trace_format)opts->format : DITTO_TRACES_AUTO,
					&lim);
	/* A dry run on an empty model first: what can fail (a name no model
	 * may hold, memory) fails there, and m is changed only by a build
	 * that succeeded once. The model API has no way to swap contents. */
	if (!err && !(scratch = ditto_model_new()))
		err = ditto_err(-ENOMEM, "import traces: out of memory");
	if (!err)
		err = trace_graph_build(&set, scratch, &go);
	ditto_model_free(scratch);
	if (!err)
		err = trace_graph_build(&set, m, &go);
	trace_set_free(&set);
	return err;
}
