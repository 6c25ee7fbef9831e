/* SPDX-License-Identifier: MIT */
/*
 * Tune stage: load generation, measurement and the feedback loop that
 * brings a clone within bounds of its original.
 *
 * Three layers, each usable on its own:
 *
 *   ditto_load_run()     drive any service (the original or a clone) with
 *                        requests in its wire framing, open or closed
 *                        loop, and record latency in a histogram;
 *   ditto_measure()      start a service command, load it, and measure it
 *                        with one or more backends (cachegrind, libditto's
 *                        profiler, hardware counters), as named metrics;
 *   ditto_tune()         measure the original once, then synthesize,
 *                        build and measure the clone, adjust the model's
 *                        tuning knobs and repeat until every metric is in
 *                        bounds; the iterations go to the model's tuning
 *                        section and a report compares the two.
 *
 *     DITTO_OPTS(ditto_tune_opts, to, .dir = "clone", .original_argv = argv);
 *     struct ditto_tune_report *r;
 *     err = ditto_tune(model, &to, &r);
 *
 * Functions here are thread-safe on distinct objects.
 */
#ifndef DITTO_TUNE_H
#define DITTO_TUNE_H

#include <ditto/ditto.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Load generation                                                      */
/* ------------------------------------------------------------------ */

enum ditto_load_mode {
	DITTO_LOAD_CLOSED = 1,	/* each connection sends when its answer came */
	DITTO_LOAD_POISSON = 2,	/* open loop, exponential gaps at qps */
	DITTO_LOAD_FIXED = 3,	/* open loop, even gaps at qps */
};

struct ditto_loadgen_opts {
	size_t sz;
	/* IPv4 address of the service (NULL: 127.0.0.1) and its TCP port. */
	const char *host;
	unsigned port;
	/* Wire framing, an enum ditto_framing of model.h (0: the model
	 * service's, else an error). */
	unsigned framing;
	/* Arrival process (0: closed loop) and, in open loop, the target
	 * rate in requests per second over all connections. */
	enum ditto_load_mode mode;
	double qps;
	/* Connections (0: 8), opened before the clock starts. */
	unsigned connections;
	/* Stop after this many seconds (0: 5 unless requests is set) or this
	 * many requests answered or failed (0: no limit), whichever comes
	 * first; no more than that many are sent in the recorded period. */
	double duration_s;
	uint64_t requests;
	/* Seconds of load before recording starts (not counted). */
	double warmup_s;
	/* Value bytes of writing requests, the payload of length-prefixed
	 * and raw ones (0: the model's mean request size less the framing's
	 * overhead, else 32), and the share of requests that write (0: 0.5;
	 * negative: none; framings without writes ignore it). Keys are
	 * "key:NNNNNN", uniform over 10000. raw has no framing: whatever one
	 * read returns is the answer.
	 *
	 * With a model, RESP and memcached (text, binary) loads resemble the
	 * profiled one, so that the original store and its clone give the
	 * same answers. Where both fields are 0, the value size V and write
	 * share w come from the model's mean request size R (its byte total
	 * over its request count, else its histogram's mean) and the exact
	 * bytes of our SET and GET around V and of the store's answers (a
	 * GET hits), with w clamped to [0, 1]:
	 *   R = w * set(V) + (1 - w) * get
	 * memcached acks a write apart (STORED; a clone too), so its model's
	 * answers at least as large as an empty hit are the reads': V makes
	 * hit(V) their mean (placed in their buckets as the clone draws
	 * them). A RESP clone draws every answer from the whole distribution,
	 * so there V (bisection, 1 .. 512 KiB) also meets the mean answer S:
	 *   S = w * ok + (1 - w) * hit(V)
	 * and where S is below any hit, all requests write values giving R.
	 * Keys then come from 64, each SET once with V on the run's
	 * connections before the clock starts (neither counted, recorded nor
	 * timed; a measured service does serve them). HTTP, length-prefixed
	 * and raw loads keep the defaults above. */
	uint64_t value_bytes;
	double write_share;
	/* Model to take framing and request sizes from (NULL: none). */
	struct ditto_model *model;
	const char *service;
	/* Seed of arrivals, keys and sizes (0: 1). */
	uint64_t seed;
	/* An answer later than this is a timeout error (0: 5 s, or the
	 * whole run if that is shorter: the run's length, warmup included,
	 * up to the deadline; so a service that never answers has its first
	 * requests counted as timeouts, not left outstanding at the end). */
	double timeout_s;
	/* Set *stop non-zero from any thread or signal handler to end early. */
	const volatile int *stop;
	/* Since 0.5. The longest a run may take from the start of its clock
	 * (warmup included) before it ends with -ETIMEDOUT, short of its
	 * requests or its duration (0: for a run with a request count and no
	 * duration, 60 s plus 10 ms per request; otherwise no deadline). */
	double deadline_s;
	/* Since 0.5. Target of HTTP requests (NULL: "/"): it must start with
	 * '/' and hold printable ASCII without spaces, at most 1024 bytes
	 * (else -EINVAL). A front tier whose / answers 404 is loaded where
	 * its clients go. */
	const char *http_path;
	size_t :0;
};

/* Why a request failed (since 0.5). Kinds are numbered from 1 up to the
 * first that ditto_load_error_name() does not know. */
enum ditto_load_error {
	/* A reconnect refused (ECONNREFUSED). */
	DITTO_LOAD_ERR_REFUSED = 1,
	/* The connection was reset (ECONNRESET, EPIPE). */
	DITTO_LOAD_ERR_RESET = 2,
	/* The service closed the connection with the request outstanding. */
	DITTO_LOAD_ERR_CLOSED = 3,
	/* No whole answer within timeout_s, or by the deadline. */
	DITTO_LOAD_ERR_TIMEOUT = 4,
	/* Bytes the framing cannot parse: malformed, two answers to one
	 * request, or an answer larger than 64 MiB. */
	DITTO_LOAD_ERR_UNPARSEABLE = 5,
	/* An error reply of the protocol: RESP errors, memcached ERROR,
	 * CLIENT_ERROR or SERVER_ERROR, a binary status other than "not
	 * found", HTTP 4xx and 5xx (a server that has nothing at / answers
	 * 404, which costs it nothing like a page). */
	DITTO_LOAD_ERR_REPLY = 6,
	/* Any other error of connect, send or receive. */
	DITTO_LOAD_ERR_OTHER = 7,
};

struct ditto_load_result;
struct ditto_model;
struct ditto_hist;

/*
 * Drive the service: open the connections, send requests as the mode says
 * and read every answer in full (a request's latency runs from its send
 * time; in open loop from its intended send time, so a stalled service
 * is not under-reported: coordinated omission is corrected). Runs in the
 * calling thread with one event loop.
 *
 * Errors before the run (*out NULL): -ECONNREFUSED (or another -errno of
 * connect) when no connection could be made, -ETIMEDOUT, -ECONNRESET or
 * -EPROTO when a key could not be set before the run (a model's load),
 * -ENOTSUP for DITTO_FRAMING_MYSQL (not generated here: sysbench and the
 * service's other clients drive it), -EINVAL, -DITTO_EOPTS, -ENOMEM.
 * Errors of requests during the run (a connection closed or reset, a
 * malformed answer, a timeout) are counted in the result by kind. The run
 * itself fails, with *out still set to its result (the caller frees it)
 * and the kinds seen and their counts in ditto_last_error(), when:
 *   -EIO        no request was answered: every one failed, or none was
 *               answered by the end ("load: no request to 127.0.0.1:6379
 *               was answered (16 failed: timeout 16)");
 *   -ETIMEDOUT  the deadline passed first ("load: deadline of 2 s passed
 *               with 40 of 100 requests answered (8 failed: timeout 8)");
 *               requests outstanding then count as timeouts;
 *   -ECANCELED  *stop was set before any request was answered or failed.
 * A run with some answers and some errors succeeds (0): read the errors
 * from the result. So free *out whenever it is not NULL.
 */
DITTO_API int ditto_load_run(const struct ditto_loadgen_opts *opts, struct ditto_load_result **out);
DITTO_API void ditto_load_result_free(struct ditto_load_result *r);
/* Requests answered in the recorded period, and requests that failed in
 * it, of every kind of enum ditto_load_error (failed reconnects
 * included). */
DITTO_API uint64_t ditto_load_result_completed(const struct ditto_load_result *r);
DITTO_API uint64_t ditto_load_result_errors(const struct ditto_load_result *r);
/* Since 0.5. The errors of one kind (0 for a kind it does not know); over
 * every kind they sum to ditto_load_result_errors(). */
DITTO_API uint64_t ditto_load_result_errors_by(const struct ditto_load_result *r,
					       enum ditto_load_error kind);
/* Since 0.5. "refused", "reset", "closed", "timeout", "unparseable",
 * "error_reply", "other"; NULL for a value that is no kind. Static. */
DITTO_API const char *ditto_load_error_name(enum ditto_load_error kind);
/* Target rate (0 in closed loop), the rate achieved, and the seconds recorded. */
DITTO_API double ditto_load_result_offered_qps(const struct ditto_load_result *r);
DITTO_API double ditto_load_result_achieved_qps(const struct ditto_load_result *r);
DITTO_API double ditto_load_result_elapsed_s(const struct ditto_load_result *r);
/* Bytes sent and received in the recorded period. */
DITTO_API uint64_t ditto_load_result_bytes_sent(const struct ditto_load_result *r);
DITTO_API uint64_t ditto_load_result_bytes_received(const struct ditto_load_result *r);
/* Latency in nanoseconds, a DITTO_HIST_LOGLIN histogram owned by r. */
DITTO_API const struct ditto_hist *ditto_load_result_latency(const struct ditto_load_result *r);
/* {"offered_qps", "achieved_qps", "completed", "errors", "errors_by_kind":
 *  {"refused", "reset", "closed", "timeout", "unparseable", "error_reply",
 *  "other"}, "elapsed_s", "bytes_sent", "bytes_received", "latency_ns":
 *  {"p50", "p90", "p99", "p99.9", "max", "mean"}} (release with
 *  ditto_free()). */
DITTO_API int ditto_load_result_to_json(const struct ditto_load_result *r, char **out);

/* ------------------------------------------------------------------ */
/* Measurement                                                          */
/* ------------------------------------------------------------------ */

enum ditto_backend {
	DITTO_BACKEND_CACHEGRIND = 1 << 0,	/* valgrind: I1/D1/LL, branches */
	DITTO_BACKEND_PROFILE = 1 << 1,		/* libditto's profiler: syscalls, bytes */
	DITTO_BACKEND_COUNTERS = 1 << 2,	/* perf counters through libpfm4 */
	DITTO_BACKEND_CPU = 1 << 3,		/* libditto's CPU windows: code shape */
};

/*
 * Metric names the backends give (rates are per request unless named
 * otherwise):
 *   cachegrind  insts_per_request, i1_miss_rate, d1_miss_rate,
 *               ll_miss_rate, branch_mispredict_rate, and the counts
 *               behind them: i1_misses_per_request, d1_misses_per_request,
 *               ll_misses_per_request, data_refs_per_request,
 *               branches_per_request, branch_mispredicts_per_request
 *               (cache geometry: I1 and D1 32 KiB 8-way, LL 1 MiB 16-way,
 *               64-byte lines; startup is measured separately and
 *               subtracted, so rates are those of serving; processes the
 *               service forks or execs are measured too)
 *   profile     syscalls_per_request, socket_bytes_per_request,
 *               read_calls_per_request, write_calls_per_request,
 *               background_calls_per_request, cpu_ns_per_request (CPU
 *               time of every thread per request; needs what
 *               ditto_profile_new() needs: root or CAP_BPF; the service
 *               runs natively on every CPU but the first, the load on the
 *               first, when the process may use two or more)
 *   counters    ipc, branch_mpki, l1i_mpki, l1d_mpki, llc_mpki (an MPKI
 *               the host has no event for is left out)
 *   cpu         loads_per_instruction, chased_load_share (loads whose
 *               address came from an earlier load), raw_distance_log2_mean
 *               (mean log2 register dependency distance), from eight
 *               ptrace CPU windows of 20000 instructions on the busiest
 *               request-serving class while the load runs (it runs until
 *               they are taken, some seconds; needs root, as profile)
 */
struct ditto_metrics;

DITTO_API int ditto_metrics_new(struct ditto_metrics **out);
DITTO_API void ditto_metrics_free(struct ditto_metrics *m);
DITTO_API size_t ditto_metrics_count(const struct ditto_metrics *m);
/* Entry i; -DITTO_ENOTFOUND past the end. */
DITTO_API int ditto_metrics_entry(const struct ditto_metrics *m, size_t i, const char **name,
				  double *value);
/* -DITTO_ENOTFOUND when absent. */
DITTO_API int ditto_metrics_get(const struct ditto_metrics *m, const char *name, double *value);
/* Sets or replaces; -EINVAL for a non-finite value. */
DITTO_API int ditto_metrics_set(struct ditto_metrics *m, const char *name, double value);

struct ditto_measure_opts {
	size_t sz;
	/* Backends to run (0: cachegrind). A backend the host cannot run
	 * (no valgrind, no counters) is skipped with a warning; when every
	 * requested one is, ditto_measure() fails with the first one's
	 * reason (-ENOENT no valgrind, -EOPNOTSUPP no counters). */
	unsigned backends;
	/* Command that starts the service; it must listen on load->port and
	 * end on SIGTERM. */
	char *const *argv;
	/* The load: closed loop by default; duration and requests apply to
	 * each backend run. warmup_s is ignored: metrics are per answered
	 * request over the whole run. A load with a request count and
	 * neither a duration nor a deadline gets ten times the default
	 * deadline (600 s plus 0.1 s a request): under valgrind a service
	 * runs tens of times slower. stop, when set here, is used if the
	 * field below is not. */
	const struct ditto_loadgen_opts *load;
	/* Seconds to wait for the service to accept connections (0: 30). */
	double startup_timeout_s;
	/* Where backend output goes (NULL: a temporary directory, removed). */
	const char *work_dir;
	const volatile int *stop;
	size_t :0;
};

/*
 * Start argv once per backend (in its own process group, its output in a
 * log file of work_dir), wait until it accepts, run the load, stop it with
 * SIGTERM (SIGKILL after 10 s) and add the backend's metrics to *out (a
 * new object when *out is NULL). The service is never left running. On
 * error a new object is freed and *out left NULL; a caller's object keeps
 * the metrics of the backends that finished. Errors: -ENOENT argv[0] or
 * valgrind missing; -EADDRINUSE something already accepts on the port;
 * -ETIMEDOUT the service never accepted, ignored SIGTERM, or the load's
 * deadline passed; -ECHILD it died before the load ended (its exit status
 * and last output lines in ditto_last_error()); -EIO no request was
 * answered (the kinds of the failures in the message); -ECANCELED *stop
 * was set; the profiler's errors; -EINVAL, -DITTO_EOPTS.
 */
DITTO_API int ditto_measure(const struct ditto_measure_opts *opts, struct ditto_metrics **out);

/* Whether this host exposes hardware counters to perf_event_open (via
 * libpfm4's event tables); false with the reason in ditto_last_error(). */
DITTO_API bool ditto_counters_available(void);

/* ------------------------------------------------------------------ */
/* The feedback loop                                                    */
/* ------------------------------------------------------------------ */

/* Called after every iteration: its index in the model's tuning section
 * (1 for the first clone of an untuned model), the tuned metric furthest
 * out of its bound and its relative error, whether the clone is the best
 * so far, and a one-line note. */
typedef void (*ditto_tune_progress_fn)(unsigned iteration, double max_error, const char *worst,
				       bool best, const char *note, void *user);

struct ditto_tune_opts {
	size_t sz;
	/* Where the clone tree is written and rebuilt (required); the best
	 * clone so far is kept there when the loop ends for any reason. */
	const char *dir;
	/* Service of the model to clone (NULL: the first). */
	const char *service;
	/* Command that starts the original, listening on original_port (0:
	 * the model's first port). NULL: the original is not measured and
	 * the model's recorded targets are used where it has them. */
	char *const *original_argv;
	unsigned original_port;
	/* Port the clone listens on while measured (0: a free port). */
	unsigned port;
	/* Iterations at most (0: 8), and the relative error bound of the
	 * cachegrind rates and instructions per request (0: 0.05). */
	unsigned max_iterations;
	double bound;
	/* Requests per cachegrind measurement (0: 30000: fewer leave the
	 * rates of a multi-threaded service a few percent apart between runs,
	 * and first-touch misses a large share) and connections. */
	uint64_t requests;
	unsigned connections;
	/* Also load both natively at rising rates for the report's latency
	 * and throughput rows and plot (slower). */
	bool latency;
	/* Seconds per latency load point (0: 3). */
	double latency_s;
	/* Generator seed (0: 1). */
	uint64_t seed;
	/* C compiler for the clone (NULL: cc). */
	const char *cc;
	ditto_tune_progress_fn progress;
	void *user;
	/* Set *stop non-zero from any thread or signal handler: the running
	 * measurement ends, and the best clone so far is kept. */
	const volatile int *stop;
	size_t :0;
};

struct ditto_tune_report;

/*
 * Tune one service of m. Each iteration writes the clone with the current
 * knobs (at first the model's tuning.knobs; given to the generator
 * through ditto_synth_opts.knobs, so the model's map holds them only when
 * the loop ends) into DIR.try, builds it, measures it under
 * the same load as the original (cachegrind), records an iteration (knobs
 * tried, error per metric, accepted when best so far) in the model's
 * tuning section, moves a best clone into dir (best: instructions or CPU
 * time per request within bound first, then the least largest error),
 * and steps the knobs. Tuned
 * metrics and their knobs: insts_per_request (synth.body_scale) or,
 * when the original is not run and the model's CPU windows held no whole
 * request (a warning says so), cpu_ns_per_request (synth.cpu_scale: the
 * clone's CPU time per request, from the profile backend, held to the
 * model's, as measured on the host of the profile, within 10%),
 * branch_mispredict_rate (synth.branch_bias), i1_miss_rate
 * (synth.far_code_scale), d1_miss_rate (synth.d1_mpki), ll_miss_rate
 * (synth.ll_mpki) and, when the original can also be measured with the
 * profile backend (else a warning), background_calls_per_request
 * (synth.background_rate) and syscalls_per_request (synth.hold_share: the
 * share of epoll wake-ups whose responses wait for the wake-up's last
 * read; stepped while over the report's bound for calls, accepted within
 * the loop's bound); errors are relative, small rates and background
 * call counts taken relative to a floor. The original's figures are the
 * mean of several runs; a clone whose largest error is near the bound,
 * either way, is measured twice and judged by the mean (cachegrind's
 * shared caches see a multi-threaded service's threads in whatever order
 * valgrind ran them). A clone that fails to build or run is recorded as
 * such and the knobs go back to the best ones. A knob whose metric does
 * not move over consecutive steps is stepped to its limit (the larger
 * step); if that leaves the metric where it was too, the knob had no
 * effect: it is no longer stepped, a warning names it and the
 * report's stall entries carry it. The loop ends early when no knob of a
 * metric still out of bound can move (each at its limit or without
 * effect). ditto_tune() returns 0 whether or not the loop converged:
 * ditto_tune_report_converged() tells, ditto_tune_report_verdict() says
 * it in a line (the `ditto tune` CLI exits 3 then, 1 on an error). The
 * report's syscall and byte rows average several profile-backend runs per
 * side, taking turns; the original takes a second turn in each round, and
 * syscalls_per_request_noise sets it against itself; the syscalls_per_request
 * row's bound is the report's bound for calls or that noise, the larger.
 * The best clone's CPU windows (under the load) give the informational rows
 * mix_distance and dependency_distance (total-variation distances of the
 * instruction mix and of the RAW distance histogram from the model's
 * serving class; 0 same, 1 disjoint), loads_per_instruction and
 * chased_load_share. With opts->latency
 * the report also has p50/p99 rows at a low, a medium and a high share of
 * the original's saturation (rounds alternating original and clone, pooled) and
 * p99_ns_{low,medium,high}_noise rows: the original against its own second
 * turn in the same rounds, the noise floor of the p99 rows. At the end
 * tuning.knobs holds the best knobs and the report compares the original
 * with the best clone; it is the caller's, also when an error came after a
 * clone was measured (else NULL). Stopping after a clone was measured is
 * not an error. Errors: -DITTO_EOPTS; -ENOTEMPTY dir holds other files;
 * errors of ditto_measure() on the original (prefixed "tune: measuring the
 * original"); -ECHILD no clone could be built and measured; -ECANCELED
 * stopped before any clone was measured.
 */
DITTO_API int ditto_tune(struct ditto_model *m, const struct ditto_tune_opts *opts,
			 struct ditto_tune_report **out);

/* Since 0.5. */
struct ditto_tune_graph_opts {
	size_t sz;
	/* Where the graph tree is written and rebuilt (required); the best
	 * tree so far is kept there when the loop ends for any reason. */
	const char *dir;
	/* Command that starts the whole original graph, its front tier
	 * listening on original_port (0: the model's front port), each other
	 * tier on its port in the model, all in the command's process tree
	 * (in the foreground): it gives the targets (see profile_targets),
	 * and the end-to-end latency rows set the clone graph against it.
	 * NULL: the profile gives the targets, and the front's recorded
	 * throughput stands for the original's. */
	char *const *original_argv;
	unsigned original_port;
	/* Iterations at most (0: 8), and the relative error bound of each
	 * tier's CPU time per request (0: 0.05). */
	unsigned max_iterations;
	double bound;
	/* The load of each measurement: closed loop on the front tier with
	 * this many connections (0: 2) for this many seconds (0: 4), after a
	 * second of warm-up. */
	unsigned connections;
	double duration_s;
	/* Also load both graphs at a low, a medium and a high share of the
	 * original's saturation, with noise rows (needs original_argv for
	 * the curves; slower), latency_s seconds per point (0: 3). */
	bool latency;
	double latency_s;
	/* Target of the HTTP requests to an HTTP front (NULL: "/"), all GETs:
	 * where the front's clients go (a front whose / answers 404 would be
	 * measured answering errors). */
	const char *http_path;
	/* As in ditto_synth_graph_opts (keep_count NAME=HOST:PORT strings:
	 * nodes not cloned, not tuned). */
	const char *const *keep;
	size_t keep_count;
	uint64_t seed;
	const char *cc;
	ditto_tune_progress_fn progress;
	void *user;
	const volatile int *stop;
	/* A second profile of the same graph under a busier load (since
	 * 0.5; NULL: none): each tier's CPU time per front request in it is
	 * held too (when the targets are the profile's; else the original
	 * measured under the busy load gives them, and this only asks for the
	 * busy rows), the clone graph loaded closed-loop with busy_connections
	 * (0: 8) after each measurement at `connections`. An event loop's
	 * CPU per request falls as its load packs requests into its
	 * wake-ups; a tier's second knob, "NODE/synth.wake_share", moves
	 * its body from per request to per wake-up until its busy CPU per
	 * request is its original's (rows "cpu_ns_per_request_busy:NODE"). */
	const struct ditto_model *busy;
	unsigned busy_connections;
	/* Where each tier's targets come from when original_argv is given
	 * (since 0.5): false, the original graph run by it before the loop,
	 * with nothing attached, under the same loads as the clone graph
	 * (each tier found by its port in the model, the front's by
	 * original_port; rounds until each tier's CPU per request settles
	 * within bound), so that the profiler's own cost in a profiled
	 * tier's system calls is not cloned; busy_connections alone then
	 * asks for the busy rows, measured on the original too. true: the
	 * profile's figures, as without original_argv. */
	bool profile_targets;
	/* Also an idle load (since 0.5; 0: none, else 1..1000, well below
	 * what the base load reaches): the front loaded open-loop at this
	 * many requests per second, evenly spaced on one connection,
	 * for duration_s (at least 100 requests), the original graph too
	 * (needs original_argv, not profile_targets). A tier that sat idle
	 * between requests has lost its working set from the caches and
	 * pays for it on the next one; a tier's third knob,
	 * "NODE/synth.footprint_kib", sizes the data its clone walks per
	 * request until its CPU per request at this rate less that under the
	 * base load is its original's (rows "cpu_ns_per_request_idle:NODE"),
	 * and every tier's "NODE/synth.footprint_after_share", one value for
	 * the graph, moves those walks after the response until the front's
	 * p50 latency at this rate is the original graph's (row
	 * "latency_p50_ns_idle"). These rows' bounds are at least the
	 * original's own spread: half the range of its rounds over their
	 * median. */
	double idle_qps;
	/* Also hold the front's p99 latency under the base load to the
	 * original graph's (since 0.5; needs original_argv, not
	 * profile_targets; row "latency_p99_ns", its target the median of
	 * five more rounds of the original once its tiers settled, its bound
	 * at least their spread): every tier's "NODE/synth.body_spread", one
	 * value for the graph, draws each request's body length around its
	 * mean until the clone graph's slowest requests are as slow as the
	 * original's. A request's latency tells nothing of which tier made it
	 * slow. */
	bool tail;
	size_t :0;
};

/*
 * Tune the clone of a graph model (ditto_synth_graph_write()) tier by
 * tier, each under the load it receives in the graph: every iteration
 * writes the graph tree with the current knobs into DIR.try, builds it,
 * starts it (ditto_synth_up()), drives its front tier with the model's
 * framing and requests, and reads each tier's CPU time (its process tree,
 * every thread, from /proc) over the requests the front answered. A
 * tier's target is its original's CPU time per request of the graph,
 * so each tier is held to its share of the whole: with
 * opts->original_argv (and not profile_targets), the original graph
 * measured the same way before the loop; else its CPU time in the
 * profile over the requests the front served in the same window. The knob of a
 * tier is "NODE/synth.cpu_scale" (its body's length; per node, see
 * ditto_tuning_knobs()), stepped by a secant search per tier (the
 * runtime's own cost is the intercept). Externals cloned from what their
 * callers saw, and kept nodes, have no target. The best tree (smallest
 * largest error) is moved into dir. The report has one row per tuned
 * tier, "cpu_ns_per_request:NODE" (bound: opts->bound), and with the
 * busy and idle loads "cpu_ns_per_request_busy:NODE" and
 * "cpu_ns_per_request_idle:NODE", the graph's "latency_p50_ns_idle"
 * with the idle load and "latency_p99_ns" with opts->tail (bounds: at
 * least the original's own spread); with opts->latency, the end-to-end
 * rows of ditto_tune() (p50/p99 at low, medium and high load, their
 * noise rows, saturation_qps) between the original graph and the best
 * clone graph. The iterations and the best
 * knobs go to the model's tuning section, so that ditto_synth_graph_write()
 * of the tuned model writes the tuned tree. The report is converged when
 * every tier and graph row is within its bound and, with the latency rows, each bounded
 * p99 row (low and medium load) is within its bound too; the verdict
 * names the worst tier, and the end-to-end row that is out. Errors:
 * -DITTO_EOPTS; -EINVAL the model is no graph, or no tier has a CPU time
 * and requests to tune against (a profile of the tiers under load gives
 * both); -ENOTEMPTY dir holds other files; errors of measuring the
 * original graph (prefixed "tune: measuring the original graph": it did
 * not start or exited, -ETIMEDOUT a tier did not listen on its port
 * under the command, -EIO it failed more than 5% of the requests, a
 * tier spent no CPU or its front answered with no latency), before
 * anything is built; -ECHILD no clone graph
 * could be built and measured; -ECANCELED stopped before any was
 * measured.
 */
DITTO_API int ditto_tune_graph(struct ditto_model *m, const struct ditto_tune_graph_opts *opts,
			       struct ditto_tune_report **out);
DITTO_API void ditto_tune_report_free(struct ditto_tune_report *r);
/* Iterations run, and whether every tuned metric ended within bounds.
 * ditto_tune() returns 0 also when the loop did not converge (it ran as
 * asked): this is how a caller tells the two apart. */
DITTO_API unsigned ditto_tune_report_iterations(const struct ditto_tune_report *r);
DITTO_API bool ditto_tune_report_converged(const struct ditto_tune_report *r);

/* Why a tuned metric did not converge (since 0.5). */
enum ditto_tune_stall_kind {
	/* The knob moved over `steps` steps in a row, the last one to its
	 * limit, and the metric did not (each step moved it by less than the
	 * loop takes for an effect): the loop stopped stepping it. Reported
	 * also when the metric ended within bounds through the other knobs. */
	DITTO_TUNE_NO_EFFECT = 1,
	/* The knob is at its limit and the metric needs more of it. */
	DITTO_TUNE_AT_LIMIT = 2,
	/* The knob was still moving when the iterations ran out. */
	DITTO_TUNE_UNFINISHED = 3,
};

/* Stall entries: one per tuned metric that the best clone leaves out of
 * its bound and per knob found to have no effect. */
DITTO_API size_t ditto_tune_report_stall_count(const struct ditto_tune_report *r);
/* Entry i: the metric, its knob, the kind, the steps without effect (0
 * unless DITTO_TUNE_NO_EFFECT) and a one-line reason ("knob
 * synth.far_code_scale had no effect over 3 steps (1 to 20)"). Strings
 * are r's; any out pointer may be NULL. -DITTO_ENOTFOUND past the end. */
DITTO_API int ditto_tune_report_stall(const struct ditto_tune_report *r, size_t i,
				      const char **metric, const char **knob,
				      enum ditto_tune_stall_kind *kind, unsigned *steps,
				      const char **text);
/* One line for people and scripts: "converged in 5 iterations; every
 * tuned metric within bounds" (with ", but 1 row of the report out of its
 * own: syscalls_per_request 2.05% off (bound 1.00%)" when a row the loop
 * did not hold to the report's bound is out of it) or "NOT converged
 * after 9 iterations:
 * i1_miss_rate 99.98% off (knob synth.far_code_scale had no effect over 3
 * steps (1 to 20))". Owned by r. */
DITTO_API const char *ditto_tune_report_verdict(const struct ditto_tune_report *r);
/* Rows of the comparison of the original and the best clone. */
DITTO_API size_t ditto_tune_report_count(const struct ditto_tune_report *r);
/* Row i: metric name, original, clone, relative error, its bound (0:
 * reported, not tuned). -DITTO_ENOTFOUND past the end. */
DITTO_API int ditto_tune_report_row(const struct ditto_tune_report *r, size_t i, const char **metric,
				    double *original, double *clone, double *error, double *bound);
/* {"converged", "iterations", "verdict", "rows": [{"metric", "original",
 *  "clone", "error", "bound"}], "stalls": [{"metric", "knob", "kind"
 *  ("no_effect", "at_limit", "unfinished"), "steps", "text"}], "latency": {"original": [{"qps", "achieved_qps",
 *  "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns"}], "clone": [...]}} */
DITTO_API int ditto_tune_report_to_json(const struct ditto_tune_report *r, char **out);
/* The latency percentiles against achieved load, original and clone, as
 * an SVG file. -DITTO_ENOTFOUND when the report has no latency points. */
DITTO_API int ditto_tune_report_plot_svg(const struct ditto_tune_report *r, const char *path);

#ifdef __cplusplus
}
#endif

#endif /* DITTO_TUNE_H */
