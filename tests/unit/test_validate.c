/* SPDX-License-Identifier: MIT */
/*
 * ditto_model_validate(): the sample model passes; breaking one rule per
 * section gives -DITTO_EINVALID naming the path. Rules the typed setters
 * refuse to break are broken in the msgpack encoding instead.
 */
#include <errno.h>
#include <math.h>

#include "tu.h"

/* The sample (seed 1): services[0] is "redis" with thread classes main,
 * worker, bio; syscalls[0] is main:read:tcp; cpu[0] is for main. */
static struct ditto_model *sample(void)
{
	return tu_sample(1);
}

static void assert_valid(const struct ditto_model *m)
{
	int rc = ditto_model_validate(m, NULL);

	ck_assert_msg(rc == 0, "validate = %d: %s", rc, ditto_last_error());
}

/* validate() fails with EINVALID and the message names path. */
static void assert_invalid(const struct ditto_model *m, const char *path)
{
	int rc = ditto_model_validate(m, NULL);

	ck_assert_msg(rc == -DITTO_EINVALID, "validate = %d (%s), expected -DITTO_EINVALID for %s",
		      rc, ditto_last_error(), path);
	tu_assert_err_has(path);
}

/*
 * The patched encoding: decoding without validation must succeed (types
 * are right), validate() must refuse it naming path, and a validating
 * decode must refuse it too.
 */
static void assert_patch_invalid(struct mpdoc *d, const char *path)
{
	DITTO_OPTS(ditto_load_opts, nv, .no_validate = true);
	struct ditto_model *m = NULL;
	int rc = mpdoc_decode(d, &nv, &m);

	ck_assert_msg(rc == 0, "no_validate decode = %d (%s)", rc, ditto_last_error());
	assert_invalid(m, path);
	ditto_model_free(m);
	rc = mpdoc_decode(d, NULL, &m);
	ck_assert_msg(rc == -DITTO_EINVALID, "validating decode = %d (%s), expected -DITTO_EINVALID",
		      rc, ditto_last_error());
	ck_assert_ptr_null(m);
	tu_assert_err_has(path);
}

/* Start a patch of the sample's encoding. */
static void patch_begin(struct mpdoc *d)
{
	struct ditto_model *m = sample();

	mpdoc_from_model(d, m);
	ditto_model_free(m);
}

/* Value slot of `key` inside the map at `path` (added when absent). */
static msgpack_object *slot(struct mpdoc *d, const char *path, const char *key)
{
	msgpack_object *map = mpdoc_need(d, path);

	return mp_map_put(d, map, key);
}

/* ------------------------------------------------------------------ */

START_TEST(test_sample_models_are_valid)
{
	for (uint64_t seed = 0; seed < 8; seed++) {
		struct ditto_model *m = tu_sample(seed);
		assert_valid(m);
		ck_assert_str_eq(ditto_last_error(), "");
		ditto_model_free(m);
	}
	struct ditto_model *e = ditto_model_new();
	assert_valid(e);
	ditto_model_free(e);
}
END_TEST

START_TEST(test_patch_roundtrip_unchanged_is_valid)
{
	struct mpdoc d;
	struct ditto_model *m = NULL;

	patch_begin(&d);
	ck_assert_int_eq(mpdoc_decode(&d, NULL, &m), 0);
	assert_valid(m);
	ditto_model_free(m);
	mpdoc_destroy(&d);
}
END_TEST

/* --- meta --- */

START_TEST(test_meta_window_negative_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	mp_set_f64(slot(&d, "meta", "window_s"), -1.5);
	assert_patch_invalid(&d, "meta.window_s");
	mpdoc_destroy(&d);
}
END_TEST

START_TEST(test_meta_window_nan_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	mp_set_f64(slot(&d, "meta", "window_s"), NAN);
	assert_patch_invalid(&d, "meta.window_s");
	mpdoc_destroy(&d);

	patch_begin(&d);
	mp_set_f64(slot(&d, "meta", "window_s"), INFINITY);
	assert_patch_invalid(&d, "meta.window_s");
	mpdoc_destroy(&d);
}
END_TEST

START_TEST(test_meta_window_setter_refuses_bad_values)
{
	struct ditto_model *m = sample();
	struct ditto_meta *meta = ditto_model_meta_ensure(m);
	double before = ditto_meta_window_s(meta);

	/* the setter may refuse; if it accepts, validation must catch it */
	if (ditto_meta_set_window_s(meta, NAN) == 0)
		assert_invalid(m, "meta.window_s");
	else
		ck_assert_double_eq(ditto_meta_window_s(meta), before);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_meta_sources_zero_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	mp_set_u64(slot(&d, "meta", "sources"), 0);
	assert_patch_invalid(&d, "meta.sources");
	mpdoc_destroy(&d);
}
END_TEST

/* --- services --- */

START_TEST(test_services_duplicate_name_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	msgpack_object *arr = mpdoc_need(&d, "services");
	msgpack_object first = arr->via.array.ptr[0];
	*mp_array_append(&d, arr) = first;
	assert_patch_invalid(&d, "services");
	tu_assert_err_has("redis");
	mpdoc_destroy(&d);
}
END_TEST

START_TEST(test_services_empty_name_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	mp_set_str(&d, mpdoc_need(&d, "services[1].name"), "");
	assert_patch_invalid(&d, "services[1].name");
	mpdoc_destroy(&d);
}
END_TEST

START_TEST(test_services_missing_name_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	ck_assert(mp_map_del(mpdoc_need(&d, "services[1]"), "name"));
	assert_patch_invalid(&d, "services[1].name");
	mpdoc_destroy(&d);
}
END_TEST

START_TEST(test_services_bad_framing_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	mp_set_str(&d, mpdoc_need(&d, "services[0].framing"), "smoke-signals");
	assert_patch_invalid(&d, "services[0].framing");
	tu_assert_err_has("smoke-signals");
	mpdoc_destroy(&d);
}
END_TEST

START_TEST(test_services_port_out_of_range_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	mp_set_u64(mpdoc_need(&d, "services[0].ports[0]"), 70000);
	assert_patch_invalid(&d, "services[0].ports[0]");
	mpdoc_destroy(&d);

	patch_begin(&d);
	mp_set_u64(mpdoc_need(&d, "services[0].ports[0]"), 0);
	assert_patch_invalid(&d, "services[0].ports[0]");
	mpdoc_destroy(&d);
}
END_TEST

START_TEST(test_services_processes_zero_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	mp_set_u64(slot(&d, "services[0]", "processes"), 0);
	assert_patch_invalid(&d, "services[0].processes");
	mpdoc_destroy(&d);
}
END_TEST

/* --- threads --- */

START_TEST(test_threads_bad_role_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	mp_set_str(&d, mpdoc_need(&d, "services[0].threads[0].role"), "overlord");
	assert_patch_invalid(&d, "services[0].threads[0].role");
	tu_assert_err_has("overlord");
	mpdoc_destroy(&d);
}
END_TEST

START_TEST(test_threads_bad_io_model_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	mp_set_str(&d, mpdoc_need(&d, "services[0].threads[1].io_model"), "io_uring");
	assert_patch_invalid(&d, "services[0].threads[1].io_model");
	mpdoc_destroy(&d);
}
END_TEST

START_TEST(test_threads_count_zero_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	mp_set_u64(mpdoc_need(&d, "services[0].threads[0].count"), 0);
	assert_patch_invalid(&d, "services[0].threads[0].count");
	mpdoc_destroy(&d);
}
END_TEST

START_TEST(test_threads_duplicate_name_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	mp_set_str(&d, mpdoc_need(&d, "services[0].threads[2].name"), "main");
	assert_patch_invalid(&d, "services[0].threads");
	tu_assert_err_has("main");
	mpdoc_destroy(&d);
}
END_TEST

START_TEST(test_threads_woken_by_unknown_class_invalid)
{
	struct ditto_model *m = sample();
	struct ditto_service *s = ditto_model_service(m, 0);
	struct ditto_thread_class *t = ditto_service_thread(s, 2);

	ck_assert_int_eq(ditto_thread_class_add_woken_by(t, "ghost"), 0);
	assert_invalid(m, "services[0].threads[2].woken_by");
	tu_assert_err_has("ghost");
	ditto_model_free(m);
}
END_TEST

/* --- network --- */

START_TEST(test_network_bad_io_model_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	mp_set_str(&d, slot(&d, "services[0].network", "io_model"), "carrier-pigeon");
	assert_patch_invalid(&d, "services[0].network.io_model");
	mpdoc_destroy(&d);
}
END_TEST

START_TEST(test_network_bad_client_mode_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	mp_set_str(&d, slot(&d, "services[1].network", "client_mode"), "telepathic");
	assert_patch_invalid(&d, "services[1].network.client_mode");
	mpdoc_destroy(&d);
}
END_TEST

/* --- syscalls --- */

START_TEST(test_syscalls_unknown_thread_class_invalid)
{
	struct ditto_model *m = sample();
	struct ditto_service *s = ditto_model_service(m, 0);
	size_t n = ditto_service_syscall_count(s);
	char path[64];

	ck_assert_ptr_nonnull(ditto_service_add_syscall(s, "nosuchclass", "read", DITTO_FD_TCP));
	snprintf(path, sizeof(path), "services[0].syscalls[%zu].thread_class", n);
	assert_invalid(m, path);
	tu_assert_err_has("nosuchclass");
	ditto_model_free(m);
}
END_TEST

START_TEST(test_syscalls_errors_exceed_calls_invalid)
{
	struct ditto_model *m = sample();
	struct ditto_syscall *c = ditto_service_syscall(ditto_model_service(m, 0), 0);
	uint64_t calls = ditto_syscall_calls(c);

	ck_assert_uint_gt(calls, 0);
	ck_assert_int_eq(ditto_syscall_set_errors(c, calls), 0);
	assert_valid(m); /* errors == calls is fine */
	ck_assert_int_eq(ditto_syscall_set_errors(c, calls + 1), 0);
	assert_invalid(m, "services[0].syscalls[0].errors");
	ditto_model_free(m);
}
END_TEST

START_TEST(test_syscalls_sequential_exceeds_offsets_invalid)
{
	struct ditto_model *m = sample();
	struct ditto_syscall *c = ditto_service_syscall(ditto_model_service(m, 0), 1);
	uint64_t total = ditto_hist_total(ditto_syscall_offset(c));

	ck_assert_int_eq(ditto_syscall_set_sequential(c, total), 0);
	assert_valid(m);
	ck_assert_int_eq(ditto_syscall_set_sequential(c, total + 1), 0);
	assert_invalid(m, "services[0].syscalls[1].sequential");
	ditto_model_free(m);
}
END_TEST

START_TEST(test_syscalls_duplicate_key_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	msgpack_object *arr = mpdoc_need(&d, "services[0].syscalls");
	msgpack_object first = arr->via.array.ptr[0];
	*mp_array_append(&d, arr) = first;
	assert_patch_invalid(&d, "services[0].syscalls");
	tu_assert_err_has("main:read:tcp");
	mpdoc_destroy(&d);
}
END_TEST

START_TEST(test_syscalls_bad_fd_kind_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	mp_set_str(&d, slot(&d, "services[0].syscalls[0]", "fd_kind"), "wormhole");
	assert_patch_invalid(&d, "services[0].syscalls[0].fd_kind");
	mpdoc_destroy(&d);
}
END_TEST

START_TEST(test_syscalls_missing_name_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	ck_assert(mp_map_del(mpdoc_need(&d, "services[0].syscalls[2]"), "name"));
	assert_patch_invalid(&d, "services[0].syscalls[2].name");
	mpdoc_destroy(&d);
}
END_TEST

/* --- requests --- */

START_TEST(test_requests_pipelined_exceeds_count_invalid)
{
	struct ditto_model *m = sample();
	struct ditto_requests *r = ditto_service_requests_ensure(ditto_model_service(m, 1));
	uint64_t count = ditto_requests_count(r);

	ck_assert_int_eq(ditto_requests_set_pipelined(r, count + 1), 0);
	assert_invalid(m, "services[1].requests.pipelined");
	ditto_model_free(m);
}
END_TEST

START_TEST(test_requests_histogram_bad_bucket_invalid)
{
	struct mpdoc d;

	/* a log2 bucket must start at a power of two: 5 does not */
	patch_begin(&d);
	msgpack_object *b = mpdoc_need(&d, "services[0].requests.request_bytes.buckets");
	ck_assert_uint_gt(b->via.array.size, 0);
	msgpack_object *first = &b->via.array.ptr[0];
	ck_assert_int_eq(first->type, MSGPACK_OBJECT_ARRAY);
	mp_set_u64(&first->via.array.ptr[0], 5);
	struct ditto_model *m = NULL;
	ck_assert_int_eq(mpdoc_decode(&d, NULL, &m), -DITTO_EINVALID);
	ck_assert_ptr_null(m);
	tu_assert_err_has("services[0].requests.request_bytes");
	mpdoc_destroy(&d);
}
END_TEST

START_TEST(test_requests_histogram_wrong_kind_invalid)
{
	struct mpdoc d;
	struct ditto_model *m = NULL;

	patch_begin(&d);
	mp_set_str(&d, mpdoc_need(&d, "services[0].requests.response_bytes.kind"), "exact");
	ck_assert_int_eq(mpdoc_decode(&d, NULL, &m), -DITTO_EINVALID);
	ck_assert_ptr_null(m);
	tu_assert_err_has("services[0].requests.response_bytes");
	mpdoc_destroy(&d);
}
END_TEST

/* --- cpu --- */

START_TEST(test_cpu_chased_exceeds_loads_invalid)
{
	struct ditto_model *m = sample();
	struct ditto_cpu *c = ditto_service_cpu(ditto_model_service(m, 0), 0);

	ck_assert_int_eq(ditto_cpu_set_chased_loads(c, ditto_cpu_loads(c) + 1), 0);
	assert_invalid(m, "services[0].cpu[0].chased_loads");
	ditto_model_free(m);
}
END_TEST

START_TEST(test_cpu_undecoded_exceeds_instructions_invalid)
{
	struct ditto_model *m = sample();
	struct ditto_cpu *c = ditto_service_cpu(ditto_model_service(m, 0), 1);

	ck_assert_int_eq(ditto_cpu_set_undecoded(c, ditto_cpu_instructions(c) + 1), 0);
	assert_invalid(m, "services[0].cpu[1].undecoded");
	ditto_model_free(m);
}
END_TEST

START_TEST(test_cpu_mix_empty_key_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	mp_set_u64(slot(&d, "services[0].cpu[0].mix", ""), 5);
	assert_patch_invalid(&d, "services[0].cpu[0].mix");
	mpdoc_destroy(&d);

	/* the typed adder either refuses "" or validation catches it */
	struct ditto_model *m = sample();
	struct ditto_counts *mix = ditto_cpu_mix_ensure(ditto_service_cpu(ditto_model_service(m, 0), 0));
	if (ditto_counts_add(mix, "", 5) == 0)
		assert_invalid(m, "services[0].cpu[0].mix");
	ditto_model_free(m);
}
END_TEST

START_TEST(test_cpu_branch_key_out_of_range_invalid)
{
	struct ditto_model *m = sample();
	struct ditto_cpu *c = ditto_service_cpu(ditto_model_service(m, 0), 0);

	/* taken_bin 9 does not exist (0..8) */
	ck_assert_int_eq(ditto_hist_add(ditto_cpu_branches_ensure(c), 9 * 16 + 1, 1), 0);
	assert_invalid(m, "services[0].cpu[0].branches");
	ditto_model_free(m);
}
END_TEST

START_TEST(test_cpu_unknown_thread_class_invalid)
{
	struct ditto_model *m = sample();
	struct ditto_service *s = ditto_model_service(m, 0);
	size_t n = ditto_service_cpu_count(s);
	char path[64];

	ck_assert_ptr_nonnull(ditto_service_add_cpu(s, "phantom"));
	snprintf(path, sizeof(path), "services[0].cpu[%zu].thread_class", n);
	assert_invalid(m, path);
	ditto_model_free(m);
}
END_TEST

/* --- observed --- */

START_TEST(test_observed_negative_throughput_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	mp_set_f64(slot(&d, "services[0].observed", "throughput_qps"), -10.0);
	assert_patch_invalid(&d, "services[0].observed.throughput_qps");
	mpdoc_destroy(&d);
}
END_TEST

START_TEST(test_observed_load_qps_nan_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	mp_set_f64(mpdoc_need(&d, "services[1].observed.loads[2].achieved_qps"), NAN);
	assert_patch_invalid(&d, "services[1].observed.loads[2].achieved_qps");
	mpdoc_destroy(&d);
}
END_TEST

START_TEST(test_observed_duplicate_load_point_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	msgpack_object *q0 = mpdoc_need(&d, "services[0].observed.loads[0].qps");
	msgpack_object copy = *q0;
	*mpdoc_need(&d, "services[0].observed.loads[1].qps") = copy;
	assert_patch_invalid(&d, "services[0].observed.loads");
	mpdoc_destroy(&d);
}
END_TEST

/* --- graph --- */

START_TEST(test_graph_edge_unknown_node_invalid)
{
	struct ditto_model *m = sample();
	struct ditto_graph *g = ditto_model_graph_ensure(m);
	size_t n = ditto_graph_edge_count(g);
	char path[64];

	if (ditto_graph_add_edge(g, "redis", "ghost") == NULL) {
		/* the adder refuses: craft it in msgpack */
		struct mpdoc d;

		mpdoc_from_model(&d, m);
		mp_set_str(&d, mpdoc_need(&d, "graph.edges[0].to"), "ghost");
		assert_patch_invalid(&d, "graph.edges[0].to");
		mpdoc_destroy(&d);
	} else {
		snprintf(path, sizeof(path), "graph.edges[%zu].to", n);
		assert_invalid(m, path);
		tu_assert_err_has("ghost");
	}
	ditto_model_free(m);
}
END_TEST

START_TEST(test_graph_edge_unknown_from_in_msgpack_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	mp_set_str(&d, mpdoc_need(&d, "graph.edges[0].from"), "nobody");
	assert_patch_invalid(&d, "graph.edges[0].from");
	mpdoc_destroy(&d);
}
END_TEST

START_TEST(test_graph_duplicate_node_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	msgpack_object *nodes = mpdoc_need(&d, "graph.nodes");
	msgpack_object first = nodes->via.array.ptr[0];
	*mp_array_append(&d, nodes) = first;
	assert_patch_invalid(&d, "graph.nodes");
	mpdoc_destroy(&d);
}
END_TEST

START_TEST(test_graph_bad_edge_mode_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	mp_set_str(&d, mpdoc_need(&d, "graph.edges[0].mode"), "maybe");
	assert_patch_invalid(&d, "graph.edges[0].mode");
	mpdoc_destroy(&d);
}
END_TEST

/* --- tuning --- */

START_TEST(test_tuning_knob_not_finite_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	mp_set_f64(slot(&d, "tuning.knobs", "synth.d1_mpki"), INFINITY);
	assert_patch_invalid(&d, "tuning.knobs");
	tu_assert_err_has("synth.d1_mpki");
	mpdoc_destroy(&d);

	/* the typed setter refuses it outright */
	struct ditto_model *m = sample();
	ck_assert_int_eq(ditto_values_set(ditto_tuning_knobs_ensure(ditto_model_tuning_ensure(m)), "x", NAN),
			 -EINVAL);
	assert_valid(m);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_tuning_iteration_error_nan_invalid)
{
	struct mpdoc d;

	patch_begin(&d);
	mp_set_f64(slot(&d, "tuning.iterations[1].errors", "d1_miss_rate"), NAN);
	assert_patch_invalid(&d, "tuning.iterations[1].errors");
	mpdoc_destroy(&d);
}
END_TEST

/* --- schema --- */

START_TEST(test_root_schema_checked)
{
	struct mpdoc d;
	DITTO_OPTS(ditto_load_opts, nv, .no_validate = true);
	struct ditto_model *m = NULL;

	patch_begin(&d);
	mp_set_u64(mpdoc_need(&d, "schema"), 2);
	int rc = mpdoc_decode(&d, &nv, &m);
	/* another schema version is refused even without validation */
	ck_assert_int_eq(rc, -DITTO_ESCHEMA);
	ck_assert_ptr_null(m);
	mpdoc_destroy(&d);
}
END_TEST

/* --- every problem reaches the callback --- */

struct problems {
	int n;
	char paths[32][128];
	char msgs[32][256];
};

static void on_problem(const char *path, const char *msg, void *user)
{
	struct problems *p = user;

	ck_assert_ptr_nonnull(path);
	ck_assert_ptr_nonnull(msg);
	if (p->n < 32) {
		snprintf(p->paths[p->n], sizeof(p->paths[0]), "%s", path);
		snprintf(p->msgs[p->n], sizeof(p->msgs[0]), "%s", msg);
	}
	p->n++;
}

static bool has_path(const struct problems *p, const char *path)
{
	for (int i = 0; i < p->n && i < 32; i++)
		if (strcmp(p->paths[i], path) == 0)
			return true;
	return false;
}

START_TEST(test_problem_callback_gets_every_problem)
{
	struct mpdoc d;
	struct ditto_model *m = NULL;
	struct problems probs;
	DITTO_OPTS(ditto_load_opts, nv, .no_validate = true);

	patch_begin(&d);
	mp_set_f64(slot(&d, "meta", "window_s"), -3.0);
	mp_set_str(&d, mpdoc_need(&d, "services[0].threads[0].role"), "overlord");
	msgpack_object *calls = mpdoc_need(&d, "services[1].syscalls[0].calls");
	mp_set_u64(slot(&d, "services[1].syscalls[0]", "errors"), calls->via.u64 + 10);
	mp_set_str(&d, mpdoc_need(&d, "graph.edges[0].to"), "ghost");
	mp_set_f64(slot(&d, "tuning.knobs", "synth.branch_bias"), NAN);
	ck_assert_int_eq(mpdoc_decode(&d, &nv, &m), 0);
	mpdoc_destroy(&d);

	memset(&probs, 0, sizeof(probs));
	DITTO_OPTS(ditto_validate_opts, vo, .problem = on_problem, .user = &probs);
	ck_assert_int_eq(ditto_model_validate(m, &vo), -DITTO_EINVALID);
	ck_assert_int_eq(probs.n, 5);
	ck_assert(has_path(&probs, "meta.window_s"));
	ck_assert(has_path(&probs, "services[0].threads[0].role"));
	ck_assert(has_path(&probs, "services[1].syscalls[0].errors"));
	ck_assert(has_path(&probs, "graph.edges[0].to"));
	ck_assert(has_path(&probs, "tuning.knobs.synth.branch_bias") ||
		  has_path(&probs, "tuning.knobs"));
	for (int i = 0; i < probs.n; i++)
		ck_assert_str_ne(probs.msgs[i], "");
	/* last_error names the first problem as "path: message" */
	char first[512];
	snprintf(first, sizeof(first), "%s: %s", probs.paths[0], probs.msgs[0]);
	tu_assert_err_has(first);

	/* without a callback: stops at the first, same code */
	ck_assert_int_eq(ditto_model_validate(m, NULL), -DITTO_EINVALID);
	tu_assert_err_has(probs.paths[0]);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_problem_callback_silent_for_valid_model)
{
	struct ditto_model *m = sample();
	struct problems probs;

	memset(&probs, 0, sizeof(probs));
	DITTO_OPTS(ditto_validate_opts, vo, .problem = on_problem, .user = &probs);
	ck_assert_int_eq(ditto_model_validate(m, &vo), 0);
	ck_assert_int_eq(probs.n, 0);
	ditto_model_free(m);
}
END_TEST

/* --- warnings: valid, but not usable by this library --- */

/* Validate m with both callbacks; problems must be none. */
static void collect_warnings(const struct ditto_model *m, struct problems *warn)
{
	struct problems probs;

	memset(&probs, 0, sizeof(probs));
	memset(warn, 0, sizeof(*warn));
	DITTO_OPTS(ditto_validate_opts, vo, .problem = on_problem, .warning = on_problem,
		   .user = warn);
	ck_assert_int_eq(ditto_model_validate(m, &vo), 0);
	DITTO_OPTS(ditto_validate_opts, po, .problem = on_problem, .user = &probs);
	ck_assert_int_eq(ditto_model_validate(m, &po), 0);
	ck_assert_int_eq(probs.n, 0);
}

START_TEST(test_sample_models_have_no_warnings)
{
	for (uint64_t seed = 0; seed < 8; seed++) {
		struct ditto_model *m = tu_sample(seed);
		struct problems warn;

		collect_warnings(m, &warn);
		ck_assert_msg(warn.n == 0, "seed %llu: %s: %s", (unsigned long long)seed,
			      warn.paths[0], warn.msgs[0]);
		ditto_model_free(m);
	}
}
END_TEST

START_TEST(test_mix_keys_of_another_format_warn)
{
	static const char *const good[] = {
		"ret.-.r.64.base", "nop.-.none.0.base", "vint.rr.none.128.sse4.2",
		"x87.m.r.80.x87", "alu.rmi.none.16.bmi",
	};
	static const char *const bad[] = {
		"int.add.reg.reg.64.base",	/* the format before insn_class.c */
		"alu.rr.none.64",		/* four parts */
		"alu.rx.none.64.base",		/* operand letter */
		"alu.rr.none.65.base",		/* not whole bytes */
		"alu.rr.none.064.base",		/* not plain decimal */
		"alu.rr.rwx.64.base",		/* memory direction */
		"load.rr.none.64.base",		/* function */
		"alu.rr.none.64.neon",		/* extension */
	};
	struct ditto_model *m = sample();
	struct ditto_counts *mix = ditto_cpu_mix_ensure(ditto_service_cpu(ditto_model_service(m, 0), 0));
	struct problems warn;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_int_eq(ditto_counts_add(mix, good[i], 1), 0);
	collect_warnings(m, &warn);
	ck_assert_msg(warn.n == 0, "%s: %s", warn.paths[0], warn.msgs[0]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(ditto_counts_add(mix, bad[i], 1), 0);
	collect_warnings(m, &warn);
	ck_assert_int_eq(warn.n, (int)(sizeof(bad) / sizeof(bad[0])));
	for (int i = 0; i < warn.n; i++) {
		ck_assert_str_eq(warn.paths[i], "services[0].cpu[0].mix");
		ck_assert_msg(strstr(warn.msgs[i], bad[i]), "%s lacks %s", warn.msgs[i], bad[i]);
	}
	/* still valid, so it still loads */
	assert_valid(m);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_unknown_knob_names_warn_but_load)
{
	struct ditto_model *m = sample(), *back;
	struct ditto_tuning *t = ditto_model_tuning_ensure(m);
	struct problems warn;
	void *buf;
	size_t len;

	ck_assert_int_eq(ditto_values_set(ditto_tuning_knobs_ensure(t), "dws_weight", 1.5), 0);
	ck_assert_int_eq(ditto_values_set(ditto_tuning_iter_knobs_ensure(ditto_tuning_iteration(t, 0)),
					  "synth.future_knob", 2), 0);
	collect_warnings(m, &warn);
	ck_assert_int_eq(warn.n, 2);
	ck_assert(has_path(&warn, "tuning.knobs"));
	ck_assert(has_path(&warn, "tuning.iterations[0].knobs"));
	ck_assert(strstr(warn.msgs[0], "dws_weight") || strstr(warn.msgs[1], "dws_weight"));
	/* a newer writer's model loads with the default (validating) decode */
	tu_encode(m, &buf, &len);
	back = tu_decode_ok(buf, len);
	ck_assert_int_eq(ditto_values_get(ditto_tuning_knobs(ditto_model_tuning(back)), "dws_weight",
					  &(double){ 0 }), 0);
	ditto_free(buf);
	ditto_model_free(back);
	ditto_model_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("validate");
	TCase *tc = tu_tcase("validate");

	tcase_add_test(tc, test_sample_models_are_valid);
	tcase_add_test(tc, test_patch_roundtrip_unchanged_is_valid);
	tcase_add_test(tc, test_meta_window_negative_invalid);
	tcase_add_test(tc, test_meta_window_nan_invalid);
	tcase_add_test(tc, test_meta_window_setter_refuses_bad_values);
	tcase_add_test(tc, test_meta_sources_zero_invalid);
	tcase_add_test(tc, test_services_duplicate_name_invalid);
	tcase_add_test(tc, test_services_empty_name_invalid);
	tcase_add_test(tc, test_services_missing_name_invalid);
	tcase_add_test(tc, test_services_bad_framing_invalid);
	tcase_add_test(tc, test_services_port_out_of_range_invalid);
	tcase_add_test(tc, test_services_processes_zero_invalid);
	tcase_add_test(tc, test_threads_bad_role_invalid);
	tcase_add_test(tc, test_threads_bad_io_model_invalid);
	tcase_add_test(tc, test_threads_count_zero_invalid);
	tcase_add_test(tc, test_threads_duplicate_name_invalid);
	tcase_add_test(tc, test_threads_woken_by_unknown_class_invalid);
	tcase_add_test(tc, test_network_bad_io_model_invalid);
	tcase_add_test(tc, test_network_bad_client_mode_invalid);
	tcase_add_test(tc, test_syscalls_unknown_thread_class_invalid);
	tcase_add_test(tc, test_syscalls_errors_exceed_calls_invalid);
	tcase_add_test(tc, test_syscalls_sequential_exceeds_offsets_invalid);
	tcase_add_test(tc, test_syscalls_duplicate_key_invalid);
	tcase_add_test(tc, test_syscalls_bad_fd_kind_invalid);
	tcase_add_test(tc, test_syscalls_missing_name_invalid);
	tcase_add_test(tc, test_requests_pipelined_exceeds_count_invalid);
	tcase_add_test(tc, test_requests_histogram_bad_bucket_invalid);
	tcase_add_test(tc, test_requests_histogram_wrong_kind_invalid);
	tcase_add_test(tc, test_cpu_chased_exceeds_loads_invalid);
	tcase_add_test(tc, test_cpu_undecoded_exceeds_instructions_invalid);
	tcase_add_test(tc, test_cpu_mix_empty_key_invalid);
	tcase_add_test(tc, test_cpu_branch_key_out_of_range_invalid);
	tcase_add_test(tc, test_cpu_unknown_thread_class_invalid);
	tcase_add_test(tc, test_observed_negative_throughput_invalid);
	tcase_add_test(tc, test_observed_load_qps_nan_invalid);
	tcase_add_test(tc, test_observed_duplicate_load_point_invalid);
	tcase_add_test(tc, test_graph_edge_unknown_node_invalid);
	tcase_add_test(tc, test_graph_edge_unknown_from_in_msgpack_invalid);
	tcase_add_test(tc, test_graph_duplicate_node_invalid);
	tcase_add_test(tc, test_graph_bad_edge_mode_invalid);
	tcase_add_test(tc, test_tuning_knob_not_finite_invalid);
	tcase_add_test(tc, test_tuning_iteration_error_nan_invalid);
	tcase_add_test(tc, test_root_schema_checked);
	tcase_add_test(tc, test_problem_callback_gets_every_problem);
	tcase_add_test(tc, test_problem_callback_silent_for_valid_model);
	tcase_add_test(tc, test_sample_models_have_no_warnings);
	tcase_add_test(tc, test_mix_keys_of_another_format_warn);
	tcase_add_test(tc, test_unknown_knob_names_warn_but_load);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
