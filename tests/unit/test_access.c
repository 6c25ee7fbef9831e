/* SPDX-License-Identifier: MIT */
/* Typed accessors: set/get round trips per section, keys, handles, enums. */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <ditto/synth.h>

#include "tu.h"

/* The value survives the encoding too: decode(encode(m)) and check again. */
static struct ditto_model *reencode(const struct ditto_model *m)
{
	void *buf;
	size_t len;
	DITTO_OPTS(ditto_load_opts, nv, .no_validate = true);
	struct ditto_model *out = NULL;

	tu_encode(m, &buf, &len);
	ck_assert_int_eq(ditto_model_decode(buf, len, &nv, &out), 0);
	ditto_free(buf);
	return out;
}

START_TEST(test_new_model_defaults)
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_meta *meta = ditto_model_meta(m);
	uint64_t now = (uint64_t)time(NULL);

	ck_assert_ptr_nonnull(meta);
	ck_assert_int_eq(ditto_model_schema(m), DITTO_MODEL_SCHEMA);
	ck_assert_str_eq(ditto_meta_tool_version(meta), ditto_version());
	ck_assert_uint_le(ditto_meta_created(meta), now + 1);
	ck_assert_uint_ge(ditto_meta_created(meta), now - 60);
	ck_assert_uint_eq(ditto_meta_sources(meta), 1);
	ck_assert_uint_eq(ditto_model_service_count(m), 0);
	ck_assert_ptr_null(ditto_model_service(m, 0));
	ck_assert_ptr_null(ditto_model_find_service(m, "x"));
	ck_assert_uint_eq(ditto_graph_node_count(ditto_model_graph(m)), 0);
	ck_assert_uint_eq(ditto_graph_edge_count(ditto_model_graph(m)), 0);
	ck_assert_uint_eq(ditto_tuning_iteration_count(ditto_model_tuning(m)), 0);
	ck_assert_uint_eq(ditto_values_size(ditto_tuning_knobs(ditto_model_tuning(m))), 0);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_meta_setters_round_trip)
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_meta *meta = ditto_model_meta(m);

	ck_assert_int_eq(ditto_meta_set_created(meta, 1700000123), 0);
	ck_assert_int_eq(ditto_meta_set_window_s(meta, 42.5), 0);
	ck_assert_int_eq(ditto_meta_set_host_cpu_model(meta, "Test CPU @ 1GHz"), 0);
	ck_assert_int_eq(ditto_meta_set_host_kernel(meta, "6.1.0"), 0);
	ck_assert_int_eq(ditto_meta_set_host_cores(meta, 64), 0);
	ck_assert_int_eq(ditto_meta_set_host_cache_bytes(meta, DITTO_CACHE_L1D, 48 << 10), 0);
	ck_assert_int_eq(ditto_meta_set_host_cache_bytes(meta, DITTO_CACHE_L1I, 32 << 10), 0);
	ck_assert_int_eq(ditto_meta_set_host_cache_bytes(meta, DITTO_CACHE_L2, 2 << 20), 0);
	ck_assert_int_eq(ditto_meta_set_host_cache_bytes(meta, DITTO_CACHE_LLC, 64 << 20), 0);
	ck_assert_int_eq(ditto_meta_set_load_generator(meta, "wrk2"), 0);
	ck_assert_int_eq(ditto_meta_set_load_qps(meta, 12345.5), 0);
	ck_assert_int_eq(ditto_meta_set_load_connections(meta, 99), 0);

	for (int pass = 0; pass < 2; pass++) {
		struct ditto_model *x = pass ? reencode(m) : m;
		struct ditto_meta *mm = ditto_model_meta(x);

		ck_assert_uint_eq(ditto_meta_created(mm), 1700000123);
		ck_assert_double_eq(ditto_meta_window_s(mm), 42.5);
		ck_assert_str_eq(ditto_meta_host_cpu_model(mm), "Test CPU @ 1GHz");
		ck_assert_str_eq(ditto_meta_host_kernel(mm), "6.1.0");
		ck_assert_uint_eq(ditto_meta_host_cores(mm), 64);
		ck_assert_uint_eq(ditto_meta_host_cache_bytes(mm, DITTO_CACHE_L1D), 48 << 10);
		ck_assert_uint_eq(ditto_meta_host_cache_bytes(mm, DITTO_CACHE_L1I), 32 << 10);
		ck_assert_uint_eq(ditto_meta_host_cache_bytes(mm, DITTO_CACHE_L2), 2 << 20);
		ck_assert_uint_eq(ditto_meta_host_cache_bytes(mm, DITTO_CACHE_LLC), 64 << 20);
		ck_assert_str_eq(ditto_meta_load_generator(mm), "wrk2");
		ck_assert_double_eq(ditto_meta_load_qps(mm), 12345.5);
		ck_assert_uint_eq(ditto_meta_load_connections(mm), 99);
		if (pass)
			ditto_model_free(x);
	}
	/* bad values refused, value kept */
	ck_assert_int_eq(ditto_meta_set_window_s(meta, NAN), -EINVAL);
	ck_assert_int_eq(ditto_meta_set_window_s(meta, -1), -EINVAL);
	ck_assert_int_eq(ditto_meta_set_load_qps(meta, INFINITY), -EINVAL);
	ck_assert_double_eq(ditto_meta_window_s(meta), 42.5);
	ck_assert_int_eq(ditto_meta_set_host_kernel(meta, NULL), -EINVAL);
	ck_assert_int_ne(ditto_meta_set_host_cache_bytes(meta, (enum ditto_cache_level)17, 1), 0);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_service_and_threads_round_trip)
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_service *s = ditto_model_add_service(m, "web");

	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(ditto_service_name(s), "web");
	ck_assert_int_eq(ditto_service_set_framing(s, DITTO_FRAMING_HTTP1), 0);
	ck_assert_int_eq(ditto_service_set_processes(s, 4), 0);
	ck_assert_int_eq(ditto_service_add_port(s, 8080), 0);
	ck_assert_int_eq(ditto_service_add_port(s, 8443), 0);
	ck_assert_int_eq(ditto_service_add_port(s, 8080), 0); /* present: not added again */
	ck_assert_int_eq(ditto_service_add_port(s, 0), -EINVAL);
	ck_assert_int_eq(ditto_service_set_framing(s, (enum ditto_framing)99), -EINVAL);

	struct ditto_thread_class *t = ditto_service_add_thread(s, "io");
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(ditto_thread_class_set_count(t, 8), 0);
	ck_assert_int_eq(ditto_thread_class_set_role(t, DITTO_ROLE_NETWORK), 0);
	ck_assert_int_eq(ditto_thread_class_set_io_model(t, DITTO_IO_POLL), 0);
	ck_assert_int_eq(ditto_thread_class_set_cpu_ns(t, 123456789), 0);
	ck_assert_int_eq(ditto_thread_class_set_ctx_switches(t, 1000), 0);
	ck_assert_int_eq(ditto_thread_class_set_wakeups(t, 900), 0);
	ck_assert_ptr_nonnull(ditto_service_add_thread(s, "acc"));
	ck_assert_int_eq(ditto_thread_class_add_woken_by(t, "acc"), 0);
	ck_assert_int_eq(ditto_thread_class_add_woken_by(t, "acc"), 0);
	ck_assert_int_eq(ditto_thread_class_set_role(t, (enum ditto_role)-1), -EINVAL);

	for (int pass = 0; pass < 2; pass++) {
		struct ditto_model *x = pass ? reencode(m) : m;
		struct ditto_service *ss = ditto_model_find_service(x, "web");

		ck_assert_ptr_nonnull(ss);
		ck_assert_int_eq(ditto_service_framing(ss), DITTO_FRAMING_HTTP1);
		ck_assert_uint_eq(ditto_service_processes(ss), 4);
		ck_assert_uint_eq(ditto_service_port_count(ss), 2);
		ck_assert_uint_eq(ditto_service_port(ss, 0), 8080);
		ck_assert_uint_eq(ditto_service_port(ss, 1), 8443);
		ck_assert_uint_eq(ditto_service_thread_count(ss), 2);
		struct ditto_thread_class *tt = ditto_service_find_thread(ss, "io");
		ck_assert_ptr_nonnull(tt);
		ck_assert_ptr_eq(tt, ditto_service_thread(ss, 0));
		ck_assert_str_eq(ditto_thread_class_name(tt), "io");
		ck_assert_uint_eq(ditto_thread_class_count(tt), 8);
		ck_assert_int_eq(ditto_thread_class_role(tt), DITTO_ROLE_NETWORK);
		ck_assert_int_eq(ditto_thread_class_io_model(tt), DITTO_IO_POLL);
		ck_assert_uint_eq(ditto_thread_class_cpu_ns(tt), 123456789);
		ck_assert_uint_eq(ditto_thread_class_ctx_switches(tt), 1000);
		ck_assert_uint_eq(ditto_thread_class_wakeups(tt), 900);
		ck_assert_uint_eq(ditto_thread_class_woken_by_count(tt), 1);
		ck_assert_str_eq(ditto_thread_class_woken_by(tt, 0), "acc");
		ck_assert_ptr_null(ditto_service_find_thread(ss, "nope"));
		ck_assert_ptr_null(ditto_service_thread(ss, 2));
		if (pass)
			ditto_model_free(x);
	}
	ck_assert_int_eq(ditto_model_validate(m, NULL), 0);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_network_round_trip)
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_service *s = ditto_model_add_service(m, "svc");
	struct ditto_network *n = ditto_service_network_ensure(s);

	ck_assert_ptr_nonnull(n);
	ck_assert_int_eq(ditto_network_set_io_model(n, DITTO_IO_SELECT), 0);
	ck_assert_int_eq(ditto_network_set_accept_dispatch(n, true), 0);
	ck_assert_int_eq(ditto_network_set_network_dispatch(n, true), 0);
	ck_assert_int_eq(ditto_network_set_network_threads(n, 16), 0);
	ck_assert_int_eq(ditto_network_set_processes(n, 2), 0);
	ck_assert_int_eq(ditto_network_set_client_connections(n, 32), 0);
	ck_assert_int_eq(ditto_network_set_client_mode(n, DITTO_CALL_ASYNC), 0);
	for (int pass = 0; pass < 2; pass++) {
		struct ditto_model *x = pass ? reencode(m) : m;
		struct ditto_network *nn = ditto_service_network(ditto_model_service(x, 0));

		ck_assert_int_eq(ditto_network_io_model(nn), DITTO_IO_SELECT);
		ck_assert(ditto_network_accept_dispatch(nn));
		ck_assert(ditto_network_network_dispatch(nn));
		ck_assert_uint_eq(ditto_network_network_threads(nn), 16);
		ck_assert_uint_eq(ditto_network_processes(nn), 2);
		ck_assert_uint_eq(ditto_network_client_connections(nn), 32);
		ck_assert_int_eq(ditto_network_client_mode(nn), DITTO_CALL_ASYNC);
		if (pass)
			ditto_model_free(x);
	}
	ck_assert_int_eq(ditto_network_set_accept_dispatch(n, false), 0);
	ck_assert(!ditto_network_accept_dispatch(n));
	ck_assert_int_eq(ditto_network_set_client_mode(n, (enum ditto_call_mode)3), -EINVAL);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_syscall_round_trip)
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_service *s = ditto_model_add_service(m, "svc");
	struct ditto_syscall *c = ditto_service_add_syscall(s, "main", "recvfrom", DITTO_FD_UDP);

	ck_assert_ptr_nonnull(ditto_service_add_thread(s, "main"));
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(ditto_syscall_thread_class(c), "main");
	ck_assert_str_eq(ditto_syscall_name(c), "recvfrom");
	ck_assert_int_eq(ditto_syscall_fd_kind(c), DITTO_FD_UDP);
	ck_assert_int_eq(ditto_syscall_set_nr(c, 45), 0);
	ck_assert_int_eq(ditto_syscall_set_calls(c, 1000), 0);
	ck_assert_int_eq(ditto_syscall_set_errors(c, 10), 0);
	ck_assert_int_eq(ditto_syscall_set_sequential(c, 0), 0);
	ck_assert_int_eq(ditto_hist_add(ditto_syscall_size_ensure(c), 1500, 1000), 0);
	ck_assert_int_eq(ditto_hist_add(ditto_syscall_ret_ensure(c), 200, 990), 0);
	ck_assert_int_eq(ditto_hist_add(ditto_syscall_flags_ensure(c), 64, 1000), 0);
	ck_assert_int_eq(ditto_hist_add(ditto_syscall_offset_ensure(c), 0, 1000), 0);
	ck_assert_int_eq(ditto_hist_add(ditto_syscall_latency_ensure(c), 4321, 1000), 0);
	/* the histograms have the kinds model.h names */
	ck_assert_int_eq(ditto_hist_kind(ditto_syscall_size(c)), DITTO_HIST_LOG2);
	ck_assert_int_eq(ditto_hist_kind(ditto_syscall_ret(c)), DITTO_HIST_LOG2);
	ck_assert_int_eq(ditto_hist_kind(ditto_syscall_flags(c)), DITTO_HIST_EXACT);
	ck_assert_int_eq(ditto_hist_kind(ditto_syscall_offset(c)), DITTO_HIST_LOG2);
	ck_assert_int_eq(ditto_hist_kind(ditto_syscall_latency(c)), DITTO_HIST_LOGLIN);
	/* same histogram object on every call */
	ck_assert_ptr_eq(ditto_syscall_size(c), ditto_syscall_size(c));

	for (int pass = 0; pass < 2; pass++) {
		struct ditto_model *x = pass ? reencode(m) : m;
		struct ditto_service *ss = ditto_model_service(x, 0);
		struct ditto_syscall *cc = ditto_service_find_syscall(ss, "main", "recvfrom",
								      DITTO_FD_UDP);
		ck_assert_ptr_nonnull(cc);
		ck_assert_ptr_eq(cc, ditto_service_syscall(ss, 0));
		ck_assert_uint_eq(ditto_syscall_nr(cc), 45);
		ck_assert_uint_eq(ditto_syscall_calls(cc), 1000);
		ck_assert_uint_eq(ditto_syscall_errors(cc), 10);
		ck_assert_uint_eq(ditto_syscall_sequential(cc), 0);
		uint64_t lo, hi, n;
		ditto_hist_bucket(ditto_syscall_size(cc), 0, &lo, &hi, &n);
		ck_assert_uint_eq(lo, 1024);
		ck_assert_uint_eq(hi, 2047);
		ck_assert_uint_eq(n, 1000);
		ck_assert_uint_eq(ditto_hist_total(ditto_syscall_ret(cc)), 990);
		ditto_hist_bucket(ditto_syscall_flags(cc), 0, &lo, &hi, &n);
		ck_assert_uint_eq(lo, 64);
		ck_assert_uint_eq(hi, 64);
		ck_assert_int_eq(ditto_hist_kind(ditto_syscall_latency(cc)), DITTO_HIST_LOGLIN);
		ck_assert_uint_eq(ditto_hist_precision(ditto_syscall_latency(cc)),
				  ditto_hist_precision(ditto_syscall_latency(c)));
		ck_assert_uint_eq(ditto_hist_total(ditto_syscall_latency(cc)), 1000);
		/* fd kind is part of the key */
		ck_assert_ptr_null(ditto_service_find_syscall(ss, "main", "recvfrom", DITTO_FD_TCP));
		ck_assert_ptr_null(ditto_service_find_syscall(ss, "main", "recvmsg", DITTO_FD_UDP));
		ck_assert_ptr_null(ditto_service_find_syscall(ss, "other", "recvfrom", DITTO_FD_UDP));
		if (pass)
			ditto_model_free(x);
	}
	/* same name, another fd kind: a distinct element */
	ck_assert_ptr_nonnull(ditto_service_add_syscall(s, "main", "recvfrom", DITTO_FD_UNIX));
	ck_assert_uint_eq(ditto_service_syscall_count(s), 2);
	ck_assert_int_eq(ditto_model_validate(m, NULL), 0);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_requests_round_trip)
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_service *s = ditto_model_add_service(m, "svc");
	struct ditto_requests *r = ditto_service_requests_ensure(s);

	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(ditto_requests_set_count(r, 5000), 0);
	ck_assert_int_eq(ditto_requests_set_connections(r, 50), 0);
	ck_assert_int_eq(ditto_requests_set_pipelined(r, 7), 0);
	ck_assert_int_eq(ditto_hist_add(ditto_requests_request_bytes_ensure(r), 100, 5000), 0);
	ck_assert_int_eq(ditto_hist_add(ditto_requests_response_bytes_ensure(r), 3000, 5000), 0);
	ck_assert_int_eq(ditto_hist_add(ditto_requests_per_connection_ensure(r), 100, 50), 0);
	ck_assert_int_eq(ditto_hist_add(ditto_requests_service_ns_ensure(r), 20000, 5000), 0);
	ck_assert_int_eq(ditto_hist_add(ditto_requests_after_response_ns_ensure(r), 3000, 4990), 0);
	ck_assert_int_eq(ditto_hist_kind(ditto_requests_request_bytes(r)), DITTO_HIST_LOG2);
	ck_assert_int_eq(ditto_hist_kind(ditto_requests_response_bytes(r)), DITTO_HIST_LOG2);
	ck_assert_int_eq(ditto_hist_kind(ditto_requests_per_connection(r)), DITTO_HIST_LOG2);
	ck_assert_int_eq(ditto_hist_kind(ditto_requests_service_ns(r)), DITTO_HIST_LOGLIN);
	ck_assert_int_eq(ditto_hist_kind(ditto_requests_after_response_ns(r)), DITTO_HIST_LOGLIN);
	ck_assert_double_eq_tol(ditto_service_per_request(s, 10000), 2.0, 1e-12);
	for (int pass = 0; pass < 2; pass++) {
		struct ditto_model *x = pass ? reencode(m) : m;
		struct ditto_requests *rr = ditto_service_requests(ditto_model_service(x, 0));

		ck_assert_uint_eq(ditto_requests_count(rr), 5000);
		ck_assert_uint_eq(ditto_requests_connections(rr), 50);
		ck_assert_uint_eq(ditto_requests_pipelined(rr), 7);
		ck_assert_uint_eq(ditto_hist_total(ditto_requests_request_bytes(rr)), 5000);
		ck_assert_uint_eq(ditto_hist_total(ditto_requests_response_bytes(rr)), 5000);
		ck_assert_uint_eq(ditto_hist_total(ditto_requests_per_connection(rr)), 50);
		ck_assert_uint_eq(ditto_hist_total(ditto_requests_service_ns(rr)), 5000);
		ck_assert_uint_eq(ditto_hist_total(ditto_requests_after_response_ns(rr)), 4990);
		if (pass)
			ditto_model_free(x);
	}
	/* no requests: per_request is 0 */
	ditto_requests_set_count(r, 0);
	ck_assert_double_eq(ditto_service_per_request(s, 10000), 0);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_cpu_round_trip)
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_service *s = ditto_model_add_service(m, "svc");
	struct ditto_cpu *c;

	ditto_service_add_thread(s, "worker");
	c = ditto_service_add_cpu(s, "worker");
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(ditto_cpu_thread_class(c), "worker");
	ck_assert_int_eq(ditto_cpu_set_windows(c, 10), 0);
	ck_assert_int_eq(ditto_cpu_set_instructions(c, 100000), 0);
	ck_assert_int_eq(ditto_cpu_set_undecoded(c, 12), 0);
	ck_assert_int_eq(ditto_cpu_set_loads(c, 25000), 0);
	ck_assert_int_eq(ditto_cpu_set_stores(c, 10000), 0);
	ck_assert_int_eq(ditto_cpu_set_chased_loads(c, 500), 0);
	ck_assert_int_eq(ditto_cpu_set_dws_cold(c, 300), 0);
	ck_assert_int_eq(ditto_cpu_set_iws_cold(c, 200), 0);
	struct ditto_counts *mix = ditto_cpu_mix_ensure(c);
	ck_assert_int_eq(ditto_counts_add(mix, "int.add", 60000), 0);
	ck_assert_int_eq(ditto_counts_add(mix, "int.mov", 30000), 0);
	ck_assert_int_eq(ditto_counts_add(mix, "int.add", 9988), 0);
	struct ditto_hist *(*const getters[])(struct ditto_cpu *) = {
		ditto_cpu_insts_per_request_ensure, ditto_cpu_branches_ensure, ditto_cpu_dws_ensure,
		ditto_cpu_iws_ensure, ditto_cpu_raw_ensure, ditto_cpu_war_ensure,
		ditto_cpu_waw_ensure, ditto_cpu_mem_raw_ensure,
	};
	static const enum ditto_hist_kind kinds[] = {
		DITTO_HIST_LOG2, DITTO_HIST_EXACT, DITTO_HIST_LOG2, DITTO_HIST_LOG2,
		DITTO_HIST_LOG2, DITTO_HIST_LOG2,  DITTO_HIST_LOG2, DITTO_HIST_LOG2,
	};
	for (size_t i = 0; i < 8; i++) {
		struct ditto_hist *h = getters[i](c);

		ck_assert_ptr_nonnull(h);
		ck_assert_int_eq(ditto_hist_kind(h), kinds[i]);
		ck_assert_int_eq(ditto_hist_add(h, 5 + i, 10 + i), 0);
	}
	for (int pass = 0; pass < 2; pass++) {
		struct ditto_model *x = pass ? reencode(m) : m;
		struct ditto_cpu *cc = ditto_service_find_cpu(ditto_model_service(x, 0), "worker");

		ck_assert_ptr_nonnull(cc);
		ck_assert_uint_eq(ditto_cpu_windows(cc), 10);
		ck_assert_uint_eq(ditto_cpu_instructions(cc), 100000);
		ck_assert_uint_eq(ditto_cpu_undecoded(cc), 12);
		ck_assert_uint_eq(ditto_cpu_loads(cc), 25000);
		ck_assert_uint_eq(ditto_cpu_stores(cc), 10000);
		ck_assert_uint_eq(ditto_cpu_chased_loads(cc), 500);
		ck_assert_uint_eq(ditto_cpu_dws_cold(cc), 300);
		ck_assert_uint_eq(ditto_cpu_iws_cold(cc), 200);
		struct ditto_counts *mm = ditto_cpu_mix(cc);
		ck_assert_uint_eq(ditto_counts_size(mm), 2);
		ck_assert_uint_eq(ditto_counts_get(mm, "int.add"), 69988);
		ck_assert_uint_eq(ditto_counts_get(mm, "int.mov"), 30000);
		ck_assert_uint_eq(ditto_counts_get(mm, "absent"), 0);
		ck_assert_uint_eq(ditto_counts_total(mm), 99988);
		const char *k;
		uint64_t v;
		ck_assert_int_eq(ditto_counts_entry(mm, 0, &k, &v), 0);
		ck_assert_str_eq(k, "int.add"); /* insertion order */
		ck_assert_int_eq(ditto_counts_entry(mm, 1, &k, &v), 0);
		ck_assert_str_eq(k, "int.mov");
		ck_assert_int_eq(ditto_counts_entry(mm, 2, &k, &v), -DITTO_ENOTFOUND);
		for (size_t i = 0; i < 8; i++)
			ck_assert_uint_eq(ditto_hist_total(getters[i](cc)), 10 + i);
		if (pass)
			ditto_model_free(x);
	}
	/* counts overflow */
	ck_assert_int_eq(ditto_counts_add(mix, "big", UINT64_MAX), 0);
	ck_assert_int_eq(ditto_counts_add(mix, "big", 1), -EOVERFLOW);
	ck_assert_uint_eq(ditto_counts_get(mix, "big"), UINT64_MAX);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_observed_round_trip)
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_service *s = ditto_model_add_service(m, "svc");
	struct ditto_observed *o = ditto_service_observed_ensure(s);

	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(ditto_observed_set_throughput_qps(o, 99000.5), 0);
	ck_assert_int_eq(ditto_observed_set_throughput_qps(o, -1), -EINVAL);
	struct ditto_load_point *p1 = ditto_observed_add_load(o, 1000);
	struct ditto_load_point *p2 = ditto_observed_add_load(o, 5000.25);
	ck_assert_ptr_nonnull(p1);
	ck_assert_ptr_nonnull(p2);
	ck_assert_ptr_null(ditto_observed_add_load(o, 1000));
	ck_assert_int_eq(ditto_load_point_set_achieved_qps(p1, 998.5), 0);
	ck_assert_int_eq(ditto_load_point_set_connections(p1, 16), 0);
	ck_assert_int_eq(ditto_hist_add(ditto_load_point_latency_ensure(p1), 120000, 998), 0);
	ck_assert_int_eq(ditto_hist_kind(ditto_load_point_latency(p1)), DITTO_HIST_LOGLIN);
	ck_assert_int_eq(ditto_observed_set_counters_available(o, true), 0);
	for (int k = DITTO_COUNTER_CYCLES; k <= DITTO_COUNTER_LLC_MISSES; k++)
		ck_assert_int_eq(ditto_observed_set_counter(o, (enum ditto_counter)k, 1000 + k), 0);

	for (int pass = 0; pass < 2; pass++) {
		struct ditto_model *x = pass ? reencode(m) : m;
		struct ditto_observed *oo = ditto_service_observed(ditto_model_service(x, 0));

		ck_assert_double_eq(ditto_observed_throughput_qps(oo), 99000.5);
		ck_assert_uint_eq(ditto_observed_load_count(oo), 2);
		struct ditto_load_point *q = ditto_observed_find_load(oo, 1000);
		ck_assert_ptr_nonnull(q);
		ck_assert_ptr_eq(q, ditto_observed_load(oo, 0));
		ck_assert_double_eq(ditto_load_point_qps(q), 1000);
		ck_assert_double_eq(ditto_load_point_achieved_qps(q), 998.5);
		ck_assert_uint_eq(ditto_load_point_connections(q), 16);
		ck_assert_uint_eq(ditto_hist_total(ditto_load_point_latency(q)), 998);
		ck_assert_double_eq(ditto_load_point_qps(ditto_observed_load(oo, 1)), 5000.25);
		ck_assert_ptr_null(ditto_observed_find_load(oo, 2000));
		ck_assert_ptr_null(ditto_observed_load(oo, 2));
		ck_assert(ditto_observed_counters_available(oo));
		for (int k = DITTO_COUNTER_CYCLES; k <= DITTO_COUNTER_LLC_MISSES; k++)
			ck_assert_uint_eq(ditto_observed_counter(oo, (enum ditto_counter)k),
					  1000 + (uint64_t)k);
		if (pass)
			ditto_model_free(x);
	}
	ck_assert_int_ne(ditto_observed_set_counter(o, (enum ditto_counter)42, 1), 0);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_graph_round_trip)
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_graph *g = ditto_model_graph_ensure(m);

	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(ditto_graph_add_node(g, "front"), 0);
	ck_assert_int_eq(ditto_graph_add_node(g, "back"), 0);
	ck_assert_int_eq(ditto_graph_add_node(g, "front"), 0); /* present: not added again */
	ck_assert_uint_eq(ditto_graph_node_count(g), 2);
	struct ditto_edge *e = ditto_graph_add_edge(g, "front", "back");
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(ditto_edge_from(e), "front");
	ck_assert_str_eq(ditto_edge_to(e), "back");
	ck_assert_int_eq(ditto_edge_set_mode(e, DITTO_CALL_ASYNC), 0);
	ck_assert_int_eq(ditto_edge_set_calls(e, 300), 0);
	ck_assert_int_eq(ditto_edge_set_parent_requests(e, 100), 0);
	ck_assert_int_eq(ditto_hist_add(ditto_edge_fanout_ensure(e), 3, 100), 0);
	ck_assert_int_eq(ditto_hist_add(ditto_edge_request_bytes_ensure(e), 64, 300), 0);
	ck_assert_int_eq(ditto_hist_add(ditto_edge_response_bytes_ensure(e), 640, 300), 0);
	ck_assert_int_eq(ditto_hist_kind(ditto_edge_fanout(e)), DITTO_HIST_EXACT);
	ck_assert_int_eq(ditto_hist_kind(ditto_edge_request_bytes(e)), DITTO_HIST_LOG2);
	ck_assert_int_eq(ditto_hist_kind(ditto_edge_response_bytes(e)), DITTO_HIST_LOG2);
	/* the reverse direction is another edge */
	ck_assert_ptr_nonnull(ditto_graph_add_edge(g, "back", "front"));

	for (int pass = 0; pass < 2; pass++) {
		struct ditto_model *x = pass ? reencode(m) : m;
		struct ditto_graph *gg = ditto_model_graph(x);

		ck_assert_uint_eq(ditto_graph_node_count(gg), 2);
		ck_assert_str_eq(ditto_graph_node(gg, 0), "front");
		ck_assert_str_eq(ditto_graph_node(gg, 1), "back");
		ck_assert_uint_eq(ditto_graph_edge_count(gg), 2);
		struct ditto_edge *ee = ditto_graph_find_edge(gg, "front", "back");
		ck_assert_ptr_nonnull(ee);
		ck_assert_ptr_eq(ee, ditto_graph_edge(gg, 0));
		ck_assert_int_eq(ditto_edge_mode(ee), DITTO_CALL_ASYNC);
		ck_assert_uint_eq(ditto_edge_calls(ee), 300);
		ck_assert_uint_eq(ditto_edge_parent_requests(ee), 100);
		ck_assert_uint_eq(ditto_hist_total(ditto_edge_fanout(ee)), 100);
		ck_assert_uint_eq(ditto_hist_total(ditto_edge_request_bytes(ee)), 300);
		ck_assert_uint_eq(ditto_hist_total(ditto_edge_response_bytes(ee)), 300);
		ck_assert_ptr_null(ditto_graph_find_edge(gg, "front", "nowhere"));
		if (pass)
			ditto_model_free(x);
	}
	ck_assert_int_eq(ditto_model_validate(m, NULL), 0);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_tuning_round_trip)
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_tuning *t = ditto_model_tuning_ensure(m);
	struct ditto_values *knobs = ditto_tuning_knobs_ensure(t);
	double v;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(ditto_values_set(knobs, "scale", 1.25), 0);
	ck_assert_int_eq(ditto_values_set(knobs, "bits", 3), 0);
	ck_assert_int_eq(ditto_values_set(knobs, "scale", 1.5), 0); /* replaces */
	ck_assert_int_eq(ditto_values_set(knobs, "neg", -2.5), 0);	 /* knobs may be negative */
	ck_assert_int_eq(ditto_values_set(knobs, "bad", NAN), -EINVAL);
	ck_assert_int_eq(ditto_values_set(knobs, "bad", INFINITY), -EINVAL);
	ck_assert_int_eq(ditto_values_get(knobs, "bad", &v), -DITTO_ENOTFOUND);

	struct ditto_tuning_iter *i0 = ditto_tuning_add_iteration(t);
	struct ditto_tuning_iter *i1 = ditto_tuning_add_iteration(t);
	ck_assert_ptr_nonnull(i0);
	ck_assert_ptr_nonnull(i1);
	ck_assert_uint_eq(ditto_tuning_iter_index(i1), ditto_tuning_iter_index(i0) + 1);
	ck_assert_int_eq(ditto_tuning_iter_set_accepted(i1, true), 0);
	ck_assert_int_eq(ditto_tuning_iter_set_note(i1, "better"), 0);
	ck_assert_int_eq(ditto_values_set(ditto_tuning_iter_knobs_ensure(i1), "scale", 1.5), 0);
	ck_assert_int_eq(ditto_values_set(ditto_tuning_iter_errors_ensure(i1), "ipc", 0.04), 0);

	for (int pass = 0; pass < 2; pass++) {
		struct ditto_model *x = pass ? reencode(m) : m;
		struct ditto_tuning *tt = ditto_model_tuning(x);
		struct ditto_values *kk = ditto_tuning_knobs(tt);
		const char *key;

		ck_assert_uint_eq(ditto_values_size(kk), 3);
		ck_assert_int_eq(ditto_values_get(kk, "scale", &v), 0);
		ck_assert_double_eq(v, 1.5);
		ck_assert_int_eq(ditto_values_get(kk, "bits", &v), 0);
		ck_assert_double_eq(v, 3);
		ck_assert_int_eq(ditto_values_get(kk, "neg", &v), 0);
		ck_assert_double_eq(v, -2.5);
		ck_assert_int_eq(ditto_values_entry(kk, 0, &key, &v), 0);
		ck_assert_str_eq(key, "scale");
		ck_assert_int_eq(ditto_values_entry(kk, 3, &key, &v), -DITTO_ENOTFOUND);
		ck_assert_uint_eq(ditto_tuning_iteration_count(tt), 2);
		struct ditto_tuning_iter *a = ditto_tuning_iteration(tt, 0);
		struct ditto_tuning_iter *b = ditto_tuning_iteration(tt, 1);
		ck_assert(!ditto_tuning_iter_accepted(a));
		ck_assert(ditto_tuning_iter_accepted(b));
		ck_assert_str_eq(ditto_tuning_iter_note(b), "better");
		ck_assert_uint_eq(ditto_tuning_iter_index(b), ditto_tuning_iter_index(a) + 1);
		ck_assert_int_eq(ditto_values_get(ditto_tuning_iter_errors(b), "ipc", &v), 0);
		ck_assert_double_eq(v, 0.04);
		ck_assert_ptr_null(ditto_tuning_iteration(tt, 2));
		if (pass)
			ditto_model_free(x);
	}
	ck_assert_int_eq(ditto_model_validate(m, NULL), 0);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_add_duplicate_key_fails)
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_service *s = ditto_model_add_service(m, "svc");

	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_null(ditto_model_add_service(m, "svc"));
	tu_assert_err_has("svc");
	ck_assert_uint_eq(ditto_model_service_count(m), 1);
	ck_assert_ptr_null(ditto_model_add_service(m, ""));
	ck_assert_ptr_null(ditto_model_add_service(m, NULL));

	ck_assert_ptr_nonnull(ditto_service_add_thread(s, "t"));
	ck_assert_ptr_null(ditto_service_add_thread(s, "t"));
	ck_assert_uint_eq(ditto_service_thread_count(s), 1);

	ck_assert_ptr_nonnull(ditto_service_add_syscall(s, "t", "read", DITTO_FD_FILE));
	ck_assert_ptr_null(ditto_service_add_syscall(s, "t", "read", DITTO_FD_FILE));
	ck_assert_uint_eq(ditto_service_syscall_count(s), 1);

	ck_assert_ptr_nonnull(ditto_service_add_cpu(s, "t"));
	ck_assert_ptr_null(ditto_service_add_cpu(s, "t"));
	ck_assert_uint_eq(ditto_service_cpu_count(s), 1);

	struct ditto_observed *o = ditto_service_observed_ensure(s);
	ck_assert_ptr_nonnull(ditto_observed_add_load(o, 10));
	ck_assert_ptr_null(ditto_observed_add_load(o, 10));
	ck_assert_uint_eq(ditto_observed_load_count(o), 1);

	struct ditto_graph *g = ditto_model_graph_ensure(m);
	ck_assert_ptr_nonnull(ditto_graph_add_edge(g, "a", "b"));
	ck_assert_ptr_null(ditto_graph_add_edge(g, "a", "b"));
	ck_assert_uint_eq(ditto_graph_edge_count(g), 1);
	ck_assert_int_eq(ditto_model_validate(m, NULL), -DITTO_EINVALID); /* a, b not nodes */
	ditto_model_free(m);
}
END_TEST

START_TEST(test_handles_survive_many_additions)
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_service *first = ditto_model_add_service(m, "first");
	struct ditto_thread_class *t = ditto_service_add_thread(first, "main");
	struct ditto_syscall *c = ditto_service_add_syscall(first, "main", "read", DITTO_FD_TCP);
	struct ditto_cpu *cpu = ditto_service_add_cpu(first, "main");
	struct ditto_hist *h = ditto_syscall_size_ensure(c);
	struct ditto_counts *mix = ditto_cpu_mix_ensure(cpu);
	struct ditto_load_point *lp = ditto_observed_add_load(ditto_service_observed_ensure(first), 1);
	struct ditto_edge *e = ditto_graph_add_edge(ditto_model_graph_ensure(m), "first", "x");
	struct ditto_tuning_iter *it = ditto_tuning_add_iteration(ditto_model_tuning_ensure(m));
	char name[32];

	for (int i = 0; i < 600; i++) {
		snprintf(name, sizeof(name), "svc%d", i);
		ck_assert_ptr_nonnull(ditto_model_add_service(m, name));
		snprintf(name, sizeof(name), "t%d", i);
		ck_assert_ptr_nonnull(ditto_service_add_thread(first, name));
		ck_assert_ptr_nonnull(ditto_service_add_syscall(first, name, "write", DITTO_FD_PIPE));
		ck_assert_ptr_nonnull(ditto_service_add_cpu(first, name));
		ck_assert_int_eq(ditto_counts_add(mix, name, 1), 0);
		ck_assert_ptr_nonnull(ditto_observed_add_load(ditto_service_observed_ensure(first), 2 + i));
		ck_assert_ptr_nonnull(ditto_graph_add_edge(ditto_model_graph_ensure(m), "first", name));
		ck_assert_ptr_nonnull(ditto_tuning_add_iteration(ditto_model_tuning_ensure(m)));
		ck_assert_int_eq(ditto_hist_add(ditto_syscall_latency_ensure(c), (uint64_t)i * 977, 1), 0);
	}
	/* the early handles still work and are the same elements */
	ck_assert_str_eq(ditto_service_name(first), "first");
	ck_assert_ptr_eq(ditto_model_find_service(m, "first"), first);
	ck_assert_ptr_eq(ditto_service_find_thread(first, "main"), t);
	ck_assert_int_eq(ditto_thread_class_set_count(t, 5), 0);
	ck_assert_uint_eq(ditto_thread_class_count(ditto_service_thread(first, 0)), 5);
	ck_assert_ptr_eq(ditto_service_find_syscall(first, "main", "read", DITTO_FD_TCP), c);
	ck_assert_int_eq(ditto_syscall_set_calls(c, 77), 0);
	ck_assert_ptr_eq(ditto_syscall_size(c), h);
	ck_assert_int_eq(ditto_hist_add(h, 10, 77), 0);
	ck_assert_ptr_eq(ditto_service_find_cpu(first, "main"), cpu);
	ck_assert_ptr_eq(ditto_cpu_mix(cpu), mix);
	ck_assert_uint_eq(ditto_counts_size(mix), 600);
	ck_assert_double_eq(ditto_load_point_qps(lp), 1);
	ck_assert_str_eq(ditto_edge_from(e), "first");
	ck_assert_str_eq(ditto_edge_to(e), "x");
	ck_assert_uint_eq(ditto_tuning_iter_index(ditto_tuning_iteration(ditto_model_tuning(m), 600)),
			  ditto_tuning_iter_index(it) + 600);
	ck_assert_uint_eq(ditto_model_service_count(m), 601);
	uint64_t v;
	ck_assert_int_eq(ditto_model_get_u64(m, "services[first].syscalls[main:read:tcp].calls", &v),
			 0);
	ck_assert_uint_eq(v, 77);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_handles_survive_encode_and_dup)
{
	struct ditto_model *m = tu_sample(1), *d = NULL;
	struct ditto_syscall *c = ditto_service_syscall(ditto_model_service(m, 0), 0);
	void *buf;
	size_t len;

	tu_encode(m, &buf, &len);
	ck_assert_int_eq(ditto_model_dup(m, &d), 0);
	ck_assert_int_eq(ditto_syscall_set_calls(c, 5), 0);
	ck_assert_uint_eq(ditto_syscall_calls(ditto_service_syscall(ditto_model_service(m, 0), 0)), 5);
	ck_assert_uint_ne(ditto_syscall_calls(ditto_service_syscall(ditto_model_service(d, 0), 0)), 5);
	ditto_free(buf);
	ditto_model_free(d);
	ditto_model_free(m);
}
END_TEST

/*
 * Reads never write (issue 19): a model with one element of each kind and
 * none of their optional sections. Each getter reads absent sections as
 * NULL handles, absent histograms as empty read-only ones, and scalars as
 * 0; the encoding stays the same byte for byte (on main, four such reads
 * grew an encoding from 87 to 150 bytes).
 */
static struct ditto_model *sparse_model(void)
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_service *s = ditto_model_add_service(m, "svc");
	struct ditto_service *o = ditto_model_add_service(m, "obs");
	struct ditto_graph *g;

	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(ditto_meta_set_created(ditto_model_meta(m), 1700000000), 0);
	ck_assert_ptr_nonnull(ditto_service_add_thread(s, "main"));
	ck_assert_ptr_nonnull(ditto_service_add_syscall(s, "main", "read", DITTO_FD_TCP));
	ck_assert_ptr_nonnull(ditto_service_add_cpu(s, "main"));
	ck_assert_ptr_nonnull(ditto_service_add_outbound(s, "10.0.0.1", 6379));
	/* containers present, their histograms and maps absent */
	ck_assert_ptr_nonnull(ditto_observed_add_load(ditto_service_observed_ensure(o), 1000));
	g = ditto_model_graph_ensure(m);
	ck_assert_int_eq(ditto_graph_add_node(g, "svc"), 0);
	ck_assert_int_eq(ditto_graph_add_node(g, "obs"), 0);
	ck_assert_ptr_nonnull(ditto_graph_add_edge(g, "svc", "obs"));
	ck_assert_ptr_nonnull(ditto_tuning_add_iteration(ditto_model_tuning_ensure(m)));
	return m;
}

static void assert_absent_hist(const struct ditto_hist *h, enum ditto_hist_kind kind)
{
	uint64_t lo, hi, n;

	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(ditto_hist_kind(h), kind);
	ck_assert_uint_eq(ditto_hist_total(h), 0);
	ck_assert_uint_eq(ditto_hist_bucket_count(h), 0);
	ck_assert_int_eq(ditto_hist_bucket(h, 0, &lo, &hi, &n), -DITTO_ENOTFOUND);
	ck_assert_double_eq(ditto_hist_mean(h), 0);
	ck_assert_double_eq(ditto_hist_quantile(h, 0.99), 0);
}

/* Every kind of getter, on the absent parts of sparse_model(). */
static void read_everything(const struct ditto_model *m)
{
	const struct ditto_service *s = ditto_model_find_service(m, "svc");
	const struct ditto_service *os = ditto_model_find_service(m, "obs");
	const struct ditto_syscall *c = ditto_service_syscall(s, 0);
	const struct ditto_cpu *cpu = ditto_service_cpu(s, 0);
	const struct ditto_outbound *ob = ditto_service_outbound(s, 0);
	const struct ditto_meta *meta = ditto_model_meta(m);
	const struct ditto_network *net = ditto_service_network(s);
	const struct ditto_requests *r = ditto_service_requests(s);
	const struct ditto_observed *o = ditto_service_observed(s);
	const struct ditto_graph *g = ditto_model_graph(m);
	const struct ditto_tuning *t = ditto_model_tuning(m);
	const struct ditto_tuning_iter *it = ditto_tuning_iteration(t, 0);
	const struct ditto_load_point *lp =
		ditto_observed_load(ditto_service_observed(os), 0);
	const struct ditto_edge *e = ditto_graph_edge(g, 0);
	const char *k;
	uint64_t n;
	double v;
	struct ditto_sockopt so;

	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_nonnull(cpu);
	ck_assert_ptr_nonnull(ob);
	ck_assert_ptr_nonnull(lp);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(it);
	/* meta: present, its host and load absent */
	ck_assert_ptr_nonnull(meta);
	ck_assert_str_eq(ditto_meta_host_cpu_model(meta), "");
	ck_assert_uint_eq(ditto_meta_host_cores(meta), 0);
	ck_assert_uint_eq(ditto_meta_host_cache_bytes(meta, DITTO_CACHE_L2), 0);
	ck_assert_str_eq(ditto_meta_load_generator(meta), "");
	ck_assert_double_eq(ditto_meta_load_qps(meta), 0);
	ck_assert_uint_eq(ditto_meta_lost_events(meta), 0);
	/* service: absent network, requests, observed */
	ck_assert_ptr_null(net);
	ck_assert_int_eq(ditto_network_io_model(net), DITTO_IO_UNKNOWN);
	ck_assert(!ditto_network_accept_dispatch(net));
	ck_assert_uint_eq(ditto_network_network_threads(net), 0);
	ck_assert(!ditto_network_sockopts_known(net));
	ck_assert_uint_eq(ditto_network_sockopt_count(net), 0);
	ck_assert_int_eq(ditto_network_sockopt(net, 0, &so), -EINVAL);
	ck_assert_ptr_null(r);
	ck_assert_uint_eq(ditto_requests_count(r), 0);
	ck_assert_uint_eq(ditto_requests_response_bytes_total(r), 0);
	assert_absent_hist(ditto_requests_request_bytes(r), DITTO_HIST_LOG2);
	assert_absent_hist(ditto_requests_response_bytes(r), DITTO_HIST_LOG2);
	assert_absent_hist(ditto_requests_per_connection(r), DITTO_HIST_LOG2);
	assert_absent_hist(ditto_requests_service_ns(r), DITTO_HIST_LOGLIN);
	assert_absent_hist(ditto_requests_after_response_ns(r), DITTO_HIST_LOGLIN);
	ck_assert_double_eq(ditto_service_per_request(s, 100), 0);
	ck_assert_ptr_null(o);
	ck_assert_double_eq(ditto_observed_throughput_qps(o), 0);
	ck_assert_uint_eq(ditto_observed_load_count(o), 0);
	ck_assert_ptr_null(ditto_observed_load(o, 0));
	ck_assert_ptr_null(ditto_observed_find_load(o, 1000));
	ck_assert(!ditto_observed_counters_available(o));
	ck_assert_uint_eq(ditto_observed_counter(o, DITTO_COUNTER_CYCLES), 0);
	ck_assert_uint_eq(ditto_service_port_count(s), 0);
	ck_assert_uint_eq(ditto_thread_class_woken_by_count(ditto_service_thread(s, 0)), 0);
	/* syscall histograms */
	assert_absent_hist(ditto_syscall_size(c), DITTO_HIST_LOG2);
	assert_absent_hist(ditto_syscall_ret(c), DITTO_HIST_LOG2);
	assert_absent_hist(ditto_syscall_flags(c), DITTO_HIST_EXACT);
	assert_absent_hist(ditto_syscall_errnos(c), DITTO_HIST_EXACT);
	assert_absent_hist(ditto_syscall_offset(c), DITTO_HIST_LOG2);
	assert_absent_hist(ditto_syscall_latency(c), DITTO_HIST_LOGLIN);
	ck_assert_uint_eq(ditto_hist_precision(ditto_syscall_latency(c)), 4);
	ck_assert_uint_eq(ditto_syscall_calls(c), 0);
	/* cpu: maps and histograms */
	ck_assert_ptr_null(ditto_cpu_mix(cpu));
	ck_assert_uint_eq(ditto_counts_size(ditto_cpu_mix(cpu)), 0);
	ck_assert_uint_eq(ditto_counts_total(ditto_cpu_mix(cpu)), 0);
	ck_assert_uint_eq(ditto_counts_get(ditto_cpu_mix(cpu), "alu.rr.none.64.base"), 0);
	ck_assert_int_eq(ditto_counts_entry(ditto_cpu_mix(cpu), 0, &k, &n), -DITTO_ENOTFOUND);
	ck_assert_ptr_null(ditto_cpu_stepping(cpu));
	assert_absent_hist(ditto_cpu_insts_per_request(cpu), DITTO_HIST_LOG2);
	assert_absent_hist(ditto_cpu_branches(cpu), DITTO_HIST_EXACT);
	assert_absent_hist(ditto_cpu_dws(cpu), DITTO_HIST_LOG2);
	assert_absent_hist(ditto_cpu_iws(cpu), DITTO_HIST_LOG2);
	assert_absent_hist(ditto_cpu_raw(cpu), DITTO_HIST_LOG2);
	assert_absent_hist(ditto_cpu_war(cpu), DITTO_HIST_LOG2);
	assert_absent_hist(ditto_cpu_waw(cpu), DITTO_HIST_LOG2);
	assert_absent_hist(ditto_cpu_mem_raw(cpu), DITTO_HIST_LOG2);
	ck_assert_double_eq(ditto_cpu_miss_rate(cpu, false, 32768, true), 0);
	ck_assert_double_eq(ditto_cpu_miss_rate(cpu, true, 32768, false), 0);
	/* outbound, load point and edge histograms */
	assert_absent_hist(ditto_outbound_request_bytes(ob), DITTO_HIST_LOG2);
	assert_absent_hist(ditto_outbound_response_bytes(ob), DITTO_HIST_LOG2);
	assert_absent_hist(ditto_load_point_latency(lp), DITTO_HIST_LOGLIN);
	assert_absent_hist(ditto_edge_fanout(e), DITTO_HIST_EXACT);
	assert_absent_hist(ditto_edge_request_bytes(e), DITTO_HIST_LOG2);
	assert_absent_hist(ditto_edge_response_bytes(e), DITTO_HIST_LOG2);
	/* tuning knobs, an iteration's knobs and errors */
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_null(ditto_tuning_knobs(t));
	ck_assert_uint_eq(ditto_values_size(ditto_tuning_knobs(t)), 0);
	ck_assert_int_eq(ditto_values_get(ditto_tuning_knobs(t), "synth.body_scale", &v),
			 -DITTO_ENOTFOUND);
	ck_assert_int_eq(ditto_values_entry(ditto_tuning_knobs(t), 0, &k, &v), -DITTO_ENOTFOUND);
	ck_assert_ptr_null(ditto_tuning_iter_knobs(it));
	ck_assert_ptr_null(ditto_tuning_iter_errors(it));
	ck_assert_uint_eq(ditto_values_size(ditto_tuning_iter_errors(it)), 0);
	/* the path getters, validation, JSON and compare only read too */
	ck_assert_int_eq(ditto_model_get_u64(m, "services[svc].requests.count", &n),
			 -DITTO_ENOTFOUND);
	ck_assert_int_eq(ditto_model_validate(m, NULL), 0);
}

START_TEST(test_reads_never_write)
{
	struct ditto_model *m = sparse_model(), *empty = ditto_model_new();
	struct ditto_comparison *cmp = NULL;
	char *json = NULL;
	void *before;
	size_t len;

	tu_encode(m, &before, &len);
	read_everything(m);
	ck_assert_msg(tu_encoding_is(m, before, len), "reading changed the encoding");
	/* an empty model: no tuning, no graph */
	ck_assert_ptr_null(ditto_model_tuning(empty));
	ck_assert_ptr_null(ditto_model_graph(empty));
	ck_assert_uint_eq(ditto_tuning_iteration_count(ditto_model_tuning(empty)), 0);
	ck_assert_ptr_null(ditto_tuning_iteration(ditto_model_tuning(empty), 0));
	ck_assert_ptr_null(ditto_tuning_knobs(ditto_model_tuning(empty)));
	ck_assert_uint_eq(ditto_graph_node_count(ditto_model_graph(empty)), 0);
	ck_assert_ptr_null(ditto_graph_edge(ditto_model_graph(empty), 0));
	ck_assert_ptr_null(ditto_model_service(empty, 0));
	ck_assert_ptr_nonnull(ditto_model_meta(empty));
	ck_assert_int_eq(ditto_model_to_json(m, NULL, &json), 0);
	ck_assert_int_eq(ditto_model_compare(m, m, NULL, &cmp), 0);
	ck_assert_msg(tu_encoding_is(m, before, len), "json or compare changed the encoding");
	ditto_comparison_free(cmp);
	ditto_free(json);
	ditto_free(before);
	ditto_model_free(empty);
	ditto_model_free(m);
}
END_TEST

/* Writing through what a getter returned for an absent part is refused,
 * and changes nothing; the _ensure twins create it. */
START_TEST(test_absent_parts_are_read_only)
{
	struct ditto_model *m = sparse_model();
	struct ditto_service *s = ditto_model_find_service(m, "svc");
	struct ditto_syscall *c = ditto_service_syscall(s, 0);
	struct ditto_cpu *cpu = ditto_service_cpu(s, 0);
	struct ditto_tuning *t = ditto_model_tuning(m);
	struct ditto_hist *h = ditto_syscall_size(c), *src = ditto_hist_new(DITTO_HIST_LOG2, 0);
	struct ditto_sockopt so = { 6, 1, 1, 1, 1 };
	void *before;
	size_t len;

	tu_encode(m, &before, &len);
	ck_assert_int_eq(ditto_hist_add(h, 100, 1), -EINVAL);
	ck_assert_int_eq(ditto_hist_add(src, 100, 1), 0);
	ck_assert_int_eq(ditto_hist_merge(h, src), -EINVAL);
	ditto_hist_clear(h);
	ditto_hist_free(h);	/* a borrowed pointer: left alone */
	ck_assert_uint_eq(ditto_hist_total(ditto_syscall_size(c)), 0);
	ck_assert_int_eq(ditto_hist_add(ditto_requests_service_ns(ditto_service_requests(s)), 5, 1),
			 -EINVAL);
	/* setters given the NULL handle of an absent section */
	ck_assert_int_eq(ditto_requests_set_count(ditto_service_requests(s), 5), -EINVAL);
	ck_assert_int_eq(ditto_network_set_io_model(ditto_service_network(s), DITTO_IO_EPOLL),
			 -EINVAL);
	ck_assert_int_eq(ditto_network_set_sockopts_known(ditto_service_network(s)), -EINVAL);
	ck_assert_int_eq(ditto_network_add_sockopt(ditto_service_network(s), &so), -EINVAL);
	ck_assert_int_eq(ditto_observed_set_throughput_qps(ditto_service_observed(s), 5), -EINVAL);
	ck_assert_int_eq(ditto_observed_set_counters_available(ditto_service_observed(s), true),
			 -EINVAL);
	ck_assert_int_eq(ditto_observed_set_counter(ditto_service_observed(s),
						    DITTO_COUNTER_CYCLES, 1), -EINVAL);
	ck_assert_ptr_null(ditto_observed_add_load(ditto_service_observed(s), 10));
	ck_assert_int_eq(ditto_counts_add(ditto_cpu_mix(cpu), "alu.rr.none.64.base", 1), -EINVAL);
	ck_assert_int_eq(ditto_values_set(ditto_tuning_knobs(t), "synth.body_scale", 2), -EINVAL);
	ck_assert_ptr_null(ditto_service_requests_ensure(NULL));
	ck_assert_ptr_null(ditto_requests_service_ns_ensure(NULL));
	ck_assert_msg(tu_encoding_is(m, before, len), "a refused write changed the encoding");

	/* the _ensure twins create, once, what the getters then return */
	struct ditto_requests *r = ditto_service_requests_ensure(s);
	ck_assert_ptr_nonnull(r);
	ck_assert_ptr_eq(ditto_service_requests_ensure(s), r);
	ck_assert_ptr_eq(ditto_service_requests(s), r);
	ck_assert_int_eq(ditto_requests_set_count(r, 5), 0);
	h = ditto_requests_service_ns_ensure(r);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(ditto_hist_kind(h), DITTO_HIST_LOGLIN);
	ck_assert_int_eq(ditto_hist_add(h, 5000, 5), 0);
	ck_assert_ptr_eq(ditto_requests_service_ns(r), h);
	ck_assert_int_eq(ditto_hist_merge(ditto_syscall_size_ensure(c), src), 0);
	ck_assert_uint_eq(ditto_hist_total(ditto_syscall_size(c)), 1);
	ck_assert_int_eq(ditto_counts_add(ditto_cpu_mix_ensure(cpu), "alu.rr.none.64.base", 3), 0);
	ck_assert_uint_eq(ditto_counts_total(ditto_cpu_mix(cpu)), 3);
	ck_assert_int_eq(ditto_values_set(ditto_tuning_knobs_ensure(t), "synth.body_scale", 2), 0);
	ck_assert_int_eq(ditto_values_size(ditto_tuning_knobs(t)), 1);
	ck_assert_int_eq(ditto_network_set_sockopts_known(ditto_service_network_ensure(s)), 0);
	ck_assert(ditto_network_sockopts_known(ditto_service_network(s)));
	ck_assert_msg(!tu_encoding_is(m, before, len), "the writes are in the encoding");
	ck_assert_int_eq(ditto_model_validate(m, NULL), 0);
	ditto_hist_free(src);
	ditto_free(before);
	ditto_model_free(m);
}
END_TEST

static void quiet(enum ditto_log_level level, const char *msg, void *user)
{
	(void)level;
	(void)msg;
	(void)user;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* ditto_synth_write() takes a const model and adds nothing to it, not
 * even the sections it lacks and reads defaults for (tuning.knobs,
 * requests, network, cpu histograms...). */
START_TEST(test_synth_write_leaves_the_model_alone)
{
	struct ditto_model *m = sparse_model();
	const struct ditto_model *cm = m;
	char dir[] = "/tmp/ditto-test-access-XXXXXX", tree[64];
	DITTO_OPTS(ditto_synth_opts, so, .service = "svc", .seed = 3);
	ditto_log_fn old;
	void *before;
	size_t len;
	int rc;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(tree, sizeof(tree), "%s/clone", dir);
	tu_encode(m, &before, &len);
	old = ditto_set_log(quiet, NULL, DITTO_LOG_DEBUG);
	rc = ditto_synth_write(cm, tree, &so);
	ditto_set_log(old, NULL, DITTO_LOG_WARN);
	ck_assert_msg(rc == 0, "ditto_synth_write = %d (%s)", rc, ditto_last_error());
	ck_assert_msg(tu_encoding_is(m, before, len), "ditto_synth_write changed the model");
	ck_assert_int_eq(nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
	ditto_free(before);
	ditto_model_free(m);
}
END_TEST

/* The body.S and clone_config.c of a tree written with so, into out. */
static void synth_files(const struct ditto_model *m, const struct ditto_synth_opts *so,
			char *cfg, size_t len, int *rc)
{
	char dir[] = "/tmp/ditto-test-knobs-XXXXXX", tree[64], path[96];
	ditto_log_fn old;
	FILE *f;
	size_t n;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(tree, sizeof(tree), "%s/clone", dir);
	old = ditto_set_log(quiet, NULL, DITTO_LOG_DEBUG);
	*rc = ditto_synth_write(m, tree, so);
	ditto_set_log(old, NULL, DITTO_LOG_WARN);
	cfg[0] = '\0';
	snprintf(path, sizeof(path), "%s/clone_config.c", tree);
	if (!*rc && (f = fopen(path, "r"))) {
		n = fread(cfg, 1, len - 1, f);
		cfg[n] = '\0';
		fclose(f);
	}
	ck_assert_int_eq(nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* Knobs given in the opts are the generator's, the model's ignored and
 * left alone; an unknown name is refused. */
START_TEST(test_synth_knobs_through_opts)
{
	static char from_model[65536], from_opts[65536], plain[65536];
	struct ditto_model *m = sparse_model();
	struct ditto_values *k = ditto_values_new();
	DITTO_OPTS(ditto_synth_opts, so, .service = "svc", .seed = 3);
	void *before;
	size_t len;
	int rc;

	ck_assert_ptr_nonnull(k);
	synth_files(m, &so, plain, sizeof(plain), &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert_ptr_nonnull(strstr(plain, ".hold_share = 0.0000,"));
	ck_assert_int_eq(ditto_values_set(ditto_tuning_knobs_ensure(ditto_model_tuning_ensure(m)),
					  "synth.hold_share", 0.25), 0);
	synth_files(m, &so, from_model, sizeof(from_model), &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert_ptr_nonnull(strstr(from_model, ".hold_share = 0.2500,"));

	ck_assert_int_eq(ditto_values_set(k, "synth.hold_share", 0.75), 0);
	so.knobs = k;
	tu_encode(m, &before, &len);
	synth_files(m, &so, from_opts, sizeof(from_opts), &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert_ptr_nonnull(strstr(from_opts, ".hold_share = 0.7500,"));
	ck_assert_msg(tu_encoding_is(m, before, len), "knobs in the opts changed the model");

	ck_assert_int_eq(ditto_values_set(k, "synth.no_such_knob", 1), 0);
	synth_files(m, &so, from_opts, sizeof(from_opts), &rc);
	ck_assert_int_eq(rc, -EINVAL);
	ck_assert_ptr_nonnull(strstr(ditto_last_error(), "synth.no_such_knob"));

	/* A model's own map is not the caller's to free. */
	ditto_values_free(ditto_tuning_knobs(ditto_model_tuning(m)));
	ck_assert_int_eq(ditto_values_size(ditto_tuning_knobs(ditto_model_tuning(m))), 1);
	ditto_values_free(k);
	ditto_free(before);
	ditto_model_free(m);
}
END_TEST

/* The knob list the CLI's help and the binding show. */
START_TEST(test_synth_knob_list)
{
	const char *name;
	double d, lo, hi;
	size_t n = ditto_synth_knob_count();

	ck_assert_uint_ge(n, 9);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(ditto_synth_knob(i, &name, &d, &lo, &hi), 0);
		ck_assert_msg(!strncmp(name, "synth.", 6), "knob %s", name);
		ck_assert_msg(lo <= d && d <= hi, "%s: %g outside %g..%g", name, d, lo, hi);
	}
	ck_assert_int_eq(ditto_synth_knob(n, &name, NULL, NULL, NULL), -DITTO_ENOTFOUND);
}
END_TEST

#define ENUM_ROUND_TRIP(type, first, last, bad_name)                                  \
	do {                                                                          \
		enum ditto_##type out;                                                \
		for (int v_ = (first); v_ <= (last); v_++) {                          \
			const char *n_ = ditto_##type##_name((enum ditto_##type)v_);  \
			ck_assert_ptr_nonnull(n_);                                    \
			ck_assert_int_eq(ditto_##type##_parse(n_, &out), 0);          \
			ck_assert_int_eq(out, v_);                                    \
			for (int w_ = (first); w_ < v_; w_++)                         \
				ck_assert_str_ne(n_, ditto_##type##_name((enum ditto_##type)w_)); \
		}                                                                     \
		ck_assert_str_eq(ditto_##type##_name((enum ditto_##type)((last) + 1)), bad_name); \
		ck_assert_str_eq(ditto_##type##_name((enum ditto_##type)-1), bad_name); \
		ck_assert_int_eq(ditto_##type##_parse("no-such-" #type, &out), -DITTO_ENOTFOUND); \
		ck_assert_int_eq(ditto_##type##_parse("", &out), -DITTO_ENOTFOUND);   \
	} while (0)

START_TEST(test_enum_names_round_trip)
{
	ENUM_ROUND_TRIP(framing, DITTO_FRAMING_UNKNOWN, DITTO_FRAMING_MYSQL, "unknown");
	ENUM_ROUND_TRIP(role, DITTO_ROLE_UNKNOWN, DITTO_ROLE_BACKGROUND, "unknown");
	ENUM_ROUND_TRIP(io_model, DITTO_IO_UNKNOWN, DITTO_IO_SELECT, "unknown");
	ENUM_ROUND_TRIP(fd_kind, DITTO_FD_NONE, DITTO_FD_OTHER, "none");
	ENUM_ROUND_TRIP(call_mode, DITTO_CALL_UNKNOWN, DITTO_CALL_ASYNC, "unknown");
}
END_TEST

START_TEST(test_enum_names_are_the_documented_ones)
{
	static const char *const framing[] = { "unknown", "raw", "http1", "resp", "memcache-text",
					       "memcache-binary", "length-prefixed", "postgres", "mysql" };
	static const char *const role[] = { "unknown", "main", "acceptor", "network", "worker",
					    "background" };
	static const char *const io[] = { "unknown", "blocking", "nonblocking", "epoll", "poll",
					  "select" };
	static const char *const fd[] = { "none", "tcp",     "udp",	"unix",  "file",
					  "pipe", "eventfd", "timerfd", "epoll", "other" };
	static const char *const mode[] = { "unknown", "sync", "async" };

	for (int i = 0; i < 9; i++)
		ck_assert_str_eq(ditto_framing_name((enum ditto_framing)i), framing[i]);
	for (int i = 0; i < 6; i++)
		ck_assert_str_eq(ditto_role_name((enum ditto_role)i), role[i]);
	for (int i = 0; i < 6; i++)
		ck_assert_str_eq(ditto_io_model_name((enum ditto_io_model)i), io[i]);
	for (int i = 0; i < 10; i++)
		ck_assert_str_eq(ditto_fd_kind_name((enum ditto_fd_kind)i), fd[i]);
	for (int i = 0; i < 3; i++)
		ck_assert_str_eq(ditto_call_mode_name((enum ditto_call_mode)i), mode[i]);
}
END_TEST

START_TEST(test_enum_setters_store_names)
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_service *s = ditto_model_add_service(m, "svc");
	const char *v;

	for (int f = DITTO_FRAMING_UNKNOWN; f <= DITTO_FRAMING_MYSQL; f++) {
		ck_assert_int_eq(ditto_service_set_framing(s, (enum ditto_framing)f), 0);
		ck_assert_int_eq(ditto_service_framing(s), f);
		ck_assert_int_eq(ditto_model_get_str(m, "services[0].framing", &v), 0);
		ck_assert_str_eq(v, ditto_framing_name((enum ditto_framing)f));
	}
	ditto_model_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("access");
	TCase *tc = tu_tcase("access");

	tcase_add_test(tc, test_new_model_defaults);
	tcase_add_test(tc, test_meta_setters_round_trip);
	tcase_add_test(tc, test_service_and_threads_round_trip);
	tcase_add_test(tc, test_network_round_trip);
	tcase_add_test(tc, test_syscall_round_trip);
	tcase_add_test(tc, test_requests_round_trip);
	tcase_add_test(tc, test_cpu_round_trip);
	tcase_add_test(tc, test_observed_round_trip);
	tcase_add_test(tc, test_graph_round_trip);
	tcase_add_test(tc, test_tuning_round_trip);
	tcase_add_test(tc, test_add_duplicate_key_fails);
	tcase_add_test(tc, test_handles_survive_many_additions);
	tcase_add_test(tc, test_handles_survive_encode_and_dup);
	tcase_add_test(tc, test_enum_names_round_trip);
	tcase_add_test(tc, test_enum_names_are_the_documented_ones);
	tcase_add_test(tc, test_enum_setters_store_names);
	tcase_add_test(tc, test_reads_never_write);
	tcase_add_test(tc, test_absent_parts_are_read_only);
	tcase_add_test(tc, test_synth_write_leaves_the_model_alone);
	tcase_add_test(tc, test_synth_knobs_through_opts);
	tcase_add_test(tc, test_synth_knob_list);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
