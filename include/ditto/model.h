/* SPDX-License-Identifier: MIT */
/*
 * The model: what libditto knows about a service, as statistics only (no
 * code, no payload bytes, no addresses). Every stage reads and writes it;
 * its msgpack encoding is the format of record, JSON is for people.
 *
 * Layout (JSON names; every count is a plain count so that models of
 * several replicas or runs merge by addition):
 *
 *   schema                      integer, DITTO_MODEL_SCHEMA
 *   meta                        tool_version, created, window_s, sources,
 *                               lost_events,
 *                               host{cpu_model, kernel, cores, l1d_bytes,
 *                               l1i_bytes, l2_bytes, llc_bytes,
 *                               cache_source},
 *                               load{generator, qps, connections}
 *   services[]                  name, ports[], framing, processes,
 *     threads[]                 thread classes: name, count, role, io_model,
 *                               woken_by[], cpu_ns, ctx_switches, wakeups,
 *                               threads_created, processes_created
 *     network                   io_model, accept_dispatch, network_dispatch,
 *                               serial_connections,
 *                               network_threads, processes,
 *                               client_connections, client_mode,
 *                               sockopt_connections, sockopts[]{level,
 *                               name, value (identity), connections,
 *                               calls}
 *     syscalls[]                thread_class, name, fd_kind (identity), nr,
 *                               calls, errors, size, ret, size_total,
 *                               ret_total, iovecs_total, flags, errnos, offset,
 *                               sequential,
 *                               latency_ns
 *     requests                  count, connections, pipelined,
 *                               request_bytes_total, response_bytes_total,
 *                               request_bytes, response_bytes,
 *                               per_connection, service_ns,
 *                               after_response_ns
 *     outbound[]                calls to other services: address, port
 *                               (identity), framing, connections, calls,
 *                               sends, receives, request_bytes_total,
 *                               response_bytes_total, request_bytes,
 *                               response_bytes
 *     cpu[]                     per thread class: thread_class, windows,
 *                               instructions, undecoded, insts_per_request,
 *                               mix{class: count}, branches, dws, dws_cold,
 *                               iws, iws_cold, raw, war, waw, mem_raw,
 *                               loads, stores, chased_loads,
 *                               jit_instructions, stepped_ns,
 *                               stepping{mechanism: windows}
 *     observed                  throughput_qps, loads[]{qps, achieved_qps,
 *                               connections, latency_ns}, counters{
 *                               available, cycles, instructions, branches,
 *                               branch_misses, l1i_misses, l1d_misses,
 *                               l2_misses, llc_misses}
 *   graph                       nodes[], externals[]{name, address, port,
 *                               framing}, edges[]{from, to, source, mode,
 *                               order, calls, parent_requests, ambiguous,
 *                               unattributed, fanout, request_bytes,
 *                               response_bytes, latency_ns}, traces{files,
 *                               spans, traces, orphan_spans,
 *                               rejected_spans, sample_ratio, corrected}
 *   tuning                      knobs{name: value}, iterations[]{index,
 *                               accepted, note, knobs{}, errors{}}
 *
 * Histogram fields are struct ditto_hist (see ditto.h). Per-request rates
 * are derived, never stored: calls / requests.count.
 *
 * Keys this library does not know are kept on load and written back on
 * save, so a newer writer and an older reader can share files.
 *
 * Handles (struct ditto_service *, struct ditto_syscall *, ...) are borrowed
 * from their model: valid until the model is freed; adding elements never
 * invalidates them. A model is not thread-safe; use one per thread or lock.
 *
 * Getters only read: they take const handles and never add to the model,
 * so reading a model leaves its encoding as it was. A section the model
 * lacks (requests, network, tuning, a cpu entry's mix, ...) is a NULL
 * handle, and every getter given a NULL handle returns 0, "", false, NULL
 * or an empty count (ditto_counts_size(NULL) is 0). A histogram field the
 * model lacks reads as an empty histogram of the field's kind, shared and
 * read-only: ditto_hist_add() and ditto_hist_merge() into it fail with
 * -EINVAL. Writing is the setters' job: set_ and add_ functions create
 * what they write into, and each section or histogram getter has an
 * _ensure twin (since 0.5) that returns it for writing, created empty when
 * absent (NULL only on no memory or a NULL handle):
 *
 *     struct ditto_requests *r = ditto_service_requests_ensure(s);
 *     ditto_requests_set_count(r, n);
 *     ditto_hist_add(ditto_requests_service_ns_ensure(r), ns, 1);
 *
 * A setter given a NULL handle fails with -EINVAL. Getters still return
 * non-const handles, as before 0.5; one taken from a const model is for
 * reading.
 */
#ifndef DITTO_MODEL_H
#define DITTO_MODEL_H

#include <ditto/ditto.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Schema version this library reads and writes. Files with another major
 * version are refused with -DITTO_ESCHEMA. */
#define DITTO_MODEL_SCHEMA 1

struct ditto_model;
struct ditto_meta;
struct ditto_service;
struct ditto_thread_class;
struct ditto_network;
struct ditto_syscall;
struct ditto_requests;
struct ditto_outbound;
struct ditto_cpu;
struct ditto_observed;
struct ditto_load_point;
struct ditto_graph;
struct ditto_edge;
struct ditto_external;
struct ditto_traces;
struct ditto_tuning;
struct ditto_tuning_iter;
struct ditto_counts;  /* map of string -> uint64 count (instruction mix) */
struct ditto_values;  /* map of string -> double (knobs, errors) */

/* ------------------------------------------------------------------ */
/* Enumerations (stored as their names, shown here in quotes)           */
/* ------------------------------------------------------------------ */

enum ditto_framing {
	DITTO_FRAMING_UNKNOWN = 0,	/* "unknown" */
	DITTO_FRAMING_RAW,		/* "raw" */
	DITTO_FRAMING_HTTP1,		/* "http1" */
	DITTO_FRAMING_RESP,		/* "resp" */
	DITTO_FRAMING_MEMCACHE_TEXT,	/* "memcache-text" */
	DITTO_FRAMING_MEMCACHE_BINARY,	/* "memcache-binary" */
	DITTO_FRAMING_LENGTH_PREFIXED,	/* "length-prefixed" */
	DITTO_FRAMING_POSTGRES,		/* "postgres": PostgreSQL frontend/backend protocol 3.0 */
	DITTO_FRAMING_MYSQL,		/* "mysql": MySQL/MariaDB client/server protocol 4.1 */
};

enum ditto_role {
	DITTO_ROLE_UNKNOWN = 0,	/* "unknown" */
	DITTO_ROLE_MAIN,	/* "main" */
	DITTO_ROLE_ACCEPTOR,	/* "acceptor" */
	DITTO_ROLE_NETWORK,	/* "network" */
	DITTO_ROLE_WORKER,	/* "worker" */
	DITTO_ROLE_BACKGROUND,	/* "background" */
};

enum ditto_io_model {
	DITTO_IO_UNKNOWN = 0,	/* "unknown" */
	DITTO_IO_BLOCKING,	/* "blocking" */
	DITTO_IO_NONBLOCKING,	/* "nonblocking" (busy polling) */
	DITTO_IO_EPOLL,		/* "epoll" */
	DITTO_IO_POLL,		/* "poll" */
	DITTO_IO_SELECT,	/* "select" */
};

enum ditto_fd_kind {
	DITTO_FD_NONE = 0,	/* "none": the call takes no fd */
	DITTO_FD_TCP,		/* "tcp" */
	DITTO_FD_UDP,		/* "udp" */
	DITTO_FD_UNIX,		/* "unix" */
	DITTO_FD_FILE,		/* "file" (regular file) */
	DITTO_FD_PIPE,		/* "pipe" */
	DITTO_FD_EVENTFD,	/* "eventfd" */
	DITTO_FD_TIMERFD,	/* "timerfd" */
	DITTO_FD_EPOLL,		/* "epoll" */
	DITTO_FD_OTHER,		/* "other" */
};

enum ditto_call_mode {
	DITTO_CALL_UNKNOWN = 0,	/* "unknown" */
	DITTO_CALL_SYNC,	/* "sync" */
	DITTO_CALL_ASYNC,	/* "async" */
};

/* Calls to several children during one parent request: one after the
 * other, or overlapping. */
enum ditto_call_order {
	DITTO_ORDER_UNKNOWN = 0,	/* "unknown" */
	DITTO_ORDER_SEQUENTIAL,		/* "sequential" */
	DITTO_ORDER_PARALLEL,		/* "parallel" */
};

/* Who saw a graph edge's calls. */
enum ditto_edge_source {
	DITTO_EDGE_KERNEL = 0,	/* "kernel": sockets seen by the profiler */
	DITTO_EDGE_TRACES,	/* "traces": the application's own spans */
};

enum ditto_cache_level {
	DITTO_CACHE_L1D = 0,	/* meta.host.l1d_bytes */
	DITTO_CACHE_L1I,	/* meta.host.l1i_bytes */
	DITTO_CACHE_L2,		/* meta.host.l2_bytes */
	DITTO_CACHE_LLC,	/* meta.host.llc_bytes */
};

enum ditto_counter {
	DITTO_COUNTER_CYCLES = 0,	/* "cycles" */
	DITTO_COUNTER_INSTRUCTIONS,	/* "instructions" */
	DITTO_COUNTER_BRANCHES,		/* "branches" */
	DITTO_COUNTER_BRANCH_MISSES,	/* "branch_misses" */
	DITTO_COUNTER_L1I_MISSES,	/* "l1i_misses" */
	DITTO_COUNTER_L1D_MISSES,	/* "l1d_misses" */
	DITTO_COUNTER_L2_MISSES,	/* "l2_misses" */
	DITTO_COUNTER_LLC_MISSES,	/* "llc_misses" */
};

/* Names of enum values as stored in the model, and back. The *_name
 * functions return "unknown" (or "none") for out-of-range values; the
 * parsers return -DITTO_ENOTFOUND for names they do not know. */
DITTO_API const char *ditto_framing_name(enum ditto_framing v);
DITTO_API const char *ditto_role_name(enum ditto_role v);
DITTO_API const char *ditto_io_model_name(enum ditto_io_model v);
DITTO_API const char *ditto_fd_kind_name(enum ditto_fd_kind v);
DITTO_API const char *ditto_call_mode_name(enum ditto_call_mode v);
DITTO_API int ditto_framing_parse(const char *name, enum ditto_framing *out);
DITTO_API int ditto_role_parse(const char *name, enum ditto_role *out);
DITTO_API int ditto_io_model_parse(const char *name, enum ditto_io_model *out);
DITTO_API int ditto_fd_kind_parse(const char *name, enum ditto_fd_kind *out);
DITTO_API int ditto_call_mode_parse(const char *name, enum ditto_call_mode *out);
DITTO_API const char *ditto_call_order_name(enum ditto_call_order v);
DITTO_API int ditto_call_order_parse(const char *name, enum ditto_call_order *out);
DITTO_API const char *ditto_edge_source_name(enum ditto_edge_source v);
DITTO_API int ditto_edge_source_parse(const char *name, enum ditto_edge_source *out);

/* ------------------------------------------------------------------ */
/* Lifecycle and codec                                                  */
/* ------------------------------------------------------------------ */

/* Empty model of the current schema, meta.tool_version and meta.created
 * set. NULL on no memory. */
DITTO_API struct ditto_model *ditto_model_new(void);
DITTO_API void ditto_model_free(struct ditto_model *m);
/* Deep copy, unknown keys included. */
DITTO_API int ditto_model_dup(const struct ditto_model *m, struct ditto_model **out);

struct ditto_load_opts {
	size_t sz;
	/* Refuse inputs larger than this many bytes (0: 256 MiB). */
	size_t max_bytes;
	/* Refuse nesting deeper than this (0: 64). */
	unsigned max_depth;
	/* Skip ditto_model_validate() after decoding (types are still checked). */
	bool no_validate;
	size_t :0;
};

/*
 * Decode a model from msgpack. Types of known fields are checked (a
 * string where a count belongs is an error naming its path); unless
 * opts->no_validate, the result is also validated. Never reads past len,
 * and allocates at most a small multiple of len.
 * Errors: -DITTO_ECORRUPT (not msgpack, truncated, trailing bytes,
 * duplicate or non-string map keys), -DITTO_ELIMIT (too big, too deep),
 * -DITTO_ESCHEMA (schema missing, not an integer, or another version),
 * -DITTO_EINVALID (a known field of the wrong type, or a rule broken),
 * -ENOMEM.
 * On error *out is NULL.
 */
DITTO_API int ditto_model_decode(const void *buf, size_t len, const struct ditto_load_opts *opts,
				 struct ditto_model **out);
/* ditto_model_decode() of a whole file; messages are prefixed with path. */
DITTO_API int ditto_model_load(const char *path, const struct ditto_load_opts *opts,
			       struct ditto_model **out);
/* Encode as msgpack into a new buffer (release with ditto_free()). */
DITTO_API int ditto_model_encode(const struct ditto_model *m, void **buf, size_t *len);
/* Write the msgpack encoding to path atomically (temporary file + rename),
 * so a failed save never leaves a truncated model behind. */
DITTO_API int ditto_model_save(const struct ditto_model *m, const char *path);

struct ditto_json_opts {
	size_t sz;
	/* Indent with two spaces and one member per line. */
	bool pretty;
	size_t :0;
};

/*
 * JSON text of the model (release with ditto_free()). Histograms appear as
 * {"kind", "total", "buckets": [{"lo", "hi", "count"}, ...]}; binary
 * values of unknown keys as {"$bin": "<hex>"}; non-finite floats as null.
 */
DITTO_API int ditto_model_to_json(const struct ditto_model *m, const struct ditto_json_opts *opts,
				  char **out);

/* Schema version of the model (DITTO_MODEL_SCHEMA for models of this library). */
DITTO_API int ditto_model_schema(const struct ditto_model *m);

/* ------------------------------------------------------------------ */
/* Validation                                                           */
/* ------------------------------------------------------------------ */

/* Called once per problem found: path like "services[0].syscalls[2].errors". */
typedef void (*ditto_problem_fn)(const char *path, const char *msg, void *user);

struct ditto_validate_opts {
	size_t sz;
	/* Receives every problem (NULL: stop at the first). */
	ditto_problem_fn problem;
	void *user;
	/* Receives what leaves the model valid but that this library cannot
	 * use: instruction-mix keys that are not "func.ops.mem.width.isa"
	 * with the names ditto_cpu_mix() lists, and tuning knob names
	 * (tuning.knobs, iterations[].knobs) the synthesizer does not have,
	 * whether a typo or a newer writer's. Models with them still load
	 * and validate; NULL: they are not looked for. Gets `user` too. */
	ditto_problem_fn warning;
	size_t :0;
};

/*
 * The character set of names: every string that names something in a
 * model (services[].name, threads[].name and woken_by, syscalls[].name and
 * thread_class, cpu[].thread_class, outbound[].address, graph nodes,
 * edges' from and to) is 1
 * to DITTO_NAME_MAX bytes of valid UTF-8 with no NUL byte and no control
 * character other than tab and newline (no C0 but those two, no DEL, no
 * C1). Every other string of a model (meta.host.cpu_model, ...) follows
 * the same rule except that it may be empty or longer. Quotes,
 * backslashes, '#', '%', comment markers and trigraphs are allowed: a
 * name is data, and the synthesizer writes it into a clone only as an
 * escaped C string literal, never as code, an identifier, a comment, a
 * format or a file name.
 */
#define DITTO_NAME_MAX 255

/*
 * Check every rule of the schema: types, enum names, names (see
 * DITTO_NAME_MAX), ranges (floats finite
 * and non-negative; thread counts, processes and meta.sources at least 1;
 * ports 1-65535), histogram buckets valid for their kind (branch keys with
 * bins 0..8), unique element keys and list items, cross references (a
 * syscall's or cpu entry's thread_class and every woken_by name a thread
 * class of the service; graph edges name graph nodes) and consistency
 * (errors <= calls, sequential <= offset samples, chased_loads <= loads,
 * undecoded <= instructions, pipelined <= requests); an outbound address
 * is an IPv4 or IPv6 literal.
 * Returns 0 or -DITTO_EINVALID; ditto_last_error() names the first problem
 * as "path: message". With opts->warning, also reports what leaves the
 * model valid but unusable here (mix keys of another format, unknown knob
 * names); warnings never change the return value.
 */
DITTO_API int ditto_model_validate(const struct ditto_model *m, const struct ditto_validate_opts *opts);

/* ------------------------------------------------------------------ */
/* Merge and compare                                                    */
/* ------------------------------------------------------------------ */

/*
 * Add src into dst, as models of several replicas or runs of one service:
 * counts and histograms add; elements are matched by their key (service
 * name; thread class name; syscall thread_class+name+fd_kind; cpu
 * thread_class; outbound address+port; load point qps; edge from+to) and
 * unmatched ones are
 * copied; thread counts keep the larger; configuration (framing, roles,
 * I/O models) must agree or -DITTO_EMISMATCH names the field; observed
 * rates are averaged, weighted by meta.sources. dst is unchanged on error.
 */
DITTO_API int ditto_model_merge(struct ditto_model *dst, const struct ditto_model *src);

enum ditto_metric_kind {
	DITTO_METRIC_SCALAR = 1,	/* a and b are values; error is relative */
	DITTO_METRIC_DISTRIBUTION = 2,	/* a and b are totals; error is TV distance */
	DITTO_METRIC_ONLY_A = 3,	/* element present in a only; error 1 */
	DITTO_METRIC_ONLY_B = 4,	/* element present in b only; error 1 */
};

struct ditto_compare_opts {
	size_t sz;
	/* Keep only metrics whose error exceeds this (0: keep all). */
	double min_error;
	size_t :0;
};

struct ditto_comparison;

/*
 * Feature-by-feature distance from `a` (the original) to `b` (the clone).
 * Scalars are compared as the rates that matter, not raw counts: syscall
 * calls and bytes per request, loads per instruction, thread counts as
 * they are. Relative error is |b - a| / |a| (0 when both are 0, 1 when only
 * a is 0). Distributions give the total-variation distance of their
 * normalised histograms or counts maps. Metrics are named by paths with
 * element keys, e.g. "services[redis].syscalls[main:read:tcp].calls_per_request";
 * rates are named <count>_per_request or <count>_per_<denominator>.
 * Enumerations and booleans are categorical: error 0 when equal, else 1.
 * Histograms also give <path>.mean (sizes, distances) or <path>.p50 and
 * <path>.p99 (latencies) as scalars. Elements are paired by their key
 * (see ditto_model_merge), except that when each model holds exactly one
 * service the two are paired whatever their names (since 0.5: a clone's
 * service is usually named apart from its original's); paths then carry
 * a's name.
 */
DITTO_API int ditto_model_compare(const struct ditto_model *a, const struct ditto_model *b,
				  const struct ditto_compare_opts *opts,
				  struct ditto_comparison **out);
DITTO_API void ditto_comparison_free(struct ditto_comparison *c);
DITTO_API size_t ditto_comparison_count(const struct ditto_comparison *c);
/* Metric i; any out pointer may be NULL. -DITTO_ENOTFOUND past the end. */
DITTO_API int ditto_comparison_metric(const struct ditto_comparison *c, size_t i, const char **path,
				      enum ditto_metric_kind *kind, double *a, double *b,
				      double *error);
/* Largest error over all metrics (0 when there are none). */
DITTO_API double ditto_comparison_max_error(const struct ditto_comparison *c);
/* [{"path","kind","a","b","error"}, ...] (release with ditto_free()). */
DITTO_API int ditto_comparison_to_json(const struct ditto_comparison *c, char **out);

/* ------------------------------------------------------------------ */
/* Generic path access, for tools                                       */
/* ------------------------------------------------------------------ */

/*
 * Paths name a value from the root: "services[0].network.io_model",
 * "services[redis].threads[main].count", "services[0].cpu[0].mix[\"alu.add\"]".
 * [N] indexes an array; [key] picks the array element whose key (see
 * ditto_model_merge) is `key`, parts of a composite key joined by ':'
 * ("syscalls[main:read:tcp]"), numeric keys as name=value ("loads[qps=1000]",
 * "iterations[index=2]"); ["..."] quotes a map key. Unknown keys are
 * reachable too. Errors: -DITTO_ENOTFOUND (no such element),
 * -DITTO_ETYPE (exists with another type), -EINVAL (bad path syntax).
 */
enum ditto_value_type {
	DITTO_VALUE_NIL = 1,
	DITTO_VALUE_BOOL,
	DITTO_VALUE_INT,	/* signed (negative) integer */
	DITTO_VALUE_UINT,
	DITTO_VALUE_FLOAT,
	DITTO_VALUE_STRING,
	DITTO_VALUE_BINARY,	/* bin or ext of unknown keys */
	DITTO_VALUE_ARRAY,
	DITTO_VALUE_MAP,
	DITTO_VALUE_HIST,
};

DITTO_API int ditto_model_get_type(const struct ditto_model *m, const char *path,
				   enum ditto_value_type *out);
DITTO_API int ditto_model_get_bool(const struct ditto_model *m, const char *path, bool *out);
/* Integers; -ERANGE if the stored value does not fit. */
DITTO_API int ditto_model_get_i64(const struct ditto_model *m, const char *path, int64_t *out);
DITTO_API int ditto_model_get_u64(const struct ditto_model *m, const char *path, uint64_t *out);
/* Floats, or integers converted. */
DITTO_API int ditto_model_get_f64(const struct ditto_model *m, const char *path, double *out);
/* Borrowed, NUL-terminated. */
DITTO_API int ditto_model_get_str(const struct ditto_model *m, const char *path, const char **out);
DITTO_API int ditto_model_get_hist(const struct ditto_model *m, const char *path,
				   const struct ditto_hist **out);
/* Elements of an array or map, bytes of a string or binary, non-empty
 * buckets of a histogram. */
DITTO_API int ditto_model_get_len(const struct ditto_model *m, const char *path, size_t *out);
/* JSON of any value (release with ditto_free()); "" is the whole model. */
DITTO_API int ditto_model_get_json(const struct ditto_model *m, const char *path,
				   const struct ditto_json_opts *opts, char **out);

/* ------------------------------------------------------------------ */
/* meta                                                                 */
/* ------------------------------------------------------------------ */

/* NULL when the model has no meta (ditto_model_new() gives it one). */
DITTO_API struct ditto_meta *ditto_model_meta(const struct ditto_model *m);
DITTO_API struct ditto_meta *ditto_model_meta_ensure(struct ditto_model *m);
/* Version of the libditto that created the model (borrowed). */
DITTO_API const char *ditto_meta_tool_version(const struct ditto_meta *meta);
/* Creation time, seconds since the Unix epoch. */
DITTO_API uint64_t ditto_meta_created(const struct ditto_meta *meta);
DITTO_API int ditto_meta_set_created(struct ditto_meta *meta, uint64_t unix_s);
/* Length of the profiling window(s), seconds (summed by merge). */
DITTO_API double ditto_meta_window_s(const struct ditto_meta *meta);
DITTO_API int ditto_meta_set_window_s(struct ditto_meta *meta, double seconds);
/* Number of runs merged into this model (1 for a fresh one). */
DITTO_API uint64_t ditto_meta_sources(const struct ditto_meta *meta);
/* Events the collectors could not record (full kernel maps, lost samples):
 * non-zero means the counts are lower bounds. */
DITTO_API uint64_t ditto_meta_lost_events(const struct ditto_meta *meta);
DITTO_API int ditto_meta_set_lost_events(struct ditto_meta *meta, uint64_t n);
/*
 * The profiling host. A fact the profiler could not learn is absent from
 * the model, not 0: the typed getters then return 0 or "", and the path
 * getters (ditto_model_get_u64(m, "meta.host.l2_bytes", &v)) return
 * -DITTO_ENOTFOUND, which is how tools tell "unknown" from a value.
 * cache_source says where the cache sizes came from: "sysfs", "cpuid"
 * (the host's sysfs had no cache folder) or "sysfs+cpuid" (levels sysfs
 * lacked came from CPUID); absent when no size is known.
 */
DITTO_API const char *ditto_meta_host_cpu_model(const struct ditto_meta *meta);
DITTO_API int ditto_meta_set_host_cpu_model(struct ditto_meta *meta, const char *cpu_model);
DITTO_API const char *ditto_meta_host_kernel(const struct ditto_meta *meta);
DITTO_API int ditto_meta_set_host_kernel(struct ditto_meta *meta, const char *release);
DITTO_API uint64_t ditto_meta_host_cores(const struct ditto_meta *meta);
DITTO_API int ditto_meta_set_host_cores(struct ditto_meta *meta, uint64_t cores);
DITTO_API uint64_t ditto_meta_host_cache_bytes(const struct ditto_meta *meta, enum ditto_cache_level l);
DITTO_API int ditto_meta_set_host_cache_bytes(struct ditto_meta *meta, enum ditto_cache_level l,
					      uint64_t bytes);
DITTO_API const char *ditto_meta_host_cache_source(const struct ditto_meta *meta);
DITTO_API int ditto_meta_set_host_cache_source(struct ditto_meta *meta, const char *source);
/* The load seen while profiling: generator name, offered rate, connections. */
DITTO_API const char *ditto_meta_load_generator(const struct ditto_meta *meta);
DITTO_API int ditto_meta_set_load_generator(struct ditto_meta *meta, const char *name);
DITTO_API double ditto_meta_load_qps(const struct ditto_meta *meta);
DITTO_API int ditto_meta_set_load_qps(struct ditto_meta *meta, double qps);
DITTO_API uint64_t ditto_meta_load_connections(const struct ditto_meta *meta);
DITTO_API int ditto_meta_set_load_connections(struct ditto_meta *meta, uint64_t connections);

/* ------------------------------------------------------------------ */
/* services[]                                                           */
/* ------------------------------------------------------------------ */

DITTO_API size_t ditto_model_service_count(const struct ditto_model *m);
/* Service i, or NULL past the end. */
DITTO_API struct ditto_service *ditto_model_service(const struct ditto_model *m, size_t i);
/* Service by name, or NULL. */
DITTO_API struct ditto_service *ditto_model_find_service(const struct ditto_model *m,
							 const char *name);
/* Append a service; NULL with -EEXIST in ditto_last_error() if the name is
 * taken, or on no memory. */
DITTO_API struct ditto_service *ditto_model_add_service(struct ditto_model *m, const char *name);

DITTO_API const char *ditto_service_name(const struct ditto_service *s);
DITTO_API enum ditto_framing ditto_service_framing(const struct ditto_service *s);
DITTO_API int ditto_service_set_framing(struct ditto_service *s, enum ditto_framing f);
/* Serving processes: those with a thread in the serving class (1 for a
 * single-process service; a master that serves nothing is not counted).
 * Thread class counts and network_threads are totals over all of the
 * service's processes: a clone runs a 1/processes share of each (rounded
 * up) in every serving process, and a multi-process service's "main"
 * class (its master) once, in its parent process. */
DITTO_API uint64_t ditto_service_processes(const struct ditto_service *s);
DITTO_API int ditto_service_set_processes(struct ditto_service *s, uint64_t n);
/* Listening TCP/UDP ports. */
DITTO_API size_t ditto_service_port_count(const struct ditto_service *s);
DITTO_API uint16_t ditto_service_port(const struct ditto_service *s, size_t i);
/* Adds port unless present; -EINVAL for port 0. */
DITTO_API int ditto_service_add_port(struct ditto_service *s, uint16_t port);
/* count / requests.count, or 0 when no requests were counted. */
DITTO_API double ditto_service_per_request(const struct ditto_service *s, double count);

/* --- services[].threads[]: thread classes --- */
DITTO_API size_t ditto_service_thread_count(const struct ditto_service *s);
DITTO_API struct ditto_thread_class *ditto_service_thread(const struct ditto_service *s, size_t i);
DITTO_API struct ditto_thread_class *ditto_service_find_thread(const struct ditto_service *s,
							       const char *name);
DITTO_API struct ditto_thread_class *ditto_service_add_thread(struct ditto_service *s,
							      const char *name);
DITTO_API const char *ditto_thread_class_name(const struct ditto_thread_class *t);
/* Threads in the class. */
DITTO_API uint64_t ditto_thread_class_count(const struct ditto_thread_class *t);
DITTO_API int ditto_thread_class_set_count(struct ditto_thread_class *t, uint64_t n);
DITTO_API enum ditto_role ditto_thread_class_role(const struct ditto_thread_class *t);
DITTO_API int ditto_thread_class_set_role(struct ditto_thread_class *t, enum ditto_role r);
DITTO_API enum ditto_io_model ditto_thread_class_io_model(const struct ditto_thread_class *t);
DITTO_API int ditto_thread_class_set_io_model(struct ditto_thread_class *t, enum ditto_io_model io);
/* CPU time (ns), context switches and wake-ups, summed over the class. */
DITTO_API uint64_t ditto_thread_class_cpu_ns(const struct ditto_thread_class *t);
DITTO_API int ditto_thread_class_set_cpu_ns(struct ditto_thread_class *t, uint64_t ns);
DITTO_API uint64_t ditto_thread_class_ctx_switches(const struct ditto_thread_class *t);
DITTO_API int ditto_thread_class_set_ctx_switches(struct ditto_thread_class *t, uint64_t n);
DITTO_API uint64_t ditto_thread_class_wakeups(const struct ditto_thread_class *t);
DITTO_API int ditto_thread_class_set_wakeups(struct ditto_thread_class *t, uint64_t n);
/* Threads and processes the class's members created during the window. */
DITTO_API uint64_t ditto_thread_class_threads_created(const struct ditto_thread_class *t);
DITTO_API int ditto_thread_class_set_threads_created(struct ditto_thread_class *t, uint64_t n);
DITTO_API uint64_t ditto_thread_class_processes_created(const struct ditto_thread_class *t);
DITTO_API int ditto_thread_class_set_processes_created(struct ditto_thread_class *t, uint64_t n);
/* Names of the thread classes that wake this one. */
DITTO_API size_t ditto_thread_class_woken_by_count(const struct ditto_thread_class *t);
DITTO_API const char *ditto_thread_class_woken_by(const struct ditto_thread_class *t, size_t i);
/* Adds the name unless present. */
DITTO_API int ditto_thread_class_add_woken_by(struct ditto_thread_class *t, const char *name);

/* --- services[].network --- */
/* NULL when the service has none (see "Getters only read" above). */
DITTO_API struct ditto_network *ditto_service_network(const struct ditto_service *s);
DITTO_API struct ditto_network *ditto_service_network_ensure(struct ditto_service *s);
DITTO_API enum ditto_io_model ditto_network_io_model(const struct ditto_network *n);
DITTO_API int ditto_network_set_io_model(struct ditto_network *n, enum ditto_io_model io);
/* Accepting is done away from the main thread of the main process (by
 * other threads, or by worker processes as in nginx or pre-forked servers).
 * Descriptive: it adds no thread. Without network_dispatch the serving
 * threads accept for themselves in every process. */
DITTO_API bool ditto_network_accept_dispatch(const struct ditto_network *n);
DITTO_API int ditto_network_set_accept_dispatch(struct ditto_network *n, bool v);
/* Accepted connections are served by other threads than the ones that
 * accept them (memcached: the main thread accepts, workers serve; a pool
 * woken through a futex by a listener thread). A clone then has one
 * acceptor in each serving process that hands connections out. */
DITTO_API bool ditto_network_network_dispatch(const struct ditto_network *n);
DITTO_API int ditto_network_set_network_dispatch(struct ditto_network *n, bool v);
/* The serving threads (of an event-loop io model) take their connections
 * one after another and wait on the one they hold, never on two at once
 * nor on the listener meanwhile: Apache's pre-forked children poll their
 * connection between requests. A clone's thread then serves one
 * connection at a time and further clients wait, as the original's did.
 * False when the window cannot tell (one connection per thread all window
 * with a dispatcher; a thread that accepts for itself, seen without
 * ptrace access to the target), and for blocking io, which serves one by
 * nature. */
DITTO_API bool ditto_network_serial_connections(const struct ditto_network *n);
DITTO_API int ditto_network_set_serial_connections(struct ditto_network *n, bool v);
/* The main process serves no connection: the serving processes are
 * children it forked (nginx's or Apache's master, with one worker or
 * several). A clone then forks its serving processes from a parent that
 * plays the main class, even for one serving process. False when the main
 * process serves, and in models that predate the field. */
DITTO_API bool ditto_network_master_process(const struct ditto_network *n);
DITTO_API int ditto_network_set_master_process(struct ditto_network *n, bool v);
/* Serving threads in all serving processes together (nginx with 2
 * single-threaded workers: 2, processes 2); each process has
 * network_threads / processes. 0: one thread per connection (blocking). */
DITTO_API uint64_t ditto_network_network_threads(const struct ditto_network *n);
DITTO_API int ditto_network_set_network_threads(struct ditto_network *n, uint64_t v);
DITTO_API uint64_t ditto_network_processes(const struct ditto_network *n);
DITTO_API int ditto_network_set_processes(struct ditto_network *n, uint64_t v);
/* Client side: outgoing connections and how they are used. */
DITTO_API uint64_t ditto_network_client_connections(const struct ditto_network *n);
DITTO_API int ditto_network_set_client_connections(struct ditto_network *n, uint64_t v);
DITTO_API enum ditto_call_mode ditto_network_client_mode(const struct ditto_network *n);
DITTO_API int ditto_network_set_client_mode(struct ditto_network *n, enum ditto_call_mode mode);
/*
 * Socket options of the serving (accepted) connections, as setsockopt()
 * takes them: level, name and an int value (SOL_TCP/TCP_NODELAY/1,
 * SOL_SOCKET/SO_SNDBUF/bytes asked for...). `connections` of the
 * sockopt_connections the profiler looked at had the option set to value
 * at their first read or write in the window (read from the socket, so an
 * option set before the window or inherited from the listener counts);
 * `calls` is how many setsockopt() calls on connections set it in the
 * window. The profiler records TCP_NODELAY, TCP_CORK, SO_SNDBUF and
 * SO_RCVBUF from the socket, any option from calls. No sockopts list
 * means unknown (older models, a window without connection I/O): a clone
 * then sets TCP_NODELAY as before; an empty list means the connections
 * had none of them set, and a clone sets none.
 */
struct ditto_sockopt {
	uint64_t level, name, value;	/* each at most INT32_MAX */
	uint64_t connections, calls;
};
DITTO_API bool ditto_network_sockopts_known(const struct ditto_network *n);
/* Makes the list present (known) though empty. */
DITTO_API int ditto_network_set_sockopts_known(struct ditto_network *n);
DITTO_API uint64_t ditto_network_sockopt_connections(const struct ditto_network *n);
DITTO_API int ditto_network_set_sockopt_connections(struct ditto_network *n, uint64_t v);
DITTO_API size_t ditto_network_sockopt_count(const struct ditto_network *n);
/* Copies element i into *out; -EINVAL when there is none. */
DITTO_API int ditto_network_sockopt(const struct ditto_network *n, size_t i,
				    struct ditto_sockopt *out);
/* Adds o's counts to the element of the same level, name and value (a new
 * one when none); -EINVAL when level, name or value exceed INT32_MAX. */
DITTO_API int ditto_network_add_sockopt(struct ditto_network *n, const struct ditto_sockopt *o);

/* --- services[].syscalls[]: one per (thread class, syscall, fd kind) --- */
DITTO_API size_t ditto_service_syscall_count(const struct ditto_service *s);
DITTO_API struct ditto_syscall *ditto_service_syscall(const struct ditto_service *s, size_t i);
DITTO_API struct ditto_syscall *ditto_service_find_syscall(const struct ditto_service *s,
							   const char *thread_class,
							   const char *name, enum ditto_fd_kind fd);
DITTO_API struct ditto_syscall *ditto_service_add_syscall(struct ditto_service *s,
							  const char *thread_class,
							  const char *name, enum ditto_fd_kind fd);
DITTO_API const char *ditto_syscall_thread_class(const struct ditto_syscall *c);
DITTO_API const char *ditto_syscall_name(const struct ditto_syscall *c);
DITTO_API enum ditto_fd_kind ditto_syscall_fd_kind(const struct ditto_syscall *c);
/* System call number on x86-64. */
DITTO_API uint64_t ditto_syscall_nr(const struct ditto_syscall *c);
DITTO_API int ditto_syscall_set_nr(struct ditto_syscall *c, uint64_t nr);
/* Calls seen, and how many of them failed. */
DITTO_API uint64_t ditto_syscall_calls(const struct ditto_syscall *c);
DITTO_API int ditto_syscall_set_calls(struct ditto_syscall *c, uint64_t n);
DITTO_API uint64_t ditto_syscall_errors(const struct ditto_syscall *c);
DITTO_API int ditto_syscall_set_errors(struct ditto_syscall *c, uint64_t n);
/* Accesses whose offset continued the previous one (of offset's total). */
DITTO_API uint64_t ditto_syscall_sequential(const struct ditto_syscall *c);
DITTO_API int ditto_syscall_set_sequential(struct ditto_syscall *c, uint64_t n);
/* Since 0.5. Exact sums of the values in size and in ret (the histograms
 * keep log2 buckets, whose midpoints make a 4096-byte call read as 6 KiB):
 * the mean size is size_total / ditto_hist_total(size). Absent (0) in
 * models of earlier profilers; ditto_model_get_type() on the path tells. */
DITTO_API uint64_t ditto_syscall_size_total(const struct ditto_syscall *c);
DITTO_API int ditto_syscall_set_size_total(struct ditto_syscall *c, uint64_t n);
DITTO_API uint64_t ditto_syscall_ret_total(const struct ditto_syscall *c);
DITTO_API int ditto_syscall_set_ret_total(struct ditto_syscall *c, uint64_t n);
/* Since 0.5. iovecs of a vectored call's calls (readv, writev, recvmsg,
 * sendmsg...), summed: iovecs per call is iovecs_total / calls. Absent (0)
 * when not recorded; a clone's writev then takes 2. */
DITTO_API uint64_t ditto_syscall_iovecs_total(const struct ditto_syscall *c);
DITTO_API int ditto_syscall_set_iovecs_total(struct ditto_syscall *c, uint64_t n);
/* Histograms (never NULL; one the model lacks reads as empty and is
 * read-only, the _ensure twin creates it): size argument (log2), returned
 * bytes (log2), flags (exact), file offsets (log2), latency in ns
 * (loglin). */
DITTO_API struct ditto_hist *ditto_syscall_size(const struct ditto_syscall *c);
DITTO_API struct ditto_hist *ditto_syscall_ret(const struct ditto_syscall *c);
DITTO_API struct ditto_hist *ditto_syscall_flags(const struct ditto_syscall *c);
DITTO_API struct ditto_hist *ditto_syscall_offset(const struct ditto_syscall *c);
DITTO_API struct ditto_hist *ditto_syscall_latency(const struct ditto_syscall *c);
/* Since 0.5. Failed calls by errno (exact: value errno, e.g. 2 for ENOENT).
 * Its total may be below errors: the profiler keeps the first four errno
 * values of a call per thread. Empty in models of earlier profilers. */
DITTO_API struct ditto_hist *ditto_syscall_errnos(const struct ditto_syscall *c);
/* Since 0.5: the same histograms for writing, created empty when absent. */
DITTO_API struct ditto_hist *ditto_syscall_size_ensure(struct ditto_syscall *c);
DITTO_API struct ditto_hist *ditto_syscall_ret_ensure(struct ditto_syscall *c);
DITTO_API struct ditto_hist *ditto_syscall_flags_ensure(struct ditto_syscall *c);
DITTO_API struct ditto_hist *ditto_syscall_offset_ensure(struct ditto_syscall *c);
DITTO_API struct ditto_hist *ditto_syscall_latency_ensure(struct ditto_syscall *c);
DITTO_API struct ditto_hist *ditto_syscall_errnos_ensure(struct ditto_syscall *c);

/* --- services[].requests --- */
/* NULL when the service has none (see "Getters only read" above). */
DITTO_API struct ditto_requests *ditto_service_requests(const struct ditto_service *s);
DITTO_API struct ditto_requests *ditto_service_requests_ensure(struct ditto_service *s);
DITTO_API uint64_t ditto_requests_count(const struct ditto_requests *r);
DITTO_API int ditto_requests_set_count(struct ditto_requests *r, uint64_t n);
DITTO_API uint64_t ditto_requests_connections(const struct ditto_requests *r);
DITTO_API int ditto_requests_set_connections(struct ditto_requests *r, uint64_t n);
/* Requests that arrived before the previous response on their connection. */
DITTO_API uint64_t ditto_requests_pipelined(const struct ditto_requests *r);
DITTO_API int ditto_requests_set_pipelined(struct ditto_requests *r, uint64_t n);
/* Exact byte totals of the requests and responses counted (the size
 * histograms below keep their distribution at log2 resolution). */
DITTO_API uint64_t ditto_requests_request_bytes_total(const struct ditto_requests *r);
DITTO_API int ditto_requests_set_request_bytes_total(struct ditto_requests *r, uint64_t n);
DITTO_API uint64_t ditto_requests_response_bytes_total(const struct ditto_requests *r);
DITTO_API int ditto_requests_set_response_bytes_total(struct ditto_requests *r, uint64_t n);
/* Request and response sizes (log2), requests per connection (log2),
 * service time in ns (loglin). Never NULL: absent ones (r NULL included)
 * read as empty and are read-only; the _ensure twins create them. */
DITTO_API struct ditto_hist *ditto_requests_request_bytes(const struct ditto_requests *r);
DITTO_API struct ditto_hist *ditto_requests_response_bytes(const struct ditto_requests *r);
DITTO_API struct ditto_hist *ditto_requests_per_connection(const struct ditto_requests *r);
DITTO_API struct ditto_hist *ditto_requests_service_ns(const struct ditto_requests *r);
/* Time from a response's last write to the serving thread's next read or
 * wait, in ns (loglin): the work a server does after it has answered
 * (logging, clean-up). A clone does that share of its body after its
 * response. Empty in models written before 0.5. */
DITTO_API struct ditto_hist *ditto_requests_after_response_ns(const struct ditto_requests *r);
/* Since 0.5: the same histograms for writing, created empty when absent. */
DITTO_API struct ditto_hist *ditto_requests_request_bytes_ensure(struct ditto_requests *r);
DITTO_API struct ditto_hist *ditto_requests_response_bytes_ensure(struct ditto_requests *r);
DITTO_API struct ditto_hist *ditto_requests_per_connection_ensure(struct ditto_requests *r);
DITTO_API struct ditto_hist *ditto_requests_service_ns_ensure(struct ditto_requests *r);
DITTO_API struct ditto_hist *ditto_requests_after_response_ns_ensure(struct ditto_requests *r);

/*
 * --- services[].outbound[]: one per remote endpoint the service called ---
 *
 * Traffic on connections the service opened itself (a proxy's back end,
 * a database, a cache), kept apart from the requests it serves: none of
 * it is in requests or syscalls. The endpoint is the peer's IP address
 * (an IPv4 or IPv6 literal, as inet_ntop() writes it; validation refuses
 * anything else) and TCP port, as the sockets named it: the graph matches
 * it to the listening ports of profiled services. Counts are totals over
 * the window; per inbound request, divide by requests.count.
 *
 * A call is one request and its response on a connection: a send that
 * follows nothing or a receive starts one. add returns NULL (with -EEXIST
 * in ditto_last_error()) when the endpoint is there already, and with
 * -EINVAL on an empty address or port 0.
 */
DITTO_API size_t ditto_service_outbound_count(const struct ditto_service *s);
DITTO_API struct ditto_outbound *ditto_service_outbound(const struct ditto_service *s, size_t i);
DITTO_API struct ditto_outbound *ditto_service_find_outbound(const struct ditto_service *s,
							     const char *address, uint16_t port);
DITTO_API struct ditto_outbound *ditto_service_add_outbound(struct ditto_service *s,
							    const char *address, uint16_t port);
DITTO_API const char *ditto_outbound_address(const struct ditto_outbound *o);
DITTO_API uint16_t ditto_outbound_port(const struct ditto_outbound *o);
/* Wire framing of the calls, from the first bytes of the first one. */
DITTO_API enum ditto_framing ditto_outbound_framing(const struct ditto_outbound *o);
DITTO_API int ditto_outbound_set_framing(struct ditto_outbound *o, enum ditto_framing f);
/* Connections opened (connect() calls seen in the window). */
DITTO_API uint64_t ditto_outbound_connections(const struct ditto_outbound *o);
DITTO_API int ditto_outbound_set_connections(struct ditto_outbound *o, uint64_t n);
DITTO_API uint64_t ditto_outbound_calls(const struct ditto_outbound *o);
DITTO_API int ditto_outbound_set_calls(struct ditto_outbound *o, uint64_t n);
/* Send and receive syscalls on the endpoint's connections. */
DITTO_API uint64_t ditto_outbound_sends(const struct ditto_outbound *o);
DITTO_API int ditto_outbound_set_sends(struct ditto_outbound *o, uint64_t n);
DITTO_API uint64_t ditto_outbound_receives(const struct ditto_outbound *o);
DITTO_API int ditto_outbound_set_receives(struct ditto_outbound *o, uint64_t n);
/* Exact byte totals sent (requests) and received (responses). */
DITTO_API uint64_t ditto_outbound_request_bytes_total(const struct ditto_outbound *o);
DITTO_API int ditto_outbound_set_request_bytes_total(struct ditto_outbound *o, uint64_t n);
DITTO_API uint64_t ditto_outbound_response_bytes_total(const struct ditto_outbound *o);
DITTO_API int ditto_outbound_set_response_bytes_total(struct ditto_outbound *o, uint64_t n);
/* Sizes of the calls' requests and responses (log2); never NULL, absent
 * ones read-only and empty (the _ensure twins create them). */
DITTO_API struct ditto_hist *ditto_outbound_request_bytes(const struct ditto_outbound *o);
DITTO_API struct ditto_hist *ditto_outbound_response_bytes(const struct ditto_outbound *o);
DITTO_API struct ditto_hist *ditto_outbound_request_bytes_ensure(struct ditto_outbound *o);
DITTO_API struct ditto_hist *ditto_outbound_response_bytes_ensure(struct ditto_outbound *o);

/* --- services[].cpu[]: per thread class --- */
DITTO_API size_t ditto_service_cpu_count(const struct ditto_service *s);
DITTO_API struct ditto_cpu *ditto_service_cpu(const struct ditto_service *s, size_t i);
DITTO_API struct ditto_cpu *ditto_service_find_cpu(const struct ditto_service *s,
						   const char *thread_class);
DITTO_API struct ditto_cpu *ditto_service_add_cpu(struct ditto_service *s, const char *thread_class);
DITTO_API const char *ditto_cpu_thread_class(const struct ditto_cpu *c);
/* Execution windows, instructions observed in them, and how many of those
 * the decoder could not classify. */
DITTO_API uint64_t ditto_cpu_windows(const struct ditto_cpu *c);
DITTO_API int ditto_cpu_set_windows(struct ditto_cpu *c, uint64_t n);
DITTO_API uint64_t ditto_cpu_instructions(const struct ditto_cpu *c);
DITTO_API int ditto_cpu_set_instructions(struct ditto_cpu *c, uint64_t n);
DITTO_API uint64_t ditto_cpu_undecoded(const struct ditto_cpu *c);
DITTO_API int ditto_cpu_set_undecoded(struct ditto_cpu *c, uint64_t n);
/* Memory operations among the observed instructions, and loads whose
 * address came from an earlier load (pointer chasing). */
DITTO_API uint64_t ditto_cpu_loads(const struct ditto_cpu *c);
DITTO_API int ditto_cpu_set_loads(struct ditto_cpu *c, uint64_t n);
DITTO_API uint64_t ditto_cpu_stores(const struct ditto_cpu *c);
DITTO_API int ditto_cpu_set_stores(struct ditto_cpu *c, uint64_t n);
DITTO_API uint64_t ditto_cpu_chased_loads(const struct ditto_cpu *c);
DITTO_API int ditto_cpu_set_chased_loads(struct ditto_cpu *c, uint64_t n);
/* Accesses with no earlier use of their line (cold), data and instruction. */
DITTO_API uint64_t ditto_cpu_dws_cold(const struct ditto_cpu *c);
DITTO_API int ditto_cpu_set_dws_cold(struct ditto_cpu *c, uint64_t n);
DITTO_API uint64_t ditto_cpu_iws_cold(const struct ditto_cpu *c);
DITTO_API int ditto_cpu_set_iws_cold(struct ditto_cpu *c, uint64_t n);
/* Instructions executed from writable or anonymous code (JIT,
 * self-modifying), decoded afresh each time; and the wall time the
 * profiled threads were held in execution windows, in ns. */
DITTO_API uint64_t ditto_cpu_jit_instructions(const struct ditto_cpu *c);
DITTO_API int ditto_cpu_set_jit_instructions(struct ditto_cpu *c, uint64_t n);
DITTO_API uint64_t ditto_cpu_stepped_ns(const struct ditto_cpu *c);
DITTO_API int ditto_cpu_set_stepped_ns(struct ditto_cpu *c, uint64_t ns);
/*
 * Instruction mix: instruction class key -> executions. A key is
 * "func.ops.mem.width.isa":
 *   func   mov alu shift mul div cmp jcc jmp jmpi call calli ret str atomic
 *          crc32 bit cvt vint vfp x87 nop sys other
 *   ops    explicit operands in order, r register, m memory, i immediate,
 *          "-" for none ("rm": add rax, [rbx])
 *   mem    none, r, w, rw (implicit stack and string accesses included)
 *   width  widest explicit operand in bits (64 for stack-only forms)
 *   isa    base x87 mmx sse sse2 sse3 ssse3 sse4.1 sse4.2 avx avx2 fma
 *          avx512 bmi aes sha
 * e.g. "alu.rr.none.64.base", "mov.rm.r.32.base", "vint.rr.none.128.sse2".
 * NULL when the entry has no mix (it reads as empty); the _ensure twin
 * creates it for ditto_counts_add().
 */
DITTO_API struct ditto_counts *ditto_cpu_mix(const struct ditto_cpu *c);
DITTO_API struct ditto_counts *ditto_cpu_mix_ensure(struct ditto_cpu *c);
/*
 * Windows per stepping mechanism, keyed by ditto_step_mode_name()
 * ("breakpoint", "syscall_stops"; see profile.h): how the profile ran
 * system calls. NULL when absent (it reads as empty); the _ensure twin
 * creates it. Merges add.
 */
DITTO_API struct ditto_counts *ditto_cpu_stepping(const struct ditto_cpu *c);
DITTO_API struct ditto_counts *ditto_cpu_stepping_ensure(struct ditto_cpu *c);
/*
 * Histograms, never NULL (one the entry lacks reads as empty and is
 * read-only; the _ensure twins create them):
 *  insts_per_request  instructions between request boundaries (log2)
 *  branches           per executed conditional branch, key
 *                     taken_bin * 16 + transition_bin (exact); taken_bin k
 *                     in 0..8 means a folded taken rate of about 2^-k
 *                     (8: never), transition_bin likewise
 *  dws, iws           data / instruction reuse distance in bytes at 64-byte
 *                     line granularity (log2), cold accesses apart
 *  raw, war, waw      register dependency distances in instructions (log2)
 *  mem_raw            store-to-load distances in instructions (log2)
 */
DITTO_API struct ditto_hist *ditto_cpu_insts_per_request(const struct ditto_cpu *c);
DITTO_API struct ditto_hist *ditto_cpu_branches(const struct ditto_cpu *c);
DITTO_API struct ditto_hist *ditto_cpu_dws(const struct ditto_cpu *c);
DITTO_API struct ditto_hist *ditto_cpu_iws(const struct ditto_cpu *c);
DITTO_API struct ditto_hist *ditto_cpu_raw(const struct ditto_cpu *c);
DITTO_API struct ditto_hist *ditto_cpu_war(const struct ditto_cpu *c);
DITTO_API struct ditto_hist *ditto_cpu_waw(const struct ditto_cpu *c);
DITTO_API struct ditto_hist *ditto_cpu_mem_raw(const struct ditto_cpu *c);
/* Since 0.5: the same histograms for writing, created empty when absent. */
DITTO_API struct ditto_hist *ditto_cpu_insts_per_request_ensure(struct ditto_cpu *c);
DITTO_API struct ditto_hist *ditto_cpu_branches_ensure(struct ditto_cpu *c);
DITTO_API struct ditto_hist *ditto_cpu_dws_ensure(struct ditto_cpu *c);
DITTO_API struct ditto_hist *ditto_cpu_iws_ensure(struct ditto_cpu *c);
DITTO_API struct ditto_hist *ditto_cpu_raw_ensure(struct ditto_cpu *c);
DITTO_API struct ditto_hist *ditto_cpu_war_ensure(struct ditto_cpu *c);
DITTO_API struct ditto_hist *ditto_cpu_waw_ensure(struct ditto_cpu *c);
DITTO_API struct ditto_hist *ditto_cpu_mem_raw_ensure(struct ditto_cpu *c);

/*
 * Miss rate of a fully associative LRU cache of cache_bytes with 64-byte
 * lines, predicted from the data (or, with instructions, the instruction)
 * reuse-distance histogram: the share of accesses whose reuse size exceeds
 * the cache, sizes spread evenly inside a bucket. Cold accesses (first
 * touches in a window) count as misses only with count_cold: in a long
 * steady state they are an artefact of the window. A set-associative cache
 * of the same size misses slightly more; an absent histogram gives 0.
 */
DITTO_API double ditto_cpu_miss_rate(const struct ditto_cpu *c, bool instructions,
				     uint64_t cache_bytes, bool count_cold);

/* --- services[].observed --- */
/* NULL when the service has none (see "Getters only read" above). */
DITTO_API struct ditto_observed *ditto_service_observed(const struct ditto_service *s);
DITTO_API struct ditto_observed *ditto_service_observed_ensure(struct ditto_service *s);
/* Saturation throughput of the original, requests per second. */
DITTO_API double ditto_observed_throughput_qps(const struct ditto_observed *o);
DITTO_API int ditto_observed_set_throughput_qps(struct ditto_observed *o, double qps);
/* Latency per offered load: one point per target rate. */
DITTO_API size_t ditto_observed_load_count(const struct ditto_observed *o);
DITTO_API struct ditto_load_point *ditto_observed_load(const struct ditto_observed *o, size_t i);
DITTO_API struct ditto_load_point *ditto_observed_find_load(const struct ditto_observed *o,
							    double qps);
DITTO_API struct ditto_load_point *ditto_observed_add_load(struct ditto_observed *o, double qps);
DITTO_API double ditto_load_point_qps(const struct ditto_load_point *p);
DITTO_API double ditto_load_point_achieved_qps(const struct ditto_load_point *p);
DITTO_API int ditto_load_point_set_achieved_qps(struct ditto_load_point *p, double qps);
DITTO_API uint64_t ditto_load_point_connections(const struct ditto_load_point *p);
DITTO_API int ditto_load_point_set_connections(struct ditto_load_point *p, uint64_t n);
/* Request latency in ns (loglin); never NULL, read-only and empty when
 * absent (the _ensure twin creates it). */
DITTO_API struct ditto_hist *ditto_load_point_latency(const struct ditto_load_point *p);
DITTO_API struct ditto_hist *ditto_load_point_latency_ensure(struct ditto_load_point *p);
/* Hardware counters: whether the host had them, and their totals. */
DITTO_API bool ditto_observed_counters_available(const struct ditto_observed *o);
DITTO_API int ditto_observed_set_counters_available(struct ditto_observed *o, bool v);
DITTO_API uint64_t ditto_observed_counter(const struct ditto_observed *o, enum ditto_counter c);
DITTO_API int ditto_observed_set_counter(struct ditto_observed *o, enum ditto_counter c, uint64_t v);

/* ------------------------------------------------------------------ */
/* graph: the RPC graph                                                 */
/* ------------------------------------------------------------------ */

/* NULL when the model has no graph (see "Getters only read" above). */
DITTO_API struct ditto_graph *ditto_model_graph(const struct ditto_model *m);
DITTO_API struct ditto_graph *ditto_model_graph_ensure(struct ditto_model *m);
DITTO_API size_t ditto_graph_node_count(const struct ditto_graph *g);
DITTO_API const char *ditto_graph_node(const struct ditto_graph *g, size_t i);
/* Adds the service name unless present. */
DITTO_API int ditto_graph_add_node(struct ditto_graph *g, const char *name);
DITTO_API size_t ditto_graph_edge_count(const struct ditto_graph *g);
DITTO_API struct ditto_edge *ditto_graph_edge(const struct ditto_graph *g, size_t i);
DITTO_API struct ditto_edge *ditto_graph_find_edge(const struct ditto_graph *g, const char *from,
						   const char *to);
DITTO_API struct ditto_edge *ditto_graph_add_edge(struct ditto_graph *g, const char *from,
						  const char *to);
/*
 * An edge is keyed by its ends and its source: one run may hold the same
 * edge as the kernel saw it and as the traces saw it. The two functions
 * above work on kernel edges (an edge without a source is one).
 */
DITTO_API struct ditto_edge *ditto_graph_find_source_edge(const struct ditto_graph *g,
							  enum ditto_edge_source src,
							  const char *from, const char *to);
DITTO_API struct ditto_edge *ditto_graph_add_source_edge(struct ditto_graph *g,
							 enum ditto_edge_source src,
							 const char *from, const char *to);
DITTO_API const char *ditto_edge_from(const struct ditto_edge *e);
DITTO_API const char *ditto_edge_to(const struct ditto_edge *e);
DITTO_API enum ditto_edge_source ditto_edge_source(const struct ditto_edge *e);
/* sync: the parent's response waits for the call's; async: it does not. */
DITTO_API enum ditto_call_mode ditto_edge_mode(const struct ditto_edge *e);
DITTO_API int ditto_edge_set_mode(struct ditto_edge *e, enum ditto_call_mode mode);
/* Whether this edge's calls overlap other calls of the same parent request
 * (to this child or another one). */
DITTO_API enum ditto_call_order ditto_edge_order(const struct ditto_edge *e);
DITTO_API int ditto_edge_set_order(struct ditto_edge *e, enum ditto_call_order order);
/* Calls from `from` to `to`, and requests `from` served meanwhile. */
DITTO_API uint64_t ditto_edge_calls(const struct ditto_edge *e);
DITTO_API int ditto_edge_set_calls(struct ditto_edge *e, uint64_t n);
DITTO_API uint64_t ditto_edge_parent_requests(const struct ditto_edge *e);
DITTO_API int ditto_edge_set_parent_requests(struct ditto_edge *e, uint64_t n);
/* Of the calls: how many could be given to a parent request only by a
 * guess (an event loop serving several requests when the call went out),
 * and how many to none (made outside any request: background work, a
 * span whose parent is missing). Both are in `calls`. */
DITTO_API uint64_t ditto_edge_ambiguous(const struct ditto_edge *e);
DITTO_API int ditto_edge_set_ambiguous(struct ditto_edge *e, uint64_t n);
DITTO_API uint64_t ditto_edge_unattributed(const struct ditto_edge *e);
DITTO_API int ditto_edge_set_unattributed(struct ditto_edge *e, uint64_t n);
/* Calls per parent request (exact), request and response sizes (log2),
 * the child's latency as the parent sees it (loglin, ns); never NULL,
 * read-only and empty when absent (the _ensure twins create them). */
DITTO_API struct ditto_hist *ditto_edge_fanout(const struct ditto_edge *e);
DITTO_API struct ditto_hist *ditto_edge_request_bytes(const struct ditto_edge *e);
DITTO_API struct ditto_hist *ditto_edge_response_bytes(const struct ditto_edge *e);
DITTO_API struct ditto_hist *ditto_edge_latency_ns(const struct ditto_edge *e);
DITTO_API struct ditto_hist *ditto_edge_fanout_ensure(struct ditto_edge *e);
DITTO_API struct ditto_hist *ditto_edge_request_bytes_ensure(struct ditto_edge *e);
DITTO_API struct ditto_hist *ditto_edge_response_bytes_ensure(struct ditto_edge *e);
DITTO_API struct ditto_hist *ditto_edge_latency_ns_ensure(struct ditto_edge *e);

/*
 * --- graph.externals[]: nodes no profile covered ---
 *
 * A database or cache the services called, seen from the client side:
 * its address and port (as for outbound[]) and the framing recognised
 * from the first bytes sent to it. Its name must be in graph.nodes.
 */
DITTO_API size_t ditto_graph_external_count(const struct ditto_graph *g);
DITTO_API struct ditto_external *ditto_graph_external(const struct ditto_graph *g, size_t i);
DITTO_API struct ditto_external *ditto_graph_find_external(const struct ditto_graph *g,
							   const char *name);
/* NULL with -EEXIST when the name is taken, -EINVAL when empty. */
DITTO_API struct ditto_external *ditto_graph_add_external(struct ditto_graph *g, const char *name);
DITTO_API const char *ditto_external_name(const struct ditto_external *x);
DITTO_API const char *ditto_external_address(const struct ditto_external *x);
DITTO_API int ditto_external_set_address(struct ditto_external *x, const char *address);
DITTO_API uint64_t ditto_external_port(const struct ditto_external *x);
DITTO_API int ditto_external_set_port(struct ditto_external *x, uint64_t port);
DITTO_API enum ditto_framing ditto_external_framing(const struct ditto_external *x);
DITTO_API int ditto_external_set_framing(struct ditto_external *x, enum ditto_framing f);

/*
 * --- graph.traces: what the trace importers read ---
 *
 * Files and spans read, traces, spans whose parent was in no file
 * (orphans), spans refused (a field out of range), and the sampling ratio
 * the exports declared (0: none declared). corrected: the call counts
 * were scaled by the declared ratio; false: they are as sampled.
 */
DITTO_API struct ditto_traces *ditto_graph_traces(const struct ditto_graph *g);
DITTO_API struct ditto_traces *ditto_graph_traces_ensure(struct ditto_graph *g);
DITTO_API uint64_t ditto_traces_files(const struct ditto_traces *t);
DITTO_API int ditto_traces_set_files(struct ditto_traces *t, uint64_t n);
DITTO_API uint64_t ditto_traces_spans(const struct ditto_traces *t);
DITTO_API int ditto_traces_set_spans(struct ditto_traces *t, uint64_t n);
DITTO_API uint64_t ditto_traces_traces(const struct ditto_traces *t);
DITTO_API int ditto_traces_set_traces(struct ditto_traces *t, uint64_t n);
DITTO_API uint64_t ditto_traces_orphan_spans(const struct ditto_traces *t);
DITTO_API int ditto_traces_set_orphan_spans(struct ditto_traces *t, uint64_t n);
DITTO_API uint64_t ditto_traces_rejected_spans(const struct ditto_traces *t);
DITTO_API int ditto_traces_set_rejected_spans(struct ditto_traces *t, uint64_t n);
DITTO_API double ditto_traces_sample_ratio(const struct ditto_traces *t);
DITTO_API int ditto_traces_set_sample_ratio(struct ditto_traces *t, double r);
DITTO_API bool ditto_traces_corrected(const struct ditto_traces *t);
DITTO_API int ditto_traces_set_corrected(struct ditto_traces *t, bool v);

/*
 * --- comparing graphs (since 0.5) ---
 *
 * Rows in the form of ditto_model_compare()'s, a taken as the reference:
 * graph.nodes[NAME] only_a or only_b for a node one graph lacks;
 * graph.externals[NAME].framing (and only_a/only_b) for externals; then
 * a's edges of source sa paired by (from, to) with b's of source sb, as
 * graph.edges[FROM:TO:SOURCE] (FROM:TO:SA/SB when the sources differ):
 * mode and order (categorical: 0 equal, 1 not), calls_per_parent_requests
 * (relative error), ambiguous_per_calls and unattributed_per_calls,
 * fanout, request_bytes and response_bytes (total-variation distance and
 * .mean), latency_ns (distance, .p50, .p99); an edge on one side only is
 * an only_a or only_b row with error 1. a and b may be the same model:
 * ditto_graph_compare(m, DITTO_EDGE_KERNEL, m, DITTO_EDGE_TRACES, ...)
 * sets what the kernel saw against what the traces saw.
 *
 * ditto_model_compare() gives the same graph rows, choosing the sources:
 * every source both models have edges of, with itself; when they share
 * none but each has edges, the one source of a against the one of b;
 * when one has no edges, the other's edges as only_a or only_b rows.
 */
DITTO_API int ditto_graph_compare(const struct ditto_model *a, enum ditto_edge_source sa,
				  const struct ditto_model *b, enum ditto_edge_source sb,
				  const struct ditto_compare_opts *opts,
				  struct ditto_comparison **out);

/*
 * --- the graph as Graphviz DOT (since 0.5) ---
 *
 * A digraph: services as boxes, externals as cylinders (address:port and
 * framing under the name), one edge per model edge drawn, labelled with
 * calls per parent request, sync or async (async dashed), parallel when
 * its calls overlap others, and the mean request and response sizes;
 * edges of the traces are drawn in another colour and say "traces" when
 * both sources are drawn. Every string of the model is escaped for a
 * DOT quoted string, so any valid name parses as itself. Nodes and edges
 * come in the model's order: the same model gives the same text.
 */
struct ditto_dot_opts {
	size_t sz;
	/* Bit (1u << enum ditto_edge_source) per source whose edges are
	 * drawn; 0: every source. */
	unsigned sources;
	size_t :0;
};

/* The DOT text of m's graph into *out (release with ditto_free()); a model
 * without a graph gives an empty digraph. */
DITTO_API int ditto_graph_write_dot(const struct ditto_model *m, const struct ditto_dot_opts *opts,
				    char **out);

/* ------------------------------------------------------------------ */
/* tuning                                                               */
/* ------------------------------------------------------------------ */

/* NULL when the model has no tuning section (see "Getters only read"). */
DITTO_API struct ditto_tuning *ditto_model_tuning(const struct ditto_model *m);
DITTO_API struct ditto_tuning *ditto_model_tuning_ensure(struct ditto_model *m);
/*
 * Knobs are the synthesizer's, by name; an absent knob takes its default,
 * values outside the range are clamped when a clone is generated:
 *   synth.body_scale        multiplies the body's instructions per request (1)
 *   synth.branch_bias       > 0: extra branches taken at random with this
 *                           strength; < 0: extra always-taken ones (0)
 *   synth.d1_mpki           extra D1 misses per 1000 body instructions (0)
 *   synth.ll_mpki           of which also last-level misses (0)
 *   synth.far_code_scale    multiplies the share of far instruction fetches (1)
 *   synth.runtime_insts     the runtime's own instructions per request (-1: estimate)
 *   synth.background_rate   multiplies background classes' wake-up rate (1)
 *   synth.hold_share        share of epoll wake-ups whose responses wait for
 *                           the wake-up's last read (0)
 *   synth.chase_scale       multiplies the profile's share of chased loads (1)
 *   synth.cpu_scale         multiplies the body's instructions per request
 *                           again: CPU time per request (1)
 *   synth.wake_share        share of the body an event loop (epoll, poll)
 *                           runs once per wake-up that began requests
 *                           instead of once per request, so that its CPU
 *                           per request falls as its load grows (0)
 *   synth.footprint_kib     KiB of data each request walks as one chain
 *                           of dependent loads, apart from the body: what
 *                           a request costs more after the tier sat idle
 *                           and its caches lost the lines (0; at most
 *                           65536)
 *   synth.footprint_after_share  the share of that walk made after the
 *                           response, off the request's latency but not
 *                           its CPU time (0: all before it)
 *   synth.body_spread       coefficient of variation of a factor of mean
 *                           1 (lognormal, at most 100) each request's body
 *                           length is multiplied by: a tail of long
 *                           requests at the same mean CPU time (0; at
 *                           most 2; not the share run per wake-up)
 * Other names are kept but unused; validation warns about them. Iteration
 * errors are keyed by the tuned metric (see ditto_tune() in tune.h).
 */
/* Current knob values; NULL when absent (t NULL included: no knob set,
 * each at its default). The _ensure twin creates them for
 * ditto_values_set(). */
DITTO_API struct ditto_values *ditto_tuning_knobs(const struct ditto_tuning *t);
DITTO_API struct ditto_values *ditto_tuning_knobs_ensure(struct ditto_tuning *t);
DITTO_API size_t ditto_tuning_iteration_count(const struct ditto_tuning *t);
DITTO_API struct ditto_tuning_iter *ditto_tuning_iteration(const struct ditto_tuning *t, size_t i);
/* Appends an iteration numbered after the last one. */
DITTO_API struct ditto_tuning_iter *ditto_tuning_add_iteration(struct ditto_tuning *t);
DITTO_API uint64_t ditto_tuning_iter_index(const struct ditto_tuning_iter *it);
DITTO_API bool ditto_tuning_iter_accepted(const struct ditto_tuning_iter *it);
DITTO_API int ditto_tuning_iter_set_accepted(struct ditto_tuning_iter *it, bool v);
DITTO_API const char *ditto_tuning_iter_note(const struct ditto_tuning_iter *it);
DITTO_API int ditto_tuning_iter_set_note(struct ditto_tuning_iter *it, const char *note);
/* Knob values tried, and the error per metric they gave; NULL when
 * absent (the _ensure twins create them). */
DITTO_API struct ditto_values *ditto_tuning_iter_knobs(const struct ditto_tuning_iter *it);
DITTO_API struct ditto_values *ditto_tuning_iter_errors(const struct ditto_tuning_iter *it);
DITTO_API struct ditto_values *ditto_tuning_iter_knobs_ensure(struct ditto_tuning_iter *it);
DITTO_API struct ditto_values *ditto_tuning_iter_errors_ensure(struct ditto_tuning_iter *it);

/* ------------------------------------------------------------------ */
/* Maps: counts (string -> uint64) and values (string -> double)        */
/* ------------------------------------------------------------------ */

/* A NULL map (absent: see "Getters only read") reads as empty; adding or
 * setting into one fails with -EINVAL. */
DITTO_API size_t ditto_counts_size(const struct ditto_counts *c);
/* Entry i in insertion order; -DITTO_ENOTFOUND past the end. */
DITTO_API int ditto_counts_entry(const struct ditto_counts *c, size_t i, const char **key,
				 uint64_t *count);
/* Count of key, 0 when absent. */
DITTO_API uint64_t ditto_counts_get(const struct ditto_counts *c, const char *key);
/* Add to key's count (creating it); -EOVERFLOW on wrap. */
DITTO_API int ditto_counts_add(struct ditto_counts *c, const char *key, uint64_t n);
/* Sum of all counts. */
DITTO_API uint64_t ditto_counts_total(const struct ditto_counts *c);

/*
 * A map of values no model owns (for knobs given to ditto_synth_write()
 * through its opts, say); NULL when out of memory. ditto_values_free()
 * frees one of these and ignores, with a warning, a model's own maps.
 */
DITTO_API struct ditto_values *ditto_values_new(void);
DITTO_API void ditto_values_free(struct ditto_values *v);
DITTO_API size_t ditto_values_size(const struct ditto_values *v);
DITTO_API int ditto_values_entry(const struct ditto_values *v, size_t i, const char **key,
				 double *value);
/* -DITTO_ENOTFOUND when absent. */
DITTO_API int ditto_values_get(const struct ditto_values *v, const char *key, double *value);
/* -EINVAL for non-finite values. */
DITTO_API int ditto_values_set(struct ditto_values *v, const char *key, double value);

#ifdef __cplusplus
}
#endif

#endif /* DITTO_MODEL_H */
