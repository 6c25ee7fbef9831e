/* SPDX-License-Identifier: MIT */
/*
 * Internal interface of the deployment writer (ditto_synth_deploy()):
 * the checked graph of graph.json (graph_manifest.h), the names each engine
 * accepts, a YAML writer that quotes every string, and one generator per
 * engine. Everything here comes from graph.json, which is untrusted.
 */
#ifndef DITTO_DEPLOY_INT_H
#define DITTO_DEPLOY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core_int.h"
#include "graph_manifest.h"

/* graph.json is read by the graph tree's one reader (graph_manifest.h). */

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
int deploy_dockerfile(const struct graph_manifest *g, size_t i, struct dbuf *b);
int deploy_compose(const struct graph_manifest *g, const struct deploy_params *p, struct dbuf *b);
int deploy_k8s_node(const struct graph_manifest *g, size_t i, const struct deploy_params *p,
		    struct dbuf *b);
/* The image of clone node i: <prefix><dns>:latest. */
void deploy_image(const struct graph_manifest *g, size_t i, const struct deploy_params *p,
		  char *out, size_t len);

#endif
