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
	size_t :0;
};

/*
 * Build the clone tree in dir with make, giving dir/clone (or
 * dir/clone-static). The compiler's output goes to dir/build.log; on
 * failure the error message ends with its last lines. Errors: -ENOENT dir
 * or make missing; -DITTO_EBUILD the build failed; -DITTO_EOPTS.
 */
DITTO_API int ditto_synth_build(const char *dir, const struct ditto_build_opts *opts);

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
