/* SPDX-License-Identifier: MIT */
/*
 * A model's graph as the clone tree sees it: one node per service and per
 * external (cloned, or kept as the address of a real one), its listen
 * port (distinct ones: two nodes never share a port on one host), the
 * edges of one source, the front tier and a start order, leaves first.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "deploy_int.h"
#include "graph_int.h"
#include "synth_int.h"

bool graph_model_is_graph(const struct ditto_model *m)
{
	return ditto_model_service_count(m) > 1 || ditto_graph_edge_count(ditto_model_graph(m)) > 0;
}

static ssize_t node_index(const struct gplan *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->nodes[i].name, name))
			return (ssize_t)i;
	return -1;
}

static int add_node(struct gplan *p, const char *name, const struct ditto_service *s,
		    const struct ditto_external *x)
{
	struct gnode *g;

	if (deploy_name_problem(name))
		return ditto_err(-EINVAL, "synth: graph node '%.*s' has a name outside "
				 "[A-Za-z0-9._-] (or longer than %d): it cannot name a directory",
				 64, name, GRAPH_NAME_MAX - 1);
	if (p->n >= GRAPH_NODES_MAX)
		return ditto_err(-DITTO_ELIMIT, "synth: more than %d graph nodes", GRAPH_NODES_MAX);
	g = &p->nodes[p->n++];
	memset(g, 0, sizeof(*g));
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->svc = s;
	g->ext = x;
	g->kind = GNODE_CLONE;
	return 0;
}

static void service_figures(const struct ditto_model *m, struct gnode *g)
{
	double window = ditto_meta_window_s(ditto_model_meta(m));
	uint64_t cpu_ns = 0;

	g->framing = ditto_service_framing(g->svc);
	g->processes = ditto_service_processes(g->svc) ? ditto_service_processes(g->svc) : 1;
	for (size_t i = 0; i < ditto_service_thread_count(g->svc); i++) {
		const struct ditto_thread_class *t = ditto_service_thread(g->svc, i);

		g->threads += ditto_thread_class_count(t);
		cpu_ns += ditto_thread_class_cpu_ns(t);
	}
	g->threads = g->threads ? g->threads : 1;
	/* CPU time over the window: what a scheduler must reserve for it. */
	g->cpu_millicores = window > 0 ? (uint64_t)((double)cpu_ns / (window * 1e6) + 0.5) : 0;
}

static int add_nodes(const struct ditto_model *m, struct gplan *p)
{
	const struct ditto_graph *gr = ditto_model_graph(m);
	int err;

	for (size_t i = 0; i < ditto_model_service_count(m); i++) {
		const struct ditto_service *s = ditto_model_service(m, i);

		if ((err = add_node(p, ditto_service_name(s), s, NULL)))
			return err;
		service_figures(m, &p->nodes[p->n - 1]);
	}
	for (size_t i = 0; i < ditto_graph_node_count(gr); i++) {
		const char *name = ditto_graph_node(gr, i);
		const struct ditto_external *x = ditto_graph_find_external(gr, name);
		struct gnode *g;

		if (node_index(p, name) >= 0)
			continue;
		if (!x) {
			ditto_warn("synth: graph node '%.*s' is neither a service nor an external "
				   "(a client of the graph?): not cloned, its edges left out", 64,
				   !deploy_name_problem(name) ? name : "(unprintable)");
			continue;
		}
		if ((err = add_node(p, name, NULL, x)))
			return err;
		g = &p->nodes[p->n - 1];
		g->framing = ditto_external_framing(x);
		g->port = (unsigned)ditto_external_port(x);
		g->processes = g->threads = 1;
		if (g->framing == DITTO_FRAMING_UNKNOWN || g->framing == DITTO_FRAMING_RAW)
			ditto_warn("synth: external '%s' has no known framing: its clone speaks raw "
				   "(reads a request, answers with the sizes seen)", name);
	}
	return 0;
}

/* NAME=HOST:PORT; HOST a name or an address, [v6] allowed. */
static int keep_one(struct gplan *p, const char *arg)
{
	const char *eq = strchr(arg, '='), *colon;
	char name[GRAPH_NAME_MAX], *end;
	unsigned long port;
	ssize_t k;

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(name))
		return ditto_err(-EINVAL, "synth: keep '%.*s' is not NAME=HOST:PORT", 64, arg);
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = '\0';
	if ((k = node_index(p, name)) < 0)
		return ditto_err(-DITTO_ENOTFOUND, "synth: keep: the graph has no node '%.*s'", 64,
				 name);
	colon = strrchr(eq + 1, ':');
	if (!colon || colon == eq + 1)
		return ditto_err(-EINVAL, "synth: keep %s: '%.*s' is not HOST:PORT", name, 64,
				 eq + 1);
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || !port || port > 65535 || colon[1] == '-' || colon[1] == '+')
		return ditto_err(-EINVAL, "synth: keep %s: port '%s' is not 1..65535", name,
				 colon + 1);
	/* The manifest's reader takes no other address (graph_manifest_read.c). */
	if (!deploy_is_address(eq + 1))
		return ditto_err(-EINVAL, "synth: keep %s: '%.*s' is not HOST:PORT (a host of "
				 "[A-Za-z0-9.-] or [IPv6])", name, 64, eq + 1);
	p->nodes[k].kind = GNODE_KEPT;
	p->nodes[k].port = (unsigned)port;
	snprintf(p->nodes[k].address, sizeof(p->nodes[k].address), "%s", eq + 1);
	return 0;
}

/* Kernel edges when the model has any, else the traces': one source, so
 * an edge seen by both is called once. */
static int add_edges(const struct ditto_model *m, struct gplan *p)
{
	const struct ditto_graph *gr = ditto_model_graph(m);
	size_t ne = ditto_graph_edge_count(gr);
	enum ditto_edge_source src = DITTO_EDGE_TRACES;

	for (size_t i = 0; i < ne; i++)
		if (ditto_edge_source(ditto_graph_edge(gr, i)) == DITTO_EDGE_KERNEL)
			src = DITTO_EDGE_KERNEL;
	if (ne && !(p->edges = calloc(ne, sizeof(*p->edges))))
		return ditto_err(-ENOMEM, "synth: out of memory");
	for (size_t i = 0; i < ne; i++) {
		const struct ditto_edge *e = ditto_graph_edge(gr, i);
		ssize_t f = node_index(p, ditto_edge_from(e)), t = node_index(p, ditto_edge_to(e));
		uint64_t parents = ditto_edge_parent_requests(e);
		struct gedge *g;

		if (ditto_edge_source(e) != src || f < 0 || t < 0)
			continue;
		g = &p->edges[p->ne++];
		g->from = (size_t)f;
		g->to = (size_t)t;
		g->e = e;
		g->calls_per_request = parents ? (double)ditto_edge_calls(e) / (double)parents :
				       ditto_hist_total(ditto_edge_fanout(e)) ?
				       ditto_hist_mean(ditto_edge_fanout(e)) : 0;
	}
	return 0;
}

static void pick_front(struct gplan *p)
{
	size_t roots = 0;

	p->front = 0;
	for (size_t i = p->n; i-- > 0;) {
		bool pointed = false;

		for (size_t j = 0; j < p->ne && !pointed; j++)
			pointed = p->edges[j].to == i;
		if (!pointed && p->nodes[i].kind == GNODE_CLONE) {
			p->front = i;	/* the first in the model wins: scanned last */
			roots++;
		}
	}
	if (roots > 1)
		ditto_warn("synth: %zu nodes have no caller in the graph: '%s' (the first in the "
			   "model) is the front tier", roots, p->nodes[p->front].name);
	else if (!roots)
		ditto_warn("synth: every node has a caller (a cycle): '%s' is the front tier",
			   p->nodes[p->front].name);
}

/* Depth first, children in edge order, a node placed after its children:
 * leaves first. An edge back to a node on the path is a cycle: it is
 * broken there (the clones connect lazily, so the order is only a
 * convenience). */
static void visit(struct gplan *p, size_t k, unsigned char *state, size_t *n, bool *cycle)
{
	state[k] = 1;
	for (size_t j = 0; j < p->ne; j++) {
		size_t c = p->edges[j].to;

		if (p->edges[j].from != k)
			continue;
		if (state[c] == 1)
			*cycle = true;
		else if (!state[c])
			visit(p, c, state, n, cycle);
	}
	state[k] = 2;
	p->order[(*n)++] = k;
}

/* The front's subtree first, then the rest; the front then moves to the
 * end: nothing visited after it is reachable from it, so it still comes
 * after every node it calls, and it is last even inside a cycle. */
static void start_order(struct gplan *p)
{
	unsigned char state[GRAPH_NODES_MAX] = { 0 };
	size_t n = 0, at = 0;
	bool cycle = false;

	visit(p, p->front, state, &n, &cycle);
	for (size_t i = 0; i < p->n; i++)
		if (!state[i])
			visit(p, i, state, &n, &cycle);
	while (p->order[at] != p->front)
		at++;
	memmove(&p->order[at], &p->order[at + 1], (n - at - 1) * sizeof(p->order[0]));
	p->order[n - 1] = p->front;
	if (cycle)
		ditto_warn("synth: the graph has a cycle (clients that call back): the start order "
			   "breaks it; tiers reach each other once both answer");
}

static int assign_ports(struct gplan *p)
{
	unsigned used[GRAPH_NODES_MAX];
	size_t nu = 0;

	for (size_t i = 0; i < p->n; i++)
		if (p->nodes[i].kind == GNODE_KEPT)
			used[nu++] = p->nodes[i].port;
	for (size_t i = 0; i < p->n; i++) {
		struct gnode *g = &p->nodes[i];
		unsigned want = g->svc && ditto_service_port_count(g->svc) ?
				ditto_service_port(g->svc, 0) : g->port;

		if (g->kind == GNODE_KEPT)
			continue;
		g->port = want;
		if (!want || synth_port_in(want, used, nu)) {
			if (!(g->port = synth_free_port(used, nu)))
				return ditto_err(-EADDRNOTAVAIL, "synth: no free port for '%s'",
						 g->name);
			if (want)
				ditto_warn("synth: '%s' listens on port %u like another node: its "
					   "clone gets port %u", g->name, want, g->port);
		}
		used[nu++] = g->port;
	}
	return 0;
}

int gplan_build(const struct ditto_model *m, const char *const *keep, size_t n_keep,
		struct gplan *p)
{
	int err;

	memset(p, 0, sizeof(*p));
	if ((err = add_nodes(m, p)))
		goto fail;
	if (!p->n) {
		err = ditto_err(-DITTO_ENOTFOUND, "synth: the model has no service");
		goto fail;
	}
	for (size_t i = 0; i < n_keep; i++)
		if ((err = keep_one(p, keep[i])))
			goto fail;
	if ((err = add_edges(m, p)) || (err = assign_ports(p)))
		goto fail;
	pick_front(p);
	start_order(p);
	return 0;
fail:
	gplan_free(p);
	return err;
}

void gplan_free(struct gplan *p)
{
	free(p->edges);
	p->edges = NULL;
	p->ne = 0;
}

bool gplan_upstream(const struct gplan *p, size_t k, size_t i, size_t *out)
{
	for (size_t j = 0; j < p->ne; j++) {
		bool seen = false;

		if (p->edges[j].from != k)
			continue;
		for (size_t q = 0; q < j && !seen; q++)
			seen = p->edges[q].from == k && p->edges[q].to == p->edges[j].to;
		if (!seen && i-- == 0) {
			*out = p->edges[j].to;
			return true;
		}
	}
	return false;
}
