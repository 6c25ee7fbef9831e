/* SPDX-License-Identifier: MIT */
/*
 * Internal interface of the deployment writer (ditto_synth_deploy()):
 * graph.json read under limits into a checked graph, the names each engine
 * accepts, a YAML writer that quotes every string, and one generator per
 * engine. Everything here comes from graph.json, which is untrusted.
 */
#ifndef DITTO_DEPLOY_INT_H
#define DITTO_DEPLOY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core_int.h"

#define DEPLOY_MAX_NODES 256u		/* nodes in one graph.json */
#define DEPLOY_MAX_UPSTREAMS 64u	/* children of one node */
#define DEPLOY_MAX_NAME 128u		/* bytes of a node name */
#define DEPLOY_MAX_ADDRESS 256u		/* bytes of a kept node's host:port */
#define DEPLOY_MAX_JSON ((size_t)4 << 20)	/* bytes of graph.json */
#define DEPLOY_DNS_LABEL 63u		/* RFC 1123 label */

struct deploy_node {
	char name[DEPLOY_MAX_NAME + 1];		/* the model's name: [A-Za-z0-9._-] */
	char dns[DEPLOY_DNS_LABEL + 1];		/* as a DNS-1035 label (Kubernetes, images) */
	char env[DEPLOY_MAX_NAME + 16];		/* DITTO_UPSTREAM_<ENVNAME> */
	bool kept;				/* a real service left as an address */
	char address[DEPLOY_MAX_ADDRESS + 1];	/* kept: host:port */
	unsigned port;				/* clone: its listen port */
	uint64_t processes, threads, cpu_millicores;
	size_t upstreams[DEPLOY_MAX_UPSTREAMS];	/* indices of its children */
	size_t n_upstreams;
};

struct deploy_graph {
	struct deploy_node *nodes;
	size_t n;
	size_t front;		/* index of the front node */
	size_t *order;		/* clone nodes, leaves first (start order) */
	size_t n_order;
};

/* Read and check dir/graph.json (deploy_graph.c). Errors name the file
 * and the JSON path: -ENOENT no graph.json, -DITTO_ECORRUPT malformed,
 * -DITTO_EINVALID a name or value no engine can take, -DITTO_ELIMIT. */
int deploy_graph_read(const char *dir, struct deploy_graph *g);
/* The same for a buffer (name: for messages); what the fuzz target drives. */
int deploy_graph_parse(const char *buf, size_t len, const char *name, struct deploy_graph *g);
void deploy_graph_free(struct deploy_graph *g);

/* Names (deploy_names.c). */
/* NULL when s may name a node ([A-Za-z0-9._-], not "." or ".."), else why. */
const char *deploy_name_problem(const char *s);
/* DITTO_UPSTREAM_ + s upper-cased, [^A-Z0-9] as '_' (the clone's rule). */
void deploy_env_name(const char *s, char *out, size_t len);
/* s as a DNS-1035 label: lower case, runs of other bytes as one '-',
 * no '-' at either end, a leading letter ("n-" added when needed), at
 * most 63 bytes. False when nothing of s is left. */
bool deploy_dns_label(const char *s, char *out, size_t len);
/* Whether s is a DNS-1123 label (a namespace). */
bool deploy_is_dns_label(const char *s);
/* Whether s is host:port with a host of [A-Za-z0-9.-], or [IPv6]:port,
 * and a port 1..65535. */
bool deploy_is_address(const char *s);

/* YAML (deploy_yaml.c): every string a double-quoted scalar in which
 * only printable ASCII appears verbatim; -DITTO_EINVALID (naming what)
 * for a string with other bytes, which no generator passes on. */
int yaml_str(struct dbuf *b, const char *what, const char *s);
/* "  " * depth, then key: */
void yaml_key(struct dbuf *b, unsigned depth, const char *key);

/* The generators: each appends one file's text to b. */
struct deploy_params {
	const char *k8s_namespace;
	const char *image_prefix;
};
int deploy_dockerfile(const struct deploy_graph *g, size_t i, struct dbuf *b);
int deploy_compose(const struct deploy_graph *g, const struct deploy_params *p, struct dbuf *b);
int deploy_k8s_node(const struct deploy_graph *g, size_t i, const struct deploy_params *p,
		    struct dbuf *b);
/* The image of clone node i: <prefix><dns>:latest. */
void deploy_image(const struct deploy_graph *g, size_t i, const struct deploy_params *p,
		  char *out, size_t len);

#endif
