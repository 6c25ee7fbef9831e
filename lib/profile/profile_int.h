/* SPDX-License-Identifier: MIT */
/* Internal interface of the profile stage. */
#ifndef DITTO_PROFILE_INT_H
#define DITTO_PROFILE_INT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <ditto/ditto.h>
#include <ditto/profile.h>

#include "core_int.h"
#include "bpf/collector.h"

/* ---- collector.c: the BPF programs and their maps ---- */
struct collector;
int collector_open(struct collector **out);
/* Whether the ordered events of the graph (edges.c) are emitted (before
 * attaching). */
void collector_graph_events(struct collector *c, bool on);
/* Trace process tgid as a process of service svc (< MAX_SERVICES). */
int collector_trace(struct collector *c, pid_t tgid, unsigned svc);
/* The graph events, passed to fn as they are drained (struct dt_event). */
int collector_events_open(struct collector *c, int (*fn)(void *ctx, void *data, size_t len),
			  void *ctx);
/* Readable when events wait (-1 without events). */
int collector_events_fd(const struct collector *c);
int collector_events_drain(struct collector *c);
int collector_attach(struct collector *c);
void collector_detach(struct collector *c);
void collector_free(struct collector *c);
bool collector_is_traced(const struct collector *c, pid_t tgid);
/* Syscalls and requests seen so far, for progress reports. */
void collector_progress(struct collector *c, uint64_t *syscalls, uint64_t *requests);
/* Whether any traced process still runs (zombies do not count). */
bool collector_any_alive(const struct collector *c);
/* Connections to this port that predate the window count as accepted. */
int collector_listen_port(struct collector *c, uint16_t port);
/* Record a thread that exists already (it may stay idle all window). */
int collector_add_thread(struct collector *c, pid_t tid, pid_t tgid, const char *comm);

/* What the maps held when the window ended. */
struct thread_rec {
	uint32_t tid;
	struct dt_thread info;
	int cls;		/* thread class index, set by classify */
};

struct stat_rec {
	struct dt_stat_key key;
	struct dt_stat_val val;
};

struct wake_rec {
	struct dt_wake_key key;
	uint64_t count;
};

/* One remote endpoint's outbound traffic, summed over CPUs. */
struct outbound_rec {
	struct dt_ep_key key;
	struct dt_ep_val val;
};

/* A traced process and the service it serves. */
struct proc_svc {
	uint32_t tgid;
	uint8_t svc;
};

struct snapshot {
	struct thread_rec *threads;
	size_t nthreads;
	struct stat_rec *stats;
	size_t nstats;
	struct wake_rec *wakes;
	size_t nwakes;
	struct dt_req_stats reqs;
	struct outbound_rec *outbound;
	size_t noutbound;
	pid_t target;		/* the process profiled */
	uint16_t ports[32];	/* its listening ports */
	size_t nports;
	/* Whole snapshots only (not a service's part): request statistics
	 * of every service (MAX_SERVICES; reqs is the first) and the traced
	 * processes. */
	struct dt_req_stats *reqs_by_svc;
	struct proc_svc *procs;
	size_t nprocs;
};

int collector_snapshot(struct collector *c, struct snapshot *out);
void snapshot_free(struct snapshot *s);
const struct thread_rec *snapshot_thread(const struct snapshot *s, uint32_t tid);
/* Service svc's part of a whole snapshot: its processes' threads, their
 * statistics and wake-ups, its requests and outbound endpoints. */
int snapshot_part(const struct snapshot *all, unsigned svc, struct snapshot *out);

/* ---- env_check.c ---- */
/* Root or CAP_BPF+CAP_PERFMON, BTF, tracepoints: clear errors otherwise. */
int profile_env_check(void);
/* DITTO_BTF_PATH when set (the kernel BTF to load against), else NULL. */
const char *profile_btf_override(void);

/* ---- target_lock.c: one session per target process ---- */
struct target_lock {
	int dirfd, fd;		/* -1 when not held */
	char name[64];
};
/* 0 with the lock held, -EBUSY when another session of this euid holds
 * it, another -errno (with a message) when the lock directory or file is
 * not safe to use. */
int target_lock_take(struct target_lock *l, pid_t pid);
/* Removes the lock file and drops the lock; safe on a lock not held. */
void target_lock_release(struct target_lock *l);

/* ---- proc.c ---- */
bool proc_exists(pid_t pid);
/* The parent's pid (0 when gone or unreadable). */
pid_t proc_parent(pid_t pid);
/* Whether pid descends from anc (through the parents' links). */
bool proc_descends(pid_t pid, pid_t anc);
/* Exists and is not a zombie. */
bool proc_alive(pid_t pid);
/* 0, or -EINVAL naming a kernel thread (nothing to profile there). */
int proc_check_user(pid_t pid);
/* Calls fn for pid's descendants (not pid itself), found through /proc. */
int proc_descendants(pid_t pid, int (*fn)(pid_t child, void *user), void *user);
int proc_comm(pid_t pid, char *buf, size_t len);
/* Whether pid holds a listening Unix socket. */
bool proc_unix_listening(pid_t pid);
/* TCP ports pid listens on (IPv4 and IPv6), at most max. */
size_t proc_listen_ports(pid_t pid, uint16_t *ports, size_t max);
/* Listening TCP sockets pid holds: port and socket inode, at most max. */
struct proc_listener {
	uint16_t port;
	unsigned long inode;
};
size_t proc_listeners(pid_t pid, struct proc_listener *out, size_t max);
/* Inode of the file behind pid's fd (0: none or gone). */
unsigned long proc_fd_inode(pid_t pid, int fd);
/* Calls fn for every thread of process pid with its name. */
int proc_threads(pid_t pid, int (*fn)(pid_t tid, const char *comm, void *user), void *user);

/* ---- launched.c ---- */
/* SIGTERM to child and its descendants, SIGKILL after grace_s (0: 5 s);
 * child is reaped. */
void launched_stop(pid_t child, double grace_s);

/* ---- listen_waiters.c ---- */
/* Threads waiting on a listening socket when the window ends (blocked in
 * accept, or an epoll set that holds it) get TB_ACCEPTS. */
void listen_waiters_mark(struct snapshot *s);

/* ---- classify.c: thread classes, roles, network model ---- */
struct thread_class_rec {
	char name[32];
	uint64_t count;
	enum ditto_role role;
	enum ditto_io_model io;
	uint32_t bits;		/* union of the members' TB_* bits */
	uint64_t cpu_ns, ctx_switches, wakeups, threads_created, processes_created;
	bool has_main;		/* holds the target's main thread */
	int group, sub;		/* behaviour group, call-tree cluster in it */
	bool created;		/* members were created during the window */
};

struct classes {
	struct thread_class_rec *cls;
	size_t n;
};

struct thread_sampler;
/* ts (may be NULL) splits behaviour groups by call-tree distance. */
int classify_threads(struct snapshot *s, const struct thread_sampler *ts, struct classes *out);
void classes_free(struct classes *c);

/* ---- netmodel.c ---- */
struct network_rec {
	enum ditto_io_model io;
	bool accept_dispatch, network_dispatch, serial_connections, master_process;
	uint64_t network_threads, processes, client_connections;
	enum ditto_call_mode client_mode;
	int acceptor, network;	/* class indexes, -1 when none */
};
void network_model(const struct snapshot *s, const struct classes *c, struct network_rec *out);

/* ---- outbound.c ---- */
/* Appends the endpoints of the outbound map (fd) to out. */
int outbound_read(int fd, struct snapshot *out);
/* services[].outbound from the snapshot's endpoints. */
int outbound_store(struct ditto_service *svc, const struct snapshot *s);

/* ---- edges.c: the graph from the collector's ordered events ---- */
struct edges;
int edges_new(struct edges **out);
void edges_free(struct edges *e);
/* The ring buffer's callback (collector_events_open): one struct dt_event. */
int edges_event(void *ctx, void *data, size_t len);
/* The services a graph joins: names, listening ports, outbound records
 * (for the callees' framing and sizes). */
struct edge_service {
	const char *name;
	const uint16_t *ports;
	size_t nports;
	const struct snapshot *part;
};
/* Graph nodes, externals and kernel edges into m. */
int edges_store(const struct edges *e, const struct edge_service *svcs, size_t n,
		struct ditto_model *m);
/* Events seen and calls whose parent request was a guess, for messages. */
void edges_counts(const struct edges *e, uint64_t *requests, uint64_t *calls,
		  uint64_t *ambiguous, uint64_t *lost);

/* ---- kernel_hist.c ---- */
/* Kernel log2 buckets b[0..n) into h, at each bucket's smallest value. */
int hist_add_log2(struct ditto_hist *h, const unsigned long long *b, size_t n);
/* Kernel loglin latency buckets (LAT_PRECISION) into h, the same way. */
int hist_add_lat(struct ditto_hist *h, const unsigned long long *b, size_t n);

/* ---- build_model.c ---- */
struct build_args {
	const char *service_name;
	uint64_t requests_override;
	double window_s;
};
int build_model(const struct snapshot *s, const struct classes *c, const struct build_args *a,
		struct ditto_model **out);
/* enum ditto_profile_gap bits of a model built from s. */
unsigned model_gaps(const struct snapshot *s, struct ditto_model *m);

/* ---- host_info.c ---- */
/* CPU model, kernel, cores and cache sizes into meta.host; what cannot be
 * learnt stays absent. Caches come from sysfs (DITTO_SYSFS_CPU replaces
 * /sys/devices/system/cpu), levels it lacks from CPUID; meta.host.
 * cache_source says which. */
void host_info_fill(struct ditto_meta *meta);

/* ---- host_cpuid.c ---- */
#define HOST_CACHE_LEVELS 4	/* indexed by enum ditto_cache_level */
struct host_caches {
	uint64_t bytes[HOST_CACHE_LEVELS];	/* 0: unknown */
	unsigned line[HOST_CACHE_LEVELS];	/* line size in bytes, 0: unknown */
	unsigned ways[HOST_CACHE_LEVELS];	/* 0: unknown or fully associative */
};
/* Cache geometry from CPUID (deterministic leaf 4, AMD 0x8000001D with
 * topology extensions, else AMD 0x80000005/6); the number of levels found,
 * 0 off x86. */
unsigned host_cpuid_caches(struct host_caches *out);

/* ---- framing.c ---- */
enum ditto_framing framing_detect(const unsigned char *bytes, size_t len);
enum ditto_framing framing_vote(const struct dt_first *firsts, size_t n);

/* ---- session_cpu.c: the CPU phase and hardware counters ---- */
struct session_cpu;
struct cpu_run_opts;
struct hw_counters;
/* *out stays NULL (not an error) when no thread is left to step. */
int session_cpu_start(const struct snapshot *s, const struct classes *c,
		      const struct cpu_run_opts *o, struct session_cpu **out);
int session_cpu_fd(const struct session_cpu *sc);
/* 1 while windows run, 0 when done. */
int session_cpu_poll(struct session_cpu *sc);
void session_cpu_stop(struct session_cpu *sc);
int session_cpu_store(struct session_cpu *sc, const struct classes *c, struct ditto_model *m);
void session_cpu_free(struct session_cpu *sc);
/* observed.counters from h, or available=false with a warning (h NULL). */
int session_counters_store(struct hw_counters *h, const char *why, struct ditto_model *m);

#endif /* DITTO_PROFILE_INT_H */
