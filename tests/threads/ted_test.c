/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the weighted tree edit distance and of the clustering, on
 * hand-built trees and matrices; no perf needed. Zhang-Shasha is checked
 * against a plain recursive forest distance on small random trees.
 *
 *   ted_test            run the tests (Check: CK_RUN_CASE=<case> picks one)
 *   ted_test --bench    also time TED on pruned 256-node call trees
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tu.h"
#include "threads_int.h"

/* Frame labels of the running test (and of the benchmark). The helpers
 * below abort() rather than assert, as the benchmark runs outside Check. */
static struct labels L;

/* Each test interns its own labels: nothing carries over between tests run
 * in one process (CK_FORK=no), and labels_rank() sees only the test's. */
static void labels_teardown(void)
{
	labels_free(&L);
}

static uint32_t lab(const char *s)
{
	uint32_t id;

	if (labels_intern(&L, s, &id))
		abort();
	return id;
}

/* Add a sample along "a;b;c" with weight w. */
static void add(struct calltree *t, const char *stack, uint64_t w)
{
	uint32_t path[64];
	size_t n = 0;
	char buf[512], *save, *tok;

	snprintf(buf, sizeof(buf), "%s", stack);
	for (tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save))
		path[n++] = lab(tok);
	if (calltree_add(t, path, n, w))
		abort();
}

static void tree(struct calltree *t, const char *root)
{
	if (calltree_init(t, lab(root)))
		abort();
}

static double dist(const struct calltree *a, const struct calltree *b, const uint32_t *rank,
		   double *raw)
{
	struct ted_tree x, y;
	double d = NAN;

	if (ted_tree_build(a, rank, 0, 100000, &x) || ted_tree_build(b, rank, 0, 100000, &y))
		abort();
	if (ted_distance(&x, &y, raw, &d))
		abort();
	ted_tree_free(&x);
	ted_tree_free(&y);
	return d;
}

/* 100 samples along main;work, 60 of them going on into leaf; div divides
 * every weight (a tenth of the load, same shape). */
static void work_tree(struct calltree *t, const char *leaf, uint64_t div)
{
	char stack[64];

	snprintf(stack, sizeof(stack), "main;work;%s", leaf);
	tree(t, "T");
	add(t, stack, 60 / div);
	add(t, "main;work", 40 / div);
}

START_TEST(identical_trees_are_at_distance_0)
{
	struct calltree a, b;
	double raw, d;

	work_tree(&a, "leaf", 1);
	work_tree(&b, "leaf", 1);
	d = dist(&a, &b, NULL, &raw);
	ck_assert_msg(d == 0 && raw == 0, "identical trees: %g", d);
	calltree_free(&a);
	calltree_free(&b);
}
END_TEST

/* Unnormalised, the number of samples is part of the distance. */
START_TEST(ten_times_fewer_samples_are_far_by_weight)
{
	struct calltree a, c;
	double raw, d;

	work_tree(&a, "leaf", 1);
	work_tree(&c, "leaf", 10);
	d = dist(&a, &c, NULL, &raw);
	/* nodes T,main,work,leaf: 100,100,100,60 vs 10,10,10,6 -> 90*3+54 over 360+36 */
	ck_assert_msg(fabs(raw - 324) < 1e-9, "same shape raw %g, want 324", raw);
	ck_assert_msg(fabs(d - 324.0 / 396) < 1e-9 && d > 0.5, "same shape, 10x fewer samples: %g",
		      d);
	calltree_free(&a);
	calltree_free(&c);
}
END_TEST

static double shape_dist(const struct calltree *a, const struct calltree *b)
{
	struct ted_tree x, y;
	uint32_t ra, rb;
	double d = NAN;

	calltree_common_roots(a, b, 0.9, &ra, &rb);
	if (ted_tree_build_at(a, ra, NULL, 0, 100000, &x) ||
	    ted_tree_build_at(b, rb, NULL, 0, 100000, &y))
		abort();
	ted_tree_normalise(&x);
	ted_tree_normalise(&y);
	if (ted_distance(&x, &y, NULL, &d))
		abort();
	ted_tree_free(&x);
	ted_tree_free(&y);
	return d;
}

/* Normalised, a thread's load leaves its distance: one code path at 1:10
 * samples is one shape, a different leaf is not. */
START_TEST(normalised_load_leaves_the_shape)
{
	struct calltree a, c;

	work_tree(&a, "leaf", 1);
	work_tree(&c, "leaf", 10);
	ck_assert_msg(shape_dist(&a, &c) < 1e-12, "same shape, 10x fewer samples: %g",
		      shape_dist(&a, &c));
	calltree_free(&a);
	calltree_free(&c);
}
END_TEST

START_TEST(normalised_other_leaf_is_another_shape)
{
	struct calltree c, other;

	work_tree(&c, "leaf", 10);
	work_tree(&other, "other", 1);
	/* main is the first frame of both: nodes 1,1,0.6 below it, leaf and
	 * other renamed: 1.2 over 5.2 */
	ck_assert_msg(fabs(shape_dist(&c, &other) - 1.2 / 5.2) < 1e-9, "other leaf: %g",
		      shape_dist(&c, &other));
	calltree_free(&c);
	calltree_free(&other);
}
END_TEST

START_TEST(normalised_empty_tree_is_0_to_itself_1_to_samples)
{
	struct calltree a, e;

	work_tree(&a, "leaf", 1);
	tree(&e, "T");
	ck_assert_msg(shape_dist(&e, &e) == 0 && fabs(shape_dist(&e, &a) - 1) < 1e-12,
		      "an empty tree: %g", shape_dist(&e, &a));
	calltree_free(&a);
	calltree_free(&e);
}
END_TEST

/* The same loop started from main() and from start_thread() (in the
 * second, 3% of the samples are the unwinder's partial stacks). */
static void one_loop_two_starts(struct calltree *on_main, struct calltree *started)
{
	tree(on_main, "T");
	tree(started, "T");
	add(on_main, "_start;libc_start_main;main;run;loop;poll", 30);
	add(on_main, "_start;libc_start_main;main;run;loop;serve;write", 70);
	add(started, "clone3;start_thread;worker;loop;poll", 300);
	add(started, "clone3;start_thread;worker;loop;serve;write", 700);
	/* the unwinder's partial stacks: a few percent beside the trunk */
	add(started, "[partial];body", 30);
}

START_TEST(one_loop_from_two_starts_is_one_shape)
{
	struct calltree on_main, started;

	one_loop_two_starts(&on_main, &started);
	ck_assert_msg(shape_dist(&on_main, &started) < 1e-12, "same loop, other start: %g",
		      shape_dist(&on_main, &started));
	calltree_free(&on_main);
	calltree_free(&started);
}
END_TEST

/* Without the common trunk and the normalisation, the same two trees are
 * far apart: the shape distance's equality is its own doing. */
START_TEST(one_loop_from_two_starts_is_far_unstripped)
{
	struct calltree on_main, started;

	one_loop_two_starts(&on_main, &started);
	ck_assert_msg(dist(&on_main, &started, NULL, NULL) > 0.5, "weighted, unstripped: %g",
		      dist(&on_main, &started, NULL, NULL));
	calltree_free(&on_main);
	calltree_free(&started);
}
END_TEST

/* Two threads whose heavy frames meet only in a function both call for a
 * fraction of their samples stay apart. */
START_TEST(threads_meeting_in_one_callee_stay_apart)
{
	struct calltree chain1, chain2;

	tree(&chain1, "T");
	tree(&chain2, "T");
	add(&chain1, "a;b;syscall", 5);
	add(&chain1, "a;b;parse", 5);
	add(&chain2, "x;y;syscall", 5);
	add(&chain2, "x;y;format", 5);
	ck_assert_msg(shape_dist(&chain1, &chain2) > 0.6, "two threads meeting in syscall: %g",
		      shape_dist(&chain1, &chain2));
	calltree_free(&chain1);
	calltree_free(&chain2);
}
END_TEST

START_TEST(disjoint_trees_are_at_distance_1)
{
	struct calltree a, b;

	tree(&a, "A");
	tree(&b, "B");
	add(&a, "x;y", 10);
	add(&b, "p;q;r", 7);
	ck_assert_msg(fabs(dist(&a, &b, NULL, NULL) - 1) < 1e-12, "disjoint: %g",
		      dist(&a, &b, NULL, NULL));
	calltree_free(&a);
	calltree_free(&b);
}
END_TEST

/* Trees without samples: no tree at all, or a root only. */
START_TEST(empty_trees_are_at_distance_0)
{
	struct calltree e1, e2;

	ck_assert_msg(dist(NULL, NULL, NULL, NULL) == 0, "two empty trees");
	tree(&e1, "T");
	tree(&e2, "T");
	ck_assert_msg(dist(&e1, &e2, NULL, NULL) == 0, "two rootonly trees");
	calltree_free(&e1);
	calltree_free(&e2);
}
END_TEST

START_TEST(empty_tree_is_at_distance_1_from_samples)
{
	struct calltree a, e1;

	tree(&a, "A");
	add(&a, "x;y", 10);
	tree(&e1, "T");
	ck_assert_msg(fabs(dist(&e1, &a, NULL, NULL) - 1) < 1e-12, "empty vs sampled: %g",
		      dist(&e1, &a, NULL, NULL));
	calltree_free(&a);
	calltree_free(&e1);
}
END_TEST

/* Classic Zhang-Shasha example: f(d(a c(b)) e) vs f(c(d(a b)) e) is 2 unit edits. */
START_TEST(classic_example_is_2_unit_edits)
{
	struct calltree a, b;
	double raw;

	tree(&a, "f");
	tree(&b, "f");
	add(&a, "d;a", 1);
	add(&a, "d;c;b", 1);
	add(&a, "e", 1);
	add(&b, "c;d;a", 1);
	add(&b, "c;d;b", 1);
	add(&b, "e", 1);
	for (size_t i = 0; i < a.n; i++)
		a.v[i].weight = 1;
	for (size_t i = 0; i < b.n; i++)
		b.v[i].weight = 1;
	dist(&a, &b, NULL, &raw);
	ck_assert_msg(raw == 2, "classic example: %g, want 2", raw);
	calltree_free(&a);
	calltree_free(&b);
}
END_TEST

/* Paths first sampled in another order: equal once siblings are label-ordered. */
START_TEST(sibling_order_is_canonical_by_label)
{
	struct calltree a, b;
	uint32_t *rank;
	double ordered, canon;

	tree(&a, "T");
	tree(&b, "T");
	add(&a, "main;x", 5);
	add(&a, "main;y", 5);
	add(&b, "main;y", 5);
	add(&b, "main;x", 5);
	if (labels_rank(&L, &rank))
		abort();
	ordered = dist(&a, &b, NULL, NULL);
	canon = dist(&a, &b, rank, NULL);
	ck_assert_msg(ordered > 0 && canon == 0, "first-seen order %g, canonical %g", ordered,
		      canon);
	free(rank);
	calltree_free(&a);
	calltree_free(&b);
}
END_TEST

/* --- reference: recursive forest distance on postorder ranges (small trees) --- */
struct ref {
	const struct ted_tree *a, *b;
	double *memo;
	size_t n1, n2;
};

static double ref_fd(struct ref *r, int i0, int i1, int j0, int j1)
{
	/* forests a[i0..i1], b[j0..j1] (postorder ranges, empty if end < start) */
	double *m, best, x;

	if (i1 < i0 && j1 < j0)
		return 0;
	if (i1 < i0)
		return ref_fd(r, i0, i1, j0, j1 - 1) + r->b->w[j1];
	if (j1 < j0)
		return ref_fd(r, i0, i1 - 1, j0, j1) + r->a->w[i1];
	m = &r->memo[(((size_t)i0 * r->n1 + (size_t)i1) * r->n2 + (size_t)j0) * r->n2 + (size_t)j1];
	if (*m >= 0)
		return *m;
	best = ref_fd(r, i0, i1 - 1, j0, j1) + r->a->w[i1];
	x = ref_fd(r, i0, i1, j0, j1 - 1) + r->b->w[j1];
	best = x < best ? x : best;
	int li = (int)r->a->lml[i1], lj = (int)r->b->lml[j1];
	double ren = r->a->label[i1] == r->b->label[j1] ? fabs(r->a->w[i1] - r->b->w[j1])
						       : r->a->w[i1] + r->b->w[j1];

	x = ref_fd(r, li, i1 - 1, lj, j1 - 1) + ref_fd(r, i0, li - 1, j0, lj - 1) + ren;
	best = x < best ? x : best;
	return *m = best;
}

static double ref_ted(const struct ted_tree *a, const struct ted_tree *b)
{
	struct ref r = { a, b, NULL, a->n, b->n };
	size_t cells = a->n * a->n * b->n * b->n;
	double d;

	r.memo = malloc(cells * sizeof(double));
	for (size_t i = 0; i < cells; i++)
		r.memo[i] = -1;
	d = ref_fd(&r, 0, (int)a->n - 1, 0, (int)b->n - 1);
	free(r.memo);
	return d;
}

static void random_tree(struct calltree *t, unsigned *seed, int paths, int alphabet, int depth)
{
	tree(t, "T");
	for (int p = 0; p < paths; p++) {
		char stack[256] = "";
		int len = 1 + rand_r(seed) % depth;

		for (int k = 0; k < len; k++) {
			char f[16];

			snprintf(f, sizeof(f), "%sf%d", k ? ";" : "", rand_r(seed) % alphabet);
			strcat(stack, f);
		}
		add(t, stack, 1 + (uint64_t)(rand_r(seed) % 20));
	}
}

/* What 300 random triples of trees show: pairs (first two, at most 12
 * nodes each) where Zhang-Shasha and the reference differ, pairs with
 * d(x,y) != d(y,x), and triples breaking d(x,z) <= d(x,y) + d(y,z). */
struct random_faults {
	int bad, asym, tri;
};

static void random_triple(unsigned *seed, struct random_faults *f)
{
	struct calltree t[3];
	struct ted_tree x[3];
	double d[3][3];

	for (int k = 0; k < 3; k++) {
		random_tree(&t[k], seed, 1 + rand_r(seed) % 4, 3, 3);
		if (ted_tree_build(&t[k], NULL, 0, 1000, &x[k]))
			abort();
	}
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			if (ted_distance(&x[i], &x[j], &d[i][j], NULL))
				abort();
	if (x[0].n <= 12 && x[1].n <= 12 && fabs(ref_ted(&x[0], &x[1]) - d[0][1]) > 1e-9)
		f->bad++;
	f->asym += fabs(d[0][1] - d[1][0]) > 1e-9;
	f->tri += d[0][2] > d[0][1] + d[1][2] + 1e-9;
	for (int k = 0; k < 3; k++) {
		ted_tree_free(&x[k]);
		calltree_free(&t[k]);
	}
}

/* The same 300 triples for each of the three tests below (fixed seed). */
static struct random_faults random_faults(void)
{
	struct random_faults f = { 0 };
	unsigned seed = 12345;

	for (int iter = 0; iter < 300; iter++)
		random_triple(&seed, &f);
	return f;
}

START_TEST(random_pairs_match_the_recursive_reference)
{
	int bad = random_faults().bad;

	ck_assert_msg(!bad, "%d random pairs differ from the recursive reference", bad);
}
END_TEST

/* With these costs the raw TED is a metric. */
START_TEST(random_pairs_are_symmetric)
{
	int asym = random_faults().asym;

	ck_assert_msg(!asym, "%d asymmetric pairs", asym);
}
END_TEST

START_TEST(random_triples_obey_the_triangle_inequality)
{
	int tri = random_faults().tri;

	ck_assert_msg(!tri, "%d triangle violations", tri);
}
END_TEST

/* A bushy tree of 3000 random paths, and its pruned TED form. */
static void pruned_tree(struct calltree *t, struct ted_tree *x)
{
	unsigned seed = 7;

	random_tree(t, &seed, 3000, 40, 12);
	if (ted_tree_build(t, NULL, TED_MIN_SHARE, TED_MAX_NODES, x))
		abort();
}

START_TEST(pruning_caps_the_nodes)
{
	struct calltree t;
	struct ted_tree x;

	pruned_tree(&t, &x);
	ck_assert_msg(t.n > 1000 && x.n <= TED_MAX_NODES && x.n > 10, "pruned %zu -> %zu nodes",
		      t.n, x.n);
	ted_tree_free(&x);
	calltree_free(&t);
}
END_TEST

START_TEST(pruned_tree_keeps_the_root)
{
	struct calltree t;
	struct ted_tree x;
	bool rooted = true;

	pruned_tree(&t, &x);
	/* Postorder: the root is last, and each subtree [lml(i), i] nests. */
	for (size_t i = 0; i < x.n; i++)
		rooted &= x.lml[i] <= i && x.lml[x.n - 1] == 0;
	ck_assert_msg(rooted && x.w[x.n - 1] == (double)t.v[0].weight,
		      "pruned tree keeps the root");
	ted_tree_free(&x);
	calltree_free(&t);
}
END_TEST

/* 0,1 near; 2,3 near; 4 alone; 5 joins {0,1} on average only under 0.3 */
static const double cluster_d[6][6] = {
	{ 0, .05, .9, .9, .9, .25 },
	{ .05, 0, .9, .9, .9, .25 },
	{ .9, .9, 0, .1, .8, .9 },
	{ .9, .9, .1, 0, .8, .9 },
	{ .9, .9, .8, .8, 0, .9 },
	{ .25, .25, .9, .9, .9, 0 },
};

START_TEST(cluster_at_0_2_keeps_5_apart)
{
	int cls[6];
	size_t n;

	ck_assert_msg(cluster_average(&cluster_d[0][0], 6, 0.2, cls, &n) == 0, "cluster");
	ck_assert_msg(n == 4 && cls[0] == 0 && cls[1] == 0 && cls[2] == 1 && cls[3] == 1 &&
		      cls[4] == 2 && cls[5] == 3, "threshold 0.2: %zu classes %d%d%d%d%d%d", n,
		      cls[0], cls[1], cls[2], cls[3], cls[4], cls[5]);
}
END_TEST

START_TEST(cluster_at_0_3_joins_5_on_average)
{
	int cls[6];
	size_t n;

	ck_assert_msg(cluster_average(&cluster_d[0][0], 6, 0.3, cls, &n) == 0 && n == 3 &&
		      cls[5] == 0, "threshold 0.3: %zu classes, item 5 in %d", n, cls[5]);
}
END_TEST

/* At the threshold: not merged (sklearn's contract). */
START_TEST(cluster_merges_only_below_the_threshold)
{
	int cls[6];
	size_t n;

	ck_assert_msg(cluster_average(&cluster_d[0][0], 6, 0.05, cls, &n) == 0 && n == 6,
		      "d == threshold: %zu", n);
}
END_TEST

START_TEST(cluster_at_1_is_one_class)
{
	int cls[6];
	size_t n;

	ck_assert_msg(cluster_average(&cluster_d[0][0], 6, 1.0, cls, &n) == 0 && n == 1,
		      "threshold 1: %zu classes", n);
}
END_TEST

START_TEST(cluster_refuses_a_threshold_over_1)
{
	int cls[6];
	size_t n;

	ck_assert_msg(cluster_average(&cluster_d[0][0], 6, 1.5, cls, &n) == -EINVAL,
		      "threshold out of range");
}
END_TEST

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * Samples of a synthetic program: 300 functions, each calling 1-4 others
 * (skewed to the first), stacks 8-40 deep, like a service's call graph.
 */
static void program_tree(struct calltree *t, unsigned *seed, int samples)
{
	static int callee[300][4];
	static bool made;

	if (!made) {
		unsigned g = 4242;

		for (int f = 0; f < 300; f++)
			for (int k = 0; k < 4; k++)
				callee[f][k] = rand_r(&g) % 300;
		made = true;
	}
	tree(t, "T");
	for (int p = 0; p < samples; p++) {
		char stack[512] = "", fn[16];
		int depth = 8 + rand_r(seed) % 33, f = 0;

		for (int d = 0; d < depth; d++) {
			int r = rand_r(seed) % 16;

			f = callee[f][r < 10 ? 0 : r < 13 ? 1 : r < 15 ? 2 : 3];
			snprintf(fn, sizeof(fn), "%sg%d", d ? ";" : "", f);
			strcat(stack, fn);
		}
		add(t, stack, 1);
	}
}

static void time_pair(const char *what, struct calltree *t, double min_share)
{
	struct ted_tree x[2];
	double t0, per;
	int reps = 20;

	for (int k = 0; k < 2; k++)
		if (ted_tree_build(&t[k], NULL, min_share, TED_MAX_NODES, &x[k]))
			abort();
	t0 = now_s();
	for (int r = 0; r < reps; r++)
		ted_distance(&x[0], &x[1], NULL, NULL);
	per = (now_s() - t0) / reps;
	printf("bench %s, min share %g: %zu/%zu nodes -> %zu x %zu (keyroots %zu x %zu): "
	       "%.2f ms per TED\n", what, min_share, t[0].n, t[1].n, x[0].n, x[1].n, x[0].nkr,
	       x[1].nkr, per * 1e3);
	for (int k = 0; k < 2; k++)
		ted_tree_free(&x[k]);
}

static void bench(void)
{
	unsigned seed = 99;
	struct calltree t[2];

	for (int k = 0; k < 2; k++)
		random_tree(&t[k], &seed, 20000, 30, 30);
	time_pair("bushy random", t, TED_MIN_SHARE);
	time_pair("bushy random", t, 0);	/* the node cap alone: the worst case */
	for (int k = 0; k < 2; k++)
		calltree_free(&t[k]);
	for (int k = 0; k < 2; k++)
		program_tree(&t[k], &seed, 20000);
	time_pair("call graph", t, TED_MIN_SHARE);
	time_pair("call graph", t, 0);
	for (int k = 0; k < 2; k++)
		calltree_free(&t[k]);
}

/* Generous timeouts (Check's default is 4 s) for sanitizer builds; the
 * checked teardown frees each test's labels in the process that made them. */
static TCase *tcase(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, 50);
	tcase_add_checked_fixture(tc, NULL, labels_teardown);
	suite_add_tcase(s, tc);
	return tc;
}

static Suite *ted_suite(void)
{
	Suite *s = suite_create("ted");
	TCase *weights = tcase(s, "weights"), *shape = tcase(s, "shape");
	TCase *edits = tcase(s, "edits"), *cluster = tcase(s, "cluster");

	tcase_add_test(weights, identical_trees_are_at_distance_0);
	tcase_add_test(weights, ten_times_fewer_samples_are_far_by_weight);
	tcase_add_test(weights, disjoint_trees_are_at_distance_1);
	tcase_add_test(weights, empty_trees_are_at_distance_0);
	tcase_add_test(weights, empty_tree_is_at_distance_1_from_samples);
	tcase_add_test(shape, normalised_load_leaves_the_shape);
	tcase_add_test(shape, normalised_other_leaf_is_another_shape);
	tcase_add_test(shape, normalised_empty_tree_is_0_to_itself_1_to_samples);
	tcase_add_test(shape, one_loop_from_two_starts_is_one_shape);
	tcase_add_test(shape, one_loop_from_two_starts_is_far_unstripped);
	tcase_add_test(shape, threads_meeting_in_one_callee_stay_apart);
	tcase_add_test(edits, classic_example_is_2_unit_edits);
	tcase_add_test(edits, sibling_order_is_canonical_by_label);
	tcase_add_test(edits, random_pairs_match_the_recursive_reference);
	tcase_add_test(edits, random_pairs_are_symmetric);
	tcase_add_test(edits, random_triples_obey_the_triangle_inequality);
	tcase_add_test(edits, pruning_caps_the_nodes);
	tcase_add_test(edits, pruned_tree_keeps_the_root);
	tcase_add_test(cluster, cluster_at_0_2_keeps_5_apart);
	tcase_add_test(cluster, cluster_at_0_3_joins_5_on_average);
	tcase_add_test(cluster, cluster_merges_only_below_the_threshold);
	tcase_add_test(cluster, cluster_at_1_is_one_class);
	tcase_add_test(cluster, cluster_refuses_a_threshold_over_1);
	return s;
}

/* The benchmark runs after the tests, pass or fail, as it always did. */
int main(int argc, char **argv)
{
	int rc = tu_run(ted_suite());

	if (argc > 1 && !strcmp(argv[1], "--bench"))
		bench();
	labels_free(&L);
	return rc;
}
