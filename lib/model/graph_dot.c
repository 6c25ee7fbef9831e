/* SPDX-License-Identifier: MIT */
/*
 * The RPC graph as Graphviz DOT: what `ditto graph dot` writes and the
 * Python binding hands back. Model strings are untrusted: each goes out
 * as a DOT quoted string with every character DOT or its label escapes
 * give a meaning to escaped, after a check of its character set.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "model_int.h"

#define SOURCE_COUNT 2	/* enum ditto_edge_source: kernel, traces */

/*
 * A DOT quoted string: '"' ends it, so it is \"; a backslash starts the
 * label escapes (\n, \l, \N, \G, ...), so it is \\ and a name's backslash
 * never becomes one of them; a newline is the label escape \n (DOT keeps
 * a raw one, but a line per statement reads better). Tab and UTF-8 pass
 * as they are. No HTML-like label is used, so '<' and '>' are plain.
 * In a label (label true), Graphviz also turns character entities into
 * characters ("&amp;" shows as "&"), so '&' is written as "&amp;" there:
 * node labels are given explicitly for that reason, \N would show the
 * node's name after that decoding.
 */
static void dot_quoted(struct dbuf *b, const char *s, bool label)
{
	dbuf_putc(b, '"');
	for (; *s; s++) {
		if (*s == '&' && label)
			dbuf_puts(b, "&amp;");
		else if (*s == '"')
			dbuf_puts(b, "\\\"");
		else if (*s == '\\')
			dbuf_puts(b, "\\\\");
		else if (*s == '\n')
			dbuf_puts(b, "\\n");
		else
			dbuf_putc(b, *s);
	}
	dbuf_putc(b, '"');
}

/* The model's strings outside what a valid model holds (control
 * characters, broken UTF-8) have no faithful DOT spelling: refused, so a
 * name never turns into another one. */
static int check_text(const char *what, size_t i, const char *s)
{
	const char *why = text_problem(s, strlen(s));

	return why ? ditto_err(-EINVAL, "graph dot: graph.%s[%zu]: string %s", what, i, why) : 0;
}

static int check_strings(const struct ditto_graph *g)
{
	int err = 0;

	for (size_t i = 0; !err && i < ditto_graph_node_count(g); i++)
		err = check_text("nodes", i, ditto_graph_node(g, i));
	for (size_t i = 0; !err && i < ditto_graph_external_count(g); i++)
		err = check_text("externals", i, ditto_external_address(ditto_graph_external(g, i)));
	for (size_t i = 0; !err && i < ditto_graph_edge_count(g); i++) {
		const struct ditto_edge *e = ditto_graph_edge(g, i);

		err = check_text("edges", i, ditto_edge_from(e));
		if (!err)
			err = check_text("edges", i, ditto_edge_to(e));
	}
	return err;
}

/* "812 B", "1.5 KiB": the same units as `ditto model show`. */
static void put_size(struct dbuf *b, double bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	int u = -1;

	while (bytes >= 1024 && u < 3) {
		bytes /= 1024;
		u++;
	}
	if (u < 0)
		dbuf_printf(b, "%.0f B", bytes);
	else
		dbuf_printf(b, "%.1f %s", bytes, units[u]);
}

static void put_node(struct dbuf *b, const struct ditto_graph *g, const char *name)
{
	const struct ditto_external *x = ditto_graph_find_external(g, name);
	struct dbuf label;
	const char *addr;

	dbuf_puts(b, "  ");
	dot_quoted(b, name, false);
	if (!x) {
		dbuf_puts(b, " [shape=box, label=");
		dot_quoted(b, name, true);
		dbuf_puts(b, "];\n");
		return;
	}
	/* The label is built as text, then quoted once: name, then where it
	 * listens and what it speaks. */
	dbuf_init(&label);
	dbuf_puts(&label, name);
	addr = ditto_external_address(x);
	if (addr && *addr) {
		bool v6 = strchr(addr, ':') != NULL;

		dbuf_printf(&label, "\n%s%s%s", v6 ? "[" : "", addr, v6 ? "]" : "");
		if (ditto_external_port(x))
			dbuf_printf(&label, ":%" PRIu64, ditto_external_port(x));
	}
	dbuf_printf(&label, "\n%s", ditto_framing_name(ditto_external_framing(x)));
	dbuf_puts(b, " [shape=cylinder, label=");
	dot_quoted(b, label.data ? label.data : name, true);
	dbuf_puts(b, "];\n");
	dbuf_free(&label);
}

/* calls per parent request; sync/async and parallel; mean sizes. */
static void put_edge(struct dbuf *b, const struct ditto_edge *e, bool name_source)
{
	enum ditto_edge_source src = ditto_edge_source(e);
	uint64_t calls = ditto_edge_calls(e), parents = ditto_edge_parent_requests(e);
	const struct ditto_hist *rq = ditto_edge_request_bytes(e);
	const struct ditto_hist *rs = ditto_edge_response_bytes(e);
	struct dbuf label;

	dbuf_init(&label);
	if (name_source)
		dbuf_printf(&label, "%s\n", ditto_edge_source_name(src));
	if (parents)
		dbuf_printf(&label, "%.3g calls/req", (double)calls / (double)parents);
	else
		dbuf_printf(&label, "%" PRIu64 " calls, no parent requests", calls);
	dbuf_printf(&label, "\n%s", ditto_call_mode_name(ditto_edge_mode(e)));
	if (ditto_edge_order(e) == DITTO_ORDER_PARALLEL)
		dbuf_puts(&label, ", parallel");
	if (ditto_hist_total(rq) || ditto_hist_total(rs)) {
		dbuf_puts(&label, "\nreq ");
		put_size(&label, ditto_hist_mean(rq));
		dbuf_puts(&label, " / resp ");
		put_size(&label, ditto_hist_mean(rs));
	}
	dbuf_puts(b, "  ");
	dot_quoted(b, ditto_edge_from(e), false);
	dbuf_puts(b, " -> ");
	dot_quoted(b, ditto_edge_to(e), false);
	dbuf_puts(b, " [label=");
	dot_quoted(b, label.data ? label.data : "", true);
	if (ditto_edge_mode(e) == DITTO_CALL_ASYNC)
		dbuf_puts(b, ", style=dashed");
	if (src == DITTO_EDGE_TRACES)
		dbuf_puts(b, ", color=\"#1f77b4\", fontcolor=\"#1f77b4\"");
	dbuf_puts(b, "];\n");
	dbuf_free(&label);
}

static bool drawn(unsigned sources, const struct ditto_edge *e)
{
	return !sources || (sources & (1u << ditto_edge_source(e)));
}

DITTO_API int ditto_graph_write_dot(const struct ditto_model *m, const struct ditto_dot_opts *opts,
				    char **out)
{
	const struct ditto_graph *g;
	unsigned sources, seen = 0;
	struct dbuf b;
	int err;

	if (!out)
		return ditto_err(-EINVAL, "graph dot: out is NULL");
	*out = NULL;
	if (!m)
		return ditto_err(-EINVAL, "graph dot: model is NULL");
	if ((err = OPTS_CHECK(opts, ditto_dot_opts)))
		return err;
	sources = OPTS_GET(opts, sources, 0u);
	if (sources >> SOURCE_COUNT)
		return ditto_err(-EINVAL, "graph dot: sources 0x%x names no edge source", sources);
	g = ditto_model_graph(m);
	if ((err = check_strings(g)))
		return err;
	for (size_t i = 0; i < ditto_graph_edge_count(g); i++)
		if (drawn(sources, ditto_graph_edge(g, i)))
			seen |= 1u << ditto_edge_source(ditto_graph_edge(g, i));
	dbuf_init(&b);
	dbuf_puts(&b, "digraph ditto {\n  rankdir=LR;\n"
		      "  node [fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", "
		      "fontsize=10];\n");
	for (size_t i = 0; i < ditto_graph_node_count(g); i++)
		put_node(&b, g, ditto_graph_node(g, i));
	for (size_t i = 0; i < ditto_graph_edge_count(g); i++) {
		const struct ditto_edge *e = ditto_graph_edge(g, i);

		/* The source is named on each edge only when both are drawn. */
		if (drawn(sources, e))
			put_edge(&b, e, seen == 3u);
	}
	dbuf_puts(&b, "}\n");
	*out = dbuf_steal(&b);
	return *out ? 0 : ditto_err(-ENOMEM, "out of memory");
}
