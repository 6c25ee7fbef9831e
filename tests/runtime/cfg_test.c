/* SPDX-License-Identifier: MIT */
/*
 * A hand-written clone configuration for the runtime tests: what the
 * generator would write as clone_config.c, with the skeleton, framing,
 * socket calls and replay table picked by -D macros (see meson.build), so
 * one file builds a clone per skeleton.
 */
#include <sys/syscall.h>

#include "rt.h"

#ifndef CFG_IO
#define CFG_IO RT_IO_EPOLL
#endif
#ifndef CFG_FRAMING
#define CFG_FRAMING RT_FRAMING_LENGTH_PREFIXED
#endif
#ifndef CFG_PROCESSES
#define CFG_PROCESSES 1
#endif
#ifndef CFG_THREADS
#define CFG_THREADS 1
#endif
#ifndef CFG_DISPATCH
#define CFG_DISPATCH false
#endif
#ifndef CFG_FORK
#define CFG_FORK false
#endif
#ifndef CFG_ACCEPT_WAIT
#define CFG_ACCEPT_WAIT RT_ACCEPT_WAIT_AS_SERVING
#endif
#ifndef CFG_MASTER
#define CFG_MASTER false
#endif
#ifndef CFG_SERIAL
#define CFG_SERIAL false
#endif
#ifndef CFG_REUSEPORT
#define CFG_REUSEPORT false
#endif
#ifndef CFG_READ_NR
#define CFG_READ_NR SYS_read
#endif
#ifndef CFG_READ_SIZE
#define CFG_READ_SIZE 0
#endif
#ifndef CFG_WRITE_NR
#define CFG_WRITE_NR SYS_write
#endif
#ifndef CFG_WRITE_IOV
#define CFG_WRITE_IOV 1
#endif
#ifndef CFG_WPR
#define CFG_WPR 1.0
#endif
#ifndef CFG_EPOLL_EVENTS
#define CFG_EPOLL_EVENTS 0
#endif
#ifndef CFG_HOLD
#define CFG_HOLD 0.0
#endif
#ifndef CFG_AGAIN
#define CFG_AGAIN 0.0
#endif
#ifndef CFG_HEAD_READ
#define CFG_HEAD_READ 0
#endif
#ifndef CFG_WAITS
#define CFG_WAITS 0.0
#endif
#ifndef CFG_AFTER
#define CFG_AFTER 0.0
#endif
#ifndef CFG_WAKE
#define CFG_WAKE 0.0
#endif
/* CFG_RESP_FIXED: every response that many bytes; CFG_RESP_SMALL: only
 * small ones (the replay test counts mmap: no large buffers wanted). */
/* CFG_REPLAY: the replay table; CFG_BACKGROUND: background threads;
 * CFG_PACED: a background class paced by requests under valgrind;
 * CFG_PACED_NATIVE: one paced natively too (woken by the serving class in
 * its original), with futex calls of its own per wake-up;
 * CFG_MAIN_CLASS: a background class "main" (the main thread's). */

#define HIST(name) { .n = sizeof(name##_lo) / sizeof(name##_lo[0]), .lo = name##_lo, \
		     .hi = name##_hi, .cum = name##_cum, .dflt = 0 }

#if defined(CFG_RESP_FIXED)
#define RESPONSE { .n = 0, .dflt = CFG_RESP_FIXED }
#elif defined(CFG_RESP_SMALL)
static const uint64_t resp_lo[] = { 8, 100 }, resp_hi[] = { 9, 300 }, resp_cum[] = { 1, 4 };
#define RESPONSE HIST(resp)
#else
/* mostly small, some larger than a socket buffer (partial writes) */
static const uint64_t resp_lo[] = { 2, 100, 1000, 100000 };
static const uint64_t resp_hi[] = { 3, 400, 4000, 400001 };
static const uint64_t resp_cum[] = { 10, 60, 96, 100 };
#define RESPONSE HIST(resp)
#endif

#ifdef CFG_IPR_BIG	/* 40 million instructions a request: 5 ms or more */
static const uint64_t ipr_lo[] = { 40000000 }, ipr_hi[] = { 40000001 }, ipr_cum[] = { 1 };
#else
static const uint64_t ipr_lo[] = { 700, 7000 }, ipr_hi[] = { 7001, 70001 }, ipr_cum[] = { 9, 10 };
#endif

#ifdef CFG_REPLAY
static const uint64_t fsz_lo[] = { 512, 4096 }, fsz_hi[] = { 513, 16385 }, fsz_cum[] = { 1, 3 };
static const uint64_t off_lo[] = { 0 }, off_hi[] = { 1u << 20 }, off_cum[] = { 1 };
static const uint64_t ns_lo[] = { 1000 }, ns_hi[] = { 5001 }, ns_cum[] = { 1 };
static const uint64_t map_lo[] = { 4096 }, map_hi[] = { 65537 }, map_cum[] = { 1 };

/* The rates tests/runtime/runtime_test.py checks under strace. */
static const struct rt_call calls[] = {
	{ .name = "read", .nr = SYS_read, .kind = RT_REPLAY_FILE_READ, .per_request = 0.5,
	  .size = HIST(fsz), .offset = HIST(off), .sequential = 0.7 },
	{ .name = "pwritev", .nr = SYS_pwritev, .kind = RT_REPLAY_FILE_WRITE, .per_request = 0.25,
	  .size = HIST(fsz), .offset = HIST(off), .sequential = 0.5, .iovcnt = 3, .positional = true },
	{ .name = "fdatasync", .nr = SYS_fdatasync, .kind = RT_REPLAY_FSYNC, .per_request = 0.1 },
	{ .name = "openat", .nr = SYS_openat, .kind = RT_REPLAY_OPEN, .per_request = 0.3 },
	{ .name = "close", .nr = SYS_close, .kind = RT_REPLAY_CLOSE, .per_request = 0.3 },
	{ .name = "newfstatat", .nr = SYS_newfstatat, .kind = RT_REPLAY_STAT, .per_request = 0.4 },
	{ .name = "clock_nanosleep", .nr = SYS_clock_nanosleep, .kind = RT_REPLAY_SLEEP,
	  .per_request = 0.2, .size = HIST(ns) },
	{ .name = "sched_yield", .nr = SYS_sched_yield, .kind = RT_REPLAY_YIELD, .per_request = 0.15 },
	{ .name = "futex", .nr = SYS_futex, .kind = RT_REPLAY_FUTEX_WAKE, .per_request = 1.5 },
	{ .name = "mmap", .nr = SYS_mmap, .kind = RT_REPLAY_MMAP, .per_request = 0.35, .size = HIST(map) },
	{ .name = "mmap", .nr = SYS_mmap, .kind = RT_REPLAY_MMAP_FILE, .per_request = 0.2,
	  .size = HIST(map) },
	{ .name = "mprotect", .nr = SYS_mprotect, .kind = RT_REPLAY_MPROTECT, .per_request = 0.3,
	  .size = HIST(map) },
	{ .name = "madvise", .nr = SYS_madvise, .kind = RT_REPLAY_MADVISE, .per_request = 0.25,
	  .size = HIST(map) },
	/* an event loop's eventfd: a pool's writes, the loop's reads */
	{ .name = "read", .nr = SYS_read, .kind = RT_REPLAY_EVENTFD_READ, .per_request = 0.2 },
	{ .name = "write", .nr = SYS_write, .kind = RT_REPLAY_EVENTFD_WRITE, .per_request = 0.3 },
};
#define NCALLS (sizeof(calls) / sizeof(calls[0]))
#define SCRATCH (1u << 20)
#else
static const struct rt_call calls[] = { { .name = "none" } };
#define NCALLS 0
#define SCRATCH 0
#endif

#if defined(CFG_BACKGROUND)
static const struct rt_background background[] = {
	{ .name = "ticker", .threads = 2, .period_ns = 10000000, .busy_ns = 1000000 },
	{ .name = "idle", .threads = 1, .period_ns = 0, .busy_ns = 0 },
};
#define NBACKGROUND 2
#elif defined(CFG_PACED)
/* a minute's period: under valgrind only the pace by requests wakes it */
static const struct rt_background background[] = {
	{ .name = "ticker", .threads = 2, .period_ns = 60000000000ull, .sleeps = true,
	  .requests_per_wake = 50 },
};
#define NBACKGROUND 1
#elif defined(CFG_PACED_NATIVE)
/* the pool's garbage collector's page work per wake-up (V8's in node) */
static const struct rt_call pool_calls[] = {
	{ .name = "mprotect", .nr = SYS_mprotect, .kind = RT_REPLAY_MPROTECT, .per_request = 2.0,
	  .size = { .n = 0, .dflt = 8192 } },
	{ .name = "madvise", .nr = SYS_madvise, .kind = RT_REPLAY_MADVISE, .per_request = 0.5,
	  .size = { .n = 0, .dflt = 4096 } },
};
static const struct rt_background background[] = {
	{ .name = "pool", .threads = 2, .period_ns = 60000000000ull, .requests_per_wake = 50,
	  .paced = true, .futex_per_wake = 1.5, .eventfd_per_wake = 0.5, .calls = pool_calls,
	  .ncalls = 2 },
};
#define NBACKGROUND 1
#elif defined(CFG_MAIN_CLASS)
/* the original's main thread did not serve: the clone's plays it, and
 * makes its class's calls per wake-up (3 madvise) */
static const struct rt_call main_calls[] = {
	{ .name = "madvise", .nr = SYS_madvise, .kind = RT_REPLAY_MADVISE, .per_request = 3.0,
	  .size = { .n = 0, .dflt = 4096 } },
};
static const struct rt_background background[] = {
	{ .name = "main", .threads = 1, .period_ns = 20000000, .busy_ns = 500000,
	  .calls = main_calls, .ncalls = 1 },
};
#define NBACKGROUND 1
#else
static const struct rt_background background[] = { { .name = "none" } };
#define NBACKGROUND 0
#endif

#if defined(CFG_UPSTREAM) || defined(CFG_UPSTREAM_ASYNC)
/* every call's request and reply: 20 bytes */
static const uint64_t ubytes_lo[] = { 20 }, ubytes_hi[] = { 21 }, ubytes_cum[] = { 1 };
#endif

#ifdef CFG_UPSTREAM
/* two sequential calls, then two parallel ones, to length-prefixed
 * children (--upstream seq=... --upstream par=...) */
static const uint64_t two_lo[] = { 2 }, two_hi[] = { 3 }, two_cum[] = { 1 };
static const struct rt_upstream upstreams[] = {
	{ .name = "seq", .env = "DITTO_UPSTREAM_SEQ", .framing = RT_FRAMING_LENGTH_PREFIXED,
	  .fanout = HIST(two), .request_bytes = HIST(ubytes), .response_bytes = HIST(ubytes),
	  .order = RT_ORDER_SEQUENTIAL },
	{ .name = "par", .env = "DITTO_UPSTREAM_PAR", .framing = RT_FRAMING_LENGTH_PREFIXED,
	  .fanout = HIST(two), .request_bytes = HIST(ubytes), .response_bytes = HIST(ubytes),
	  .order = RT_ORDER_PARALLEL },
};
#define NUPSTREAMS 2
#elif defined(CFG_UPSTREAM_ASYNC)
/* one async call per request to a length-prefixed child
 * (DITTO_UPSTREAM_BG) */
static const uint64_t one_lo[] = { 1 }, one_hi[] = { 2 }, one_cum[] = { 1 };
static const struct rt_upstream upstreams[] = {
	{ .name = "bg", .env = "DITTO_UPSTREAM_BG", .framing = RT_FRAMING_LENGTH_PREFIXED,
	  .fanout = HIST(one), .request_bytes = HIST(ubytes), .response_bytes = HIST(ubytes),
	  .async = true },
};
#define NUPSTREAMS 1
#else
static const struct rt_upstream upstreams[] = { { .name = "none" } };
#define NUPSTREAMS 0
#endif

extern void body_test(void *regions, uint64_t state[2]);
static const uint64_t body_region_bytes = 65536;

const struct rt_config rt_config = {
	.service = "runtime-test",
	.framing = CFG_FRAMING,
	.port = 18080,
	.io = CFG_IO,
	.processes = CFG_PROCESSES,
	.threads = CFG_THREADS,
	.accept_dispatch = CFG_DISPATCH,
	.accept_wait = CFG_ACCEPT_WAIT,
	.fork_per_connection = CFG_FORK,
	.serial_connections = CFG_SERIAL,
	.master_process = CFG_MASTER,
	.reuseport = CFG_REUSEPORT,
	.net = {
		.read_nr = CFG_READ_NR,
		.read_size = CFG_READ_SIZE,
		.head_read = CFG_HEAD_READ,
		.write_nr = CFG_WRITE_NR,
		.write_iov = CFG_WRITE_IOV,
		.writes_per_request = CFG_WPR,
		.epoll_events = CFG_EPOLL_EVENTS,
		.hold_share = CFG_HOLD,
		.again_per_request = CFG_AGAIN,
		.after_response_share = CFG_AFTER,
		.waits_per_request = CFG_WAITS,
		.wake_share = CFG_WAKE,
	},
	.response_bytes = RESPONSE,
	.insts_per_request = HIST(ipr),
	.calls = calls,
	.ncalls = NCALLS,
	.background = background,
	.nbackground = NBACKGROUND,
	.upstreams = upstreams,
	.nupstreams = NUPSTREAMS,
	.scratch_bytes = SCRATCH,
	.seed = 42,
	.body = body_test,
	.body_region_bytes = &body_region_bytes,
	.body_loop_insts = 8,
};
