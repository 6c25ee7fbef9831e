/* SPDX-License-Identifier: MIT */
/*
 * ditto_model_compare(): the schema walk over the whole model (compare.c),
 * then the graph, whose edges pair across sources (graph_compare.c).
 */
#include <errno.h>

#include "compare_int.h"

DITTO_API int ditto_model_compare(const struct ditto_model *a, const struct ditto_model *b,
				  const struct ditto_compare_opts *opts,
				  struct ditto_comparison **out)
{
	struct cctx c;
	int err;

	if (!out)
		return ditto_err(-EINVAL, "compare: out is NULL");
	*out = NULL;
	if (!a || !b)
		return ditto_err(-EINVAL, "compare: model is NULL");
	if ((err = compare_begin(&c, opts)))
		return err;
	compare_section(&c, &schema_root, a->root, b->root);
	if (!c.err)
		compare_graphs(&c, dn_sub(a->root, "graph", DN_MAP), dn_sub(b->root, "graph", DN_MAP));
	return compare_end(&c, out);
}
