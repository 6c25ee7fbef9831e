/* SPDX-License-Identifier: MIT */
/*
 * ditto_synth_graph_write(): a model of several services (or with graph
 * edges) -> one clone tree per node, DIR/<node>/, and the manifest
 * DIR/graph.json, written next to DIR and renamed into place whole.
 * ditto_synth_graph_build(): make in every clone tree the manifest names.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph_int.h"
#include "graph_manifest.h"
#include "synth_int.h"

#include <ditto/synth.h>

/* The exact bytes a caller sent to and got from the external, from its
 * outbound totals: with them the clone's sizes keep their mean, not the
 * middle of their log2 buckets (edge_bytes.c). */
static void bytes_seen(const struct ditto_model *m, const char *from, const char *to,
		       uint64_t *req, uint64_t *resp)
{
	const struct ditto_outbound *o = edge_outbound(m, from, to);

	if (o) {
		*req += ditto_outbound_request_bytes_total(o);
		*resp += ditto_outbound_response_bytes_total(o);
	}
}

/* A leaf service for an external from what its callers saw: its framing
 * and port, one request per call, the calls' sizes, and their latency as
 * the service time. Built on the copy cm, never on the caller's model. */
static int external_service(struct ditto_model *cm, const struct gplan *p, size_t k)
{
	const struct gnode *g = &p->nodes[k];
	struct ditto_service *s = ditto_model_add_service(cm, g->name);
	struct ditto_requests *r = s ? ditto_service_requests_ensure(s) : NULL;
	uint64_t calls = 0, req_total = 0, resp_total = 0;
	int err = 0;

	if (!r)
		return ditto_err(-ENOMEM, "synth: out of memory");
	ditto_service_set_framing(s, g->framing == DITTO_FRAMING_UNKNOWN ? DITTO_FRAMING_RAW :
				  g->framing);
	ditto_service_set_processes(s, 1);
	if (g->port)
		ditto_service_add_port(s, (uint16_t)g->port);
	for (size_t j = 0; j < p->ne && !err; j++) {
		const struct ditto_edge *e = p->edges[j].e;

		if (p->edges[j].to != k)
			continue;
		calls += ditto_edge_calls(e);
		bytes_seen(cm, p->nodes[p->edges[j].from].name, g->name, &req_total, &resp_total);
		if ((err = ditto_hist_merge(ditto_requests_request_bytes_ensure(r),
					    ditto_edge_request_bytes(e))) ||
		    (err = ditto_hist_merge(ditto_requests_response_bytes_ensure(r),
					    ditto_edge_response_bytes(e))) ||
		    (err = ditto_hist_merge(ditto_requests_service_ns_ensure(r),
					    ditto_edge_latency_ns(e))))
			ditto_err(err, "synth: external '%s': the sizes and latency of the calls "
				  "to it do not merge", g->name);
	}
	if (!err && req_total)
		err = ditto_requests_set_request_bytes_total(r, req_total);
	if (!err && resp_total)
		err = ditto_requests_set_response_bytes_total(r, resp_total);
	return err ? err : ditto_requests_set_count(r, calls);
}

/* The copy of m with a service per cloned external; NULL in *out when
 * there is none (the model is used as it is). */
static int externals_model(const struct ditto_model *m, const struct gplan *p,
			   struct ditto_model **out)
{
	int err = 0;

	*out = NULL;
	for (size_t k = 0; k < p->n && !err; k++) {
		if (p->nodes[k].svc || p->nodes[k].kind != GNODE_CLONE)
			continue;
		if (!*out && (err = ditto_model_dup(m, out)))
			return err;
		err = external_service(*out, p, k);
	}
	if (err) {
		ditto_model_free(*out);
		*out = NULL;
	}
	return err;
}

static int write_nodes(const struct ditto_model *m, const struct gplan *p, const char *tmp,
		       const struct ditto_synth_graph_opts *o)
{
	char path[PATH_MAX];
	int err;

	for (size_t k = 0; k < p->n; k++) {
		DITTO_OPTS(ditto_synth_opts, so, .service = p->nodes[k].name,
			   .seed = OPTS_GET(o, seed, 0), .port = p->nodes[k].port,
			   .no_clamp = OPTS_GET(o, no_clamp, false), .knobs = OPTS_GET(o, knobs, NULL));

		if (p->nodes[k].kind != GNODE_CLONE)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", tmp, p->nodes[k].name) >= (int)sizeof(path))
			return ditto_err(-ENAMETOOLONG, "synth: %s: path too long", tmp);
		if ((err = ditto_synth_write(m, path, &so))) {
			ditto_err_prefix("synth: graph node '%s'", p->nodes[k].name);
			return err;
		}
	}
	return 0;
}

static int write_manifest(const struct gplan *p, const char *tmp)
{
	struct tree_entry marker = { SYNTH_TREE_MARKER, "libditto graph tree\n", 20, false };
	struct dbuf b;
	int err;

	dbuf_init(&b);
	graph_manifest_write(p, &b);
	if (b.oom) {
		dbuf_free(&b);
		return ditto_err(-ENOMEM, "synth: out of memory");
	}
	err = tree_put_file(tmp, &(struct tree_entry){ "graph.json", b.data, b.len, false });
	err = err ? err : tree_put_file(tmp, &marker);
	dbuf_free(&b);
	return err ? ditto_err(err, "synth: cannot write the manifest in %s: %s", tmp,
			       strerror(-err)) : 0;
}

static int write_tree(const struct ditto_model *m, const struct gplan *p, const char *dir,
		      const struct ditto_synth_graph_opts *o)
{
	bool exists = access(dir, F_OK) == 0;
	struct ditto_model *cm = NULL;
	char tmp[PATH_MAX];
	int err;

	if (exists && !OPTS_GET(o, force, false))
		return ditto_err(-EEXIST, "synth: %s exists: choose another directory or force "
				 "replacing it (--force)", dir);
	if (exists && (err = synth_tree_replaceable(dir)))
		return err;
	if ((err = externals_model(m, p, &cm)))
		return err;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", dir) >= (int)sizeof(tmp) || !mkdtemp(tmp)) {
		ditto_model_free(cm);
		return ditto_err(errno ? -errno : -ENAMETOOLONG, "synth: cannot create a directory "
				 "next to %s", dir);
	}
	chmod(tmp, 0755);
	err = write_nodes(cm ? cm : m, p, tmp, o);
	err = err ? err : write_manifest(p, tmp);
	if (!err && (err = tree_install(tmp, dir, exists)))
		ditto_err(err, "synth: cannot move the new tree into %s: %s", dir, strerror(-err));
	if (err)
		synth_rm_tree(tmp);
	ditto_model_free(cm);
	return err;
}

DITTO_API int ditto_synth_graph_write(const struct ditto_model *m, const char *dir,
				      const struct ditto_synth_graph_opts *opts)
{
	struct gplan p;
	int err = OPTS_CHECK(opts, ditto_synth_graph_opts);
	size_t n_keep = OPTS_GET(opts, keep_count, 0);
	const char *const *keep = OPTS_GET(opts, keep, NULL);

	if (err)
		return err;
	if (!m || !dir || !*dir)
		return ditto_err(-EINVAL, "synth: a model and an output directory are needed");
	if (n_keep && !keep)
		return ditto_err(-EINVAL, "synth: keep_count without keep");
	if ((err = ditto_model_validate(m, NULL))) {
		ditto_err_prefix("synth: the model is invalid");
		return err;
	}
	if ((err = gplan_build(m, keep, n_keep, &p)))
		return err;
	err = write_tree(m, &p, dir, opts);
	gplan_free(&p);
	return err;
}

/* The clones in the manifest's node order (the front first, as written):
 * the first that fails stops the build and is named. */
DITTO_API int ditto_synth_graph_build(const char *dir, const struct ditto_build_opts *opts)
{
	char path[PATH_MAX];
	struct graph_manifest g;
	int err = OPTS_CHECK(opts, ditto_build_opts);

	if (err)
		return err;
	if (!dir)
		return ditto_err(-EINVAL, "synth: a graph tree is needed");
	if ((err = graph_manifest_read(dir, &g)))
		goto out;
	for (size_t i = 0; !err && i < g.n; i++) {
		const char *name = g.nodes[i].name;

		if (g.nodes[i].kept)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
			err = ditto_err(-ENAMETOOLONG, "synth: %s: path too long", dir);
		else if ((err = ditto_synth_build(path, opts)))
			ditto_err_prefix("synth: graph node '%s'", name);
	}
out:
	graph_manifest_free(&g);
	return err;
}
