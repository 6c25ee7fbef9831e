/* SPDX-License-Identifier: MIT */
/*
 * The graph tree: a model's services and externals as nodes with ports,
 * framings and upstreams (graph_plan.c), its manifest graph.json
 * (graph_manifest.c), the tree writer and builder (graph_tree.c) and the
 * runner (graph_up.c, graph_down.c).
 */
#ifndef DITTO_SYNTH_GRAPH_INT_H
#define DITTO_SYNTH_GRAPH_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <ditto/model.h>

#include "core_int.h"

#define GRAPH_NODES_MAX 64
#define GRAPH_NAME_MAX 128
#define GRAPH_ADDR_MAX 280	/* a DNS name (253) or an IPv6 literal, and :port */

enum gnode_kind { GNODE_CLONE, GNODE_KEPT };

struct gnode {
	char name[GRAPH_NAME_MAX];
	enum gnode_kind kind;
	const struct ditto_service *svc;	/* NULL for an external */
	const struct ditto_external *ext;	/* NULL for a service */
	char address[GRAPH_ADDR_MAX];		/* kept: host:port */
	unsigned port;
	enum ditto_framing framing;
	uint64_t processes, threads, cpu_millicores;
};

struct gedge {
	size_t from, to;
	const struct ditto_edge *e;
	double calls_per_request;
};

struct gplan {
	struct gnode nodes[GRAPH_NODES_MAX];
	size_t n;
	struct gedge *edges;
	size_t ne;
	size_t front;
	size_t order[GRAPH_NODES_MAX];	/* start order: leaves first */
};

/* Whether the model is a graph (more than one service, or edges). */
bool graph_model_is_graph(const struct ditto_model *m);
/* Nodes, ports, edges, front and start order of m; keep holds
 * NAME=HOST:PORT strings (n_keep of them). gplan_free() it. */
int gplan_build(const struct ditto_model *m, const char *const *keep, size_t n_keep,
		struct gplan *p);
void gplan_free(struct gplan *p);
/* Upstream i of node k, in edge order without repeats; false past the last. */
bool gplan_upstream(const struct gplan *p, size_t k, size_t i, size_t *out);
/* Node names and their variables: deploy_name_problem() and
 * deploy_env_name() (deploy_names.c), the rules the manifest's reader
 * checks. */

/* graph.json of the plan into b. */
void graph_manifest_write(const struct gplan *p, struct dbuf *b);

#endif
