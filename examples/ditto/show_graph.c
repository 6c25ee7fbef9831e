/* SPDX-License-Identifier: MIT */
/*
 * The graph part of `ditto model show`: its nodes, one row per edge, and
 * what the trace importers read. Names come from the model file: tab and
 * newline (the only control characters a valid name holds) are shown as
 * \xNN so that a name cannot break the table or act on the terminal.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "show.h"

/* A name escaped for one line: at most 4 bytes per byte of a valid name. */
struct shown {
	char s[4 * 255 + 1];
};

static struct shown shown(const char *name)
{
	struct shown out;
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)(name ? name : ""); *p; p++) {
		if (o + 5 > sizeof(out.s))
			break;
		if (*p < 0x20 || *p == 0x7f)
			o += (size_t)snprintf(out.s + o, sizeof(out.s) - o, "\\x%02x", *p);
		else
			out.s[o++] = (char)*p;
	}
	out.s[o] = '\0';
	return out;
}

/* Characters on screen: UTF-8 continuation bytes take no column. */
static size_t columns(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static void pad(const char *s, size_t width)
{
	fputs(s, stdout);
	for (size_t n = columns(s); n < width; n++)
		putchar(' ');
}

struct shown_edge {
	char s[2 * sizeof(struct shown) + 4];
};

static struct shown_edge edge_ends(const struct ditto_edge *e)
{
	struct shown from = shown(ditto_edge_from(e)), to = shown(ditto_edge_to(e));
	struct shown_edge out;

	snprintf(out.s, sizeof(out.s), "%s -> %s", from.s, to.s);
	return out;
}

static void show_node(const struct ditto_graph *g, const char *name, size_t width)
{
	const struct ditto_external *x = ditto_graph_find_external(g, name);
	const char *addr = x ? ditto_external_address(x) : NULL;

	printf("    ");
	pad(shown(name).s, width);
	if (!x) {
		printf("  service\n");
		return;
	}
	/* The address passed validation as an IP literal: safe to print. */
	printf("  external  %s%s%s:%" PRIu64 " %s\n", addr && strchr(addr, ':') ? "[" : "",
	       str_or_dash(addr), addr && strchr(addr, ':') ? "]" : "", ditto_external_port(x),
	       ditto_framing_name(ditto_external_framing(x)));
}

static struct fmt hist_bytes(const struct ditto_hist *h)
{
	struct fmt f = { "-" };

	return ditto_hist_total(h) ? fmt_bytes(ditto_hist_mean(h)) : f;
}

static struct fmt hist_ns(const struct ditto_hist *h, double q)
{
	struct fmt f = { "-" };

	return ditto_hist_total(h) ? fmt_ns(ditto_hist_quantile(h, q)) : f;
}

static struct fmt fanout(const struct ditto_hist *h)
{
	struct fmt f = { "-" };

	if (ditto_hist_total(h))
		snprintf(f.s, sizeof(f.s), "%.2f / %.0f", ditto_hist_mean(h),
			 ditto_hist_quantile(h, 1.0));
	return f;
}

/* Columns of an edge row, after "from -> to"; the header uses them too. */
#define EDGE_ROW "  %-6s  %-7s  %-10s  %9s  %15s  %9s  %9s  %9s  %9s  %9s  %12s\n"

static void show_edge(const struct ditto_edge *e, size_t width)
{
	const struct ditto_hist *lat = ditto_edge_latency_ns(e);
	double calls = (double)ditto_edge_calls(e);

	printf("    ");
	pad(edge_ends(e).s, width);
	printf(EDGE_ROW, ditto_edge_source_name(ditto_edge_source(e)),
	       ditto_call_mode_name(ditto_edge_mode(e)), ditto_call_order_name(ditto_edge_order(e)),
	       fmt_ratio(calls, (double)ditto_edge_parent_requests(e)).s,
	       fanout(ditto_edge_fanout(e)).s, hist_bytes(ditto_edge_request_bytes(e)).s,
	       hist_bytes(ditto_edge_response_bytes(e)).s, hist_ns(lat, 0.5).s,
	       hist_ns(lat, 0.99).s, fmt_pct((double)ditto_edge_ambiguous(e), calls).s,
	       fmt_pct((double)ditto_edge_unattributed(e), calls).s);
}

static void show_traces(const struct ditto_traces *t)
{
	double ratio = ditto_traces_sample_ratio(t);

	if (!t)
		return;
	printf("  traces: %" PRIu64 " file%s, %" PRIu64 " spans in %" PRIu64 " traces, %" PRIu64
	       " orphan spans, %" PRIu64 " rejected; sampling ",
	       ditto_traces_files(t), ditto_traces_files(t) == 1 ? "" : "s", ditto_traces_spans(t),
	       ditto_traces_traces(t), ditto_traces_orphan_spans(t),
	       ditto_traces_rejected_spans(t));
	if (ratio > 0)
		printf("ratio %g", ratio);
	else
		printf("none declared");
	printf(", call counts %s\n", ditto_traces_corrected(t) ? "corrected" : "uncorrected");
}

void show_graph(struct ditto_model *m)
{
	const struct ditto_graph *g = ditto_model_graph(m);
	size_t nodes = ditto_graph_node_count(g), edges = ditto_graph_edge_count(g);
	size_t width = strlen("node");

	if (!g)
		return;
	printf("\ngraph: %zu node%s, %zu edge%s\n", nodes, nodes == 1 ? "" : "s", edges,
	       edges == 1 ? "" : "s");
	for (size_t i = 0; i < nodes; i++)
		if (columns(shown(ditto_graph_node(g, i)).s) > width)
			width = columns(shown(ditto_graph_node(g, i)).s);
	printf("    ");
	pad("node", width);
	printf("  kind      where\n");
	for (size_t i = 0; i < nodes; i++)
		show_node(g, ditto_graph_node(g, i), width);
	width = strlen("edge");
	for (size_t i = 0; i < edges; i++)
		if (columns(edge_ends(ditto_graph_edge(g, i)).s) > width)
			width = columns(edge_ends(ditto_graph_edge(g, i)).s);
	if (edges) {
		printf("    ");
		pad("edge", width);
		printf(EDGE_ROW, "source", "mode", "order", "calls/req", "fanout mean/max",
		       "request", "response", "p50", "p99", "ambiguous", "unattributed");
		for (size_t i = 0; i < edges; i++)
			show_edge(ditto_graph_edge(g, i), width);
	}
	show_traces(ditto_graph_traces(g));
}
