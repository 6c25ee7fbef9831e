/* SPDX-License-Identifier: MIT */
/*
 * The comparison walk shared by ditto_model_compare() (model_compare.c)
 * and ditto_graph_compare() (graph_compare.c): rows are emitted under the
 * path being walked, by the schema's compare rules (compare.c).
 */
#ifndef DITTO_COMPARE_INT_H
#define DITTO_COMPARE_INT_H

#include "model_int.h"
#include "schema.h"

struct cctx {
	struct dbuf path;
	struct ditto_comparison *out;
	double min_error;
	double req_a, req_b;	/* requests.count of the services being compared */
	int err;
};

/* Start a walk (opts checked, out allocated) and end it: on error, or when
 * c->err is set, the rows are freed and *out stays NULL. */
int compare_begin(struct cctx *c, const struct ditto_compare_opts *opts);
int compare_end(struct cctx *c, struct ditto_comparison **out);

/* One row under the current path (plus `suffix` when not NULL). */
void compare_emit(struct cctx *c, const char *suffix, enum ditto_metric_kind kind, double a,
		  double b, double error);
/* Every comparable field of section s, a against b (either may be the
 * empty map). The graph field is skipped: its elements are paired apart
 * (graph_compare.c). */
void compare_section(struct cctx *c, const struct section *s, const struct dnode *a,
		     const struct dnode *b);
/* Elements of two arrays of section s, paired by their key. */
void compare_elements(struct cctx *c, const struct section *s, const struct dnode *a,
		      const struct dnode *b);

/* The graph rows of ditto_model_compare(), under "graph": see model.h. */
void compare_graphs(struct cctx *c, const struct dnode *ga, const struct dnode *gb);

#endif /* DITTO_COMPARE_INT_H */
