/* SPDX-License-Identifier: MIT */
/*
 * Synth stage: turn a model into a self-contained clone source tree, and
 * build it.
 *
 * The tree holds the clone runtime (network skeletons, wire framings,
 * syscall replay, background threads; copied from libditto, so the clone
 * needs no libditto), a generated clone_config.c (the model's statistics
 * as tables), a generated body.S (the request body: a standalone x86-64
 * System V function drawn from the cpu section) and a Makefile. It holds
 * nothing of the original but statistics: no code, payload or addresses.
 *
 *     DITTO_OPTS(ditto_synth_opts, so, .seed = 7);
 *     err = ditto_synth_write(model, "clone-dir", &so);
 *     err = err ? err : ditto_synth_build("clone-dir", NULL);
 *     // clone-dir/clone [--port P] [--max-seconds S] [--max-requests N]
 *
 * Functions here are thread-safe on distinct models; the model is only
 * read (ditto_synth_write() takes it const and adds nothing to it, not
 * even the sections it lacks).
 */
#ifndef DITTO_SYNTH_H
#define DITTO_SYNTH_H

#include <ditto/ditto.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ditto_model;

struct ditto_synth_opts {
	size_t sz;
	/* Service of the model to clone (NULL: the first). */
	const char *service;
	/* Generator seed (0: 1). The same model, seed and libditto version
	 * give the same tree, byte for byte. */
	uint64_t seed;
	/* The clone's default listen port (0: the model's first port, or
	 * 8080 when it has none); the clone's --port overrides it. */
	unsigned port;
	/* Replace dir when it exists. Only an empty directory or a tree
	 * libditto wrote is ever replaced. */
	bool force;
	/* Lift the limits that protect the host (see ditto_synth_write()),
	 * up to what the clone runtime can represent. */
	bool no_clamp;
	/* Generator knobs to use instead of the model's tuning.knobs (names
	 * and ranges as there: see `ditto model show`); a knob it lacks takes
	 * its default. NULL: the model's. The tuner passes its candidates
	 * here, so the model it tunes is only read. */
	const struct ditto_values *knobs;
	size_t :0;
};

/*
 * Write the clone tree of one service of m into dir. The model is
 * validated first and refused (-DITTO_EINVALID, the validation message in
 * ditto_last_error()) when invalid; sections it lacks (framing, threads,
 * syscalls, requests, cpu) get defaults, each named in a warning through
 * the log callback. The tree appears whole or not at all: it is written
 * next to dir and renamed into place.
 *
 * A model is untrusted input: what it may ask of its clone is limited,
 * and each figure brought within its limit is named once in a warning
 * (model figure, limit). Limits that protect the host, and what no_clamp
 * lifts them to (what the runtime can represent):
 *   processes                                64         (4096)
 *   serving threads per process              256        (4096)
 *   background thread classes                64         (4096)
 *   threads in one background class          256        (4096)
 *   background threads per process           1024       (16384)
 *   threads in all processes                 4096       (65536)
 *   body instructions per request            10^9       (2^64)
 *     (a draw's; synth.body_spread may run one request up to 100 times it)
 *   calls per request of one system call     1000       (10^12)
 *   bytes in one data region of the body     64 MiB     (240 MiB; 8 regions)
 *   bytes of body data regions, all processes 1 GiB     (64 GiB)
 *   bytes of scratch file                    1 GiB      (64 GiB)
 * The runtime's own caps, which nothing lifts: 16 MiB per response, 16 MiB
 * moved by one file call, 250 ms per replayed sleep, 1 GiB per replayed
 * mmap, 1024 writes per response. Threads are cut serving threads first,
 * then background classes in the model's order; a background class cut to
 * fewer threads keeps its wake-ups and CPU time (each thread wakes more
 * often).
 * Whatever the model, a clone stops within a second of SIGTERM, SIGINT
 * or its --max-seconds: the body runs in slices and the replay checks
 * the stop between calls.
 *
 * Errors: -EEXIST dir exists and force is off; -ENOTEMPTY dir is not a
 * clone tree; -DITTO_ENOTFOUND no such service (or no service at all);
 * -DITTO_EOPTS; -errno of the file system.
 */
DITTO_API int ditto_synth_write(const struct ditto_model *m, const char *dir,
				const struct ditto_synth_opts *opts);

/*
 * The generator's knobs, i from 0 to ditto_synth_knob_count() - 1: name
 * (as in a model's tuning.knobs and ditto_synth_opts.knobs), default and
 * range (values outside it are clamped). Any out pointer may be NULL.
 * -DITTO_ENOTFOUND when i is past the last.
 */
DITTO_API size_t ditto_synth_knob_count(void);
DITTO_API int ditto_synth_knob(size_t i, const char **name, double *dflt, double *min,
			       double *max);

struct ditto_build_opts {
	size_t sz;
	/* C compiler (NULL: make's default, cc). */
	const char *cc;
	/* Build dir/clone-static instead, linked with -static: the binary
	 * an empty (FROM scratch) container image holds. */
	bool static_link;
	/* Where the runtime's compiled objects are kept between builds, so
	 * that a build compiles only what the model makes (since 0.5). NULL:
	 * $DITTO_BUILD_CACHE, else $XDG_CACHE_HOME/ditto/objects, else
	 * ~/.cache/ditto/objects; "" or "off": no cache. Used only when it is
	 * the caller's own directory that nobody else may write to. */
	const char *cache_dir;
	size_t :0;
};

/*
 * Build the clone tree in dir with make, giving dir/clone (or
 * dir/clone-static). The compiler's output goes to dir/build.log; on
 * failure the error message ends with its last lines. With a cache
 * (opts->cache_dir) the runtime's objects found there are copied in
 * first and those built are stored after; should the build fail with
 * cached objects in it, they are dropped and make runs once more without
 * them. After a build, build.log's last line says what the cache did.
 * Errors: -ENOENT dir or make missing; -DITTO_EBUILD the build failed;
 * -DITTO_EOPTS.
 */
DITTO_API int ditto_synth_build(const char *dir, const struct ditto_build_opts *opts);

/*
 * --- graphs: one clone per node, and running them (since 0.5) ---
 *
 * A model of several services, or with graph edges, is cloned as a graph
 * tree: DIR/<node>/ per node (a clone tree as ditto_synth_write() writes
 * it, built by its Makefile into DIR/<node>/clone) and DIR/graph.json:
 *
 *   {"schema":1, "front":"<node>", "start_order":[leaves first, front last],
 *    "nodes":[{"name", "kind":"clone"|"kept", "dir" (clone), "port",
 *              "framing", "address":"host:port" (kept), "env":
 *              "DITTO_UPSTREAM_<NAME>", "processes", "threads",
 *              "cpu_millicores", "upstreams":[child nodes]}],
 *    "edges":[{"from", "to", "calls_per_request", "mode":"sync"|"async",
 *              "order":"sequential"|"parallel", "framing" (the child's)}]}
 *
 * Nodes are the model's services, then its graph.externals. An external
 * is cloned as a leaf service built from what its callers saw (its
 * framing, raw when unknown, with a warning; one request per call; the
 * calls' request and response sizes; their latency as its service time)
 * unless kept: then the manifest holds the real service's address. A
 * graph node that is neither is left out with its edges (a warning). The
 * edges are the kernel's when the model has any, else the traces'; an
 * undecided mode reads sync, an undecided order sequential.
 * The front is the clone node no edge points to (the first in the model
 * when several, with a warning); start_order is depth first from the
 * front, then from the nodes it does not reach, children before parents,
 * and the front last; a cycle (clients that call back) is broken where
 * the walk meets it, with a warning: clones connect to their children
 * lazily, so the order is only a convenience. Each clone node
 * listens on its service's first port (an external's on its port); a
 * node whose port another node took, or that has none, gets a free port
 * from the kernel, with a warning. ENVNAME is the node's name upper-cased
 * with every character outside [A-Z0-9] as '_'.
 */
struct ditto_synth_graph_opts {
	size_t sz;
	/* As in ditto_synth_opts, for every node. */
	uint64_t seed;
	bool force;
	bool no_clamp;
	const struct ditto_values *knobs;
	/* keep_count strings NAME=HOST:PORT: node NAME is not cloned, its
	 * callers are given HOST:PORT (a real service). */
	const char *const *keep;
	size_t keep_count;
	size_t :0;
};

/*
 * Write the graph tree of m into dir, whole or not at all (written next
 * to dir, renamed into place; force replaces only an empty directory or a
 * tree libditto wrote). Node names must be [A-Za-z0-9._-] (at most 127,
 * not "." or ".."): another is refused with -EINVAL naming it. Errors as
 * ditto_synth_write(), a node's prefixed with its name; -DITTO_ENOTFOUND a
 * keep names no node; -EINVAL a keep is not NAME=HOST:PORT;
 * -DITTO_ELIMIT more than 64 nodes.
 */
DITTO_API int ditto_synth_graph_write(const struct ditto_model *m, const char *dir,
				      const struct ditto_synth_graph_opts *opts);

/*
 * Build every clone of the graph tree in dir (ditto_synth_build() in
 * DIR/<node>), in the manifest's order; the first failure stops it, its
 * message names the node (its build.log stays).
 */
DITTO_API int ditto_synth_graph_build(const char *dir, const struct ditto_build_opts *opts);

struct ditto_synth_up_opts {
	size_t sz;
	/* Clone node i of the manifest (clones counted in nodes[] order)
	 * listens on port_base + i (0: the manifest's ports). */
	unsigned port_base;
	/* Each tier is started with --max-seconds max_seconds + 5, a
	 * backstop should the caller never stop it (0: none). The caller's
	 * ditto_synth_up_wait() is what stops the graph on time. */
	double max_seconds;
	/* How long a tier may take to say "ready" and accept a connection
	 * (0: 10 s), and to stop after SIGTERM before SIGKILL (0: 3 s). */
	double ready_timeout_s;
	double grace_s;
	size_t :0;
};

struct ditto_synth_run;

/*
 * Start the clone tiers of the graph tree in dir on 127.0.0.1, in the
 * manifest's start_order, each as DIR/<node>/clone --port P run in
 * DIR/<node>, its stdout and stderr into DIR/logs/<node>.log (truncated),
 * with DITTO_UPSTREAM_<ENVNAME>=HOST:PORT for each of its upstreams (a
 * clone child's 127.0.0.1 and chosen port, a kept node's address;
 * inherited DITTO_UPSTREAM_* variables are dropped). A tier's port that
 * some socket on 127.0.0.1 already holds is replaced by a free one, with
 * a warning, and wired into its callers. Each tier must print "ready" and
 * accept a TCP connection within ready_timeout_s before the next starts.
 * The tiers share one process group, and die with SIGTERM when the
 * calling thread exits (PR_SET_PDEATHSIG: call this from a thread that
 * outlives the run), so nothing outlives its runner, even SIGKILLed.
 * DIR/up.json (pids, ports, start times) lets ditto_synth_down() stop
 * them from another process.
 * On any failure every tier started is stopped before the error returns:
 * -ECHILD a tier exited (its status and log tail in the message),
 * -ETIMEDOUT a tier was not ready in time, -EBUSY the graph in dir is
 * already up (up.json names a live runner), -DITTO_ECORRUPT a bad
 * manifest, -errno. *out is the run (ditto_synth_up_free() it).
 * A run is used by one thread at a time.
 */
DITTO_API int ditto_synth_up(const char *dir, const struct ditto_synth_up_opts *opts,
			     struct ditto_synth_run **out);
/* The front tier's address, "127.0.0.1:PORT" (valid until freed). */
DITTO_API const char *ditto_synth_up_front(const struct ditto_synth_run *r);
/* Tier i (start order) of the run: name, pid (0 once stopped), port. Any
 * out pointer may be NULL; -DITTO_ENOTFOUND past the last. */
DITTO_API size_t ditto_synth_up_tier_count(const struct ditto_synth_run *r);
DITTO_API int ditto_synth_up_tier(const struct ditto_synth_run *r, size_t i, const char **name,
				  int *pid, unsigned *port);
/*
 * Watch the run for up to seconds (< 0: until something happens): 0 when
 * every tier still runs; -ECHILD a tier exited (message: which, its exit
 * status, its log's tail) and the others were stopped; -ECANCELED
 * ditto_synth_down() stopped the graph from elsewhere (the rest are
 * stopped); -ESRCH the run was already stopped.
 */
DITTO_API int ditto_synth_up_wait(struct ditto_synth_run *r, double seconds);
/* Stop every tier (front first: SIGTERM, SIGKILL after grace_s) and
 * remove up.json. 0, or -ESRCH when already stopped. */
DITTO_API int ditto_synth_up_stop(struct ditto_synth_run *r);
/* Stop (if running) and free; NULL is a no-op. */
DITTO_API void ditto_synth_up_free(struct ditto_synth_run *r);
/*
 * Stop the graph that ditto_synth_up() started on dir, from any process:
 * reads DIR/up.json (claiming it, so its runner's wait sees -ECANCELED),
 * signals each tier that is still the process it started (same start time
 * and executable), waits grace_s of opts (NULL: 3 s) and SIGKILLs what is
 * left. -ENOENT nothing is up in dir.
 */
DITTO_API int ditto_synth_down(const char *dir, const struct ditto_synth_up_opts *opts);

/* Engines ditto_synth_deploy() writes files for. */
enum ditto_deploy_target {
	DITTO_DEPLOY_COMPOSE = 1u << 0,		/* Dockerfiles + compose.yaml */
	DITTO_DEPLOY_KUBERNETES = 1u << 1,	/* Deployment, Service, ConfigMap */
};

struct ditto_deploy_opts {
	size_t sz;
	/* DITTO_DEPLOY_* bits (0: all). */
	unsigned targets;
	/* Kubernetes namespace of the objects and of the service DNS names
	 * (NULL: "default"); a DNS-1123 label. */
	const char *k8s_namespace;
	/* Image names are <prefix><node label>:latest (NULL: "ditto-");
	 * [a-z0-9._/:-] only. */
	const char *image_prefix;
	/* Build each clone node's static binary first (make clone-static). */
	bool build;
	size_t :0;
};

/*
 * Write the deployment files of the graph tree in dir (the folder of
 * graph.json, as `ditto synth` writes it for a multi-service model) into
 * dir/deploy/, replacing a folder libditto wrote there before, never
 * another one (-ENOTEMPTY):
 *   docker/<node>.Dockerfile   per clone node, for either target: FROM
 *                              scratch, the clone's static binary (build
 *                              context: dir)
 *   compose.yaml               one service per clone node, host network,
 *                              each on 127.0.0.1 at its graph.json port,
 *                              children's addresses in DITTO_UPSTREAM_*,
 *                              depends_on its children; kept nodes are
 *                              addresses only
 *   kubernetes/NNN-<label>.yaml per clone node, in start order: a
 *                              ConfigMap of its children's addresses
 *                              (<label>.<namespace>.svc.cluster.local:<port>),
 *                              a Deployment (1 replica: the clone forks the
 *                              model's processes itself; CPU request from
 *                              cpu_millicores) and a Service
 * graph.json is untrusted: read under limits (4 MiB, 256 nodes, 64
 * children per node), its names checked ([A-Za-z0-9._-], and distinct
 * once mapped to DNS labels and variable names), its start order checked
 * to start children first (a cycle is refused), and every string written
 * as an escaped, quoted YAML scalar.
 * Errors: -ENOENT no graph.json; -DITTO_ECORRUPT, -DITTO_EINVALID,
 * -DITTO_ELIMIT, -DITTO_ESCHEMA for graph.json (the message names the
 * member); -EINVAL a bad namespace or image prefix; -DITTO_EBUILD (build);
 * -DITTO_EOPTS; -errno of the file system. Thread-safe on distinct dirs.
 */
DITTO_API int ditto_synth_deploy(const char *dir, const struct ditto_deploy_opts *opts);

/*
 * A comma-separated list of targets ("compose,kubernetes"; "k8s" is
 * kubernetes) into DITTO_DEPLOY_* bits. -EINVAL for an unknown or empty
 * one.
 */
DITTO_API int ditto_deploy_targets_parse(const char *list, unsigned *targets);

#ifdef __cplusplus
}
#endif

#endif /* DITTO_SYNTH_H */
