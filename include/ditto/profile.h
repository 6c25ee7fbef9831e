/* SPDX-License-Identifier: MIT */
/*
 * Profile stage: fill a model from a live service.
 *
 * A profile session attaches to a running process (and follows all its
 * threads and every descendant process that exists or appears during the
 * window) or launches a command, then collects:
 *  - system calls with their arguments and return values, aggregated in
 *    kernel maps by an eBPF program on the raw_syscalls tracepoints
 *    (CO-RE; needs BTF in /sys/kernel/btf/vmlinux and CAP_BPF+CAP_PERFMON
 *    or root);
 *  - requests on accepted sockets (an inbound message followed by a
 *    response on the same socket);
 *  - the scheduler view: who wakes whom, thread and process creation, CPU
 *    time and context switches per thread;
 *  - call-stack samples per thread (perf_event_open software cpu-clock,
 *    user stacks unwound with libunwind), clustered into thread classes;
 *  - hardware counters (libpfm4) where the host has them;
 * and derives the network model (also when every connection predates the
 * window: threads waiting on a listening socket when it ends, blocked in
 * accept or in an epoll/poll/select set that holds it, count as the
 * accepting ones). After that window, CPU windows single-step
 * the request-serving thread classes (see ditto_profile_cpu() below) and
 * fill services[0].cpu. The result is a ditto_model.
 *
 * The target is never stopped during the system window: collection happens
 * in the kernel and in sampled stack copies. CPU windows hold one thread
 * at a time for a bounded time. Whatever happens (error, cancel, target
 * exit) the session detaches everything it attached when it is stopped
 * or freed.
 *
 * Use from an event loop: ditto_profile_fd() is readable when
 * ditto_profile_step() has work (progress or the end of the window); step
 * never blocks longer than its timeout. Or call ditto_profile_run() to
 * block until the window ends. ditto_profile_cancel() may be called from
 * any thread or a signal handler.
 *
 * A session is not thread-safe apart from ditto_profile_cancel().
 */
#ifndef DITTO_PROFILE_H
#define DITTO_PROFILE_H

#include <ditto/ditto.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ditto_profile;
struct ditto_model;
struct ditto_cpu;

/* Progress, called from ditto_profile_step()/run() about once a second. */
typedef void (*ditto_progress_fn)(double elapsed_s, double duration_s, uint64_t syscalls,
				  uint64_t requests, void *user);

struct ditto_profile_opts {
	size_t sz;
	/* Length of the window in seconds (0: until cancelled or stopped). */
	double duration_s;
	/* Service name in the model (default: the target's comm). */
	const char *service_name;
	/* Requests served during the window, when the caller knows it
	 * better than the inference (0: infer from socket traffic). */
	uint64_t requests;
	/* Stack sampling frequency in Hz (0: 99; -1 disables sampling). */
	int sample_hz;
	/* Progress callback and its argument. */
	ditto_progress_fn progress;
	void *user;
	/* CPU windows per request-serving thread class after the system
	 * window (0: 8; -1: none), instructions per window (0: 20000) and
	 * seconds between windows (0: 0.25). */
	int cpu_windows;
	uint64_t cpu_window_insts;
	double cpu_spacing_s;
	/* Since 0.5. How CPU windows run system calls (enum ditto_step_mode). */
	int cpu_step_mode;
	/* Since 0.5. A command started by ditto_profile_launch() is stopped
	 * when the session ends unless keep_launched is true; launch_grace_s
	 * is the time between SIGTERM and SIGKILL (0: 5 s). */
	bool keep_launched;
	double launch_grace_s;
	/* Since 0.5. Attribute the calls the services make to the requests
	 * they serve and fill the model's graph (always on when several
	 * services are profiled; costs two ring-buffer events per request
	 * and two per call). */
	bool graph;
	size_t :0;
};

/*
 * New session. Checks the environment and loads the BPF programs, but
 * attaches nothing yet. Errors: -EPERM naming the missing capability,
 * -EOPNOTSUPP when the kernel lacks BTF or what the collector needs,
 * -DITTO_EOPTS; ditto_last_error() says what to do. The environment
 * variable DITTO_BTF_PATH names the kernel BTF to load against instead of
 * /sys/kernel/btf/vmlinux. libbpf's messages go to the log callback
 * (ditto_set_log()) at DITTO_LOG_DEBUG; the cause of a failure is in
 * ditto_last_error().
 */
DITTO_API int ditto_profile_new(const struct ditto_profile_opts *opts, struct ditto_profile **out);
/* Stop (if running) and release everything. NULL is fine. */
DITTO_API void ditto_profile_free(struct ditto_profile *p);

/*
 * Start profiling a running process and its descendants. -ESRCH if the pid
 * does not exist, -EINVAL if it is a kernel thread, -EBUSY if another
 * libditto profiler of the same
 * effective user traces it. The lock behind -EBUSY (also taken by
 * ditto_profile_launch()) is a flock()ed file in a directory only this
 * euid may use (/run/libditto for root; $XDG_RUNTIME_DIR/libditto or
 * /tmp/libditto-<uid> otherwise), created 0700 and refused (-EPERM, with a
 * message) unless it is a real directory of this euid closed to others;
 * a symbolic link in its place or as the lock file is not followed
 * (-ELOOP). No other user can take, plant or block it. The file is removed
 * by ditto_profile_free() (or when attaching fails); one left by a killed
 * profiler holds no lock and the next session of this euid removes it.
 */
DITTO_API int ditto_profile_attach(struct ditto_profile *p, pid_t pid);
/*
 * Since 0.5. Profile several services in one window with one collector:
 * pids[i] is the root of service i's process tree (a master/worker server
 * is one service: give its master). The model gets one services[] entry
 * per service and the graph between them (see opts.graph): a call to a
 * port one of them listens on (on this host) is an edge to it; a call
 * elsewhere an edge to an external node named after the framing of its
 * first request and its port ("redis-6379"). Services are named by their
 * ports (ditto_profile_name_port()), else by executable, with the first
 * port appended when two share one ("node-3000"). A target that exits
 * mid-window leaves the others profiled (and is named in a warning).
 * Errors as ditto_profile_attach(), and -EINVAL for 0 or more than 16
 * pids, a pid given twice, or one that descends from another.
 */
DITTO_API int ditto_profile_attach_many(struct ditto_profile *p, const pid_t *pids, size_t n);
/*
 * Since 0.5. The services to profile when no pid is known: the processes
 * of a cgroup (the directory holding its cgroup.procs, v2 or v1, or a
 * path under /sys/fs/cgroup), else
 * every process listening on one of ports[0..nports) (nports 0: on any TCP
 * port). Processes whose parent is among them are part of its service:
 * pids gets one root per service (at most max). -ESRCH when none is
 * found, -E2BIG beyond max. Kernel threads and the caller are left out.
 */
struct ditto_discover_opts {
	size_t sz;
	const char *cgroup;
	const uint16_t *ports;
	size_t nports;
	size_t :0;
};
DITTO_API int ditto_profile_discover(const struct ditto_discover_opts *opts, pid_t *pids,
				     size_t max, size_t *n);
/* Since 0.5. Name the service listening on port (before attaching). */
DITTO_API int ditto_profile_name_port(struct ditto_profile *p, uint16_t port, const char *name);
/*
 * Start argv[0] (searched in PATH) with argv and profile it from its first
 * instruction. When the session ends (ditto_profile_finish(), after the
 * model is built, or ditto_profile_free()) the command and its descendants
 * get SIGTERM, and SIGKILL if they still run launch_grace_s later; the
 * command is reaped. With opts.keep_launched it is left running instead
 * (and not reaped: the caller waits for it).
 */
DITTO_API int ditto_profile_launch(struct ditto_profile *p, char *const argv[]);

/* Readable file descriptor for event loops (owned by the session). */
DITTO_API int ditto_profile_fd(const struct ditto_profile *p);
/*
 * Do pending work, waiting at most timeout_ms (0: do not wait, -1: until
 * something happens). Returns 1 while the window or the CPU windows after
 * it run, 0 once they have ended (duration reached, cancelled, or every
 * traced process exited), or a negative error. During CPU windows a step
 * waits for the stepping process at most timeout_ms. A first cancel ends
 * the system window. CPU windows follow it only in a session without a
 * duration (whose window a cancel is the normal end of) and when no second
 * cancel came with the first; a second cancel ends them.
 */
DITTO_API int ditto_profile_step(struct ditto_profile *p, int timeout_ms);
/* Step until the window ends. */
DITTO_API int ditto_profile_run(struct ditto_profile *p);
/* End the window early (see ditto_profile_step()); safe from other
 * threads and signal handlers. Call it twice to end everything now. */
DITTO_API void ditto_profile_cancel(struct ditto_profile *p);
/*
 * Detach everything and build the model of what was collected (also after
 * the target exited mid-window: partial results are kept, and
 * ditto_last_error() says so). The model is the caller's. A window that
 * saw no traffic still gives its model, with a warning: ditto_profile_gaps()
 * tells the caller.
 */
DITTO_API int ditto_profile_finish(struct ditto_profile *p, struct ditto_model **out);

/*
 * Since 0.5. What a profile could not learn for want of traffic, as bits
 * of enum ditto_profile_gap: 0 once ditto_profile_finish() built a model
 * from a window that saw requests and inferred the network model. A
 * window with no request counted on the service's sockets (an idle
 * service: nobody loaded it while it was profiled) leaves
 * services[0].network.io_model and services[0].framing unknown, and a
 * clone of that model answers every read as a raw request. The model is
 * still returned (nothing is lost), ditto_profile_finish() still returns
 * 0, and the log callback gets one warning naming what is missing and
 * why; a caller that must not take such a model for the service's checks
 * this (`ditto profile` and `ditto clone` exit with status 4 unless
 * --allow-idle). opts.requests does not count as traffic seen.
 */
enum ditto_profile_gap {
	DITTO_GAP_NO_REQUESTS = 1u << 0,	/* no request counted in the window */
	DITTO_GAP_IO_MODEL = 1u << 1,		/* network.io_model stays unknown */
	DITTO_GAP_FRAMING = 1u << 2,		/* framing stays unknown */
};

/* The gaps of the model the last ditto_profile_finish() returned (0
 * before it, and for a NULL session). */
DITTO_API unsigned ditto_profile_gaps(const struct ditto_profile *p);

/*
 * How a CPU window gets past a system call or a rep-prefixed string
 * instruction without single-stepping it (a system call single-stepped
 * would leave a SIGTRAP queued at its exit, deadly after a detach).
 *
 * DITTO_STEP_BREAKPOINT: a hardware breakpoint (debug register) on the next
 *   instruction, then PTRACE_CONT: one trap per call or per rep string.
 * DITTO_STEP_SYSCALL_STOPS: PTRACE_SYSCALL from the call instruction to its
 *   entry and exit stops, no trap flag; rep strings are stepped iteration
 *   by iteration (counted once). Needs no debug register: some virtual
 *   machines accept debug-register writes but never fire them.
 * DITTO_STEP_AUTO: breakpoints where a check shows they fire on this host
 *   (a throwaway child process, once per process), else syscall stops. The
 *   environment variable DITTO_STEP_MODE ("auto", "breakpoint",
 *   "syscall_stops") overrides AUTO.
 *
 * Either way a call that blocks longer than the window timeout is
 * interrupted with no trap left pending and restarts once released. Each
 * cpu entry counts its windows per mechanism (ditto_cpu_stepping()).
 */
enum ditto_step_mode {
	DITTO_STEP_AUTO = 0,
	DITTO_STEP_BREAKPOINT = 1,
	DITTO_STEP_SYSCALL_STOPS = 2,
};

/* "auto", "breakpoint", "syscall_stops" ("unknown" out of range). */
DITTO_API const char *ditto_step_mode_name(enum ditto_step_mode m);
/* Parse one of those names; -EINVAL otherwise. */
DITTO_API int ditto_step_mode_parse(const char *name, enum ditto_step_mode *out);
/*
 * The mechanism AUTO stands for here: DITTO_STEP_MODE if set (an invalid
 * value is an error), else DITTO_STEP_BREAKPOINT when a hardware
 * breakpoint set on a throwaway child fires, else
 * DITTO_STEP_SYSCALL_STOPS. The check runs once per process (about a
 * millisecond) and its result is kept. Returns the mode or a negative
 * error. Thread-safe.
 */
DITTO_API int ditto_step_mode_detect(void);
/* Whether hardware breakpoints fire on this host (the check above,
 * regardless of DITTO_STEP_MODE): 1 yes, 0 no, or a negative error. */
DITTO_API int ditto_step_breakpoints_work(void);

/*
 * CPU windows on their own.
 *
 * Each window seizes one thread with ptrace (PTRACE_SEIZE: the rest of the
 * process keeps running), single-steps it for window_insts instructions
 * and detaches. Every executed instruction is decoded by Capstone (code is
 * read from the target's memory, so a target in another mount namespace
 * or container needs no path) and feeds: the instruction mix, per static
 * conditional branch the taken and transition rates, data and instruction
 * reuse distances at 64-byte lines (an LRU stack distance computed in one
 * pass), register RAW/WAR/WAW and store-to-load distances, loads, stores
 * and pointer-chasing loads, and the instructions between request reads
 * (a read, readv, recvfrom or recvmsg returning data from a socket).
 * Distances do not span windows; first touches in a window count as cold.
 *
 * Stepping costs a trap per instruction (about 36,000 instructions a
 * second here): a window of 20000 instructions holds its thread about
 * 0.6 s. System calls are never single-stepped (see enum ditto_step_mode
 * for how they are run, and rep-prefixed strings). A window also ends when a system call
 * blocks for window_timeout_s, so an idle thread is released; the call
 * restarts transparently. The tracer moves to the CPU the thread last ran
 * on; the thread's own CPU affinity is never changed.
 *
 * What is guaranteed when something dies: the tracer is a child process in
 * a process group of its own. If the caller dies (any signal, SIGKILL
 * included) or its process group is signalled (Ctrl-C, Ctrl-\, a job or
 * group kill), the tracer ends the current window within one step and
 * releases the thread untraced, with no trap flag or breakpoint left and
 * its affinity untouched. With syscall stops no debug register is ever
 * armed, and a thread released by the kernel inside a system call (the
 * tracer killed there) carries no trap. Not survivable: SIGKILL to the
 * tracer process itself (or to every process of its cgroup) while it
 * single-steps a thread: the kernel releases the thread with its trap flag
 * set and it dies of SIGTRAP; no user-space design can clean up after a
 * tracer that runs no more code. That death is reported: the call returns
 * -ECHILD (ditto_profile_finish() and ditto_profile_cpu() alike).
 */
struct ditto_cpu_opts {
	size_t sz;
	/* Windows to take (0: 8), round-robin over the threads. */
	unsigned windows;
	/* Instructions per window (0: 20000). */
	uint64_t window_insts;
	/* Seconds between windows (0: 0.25; negative: none). */
	double spacing_s;
	/* Longest a system call may block inside a window before the window
	 * ends, in seconds (0: 1). A thread found blocked for two whole
	 * windows in a row is idle: its remaining windows are skipped, with a
	 * warning. */
	double window_timeout_s;
	/* Set *stop non-zero from any thread or a signal handler to end the
	 * current window early and take no more (NULL: not used). */
	const volatile int *stop;
	/* enum ditto_step_mode (0: AUTO). Forcing DITTO_STEP_BREAKPOINT on a
	 * host where breakpoints do not fire is -EOPNOTSUPP. */
	int step_mode;
	size_t :0;
};

/*
 * Step threads tids[0..ntids) of process pid (all its threads when ntids
 * is 0) and add what was observed to `out`, a cpu entry of a model (see
 * ditto_service_add_cpu()). Threads that exit mid-window are dropped and
 * what they ran is kept; the target is never left stopped or traced.
 * Errors: -ESRCH no such process, -EINVAL a kernel thread, -EPERM with
 * what permission is missing (CAP_SYS_PTRACE, kernel.yama.ptrace_scope),
 * -EBUSY a thread traced by another process (named), -ECHILD the stepping
 * process was killed (see above), -EOPNOTSUPP breakpoints forced where they
 * do not fire, -DITTO_EOPTS.
 */
DITTO_API int ditto_profile_cpu(pid_t pid, const pid_t *tids, size_t ntids,
				const struct ditto_cpu_opts *opts, struct ditto_cpu *out);

/*
 * Since 0.5. The RPC graph from distributed-tracing exports.
 *
 * Reads OTLP JSON (resourceSpans, one document or JSON Lines as the
 * OpenTelemetry collector's file exporter writes), Jaeger JSON (the query
 * API's /api/traces answer) and Zipkin v2 JSON span lists, and adds to
 * the model's graph: the services as nodes, databases and uninstrumented
 * peers as graph.externals, one edge (source "traces") per caller and
 * callee with calls, parent requests, fan-out, sizes, latency, mode and
 * order, and graph.traces (files, spans, traces, orphans, rejected spans,
 * the declared sampling ratio). README "Graph from traces" gives the
 * rules.
 *
 * The format is detected by content unless given; a file whose content
 * contradicts a format given explicitly is an error naming what it looks
 * like. Every file is read under limits (size, nesting depth 64, values,
 * spans): a hostile file is an error naming the file and the place
 * ("t.json:1: resourceSpans[0].scopeSpans[0].spans[3].spanId: not a hex
 * span id"), never unbounded memory.
 */
enum ditto_trace_format {
	DITTO_TRACES_AUTO = 0,		/* "auto": by content */
	DITTO_TRACES_OTLP_JSON,		/* "otlp-json" */
	DITTO_TRACES_JAEGER_JSON,	/* "jaeger-json" */
	DITTO_TRACES_ZIPKIN_JSON,	/* "zipkin-json" */
};

/* The names above ("unknown" out of range), and their parse (-EINVAL). */
DITTO_API const char *ditto_trace_format_name(enum ditto_trace_format f);
DITTO_API int ditto_trace_format_parse(const char *name, enum ditto_trace_format *out);

struct ditto_trace_opts {
	size_t sz;
	/* enum ditto_trace_format (0: auto). */
	int format;
	/* Leave call counts as sampled even when the exports declare a
	 * sampling ratio (graph.traces.corrected says which). Head sampling
	 * keeps or drops whole traces: per-request rates and distributions
	 * are unaffected either way; only calls and parent_requests totals
	 * are scaled by 1/ratio when corrected. */
	bool uncorrected;
	/* Spans kept over all files at most (0: 4 Mi); past it: -DITTO_ELIMIT. */
	size_t max_spans;
	/* Bytes of one file at most (0: 256 MiB; at most INT_MAX). */
	size_t max_file_bytes;
	size_t :0;
};

/*
 * Import paths[0..n) into m's graph (m may hold services and kernel
 * edges already; edges from traces may be added once per model: a second
 * import is -EEXIST). Nothing is added unless every file reads. Errors:
 * -DITTO_ECORRUPT (not a trace export, wrong types, bad ids),
 * -DITTO_ELIMIT, -ENOENT and other errno codes of reading, -EEXIST,
 * -DITTO_EOPTS; ditto_last_error() names the file and the place.
 */
DITTO_API int ditto_profile_import_traces(struct ditto_model *m, const char *const *paths,
					  size_t n, const struct ditto_trace_opts *opts);

/*
 * OTLP/HTTP receiver (since 0.5): an instrumented application exports its
 * spans to libditto during a profile the way it exports them to an
 * OpenTelemetry collector (OTEL_EXPORTER_OTLP_ENDPOINT=http://HOST:PORT).
 * One thread serves POST /v1/traces, bodies in protobuf
 * (application/x-protobuf) or JSON (application/json), optionally
 * Content-Encoding: gzip, framed by a Content-Length or chunked (Node's
 * exporter sends chunked bodies).
 * Answers: 200 with an empty ExportTraceServiceResponse; 400 a body that
 * does not decode or a malformed request; 404 another path; 405 another
 * method; 411 neither Content-Length nor chunked; 413 a body over max_body
 * (before reading it, as its chunks come, or while inflating it); 415 another content type or encoding; 503
 * when the bodies buffered across connections would pass max_buffered.
 * An error answer closes its connection; a 200 keeps it open (keep-alive).
 * A client that sends a request head over 16 KiB is answered 431, one that
 * takes longer than timeout_s over a request, or stays idle that long
 * between requests, is disconnected: one slow or hostile client never
 * stops the others. What the spans say becomes graph edges (source
 * "traces") at ditto_otlp_receiver_finish().
 *
 * The functions may be called from any thread; one receiver is not
 * finished or freed while another thread still uses it.
 */
struct ditto_otlp_receiver;

struct ditto_otlp_opts {
	size_t sz;
	/* Largest request body, compressed or inflated (0: 4 MiB; a
	 * collector's default). */
	size_t max_body;
	/* Bytes of request bodies held at once over all connections
	 * (0: 4 * max_body). */
	size_t max_buffered;
	/* Connections served at once; more are accepted and closed at once
	 * (0: 64). */
	unsigned max_connections;
	/* Seconds a request may take from its first byte to its last, and
	 * a connection may stay idle (0: 10). */
	double timeout_s;
	/* Spans kept; more are counted as rejected (0: 4 Mi). */
	size_t max_spans;
	/* Listen on an address that is not loopback. Off by default: the
	 * receiver has no authentication and anyone who reaches the port
	 * can put spans, that is graph edges, into the model. */
	bool allow_remote;
	size_t :0;
};

/* What a receiver did so far (ditto_otlp_receiver_stats()). */
struct ditto_otlp_stats {
	size_t sz;
	uint64_t connections;	/* accepted */
	uint64_t requests;	/* answered, whatever the answer */
	uint64_t accepted;	/* answered 200 */
	uint64_t spans;		/* spans added */
	uint64_t spans_rejected; /* spans refused: bad ids or kind, max_spans reached */
	uint64_t bad_request;	/* answered 400 */
	uint64_t not_found;	/* 404 */
	uint64_t bad_method;	/* 405 */
	uint64_t length_required; /* 411 */
	uint64_t too_large;	/* 413 */
	uint64_t bad_media_type; /* 415 */
	uint64_t head_too_large; /* 431 */
	uint64_t busy;		/* 503 (max_buffered) and connections over max_connections */
	uint64_t timeouts;	/* connections cut for slowness or idleness */
	size_t :0;
};

/*
 * Listen on "HOST:PORT" (NULL or "": 127.0.0.1:4318; "[::1]:PORT" for
 * IPv6; port 0: a free port, see ditto_otlp_receiver_port()) and start
 * serving. Errors: -EADDRINUSE (the message names the address),
 * -EACCES a port below 1024 without the privilege, -EPERM a non-loopback
 * host without allow_remote, -EINVAL an address that does not parse or
 * resolve, -DITTO_EOPTS.
 */
DITTO_API int ditto_otlp_receiver_start(const char *listen, const struct ditto_otlp_opts *opts,
					struct ditto_otlp_receiver **out);
/* The port it listens on (the one chosen when asked for port 0). */
DITTO_API uint16_t ditto_otlp_receiver_port(const struct ditto_otlp_receiver *r);
/* Counts so far into *out (its sz set by DITTO_OPTS): 0 or -DITTO_EOPTS. */
DITTO_API int ditto_otlp_receiver_stats(const struct ditto_otlp_receiver *r,
					struct ditto_otlp_stats *out);
/* Stop serving: connections are closed, requests in flight get no answer,
 * the spans received so far are kept for ditto_otlp_receiver_finish().
 * For a caller whose window ends before its model exists. Idempotent. */
DITTO_API void ditto_otlp_receiver_stop(struct ditto_otlp_receiver *r);
/*
 * Stop serving (if still serving) and add the spans received to m's graph: services as nodes,
 * edges of source "traces" (see the graph section of model.h). Call
 * counts are scaled by the sampling ratio the export declared unless
 * uncorrected. The receiver keeps its stats; finishing twice is -EALREADY.
 */
DITTO_API int ditto_otlp_receiver_finish(struct ditto_otlp_receiver *r, struct ditto_model *m,
					 bool uncorrected);
/* Stops it if still running and frees it; NULL is a no-op. */
DITTO_API void ditto_otlp_receiver_free(struct ditto_otlp_receiver *r);

#ifdef __cplusplus
}
#endif

#endif /* DITTO_PROFILE_H */
