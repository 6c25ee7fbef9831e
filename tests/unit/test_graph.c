/* SPDX-License-Identifier: MIT */
/* ditto_graph_compare(), the graph rows of ditto_model_compare(), and
 * ditto_graph_write_dot()'s escaping. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "tu.h"

/* A graph of one service calling another, built alike for either source
 * so that the two sources agree unless a test changes one. */
static struct ditto_edge *add_edge(struct ditto_model *m, enum ditto_edge_source src,
				   const char *from, const char *to, uint64_t calls)
{
	struct ditto_graph *g = ditto_model_graph_ensure(m);
	struct ditto_edge *e;

	ck_assert_int_eq(ditto_graph_add_node(g, from), 0);
	ck_assert_int_eq(ditto_graph_add_node(g, to), 0);
	e = ditto_graph_add_source_edge(g, src, from, to);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(ditto_edge_set_mode(e, DITTO_CALL_SYNC), 0);
	ck_assert_int_eq(ditto_edge_set_order(e, DITTO_ORDER_SEQUENTIAL), 0);
	ck_assert_int_eq(ditto_edge_set_calls(e, calls), 0);
	ck_assert_int_eq(ditto_edge_set_parent_requests(e, 1000), 0);
	ck_assert_int_eq(ditto_hist_add(ditto_edge_fanout_ensure(e), 2, 1000), 0);
	ck_assert_int_eq(ditto_hist_add(ditto_edge_request_bytes_ensure(e), 100, 2000), 0);
	ck_assert_int_eq(ditto_hist_add(ditto_edge_response_bytes_ensure(e), 900, 2000), 0);
	ck_assert_int_eq(ditto_hist_add(ditto_edge_latency_ns_ensure(e), 250000, 2000), 0);
	return e;
}

static struct ditto_model *two_sources(void)
{
	struct ditto_model *m = ditto_model_new();

	ck_assert_ptr_nonnull(m);
	add_edge(m, DITTO_EDGE_KERNEL, "front", "back", 2000);
	add_edge(m, DITTO_EDGE_TRACES, "front", "back", 2000);
	add_edge(m, DITTO_EDGE_KERNEL, "back", "db", 1000);
	add_edge(m, DITTO_EDGE_TRACES, "back", "db", 1000);
	return m;
}

static struct ditto_comparison *kernel_vs_traces(const struct ditto_model *m)
{
	struct ditto_comparison *c = NULL;
	int rc = ditto_graph_compare(m, DITTO_EDGE_KERNEL, m, DITTO_EDGE_TRACES, NULL, &c);

	ck_assert_msg(rc == 0, "graph compare = %d (%s)", rc, ditto_last_error());
	return c;
}

/* The row named path: its kind, sides and error; fails when absent. */
static void row(const struct ditto_comparison *c, const char *path, enum ditto_metric_kind *kind,
		double *a, double *b, double *err)
{
	for (size_t i = 0; i < ditto_comparison_count(c); i++) {
		const char *p;

		ck_assert_int_eq(ditto_comparison_metric(c, i, &p, kind, a, b, err), 0);
		if (!strcmp(p, path))
			return;
	}
	ck_abort_msg("no row %s among %zu", path, ditto_comparison_count(c));
}

START_TEST(test_identical_sources_give_no_error)
{
	struct ditto_model *m = two_sources();
	struct ditto_comparison *c = kernel_vs_traces(m);
	double a, b, err;

	/* Every field of both edges is compared, and all agree. */
	ck_assert_uint_gt(ditto_comparison_count(c), 20);
	ck_assert_double_eq(ditto_comparison_max_error(c), 0);
	row(c, "graph.edges[front:back:kernel/traces].calls_per_parent_requests", NULL, &a, &b,
	    &err);
	ck_assert_double_eq_tol(a, 2.0, 1e-12);
	ck_assert_double_eq_tol(b, 2.0, 1e-12);
	row(c, "graph.edges[back:db:kernel/traces].latency_ns.p99", NULL, NULL, NULL, &err);
	ck_assert_double_eq(err, 0);
	ditto_comparison_free(c);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_mode_mismatch_is_error_one)
{
	struct ditto_model *m = two_sources();
	struct ditto_edge *e = ditto_graph_find_source_edge(ditto_model_graph(m), DITTO_EDGE_TRACES,
							    "back", "db");
	struct ditto_comparison *c;
	enum ditto_metric_kind kind;
	double a, b, err;

	ck_assert_int_eq(ditto_edge_set_mode(e, DITTO_CALL_ASYNC), 0);
	ck_assert_int_eq(ditto_edge_set_order(e, DITTO_ORDER_PARALLEL), 0);
	c = kernel_vs_traces(m);
	row(c, "graph.edges[back:db:kernel/traces].mode", &kind, &a, &b, &err);
	ck_assert_int_eq(kind, DITTO_METRIC_SCALAR);
	ck_assert_double_eq(a, DITTO_CALL_SYNC);
	ck_assert_double_eq(b, DITTO_CALL_ASYNC);
	ck_assert_double_eq(err, 1);
	row(c, "graph.edges[back:db:kernel/traces].order", NULL, NULL, NULL, &err);
	ck_assert_double_eq(err, 1);
	/* The other edge is untouched. */
	row(c, "graph.edges[front:back:kernel/traces].mode", NULL, NULL, NULL, &err);
	ck_assert_double_eq(err, 0);
	ditto_comparison_free(c);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_missing_edges_are_rows)
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_comparison *c;
	enum ditto_metric_kind kind;
	double err;

	add_edge(m, DITTO_EDGE_KERNEL, "front", "back", 2000);
	add_edge(m, DITTO_EDGE_TRACES, "front", "back", 2000);
	add_edge(m, DITTO_EDGE_KERNEL, "back", "db", 1000);	/* the traces missed it */
	add_edge(m, DITTO_EDGE_TRACES, "front", "cache", 10);	/* the kernel missed it */
	c = kernel_vs_traces(m);
	row(c, "graph.edges[back:db:kernel/traces]", &kind, NULL, NULL, &err);
	ck_assert_int_eq(kind, DITTO_METRIC_ONLY_A);
	ck_assert_double_eq(err, 1);
	row(c, "graph.edges[front:cache:kernel/traces]", &kind, NULL, NULL, &err);
	ck_assert_int_eq(kind, DITTO_METRIC_ONLY_B);
	ck_assert_double_eq(err, 1);
	row(c, "graph.edges[front:back:kernel/traces].calls_per_parent_requests", NULL, NULL, NULL,
	    &err);
	ck_assert_double_eq(err, 0);
	ditto_comparison_free(c);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_calls_off_by_ten_percent)
{
	struct ditto_model *m = two_sources();
	struct ditto_edge *e = ditto_graph_find_source_edge(ditto_model_graph(m), DITTO_EDGE_TRACES,
							    "front", "back");
	struct ditto_comparison *c;
	double a, b, err;

	ck_assert_int_eq(ditto_edge_set_calls(e, 2200), 0);
	c = kernel_vs_traces(m);
	row(c, "graph.edges[front:back:kernel/traces].calls_per_parent_requests", NULL, &a, &b,
	    &err);
	ck_assert_double_eq_tol(a, 2.0, 1e-12);
	ck_assert_double_eq_tol(b, 2.2, 1e-12);
	ck_assert_double_eq_tol(err, 0.10, 1e-9);
	ck_assert_double_eq_tol(ditto_comparison_max_error(c), 0.10, 1e-9);
	ditto_comparison_free(c);
	ditto_model_free(m);
}
END_TEST

/* Two models: nodes one lacks, and ditto_model_compare()'s choice of
 * sources (the shared one, kernel with kernel). */
START_TEST(test_model_compare_graph_rows)
{
	struct ditto_model *a = two_sources(), *b = ditto_model_new();
	struct ditto_comparison *c = NULL;
	enum ditto_metric_kind kind;
	double err;

	add_edge(b, DITTO_EDGE_KERNEL, "front", "back", 3000);
	add_edge(b, DITTO_EDGE_KERNEL, "front", "cache", 5);
	ck_assert_int_eq(ditto_model_compare(a, b, NULL, &c), 0);
	row(c, "graph.nodes[db]", &kind, NULL, NULL, &err);
	ck_assert_int_eq(kind, DITTO_METRIC_ONLY_A);
	row(c, "graph.nodes[cache]", &kind, NULL, NULL, &err);
	ck_assert_int_eq(kind, DITTO_METRIC_ONLY_B);
	row(c, "graph.edges[front:back:kernel].calls_per_parent_requests", NULL, NULL, NULL, &err);
	ck_assert_double_eq_tol(err, 0.5, 1e-9);
	row(c, "graph.edges[back:db:kernel]", &kind, NULL, NULL, &err);
	ck_assert_int_eq(kind, DITTO_METRIC_ONLY_A);
	row(c, "graph.edges[front:cache:kernel]", &kind, NULL, NULL, &err);
	ck_assert_int_eq(kind, DITTO_METRIC_ONLY_B);
	/* b has no traces edges: a's are not compared with anything. */
	for (size_t i = 0; i < ditto_comparison_count(c); i++) {
		const char *p;

		ck_assert_int_eq(ditto_comparison_metric(c, i, &p, NULL, NULL, NULL, NULL), 0);
		ck_assert_msg(!strstr(p, "traces"), "row %s", p);
	}
	ditto_comparison_free(c);
	/* A model against itself: no graph row has an error. */
	ck_assert_int_eq(ditto_model_compare(a, a, NULL, &c), 0);
	ck_assert_double_eq(ditto_comparison_max_error(c), 0);
	ditto_comparison_free(c);
	ditto_model_free(b);
	ditto_model_free(a);
}
END_TEST

START_TEST(test_graph_compare_rejects_bad_arguments)
{
	struct ditto_model *m = two_sources();
	struct ditto_comparison *c = (struct ditto_comparison *)m;

	ck_assert_int_eq(ditto_graph_compare(m, 7, m, DITTO_EDGE_KERNEL, NULL, &c), -EINVAL);
	ck_assert_ptr_null(c);
	ck_assert_int_eq(ditto_graph_compare(NULL, 0, m, 0, NULL, &c), -EINVAL);
	ditto_model_free(m);
}
END_TEST

/* Names DOT would misread unless escaped. */
static const char *const hostile[] = {
	"quo\"te", "back\\slash", "trail\\", "new\nline", "{brace}", "<html>", "a\\nb", "-> x",
	"tab\there", "ünï", "p&amp;q",
};

START_TEST(test_dot_escapes_every_name)
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_graph *g = ditto_model_graph_ensure(m);
	char *dot = NULL;

	for (size_t i = 0; i + 1 < sizeof(hostile) / sizeof(hostile[0]); i++)
		add_edge(m, DITTO_EDGE_KERNEL, hostile[i], hostile[i + 1], 10);
	ck_assert_ptr_nonnull(ditto_graph_add_external(g, "<html>"));
	ck_assert_int_eq(ditto_model_validate(m, NULL), 0);
	ck_assert_int_eq(ditto_graph_write_dot(m, NULL, &dot), 0);
	ck_assert_ptr_nonnull(strstr(dot, "\"quo\\\"te\" [shape=box, label=\"quo\\\"te\"];"));
	ck_assert_ptr_nonnull(strstr(dot, "\"back\\\\slash\" [shape=box"));
	ck_assert_ptr_nonnull(strstr(dot, "\"trail\\\\\" [shape=box"));
	ck_assert_ptr_nonnull(strstr(dot, "\"new\\nline\" [shape=box"));
	ck_assert_ptr_nonnull(strstr(dot, "\"a\\\\nb\" [shape=box"));
	/* Graphviz decodes entities in labels: '&' is one there, not in ids. */
	ck_assert_ptr_nonnull(strstr(dot, "\"p&amp;q\" [shape=box, label=\"p&amp;amp;q\"];"));
	ck_assert_ptr_nonnull(strstr(dot, "\"<html>\" [shape=cylinder"));
	/* No raw newline inside a statement: each line is one statement. */
	ck_assert_ptr_null(strstr(dot, "new\nline"));
	ditto_free(dot);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_dot_sources_and_determinism)
{
	struct ditto_model *m = two_sources();
	DITTO_OPTS(ditto_dot_opts, kernel, .sources = 1u << DITTO_EDGE_KERNEL);
	DITTO_OPTS(ditto_dot_opts, bad, .sources = 8);
	char *all = NULL, *again = NULL, *k = NULL;

	ck_assert_int_eq(ditto_graph_write_dot(m, NULL, &all), 0);
	ck_assert_int_eq(ditto_graph_write_dot(m, NULL, &again), 0);
	ck_assert_str_eq(all, again);
	/* Both sources drawn: each edge says which. */
	ck_assert_ptr_nonnull(strstr(all, "label=\"traces\\n2 calls/req\\nsync\\nreq "));
	ck_assert_int_eq(ditto_graph_write_dot(m, &kernel, &k), 0);
	ck_assert_ptr_null(strstr(k, "traces"));
	ck_assert_ptr_nonnull(strstr(k, "\"front\" -> \"back\" [label=\"2 calls/req\\nsync"));
	ditto_free(k);
	ck_assert_int_eq(ditto_graph_write_dot(m, &bad, &k), -EINVAL);
	ck_assert_ptr_null(k);
	ditto_free(all);
	ditto_free(again);
	ditto_model_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("graph");
	TCase *tc = tu_tcase("graph");

	tcase_add_test(tc, test_identical_sources_give_no_error);
	tcase_add_test(tc, test_mode_mismatch_is_error_one);
	tcase_add_test(tc, test_missing_edges_are_rows);
	tcase_add_test(tc, test_calls_off_by_ten_percent);
	tcase_add_test(tc, test_model_compare_graph_rows);
	tcase_add_test(tc, test_graph_compare_rejects_bad_arguments);
	tcase_add_test(tc, test_dot_escapes_every_name);
	tcase_add_test(tc, test_dot_sources_and_determinism);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
