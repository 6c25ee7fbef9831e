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

#endif /* DITTO_MODEL_INT_H */
