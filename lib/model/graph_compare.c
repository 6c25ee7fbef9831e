/* SPDX-License-Identifier: MIT */
/*
 * Comparing RPC graphs: nodes by name, externals by name, and edges by
 * their ends (from, to) within one chosen source per side, so that what
 * the kernel saw can be set against what the traces saw. The generic walk
 * pairs edges by (from, to, source) and would never pair those two.
 */
#include <errno.h>
#include <string.h>

#include "compare_int.h"

static const struct dnode empty_map = { .type = DN_MAP };

#define SOURCE_COUNT 2	/* enum ditto_edge_source: kernel, traces */

/* An edge without a source is a kernel edge (model.h); an unknown name
 * (a newer writer's) is -1 and pairs with nothing chosen here. */
static int edge_source_of(const struct dnode *e)
{
	const char *s = dn_get_str(e, "source");

	return *s ? enum_index(enum_edge_source, s) : DITTO_EDGE_KERNEL;
}

/* Bit (1 << source) for every source that has an edge in g. */
static unsigned sources_of(const struct dnode *g)
{
	const struct dnode *edges = dn_sub(g, "edges", DN_ARR);
	unsigned mask = 0;

	for (size_t i = 0; edges && i < edges->a.n; i++) {
		int s = edge_source_of(edges->a.items[i]);

		if (s >= 0 && s < SOURCE_COUNT)
			mask |= 1u << s;
	}
	return mask;
}

static const struct dnode *find_edge(const struct dnode *edges, int src, const char *from,
				     const char *to)
{
	for (size_t i = 0; edges && i < edges->a.n; i++) {
		const struct dnode *e = edges->a.items[i];

		if (edge_source_of(e) == src && !strcmp(dn_get_str(e, "from"), from) &&
		    !strcmp(dn_get_str(e, "to"), to))
			return e;
	}
	return NULL;
}

static bool has_node(const struct dnode *nodes, const struct dnode *name)
{
	for (size_t i = 0; nodes && i < nodes->a.n; i++)
		if (dn_equal(nodes->a.items[i], name))
			return true;
	return false;
}

/* "[label]" after the current path; returns the mark to pop to. */
static size_t push_key(struct cctx *c, const char *label)
{
	size_t mark = c->path.len;

	dbuf_putc(&c->path, '[');
	dbuf_puts(&c->path, label);
	dbuf_putc(&c->path, ']');
	return mark;
}

/* Nodes of one side that the other lacks: one only_a or only_b row each. */
static void nodes_missing(struct cctx *c, const struct dnode *from, const struct dnode *other,
			  bool in_a)
{
	for (size_t i = 0; from && i < from->a.n && !c->err; i++) {
		const struct dnode *n = from->a.items[i];
		size_t mark;

		if (n->type != DN_STR || has_node(other, n))
			continue;
		mark = push_key(c, n->s.p);
		compare_emit(c, NULL, in_a ? DITTO_METRIC_ONLY_A : DITTO_METRIC_ONLY_B, in_a, !in_a,
			     1);
		path_pop(&c->path, mark);
	}
}

static void compare_nodes(struct cctx *c, const struct dnode *ga, const struct dnode *gb)
{
	const struct dnode *na = dn_sub(ga, "nodes", DN_ARR), *nb = dn_sub(gb, "nodes", DN_ARR);
	size_t mark = path_push_field(&c->path, "nodes");

	nodes_missing(c, na, nb, true);
	nodes_missing(c, nb, na, false);
	path_pop(&c->path, mark);
}

/* Externals paired by name: their framing, and those on one side only. */
static void compare_externals(struct cctx *c, const struct dnode *ga, const struct dnode *gb)
{
	const struct dnode *xa = dn_sub(ga, "externals", DN_ARR);
	const struct dnode *xb = dn_sub(gb, "externals", DN_ARR);
	size_t mark;

	if (!xa && !xb)
		return;
	mark = path_push_field(&c->path, "externals");
	compare_elements(c, &schema_external, xa, xb);
	path_pop(&c->path, mark);
}

/* "from:to:kernel" as the generic walk names it when both sides are of one
 * source, "from:to:kernel/traces" (a's source, then b's) when not. */
static size_t push_edge(struct cctx *c, const struct dnode *e, int sa, int sb)
{
	size_t mark = c->path.len;

	dbuf_printf(&c->path, "[%s:%s:%s", dn_get_str(e, "from"), dn_get_str(e, "to"),
		    enum_edge_source[sa]);
	if (sa != sb)
		dbuf_printf(&c->path, "/%s", enum_edge_source[sb]);
	dbuf_putc(&c->path, ']');
	return mark;
}

/* a's edges of source sa against b's of source sb, paired by (from, to):
 * each field by the schema's rules (mode and order exact, calls per parent
 * request, histogram distances and means, latency percentiles); an edge on
 * one side only is an only_a or only_b row. */
static void compare_edges(struct cctx *c, const struct dnode *ga, int sa, const struct dnode *gb,
			  int sb)
{
	const struct dnode *ea = dn_sub(ga, "edges", DN_ARR), *eb = dn_sub(gb, "edges", DN_ARR);
	size_t top = path_push_field(&c->path, "edges");

	for (size_t i = 0; ea && i < ea->a.n && !c->err; i++) {
		const struct dnode *e = ea->a.items[i], *m;
		size_t mark;

		if (edge_source_of(e) != sa)
			continue;
		m = find_edge(eb, sb, dn_get_str(e, "from"), dn_get_str(e, "to"));
		mark = push_edge(c, e, sa, sb);
		if (m)
			compare_section(c, &schema_edge, e, m);
		else
			compare_emit(c, NULL, DITTO_METRIC_ONLY_A, 1, 0, 1);
		path_pop(&c->path, mark);
	}
	for (size_t i = 0; eb && i < eb->a.n && !c->err; i++) {
		const struct dnode *e = eb->a.items[i];
		size_t mark;

		if (edge_source_of(e) != sb ||
		    find_edge(ea, sa, dn_get_str(e, "from"), dn_get_str(e, "to")))
			continue;
		mark = push_edge(c, e, sa, sb);
		compare_emit(c, NULL, DITTO_METRIC_ONLY_B, 0, 1, 1);
		path_pop(&c->path, mark);
	}
	path_pop(&c->path, top);
}

static int lowest_source(unsigned mask)
{
	for (int s = 0; s < SOURCE_COUNT; s++)
		if (mask & (1u << s))
			return s;
	return DITTO_EDGE_KERNEL;
}

void compare_graphs(struct cctx *c, const struct dnode *ga, const struct dnode *gb)
{
	unsigned ma = sources_of(ga), mb = sources_of(gb), common = ma & mb;
	size_t mark;

	if (!ga && !gb)
		return;
	ga = ga ? ga : &empty_map;
	gb = gb ? gb : &empty_map;
	mark = path_push_field(&c->path, "graph");
	compare_nodes(c, ga, gb);
	compare_externals(c, ga, gb);
	if (common) {
		/* Each source both models hold, with itself. */
		for (int s = 0; s < SOURCE_COUNT; s++)
			if (common & (1u << s))
				compare_edges(c, ga, s, gb, s);
	} else if (ma && mb) {
		/* One source each, and not the same one: the kernel's edges of
		 * one model against the other's traces. */
		compare_edges(c, ga, lowest_source(ma), gb, lowest_source(mb));
	} else {
		/* One side has no edges: the other's are all missing from it. */
		for (int s = 0; s < SOURCE_COUNT; s++)
			if ((ma | mb) & (1u << s))
				compare_edges(c, ga, s, gb, s);
	}
	path_pop(&c->path, mark);
}

DITTO_API int ditto_graph_compare(const struct ditto_model *a, enum ditto_edge_source sa,
				  const struct ditto_model *b, enum ditto_edge_source sb,
				  const struct ditto_compare_opts *opts,
				  struct ditto_comparison **out)
{
	const struct dnode *ga, *gb;
	struct cctx c;
	size_t mark;
	int err;

	if (!out)
		return ditto_err(-EINVAL, "graph compare: out is NULL");
	*out = NULL;
	if (!a || !b)
		return ditto_err(-EINVAL, "graph compare: model is NULL");
	if ((unsigned)sa >= SOURCE_COUNT || (unsigned)sb >= SOURCE_COUNT)
		return ditto_err(-EINVAL, "graph compare: no edge source %d", (unsigned)sa >=
				 SOURCE_COUNT ? (int)sa : (int)sb);
	if ((err = compare_begin(&c, opts)))
		return err;
	ga = dn_sub(a->root, "graph", DN_MAP);
	gb = dn_sub(b->root, "graph", DN_MAP);
	ga = ga ? ga : &empty_map;
	gb = gb ? gb : &empty_map;
	mark = path_push_field(&c.path, "graph");
	compare_nodes(&c, ga, gb);
	compare_externals(&c, ga, gb);
	compare_edges(&c, ga, (int)sa, gb, (int)sb);
	path_pop(&c.path, mark);
	return compare_end(&c, out);
}
