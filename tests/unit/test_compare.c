/* SPDX-License-Identifier: MIT */
/* ditto_model_compare(): feature-by-feature distance of two models. */
#include <errno.h>
#include <math.h>

#include "tu.h"

/* The per-request rate of a syscall's calls, named as model.h documents
 * ("services[redis].syscalls[main:read:tcp].per_request"). */
#ifndef CALLS_METRIC
#define CALLS_METRIC ".calls_per_request"
#endif

static struct ditto_comparison *compare(const struct ditto_model *a, const struct ditto_model *b,
					double min_error)
{
	DITTO_OPTS(ditto_compare_opts, o, .min_error = min_error);
	struct ditto_comparison *c = NULL;
	int rc = ditto_model_compare(a, b, &o, &c);

	ck_assert_msg(rc == 0, "compare = %d (%s)", rc, ditto_last_error());
	ck_assert_ptr_nonnull(c);
	return c;
}

/* Index of the metric named path, or -1. */
static long find_metric(const struct ditto_comparison *c, const char *path)
{
	for (size_t i = 0; i < ditto_comparison_count(c); i++) {
		const char *p;

		ck_assert_int_eq(ditto_comparison_metric(c, i, &p, NULL, NULL, NULL, NULL), 0);
		if (strcmp(p, path) == 0)
			return (long)i;
	}
	return -1;
}

static void metric(const struct ditto_comparison *c, const char *path,
		   enum ditto_metric_kind *kind, double *a, double *b, double *err)
{
	long i = find_metric(c, path);

	ck_assert_msg(i >= 0, "no metric %s among %zu", path, ditto_comparison_count(c));
	ck_assert_int_eq(ditto_comparison_metric(c, (size_t)i, NULL, kind, a, b, err), 0);
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Path of the first syscall with calls > 0 of service 0, as compare names it. */
static struct ditto_syscall *pick_syscall(struct ditto_model *m, char *prefix, size_t n)
{
	struct ditto_service *s = ditto_model_service(m, 0);

	for (size_t i = 0; i < ditto_service_syscall_count(s); i++) {
		struct ditto_syscall *c = ditto_service_syscall(s, i);

		if (ditto_syscall_calls(c) == 0)
			continue;
		snprintf(prefix, n, "services[%s].syscalls[%s:%s:%s]", ditto_service_name(s),
			 ditto_syscall_thread_class(c), ditto_syscall_name(c),
			 ditto_fd_kind_name(ditto_syscall_fd_kind(c)));
		return c;
	}
	ck_abort_msg("sample has no syscall with calls");
	return NULL;
}

START_TEST(test_compare_self_all_zero)
{
	struct ditto_model *m = tu_sample(1);
	struct ditto_comparison *c = compare(m, m, 0);
	size_t n = ditto_comparison_count(c);
	bool saw_dist = false, saw_scalar = false;

	ck_assert_uint_gt(n, 20);
	for (size_t i = 0; i < n; i++) {
		const char *p;
		enum ditto_metric_kind k;
		double a, b, e;

		ck_assert_int_eq(ditto_comparison_metric(c, i, &p, &k, &a, &b, &e), 0);
		ck_assert_ptr_nonnull(p);
		ck_assert_msg(e == 0, "%s: error %g comparing a model with itself", p, e);
		ck_assert(k == DITTO_METRIC_SCALAR || k == DITTO_METRIC_DISTRIBUTION);
		saw_dist |= k == DITTO_METRIC_DISTRIBUTION;
		saw_scalar |= k == DITTO_METRIC_SCALAR;
		if (k == DITTO_METRIC_SCALAR)
			ck_assert_double_eq(a, b);
	}
	ck_assert(saw_dist);
	ck_assert(saw_scalar);
	ck_assert_double_eq(ditto_comparison_max_error(c), 0);
	ditto_comparison_free(c);

	/* a copy compares the same way */
	struct ditto_model *d = NULL;
	ck_assert_int_eq(ditto_model_dup(m, &d), 0);
	c = compare(m, d, 0);
	ck_assert_uint_eq(ditto_comparison_count(c), n);
	ck_assert_double_eq(ditto_comparison_max_error(c), 0);
	ditto_comparison_free(c);
	ditto_model_free(d);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_compare_metric_paths_use_element_keys)
{
	struct ditto_model *m = tu_sample(1);
	struct ditto_comparison *c = compare(m, m, 0);
	char prefix[256], path[300];

	pick_syscall(m, prefix, sizeof(prefix));
	ck_assert_str_eq(prefix, "services[redis].syscalls[main:read:tcp]");
	snprintf(path, sizeof(path), "%s" CALLS_METRIC, prefix);
	ck_assert_int_ge(find_metric(c, path), 0);
	/* every path is rooted in a section and never uses numeric indexes for
	 * keyed arrays */
	for (size_t i = 0; i < ditto_comparison_count(c); i++) {
		const char *p;

		ditto_comparison_metric(c, i, &p, NULL, NULL, NULL, NULL);
		ck_assert_msg(!strstr(p, "services[0]") && !strstr(p, "syscalls[0]"),
			      "metric path %s uses an index", p);
	}
	ditto_comparison_free(c);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_compare_doubled_calls_gives_error_one_on_that_metric)
{
	struct ditto_model *a = tu_sample(2), *b = NULL;
	char prefix[256], path[300];

	ck_assert_int_eq(ditto_model_dup(a, &b), 0);
	struct ditto_syscall *cb = pick_syscall(b, prefix, sizeof(prefix));
	ck_assert_int_eq(ditto_syscall_set_calls(cb, 2 * ditto_syscall_calls(cb)), 0);
	snprintf(path, sizeof(path), "%s" CALLS_METRIC, prefix);

	struct ditto_comparison *c = compare(a, b, 0);
	enum ditto_metric_kind k;
	double va, vb, e;
	metric(c, path, &k, &va, &vb, &e);
	ck_assert_int_eq(k, DITTO_METRIC_SCALAR);
	ck_assert_double_eq_tol(e, 1.0, 1e-12);
	ck_assert_double_eq_tol(vb, 2 * va, 1e-9 * va);
	struct ditto_syscall *ca = pick_syscall(a, prefix, sizeof(prefix));
	double per_req = ditto_service_per_request(ditto_model_service(a, 0),
						   (double)ditto_syscall_calls(ca));
	ck_assert_double_eq_tol(va, per_req, 1e-12 * per_req);
	ck_assert_double_eq_tol(ditto_comparison_max_error(c), 1.0, 1e-12);

	/* nothing outside that syscall moved */
	for (size_t i = 0; i < ditto_comparison_count(c); i++) {
		const char *p;

		ditto_comparison_metric(c, i, &p, NULL, NULL, NULL, &e);
		if (!has_prefix(p, prefix))
			ck_assert_msg(e == 0, "%s: error %g, expected 0", p, e);
	}
	ditto_comparison_free(c);

	/* relative error is |b - a| / |a|: tripled gives 2 */
	ditto_syscall_set_calls(cb, 3 * ditto_syscall_calls(ca));
	c = compare(a, b, 0);
	metric(c, path, NULL, NULL, NULL, &e);
	ck_assert_double_eq_tol(e, 2.0, 1e-12);
	ditto_comparison_free(c);
	ditto_model_free(a);
	ditto_model_free(b);
}
END_TEST

START_TEST(test_compare_relative_error_zero_cases)
{
	struct ditto_model *a = tu_sample(2), *b = NULL;
	char prefix[256], path[300];
	double e;

	ck_assert_int_eq(ditto_model_dup(a, &b), 0);
	struct ditto_syscall *ca = pick_syscall(a, prefix, sizeof(prefix));
	struct ditto_syscall *cb = pick_syscall(b, prefix, sizeof(prefix));
	snprintf(path, sizeof(path), "%s" CALLS_METRIC, prefix);
	ditto_syscall_set_errors(ca, 0);
	ditto_syscall_set_errors(cb, 0);

	/* only a is 0: error 1 */
	ditto_syscall_set_calls(ca, 0);
	struct ditto_comparison *c = compare(a, b, 0);
	metric(c, path, NULL, NULL, NULL, &e);
	ck_assert_double_eq(e, 1.0);
	ditto_comparison_free(c);

	/* both 0: error 0 */
	ditto_syscall_set_calls(cb, 0);
	c = compare(a, b, 0);
	metric(c, path, NULL, NULL, NULL, &e);
	ck_assert_double_eq(e, 0.0);
	ditto_comparison_free(c);
	ditto_model_free(a);
	ditto_model_free(b);
}
END_TEST

START_TEST(test_compare_scaled_copy_near_zero)
{
	struct ditto_model *a = tu_sample(3), *b = NULL;

	/* b = a merged with itself: every count doubled, every rate the same */
	ck_assert_int_eq(ditto_model_dup(a, &b), 0);
	ck_assert_int_eq(ditto_model_merge(b, a), 0);
	ck_assert_uint_eq(ditto_requests_count(ditto_service_requests(ditto_model_service(b, 0))),
			  2 * ditto_requests_count(ditto_service_requests(ditto_model_service(a, 0))));

	struct ditto_comparison *c = compare(a, b, 0);
	size_t per_req = 0, dists = 0;
	for (size_t i = 0; i < ditto_comparison_count(c); i++) {
		const char *p;
		enum ditto_metric_kind k;
		double e;

		ditto_comparison_metric(c, i, &p, &k, NULL, NULL, &e);
		if (k == DITTO_METRIC_DISTRIBUTION) {
			dists++;
			ck_assert_msg(e < 1e-9, "%s: distribution error %g for a scaled copy", p, e);
		}
		if (strstr(p, "per_request")) {
			per_req++;
			ck_assert_msg(e < 1e-9, "%s: per-request error %g for a scaled copy", p, e);
		}
		ck_assert_msg(k != DITTO_METRIC_ONLY_A && k != DITTO_METRIC_ONLY_B, "%s only in one",
			      p);
	}
	ck_assert_uint_gt(per_req, 5);
	ck_assert_uint_gt(dists, 20);
	ditto_comparison_free(c);
	ditto_model_free(a);
	ditto_model_free(b);
}
END_TEST

START_TEST(test_compare_distribution_disjoint_is_one)
{
	struct ditto_model *a = tu_sample(4), *b = NULL;
	char prefix[256], path[300];
	enum ditto_metric_kind k;
	double e;

	ck_assert_int_eq(ditto_model_dup(a, &b), 0);
	struct ditto_syscall *cb = pick_syscall(b, prefix, sizeof(prefix));
	struct ditto_hist *h = ditto_syscall_size_ensure(cb);
	uint64_t total = ditto_hist_total(h);
	ditto_hist_clear(h);
	ditto_hist_add(h, UINT64_MAX, total); /* a bucket no sample size reaches */
	snprintf(path, sizeof(path), "%s.size", prefix);
	struct ditto_comparison *c = compare(a, b, 0);
	metric(c, path, &k, NULL, NULL, &e);
	ck_assert_int_eq(k, DITTO_METRIC_DISTRIBUTION);
	ck_assert_double_eq_tol(e, 1.0, 1e-12);
	ditto_comparison_free(c);
	ditto_model_free(a);
	ditto_model_free(b);
}
END_TEST

START_TEST(test_compare_mix_distribution)
{
	struct ditto_model *a = tu_sample(4), *b = NULL;
	enum ditto_metric_kind k;
	double e;

	ck_assert_int_eq(ditto_model_dup(a, &b), 0);
	struct ditto_cpu *cb = ditto_service_find_cpu(ditto_model_find_service(b, "redis"), "main");
	struct ditto_counts *mix = ditto_cpu_mix_ensure(cb);
	/* add as many executions again, all of a class a never saw: TV 0.5 */
	ck_assert_int_eq(ditto_counts_add(mix, "x87.fsin.reg.80.x87", ditto_counts_total(mix)), 0);
	struct ditto_comparison *c = compare(a, b, 0);
	metric(c, "services[redis].cpu[main].mix", &k, NULL, NULL, &e);
	ck_assert_int_eq(k, DITTO_METRIC_DISTRIBUTION);
	ck_assert_double_eq_tol(e, 0.5, 1e-9);
	ditto_comparison_free(c);
	ditto_model_free(a);
	ditto_model_free(b);
}
END_TEST

START_TEST(test_compare_only_in_one_side)
{
	struct ditto_model *a = tu_sample(5), *b = NULL;

	ck_assert_int_eq(ditto_model_dup(a, &b), 0);
	struct ditto_service *x = ditto_model_add_service(b, "extra");
	ditto_service_set_framing(x, DITTO_FRAMING_RAW);
	ditto_service_add_syscall(ditto_model_find_service(b, "redis"), "main", "close",
				  DITTO_FD_TCP);

	struct ditto_comparison *c = compare(a, b, 0);
	size_t only_b = 0, only_a = 0;
	bool saw_service = false, saw_syscall = false;
	for (size_t i = 0; i < ditto_comparison_count(c); i++) {
		const char *p;
		enum ditto_metric_kind k;
		double e;

		ditto_comparison_metric(c, i, &p, &k, NULL, NULL, &e);
		if (k == DITTO_METRIC_ONLY_B) {
			only_b++;
			ck_assert_double_eq(e, 1.0);
			saw_service |= strcmp(p, "services[extra]") == 0;
			saw_syscall |= strcmp(p, "services[redis].syscalls[main:close:tcp]") == 0;
		}
		only_a += k == DITTO_METRIC_ONLY_A;
	}
	ck_assert_uint_eq(only_a, 0);
	ck_assert_uint_eq(only_b, 2);
	ck_assert(saw_service);
	ck_assert(saw_syscall);
	ck_assert_double_eq(ditto_comparison_max_error(c), 1.0);
	ditto_comparison_free(c);

	/* swapped: the same elements are ONLY_A */
	c = compare(b, a, 0);
	long i = find_metric(c, "services[extra]");
	ck_assert_int_ge(i, 0);
	enum ditto_metric_kind k;
	ditto_comparison_metric(c, (size_t)i, NULL, &k, NULL, NULL, NULL);
	ck_assert_int_eq(k, DITTO_METRIC_ONLY_A);
	i = find_metric(c, "services[redis].syscalls[main:close:tcp]");
	ck_assert_int_ge(i, 0);
	ditto_comparison_metric(c, (size_t)i, NULL, &k, NULL, NULL, NULL);
	ck_assert_int_eq(k, DITTO_METRIC_ONLY_A);
	ditto_comparison_free(c);
	ditto_model_free(a);
	ditto_model_free(b);
}
END_TEST

/* One service each: paired whatever their names (a clone's service is
 * named apart), and compared as if they had the same name. */
START_TEST(test_compare_one_service_each_pairs_whatever_the_names)
{
	struct ditto_model *a = ditto_model_new(), *b = ditto_model_new();
	struct ditto_service *sa = ditto_model_add_service(a, "redis-server");
	struct ditto_service *sb = ditto_model_add_service(b, "clone");
	double va, vb, e;

	ditto_syscall_set_calls(ditto_service_add_syscall(sa, "main", "read", DITTO_FD_TCP), 200);
	ditto_syscall_set_calls(ditto_service_add_syscall(sb, "main", "read", DITTO_FD_TCP), 300);
	ditto_requests_set_count(ditto_service_requests_ensure(sa), 100);
	ditto_requests_set_count(ditto_service_requests_ensure(sb), 100);

	struct ditto_comparison *c = compare(a, b, 0);
	for (size_t i = 0; i < ditto_comparison_count(c); i++) {
		enum ditto_metric_kind k;

		ditto_comparison_metric(c, i, NULL, &k, NULL, NULL, NULL);
		ck_assert(k != DITTO_METRIC_ONLY_A && k != DITTO_METRIC_ONLY_B);
	}
	metric(c, "services[redis-server].syscalls[main:read:tcp]" CALLS_METRIC, NULL, &va, &vb,
	       &e);
	ck_assert_double_eq(va, 2.0);
	ck_assert_double_eq(vb, 3.0);
	ditto_comparison_free(c);

	/* A second service in b: back to names, nothing in common. */
	ditto_model_add_service(b, "other");
	c = compare(a, b, 0);
	ck_assert_int_ge(find_metric(c, "services[redis-server]"), 0);
	ck_assert_int_ge(find_metric(c, "services[clone]"), 0);
	ditto_comparison_free(c);
	ditto_model_free(a);
	ditto_model_free(b);
}
END_TEST

START_TEST(test_compare_min_error_filters)
{
	struct ditto_model *a = tu_sample(6), *b = tu_sample(7);
	struct ditto_comparison *all = compare(a, b, 0);
	struct ditto_comparison *some = compare(a, b, 0.2);
	size_t above = 0;

	for (size_t i = 0; i < ditto_comparison_count(all); i++) {
		double e;

		ditto_comparison_metric(all, i, NULL, NULL, NULL, NULL, &e);
		above += e > 0.2;
	}
	ck_assert_uint_gt(above, 0);
	ck_assert_uint_lt(above, ditto_comparison_count(all));
	ck_assert_uint_eq(ditto_comparison_count(some), above);
	for (size_t i = 0; i < ditto_comparison_count(some); i++) {
		double e;

		ditto_comparison_metric(some, i, NULL, NULL, NULL, NULL, &e);
		ck_assert(e > 0.2);
	}
	ck_assert_double_eq(ditto_comparison_max_error(some), ditto_comparison_max_error(all));
	ditto_comparison_free(all);
	ditto_comparison_free(some);

	/* a self comparison filtered at any level is empty */
	struct ditto_comparison *none = compare(a, a, 1e-12);
	ck_assert_uint_eq(ditto_comparison_count(none), 0);
	ck_assert_double_eq(ditto_comparison_max_error(none), 0);
	char *json = NULL;
	ck_assert_int_eq(ditto_comparison_to_json(none, &json), 0);
	ck_assert_int_eq(json[0], '[');
	ditto_free(json);
	ditto_comparison_free(none);
	ditto_model_free(a);
	ditto_model_free(b);
}
END_TEST

START_TEST(test_compare_metric_out_of_range)
{
	struct ditto_model *m = tu_sample(1);
	struct ditto_comparison *c = compare(m, m, 0);
	const char *p = NULL;

	ck_assert_int_eq(ditto_comparison_metric(c, ditto_comparison_count(c), &p, NULL, NULL, NULL,
						 NULL),
			 -DITTO_ENOTFOUND);
	ck_assert_int_eq(ditto_comparison_metric(c, 0, NULL, NULL, NULL, NULL, NULL), 0);
	ditto_comparison_free(c);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_compare_to_json)
{
	struct ditto_model *a = tu_sample(1), *b = tu_sample(2);
	struct ditto_comparison *c = compare(a, b, 0);
	char *json = NULL;

	ck_assert_int_eq(ditto_comparison_to_json(c, &json), 0);
	ck_assert_ptr_nonnull(json);
	ck_assert_int_eq(json[0], '[');
	ck_assert_int_eq(json[strlen(json) - 1 - (json[strlen(json) - 1] == '\n')], ']');
	ck_assert_ptr_nonnull(strstr(json, "\"path\""));
	ck_assert_ptr_nonnull(strstr(json, "\"kind\""));
	ck_assert_ptr_nonnull(strstr(json, "\"error\""));
	ck_assert_ptr_nonnull(strstr(json, "services[redis].syscalls[main:read:tcp]" CALLS_METRIC));
	ditto_free(json);
	ditto_comparison_free(c);
	ditto_model_free(a);
	ditto_model_free(b);
}
END_TEST

START_TEST(test_compare_error_is_nonnegative_and_bounded_for_distributions)
{
	struct ditto_model *a = tu_sample(8), *b = tu_sample(9);
	struct ditto_comparison *c = compare(a, b, 0);

	for (size_t i = 0; i < ditto_comparison_count(c); i++) {
		const char *p;
		enum ditto_metric_kind k;
		double e;

		ditto_comparison_metric(c, i, &p, &k, NULL, NULL, &e);
		ck_assert_msg(e >= 0 && isfinite(e), "%s: error %g", p, e);
		if (k == DITTO_METRIC_DISTRIBUTION)
			ck_assert_msg(e <= 1.0, "%s: distance %g > 1", p, e);
	}
	ditto_comparison_free(c);
	ditto_model_free(a);
	ditto_model_free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("compare");
	TCase *tc = tu_tcase("compare");

	tcase_add_test(tc, test_compare_self_all_zero);
	tcase_add_test(tc, test_compare_metric_paths_use_element_keys);
	tcase_add_test(tc, test_compare_doubled_calls_gives_error_one_on_that_metric);
	tcase_add_test(tc, test_compare_relative_error_zero_cases);
	tcase_add_test(tc, test_compare_scaled_copy_near_zero);
	tcase_add_test(tc, test_compare_distribution_disjoint_is_one);
	tcase_add_test(tc, test_compare_mix_distribution);
	tcase_add_test(tc, test_compare_only_in_one_side);
	tcase_add_test(tc, test_compare_one_service_each_pairs_whatever_the_names);
	tcase_add_test(tc, test_compare_min_error_filters);
	tcase_add_test(tc, test_compare_metric_out_of_range);
	tcase_add_test(tc, test_compare_to_json);
	tcase_add_test(tc, test_compare_error_is_nonnegative_and_bounded_for_distributions);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
