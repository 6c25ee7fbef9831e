/* SPDX-License-Identifier: MIT */
/*
 * The sample model (see sample_model.h). Totals are kept consistent the way
 * a profiler produces them: a histogram over calls holds one sample per
 * call, one over requests one sample per request, a share never exceeds
 * its whole. So the model is not just valid but plausible, and per-request
 * rates derived from it make sense in `ditto model show` and in compare.
 */
#include "sample_model.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

/* Hand back the code of the first library call that fails. */
#define TRY(expr)                       \
	do {                            \
		int try_rc_ = (expr);   \
		if (try_rc_ < 0)        \
			return try_rc_; \
	} while (0)

/*
 * Adders and histogram getters return NULL only when memory runs out (the
 * tables below never reuse a name); the library's own message stays in
 * ditto_last_error() for the caller.
 */
#define NEED(ptr)                       \
	do {                            \
		if (!(ptr))             \
			return -ENOMEM; \
	} while (0)

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ */
/* Deterministic randomness                                             */
/* ------------------------------------------------------------------ */

struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	uint64_t x = r->s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	r->s = x;
	return x;
}

static void rng_init(struct rng *r, uint64_t seed)
{
	/* Multiply the seed out so that seeds 0, 1, 2 start far apart;
	 * xorshift must never hold a zero state. */
	uint64_t z = (seed + 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;

	r->s = (z ^ (z >> 29)) | 1;
	for (int i = 0; i < 4; i++)
		rng_next(r);
}

/* Integer in [lo, hi]; the modulo bias does not matter for sample data. */
static uint64_t rng_range(struct rng *r, uint64_t lo, uint64_t hi)
{
	return lo + rng_next(r) % (hi - lo + 1);
}

/* x scaled by a random percentage in [lo_pct, hi_pct]. */
static uint64_t rng_pct(struct rng *r, uint64_t x, unsigned lo_pct, unsigned hi_pct)
{
	return x * rng_range(r, lo_pct, hi_pct) / 100;
}

/* Real number in [lo, hi). */
static double rng_real(struct rng *r, double lo, double hi)
{
	return lo + (hi - lo) * (double)(rng_next(r) >> 11) * 0x1p-53;
}

/* ------------------------------------------------------------------ */
/* Filling histograms and maps with exact totals                        */
/* ------------------------------------------------------------------ */

/* Next share of what is *left: about half of it, and all of it at the
 * last step, so that the shares always add up to the whole. */
static uint64_t take_share(struct rng *r, uint64_t *left, bool last)
{
	uint64_t share = last ? *left : rng_pct(r, *left, 30, 70);

	*left -= share;
	return share;
}

#define SPREAD_STEPS 4

/* Put exactly `total` samples into h, at a few values drawn from [lo, hi]. */
static int hist_spread(struct ditto_hist *h, struct rng *r, uint64_t lo, uint64_t hi,
		       uint64_t total)
{
	NEED(h);
	for (int i = 0; i < SPREAD_STEPS && total > 0; i++) {
		uint64_t n = take_share(r, &total, i == SPREAD_STEPS - 1);

		if (n)
			TRY(ditto_hist_add(h, rng_range(r, lo, hi), n));
	}
	return 0;
}

/* Put exactly `total` samples into h, over the given values (earlier ones
 * get more), as an exact histogram of an enumeration expects. */
static int hist_spread_set(struct ditto_hist *h, struct rng *r, const uint64_t *values,
			   size_t n, uint64_t total)
{
	NEED(h);
	for (size_t i = 0; i < n && total > 0; i++) {
		uint64_t k = take_share(r, &total, i == n - 1);

		if (k)
			TRY(ditto_hist_add(h, values[i], k));
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* What the two services look like                                      */
/* ------------------------------------------------------------------ */

struct thread_spec {
	const char *name;
	enum ditto_role role;
	enum ditto_io_model io;
	const char *woken_by; /* another class of the service, or NULL */
	uint64_t max_count;   /* the class gets 1..max_count threads */
};

struct syscall_spec {
	const char *thread; /* one of the service's thread classes */
	const char *name;
	enum ditto_fd_kind fd;
	uint64_t nr;                /* x86-64 system call number */
	uint64_t per_100_requests;  /* calls per 100 requests, before jitter */
	unsigned max_error_pct;     /* failed calls, at most this percentage */
	uint64_t size_lo, size_hi;  /* size argument */
	uint64_t ret_lo, ret_hi;    /* value returned by successful calls */
	uint64_t flags[2];          /* flags argument values seen */
	uint64_t offset_hi;         /* file offsets up to this; 0: no offset argument */
	uint64_t lat_lo, lat_hi;    /* latency, ns */
};

struct service_spec {
	const char *name;
	enum ditto_framing framing;
	uint16_t port;
	const struct thread_spec *threads;
	size_t thread_count;
	const struct syscall_spec *syscalls;
	size_t syscall_count;
	/* network model */
	enum ditto_io_model net_io;
	bool accept_dispatch;
	bool network_dispatch;
	uint64_t client_connections; /* outgoing connections; 0 for a pure server */
	enum ditto_call_mode client_mode;
};

/* redis with I/O threads: main runs commands, workers read and write
 * sockets, bio threads flush the append-only file. */
static const struct thread_spec redis_threads[] = {
	{ "main", DITTO_ROLE_MAIN, DITTO_IO_EPOLL, "worker", 1 },
	{ "worker", DITTO_ROLE_WORKER, DITTO_IO_EPOLL, "main", 4 },
	{ "bio", DITTO_ROLE_BACKGROUND, DITTO_IO_BLOCKING, "main", 3 },
};

static const struct syscall_spec redis_syscalls[] = {
	{ "main", "read", DITTO_FD_TCP, 0, 100, 3, 16384, 16384, 20, 512, { 0, 0 }, 0, 800, 20000 },
	{ "main", "write", DITTO_FD_TCP, 1, 100, 1, 5, 4096, 5, 4096, { 0, 0 }, 0, 1000, 30000 },
	{ "main", "epoll_wait", DITTO_FD_NONE, 232, 60, 0, 10128, 10128, 1, 64, { 0, 0 }, 0,
	  2000, 1000000 },
	{ "worker", "pwrite64", DITTO_FD_FILE, 18, 10, 0, 64, 8192, 64, 8192, { 0, 0 }, 1ull << 30,
	  3000, 80000 },
	{ "bio", "fdatasync", DITTO_FD_FILE, 75, 1, 1, 0, 0, 0, 0, { 0, 0 }, 0, 100000, 5000000 },
};

/* memcached: main accepts and hands connections to workers; a
 * maintenance thread (LRU crawler) is woken by the workers. */
static const struct thread_spec memcached_threads[] = {
	{ "main", DITTO_ROLE_MAIN, DITTO_IO_EPOLL, NULL, 1 },
	{ "worker", DITTO_ROLE_WORKER, DITTO_IO_EPOLL, "main", 8 },
	{ "maint", DITTO_ROLE_BACKGROUND, DITTO_IO_BLOCKING, "worker", 2 },
};

static const struct syscall_spec memcached_syscalls[] = {
	{ "main", "accept4", DITTO_FD_TCP, 288, 1, 2, 16, 16, 20, 1000, { 2048, 2048 }, 0, 1000,
	  20000 },
	{ "main", "epoll_wait", DITTO_FD_NONE, 232, 1, 0, 32, 32, 1, 4, { 0, 0 }, 0, 5000, 2000000 },
	{ "worker", "read", DITTO_FD_TCP, 0, 100, 5, 2048, 2048, 30, 300, { 0, 0 }, 0, 700, 15000 },
	{ "worker", "sendmsg", DITTO_FD_TCP, 46, 100, 0, 10, 4096, 10, 4096, { 16384, 16448 }, 0,
	  1200, 40000 },
	{ "worker", "epoll_wait", DITTO_FD_NONE, 232, 80, 0, 32, 32, 1, 32, { 0, 0 }, 0, 1000,
	  500000 },
};

static const struct service_spec services[] = {
	{ "redis", DITTO_FRAMING_RESP, 6379, redis_threads, COUNT_OF(redis_threads),
	  redis_syscalls, COUNT_OF(redis_syscalls), DITTO_IO_EPOLL, false, true, 8, DITTO_CALL_SYNC },
	/* memcached calls nobody: no client connections, so no client mode. */
	{ "memcached", DITTO_FRAMING_MEMCACHE_TEXT, 11211, memcached_threads,
	  COUNT_OF(memcached_threads), memcached_syscalls, COUNT_OF(memcached_syscalls),
	  DITTO_IO_EPOLL, true, false, 0, DITTO_CALL_UNKNOWN },
};

/* Instruction classes in the format of ditto_cpu_mix() (func.ops.mem.width.isa),
 * as the profiler names them; model validation warns about any other. */
static const char *const mix_classes[] = {
	"mov.rm.r.64.base", "alu.rr.none.64.base", "cmp.ri.none.32.base", "jcc.i.none.64.base",
	"mov.mr.w.64.base", "alu.rm.none.64.base", "vint.rm.r.128.sse2",
};

/* Conditional-branch keys taken_bin * 16 + transition_bin: mostly biased
 * branches, a few hard to predict. */
static const uint64_t branch_keys[] = { 8 * 16 + 8, 6 * 16 + 7, 3 * 16 + 4, 1 * 16 + 1, 1 * 16 + 2 };

/* Calls from redis to memcached per redis request. */
static const uint64_t fanouts[] = { 1, 0, 2, 3 };

/* Knobs of the synthesizer (see tuning in model.h) and metrics the tuner
 * steps them by (ditto_tune() in tune.h). */
static const char *const knob_names[] = {
	"synth.body_scale", "synth.d1_mpki", "synth.branch_bias", "synth.hold_share",
};

static const char *const metric_names[] = { "insts_per_request", "branch_mispredict_rate",
					    "i1_miss_rate", "d1_miss_rate", "ll_miss_rate" };

#define LOAD_POINTS 3

/* ------------------------------------------------------------------ */
/* meta                                                                 */
/* ------------------------------------------------------------------ */

static int build_host(struct ditto_meta *meta, struct rng *r)
{
	static const char *const cpus[] = {
		"Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz",
		"AMD EPYC 7763 64-Core Processor",
	};

	TRY(ditto_meta_set_host_cpu_model(meta, cpus[rng_range(r, 0, COUNT_OF(cpus) - 1)]));
	TRY(ditto_meta_set_host_kernel(meta, "6.1.0-13-amd64"));
	TRY(ditto_meta_set_host_cores(meta, 8u << rng_range(r, 0, 3)));
	TRY(ditto_meta_set_host_cache_bytes(meta, DITTO_CACHE_L1D, 48u << 10));
	TRY(ditto_meta_set_host_cache_bytes(meta, DITTO_CACHE_L1I, 32u << 10));
	TRY(ditto_meta_set_host_cache_bytes(meta, DITTO_CACHE_L2, rng_range(r, 1, 2) << 20));
	TRY(ditto_meta_set_host_cache_bytes(meta, DITTO_CACHE_LLC, rng_range(r, 16, 64) << 20));
	return ditto_meta_set_host_cache_source(meta, "sysfs");
}

static int build_meta(struct ditto_model *m, struct rng *r)
{
	struct ditto_meta *meta = ditto_model_meta_ensure(m);

	NEED(meta);
	/* A fixed epoch plus a seed-dependent offset: the model must depend
	 * on the seed only, never on the clock. */
	TRY(ditto_meta_set_created(meta, 1700000000u + rng_range(r, 0, 30000000)));
	TRY(ditto_meta_set_window_s(meta, (double)rng_range(r, 10, 120)));
	TRY(build_host(meta, r));
	TRY(ditto_meta_set_load_generator(meta, "memtier_benchmark"));
	TRY(ditto_meta_set_load_qps(meta, (double)rng_range(r, 20000, 80000)));
	return ditto_meta_set_load_connections(meta, rng_range(r, 10, 200));
}

/* ------------------------------------------------------------------ */
/* services[].threads and network                                       */
/* ------------------------------------------------------------------ */

static int build_thread(struct ditto_service *s, struct rng *r, const struct thread_spec *ts)
{
	struct ditto_thread_class *t = ditto_service_add_thread(s, ts->name);
	uint64_t count = rng_range(r, 1, ts->max_count);
	uint64_t switches = count * rng_range(r, 1000, 100000);

	NEED(t);
	TRY(ditto_thread_class_set_count(t, count));
	TRY(ditto_thread_class_set_role(t, ts->role));
	TRY(ditto_thread_class_set_io_model(t, ts->io));
	TRY(ditto_thread_class_set_cpu_ns(t, count * rng_range(r, 100000000, 5000000000)));
	TRY(ditto_thread_class_set_ctx_switches(t, switches));
	/* A wake-up is one kind of context switch. */
	return ditto_thread_class_set_wakeups(t, rng_pct(r, switches, 50, 100));
}

static int build_threads(struct ditto_service *s, struct rng *r, const struct service_spec *sp)
{
	for (size_t i = 0; i < sp->thread_count; i++)
		TRY(build_thread(s, r, &sp->threads[i]));
	/* Wakers are named only once every class exists, so a class may be
	 * woken by one listed after it. */
	for (size_t i = 0; i < sp->thread_count; i++) {
		const struct thread_spec *ts = &sp->threads[i];

		if (ts->woken_by)
			TRY(ditto_thread_class_add_woken_by(ditto_service_find_thread(s, ts->name),
							    ts->woken_by));
	}
	return 0;
}

static int build_network(struct ditto_service *s, const struct service_spec *sp)
{
	struct ditto_network *n = ditto_service_network_ensure(s);
	/* Both services serve connections on their "worker" class. */
	struct ditto_thread_class *workers = ditto_service_find_thread(s, "worker");

	NEED(n);
	NEED(workers);
	TRY(ditto_network_set_io_model(n, sp->net_io));
	TRY(ditto_network_set_accept_dispatch(n, sp->accept_dispatch));
	TRY(ditto_network_set_network_dispatch(n, sp->network_dispatch));
	TRY(ditto_network_set_network_threads(n, ditto_thread_class_count(workers)));
	TRY(ditto_network_set_processes(n, ditto_service_processes(s)));
	TRY(ditto_network_set_client_connections(n, sp->client_connections));
	return ditto_network_set_client_mode(n, sp->client_mode);
}

/* ------------------------------------------------------------------ */
/* services[].syscalls and requests                                     */
/* ------------------------------------------------------------------ */

/* Files get offsets, mostly continuing the previous access; calls without
 * an offset argument record 0 and are never sequential. */
static int build_offsets(struct ditto_syscall *c, struct rng *r, const struct syscall_spec *sp,
			 uint64_t calls)
{
	TRY(hist_spread(ditto_syscall_offset_ensure(c), r, 0, sp->offset_hi, calls));
	return ditto_syscall_set_sequential(c, sp->offset_hi ? rng_pct(r, calls, 70, 99) : 0);
}

static int build_syscall(struct ditto_service *s, struct rng *r, const struct syscall_spec *sp,
			 uint64_t requests)
{
	struct ditto_syscall *c = ditto_service_add_syscall(s, sp->thread, sp->name, sp->fd);
	uint64_t calls = rng_pct(r, requests * sp->per_100_requests / 100, 90, 110) + 1;
	/* At least one failure, so that every count of the sample is set. */
	uint64_t errors = 1 + rng_pct(r, calls - 1, 0, sp->max_error_pct);

	NEED(c);
	TRY(ditto_syscall_set_nr(c, sp->nr));
	TRY(ditto_syscall_set_calls(c, calls));
	TRY(ditto_syscall_set_errors(c, errors));
	TRY(hist_spread(ditto_syscall_size_ensure(c), r, sp->size_lo, sp->size_hi, calls));
	/* Failed calls return -errno, not a value of this histogram. */
	TRY(hist_spread(ditto_syscall_ret_ensure(c), r, sp->ret_lo, sp->ret_hi, calls - errors));
	TRY(hist_spread_set(ditto_syscall_flags_ensure(c), r, sp->flags, COUNT_OF(sp->flags),
			    calls));
	TRY(hist_spread(ditto_syscall_latency_ensure(c), r, sp->lat_lo, sp->lat_hi, calls));
	return build_offsets(c, r, sp, calls);
}

static int build_requests(struct ditto_service *s, struct rng *r, uint64_t count)
{
	struct ditto_requests *q = ditto_service_requests_ensure(s);
	uint64_t conns = rng_range(r, 20, 200);
	uint64_t per_conn = count / conns;

	NEED(q);
	TRY(ditto_requests_set_count(q, count));
	TRY(ditto_requests_set_connections(q, conns));
	TRY(ditto_requests_set_pipelined(q, rng_pct(r, count, 0, 20)));
	TRY(hist_spread(ditto_requests_request_bytes_ensure(q), r, 20, 512, count));
	TRY(hist_spread(ditto_requests_response_bytes_ensure(q), r, 5, 4096, count));
	/* One sample per connection: how many requests it carried. */
	TRY(hist_spread(ditto_requests_per_connection_ensure(q), r, per_conn / 2, per_conn * 2,
			conns));
	return hist_spread(ditto_requests_service_ns_ensure(q), r, 2000, 200000, count);
}

/* ------------------------------------------------------------------ */
/* services[].cpu                                                       */
/* ------------------------------------------------------------------ */

static int build_mix(struct ditto_counts *mix, struct rng *r, uint64_t decoded)
{
	NEED(mix);
	for (size_t i = 0; i < COUNT_OF(mix_classes) && decoded > 0; i++) {
		uint64_t n = take_share(r, &decoded, i == COUNT_OF(mix_classes) - 1);

		if (n)
			TRY(ditto_counts_add(mix, mix_classes[i], n));
	}
	return 0;
}

/* Working sets count cold accesses apart, so their histograms hold the
 * warm accesses only. */
static int build_working_sets(struct ditto_cpu *c, struct rng *r, uint64_t insts, uint64_t mem)
{
	uint64_t dws_cold = rng_pct(r, mem, 1, 5);
	uint64_t iws_cold = 1 + rng_pct(r, insts, 0, 2);

	TRY(ditto_cpu_set_dws_cold(c, dws_cold));
	TRY(ditto_cpu_set_iws_cold(c, iws_cold));
	TRY(hist_spread(ditto_cpu_dws_ensure(c), r, 64, 1u << 24, mem - dws_cold));
	return hist_spread(ditto_cpu_iws_ensure(c), r, 64, 1u << 20, insts - iws_cold);
}

static int build_cpu_hists(struct ditto_cpu *c, struct rng *r, uint64_t windows, uint64_t insts,
			   uint64_t mem)
{
	uint64_t per_window = insts / windows;

	TRY(hist_spread(ditto_cpu_insts_per_request_ensure(c), r, per_window / 2, per_window * 2,
			windows));
	TRY(hist_spread_set(ditto_cpu_branches_ensure(c), r, branch_keys, COUNT_OF(branch_keys),
			    rng_pct(r, insts, 10, 20)));
	TRY(hist_spread(ditto_cpu_raw_ensure(c), r, 1, 64, rng_pct(r, insts, 50, 90)));
	TRY(hist_spread(ditto_cpu_war_ensure(c), r, 1, 128, rng_pct(r, insts, 30, 60)));
	TRY(hist_spread(ditto_cpu_waw_ensure(c), r, 1, 256, rng_pct(r, insts, 20, 50)));
	TRY(hist_spread(ditto_cpu_mem_raw_ensure(c), r, 1, 1024, rng_pct(r, mem, 10, 40)));
	return build_working_sets(c, r, insts, mem);
}

static int build_cpu(struct ditto_service *s, struct rng *r, const char *thread_class)
{
	struct ditto_cpu *c = ditto_service_add_cpu(s, thread_class);
	uint64_t windows = rng_range(r, 10, 50);
	uint64_t insts = windows * rng_range(r, 20000, 200000);
	uint64_t undecoded = 1 + rng_pct(r, insts, 0, 1);
	uint64_t loads = rng_pct(r, insts, 20, 30);
	uint64_t stores = rng_pct(r, insts, 8, 15);

	NEED(c);
	TRY(ditto_cpu_set_windows(c, windows));
	TRY(ditto_cpu_set_instructions(c, insts));
	TRY(ditto_cpu_set_undecoded(c, undecoded));
	TRY(ditto_cpu_set_loads(c, loads));
	TRY(ditto_cpu_set_stores(c, stores));
	TRY(ditto_cpu_set_chased_loads(c, rng_pct(r, loads, 1, 10)));
	/* The mix classifies exactly the instructions the decoder understood. */
	TRY(build_mix(ditto_cpu_mix_ensure(c), r, insts - undecoded));
	return build_cpu_hists(c, r, windows, insts, loads + stores);
}

/* ------------------------------------------------------------------ */
/* services[].observed                                                  */
/* ------------------------------------------------------------------ */

static int build_load_point(struct ditto_observed *o, struct rng *r, double qps)
{
	struct ditto_load_point *p = ditto_observed_add_load(o, qps);

	NEED(p);
	TRY(ditto_load_point_set_achieved_qps(p, qps * rng_real(r, 0.97, 1.0)));
	TRY(ditto_load_point_set_connections(p, rng_range(r, 10, 200)));
	return hist_spread(ditto_load_point_latency_ensure(p), r, 10000, 2000000,
			   rng_range(r, 10000, 100000));
}

static int build_observed(struct ditto_service *s, struct rng *r)
{
	struct ditto_observed *o = ditto_service_observed_ensure(s);
	uint64_t peak = rng_range(r, 80000, 250000);

	NEED(o);
	TRY(ditto_observed_set_throughput_qps(o, (double)peak));
	/* Evenly spaced offered loads below saturation: distinct keys. */
	for (uint64_t i = 1; i <= LOAD_POINTS; i++)
		TRY(build_load_point(o, r, (double)(peak * i / (LOAD_POINTS + 1))));
	/* Like the development hosts, the sample host exposes no PMU. */
	return ditto_observed_set_counters_available(o, false);
}

/* ------------------------------------------------------------------ */
/* services[]                                                           */
/* ------------------------------------------------------------------ */

static int build_service(struct ditto_model *m, struct rng *r, const struct service_spec *sp,
			 uint64_t requests)
{
	struct ditto_service *s = ditto_model_add_service(m, sp->name);

	NEED(s);
	TRY(ditto_service_set_framing(s, sp->framing));
	TRY(ditto_service_add_port(s, sp->port));
	TRY(ditto_service_set_processes(s, 1));
	TRY(build_threads(s, r, sp));
	TRY(build_network(s, sp));
	TRY(build_requests(s, r, requests));
	for (size_t i = 0; i < sp->syscall_count; i++)
		TRY(build_syscall(s, r, &sp->syscalls[i], requests));
	for (size_t i = 0; i < sp->thread_count; i++)
		TRY(build_cpu(s, r, sp->threads[i].name));
	return build_observed(s, r);
}

/* ------------------------------------------------------------------ */
/* graph and tuning                                                     */
/* ------------------------------------------------------------------ */

/* One fanout sample per parent request; the edge's calls are what those
 * samples add up to, and each call has one request and one response. */
static int build_fanout(struct ditto_edge *e, struct rng *r, uint64_t parents)
{
	struct ditto_hist *h = ditto_edge_fanout_ensure(e);
	uint64_t calls = 0;

	NEED(h);
	for (size_t i = 0; i < COUNT_OF(fanouts) && parents > 0; i++) {
		uint64_t n = take_share(r, &parents, i == COUNT_OF(fanouts) - 1);

		if (!n)
			continue;
		TRY(ditto_hist_add(h, fanouts[i], n));
		calls += fanouts[i] * n;
	}
	TRY(ditto_edge_set_calls(e, calls));
	TRY(hist_spread(ditto_edge_request_bytes_ensure(e), r, 20, 256, calls));
	return hist_spread(ditto_edge_response_bytes_ensure(e), r, 5, 4096, calls);
}

/* The child's latency as the parent sees it: one sample per call. */
static int build_latency(struct ditto_edge *e, struct rng *r, uint64_t lo_ns, uint64_t hi_ns)
{
	return hist_spread(ditto_edge_latency_ns_ensure(e), r, lo_ns, hi_ns, ditto_edge_calls(e));
}

/* A few calls of the edge went out while the parent served several
 * requests (ambiguous) or none (unattributed). */
static int build_attribution(struct ditto_edge *e, struct rng *r)
{
	uint64_t calls = ditto_edge_calls(e);

	TRY(ditto_edge_set_ambiguous(e, rng_pct(r, calls, 1, 3)));
	return ditto_edge_set_unattributed(e, rng_pct(r, calls, 0, 1));
}

/* A database the second service writes to, outside the profile: every
 * graph field shown by `ditto model show` and drawn by `ditto graph dot`
 * is set, for both sources. */
static const char sample_external[] = "orders-db";

static int build_external(struct ditto_graph *g)
{
	struct ditto_external *x;

	TRY(ditto_graph_add_node(g, sample_external));
	x = ditto_graph_add_external(g, sample_external);
	NEED(x);
	TRY(ditto_external_set_address(x, "10.0.0.7"));
	TRY(ditto_external_set_port(x, 5432));
	return ditto_external_set_framing(x, DITTO_FRAMING_POSTGRES);
}

/* One source's view of the graph: the services' edge (sync, sequential)
 * and the fire-and-forget write to the database (async, parallel). */
static int build_source_edges(struct ditto_graph *g, struct rng *r, enum ditto_edge_source src,
			      uint64_t parent_requests, uint64_t db_parents)
{
	struct ditto_edge *e = ditto_graph_add_source_edge(g, src, services[0].name,
							   services[1].name);

	NEED(e);
	TRY(ditto_edge_set_mode(e, DITTO_CALL_SYNC));
	TRY(ditto_edge_set_order(e, DITTO_ORDER_SEQUENTIAL));
	TRY(ditto_edge_set_parent_requests(e, parent_requests));
	TRY(build_fanout(e, r, parent_requests));
	TRY(build_latency(e, r, 50000, 2000000));
	TRY(build_attribution(e, r));
	e = ditto_graph_add_source_edge(g, src, services[1].name, sample_external);
	NEED(e);
	TRY(ditto_edge_set_mode(e, DITTO_CALL_ASYNC));
	TRY(ditto_edge_set_order(e, DITTO_ORDER_PARALLEL));
	TRY(ditto_edge_set_parent_requests(e, db_parents));
	TRY(build_fanout(e, r, db_parents));
	TRY(build_latency(e, r, 200000, 9000000));
	return build_attribution(e, r);
}

static int build_traces(struct ditto_graph *g, struct rng *r, uint64_t parent_requests)
{
	struct ditto_traces *t = ditto_graph_traces_ensure(g);
	uint64_t traces = rng_pct(r, parent_requests, 5, 10);

	NEED(t);
	TRY(ditto_traces_set_files(t, 2));
	TRY(ditto_traces_set_traces(t, traces));
	TRY(ditto_traces_set_spans(t, traces * 6));
	TRY(ditto_traces_set_orphan_spans(t, rng_pct(r, traces, 0, 2)));
	TRY(ditto_traces_set_rejected_spans(t, rng_range(r, 0, 5)));
	TRY(ditto_traces_set_sample_ratio(t, 0.1));
	return ditto_traces_set_corrected(t, true);
}

static int build_graph(struct ditto_model *m, struct rng *r, uint64_t parent_requests,
		       uint64_t db_parents)
{
	struct ditto_graph *g = ditto_model_graph_ensure(m);

	NEED(g);
	for (size_t i = 0; i < COUNT_OF(services); i++)
		TRY(ditto_graph_add_node(g, services[i].name));
	TRY(build_external(g));
	/* The kernel's edges first: tests take edge 0 as the services' one. */
	TRY(build_source_edges(g, r, DITTO_EDGE_KERNEL, parent_requests, db_parents));
	TRY(build_source_edges(g, r, DITTO_EDGE_TRACES, parent_requests, db_parents));
	return build_traces(g, r, parent_requests);
}

static int build_iteration(struct ditto_tuning *t, struct rng *r, double max_error,
			   bool accepted, const char *note)
{
	struct ditto_tuning_iter *it = ditto_tuning_add_iteration(t);
	struct ditto_values *knobs = it ? ditto_tuning_iter_knobs_ensure(it) : NULL;
	struct ditto_values *errors = it ? ditto_tuning_iter_errors_ensure(it) : NULL;

	NEED(knobs);
	NEED(errors);
	TRY(ditto_tuning_iter_set_accepted(it, accepted));
	TRY(ditto_tuning_iter_set_note(it, note));
	for (size_t i = 0; i < COUNT_OF(knob_names); i++)
		TRY(ditto_values_set(knobs, knob_names[i], rng_real(r, 0.5, 2.0)));
	for (size_t i = 0; i < COUNT_OF(metric_names); i++)
		TRY(ditto_values_set(errors, metric_names[i], rng_real(r, 0.0, max_error)));
	return 0;
}

static int copy_values(struct ditto_values *dst, const struct ditto_values *src)
{
	NEED(dst);
	NEED(src);
	for (size_t i = 0; i < ditto_values_size(src); i++) {
		const char *key;
		double v;

		TRY(ditto_values_entry(src, i, &key, &v));
		TRY(ditto_values_set(dst, key, v));
	}
	return 0;
}

static int build_tuning(struct ditto_model *m, struct rng *r)
{
	struct ditto_tuning *t = ditto_model_tuning_ensure(m);

	NEED(t);
	TRY(build_iteration(t, r, 0.30, false, "initial clone from the profile"));
	TRY(build_iteration(t, r, 0.08, true, "scaled instructions and working sets"));
	/* The knobs in force are those of the accepted, last iteration. */
	return copy_values(ditto_tuning_knobs_ensure(t),
			   ditto_tuning_iter_knobs(ditto_tuning_iteration(t, 1)));
}

/* ------------------------------------------------------------------ */
/* Entry point                                                          */
/* ------------------------------------------------------------------ */

static int build_model(struct ditto_model *m, struct rng *r)
{
	uint64_t parent_requests = 0, db_parents = 0;

	TRY(build_meta(m, r));
	for (size_t i = 0; i < COUNT_OF(services); i++) {
		uint64_t requests = rng_range(r, 50000, 500000);

		TRY(build_service(m, r, &services[i], requests));
		/* The graph's edges leave the first service and the second. */
		if (i == 0)
			parent_requests = requests;
		else
			db_parents = requests;
	}
	TRY(build_graph(m, r, parent_requests, db_parents));
	return build_tuning(m, r);
}

int sample_model_build(uint64_t seed, struct ditto_model **out)
{
	struct ditto_model *m = ditto_model_new();
	struct rng r;
	int rc;

	*out = NULL;
	if (!m)
		return -ENOMEM;
	rng_init(&r, seed);
	rc = build_model(m, &r);
	if (rc < 0) {
		ditto_model_free(m);
		return rc;
	}
	*out = m;
	return 0;
}
