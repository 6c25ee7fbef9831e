/* SPDX-License-Identifier: MIT */
/*
 * graph.json read back: the one reader of the graph tree's manifest, for
 * the runner (ditto up, the graph build) and the deployment writer alike.
 * The file is ours but a person may edit it, so it is read with jansson
 * under limits (json_bounded.c) and checked whole before anyone uses it.
 */
#ifndef DITTO_SYNTH_GRAPH_MANIFEST_H
#define DITTO_SYNTH_GRAPH_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph_int.h"

#define MANIFEST_MAX_NODES (GRAPH_NODES_MAX + 0u)	/* what the writer writes at most */
#define MANIFEST_MAX_UPSTREAMS (GRAPH_NODES_MAX + 0u)	/* children of one node */
#define MANIFEST_MAX_NAME (GRAPH_NAME_MAX - 1u)	/* bytes of a node name */
#define MANIFEST_MAX_ADDRESS (GRAPH_ADDR_MAX - 1u)	/* bytes of a kept node's host:port */
#define MANIFEST_MAX_JSON ((size_t)4 << 20)	/* bytes of graph.json */
#define MANIFEST_DNS_LABEL 63u			/* RFC 1123 label */

struct manifest_node {
	char name[MANIFEST_MAX_NAME + 1];	/* [A-Za-z0-9._-]; also its dir */
	char dns[MANIFEST_DNS_LABEL + 1];	/* as a DNS-1035 label (Kubernetes, images) */
	char env[MANIFEST_MAX_NAME + 16];	/* DITTO_UPSTREAM_<ENVNAME> */
	bool kept;				/* a real service left as an address */
	char address[MANIFEST_MAX_ADDRESS + 1];	/* kept: host:port */
	unsigned port;				/* clone: 1..65535; kept: its own, or 0 */
	uint64_t processes, threads, cpu_millicores;
	size_t upstreams[MANIFEST_MAX_UPSTREAMS];	/* indices of its children */
	size_t n_upstreams;
};

struct graph_manifest {
	struct manifest_node *nodes;
	size_t n;
	size_t front;		/* index of the front node (a clone) */
	size_t *order;		/* clone nodes, leaves first (start order) */
	size_t n_order;
};

/* Read and check dir/graph.json (graph_manifest_read.c): names keep the
 * name rule, environment names are the names', ports, addresses and
 * upstreams are valid, the start order holds each clone once, children
 * first. Errors name the file and the JSON path: -ENOENT no graph.json,
 * -DITTO_ECORRUPT malformed, -DITTO_EINVALID a name or value refused,
 * -DITTO_ELIMIT. graph_manifest_free() it, also after an error. */
int graph_manifest_read(const char *dir, struct graph_manifest *g);
/* The same for a buffer (name: for messages); what the fuzz target drives. */
int graph_manifest_parse(const char *buf, size_t len, const char *name, struct graph_manifest *g);
void graph_manifest_free(struct graph_manifest *g);

#endif
