/* SPDX-License-Identifier: MIT */
/*
 * Graph edges from a set of spans: the one derivation every trace source
 * (files of any format, the OTLP/HTTP receiver) goes through.
 */
#ifndef DITTO_TRACE_GRAPH_H
#define DITTO_TRACE_GRAPH_H

#include <stdbool.h>

#include "ditto/model.h"
#include "trace_span.h"

struct trace_graph_opts {
	/* Scale call counts by 1 / the declared sampling ratio (when one is
	 * declared); false leaves them as sampled and says so in
	 * graph.traces.corrected. */
	bool correct_sampling;
};

/* Adds the set's nodes, externals and edges (source "traces") to m's
 * graph, and its counts to graph.traces. The set is sorted in place. */
int trace_graph_build(struct trace_set *set, struct ditto_model *m,
		      const struct trace_graph_opts *opts);

#endif
