/* SPDX-License-Identifier: MIT */
/* The opaque model and the casts between public handles and tree nodes. */
#ifndef DITTO_MODEL_INT_H
#define DITTO_MODEL_INT_H

#include "codec.h"

struct ditto_model {
	struct dnode *root;
};

/* Public handles are tree nodes (maps, or DN_HIST for histograms). */
#define NODE(h) ((struct dnode *)(h))
#define CNODE(h) ((const struct dnode *)(h))

/* Resolve a path to a node; error -DITTO_ENOTFOUND or -EINVAL. */
int path_resolve(const struct dnode *root, const char *path, const struct dnode **out);

/* ---- decisions every stage makes alike (access.c, compare.c) ---- */

struct ditto_model;
struct ditto_service;
struct ditto_cpu;
/* The service named name, or with name NULL the model's first one; NULL
 * when there is none (no error is set: each caller words its own). */
struct ditto_service *model_pick_service(const struct ditto_model *m, const char *name);
/* A copy of svc (of another model) as a new service of dst; -EEXIST when
 * dst has a service of its name. */
int model_add_service_copy(struct ditto_model *dst, const struct ditto_service *svc);
/* The serving class's cpu entry: the one with the most instructions, the
 * first of them on a tie; NULL when s has none. */
struct ditto_cpu *model_main_cpu(const struct ditto_service *s);
/* |clone - original| / |original|: 0 when they are equal (both 0
 * included), 1 when only the original is 0. The error of a scalar in
 * ditto_model_compare() and of the tuner's metrics. */
double model_rel_error(double original, double clone);

#endif /* DITTO_MODEL_INT_H */
