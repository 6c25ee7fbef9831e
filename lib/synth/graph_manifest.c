/* SPDX-License-Identifier: MIT */
/*
 * graph.json: the graph tree's manifest (nodes, ports, edges, start
 * order), the contract `ditto up` and the deployment writers read
 * (graph_manifest_read.c). Every string goes through dbuf_put_json_str();
 * the layout is the one include/ditto/synth.h documents.
 */
#include <string.h>

#include "deploy_int.h"
#include "graph_int.h"

static void put_str(struct dbuf *b, const char *s)
{
	dbuf_put_json_str(b, s, strlen(s));
}

static void put_key_str(struct dbuf *b, const char *key, const char *v)
{
	dbuf_printf(b, "\"%s\":", key);
	put_str(b, v);
}

static void node_json(const struct gplan *p, size_t k, struct dbuf *b)
{
	const struct gnode *g = &p->nodes[k];
	char env[MANIFEST_MAX_NAME + 16];
	size_t up;

	deploy_env_name(g->name, env, sizeof(env));
	dbuf_puts(b, "    {");
	put_key_str(b, "name", g->name);
	dbuf_printf(b, ", \"kind\":\"%s\", ", g->kind == GNODE_CLONE ? "clone" : "kept");
	if (g->kind == GNODE_CLONE)
		put_key_str(b, "dir", g->name);
	else
		put_key_str(b, "address", g->address);
	dbuf_printf(b, ", \"port\":%u, \"framing\":\"%s\", ", g->port,
		    ditto_framing_name(g->framing));
	put_key_str(b, "env", env);
	dbuf_printf(b, ", \"processes\":%llu, \"threads\":%llu, \"cpu_millicores\":%llu, "
		    "\"upstreams\":[", (unsigned long long)g->processes,
		    (unsigned long long)g->threads, (unsigned long long)g->cpu_millicores);
	for (size_t i = 0; gplan_upstream(p, k, i, &up); i++) {
		dbuf_puts(b, i ? "," : "");
		put_str(b, p->nodes[up].name);
	}
	dbuf_puts(b, "]}");
}

/* The interface has two modes and two orders: an edge the profile could
 * not decide is called as the common case, sync and one after another. */
static const char *mode_name(const struct ditto_edge *e)
{
	return ditto_edge_mode(e) == DITTO_CALL_ASYNC ? "async" : "sync";
}

static const char *order_name(const struct ditto_edge *e)
{
	return ditto_edge_order(e) == DITTO_ORDER_PARALLEL ? "parallel" : "sequential";
}

static void edge_json(const struct gplan *p, const struct gedge *e, struct dbuf *b)
{
	dbuf_puts(b, "    {");
	put_key_str(b, "from", p->nodes[e->from].name);
	dbuf_puts(b, ", ");
	put_key_str(b, "to", p->nodes[e->to].name);
	dbuf_printf(b, ", \"calls_per_request\":%.6g, \"mode\":\"%s\", \"order\":\"%s\", "
		    "\"framing\":\"%s\"}", e->calls_per_request,
		    mode_name(e->e), order_name(e->e),
		    ditto_framing_name(p->nodes[e->to].framing));
}

void graph_manifest_write(const struct gplan *p, struct dbuf *b)
{
	dbuf_puts(b, "{\"schema\":1,\n  ");
	put_key_str(b, "front", p->nodes[p->front].name);
	/* Kept nodes are not started: the order names the clones only. */
	dbuf_puts(b, ",\n  \"start_order\":[");
	for (size_t i = 0, n = 0; i < p->n; i++) {
		if (p->nodes[p->order[i]].kind != GNODE_CLONE)
			continue;
		dbuf_puts(b, n++ ? "," : "");
		put_str(b, p->nodes[p->order[i]].name);
	}
	dbuf_puts(b, "],\n  \"nodes\":[\n");
	for (size_t i = 0; i < p->n; i++) {
		node_json(p, i, b);
		dbuf_puts(b, i + 1 < p->n ? ",\n" : "\n");
	}
	dbuf_puts(b, "  ],\n  \"edges\":[\n");
	for (size_t i = 0; i < p->ne; i++) {
		edge_json(p, &p->edges[i], b);
		dbuf_puts(b, i + 1 < p->ne ? ",\n" : "\n");
	}
	dbuf_puts(b, "  ]}\n");
}
