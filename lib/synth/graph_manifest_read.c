/* SPDX-License-Identifier: MIT */
/*
 * graph.json of a graph tree, read for everyone who uses it (the runner,
 * the graph build, the deployment writer): bounded (size, depth, values:
 * json_bounded.c), every member typed and checked, names refused rather
 * than repaired when an engine could misread them, and the start order
 * checked to hold every clone node once, children first. The edges are
 * the clones' own business (their configuration): not read here.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deploy_int.h"
#include "json_bounded.h"

static long find(const struct graph_manifest *g, const char *name)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->nodes[i].name, name))
			return (long)i;
	return -1;
}

static int read_name(struct json_ctx *c, json_t *obj, const char *key, char *out)
{
	const char *s, *why;
	int err = json_get_str(c, obj, key, true, &s);

	if (err)
		return err;
	if ((why = deploy_name_problem(s)))
		return json_fail(c, -DITTO_EINVALID, key, "node name %s", why);
	snprintf(out, MANIFEST_MAX_NAME + 1, "%s", s);
	return 0;
}

static int read_u64(struct json_ctx *c, json_t *obj, const char *key, uint64_t max,
		    uint64_t *out)
{
	bool present;
	int err = json_get_u64(c, obj, key, false, out, &present);

	if (err)
		return err;
	if (!present)
		*out = 0;
	if (*out > max)
		return json_fail(c, -DITTO_ELIMIT, key, "%llu is more than %llu",
				 (unsigned long long)*out, (unsigned long long)max);
	return 0;
}

/* A clone's directory is the node's name (the fixed layout): anything
 * else would point the Dockerfile elsewhere in the tree. */
static int read_kind(struct json_ctx *c, json_t *obj, struct manifest_node *n)
{
	const char *kind, *dir, *addr;
	uint64_t port;
	int err;

	if ((err = json_get_str(c, obj, "kind", true, &kind)))
		return err;
	if (!strcmp(kind, "kept")) {
		n->kept = true;
		if ((err = json_get_str(c, obj, "address", true, &addr)))
			return err;
		if (!deploy_is_address(addr))
			return json_fail(c, -DITTO_EINVALID, "address",
					 "not host:port (host of [A-Za-z0-9.-] or [IPv6], port 1..65535)");
		snprintf(n->address, sizeof(n->address), "%s", addr);
		/* Its port, when given, is one `ditto up` leaves to it. */
		if ((err = read_u64(c, obj, "port", 65535, &port)))
			return err;
		n->port = (unsigned)port;
		return 0;
	}
	if (strcmp(kind, "clone"))
		return json_fail(c, -DITTO_EINVALID, "kind", "neither \"clone\" nor \"kept\"");
	if ((err = json_get_str(c, obj, "dir", false, &dir)))
		return err;
	if (dir && strcmp(dir, n->name))
		return json_fail(c, -DITTO_EINVALID, "dir", "not the node's name");
	if ((err = read_u64(c, obj, "port", 65535, &port)))
		return err;
	if (!port)
		return json_fail(c, -DITTO_EINVALID, "port", "a clone needs a port 1..65535");
	n->port = (unsigned)port;
	return 0;
}

/* The environment name is the clone's rule applied to the name; a
 * different one in the file would wire a parent to nothing. */
static int read_node(struct json_ctx *c, json_t *obj, struct manifest_node *n)
{
	const char *env;
	int err;

	if (!json_is_object(obj))
		return json_fail(c, -DITTO_ECORRUPT, NULL, "not an object");
	if ((err = read_name(c, obj, "name", n->name)) || (err = read_kind(c, obj, n)))
		return err;
	deploy_env_name(n->name, n->env, sizeof(n->env));
	if ((err = json_get_str(c, obj, "env", false, &env)))
		return err;
	if (env && strcmp(env, n->env))
		return json_fail(c, -DITTO_EINVALID, "env", "not %s, the name's", n->env);
	if (!deploy_dns_label(n->name, n->dns, sizeof(n->dns)))
		return json_fail(c, -DITTO_EINVALID, "name", "leaves no DNS label");
	if ((err = read_u64(c, obj, "processes", 1u << 20, &n->processes)) ||
	    (err = read_u64(c, obj, "threads", 1u << 24, &n->threads)) ||
	    (err = read_u64(c, obj, "cpu_millicores", 1u << 30, &n->cpu_millicores)))
		return err;
	return 0;
}

/* Upstream names resolve only once every node is read. */
static int read_upstreams(struct json_ctx *c, json_t *obj, struct graph_manifest *g, size_t i)
{
	struct manifest_node *n = &g->nodes[i];
	json_t *arr;
	size_t k, at;
	json_t *v;
	int err;

	if ((err = json_get_array(c, obj, "upstreams", false, &arr)) || !arr)
		return err;
	if (json_array_size(arr) > MANIFEST_MAX_UPSTREAMS)
		return json_fail(c, -DITTO_ELIMIT, "upstreams", "more than %u", MANIFEST_MAX_UPSTREAMS);
	if (n->kept && json_array_size(arr))
		return json_fail(c, -DITTO_EINVALID, "upstreams", "a kept node calls no one we wire");
	json_array_foreach(arr, k, v) {
		long to = json_is_string(v) ? find(g, json_string_value(v)) : -1;

		at = json_ctx_key(c, "upstreams");
		json_ctx_index(c, k);
		if (to < 0 || (size_t)to == i)
			err = json_fail(c, -DITTO_EINVALID, NULL, to < 0 ? "not a node's name" :
					"the node itself (a cycle)");
		json_ctx_restore(c, at);
		if (err)
			return err;
		for (size_t j = 0; j < n->n_upstreams; j++)
			if (n->upstreams[j] == (size_t)to)
				return json_fail(c, -DITTO_EINVALID, "upstreams", "%s twice",
						 g->nodes[to].name);
		n->upstreams[n->n_upstreams++] = (size_t)to;
	}
	return 0;
}

static int read_nodes(struct json_ctx *c, json_t *doc, struct graph_manifest *g)
{
	json_t *arr, *v;
	size_t i, at;
	int err;

	if ((err = json_get_array(c, doc, "nodes", true, &arr)))
		return err;
	if (!json_array_size(arr) || json_array_size(arr) > MANIFEST_MAX_NODES)
		return json_fail(c, -DITTO_ELIMIT, "nodes", "%zu nodes (1 to %u)",
				 json_array_size(arr), MANIFEST_MAX_NODES);
	if (!(g->nodes = calloc(json_array_size(arr), sizeof(*g->nodes))))
		return ditto_err(-ENOMEM, "graph.json: out of memory");
	json_array_foreach(arr, i, v) {
		at = json_ctx_key(c, "nodes");
		json_ctx_index(c, i);
		err = read_node(c, v, &g->nodes[i]);
		for (size_t j = 0; !err && j < i; j++)
			if (!strcmp(g->nodes[j].name, g->nodes[i].name) ||
			    !strcmp(g->nodes[j].dns, g->nodes[i].dns) ||
			    !strcmp(g->nodes[j].env, g->nodes[i].env))
				err = json_fail(c, -DITTO_EINVALID, "name",
						"%s and %s take the same name, DNS label or variable",
						g->nodes[j].name, g->nodes[i].name);
		json_ctx_restore(c, at);
		if (err)
			return err;
		g->n++;
	}
	json_array_foreach(arr, i, v) {
		at = json_ctx_key(c, "nodes");
		json_ctx_index(c, i);
		err = read_upstreams(c, v, g, i);
		json_ctx_restore(c, at);
		if (err)
			return err;
	}
	return 0;
}

/* Each clone node once, after every clone it calls: what compose's
 * depends_on needs to have no cycle. */
static int read_order(struct json_ctx *c, json_t *doc, struct graph_manifest *g)
{
	size_t clones = 0, i, pos[MANIFEST_MAX_NODES];
	json_t *arr, *v;
	int err;

	if ((err = json_get_array(c, doc, "start_order", true, &arr)))
		return err;
	for (i = 0; i < g->n; i++) {
		clones += !g->nodes[i].kept;
		pos[i] = SIZE_MAX;
	}
	if (json_array_size(arr) != clones)
		return json_fail(c, -DITTO_EINVALID, "start_order", "%zu names for %zu clone nodes",
				 json_array_size(arr), clones);
	if (!(g->order = calloc(clones ? clones : 1, sizeof(*g->order))))
		return ditto_err(-ENOMEM, "graph.json: out of memory");
	json_array_foreach(arr, i, v) {
		long k = json_is_string(v) ? find(g, json_string_value(v)) : -1;

		if (k < 0 || g->nodes[k].kept || pos[k] != SIZE_MAX)
			return json_fail(c, -DITTO_EINVALID, "start_order",
					 "item %zu is no clone node, or one named twice", i);
		pos[k] = i;
		g->order[g->n_order++] = (size_t)k;
	}
	for (i = 0; i < g->n; i++)
		for (size_t j = 0; j < g->nodes[i].n_upstreams; j++) {
			size_t to = g->nodes[i].upstreams[j];

			if (!g->nodes[to].kept && !g->nodes[i].kept && pos[to] > pos[i])
				return json_fail(c, -DITTO_EINVALID, "start_order",
						 "%s starts before %s, which it calls (a cycle?)",
						 g->nodes[i].name, g->nodes[to].name);
		}
	return 0;
}

static int read_doc(json_t *doc, struct json_ctx *c, void *user)
{
	struct graph_manifest *g = user;
	const char *front;
	uint64_t schema;
	bool present;
	long f;
	int err;

	if (!json_is_object(doc))
		return json_fail(c, -DITTO_ECORRUPT, NULL, "not an object");
	if ((err = json_get_u64(c, doc, "schema", true, &schema, &present)))
		return err;
	if (schema != 1)
		return json_fail(c, -DITTO_ESCHEMA, "schema", "%llu (this libditto reads 1)",
				 (unsigned long long)schema);
	if ((err = read_nodes(c, doc, g)) || (err = read_order(c, doc, g)))
		return err;
	if ((err = json_get_str(c, doc, "front", true, &front)))
		return err;
	if ((f = find(g, front)) < 0 || g->nodes[f].kept)
		return json_fail(c, -DITTO_EINVALID, "front", "not a clone node");
	g->front = (size_t)f;
	return 0;
}

int graph_manifest_parse(const char *buf, size_t len, const char *name, struct graph_manifest *g)
{
	struct json_limits lim = { .max_bytes = MANIFEST_MAX_JSON, .max_depth = 8,
				   .max_values = 1u << 20 };
	int err;

	memset(g, 0, sizeof(*g));
	if ((err = json_one_doc(buf, len, name, &lim, read_doc, g)))
		graph_manifest_free(g);
	return err;
}

int graph_manifest_read(const char *dir, struct graph_manifest *g)
{
	char path[PATH_MAX];
	char *buf = NULL;
	size_t len;
	int err;

	memset(g, 0, sizeof(*g));
	if (snprintf(path, sizeof(path), "%s/graph.json", dir) >= (int)sizeof(path))
		return ditto_err(-ENAMETOOLONG, "%s: path too long", dir);
	if ((err = json_read_file(path, MANIFEST_MAX_JSON, &buf, &len))) {
		if (err == -ENOENT)
			return ditto_err(err, "%s is not a graph tree (no graph.json: write it "
					 "with `ditto synth` of a multi-service model)", dir);
		return err;
	}
	err = graph_manifest_parse(buf, len, path, g);
	free(buf);
	return err;
}

void graph_manifest_free(struct graph_manifest *g)
{
	free(g->nodes);
	free(g->order);
	memset(g, 0, sizeof(*g));
}
