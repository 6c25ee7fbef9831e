/* SPDX-License-Identifier: MIT */
/*
 * The clone's children: rt_config.upstreams from the service's edges in
 * the model's graph (one per child node; the kernel's edge when there is
 * one, else the traces'), with the child's framing (its service's, or
 * the external's), the fan-out, request and response size histograms,
 * order and mode. Names reach the file only as escaped literals.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "core_int.h"
#include "synth_int.h"

#include <ditto/model.h>

#define ENV_PREFIX "DITTO_UPSTREAM_"
#define FANOUT_MAX 4096	/* calls per edge and request (the runtime's cap too) */

/* The edge from s to `to` to clone: the kernel's, else the traces'. */
static const struct ditto_edge *edge_to(const struct ditto_graph *g, const char *from,
					const char *to)
{
	const struct ditto_edge *e = ditto_graph_find_source_edge(g, DITTO_EDGE_KERNEL, from, to);

	return e ? e : ditto_graph_find_source_edge(g, DITTO_EDGE_TRACES, from, to);
}

/* Whether edge i is the first of its (from, to) among s's edges: each
 * child gets one entry whichever sources saw it. */
static bool first_to(const struct ditto_graph *g, size_t i, const char *from)
{
	const struct ditto_edge *e = ditto_graph_edge(g, i);

	if (strcmp(ditto_edge_from(e), from))
		return false;
	for (size_t j = 0; j < i; j++) {
		const struct ditto_edge *o = ditto_graph_edge(g, j);

		if (!strcmp(ditto_edge_from(o), from) && !strcmp(ditto_edge_to(o), ditto_edge_to(e)))
			return false;
	}
	return true;
}

static enum ditto_framing upstream_framing(const struct ditto_model *m, const char *child)
{
	const struct ditto_service *c = ditto_model_find_service(m, child);
	const struct ditto_external *x;

	if (c)
		return ditto_service_framing(c);
	x = ditto_graph_find_external(ditto_model_graph(m), child);
	return x ? ditto_external_framing(x) : DITTO_FRAMING_UNKNOWN;
}

static bool spoken(enum ditto_framing f)
{
	return f == DITTO_FRAMING_HTTP1 || f == DITTO_FRAMING_RESP ||
	       f == DITTO_FRAMING_MEMCACHE_TEXT || f == DITTO_FRAMING_MEMCACHE_BINARY ||
	       f == DITTO_FRAMING_LENGTH_PREFIXED || f == DITTO_FRAMING_RAW;
}

static const char *rt_framing_of(enum ditto_framing f)
{
	switch (f) {
	case DITTO_FRAMING_HTTP1: return "RT_FRAMING_HTTP1";
	case DITTO_FRAMING_RESP: return "RT_FRAMING_RESP";
	case DITTO_FRAMING_MEMCACHE_TEXT: return "RT_FRAMING_MEMCACHE_TEXT";
	case DITTO_FRAMING_MEMCACHE_BINARY: return "RT_FRAMING_MEMCACHE_BINARY";
	case DITTO_FRAMING_LENGTH_PREFIXED: return "RT_FRAMING_LENGTH_PREFIXED";
	default: return "RT_FRAMING_RAW";
	}
}

void upstream_env_name(const char *child, struct dbuf *b)
{
	dbuf_puts(b, ENV_PREFIX);
	for (const char *p = child; *p; p++) {
		char c = *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p;

		dbuf_putc(b, (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c : '_');
	}
}

double upstream_calls_per_request(const struct ditto_edge *e)
{
	const struct ditto_hist *f = ditto_edge_fanout(e);
	uint64_t parents = ditto_edge_parent_requests(e);

	if (ditto_hist_total(f))
		return ditto_hist_mean(f);
	return parents ? (double)ditto_edge_calls(e) / (double)parents : 0;
}

/* A histogram's arrays as `static const uint64_t NAME_lo[]...`, its
 * buckets made half-open; its initializer into init. Empty: dflt. With
 * mean > 0, each bucket is narrowed to the one value at the place that
 * makes the draws' mean `mean` (synth_mean_point()). */
static void hist(struct dbuf *b, struct dbuf *init, const char *name, unsigned id,
		 const struct ditto_hist *h, uint64_t dflt, double mean)
{
	size_t n = ditto_hist_total(h) ? ditto_hist_bucket_count(h) : 0;
	double at = mean > 0 && n ? synth_mean_point(h, mean) : -1;
	uint64_t cum = 0;

	for (int pass = 0; n && pass < 3; pass++) {
		dbuf_printf(b, "static const uint64_t up%u_%s_%s[] = {", id, name,
			    pass == 0 ? "lo" : pass == 1 ? "hi" : "cum");
		for (size_t i = 0; i < n; i++) {
			uint64_t lo, hi, c;

			ditto_hist_bucket(h, i, &lo, &hi, &c);
			if (at >= 0 && hi != UINT64_MAX) {
				lo += (uint64_t)llround(at * (double)(hi - lo));
				hi = lo;
			}
			cum += pass == 2 ? c : 0;
			dbuf_printf(b, "%s%lluULL", i ? ", " : " ", (unsigned long long)(
				    pass == 0 ? lo : pass == 1 ? (hi == UINT64_MAX ? hi : hi + 1) : cum));
		}
		dbuf_puts(b, " };\n");
	}
	if (!n)
		dbuf_printf(init, "{ .n = 0, .dflt = %lluULL }", (unsigned long long)dflt);
	else
		dbuf_printf(init, "{ .n = %zu, .lo = up%u_%s_lo, .hi = up%u_%s_hi, .cum = up%u_%s_cum, "
			    ".dflt = %lluULL }", n, id, name, id, name, id, name,
			    (unsigned long long)dflt);
}

/* Without a fan-out histogram, calls per request c as the two whole
 * counts around it, weighted so that the mean is c (parts per million). */
static void fanout_from_mean(struct dbuf *b, struct dbuf *init, unsigned id, double c)
{
	uint64_t lo = (uint64_t)floor(c), w = (uint64_t)llround((c - floor(c)) * 1e6);

	dbuf_printf(b, "static const uint64_t up%u_fan_lo[] = { %lluULL, %lluULL };\n"
		    "static const uint64_t up%u_fan_hi[] = { %lluULL, %lluULL };\n"
		    "static const uint64_t up%u_fan_cum[] = { %lluULL, 1000000ULL };\n",
		    id, (unsigned long long)lo, (unsigned long long)lo + 1,
		    id, (unsigned long long)lo + 1, (unsigned long long)lo + 2,
		    id, (unsigned long long)(1000000 - w));
	dbuf_printf(init, "{ .n = 2, .lo = up%u_fan_lo, .hi = up%u_fan_hi, .cum = up%u_fan_cum }",
		    id, id, id);
}

/* The literal of s into b; the first refusal is kept in *err. */
static void lit(struct dbuf *b, const char *s, int *err)
{
	int e = c_literal(b, s);

	if (e && !*err)
		*err = e;
}

static void entry(const struct ditto_model *m, const char *from, const struct ditto_edge *e,
		  unsigned id, struct dbuf *b, struct dbuf *tab, int *err)
{
	const char *to = ditto_edge_to(e);
	enum ditto_framing f = upstream_framing(m, to);
	double cpr = upstream_calls_per_request(e);
	struct dbuf env;

	if (!spoken(f))
		ditto_warn("synth: %s: its child %s speaks %s, which the clone's client side cannot: "
			   "its calls are raw bytes of the edge's sizes", from, to, ditto_framing_name(f));
	if (!isfinite(cpr) || cpr > FANOUT_MAX) {
		ditto_warn("synth: %s: %g calls per request to %s: the clone makes at most %d",
			   from, cpr, to, FANOUT_MAX);
		cpr = FANOUT_MAX;
	}
	dbuf_puts(tab, "\t{ .name = ");
	lit(tab, to, err);
	dbuf_init(&env);
	upstream_env_name(to, &env);
	dbuf_puts(tab, ", .env = ");
	lit(tab, env.data ? env.data : "", err);
	dbuf_free(&env);
	dbuf_printf(tab, ", .framing = %s,\n\t  .fanout = ", rt_framing_of(f));
	if (ditto_hist_total(ditto_edge_fanout(e)))
		hist(b, tab, "fan", id, ditto_edge_fanout(e), 1, 0);
	else
		fanout_from_mean(b, tab, id, cpr);
	dbuf_puts(tab, ",\n\t  .request_bytes = ");
	hist(b, tab, "req", id, ditto_edge_request_bytes(e), 64, edge_request_mean(m, from, to));
	dbuf_puts(tab, ",\n\t  .response_bytes = ");
	hist(b, tab, "resp", id, ditto_edge_response_bytes(e), 64, edge_response_mean(m, from, to));
	dbuf_printf(tab, ",\n\t  .order = %s, .async = %s },\n",
		    ditto_edge_order(e) == DITTO_ORDER_PARALLEL ? "RT_ORDER_PARALLEL" : "RT_ORDER_SEQUENTIAL",
		    ditto_edge_mode(e) == DITTO_CALL_ASYNC ? "true" : "false");
}

unsigned upstream_section(const struct ditto_model *m, const struct ditto_service *s,
			  struct dbuf *b, int *err)
{
	const struct ditto_graph *g = m ? ditto_model_graph(m) : NULL;
	const char *from = ditto_service_name(s);
	struct dbuf tab;
	unsigned n = 0;

	dbuf_init(&tab);
	for (size_t i = 0; i < ditto_graph_edge_count(g); i++) {
		const struct ditto_edge *e = ditto_graph_edge(g, i);

		if (!first_to(g, i, from) || !strcmp(ditto_edge_to(e), from))
			continue;	/* a call to itself is no child */
		entry(m, from, edge_to(g, from, ditto_edge_to(e)), n++, b, &tab, err);
	}
	if (n) {
		dbuf_puts(b, "static const struct rt_upstream upstreams[] = {\n");
		dbuf_put(b, tab.data, tab.len);
		dbuf_puts(b, "};\n");
	}
	b->oom |= tab.oom;
	dbuf_free(&tab);
	return n;
}

unsigned upstream_count(const struct ditto_model *m, const struct ditto_service *s)
{
	const struct ditto_graph *g = m ? ditto_model_graph(m) : NULL;
	unsigned n = 0;

	for (size_t i = 0; i < ditto_graph_edge_count(g); i++)
		n += first_to(g, i, ditto_service_name(s)) &&
		     strcmp(ditto_edge_to(ditto_graph_edge(g, i)), ditto_service_name(s));
	return n;
}

bool upstream_in_graph(const struct ditto_model *m, const struct ditto_service *s)
{
	const struct ditto_graph *g = m ? ditto_model_graph(m) : NULL;
	const char *name = ditto_service_name(s);

	for (size_t i = 0; i < ditto_graph_edge_count(g); i++) {
		const struct ditto_edge *e = ditto_graph_edge(g, i);

		if (!strcmp(ditto_edge_from(e), name) || !strcmp(ditto_edge_to(e), name))
			return true;
	}
	return false;
}

double upstream_async_calls(const struct ditto_model *m, const struct ditto_service *s)
{
	const struct ditto_graph *g = m ? ditto_model_graph(m) : NULL;
	const char *from = ditto_service_name(s);
	double calls = 0;

	for (size_t i = 0; i < ditto_graph_edge_count(g); i++) {
		const struct ditto_edge *e = ditto_graph_edge(g, i);
		double cpr;

		if (!first_to(g, i, from) || !strcmp(ditto_edge_to(e), from))
			continue;
		e = edge_to(g, from, ditto_edge_to(e));
		cpr = upstream_calls_per_request(e);
		if (ditto_edge_mode(e) == DITTO_CALL_ASYNC && isfinite(cpr) && cpr > 0)
			calls += fmin(cpr, FANOUT_MAX);
	}
	return calls;
}

int upstream_readme(const struct ditto_model *m, const struct ditto_service *s, struct dbuf *b)
{
	const struct ditto_graph *g = m ? ditto_model_graph(m) : NULL;
	const char *from = ditto_service_name(s);
	int err = 0;

	if (!upstream_count(m, s))
		return 0;
	dbuf_puts(b, "\nThe clone calls the children the original called (the model's graph).\n"
		     "Give each one's address with `--upstream NAME=HOST:PORT` or its\n"
		     "environment variable (a child without one is skipped, counted):\n\n");
	for (size_t i = 0; i < ditto_graph_edge_count(g); i++) {
		const struct ditto_edge *e = ditto_graph_edge(g, i);
		struct dbuf env;

		if (!first_to(g, i, from) || !strcmp(ditto_edge_to(e), from))
			continue;
		e = edge_to(g, from, ditto_edge_to(e));
		dbuf_puts(b, "    ");
		lit(b, ditto_edge_to(e), &err);
		dbuf_init(&env);
		upstream_env_name(ditto_edge_to(e), &env);
		dbuf_printf(b, "  %s  %s, %.3f calls per request, %s, %s\n", env.data ? env.data : "",
			    ditto_framing_name(upstream_framing(m, ditto_edge_to(e))),
			    upstream_calls_per_request(e), ditto_call_mode_name(ditto_edge_mode(e)),
			    ditto_call_order_name(ditto_edge_order(e)));
		dbuf_free(&env);
	}
	dbuf_puts(b, "\nThe clone prints one line per child at exit: calls, errors, timeouts,\n");
	if (upstream_untraced(m, from))
		dbuf_puts(b, "skipped. Its original carried no trace context, nor do its calls.\n");
	else
		dbuf_puts(b, "skipped. HTTP calls carry a W3C traceparent; RESP and memcache calls\n"
			     "carry none (their protocols have no field for it).\n");
	return err;
}

bool upstream_untraced(const struct ditto_model *m, const char *service)
{
	const struct ditto_graph *g = m ? ditto_model_graph(m) : NULL;
	bool traces = false;

	for (size_t i = 0; g && i < ditto_graph_edge_count(g); i++) {
		const struct ditto_edge *e = ditto_graph_edge(g, i);

		if (ditto_edge_source(e) != DITTO_EDGE_TRACES)
			continue;
		traces = true;
		if (!strcmp(ditto_edge_from(e), service) || !strcmp(ditto_edge_to(e), service))
			return false;
	}
	return traces;
}
