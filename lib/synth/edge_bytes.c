/* SPDX-License-Identifier: MIT */
/*
 * The exact bytes per call of a graph edge. An edge's size histograms
 * are log2: drawn from alone, a 143-byte request lands anywhere in
 * [128, 255] and its clone sends 35% more. The caller's outbound entry
 * for the child's endpoint holds the totals the profiler counted; the
 * clone's draws are pinned to that mean (synth_mean_point()).
 */
#include <string.h>

#include "synth_int.h"

#include <ditto/model.h>

/* Whether the child `to` listens on port (a service's ports, an
 * external's port). */
static bool child_port(const struct ditto_model *m, const char *to, uint16_t port)
{
	const struct ditto_service *c = ditto_model_find_service(m, to);
	const struct ditto_external *x;

	if (c) {
		for (size_t i = 0; i < ditto_service_port_count(c); i++)
			if (ditto_service_port(c, i) == port)
				return true;
		return false;
	}
	x = ditto_graph_find_external(ditto_model_graph(m), to);
	return x && ditto_external_port(x) == port;
}

const struct ditto_outbound *edge_outbound(const struct ditto_model *m, const char *from,
					   const char *to)
{
	const struct ditto_service *s = m ? ditto_model_find_service(m, from) : NULL;

	for (size_t i = 0; s && i < ditto_service_outbound_count(s); i++) {
		const struct ditto_outbound *o = ditto_service_outbound(s, i);

		if (child_port(m, to, ditto_outbound_port(o)))
			return o;
	}
	return NULL;
}

/* Over the responses the histogram holds when it holds any: the last
 * call of a connection may be answered after the window. */
static double mean_of(uint64_t total, const struct ditto_hist *h, uint64_t calls)
{
	uint64_t n = ditto_hist_total(h) ? ditto_hist_total(h) : calls;

	return total && n ? (double)total / (double)n : 0;
}

double edge_request_mean(const struct ditto_model *m, const char *from, const char *to)
{
	const struct ditto_outbound *o = edge_outbound(m, from, to);

	return o ? mean_of(ditto_outbound_request_bytes_total(o), ditto_outbound_request_bytes(o),
			   ditto_outbound_calls(o)) : 0;
}

double edge_response_mean(const struct ditto_model *m, const char *from, const char *to)
{
	const struct ditto_outbound *o = edge_outbound(m, from, to);

	return o ? mean_of(ditto_outbound_response_bytes_total(o), ditto_outbound_response_bytes(o),
			   ditto_outbound_calls(o)) : 0;
}

double synth_mean_point(const struct ditto_hist *h, double mean)
{
	double base = 0, span = 0, at;

	for (size_t i = 0; h && i < ditto_hist_bucket_count(h); i++) {
		uint64_t lo, hi, c;

		ditto_hist_bucket(h, i, &lo, &hi, &c);
		base += (double)lo * (double)c;
		span += (double)(hi - lo) * (double)c;
	}
	at = span > 0 ? (mean * (double)ditto_hist_total(h) - base) / span : 0;
	return at < 0 ? 0 : at > 1 ? 1 : at;
}
