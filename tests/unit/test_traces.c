/* SPDX-License-Identifier: MIT */
/*
 * ditto_profile_import_traces(): the graph of the hand-made scenario of
 * traces/make_exports.py, exactly, from each format; and hostile files,
 * which must give an error naming the place, never a crash or a graph.
 */
#include <errno.h>
#include <unistd.h>

#include <ditto/profile.h>

#include "tu.h"

static char tmpdir[] = "/tmp/ditto-traces-XXXXXX";

static const char *data(const char *name)
{
	static char path[4096];
	const char *dir = getenv("DITTO_TRACE_DATA");

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/unit/traces", name);
	return path;
}

/* A file of the given text in the test's directory. */
static const char *write_tmp(const char *name, const char *text, size_t len)
{
	static char path[4][4096];
	static int slot;
	char *p = path[slot++ % 4];
	FILE *f;

	snprintf(p, 4096, "%s/%s", tmpdir, name);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(text, 1, len, f), len);
	fclose(f);
	return p;
}

static struct ditto_model *import_ok(const char *path, int format, bool uncorrected)
{
	DITTO_OPTS(ditto_trace_opts, o, .format = format, .uncorrected = uncorrected);
	struct ditto_model *m = ditto_model_new();
	int rc = ditto_profile_import_traces(m, &path, 1, &o);

	ck_assert_msg(rc == 0, "import %s: %d %s", path, rc, ditto_last_error());
	ck_assert_int_eq(ditto_model_validate(m, NULL), 0);
	return m;
}

static int import_err(const char *path, int format, size_t max_spans, size_t max_bytes)
{
	DITTO_OPTS(ditto_trace_opts, o, .format = format, .max_spans = max_spans,
		   .max_file_bytes = max_bytes);
	struct ditto_model *m = ditto_model_new();
	int rc = ditto_profile_import_traces(m, &path, 1, &o);

	/* Nothing is added by an import that fails. */
	ck_assert_ptr_null(ditto_model_graph(m));
	ditto_model_free(m);
	return rc;
}

static uint64_t bucket(const struct ditto_hist *h, uint64_t value)
{
	for (size_t i = 0; i < ditto_hist_bucket_count(h); i++) {
		uint64_t lo, hi, n;

		ck_assert_int_eq(ditto_hist_bucket(h, i, &lo, &hi, &n), 0);
		if (lo == value)
			return n;
	}
	return 0;
}

static struct ditto_edge *edge(const struct ditto_model *m, const char *from, const char *to)
{
	struct ditto_edge *e =
		ditto_graph_find_source_edge(ditto_model_graph(m), DITTO_EDGE_TRACES, from, to);

	ck_assert_msg(e != NULL, "no edge %s -> %s", from, to);
	return e;
}

/* The scenario's graph; scale is 2 where the 50% sampling is corrected. */
static void check_scenario(const struct ditto_model *m, uint64_t scale, double ratio)
{
	const struct ditto_graph *g = ditto_model_graph(m);
	const struct ditto_traces *t = ditto_graph_traces(g);
	struct ditto_edge *e;
	struct ditto_external *x;

	ck_assert_uint_eq(ditto_graph_node_count(g), 5);
	ck_assert_uint_eq(ditto_graph_edge_count(g), 4);

	e = edge(m, "front", "back");	/* 2, 2 and 3 sequential calls */
	ck_assert_uint_eq(ditto_edge_calls(e), 7 * scale);
	ck_assert_uint_eq(ditto_edge_parent_requests(e), 3 * scale);
	ck_assert_uint_eq(ditto_edge_unattributed(e), 0);
	ck_assert_uint_eq(bucket(ditto_edge_fanout(e), 2), 2);
	ck_assert_uint_eq(bucket(ditto_edge_fanout(e), 3), 1);
	ck_assert_uint_eq(ditto_hist_total(ditto_edge_fanout(e)), 3);
	ck_assert_int_eq(ditto_edge_mode(e), DITTO_CALL_SYNC);
	ck_assert_int_eq(ditto_edge_order(e), DITTO_ORDER_SEQUENTIAL);
	/* sizes: the client's request size, the server's response size */
	ck_assert_uint_eq(ditto_hist_total(ditto_edge_request_bytes(e)), 3);
	ck_assert_uint_eq(ditto_hist_total(ditto_edge_response_bytes(e)), 3);
	ck_assert_uint_eq(ditto_hist_total(ditto_edge_latency_ns(e)), 7);
	ck_assert(ditto_hist_quantile(ditto_edge_latency_ns(e), 0.5) >= 150000);

	e = edge(m, "front", "audit");	/* ends after front's response */
	ck_assert_uint_eq(ditto_edge_calls(e), 3 * scale);
	ck_assert_int_eq(ditto_edge_mode(e), DITTO_CALL_ASYNC);
	ck_assert_uint_eq(bucket(ditto_edge_fanout(e), 1), 3);

	e = edge(m, "front", "redis-6379");	/* under an INTERNAL span */
	ck_assert_uint_eq(ditto_edge_calls(e), 3 * scale);
	ck_assert_uint_eq(ditto_edge_unattributed(e), 0);
	ck_assert_int_eq(ditto_edge_mode(e), DITTO_CALL_SYNC);

	e = edge(m, "back", "memcached-11211");	/* 2 overlapping, 1, 0; 1 orphan */
	ck_assert_uint_eq(ditto_edge_calls(e), 10 * scale);
	ck_assert_uint_eq(ditto_edge_parent_requests(e), 7 * scale);
	ck_assert_uint_eq(ditto_edge_unattributed(e), 1 * scale);
	ck_assert_uint_eq(bucket(ditto_edge_fanout(e), 0), 1);
	ck_assert_uint_eq(bucket(ditto_edge_fanout(e), 1), 3);
	ck_assert_uint_eq(bucket(ditto_edge_fanout(e), 2), 3);
	ck_assert_int_eq(ditto_edge_order(e), DITTO_ORDER_PARALLEL);

	x = ditto_graph_find_external(g, "redis-6379");
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(ditto_external_port(x), 6379);
	ck_assert_int_eq(ditto_external_framing(x), DITTO_FRAMING_RESP);
	x = ditto_graph_find_external(g, "memcached-11211");
	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(ditto_external_framing(x), DITTO_FRAMING_MEMCACHE_TEXT);

	ck_assert_uint_eq(ditto_traces_files(t), 1);
	ck_assert_uint_eq(ditto_traces_spans(t), 39);
	ck_assert_uint_eq(ditto_traces_traces(t), 3);
	ck_assert_uint_eq(ditto_traces_orphan_spans(t), 1);
	ck_assert_uint_eq(ditto_traces_rejected_spans(t), 0);
	ck_assert(ditto_traces_sample_ratio(t) == ratio);
	ck_assert(ditto_traces_corrected(t) == (scale == 2));
}

START_TEST(test_otlp_json_lines)
{
	/* strings and numbers for times and intValues, kinds by name and
	 * number, tracestate ot=th:8 (50%), links that make no parent */
	struct ditto_model *m = import_ok(data("scenario.otlp.jsonl"), DITTO_TRACES_AUTO, false);

	check_scenario(m, 2, 0.5);
	ditto_model_free(m);
	m = import_ok(data("scenario.otlp.jsonl"), DITTO_TRACES_OTLP_JSON, true);
	check_scenario(m, 1, 0.5);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_jaeger)
{
	struct ditto_model *m = import_ok(data("scenario.jaeger.json"), DITTO_TRACES_AUTO, false);

	check_scenario(m, 2, 0.5);
	ditto_model_free(m);
	m = import_ok(data("scenario.jaeger.json"), DITTO_TRACES_JAEGER_JSON, true);
	check_scenario(m, 1, 0.5);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_zipkin_shared_ids)
{
	/* back's server spans share their client's id: split, same graph */
	struct ditto_model *m = import_ok(data("scenario.zipkin.json"), DITTO_TRACES_AUTO, false);

	check_scenario(m, 1, 0);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_same_file_twice_counts_once)
{
	const char *paths[] = { data("scenario.zipkin.json"), NULL };
	struct ditto_model *m = ditto_model_new();
	const struct ditto_traces *t;

	paths[1] = strdup(paths[0]);
	ck_assert_int_eq(ditto_profile_import_traces(m, paths, 2, NULL), 0);
	t = ditto_graph_traces(ditto_model_graph(m));
	ck_assert_uint_eq(ditto_traces_files(t), 2);
	ck_assert_uint_eq(ditto_traces_spans(t), 39);
	ck_assert_uint_eq(ditto_traces_rejected_spans(t), 39);
	ck_assert_uint_eq(ditto_edge_calls(edge(m, "front", "back")), 7);
	/* a second import into the same model is refused */
	ck_assert_int_eq(ditto_profile_import_traces(m, paths, 1, NULL), -EEXIST);
	free((char *)paths[1]);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_wrong_format_given)
{
	ck_assert_int_eq(import_err(data("scenario.zipkin.json"), DITTO_TRACES_OTLP_JSON, 0, 0),
			 -DITTO_ECORRUPT);
	tu_assert_err_has("scenario.zipkin.json:1: ");
	tu_assert_err_has("looks like a Zipkin v2 span list");
	ck_assert_int_eq(import_err(data("scenario.otlp.jsonl"), DITTO_TRACES_JAEGER_JSON, 0, 0),
			 -DITTO_ECORRUPT);
	tu_assert_err_has("looks like OTLP JSON");
	ck_assert_int_eq(import_err(write_tmp("x.json", "{\"a\":1}", 7), 0, 0, 0),
			 -DITTO_ECORRUPT);
	tu_assert_err_has("not a trace export");
}
END_TEST

START_TEST(test_depth_and_counts)
{
	size_t n = 10000;
	char *deep = malloc(2 * n + 1);

	memset(deep, '[', n);
	memset(deep + n, ']', n);
	deep[2 * n] = '\0';
	ck_assert_int_eq(import_err(write_tmp("deep.json", deep, 2 * n), 0, 0, 0), -DITTO_ELIMIT);
	tu_assert_err_has("deep.json:1:65: nested deeper than 64 levels");
	free(deep);
	ck_assert_int_eq(import_err(data("scenario.jaeger.json"), 0, 5, 0), -DITTO_ELIMIT);
	tu_assert_err_has("more than 5 spans");
	ck_assert_int_eq(import_err(data("scenario.jaeger.json"), 0, 0, 1000), -DITTO_ELIMIT);
	tu_assert_err_has("scenario.jaeger.json: ");
	tu_assert_err_has("more than the limit of 1000");
}
END_TEST

START_TEST(test_wrong_types_name_the_place)
{
	static const char otlp[] =
		"{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"traceId\":\"01\",\"spanId\":"
		"\"02\",\"startTimeUnixNano\":\"1\",\"endTimeUnixNano\":\"2\"},{\"traceId\":\"01\","
		"\"spanId\":\"03\",\"startTimeUnixNano\":true,\"endTimeUnixNano\":2}]}]}]}";
	static const char b64[] =
		"{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"traceId\":"
		"\"W47DjaZ3MA2l0ZlRdGTTcQ==\",\"spanId\":\"02\"}]}]}]}";
	static const char zipkin[] = "[{\"traceId\":\"01\",\"id\":\"02\",\"timestamp\":1,"
				     "\"tags\":{\"http.status_code\":200}}]";
	static const char jaeger[] = "{\"data\":[{\"spans\":[{\"traceID\":\"01\",\"spanID\":\"02\","
				     "\"startTime\":1,\"references\":[{\"refType\":\"PARENT\"}]}]}]}";
	static const char kind[] = "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"traceId\":"
				   "\"01\",\"spanId\":\"02\",\"kind\":9}]}]}]}";

	ck_assert_int_eq(import_err(write_tmp("t.json", otlp, sizeof(otlp) - 1), 0, 0, 0),
			 -DITTO_ECORRUPT);
	tu_assert_err_has("t.json:1: resourceSpans[0].scopeSpans[0].spans[1].startTimeUnixNano: "
			  "not a number");
	ck_assert_int_eq(import_err(write_tmp("b.json", b64, sizeof(b64) - 1), 0, 0, 0),
			 -DITTO_ECORRUPT);
	tu_assert_err_has("spans[0].traceId: not a hex trace id");
	ck_assert_int_eq(import_err(write_tmp("z.json", zipkin, sizeof(zipkin) - 1), 0, 0, 0),
			 -DITTO_ECORRUPT);
	tu_assert_err_has("z.json:1: [0].tags.http.status_code: not a string");
	ck_assert_int_eq(import_err(write_tmp("j.json", jaeger, sizeof(jaeger) - 1), 0, 0, 0),
			 -DITTO_ECORRUPT);
	tu_assert_err_has("data[0].spans[0].references[0].refType: 'PARENT' is no reference type");
	ck_assert_int_eq(import_err(write_tmp("k.json", kind, sizeof(kind) - 1), 0, 0, 0),
			 -DITTO_ECORRUPT);
	tu_assert_err_has("spans[0].kind: not a span kind");
}
END_TEST

START_TEST(test_truncated_and_empty)
{
	FILE *f = fopen(data("scenario.otlp.jsonl"), "r");
	char buf[700];
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	ck_assert_uint_eq(n, sizeof(buf));
	ck_assert_int_eq(import_err(write_tmp("cut.json", buf, n), 0, 0, 0), -DITTO_ECORRUPT);
	tu_assert_err_has("cut.json:1:");
	ck_assert_int_eq(import_err(write_tmp("empty.json", "  \n", 3), 0, 0, 0),
			 -DITTO_ECORRUPT);
	tu_assert_err_has("empty.json: no JSON document");
	ck_assert_int_eq(import_err("/nonexistent/t.json", 0, 0, 0), -ENOENT);
	tu_assert_err_has("/nonexistent/t.json");
}
END_TEST

START_TEST(test_follows_from_and_producer_are_async)
{
	/* a FOLLOWS_FROM consumer under a producer: async by both rules */
	static const char jaeger[] =
		"{\"data\":[{\"traceID\":\"1\",\"processes\":{\"p\":{\"serviceName\":\"a\"},"
		"\"q\":{\"serviceName\":\"b\"}},\"spans\":["
		"{\"traceID\":\"1\",\"spanID\":\"1\",\"startTime\":10,\"duration\":100,"
		"\"processID\":\"p\",\"tags\":[{\"key\":\"span.kind\",\"value\":\"server\"}]},"
		"{\"traceID\":\"1\",\"spanID\":\"2\",\"startTime\":20,\"duration\":5,\"processID\":"
		"\"p\",\"references\":[{\"refType\":\"CHILD_OF\",\"traceID\":\"1\",\"spanID\":\"1\"}],"
		"\"tags\":[{\"key\":\"span.kind\",\"value\":\"producer\"}]},"
		"{\"traceID\":\"1\",\"spanID\":\"3\",\"startTime\":30,\"duration\":5,\"processID\":"
		"\"q\",\"references\":[{\"refType\":\"FOLLOWS_FROM\",\"traceID\":\"1\",\"spanID\":"
		"\"2\"},{\"refType\":\"CHILD_OF\",\"traceID\":\"9\",\"spanID\":\"7\"}],"
		"\"tags\":[{\"key\":\"span.kind\",\"value\":\"consumer\"}]}]}]}";
	const char *p = write_tmp("ff.json", jaeger, sizeof(jaeger) - 1);
	struct ditto_model *m = import_ok(p, 0, false);
	struct ditto_edge *e;

	/* the first CHILD_OF wins, and it is in another trace: an orphan */
	ck_assert_uint_eq(ditto_traces_orphan_spans(ditto_graph_traces(ditto_model_graph(m))), 1);
	ck_assert_ptr_null(ditto_graph_find_source_edge(ditto_model_graph(m), DITTO_EDGE_TRACES,
							"a", "b"));
	e = edge(m, "a", "tcp");	/* no consumer child: an external with no port */
	ck_assert_int_eq(ditto_edge_mode(e), DITTO_CALL_ASYNC);
	ditto_model_free(m);
}
END_TEST

START_TEST(test_host_name_peer_is_no_address)
{
	/* found by the fuzz targets: a host name in net.peer.name made an
	 * external whose address no valid model holds */
	static const char otlp[] =
		"{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
		"\"value\":{\"stringValue\":\"a\"}}]},\"scopeSpans\":[{\"spans\":[{\"traceId\":"
		"\"1\",\"spanId\":\"1\",\"kind\":3,\"startTimeUnixNano\":1,\"endTimeUnixNano\":2,"
		"\"attributes\":[{\"key\":\"net.peer.name\",\"value\":{\"stringValue\":"
		"\"cache.local\"}},{\"key\":\"db.system\",\"value\":{\"stringValue\":\"redis\"}},"
		"{\"key\":\"net.peer.port\",\"value\":{\"intValue\":\"6380\"}}]}]}]}]}";
	struct ditto_model *m = import_ok(write_tmp("h.json", otlp, sizeof(otlp) - 1), 0, false);
	struct ditto_external *x = ditto_graph_find_external(ditto_model_graph(m), "redis-6380");
	const char *addr;

	ck_assert_ptr_nonnull(x);
	addr = ditto_external_address(x);
	ck_assert(addr == NULL || *addr == '\0');
	ck_assert_uint_eq(ditto_external_port(x), 6380);
	/* a root call: unattributed, from a service that served nothing */
	ck_assert_uint_eq(ditto_edge_unattributed(edge(m, "a", "redis-6380")), 1);
	ck_assert_uint_eq(ditto_edge_parent_requests(edge(m, "a", "redis-6380")), 0);
	ditto_model_free(m);
}
END_TEST

/* An OTLP export: a serves one request and calls 127.0.0.1:7001 (or
 * addr) with no server span for the call in the set; b, which the model
 * profiled on port 7001, serves a request of another trace. */
static struct ditto_model *missing_callee(const char *addr, const char *file)
{
	char otlp[2048];
	struct ditto_model *m = ditto_model_new();
	const char *path;
	int n;
	DITTO_OPTS(ditto_trace_opts, o);

	n = snprintf(otlp, sizeof(otlp),
		"{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
		"\"value\":{\"stringValue\":\"a\"}}]},\"scopeSpans\":[{\"spans\":["
		"{\"traceId\":\"1\",\"spanId\":\"1\",\"kind\":2,\"startTimeUnixNano\":10,"
		"\"endTimeUnixNano\":100},"
		"{\"traceId\":\"1\",\"spanId\":\"2\",\"parentSpanId\":\"1\",\"kind\":3,"
		"\"startTimeUnixNano\":20,\"endTimeUnixNano\":50,\"attributes\":["
		"{\"key\":\"server.address\",\"value\":{\"stringValue\":\"%s\"}},"
		"{\"key\":\"server.port\",\"value\":{\"intValue\":\"7001\"}}]}]}]},"
		"{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
		"\"value\":{\"stringValue\":\"b\"}}]},\"scopeSpans\":[{\"spans\":["
		"{\"traceId\":\"2\",\"spanId\":\"3\",\"kind\":2,\"startTimeUnixNano\":10,"
		"\"endTimeUnixNano\":30}]}]}]}",
		addr);
	ck_assert(n > 0 && (size_t)n < sizeof(otlp));
	path = write_tmp(file, otlp, (size_t)n);
	ck_assert_int_eq(ditto_service_add_port(ditto_model_add_service(m, "b"), 7001), 0);
	ck_assert_msg(ditto_profile_import_traces(m, &path, 1, &o) == 0, "%s", ditto_last_error());
	ck_assert_int_eq(ditto_model_validate(m, NULL), 0);
	return m;
}

START_TEST(test_missing_callee_on_a_profiled_port)
{
	/* found on the shop: front's keep-alive calls to back whose spans
	 * the window missed became an external "tcp-PORT" beside back */
	struct ditto_model *m = missing_callee("127.0.0.1", "local.json");
	const struct ditto_graph *g = ditto_model_graph(m);

	ck_assert_uint_eq(ditto_edge_calls(edge(m, "a", "b")), 1);
	ck_assert_ptr_null(ditto_graph_find_external(g, "tcp-7001"));
	ck_assert_ptr_null(ditto_graph_find_external(g, "b"));
	ditto_model_free(m);

	/* the same port on another host is not the profiled service */
	m = missing_callee("10.1.2.3", "remote.json");
	g = ditto_model_graph(m);
	ck_assert_ptr_nonnull(ditto_graph_find_external(g, "tcp-7001"));
	ck_assert_ptr_null(ditto_graph_find_source_edge(g, DITTO_EDGE_TRACES, "a", "b"));
	ditto_model_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traces");
	TCase *tc = tu_tcase("traces");
	int rc;

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	tcase_add_test(tc, test_otlp_json_lines);
	tcase_add_test(tc, test_missing_callee_on_a_profiled_port);
	tcase_add_test(tc, test_jaeger);
	tcase_add_test(tc, test_zipkin_shared_ids);
	tcase_add_test(tc, test_same_file_twice_counts_once);
	tcase_add_test(tc, test_wrong_format_given);
	tcase_add_test(tc, test_depth_and_counts);
	tcase_add_test(tc, test_wrong_types_name_the_place);
	tcase_add_test(tc, test_truncated_and_empty);
	tcase_add_test(tc, test_follows_from_and_producer_are_async);
	tcase_add_test(tc, test_host_name_peer_is_no_address);
	suite_add_tcase(s, tc);
	rc = tu_run(s);
	/* the few files written here */
	{
		static const char *const names[] = { "x.json", "deep.json", "t.json", "b.json",
						     "z.json", "j.json", "k.json", "cut.json",
						     "empty.json", "ff.json", "h.json" };
		char p[4200];

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(p, sizeof(p), "%s/%s", tmpdir, names[i]);
			unlink(p);
		}
		rmdir(tmpdir);
	}
	return rc;
}
