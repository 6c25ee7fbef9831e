/* SPDX-License-Identifier: MIT */
/* ditto_model_merge(): counts add, keys match, configuration must agree. */
#include <errno.h>
#include <math.h>

#include "tu.h"

/* Bucket-by-bucket equality of h with the sum of a and b. */
static void assert_hist_is_sum(const struct ditto_hist *h, const struct ditto_hist *a,
			       const struct ditto_hist *b, const char *what)
{
	struct ditto_hist *want = ditto_hist_dup(a);

	ck_assert_ptr_nonnull(want);
	ck_assert_int_eq(ditto_hist_merge(want, b), 0);
	ck_assert_msg(ditto_hist_total(h) == ditto_hist_total(a) + ditto_hist_total(b),
		      "%s: total %llu, want %llu + %llu", what,
		      (unsigned long long)ditto_hist_total(h),
		      (unsigned long long)ditto_hist_total(a),
		      (unsigned long long)ditto_hist_total(b));
	ck_assert_uint_eq(ditto_hist_bucket_count(h), ditto_hist_bucket_count(want));
	for (size_t i = 0; i < ditto_hist_bucket_count(want); i++) {
		uint64_t l1, h1, c1, l2, h2, c2;

		ditto_hist_bucket(h, i, &l1, &h1, &c1);
		ditto_hist_bucket(want, i, &l2, &h2, &c2);
		ck_assert_msg(l1 == l2 && h1 == h2 && c1 == c2, "%s: bucket %zu differs", what, i);
	}
	ditto_hist_free(want);
}

/* Snapshot of the numbers the merge must add, per service. */
struct svc_snap {
	uint64_t calls[8], errors[8], seq[8];
	struct ditto_hist *size[8], *lat[8];
	size_t nsys;
	uint64_t req_count, req_conns;
	struct ditto_hist *req_bytes, *svc_ns;
	uint64_t thread_count[8], cpu_ns[8];
	size_t nthr;
	uint64_t insts[8], mix_total[8];
	size_t ncpu;
};

static void snap_service(struct svc_snap *s, struct ditto_service *svc)
{
	memset(s, 0, sizeof(*s));
	s->nsys = ditto_service_syscall_count(svc);
	ck_assert_uint_le(s->nsys, 8);
	for (size_t i = 0; i < s->nsys; i++) {
		struct ditto_syscall *c = ditto_service_syscall(svc, i);

		s->calls[i] = ditto_syscall_calls(c);
		s->errors[i] = ditto_syscall_errors(c);
		s->seq[i] = ditto_syscall_sequential(c);
		s->size[i] = ditto_hist_dup(ditto_syscall_size(c));
		s->lat[i] = ditto_hist_dup(ditto_syscall_latency(c));
	}
	struct ditto_requests *r = ditto_service_requests(svc);
	s->req_count = ditto_requests_count(r);
	s->req_conns = ditto_requests_connections(r);
	s->req_bytes = ditto_hist_dup(ditto_requests_request_bytes(r));
	s->svc_ns = ditto_hist_dup(ditto_requests_service_ns(r));
	s->nthr = ditto_service_thread_count(svc);
	ck_assert_uint_le(s->nthr, 8);
	for (size_t i = 0; i < s->nthr; i++) {
		struct ditto_thread_class *t = ditto_service_thread(svc, i);

		s->thread_count[i] = ditto_thread_class_count(t);
		s->cpu_ns[i] = ditto_thread_class_cpu_ns(t);
	}
	s->ncpu = ditto_service_cpu_count(svc);
	ck_assert_uint_le(s->ncpu, 8);
	for (size_t i = 0; i < s->ncpu; i++) {
		struct ditto_cpu *c = ditto_service_cpu(svc, i);

		s->insts[i] = ditto_cpu_instructions(c);
		s->mix_total[i] = ditto_counts_total(ditto_cpu_mix(c));
	}
}

static void snap_free(struct svc_snap *s)
{
	for (size_t i = 0; i < s->nsys; i++) {
		ditto_hist_free(s->size[i]);
		ditto_hist_free(s->lat[i]);
	}
	ditto_hist_free(s->req_bytes);
	ditto_hist_free(s->svc_ns);
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

START_TEST(test_merge_same_services_adds_counts_exactly)
{
	struct ditto_model *a = tu_sample(1), *b = tu_sample(2);
	struct ditto_meta *ma = ditto_model_meta(a), *mb = ditto_model_meta(b);
	size_t nsvc = ditto_model_service_count(a);
	struct svc_snap sa[4], sb[4];

	ck_assert_uint_eq(nsvc, ditto_model_service_count(b));
	ck_assert_uint_le(nsvc, 4);
	for (size_t i = 0; i < nsvc; i++) {
		struct ditto_service *s = ditto_model_service(a, i);
		struct ditto_service *t = ditto_model_find_service(b, ditto_service_name(s));

		ck_assert_ptr_nonnull(t);
		snap_service(&sa[i], s);
		snap_service(&sb[i], t);
	}
	double win_a = ditto_meta_window_s(ma), win_b = ditto_meta_window_s(mb);
	uint64_t src_a = ditto_meta_sources(ma), src_b = ditto_meta_sources(mb);
	ck_assert_uint_eq(src_a, 1);
	ck_assert_uint_eq(src_b, 1);
	struct ditto_edge *ea = ditto_graph_edge(ditto_model_graph(a), 0);
	struct ditto_edge *eb = ditto_graph_edge(ditto_model_graph(b), 0);
	uint64_t edge_calls = ditto_edge_calls(ea) + ditto_edge_calls(eb);
	uint64_t edge_parents = ditto_edge_parent_requests(ea) + ditto_edge_parent_requests(eb);
	struct ditto_hist *fan_a = ditto_hist_dup(ditto_edge_fanout(ea));
	struct ditto_hist *fan_b = ditto_hist_dup(ditto_edge_fanout(eb));
	/* mix of one class, key by key */
	struct ditto_counts *mix_a = ditto_cpu_mix(ditto_service_cpu(ditto_model_service(a, 0), 0));
	struct ditto_counts *mix_b = ditto_cpu_mix(ditto_service_find_cpu(
		ditto_model_find_service(b, ditto_service_name(ditto_model_service(a, 0))),
		ditto_cpu_thread_class(ditto_service_cpu(ditto_model_service(a, 0), 0))));
	size_t nmix = ditto_counts_size(mix_a);
	char *mix_keys[16];
	uint64_t mix_want[16];
	ck_assert_uint_le(nmix, 16);
	for (size_t i = 0; i < nmix; i++) {
		const char *k;
		uint64_t v;

		ck_assert_int_eq(ditto_counts_entry(mix_a, i, &k, &v), 0);
		mix_keys[i] = strdup(k);
		mix_want[i] = v + ditto_counts_get(mix_b, k);
	}

	ck_assert_int_eq(ditto_model_merge(a, b), 0);

	ck_assert_uint_eq(ditto_meta_sources(ma), 2);
	ck_assert_double_eq_tol(ditto_meta_window_s(ma), win_a + win_b, 1e-9);
	ck_assert_uint_eq(ditto_model_service_count(a), nsvc);
	for (size_t i = 0; i < nsvc; i++) {
		struct ditto_service *s = ditto_model_service(a, i);
		struct svc_snap *x = &sa[i], *y = &sb[i];

		ck_assert_uint_eq(ditto_service_syscall_count(s), x->nsys);
		for (size_t j = 0; j < x->nsys; j++) {
			struct ditto_syscall *c = ditto_service_syscall(s, j);

			ck_assert_uint_eq(ditto_syscall_calls(c), x->calls[j] + y->calls[j]);
			ck_assert_uint_eq(ditto_syscall_errors(c), x->errors[j] + y->errors[j]);
			ck_assert_uint_eq(ditto_syscall_sequential(c), x->seq[j] + y->seq[j]);
			assert_hist_is_sum(ditto_syscall_size(c), x->size[j], y->size[j], "size");
			assert_hist_is_sum(ditto_syscall_latency(c), x->lat[j], y->lat[j], "latency");
		}
		struct ditto_requests *r = ditto_service_requests(s);
		ck_assert_uint_eq(ditto_requests_count(r), x->req_count + y->req_count);
		ck_assert_uint_eq(ditto_requests_connections(r), x->req_conns + y->req_conns);
		assert_hist_is_sum(ditto_requests_request_bytes(r), x->req_bytes, y->req_bytes,
				   "request_bytes");
		assert_hist_is_sum(ditto_requests_service_ns(r), x->svc_ns, y->svc_ns, "service_ns");
		for (size_t j = 0; j < x->nthr; j++) {
			struct ditto_thread_class *t = ditto_service_thread(s, j);

			ck_assert_uint_eq(ditto_thread_class_count(t),
					  max_u64(x->thread_count[j], y->thread_count[j]));
			ck_assert_uint_eq(ditto_thread_class_cpu_ns(t), x->cpu_ns[j] + y->cpu_ns[j]);
		}
		for (size_t j = 0; j < x->ncpu; j++) {
			struct ditto_cpu *c = ditto_service_cpu(s, j);

			ck_assert_uint_eq(ditto_cpu_instructions(c), x->insts[j] + y->insts[j]);
			ck_assert_uint_eq(ditto_counts_total(ditto_cpu_mix(c)),
					  x->mix_total[j] + y->mix_total[j]);
		}
	}
	for (size_t i = 0; i < nmix; i++) {
		ck_assert_uint_eq(ditto_counts_get(mix_a, mix_keys[i]), mix_want[i]);
		free(mix_keys[i]);
	}
	ck_assert_uint_eq(ditto_graph_edge_count(ditto_model_graph(a)), 4);
	ck_assert_uint_eq(ditto_edge_calls(ea), edge_calls);
	ck_assert_uint_eq(ditto_edge_parent_requests(ea), edge_parents);
	assert_hist_is_sum(ditto_edge_fanout(ea), fan_a, fan_b, "fanout");
	ck_assert_int_eq(ditto_model_validate(a, NULL), 0);

	for (size_t i = 0; i < nsvc; i++) {
		snap_free(&sa[i]);
		snap_free(&sb[i]);
	}
	ditto_hist_free(fan_a);
	ditto_hist_free(fan_b);
	ditto_model_free(a);
	ditto_model_free(b);
}
END_TEST

START_TEST(test_merge_leaves_src_unchanged)
{
	struct ditto_model *a = tu_sample(1), *b = tu_sample(2);
	void *before;
	size_t len;

	tu_encode(b, &before, &len);
	ck_assert_int_eq(ditto_model_merge(a, b), 0);
	ck_assert(tu_encoding_is(b, before, len));
	ditto_free(before);
	ditto_model_free(a);
	ditto_model_free(b);
}
END_TEST

START_TEST(test_merge_with_copy_doubles_counts)
{
	struct ditto_model *a = tu_sample(3), *b = NULL;
	ck_assert_int_eq(ditto_model_dup(a, &b), 0);
	struct ditto_syscall *c = ditto_service_syscall(ditto_model_service(a, 1), 2);
	uint64_t calls = ditto_syscall_calls(c);
	uint64_t total = ditto_hist_total(ditto_syscall_ret(c));
	struct ditto_observed *o = ditto_service_observed(ditto_model_service(a, 0));
	double qps = ditto_observed_throughput_qps(o);
	size_t loads = ditto_observed_load_count(o);
	uint64_t tcount = ditto_thread_class_count(ditto_service_thread(ditto_model_service(a, 0), 1));

	ck_assert_int_eq(ditto_model_merge(a, b), 0);
	ck_assert_uint_eq(ditto_syscall_calls(c), 2 * calls);
	ck_assert_uint_eq(ditto_hist_total(ditto_syscall_ret(c)), 2 * total);
	/* equal keys matched, not appended */
	ck_assert_uint_eq(ditto_observed_load_count(o), loads);
	ck_assert_uint_eq(ditto_service_syscall_count(ditto_model_service(a, 1)),
			  ditto_service_syscall_count(ditto_model_service(b, 1)));
	/* a mean of equal rates is the rate */
	ck_assert_double_eq_tol(ditto_observed_throughput_qps(o), qps, 1e-6);
	ck_assert_uint_eq(ditto_thread_class_count(ditto_service_thread(ditto_model_service(a, 0), 1)),
			  tcount);
	ck_assert_uint_eq(ditto_meta_sources(ditto_model_meta(a)), 2);
	ditto_model_free(a);
	ditto_model_free(b);
}
END_TEST

START_TEST(test_merge_unmatched_elements_copied)
{
	struct ditto_model *a = tu_sample(1), *b = NULL;
	ck_assert_int_eq(ditto_model_dup(a, &b), 0);

	/* only in src: a service, a syscall, a cpu class, a load point, an edge */
	struct ditto_service *ng = ditto_model_add_service(b, "nginx");
	ck_assert_ptr_nonnull(ng);
	ditto_service_set_framing(ng, DITTO_FRAMING_HTTP1);
	ditto_service_add_port(ng, 80);
	struct ditto_thread_class *t = ditto_service_add_thread(ng, "worker");
	ditto_thread_class_set_count(t, 4);
	ditto_thread_class_set_role(t, DITTO_ROLE_WORKER);
	struct ditto_syscall *sc = ditto_service_add_syscall(ng, "worker", "writev", DITTO_FD_TCP);
	ditto_syscall_set_calls(sc, 77);
	ditto_hist_add(ditto_syscall_size_ensure(sc), 1000, 77);
	ditto_requests_set_count(ditto_service_requests_ensure(ng), 70);

	struct ditto_service *rb = ditto_model_find_service(b, "redis");
	struct ditto_syscall *close_sc = ditto_service_add_syscall(rb, "main", "close", DITTO_FD_TCP);
	ditto_syscall_set_calls(close_sc, 12);
	ditto_syscall_set_nr(close_sc, 3);
	struct ditto_load_point *lp = ditto_observed_add_load(ditto_service_observed_ensure(rb), 123.0);
	ditto_load_point_set_connections(lp, 9);
	ditto_hist_add(ditto_load_point_latency_ensure(lp), 50000, 10);
	ditto_graph_add_node(ditto_model_graph_ensure(b), "nginx");
	struct ditto_edge *e = ditto_graph_add_edge(ditto_model_graph_ensure(b), "nginx", "redis");
	ditto_edge_set_calls(e, 5);

	ck_assert_int_eq(ditto_model_merge(a, b), 0);

	ck_assert_uint_eq(ditto_model_service_count(a), ditto_model_service_count(b));
	struct ditto_service *na = ditto_model_find_service(a, "nginx");
	ck_assert_ptr_nonnull(na);
	ck_assert_int_eq(ditto_service_framing(na), DITTO_FRAMING_HTTP1);
	ck_assert_uint_eq(ditto_service_port_count(na), 1);
	ck_assert_uint_eq(ditto_service_port(na, 0), 80);
	ck_assert_uint_eq(ditto_thread_class_count(ditto_service_find_thread(na, "worker")), 4);
	struct ditto_syscall *nsc = ditto_service_find_syscall(na, "worker", "writev", DITTO_FD_TCP);
	ck_assert_ptr_nonnull(nsc);
	ck_assert_uint_eq(ditto_syscall_calls(nsc), 77);
	ck_assert_uint_eq(ditto_hist_total(ditto_syscall_size(nsc)), 77);
	ck_assert_uint_eq(ditto_requests_count(ditto_service_requests(na)), 70);

	/* the copied subtree is identical to the source's */
	char *ja = NULL, *jb = NULL;
	ck_assert_int_eq(ditto_model_get_json(a, "services[nginx]", NULL, &ja), 0);
	ck_assert_int_eq(ditto_model_get_json(b, "services[nginx]", NULL, &jb), 0);
	ck_assert_str_eq(ja, jb);
	ditto_free(ja);
	ditto_free(jb);

	struct ditto_service *ra = ditto_model_find_service(a, "redis");
	struct ditto_syscall *ca = ditto_service_find_syscall(ra, "main", "close", DITTO_FD_TCP);
	ck_assert_ptr_nonnull(ca);
	ck_assert_uint_eq(ditto_syscall_calls(ca), 12);
	ck_assert_uint_eq(ditto_syscall_nr(ca), 3);
	struct ditto_load_point *la = ditto_observed_find_load(ditto_service_observed(ra), 123.0);
	ck_assert_ptr_nonnull(la);
	ck_assert_uint_eq(ditto_load_point_connections(la), 9);
	ck_assert_uint_eq(ditto_hist_total(ditto_load_point_latency(la)), 10);
	struct ditto_graph *g = ditto_model_graph(a);
	ck_assert_uint_eq(ditto_graph_node_count(g), 4);
	struct ditto_edge *ee = ditto_graph_find_edge(g, "nginx", "redis");
	ck_assert_ptr_nonnull(ee);
	ck_assert_uint_eq(ditto_edge_calls(ee), 5);
	ck_assert_uint_eq(ditto_graph_edge_count(g), 5);
	ditto_model_free(a);
	ditto_model_free(b);
}
END_TEST

START_TEST(test_merge_thread_counts_keep_max)
{
	struct ditto_model *a = tu_sample(1), *b = tu_sample(1);
	struct ditto_service *sa = ditto_model_service(a, 0), *sb = ditto_model_service(b, 0);

	ditto_thread_class_set_count(ditto_service_find_thread(sa, "worker"), 3);
	ditto_thread_class_set_count(ditto_service_find_thread(sb, "worker"), 7);
	ditto_thread_class_set_count(ditto_service_find_thread(sa, "bio"), 9);
	ditto_thread_class_set_count(ditto_service_find_thread(sb, "bio"), 2);
	ck_assert_int_eq(ditto_model_merge(a, b), 0);
	ck_assert_uint_eq(ditto_thread_class_count(ditto_service_find_thread(sa, "worker")), 7);
	ck_assert_uint_eq(ditto_thread_class_count(ditto_service_find_thread(sa, "bio")), 9);
	ditto_model_free(a);
	ditto_model_free(b);
}
END_TEST

/* A merge that must fail with EMISMATCH, leave dst as it was, and name
 * the conflicting field. */
static void assert_mismatch(struct ditto_model *a, struct ditto_model *b, const char *field,
			    const char *where_index, const char *where_key)
{
	void *before;
	size_t len;

	tu_encode(a, &before, &len);
	int rc = ditto_model_merge(a, b);
	ck_assert_msg(rc == -DITTO_EMISMATCH, "merge = %d (%s)", rc, ditto_last_error());
	tu_assert_err_has(field);
	const char *msg = ditto_last_error();
	ck_assert_msg(strstr(msg, where_index) || strstr(msg, where_key),
		      "message \"%s\" names neither %s nor %s", msg, where_index, where_key);
	ck_assert_msg(tu_encoding_is(a, before, len), "dst changed by a failed merge");
	ditto_free(before);
}

START_TEST(test_merge_conflicting_framing_mismatch)
{
	struct ditto_model *a = tu_sample(1), *b = tu_sample(2);

	/* another service merges first, so a partial merge would show */
	ditto_service_set_framing(ditto_model_find_service(b, "memcached"), DITTO_FRAMING_HTTP1);
	assert_mismatch(a, b, "framing", "services[1].framing", "services[memcached].framing");
	ditto_model_free(a);
	ditto_model_free(b);
}
END_TEST

START_TEST(test_merge_conflicting_role_mismatch)
{
	struct ditto_model *a = tu_sample(1), *b = tu_sample(2);
	struct ditto_service *s = ditto_model_find_service(b, "redis");

	ditto_thread_class_set_role(ditto_service_find_thread(s, "bio"), DITTO_ROLE_NETWORK);
	assert_mismatch(a, b, "role", "services[0].threads[2].role",
			"services[redis].threads[bio].role");
	ditto_model_free(a);
	ditto_model_free(b);
}
END_TEST

START_TEST(test_merge_conflicting_io_model_mismatch)
{
	struct ditto_model *a = tu_sample(1), *b = tu_sample(2);
	struct ditto_service *s = ditto_model_find_service(b, "memcached");

	ditto_network_set_io_model(ditto_service_network(s), DITTO_IO_SELECT);
	assert_mismatch(a, b, "io_model", "services[1].network.io_model",
			"services[memcached].network.io_model");
	ditto_model_free(a);
	ditto_model_free(b);
}
END_TEST

START_TEST(test_merge_count_overflow_leaves_dst_unchanged)
{
	struct ditto_model *a = tu_sample(1), *b = tu_sample(2);
	void *before;
	size_t len;

	ditto_syscall_set_calls(ditto_service_syscall(ditto_model_service(a, 1), 4), UINT64_MAX - 1);
	ditto_syscall_set_errors(ditto_service_syscall(ditto_model_service(a, 1), 4), 0);
	tu_encode(a, &before, &len);
	int rc = ditto_model_merge(a, b);
	ck_assert_msg(rc == -EOVERFLOW, "merge = %d (%s)", rc, ditto_last_error());
	tu_assert_err_has("calls");
	ck_assert(tu_encoding_is(a, before, len));
	ditto_free(before);
	ditto_model_free(a);
	ditto_model_free(b);
}
END_TEST

static struct ditto_model *one_service(double throughput, double achieved)
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_service *s = ditto_model_add_service(m, "svc");
	struct ditto_observed *o = ditto_service_observed_ensure(s);

	ditto_service_set_framing(s, DITTO_FRAMING_RAW);
	ditto_observed_set_throughput_qps(o, throughput);
	ditto_load_point_set_achieved_qps(ditto_observed_add_load(o, 1000), achieved);
	return m;
}

START_TEST(test_merge_observed_rates_weighted_by_sources)
{
	struct ditto_model *a = one_service(100, 900), *b = one_service(200, 1000),
			   *c = one_service(300, 800);
	struct ditto_observed *o = ditto_service_observed(ditto_model_service(a, 0));

	ck_assert_int_eq(ditto_model_merge(a, b), 0);
	ck_assert_uint_eq(ditto_meta_sources(ditto_model_meta(a)), 2);
	ck_assert_double_eq_tol(ditto_observed_throughput_qps(o), 150, 1e-9);
	ck_assert_double_eq_tol(ditto_load_point_achieved_qps(ditto_observed_load(o, 0)), 950, 1e-9);
	/* a holds two runs now, c one: weights 2 and 1 */
	ck_assert_int_eq(ditto_model_merge(a, c), 0);
	ck_assert_uint_eq(ditto_meta_sources(ditto_model_meta(a)), 3);
	ck_assert_double_eq_tol(ditto_observed_throughput_qps(o), 200, 1e-9);
	ck_assert_double_eq_tol(ditto_load_point_achieved_qps(ditto_observed_load(o, 0)),
				(950.0 * 2 + 800) / 3, 1e-9);
	ditto_model_free(a);
	ditto_model_free(b);
	ditto_model_free(c);
}
END_TEST

START_TEST(test_merge_ports_and_woken_by_union)
{
	struct ditto_model *a = tu_sample(1), *b = tu_sample(1);
	struct ditto_service *sb = ditto_model_find_service(b, "redis");

	ditto_service_add_port(sb, 16379);
	ditto_thread_class_add_woken_by(ditto_service_find_thread(sb, "main"), "bio");
	ck_assert_int_eq(ditto_model_merge(a, b), 0);
	struct ditto_service *sa = ditto_model_find_service(a, "redis");
	ck_assert_uint_eq(ditto_service_port_count(sa), 2);
	ck_assert_uint_eq(ditto_service_port(sa, 0), 6379);
	ck_assert_uint_eq(ditto_service_port(sa, 1), 16379);
	struct ditto_thread_class *t = ditto_service_find_thread(sa, "main");
	ck_assert_uint_eq(ditto_thread_class_woken_by_count(t), 2);
	ck_assert_str_eq(ditto_thread_class_woken_by(t, 0), "worker");
	ck_assert_str_eq(ditto_thread_class_woken_by(t, 1), "bio");
	ditto_model_free(a);
	ditto_model_free(b);
}
END_TEST

START_TEST(test_merge_into_empty_model_copies_everything)
{
	struct ditto_model *e = ditto_model_new(), *s = tu_sample(4);
	char *je = NULL, *js = NULL;

	ck_assert_int_eq(ditto_model_merge(e, s), 0);
	ck_assert_uint_eq(ditto_model_service_count(e), ditto_model_service_count(s));
	ck_assert_int_eq(ditto_model_get_json(e, "services", NULL, &je), 0);
	ck_assert_int_eq(ditto_model_get_json(s, "services", NULL, &js), 0);
	ck_assert_str_eq(je, js);
	ditto_free(je);
	ditto_free(js);
	ck_assert_int_eq(ditto_model_get_json(e, "graph", NULL, &je), 0);
	ck_assert_int_eq(ditto_model_get_json(s, "graph", NULL, &js), 0);
	ck_assert_str_eq(je, js);
	ditto_free(je);
	ditto_free(js);
	ck_assert_int_eq(ditto_model_validate(e, NULL), 0);
	ditto_model_free(e);
	ditto_model_free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("merge");
	TCase *tc = tu_tcase("merge");

	tcase_add_test(tc, test_merge_same_services_adds_counts_exactly);
	tcase_add_test(tc, test_merge_leaves_src_unchanged);
	tcase_add_test(tc, test_merge_with_copy_doubles_counts);
	tcase_add_test(tc, test_merge_unmatched_elements_copied);
	tcase_add_test(tc, test_merge_thread_counts_keep_max);
	tcase_add_test(tc, test_merge_conflicting_framing_mismatch);
	tcase_add_test(tc, test_merge_conflicting_role_mismatch);
	tcase_add_test(tc, test_merge_conflicting_io_model_mismatch);
	tcase_add_test(tc, test_merge_count_overflow_leaves_dst_unchanged);
	tcase_add_test(tc, test_merge_observed_rates_weighted_by_sources);
	tcase_add_test(tc, test_merge_ports_and_woken_by_union);
	tcase_add_test(tc, test_merge_into_empty_model_copies_everything);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
