/* SPDX-License-Identifier: MIT */
/*
 * ditto_synth_deploy(): the deployment files of a graph tree, written to
 * DIR/deploy/ as a whole (a fresh sibling folder renamed into place), so
 * a failure leaves the previous files or none, never a mix. Only a
 * folder libditto wrote (it holds MARKER) is ever replaced.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "deploy_int.h"
#include "synth_int.h"

#include <ditto/synth.h>

#define MARKER ".ditto-deploy"

static int put_file(const char *dir, const char *name, const struct dbuf *b)
{
	char path[PATH_MAX];
	FILE *f;
	bool ok;

	if (b->oom)
		return ditto_err(-ENOMEM, "deploy: out of memory");
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return ditto_err(-ENAMETOOLONG, "deploy: %s/%s: path too long", dir, name);
	if (!(f = fopen(path, "w")))
		return ditto_err(-errno, "deploy: %s: %s", path, strerror(errno));
	ok = fwrite(b->data ? b->data : "", 1, b->len, f) == b->len;
	ok = !fclose(f) && ok;
	return ok ? 0 : ditto_err(-EIO, "deploy: %s: write failed", path);
}

static int make_dir(const char *dir, const char *sub)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", dir, sub) >= (int)sizeof(path))
		return ditto_err(-ENAMETOOLONG, "deploy: %s/%s: path too long", dir, sub);
	if (mkdir(path, 0755))
		return ditto_err(-errno, "deploy: %s: %s", path, strerror(errno));
	return 0;
}

/* One generated file: gen's text into tmp/name. */
static int emit(const char *tmp, const char *name, int (*gen)(const struct graph_manifest *, size_t,
		const struct deploy_params *, struct dbuf *), const struct graph_manifest *g,
		size_t i, const struct deploy_params *p)
{
	struct dbuf b;
	int err;

	dbuf_init(&b);
	err = gen(g, i, p, &b);
	err = err ? err : put_file(tmp, name, &b);
	dbuf_free(&b);
	return err;
}

static int gen_docker(const struct graph_manifest *g, size_t i, const struct deploy_params *p,
		      struct dbuf *b)
{
	(void)p;
	return deploy_dockerfile(g, i, b);
}

static int gen_compose(const struct graph_manifest *g, size_t i, const struct deploy_params *p,
		       struct dbuf *b)
{
	(void)i;
	return deploy_compose(g, p, b);
}

static int write_all(const char *tmp, const struct graph_manifest *g, unsigned targets,
		     const struct deploy_params *p)
{
	char name[MANIFEST_MAX_NAME + 64];
	struct dbuf marker = { 0 };
	int err;

	if ((err = put_file(tmp, MARKER, &marker)))
		return err;
	/* Both engines run the images the Dockerfiles build. */
	if ((err = make_dir(tmp, "docker")))
		return err;
	if ((targets & DITTO_DEPLOY_COMPOSE) && (err = emit(tmp, "compose.yaml", gen_compose, g, 0, p)))
		return err;
	if ((targets & DITTO_DEPLOY_KUBERNETES) && (err = make_dir(tmp, "kubernetes")))
		return err;
	for (size_t k = 0; k < g->n_order; k++) {
		size_t i = g->order[k];

		snprintf(name, sizeof(name), "docker/%s.Dockerfile", g->nodes[i].name);
		if ((err = emit(tmp, name, gen_docker, g, i, p)))
			return err;
		/* Numbered in start order: kubectl applies a folder's files
		 * in name order, leaves first. */
		snprintf(name, sizeof(name), "kubernetes/%03zu-%s.yaml", k, g->nodes[i].dns);
		if ((targets & DITTO_DEPLOY_KUBERNETES) &&
		    (err = emit(tmp, name, deploy_k8s_node, g, i, p)))
			return err;
	}
	return 0;
}

/* tmp replaces dir/deploy, if that is absent or one libditto wrote. */
static int install(const char *dir, const char *tmp)
{
	char dst[PATH_MAX], old[PATH_MAX], mark[PATH_MAX];
	struct stat st;

	if (snprintf(dst, sizeof(dst), "%s/deploy", dir) >= (int)sizeof(dst) ||
	    snprintf(old, sizeof(old), "%s/.deploy-old", dir) >= (int)sizeof(old) ||
	    snprintf(mark, sizeof(mark), "%s/deploy/" MARKER, dir) >= (int)sizeof(mark))
		return ditto_err(-ENAMETOOLONG, "deploy: %s: path too long", dir);
	if (lstat(dst, &st) == 0) {
		if (!S_ISDIR(st.st_mode) || access(mark, F_OK))
			return ditto_err(-ENOTEMPTY, "deploy: %s exists and is not a folder libditto "
					 "wrote: not replaced", dst);
		synth_rm_tree(old);
		if (rename(dst, old))
			return ditto_err(-errno, "deploy: %s: %s", dst, strerror(errno));
	}
	if (rename(tmp, dst))
		return ditto_err(-errno, "deploy: %s: %s", dst, strerror(errno));
	synth_rm_tree(old);
	return 0;
}

static int build_static(const char *dir, const struct graph_manifest *g)
{
	DITTO_OPTS(ditto_build_opts, bo, .static_link = true);
	char path[PATH_MAX];
	int err;

	for (size_t k = 0; k < g->n_order; k++) {
		const char *name = g->nodes[g->order[k]].name;

		if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
			return ditto_err(-ENAMETOOLONG, "deploy: %s/%s: path too long", dir, name);
		if ((err = ditto_synth_build(path, &bo)))
			return err;
	}
	return 0;
}

/* Each clone node's tree is where graph.json says: a Dockerfile copying
 * from a missing folder would fail only at `docker build`. */
static int check_trees(const char *dir, const struct graph_manifest *g)
{
	char path[PATH_MAX];

	for (size_t k = 0; k < g->n_order; k++) {
		const char *name = g->nodes[g->order[k]].name;

		if (snprintf(path, sizeof(path), "%s/%s/Makefile", dir, name) >= (int)sizeof(path))
			return ditto_err(-ENAMETOOLONG, "deploy: %s/%s: path too long", dir, name);
		if (access(path, F_OK))
			return ditto_err(-ENOENT, "deploy: graph.json names clone node %s, but %s/%s "
					 "holds no clone tree", name, dir, name);
	}
	return 0;
}

static int check_opts(const struct ditto_deploy_opts *opts, unsigned *targets,
		      struct deploy_params *p)
{
	int err = OPTS_CHECK(opts, ditto_deploy_opts);

	if (err)
		return err;
	*targets = OPTS_GET(opts, targets, 0u);
	*targets = *targets ? *targets : DITTO_DEPLOY_COMPOSE | DITTO_DEPLOY_KUBERNETES;
	if (*targets & ~(unsigned)(DITTO_DEPLOY_COMPOSE | DITTO_DEPLOY_KUBERNETES))
		return ditto_err(-DITTO_EOPTS, "deploy: unknown targets 0x%x", *targets);
	p->k8s_namespace = OPTS_GET(opts, k8s_namespace, NULL);
	p->k8s_namespace = p->k8s_namespace ? p->k8s_namespace : "default";
	if (!deploy_is_dns_label(p->k8s_namespace))
		return ditto_err(-EINVAL, "deploy: namespace '%s' is not a DNS-1123 label "
				 "([a-z0-9-], at most 63)", p->k8s_namespace);
	p->image_prefix = OPTS_GET(opts, image_prefix, NULL);
	p->image_prefix = p->image_prefix ? p->image_prefix : "ditto-";
	for (const char *s = p->image_prefix; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      strchr("._-/:", *s)) || s - p->image_prefix > 128)
			return ditto_err(-EINVAL, "deploy: image prefix '%s': only [a-z0-9._/:-], "
					 "at most 128 bytes", p->image_prefix);
	return 0;
}

DITTO_API int ditto_synth_deploy(const char *dir, const struct ditto_deploy_opts *opts)
{
	struct deploy_params p;
	struct graph_manifest g;
	char tmp[PATH_MAX];
	unsigned targets;
	int err;

	if ((err = check_opts(opts, &targets, &p)))
		return err;
	if (!dir)
		return ditto_err(-EINVAL, "deploy: no graph tree given");
	if ((err = graph_manifest_read(dir, &g)))
		return err;
	if ((err = check_trees(dir, &g)))
		goto out;
	if (OPTS_GET(opts, build, false) && (err = build_static(dir, &g)))
		goto out;
	if (snprintf(tmp, sizeof(tmp), "%s/.deploy-XXXXXX", dir) >= (int)sizeof(tmp)) {
		err = ditto_err(-ENAMETOOLONG, "deploy: %s: path too long", dir);
		goto out;
	}
	if (!mkdtemp(tmp)) {
		err = ditto_err(-errno, "deploy: %s: %s", tmp, strerror(errno));
		goto out;
	}
	chmod(tmp, 0755);
	err = write_all(tmp, &g, targets, &p);
	err = err ? err : install(dir, tmp);
	if (err)
		synth_rm_tree(tmp);
out:
	graph_manifest_free(&g);
	return err;
}

DITTO_API int ditto_deploy_targets_parse(const char *list, unsigned *targets)
{
	const char *s = list;
	unsigned t = 0;

	if (!list || !targets)
		return ditto_err(-EINVAL, "deploy: no target list");
	while (*s) {
		size_t n = strcspn(s, ",");

		if (n == 7 && !strncmp(s, "compose", n))
			t |= DITTO_DEPLOY_COMPOSE;
		else if ((n == 10 && !strncmp(s, "kubernetes", n)) || (n == 3 && !strncmp(s, "k8s", n)))
			t |= DITTO_DEPLOY_KUBERNETES;
		else
			return ditto_err(-EINVAL, "deploy: target '%.*s' is neither compose nor "
					 "kubernetes", (int)(n > 64 ? 64 : n), s);
		s += n + (s[n] == ',');
	}
	if (!t)
		return ditto_err(-EINVAL, "deploy: empty target list");
	*targets = t;
	return 0;
}
