/* SPDX-License-Identifier: MIT */
/*
 * Schema version 1 of the model, as tables (see schema.h), and the rules
 * that span several fields of a section.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "schema.h"
#include "knob_table.h"

const char *const enum_framing[] = { "unknown", "raw", "http1", "resp", "memcache-text",
				     "memcache-binary", "length-prefixed", "postgres", "mysql",
				     NULL };
const char *const enum_role[] = { "unknown", "main", "acceptor", "network", "worker",
				  "background", NULL };
const char *const enum_io_model[] = { "unknown", "blocking", "nonblocking", "epoll", "poll",
				      "select", NULL };
const char *const enum_fd_kind[] = { "none", "tcp", "udp", "unix", "file", "pipe", "eventfd",
				     "timerfd", "epoll", "other", NULL };
const char *const enum_call_mode[] = { "unknown", "sync", "async", NULL };
const char *const enum_call_order[] = { "unknown", "sequential", "parallel", NULL };
const char *const enum_edge_source[] = { "kernel", "traces", NULL };

#define FIELDS(arr) arr, ARRAY_SIZE(arr)
#define F(n, t, mg, cp, ...) { .name = n, .type = t, .merge = mg, .cmp = cp, __VA_ARGS__ }
#define KEYSTR(n) F(n, FT_STR, MG_KEY, CP_NONE, .flags = F_KEY | F_NONEMPTY)
#define COUNT(n, cp, ...) F(n, FT_U64, MG_SUM, cp, __VA_ARGS__)
#define HIST(n, kind, cp) F(n, FT_HIST, MG_SUM, cp, .hist_kind = kind)
#define OBJ(n, s, mg, cp) F(n, FT_OBJ, mg, cp, .sub = &s)
#define ARR(n, s, mg, cp) F(n, FT_ARR, mg, cp, .sub = &s)
#define ENUM(n, tbl, mg, cp, ...) F(n, FT_ENUM, mg, cp, .enums = tbl, __VA_ARGS__)

/* ---- rules across fields ---- */

static bool names_thread(const struct dnode *service, const char *name)
{
	const struct dnode *threads = dn_get(service, "threads");

	if (!threads || threads->type != DN_ARR)
		return false;
	for (size_t i = 0; i < threads->a.n; i++)
		if (strcmp(dn_get_str(threads->a.items[i], "name"), name) == 0)
			return true;
	return false;
}

static void check_thread_ref(struct vctx *v, const struct dnode *obj, const char *field)
{
	const char *name = dn_get_str(obj, field);

	if (v->service && *name && !names_thread(v->service, name))
		vproblem(v, field, "'%s' names no thread class of this service", name);
}

static uint64_t hist_total_of(const struct dnode *obj, const char *field)
{
	const struct dnode *h = dn_get(obj, field);

	return h && h->type == DN_HIST ? ditto_hist_total(h->h) : 0;
}

static void check_le(struct vctx *v, const struct dnode *obj, const char *a, uint64_t bound,
		     const char *what)
{
	uint64_t x = dn_get_u64(obj, a);

	if (x > bound)
		vproblem(v, a, "%llu exceeds %s (%llu)", (unsigned long long)x, what,
			 (unsigned long long)bound);
}

static void check_thread(struct vctx *v, const struct dnode *obj)
{
	const struct dnode *wb = dn_get(obj, "woken_by");

	if (!wb || wb->type != DN_ARR || !v->service)
		return;
	for (size_t i = 0; i < wb->a.n; i++) {
		const struct dnode *s = wb->a.items[i];

		if (s->type == DN_STR && !names_thread(v->service, s->s.p))
			vproblem(v, "woken_by", "'%s' names no thread class of this service",
				 s->s.p);
	}
}

static void check_syscall(struct vctx *v, const struct dnode *obj)
{
	check_thread_ref(v, obj, "thread_class");
	check_le(v, obj, "errors", dn_get_u64(obj, "calls"), "calls");
	check_le(v, obj, "sequential", hist_total_of(obj, "offset"), "the offset samples");
}

static void check_requests(struct vctx *v, const struct dnode *obj)
{
	check_le(v, obj, "pipelined", dn_get_u64(obj, "count"), "count");
}

static void check_mix(struct vctx *v, const struct dnode *obj)
{
	const struct dnode *mix = dn_get(obj, "mix");
	char why[128];

	if (!v->warning || !mix || mix->type != DN_MAP)
		return;
	for (size_t i = 0; i < mix->m.n; i++)
		if (!mix_key_check(mix->m.m[i].key, why, sizeof(why)))
			vwarning(v, "mix", "key '%s' %s: the synthesizer substitutes another class",
				 mix->m.m[i].key, why);
}

/*
 * Knob names are the generator's table (lib/synth/knobs.c): the model
 * stage asks it rather than keeping a second list that could drift. An
 * unknown name is kept and ignored by synth, so it is a warning.
 */
static void check_knob_names(struct vctx *v, const struct dnode *obj)
{
	const struct dnode *knobs = dn_get(obj, "knobs");
	size_t scope;

	if (!v->warning || !knobs || knobs->type != DN_MAP)
		return;
	for (size_t i = 0; i < knobs->m.n; i++)
		if (!synth_knob_find_key(knobs->m.m[i].key, &scope))
			vwarning(v, "knobs", "'%s' is not a knob of this libditto (synth ignores it)",
				 knobs->m.m[i].key);
}

/* Windows per stepping mechanism cannot add up to more than the windows. */
static void check_stepping(struct vctx *v, const struct dnode *obj)
{
	const struct dnode *st = dn_get(obj, "stepping");
	uint64_t n = 0, windows = dn_get_u64(obj, "windows");

	if (!st || st->type != DN_MAP)
		return;
	for (size_t i = 0; i < st->m.n; i++)
		if (st->m.m[i].val->type == DN_UINT)
			n += st->m.m[i].val->u;
	if (n > windows)
		vproblem(v, "stepping", "%llu windows by mechanism exceed windows (%llu)",
			 (unsigned long long)n, (unsigned long long)windows);
}

static void check_cpu(struct vctx *v, const struct dnode *obj)
{
	const struct dnode *b = dn_get(obj, "branches");

	check_thread_ref(v, obj, "thread_class");
	check_le(v, obj, "chased_loads", dn_get_u64(obj, "loads"), "loads");
	check_le(v, obj, "undecoded", dn_get_u64(obj, "instructions"), "instructions");
	check_le(v, obj, "jit_instructions", dn_get_u64(obj, "instructions"), "instructions");
	check_mix(v, obj);
	check_stepping(v, obj);
	if (b && b->type == DN_HIST)
		for (size_t i = 0; i < b->h->n; i++) {
			uint64_t k = b->h->keys[i];

			if (k / 16 > 8 || k % 16 > 8) {
				vproblem(v, "branches", "key %llu is not taken_bin*16+transition_bin "
					 "with bins 0..8", (unsigned long long)k);
				break;
			}
		}
}

static bool names_node(const struct dnode *graph, const char *name)
{
	const struct dnode *nodes = dn_get(graph, "nodes");

	if (!nodes || nodes->type != DN_ARR)
		return false;
	for (size_t i = 0; i < nodes->a.n; i++)
		if (nodes->a.items[i]->type == DN_STR && strcmp(nodes->a.items[i]->s.p, name) == 0)
			return true;
	return false;
}

static void check_edge(struct vctx *v, const struct dnode *obj)
{
	static const char *const ends[] = { "from", "to" };

	for (size_t i = 0; i < ARRAY_SIZE(ends); i++) {
		const char *name = dn_get_str(obj, ends[i]);

		if (v->graph && *name && !names_node(v->graph, name))
			vproblem(v, ends[i], "'%s' is not in graph.nodes", name);
	}
}

static void check_external(struct vctx *v, const struct dnode *obj)
{
	const char *name = dn_get_str(obj, "name");
	const char *a = dn_get_str(obj, "address");
	unsigned char buf[16];

	if (v->graph && *name && !names_node(v->graph, name))
		vproblem(v, "name", "'%s' is not in graph.nodes", name);
	if (*a && inet_pton(AF_INET, a, buf) != 1 && inet_pton(AF_INET6, a, buf) != 1)
		vproblem(v, "address", "not an IPv4 or IPv6 address");
}

/* ---- tables ---- */

static const struct field host_fields[] = {
	F("cpu_model", FT_STR, MG_FIRST, CP_NONE),
	F("kernel", FT_STR, MG_FIRST, CP_NONE),
	F("cores", FT_U64, MG_FIRST, CP_NONE),
	F("l1d_bytes", FT_U64, MG_FIRST, CP_NONE),
	F("l1i_bytes", FT_U64, MG_FIRST, CP_NONE),
	F("l2_bytes", FT_U64, MG_FIRST, CP_NONE),
	F("llc_bytes", FT_U64, MG_FIRST, CP_NONE),
	F("cache_source", FT_STR, MG_FIRST, CP_NONE),
};
static const struct section schema_host = { "host", FIELDS(host_fields), NULL, NULL };

static const struct field load_fields[] = {
	F("generator", FT_STR, MG_FIRST, CP_NONE),
	F("qps", FT_F64, MG_MEAN, CP_NONE),
	F("connections", FT_U64, MG_MAX, CP_NONE),
};
static const struct section schema_load = { "load", FIELDS(load_fields), NULL, NULL };

static const struct field meta_fields[] = {
	F("tool_version", FT_STR, MG_FIRST, CP_NONE),
	F("created", FT_U64, MG_FIRST, CP_NONE),
	F("window_s", FT_F64, MG_SUM, CP_NONE),
	F("sources", FT_U64, MG_FIRST, CP_NONE, .flags = F_POSITIVE), /* set by merge */
	COUNT("lost_events", CP_NONE),
	OBJ("host", schema_host, MG_REC, CP_NONE),
	OBJ("load", schema_load, MG_REC, CP_NONE),
};
const struct section schema_meta = { "meta", FIELDS(meta_fields), NULL, NULL };

static const struct field thread_fields[] = {
	KEYSTR("name"),
	F("count", FT_U64, MG_MAX, CP_RAW, .flags = F_POSITIVE),
	ENUM("role", enum_role, MG_SAME, CP_RAW),
	ENUM("io_model", enum_io_model, MG_SAME, CP_RAW),
	F("woken_by", FT_STRLIST, MG_UNION, CP_NONE, .flags = F_NONEMPTY),
	COUNT("cpu_ns", CP_PER_REQ),
	COUNT("ctx_switches", CP_PER_REQ),
	COUNT("wakeups", CP_PER_REQ),
	COUNT("threads_created", CP_PER_REQ),
	COUNT("processes_created", CP_PER_REQ),
};
const struct section schema_thread = { "threads", FIELDS(thread_fields), check_thread, NULL };

#define INT_MAX_ 2147483647ull

/* Options reach setsockopt() in a clone as ints. */
static void check_sockopt(struct vctx *v, const struct dnode *obj)
{
	static const char *const ints[] = { "level", "name", "value" };

	for (size_t i = 0; i < ARRAY_SIZE(ints); i++)
		check_le(v, obj, ints[i], INT_MAX_, "the largest int");
}

/* Absent: not known (a window without connection I/O); empty: known to
 * set none. The entries' connections count those read in the window. */
static const struct field sockopt_fields[] = {
	F("level", FT_U64, MG_KEY, CP_NONE, .flags = F_KEY),
	F("name", FT_U64, MG_KEY, CP_NONE, .flags = F_KEY),
	F("value", FT_U64, MG_KEY, CP_NONE, .flags = F_KEY),
	COUNT("connections", CP_NONE),
	COUNT("calls", CP_NONE),
};
const struct section schema_sockopt = { "sockopts", FIELDS(sockopt_fields), check_sockopt, NULL };

static const struct field network_fields[] = {
	ENUM("io_model", enum_io_model, MG_SAME, CP_RAW),
	F("accept_dispatch", FT_BOOL, MG_SAME, CP_RAW),
	F("network_dispatch", FT_BOOL, MG_SAME, CP_RAW),
	F("serial_connections", FT_BOOL, MG_SAME, CP_RAW),
	F("master_process", FT_BOOL, MG_SAME, CP_RAW),
	F("network_threads", FT_U64, MG_MAX, CP_RAW),
	F("processes", FT_U64, MG_MAX, CP_RAW),
	F("client_connections", FT_U64, MG_MAX, CP_RAW),
	ENUM("client_mode", enum_call_mode, MG_SAME, CP_RAW),
	COUNT("sockopt_connections", CP_NONE),
	ARR("sockopts", schema_sockopt, MG_REC, CP_NONE),
};
const struct section schema_network = { "network", FIELDS(network_fields), NULL, NULL };

static const struct field syscall_fields[] = {
	KEYSTR("thread_class"),
	KEYSTR("name"),
	ENUM("fd_kind", enum_fd_kind, MG_KEY, CP_NONE, .flags = F_KEY),
	F("nr", FT_U64, MG_SAME, CP_NONE),
	COUNT("calls", CP_PER_REQ),
	COUNT("errors", CP_PER_FIELD, .per = "calls"),
	HIST("size", DITTO_HIST_LOG2, CP_DIST),
	HIST("ret", DITTO_HIST_LOG2, CP_DIST),
	/* Exact sums of size and ret (their histograms keep log2 buckets
	 * only): the means `ditto model show` prints. The histograms are
	 * what compare and synth use, so these are not compared. */
	COUNT("size_total", CP_NONE),
	COUNT("ret_total", CP_NONE),
	/* iovecs of the vectored calls (readv, writev, sendmsg...), summed:
	 * a clone's writev takes as many per call. */
	COUNT("iovecs_total", CP_NONE),
	HIST("flags", DITTO_HIST_EXACT, CP_DIST),
	/* Failed calls by errno (exact; may count fewer than errors: the
	 * profiler keeps four values per call and thread). */
	HIST("errnos", DITTO_HIST_EXACT, CP_DIST),
	HIST("offset", DITTO_HIST_LOG2, CP_DIST),
	COUNT("sequential", CP_PER_FIELD, .per = "offset"),
	HIST("latency_ns", DITTO_HIST_LOGLIN, CP_LATENCY),
};
const struct section schema_syscall = { "syscalls", FIELDS(syscall_fields), check_syscall, NULL };

static const struct field requests_fields[] = {
	COUNT("count", CP_NONE),
	COUNT("connections", CP_NONE),
	COUNT("pipelined", CP_PER_FIELD, .per = "count"),
	COUNT("request_bytes_total", CP_PER_FIELD, .per = "count"),
	COUNT("response_bytes_total", CP_PER_FIELD, .per = "count"),
	HIST("request_bytes", DITTO_HIST_LOG2, CP_DIST),
	HIST("response_bytes", DITTO_HIST_LOG2, CP_DIST),
	HIST("per_connection", DITTO_HIST_LOG2, CP_DIST),
	HIST("service_ns", DITTO_HIST_LOGLIN, CP_LATENCY),
	HIST("after_response_ns", DITTO_HIST_LOGLIN, CP_LATENCY),
};
const struct section schema_requests = { "requests", FIELDS(requests_fields), check_requests, NULL };

static const struct field cpu_fields[] = {
	KEYSTR("thread_class"),
	COUNT("windows", CP_NONE),
	COUNT("instructions", CP_NONE),
	COUNT("undecoded", CP_PER_FIELD, .per = "instructions"),
	HIST("insts_per_request", DITTO_HIST_LOG2, CP_DIST),
	F("mix", FT_COUNTS, MG_SUM, CP_DIST),
	HIST("branches", DITTO_HIST_EXACT, CP_DIST),
	HIST("dws", DITTO_HIST_LOG2, CP_DIST),
	COUNT("dws_cold", CP_PER_FIELD, .per = "dws"),
	HIST("iws", DITTO_HIST_LOG2, CP_DIST),
	COUNT("iws_cold", CP_PER_FIELD, .per = "iws"),
	HIST("raw", DITTO_HIST_LOG2, CP_DIST),
	HIST("war", DITTO_HIST_LOG2, CP_DIST),
	HIST("waw", DITTO_HIST_LOG2, CP_DIST),
	HIST("mem_raw", DITTO_HIST_LOG2, CP_DIST),
	COUNT("loads", CP_PER_FIELD, .per = "instructions"),
	COUNT("stores", CP_PER_FIELD, .per = "instructions"),
	COUNT("chased_loads", CP_PER_FIELD, .per = "loads"),
	COUNT("jit_instructions", CP_PER_FIELD, .per = "instructions"),
	COUNT("stepped_ns", CP_NONE),
	F("stepping", FT_COUNTS, MG_SUM, CP_NONE),
};
const struct section schema_cpu = { "cpu", FIELDS(cpu_fields), check_cpu, NULL };

static const struct field load_point_fields[] = {
	F("qps", FT_F64, MG_KEY, CP_NONE, .flags = F_KEY),
	F("achieved_qps", FT_F64, MG_MEAN, CP_RAW),
	F("connections", FT_U64, MG_MAX, CP_NONE),
	HIST("latency_ns", DITTO_HIST_LOGLIN, CP_LATENCY),
};
const struct section schema_load_point = { "loads", FIELDS(load_point_fields), NULL, NULL };

static const struct field counters_fields[] = {
	F("available", FT_BOOL, MG_OR, CP_NONE),
	COUNT("cycles", CP_NONE),
	COUNT("instructions", CP_PER_FIELD, .per = "cycles"),
	COUNT("branches", CP_PER_FIELD, .per = "instructions"),
	COUNT("branch_misses", CP_PER_FIELD, .per = "instructions"),
	COUNT("l1i_misses", CP_PER_FIELD, .per = "instructions"),
	COUNT("l1d_misses", CP_PER_FIELD, .per = "instructions"),
	COUNT("l2_misses", CP_PER_FIELD, .per = "instructions"),
	COUNT("llc_misses", CP_PER_FIELD, .per = "instructions"),
};
const struct section schema_counters = { "counters", FIELDS(counters_fields), NULL, "available" };

static const struct field observed_fields[] = {
	F("throughput_qps", FT_F64, MG_MEAN, CP_RAW),
	ARR("loads", schema_load_point, MG_REC, CP_REC),
	OBJ("counters", schema_counters, MG_REC, CP_REC),
};
const struct section schema_observed = { "observed", FIELDS(observed_fields), NULL, NULL };

/* The address came off a socket as an IP literal; anything else in a
 * model file did not come from a profiler (the name rule already keeps
 * terminals and generated sources safe from it). */
static void check_outbound(struct vctx *v, const struct dnode *obj)
{
	const char *a = dn_get_str(obj, "address");
	unsigned char buf[16];

	if (*a && inet_pton(AF_INET, a, buf) != 1 && inet_pton(AF_INET6, a, buf) != 1)
		vproblem(v, "address", "not an IPv4 or IPv6 address");
}

/*
 * Calls the service made on connections it opened itself, per remote
 * endpoint (address and port as its sockets named the peer): what the
 * graph builds edges from. Totals, divided by requests.count per inbound
 * request. Never part of the requests and syscalls above.
 */
static const struct field outbound_fields[] = {
	KEYSTR("address"),
	F("port", FT_U64, MG_KEY, CP_NONE, .flags = F_KEY | F_PORT),
	ENUM("framing", enum_framing, MG_SAME, CP_RAW),
	COUNT("connections", CP_NONE),
	COUNT("calls", CP_PER_REQ),
	COUNT("sends", CP_PER_FIELD, .per = "calls"),
	COUNT("receives", CP_PER_FIELD, .per = "calls"),
	COUNT("request_bytes_total", CP_PER_FIELD, .per = "calls"),
	COUNT("response_bytes_total", CP_PER_FIELD, .per = "calls"),
	HIST("request_bytes", DITTO_HIST_LOG2, CP_DIST),
	HIST("response_bytes", DITTO_HIST_LOG2, CP_DIST),
};
const struct section schema_outbound = { "outbound", FIELDS(outbound_fields), check_outbound,
					  NULL };

static const struct field service_fields[] = {
	KEYSTR("name"),
	F("ports", FT_U64LIST, MG_UNION, CP_NONE, .flags = F_PORT),
	ENUM("framing", enum_framing, MG_SAME, CP_RAW),
	F("processes", FT_U64, MG_MAX, CP_RAW, .flags = F_POSITIVE),
	ARR("threads", schema_thread, MG_REC, CP_REC),
	OBJ("network", schema_network, MG_REC, CP_REC),
	ARR("syscalls", schema_syscall, MG_REC, CP_REC),
	OBJ("requests", schema_requests, MG_REC, CP_REC),
	ARR("outbound", schema_outbound, MG_REC, CP_REC),
	ARR("cpu", schema_cpu, MG_REC, CP_REC),
	OBJ("observed", schema_observed, MG_REC, CP_REC),
};
const struct section schema_service = { "services", FIELDS(service_fields), NULL, NULL };

/*
 * An edge: calls from one node to another, per request `from` served.
 * `source` says who saw them (the kernel's sockets, or the application's
 * traces) and is part of the key, so both sources of one run live side by
 * side and can be compared.
 */
static const struct field edge_fields[] = {
	KEYSTR("from"),
	KEYSTR("to"),
	ENUM("source", enum_edge_source, MG_KEY, CP_NONE, .flags = F_KEY | F_KEY_DEFAULT),
	ENUM("mode", enum_call_mode, MG_SAME, CP_RAW),
	ENUM("order", enum_call_order, MG_SAME, CP_RAW),
	COUNT("calls", CP_PER_FIELD, .per = "parent_requests"),
	COUNT("parent_requests", CP_NONE),
	COUNT("ambiguous", CP_PER_FIELD, .per = "calls"),
	COUNT("unattributed", CP_PER_FIELD, .per = "calls"),
	HIST("fanout", DITTO_HIST_EXACT, CP_DIST),
	HIST("request_bytes", DITTO_HIST_LOG2, CP_DIST),
	HIST("response_bytes", DITTO_HIST_LOG2, CP_DIST),
	HIST("latency_ns", DITTO_HIST_LOGLIN, CP_LATENCY),
};
const struct section schema_edge = { "edges", FIELDS(edge_fields), check_edge, NULL };

/* A node no profile covered (a database, a cache), seen from its callers. */
static const struct field external_fields[] = {
	KEYSTR("name"),
	F("address", FT_STR, MG_FIRST, CP_NONE),
	F("port", FT_U64, MG_FIRST, CP_NONE, .flags = F_PORT),
	ENUM("framing", enum_framing, MG_SAME, CP_RAW),
};
const struct section schema_external = { "externals", FIELDS(external_fields), check_external,
					  NULL };

/* What the trace importers read, and how far the counts are corrected. */
static const struct field traces_fields[] = {
	COUNT("files", CP_NONE),
	COUNT("spans", CP_NONE),
	COUNT("traces", CP_NONE),
	COUNT("orphan_spans", CP_NONE),
	COUNT("rejected_spans", CP_NONE),
	F("sample_ratio", FT_F64, MG_MEAN, CP_NONE),
	F("corrected", FT_BOOL, MG_SAME, CP_NONE),
};
const struct section schema_traces = { "traces", FIELDS(traces_fields), NULL, NULL };

static const struct field graph_fields[] = {
	F("nodes", FT_STRLIST, MG_UNION, CP_NONE, .flags = F_NONEMPTY),
	ARR("externals", schema_external, MG_REC, CP_NONE),
	ARR("edges", schema_edge, MG_REC, CP_REC),
	OBJ("traces", schema_traces, MG_REC, CP_NONE),
};
const struct section schema_graph = { "graph", FIELDS(graph_fields), NULL, NULL };

static const struct field iteration_fields[] = {
	F("index", FT_U64, MG_KEY, CP_NONE, .flags = F_KEY),
	F("accepted", FT_BOOL, MG_FIRST, CP_NONE),
	F("note", FT_STR, MG_FIRST, CP_NONE),
	F("knobs", FT_VALUES, MG_FIRST, CP_NONE),
	F("errors", FT_VALUES, MG_FIRST, CP_NONE),
};
const struct section schema_iteration = { "iterations", FIELDS(iteration_fields), check_knob_names,
					   NULL };

static const struct field tuning_fields[] = {
	F("knobs", FT_VALUES, MG_FIRST, CP_NONE),
	ARR("iterations", schema_iteration, MG_FIRST, CP_NONE),
};
const struct section schema_tuning = { "tuning", FIELDS(tuning_fields), check_knob_names, NULL };

static const struct field root_fields[] = {
	F("schema", FT_U64, MG_SAME, CP_NONE),
	OBJ("meta", schema_meta, MG_REC, CP_NONE),
	ARR("services", schema_service, MG_REC, CP_REC),
	OBJ("graph", schema_graph, MG_REC, CP_REC),
	OBJ("tuning", schema_tuning, MG_FIRST, CP_NONE),
};
const struct section schema_root = { "", FIELDS(root_fields), NULL, NULL };

/* ---- lookups ---- */

const struct field *schema_field(const struct section *s, const char *name)
{
	for (size_t i = 0; i < s->nfields; i++)
		if (strcmp(s->fields[i].name, name) == 0)
			return &s->fields[i];
	return NULL;
}

int enum_index(const char *const *names, const char *name)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

void element_label(const struct section *s, const struct dnode *obj, struct dbuf *out)
{
	element_label_as(s, obj, false, out);
}

void element_label_as(const struct section *s, const struct dnode *obj, bool all_keys,
		      struct dbuf *out)
{
	bool first = true;

	for (size_t i = 0; i < s->nfields; i++) {
		const struct field *f = &s->fields[i];
		const struct dnode *v;
		double d;

		if (!(f->flags & F_KEY))
			continue;
		v = dn_get(obj, f->name);
		/* A key added later (an edge's source), at its first name, is
		 * left out: labels read as before it existed. */
		if (!all_keys && (f->flags & F_KEY_DEFAULT) &&
		    (!v || (v->type == DN_STR && !strcmp(v->s.p, f->enums[0]))))
			continue;
		if (!first)
			dbuf_putc(out, ':');
		first = false;
		/* Numeric keys read "qps=100", never to be taken for an index. */
		if (f->type == FT_U64 || f->type == FT_F64)
			dbuf_printf(out, "%s=", f->name);
		if (v && v->type == DN_STR)
			dbuf_puts(out, v->s.p);
		else if (v && v->type == DN_UINT)
			dbuf_printf(out, "%llu", (unsigned long long)v->u);
		else if (dn_number(v, &d))
			dbuf_printf(out, "%.17g", d);
		else if (f->type == FT_ENUM)
			dbuf_puts(out, f->enums[0]);
	}
}

/* Key fields are equal, an absent enum key counting as its first name. */
static bool key_equal(const struct field *f, const struct dnode *a, const struct dnode *b)
{
	double x, y;

	if (f->type == FT_ENUM) {
		const char *sa = a && a->type == DN_STR ? a->s.p : f->enums[0];
		const char *sb = b && b->type == DN_STR ? b->s.p : f->enums[0];

		return strcmp(sa, sb) == 0;
	}
	if (!a || !b)
		return a == b;
	if (dn_number(a, &x) && dn_number(b, &y))
		return x == y;
	return dn_equal(a, b);
}

struct dnode *element_match(const struct section *s, const struct dnode *arr,
			    const struct dnode *obj)
{
	if (!arr || arr->type != DN_ARR)
		return NULL;
	for (size_t i = 0; i < arr->a.n; i++) {
		struct dnode *e = arr->a.items[i];
		bool same = true;

		for (size_t j = 0; j < s->nfields && same; j++) {
			const struct field *f = &s->fields[j];

			if (f->flags & F_KEY)
				same = key_equal(f, dn_get(e, f->name), dn_get(obj, f->name));
		}
		if (same)
			return e;
	}
	return NULL;
}
