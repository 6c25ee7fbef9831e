/* SPDX-License-Identifier: MIT */
/* Generic path access: ditto_model_get_*. */
#include <errno.h>
#include <math.h>

#include "tu.h"

static uint64_t get_u64(const struct ditto_model *m, const char *path)
{
	uint64_t v = 0;
	int rc = ditto_model_get_u64(m, path, &v);

	ck_assert_msg(rc == 0, "get_u64(%s) = %d (%s)", path, rc, ditto_last_error());
	return v;
}

static const char *get_str(const struct ditto_model *m, const char *path)
{
	const char *s = NULL;
	int rc = ditto_model_get_str(m, path, &s);

	ck_assert_msg(rc == 0, "get_str(%s) = %d (%s)", path, rc, ditto_last_error());
	ck_assert_ptr_nonnull(s);
	return s;
}

static double get_f64(const struct ditto_model *m, const char *path)
{
	double v = NAN;
	int rc = ditto_model_get_f64(m, path, &v);

	ck_assert_msg(rc == 0, "get_f64(%s) = %d (%s)", path, rc, ditto_last_error());
	return v;
}

static size_t get_len(const struct ditto_model *m, const char *path)
{
	size_t n = (size_t)-1;
	int rc = ditto_model_get_len(m, path, &n);

	ck_assert_msg(rc == 0, "get_len(%s) = %d (%s)", path, rc, ditto_last_error());
	return n;
}

static enum ditto_value_type get_type(const struct ditto_model *m, const char *path)
{
	enum ditto_value_type t = 0;
	int rc = ditto_model_get_type(m, path, &t);

	ck_assert_msg(rc == 0, "get_type(%s) = %d (%s)", path, rc, ditto_last_error());
	return t;
}

START_TEST(test_path_scalars)
{
	struct ditto_model *m = tu_sample(1);
	struct ditto_meta *meta = ditto_model_meta(m);
	bool b = false;

	ck_assert_uint_eq(get_u64(m, "schema"), DITTO_MODEL_SCHEMA);
	ck_assert_str_eq(get_str(m, "meta.tool_version"), ditto_version());
	ck_assert_uint_eq(get_u64(m, "meta.created"), ditto_meta_created(meta));
	ck_assert_double_eq(get_f64(m, "meta.window_s"), ditto_meta_window_s(meta));
	ck_assert_uint_eq(get_u64(m, "meta.sources"), 1);
	ck_assert_uint_eq(get_u64(m, "meta.host.cores"), ditto_meta_host_cores(meta));
	ck_assert_str_eq(get_str(m, "meta.host.kernel"), "6.1.0-13-amd64");
	ck_assert_str_eq(get_str(m, "meta.load.generator"), "memtier_benchmark");
	ck_assert_str_eq(get_str(m, "services[0].name"), "redis");
	ck_assert_str_eq(get_str(m, "services[0].framing"), "resp");
	ck_assert_str_eq(get_str(m, "services[1].framing"), "memcache-text");
	ck_assert_str_eq(get_str(m, "services[0].network.io_model"), "epoll");
	ck_assert_int_eq(ditto_model_get_bool(m, "services[0].network.network_dispatch", &b), 0);
	ck_assert(b);
	ck_assert_int_eq(ditto_model_get_bool(m, "services[0].network.accept_dispatch", &b), 0);
	ck_assert(!b);
	ck_assert_uint_eq(get_u64(m, "services[0].ports[0]"), 6379);
	/* integers read as floats */
	ck_assert_double_eq(get_f64(m, "services[0].ports[0]"), 6379.0);
	int64_t i = 0;
	ck_assert_int_eq(ditto_model_get_i64(m, "services[1].ports[0]", &i), 0);
	ck_assert_int_eq(i, 11211);
	ck_assert_int_eq(get_type(m, "services[0].name"), DITTO_VALUE_STRING);
	ck_assert_int_eq(get_type(m, "services[0].ports[0]"), DITTO_VALUE_UINT);
	ck_assert_int_eq(get_type(m, "meta.window_s"), DITTO_VALUE_FLOAT);
	ck_assert_int_eq(get_type(m, "services[0].network.accept_dispatch"), DITTO_VALUE_BOOL);
	ck_assert_int_eq(get_type(m, "services"), DITTO_VALUE_ARRAY);
	ck_assert_int_eq(get_type(m, "meta"), DITTO_VALUE_MAP);
	ck_assert_int_eq(get_type(m, ""), DITTO_VALUE_MAP);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_path_index_and_key_select_same_element)
{
	struct ditto_model *m = tu_sample(2);
	struct ditto_service *mc = ditto_model_find_service(m, "memcached");

	ck_assert_str_eq(get_str(m, "services[1].name"), "memcached");
	ck_assert_str_eq(get_str(m, "services[memcached].name"), "memcached");
	ck_assert_uint_eq(get_u64(m, "services[memcached].threads[worker].count"),
			  ditto_thread_class_count(ditto_service_find_thread(mc, "worker")));
	ck_assert_uint_eq(get_u64(m, "services[1].threads[1].count"),
			  get_u64(m, "services[memcached].threads[worker].count"));
	ck_assert_str_eq(get_str(m, "services[redis].threads[bio].role"), "background");
	ck_assert_str_eq(get_str(m, "services[redis].threads[main].woken_by[0]"), "worker");
	ck_assert_str_eq(get_str(m, "services[redis].cpu[worker].thread_class"), "worker");
	ck_assert_uint_eq(get_u64(m, "services[redis].cpu[main].instructions"),
			  ditto_cpu_instructions(ditto_service_find_cpu(
				  ditto_model_find_service(m, "redis"), "main")));
	ck_assert_str_eq(get_str(m, "graph.nodes[1]"), "memcached");
	ck_assert_str_eq(get_str(m, "graph.edges[0].from"), "redis");
	ck_assert_str_eq(get_str(m, "graph.edges[redis:memcached:kernel].mode"), "sync");
	ck_assert_str_eq(get_str(m, "graph.edges[redis:memcached].mode"), "sync");
	ck_assert_uint_eq(get_u64(m, "graph.edges[redis:memcached:kernel].calls"),
			  ditto_edge_calls(ditto_graph_edge(ditto_model_graph(m), 0)));
	bool acc = false;
	ck_assert_int_eq(ditto_model_get_bool(m, "tuning.iterations[1].accepted", &acc), 0);
	ck_assert(acc);
	ck_assert_str_eq(get_str(m, "tuning.iterations[0].note"), "initial clone from the profile");
	ditto_model_free(m);
}
END_TEST

START_TEST(test_path_composite_keys)
{
	struct ditto_model *m = tu_sample(3);
	struct ditto_service *r = ditto_model_find_service(m, "redis");
	struct ditto_syscall *c = ditto_service_find_syscall(r, "main", "read", DITTO_FD_TCP);

	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(get_u64(m, "services[redis].syscalls[main:read:tcp].calls"),
			  ditto_syscall_calls(c));
	ck_assert_uint_eq(get_u64(m, "services[0].syscalls[main:read:tcp].errors"),
			  ditto_syscall_errors(c));
	ck_assert_uint_eq(get_u64(m, "services[redis].syscalls[main:epoll_wait:none].nr"), 232);
	ck_assert_uint_eq(get_u64(m, "services[redis].syscalls[worker:pwrite64:file].nr"), 18);
	ck_assert_str_eq(get_str(m, "services[redis].syscalls[bio:fdatasync:file].fd_kind"), "file");
	/* load points are keyed by their offered rate, written qps=N */
	struct ditto_load_point *lp = ditto_observed_add_load(ditto_service_observed_ensure(r), 1234.5);
	ck_assert_ptr_nonnull(lp);
	ditto_load_point_set_connections(lp, 31);
	ck_assert_uint_eq(get_u64(m, "services[redis].observed.loads[qps=1234.5].connections"), 31);
	/* An integer qps is a key too, never an index. */
	lp = ditto_observed_add_load(ditto_service_observed_ensure(r), 2.0);
	ck_assert_ptr_nonnull(lp);
	ditto_load_point_set_connections(lp, 7);
	ck_assert_uint_eq(get_u64(m, "services[redis].observed.loads[qps=2].connections"), 7);
	/* a key that matches nothing */
	uint64_t v;
	ck_assert_int_eq(ditto_model_get_u64(m, "services[redis].syscalls[main:read:udp].calls", &v),
			 -DITTO_ENOTFOUND);
	ck_assert_int_eq(ditto_model_get_u64(m, "services[redis].syscalls[main:read].calls", &v),
			 -DITTO_ENOTFOUND);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_path_quoted_map_keys)
{
	struct ditto_model *m = tu_sample(4);
	struct ditto_cpu *c = ditto_service_cpu(ditto_model_service(m, 0), 0);
	struct ditto_counts *mix = ditto_cpu_mix(c);
	const char *key;
	uint64_t count;
	char path[256];

	ck_assert_uint_gt(ditto_counts_size(mix), 1);
	for (size_t i = 0; i < ditto_counts_size(mix); i++) {
		ck_assert_int_eq(ditto_counts_entry(mix, i, &key, &count), 0);
		snprintf(path, sizeof(path), "services[0].cpu[0].mix[\"%s\"]", key);
		ck_assert_uint_eq(get_u64(m, path), count);
		ck_assert_int_eq(get_type(m, path), DITTO_VALUE_UINT);
	}
	/* a made-up key with dots, brackets and a colon */
	ck_assert_int_eq(ditto_counts_add(mix, "a.b[c]:d", 5), 0);
	ck_assert_uint_eq(get_u64(m, "services[0].cpu[0].mix[\"a.b[c]:d\"]"), 5);
	ck_assert_uint_eq(get_u64(m, "services[redis].cpu[main].mix[\"a.b[c]:d\"]"), 5);
	ck_assert_int_eq(ditto_model_get_u64(m, "services[0].cpu[0].mix[\"absent.key\"]", &count),
			 -DITTO_ENOTFOUND);
	/* values maps too */
	double d;
	ck_assert_int_eq(ditto_values_get(ditto_tuning_knobs(ditto_model_tuning(m)), "synth.d1_mpki",
					  &d), 0);
	ck_assert_double_eq(get_f64(m, "tuning.knobs[\"synth.d1_mpki\"]"), d);
	/* a key without dots needs no quotes */
	ck_assert_int_eq(ditto_values_get(ditto_tuning_iter_errors(ditto_tuning_iteration(
					  ditto_model_tuning(m), 1)), "d1_miss_rate", &d), 0);
	ck_assert_double_eq(get_f64(m, "tuning.iterations[1].errors.d1_miss_rate"), d);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_path_lengths)
{
	struct ditto_model *m = tu_sample(5);
	struct ditto_service *s = ditto_model_service(m, 0);

	ck_assert_uint_eq(get_len(m, "services"), ditto_model_service_count(m));
	ck_assert_uint_eq(get_len(m, "services[0].threads"), ditto_service_thread_count(s));
	ck_assert_uint_eq(get_len(m, "services[0].syscalls"), ditto_service_syscall_count(s));
	ck_assert_uint_eq(get_len(m, "services[0].ports"), 1);
	ck_assert_uint_eq(get_len(m, "services[0].name"), strlen("redis"));
	ck_assert_uint_eq(get_len(m, "services[0].cpu[0].mix"),
			  ditto_counts_size(ditto_cpu_mix(ditto_service_cpu(s, 0))));
	ck_assert_uint_eq(get_len(m, "graph.nodes"), 3);
	ck_assert_uint_eq(get_len(m, "tuning.iterations"), 2);
	size_t n;
	ck_assert_int_eq(ditto_model_get_len(m, "schema", &n), -DITTO_ETYPE);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_path_histograms)
{
	struct ditto_model *m = tu_sample(6);
	struct ditto_syscall *c = ditto_service_syscall(ditto_model_service(m, 0), 0);
	const struct ditto_hist *h = NULL;

	ck_assert_int_eq(ditto_model_get_hist(m, "services[0].syscalls[0].size", &h), 0);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(ditto_hist_kind(h), DITTO_HIST_LOG2);
	ck_assert_uint_eq(ditto_hist_total(h), ditto_hist_total(ditto_syscall_size(c)));
	ck_assert_double_eq(ditto_hist_distance(h, ditto_syscall_size(c)), 0);
	ck_assert_int_eq(get_type(m, "services[0].syscalls[0].size"), DITTO_VALUE_HIST);

	ck_assert_int_eq(ditto_model_get_hist(m, "services[redis].syscalls[main:read:tcp].latency_ns",
					      &h),
			 0);
	ck_assert_int_eq(ditto_hist_kind(h), DITTO_HIST_LOGLIN);
	ck_assert_int_eq(ditto_model_get_hist(m, "services[0].syscalls[0].flags", &h), 0);
	ck_assert_int_eq(ditto_hist_kind(h), DITTO_HIST_EXACT);
	ck_assert_int_eq(ditto_model_get_hist(m, "graph.edges[0].fanout", &h), 0);
	ck_assert_int_eq(ditto_hist_kind(h), DITTO_HIST_EXACT);
	ck_assert_int_eq(ditto_model_get_hist(m, "services[1].requests.service_ns", &h), 0);
	ck_assert_int_eq(ditto_hist_kind(h), DITTO_HIST_LOGLIN);
	/* not a histogram */
	ck_assert_int_eq(ditto_model_get_hist(m, "services[0].syscalls[0].calls", &h), -DITTO_ETYPE);
	ck_assert_int_eq(ditto_model_get_hist(m, "services[0].syscalls[0]", &h), -DITTO_ETYPE);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_path_json_of_subtree)
{
	struct ditto_model *m = tu_sample(7);
	char *j = NULL, *whole = NULL;

	ck_assert_int_eq(ditto_model_get_json(m, "services[0].ports", NULL, &j), 0);
	ck_assert_str_eq(j, "[6379]");
	ditto_free(j);
	ck_assert_int_eq(ditto_model_get_json(m, "services[0].name", NULL, &j), 0);
	ck_assert_str_eq(j, "\"redis\"");
	ditto_free(j);
	ck_assert_int_eq(ditto_model_get_json(m, "services[0].threads[0].count", NULL, &j), 0);
	char want[32];
	snprintf(want, sizeof(want), "%llu",
		 (unsigned long long)get_u64(m, "services[0].threads[0].count"));
	ck_assert_str_eq(j, want);
	ditto_free(j);
	ck_assert_int_eq(ditto_model_get_json(m, "services[redis].threads[main]", NULL, &j), 0);
	ck_assert_int_eq(j[0], '{');
	ck_assert_ptr_nonnull(strstr(j, "\"name\""));
	ck_assert_ptr_nonnull(strstr(j, "\"main\""));
	ck_assert_ptr_nonnull(strstr(j, "\"role\""));
	ditto_free(j);
	ck_assert_int_eq(ditto_model_get_json(m, "services[0].syscalls[0].size", NULL, &j), 0);
	ck_assert_ptr_nonnull(strstr(j, "\"kind\""));
	ck_assert_ptr_nonnull(strstr(j, "\"log2\""));
	ck_assert_ptr_nonnull(strstr(j, "\"total\""));
	ck_assert_ptr_nonnull(strstr(j, "\"buckets\""));
	ck_assert_ptr_nonnull(strstr(j, "\"lo\""));
	ck_assert_ptr_nonnull(strstr(j, "\"hi\""));
	ck_assert_ptr_nonnull(strstr(j, "\"count\""));
	ditto_free(j);
	/* "" is the whole model, as ditto_model_to_json gives it */
	ck_assert_int_eq(ditto_model_get_json(m, "", NULL, &j), 0);
	ck_assert_int_eq(ditto_model_to_json(m, NULL, &whole), 0);
	ck_assert_str_eq(j, whole);
	ditto_free(j);
	ditto_free(whole);
	/* pretty works on subtrees */
	DITTO_OPTS(ditto_json_opts, pretty, .pretty = true);
	ck_assert_int_eq(ditto_model_get_json(m, "meta", &pretty, &j), 0);
	ck_assert_ptr_nonnull(strchr(j, '\n'));
	ditto_free(j);
	j = (char *)0x1;
	ck_assert_int_eq(ditto_model_get_json(m, "services[9]", NULL, &j), -DITTO_ENOTFOUND);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_path_missing_is_enotfound)
{
	struct ditto_model *m = tu_sample(8);
	uint64_t v;
	const char *s;
	enum ditto_value_type t;

	ck_assert_int_eq(ditto_model_get_u64(m, "services[2].name", &v), -DITTO_ENOTFOUND);
	ck_assert_int_eq(ditto_model_get_str(m, "services[nginx].name", &s), -DITTO_ENOTFOUND);
	ck_assert_int_eq(ditto_model_get_u64(m, "services[0].nope", &v), -DITTO_ENOTFOUND);
	ck_assert_int_eq(ditto_model_get_u64(m, "nope", &v), -DITTO_ENOTFOUND);
	ck_assert_int_eq(ditto_model_get_u64(m, "services[0].threads[ghost].count", &v),
			 -DITTO_ENOTFOUND);
	ck_assert_int_eq(ditto_model_get_u64(m, "services[0].ports[1]", &v), -DITTO_ENOTFOUND);
	ck_assert_int_eq(ditto_model_get_type(m, "meta.host.gpu", &t), -DITTO_ENOTFOUND);
	ck_assert_str_ne(ditto_last_error(), "");
	ditto_model_free(m);
}
END_TEST

START_TEST(test_path_wrong_type_is_etype)
{
	struct ditto_model *m = tu_sample(8);
	uint64_t u;
	int64_t i;
	double d;
	bool b;
	const char *s;

	ck_assert_int_eq(ditto_model_get_u64(m, "services[0].name", &u), -DITTO_ETYPE);
	ck_assert_int_eq(ditto_model_get_i64(m, "services[0].name", &i), -DITTO_ETYPE);
	ck_assert_int_eq(ditto_model_get_f64(m, "services[0].name", &d), -DITTO_ETYPE);
	ck_assert_int_eq(ditto_model_get_str(m, "schema", &s), -DITTO_ETYPE);
	ck_assert_int_eq(ditto_model_get_bool(m, "schema", &b), -DITTO_ETYPE);
	ck_assert_int_eq(ditto_model_get_u64(m, "meta.window_s", &u), -DITTO_ETYPE);
	ck_assert_int_eq(ditto_model_get_str(m, "services", &s), -DITTO_ETYPE);
	ck_assert_int_eq(ditto_model_get_u64(m, "services[0].syscalls[0].size", &u), -DITTO_ETYPE);
	ck_assert_str_ne(ditto_last_error(), "");
	ditto_model_free(m);
}
END_TEST

START_TEST(test_path_bad_syntax_is_einval)
{
	struct ditto_model *m = tu_sample(8);
	static const char *const bad[] = {
		"services[",
		"services[0",
		"services[0]]",
		"services[0]name",
		"meta..window_s",
		"meta.",
		".meta",
		"services[0].cpu[0].mix[\"unterminated",
		"services[0].cpu[0].mix[\"x\"",
		"services[].name",
	};
	uint64_t v;

	char wrong[1024] = "";

	/* collect every path that is not refused, to name them all at once */
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		int rc = ditto_model_get_u64(m, bad[k], &v);
		if (rc != -EINVAL) {
			size_t l = strlen(wrong);
			snprintf(wrong + l, sizeof(wrong) - l, " '%s' -> %d;", bad[k], rc);
		} else {
			ck_assert_str_ne(ditto_last_error(), "");
		}
	}
	ck_assert_msg(wrong[0] == '\0', "expected -EINVAL (%d) for:%s", -EINVAL, wrong);
	ck_assert_int_eq(ditto_model_get_u64(m, NULL, &v), -EINVAL);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_path_strings_borrowed_until_free)
{
	struct ditto_model *m = tu_sample(9);
	const char *a = get_str(m, "services[0].name");
	const char *b = get_str(m, "services[0].name");

	/* lookups of other paths do not invalidate it */
	for (int i = 0; i < 100; i++)
		get_u64(m, "services[1].threads[0].count");
	ck_assert_str_eq(a, "redis");
	ck_assert_str_eq(b, "redis");
	ditto_model_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("path");
	TCase *tc = tu_tcase("path");

	tcase_add_test(tc, test_path_scalars);
	tcase_add_test(tc, test_path_index_and_key_select_same_element);
	tcase_add_test(tc, test_path_composite_keys);
	tcase_add_test(tc, test_path_quoted_map_keys);
	tcase_add_test(tc, test_path_lengths);
	tcase_add_test(tc, test_path_histograms);
	tcase_add_test(tc, test_path_json_of_subtree);
	tcase_add_test(tc, test_path_missing_is_enotfound);
	tcase_add_test(tc, test_path_wrong_type_is_etype);
	tcase_add_test(tc, test_path_bad_syntax_is_einval);
	tcase_add_test(tc, test_path_strings_borrowed_until_free);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
