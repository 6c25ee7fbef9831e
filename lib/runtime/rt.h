/* SPDX-License-Identifier: MIT */
/*
 * The clone runtime: what every generated clone is built from. libditto's
 * synthesizer copies lib/runtime/ into the clone's tree next to a generated
 * clone_config.c (one `const struct rt_config rt_config`) and body.S (the
 * request bodies); the clone needs nothing of libditto. Plain C11 + POSIX,
 * Linux x86-64.
 *
 * Command line of a clone:
 *   clone [--port P] [--max-seconds S] [--max-requests N] [--scratch DIR]
 *         [--upstream NAME=HOST:PORT]... [--upstream-timeout-ms N] [--stats]
 * It binds 127.0.0.1:P (default: the model's port), prints "ready" on
 * stdout (flushed) once listening, serves until SIGTERM/SIGINT, S seconds
 * or N requests, then closes its sockets, joins its threads, waits for its
 * processes, removes its scratch file and exits 0 (3: port taken, 2: bad
 * option, 1: other failure, with a message on stderr).
 *
 * Connections are capped below the descriptor limit (each pre-forked
 * process has its own): the clone raises its soft RLIMIT_NOFILE to the
 * hard limit and keeps room for its other descriptors. At the cap a new
 * client is accepted and the least recently active idle connection (no
 * request in progress), whichever thread serves it, is closed for it;
 * with none idle the new client is closed at once. The first time, one
 * line on stderr says so. Out of descriptors all the same, a waiting
 * client is accepted and closed, never left in the backlog.
 *
 * The client side (rt_upstream.c, rt_up_call.c, rt_up_wire.c): per
 * inbound request, for each of rt_config.upstreams (the service's edges
 * to its children in the model's graph), the clone draws the fan-out and
 * calls the child that many times in the child's framing, requests of
 * the edge's drawn sizes, over connections pooled per serving thread
 * (connected lazily, again after a failure; TCP_NODELAY). A child's
 * address comes from --upstream NAME=HOST:PORT or the environment's
 * DITTO_UPSTREAM_<ENVNAME> (the command line wins); a child without one
 * is warned about at start and its calls are skipped (counted). Names
 * are resolved at start and again when a connection is re-made.
 * Simplifications, chosen so that one rule holds for every skeleton:
 *   - the request body runs first, then the replayed system calls, then
 *     the sync calls, then the response is written, then the body's
 *     share after the response (after_response_share). The original's
 *     attribution of its time between its calls is not reproduced.
 *   - sequential edges are called one call after the other, in the
 *     table's order; then the calls of every parallel edge are written
 *     together (one connection each) and read together (poll);
 *   - sync edges are called before the response is written, by the
 *     serving thread; an epoll loop parks the request on them and serves
 *     its other connections meanwhile (rt_park.c), poll, select and
 *     busy-polling tiers block on them, as a thread-per-request server
 *     would. Async calls are sent by the serving thread once the response
 *     was handed to the socket; an epoll loop reads their replies in its
 *     own waits (rt_park.c), the other skeletons hand them to one caller
 *     thread per process, up to 32 in flight (rt_up_async.c): they delay
 *     neither this response nor the next request, and a full queue (4096)
 *     drops calls (counted as skipped).
 *   - a failure (no address, refused, timeout, closed, a reply that does
 *     not parse) is counted per child, never fails the inbound request;
 *     each process prints one line per child at exit: calls, errors,
 *     timeouts, skipped.
 *   - responses are whatever the child answers: a clone child draws them
 *     from its own model, a real one answers for the keys asked.
 * Trace context (rt_trace.c): an inbound HTTP request's W3C traceparent
 * (version 00) gives the request its trace id, else a fresh random one;
 * each HTTP call carries "traceparent: 00-<trace id>-<new span id>-<flags>".
 * RESP and memcache have no field for it and carry none.
 */
#ifndef DITTO_RT_H
#define DITTO_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A histogram to draw from: bucket i holds values in [lo[i], hi[i]) (one
 * value when hi == lo + 1) with cumulative weight cum[i] (cum[n-1] is the
 * total). n == 0: the histogram is empty and draws give `dflt`.
 */
struct rt_hist {
	uint32_t n;
	const uint64_t *lo, *hi, *cum;
	uint64_t dflt;
};

enum rt_framing {
	RT_FRAMING_RAW = 0,		/* each read is one request */
	RT_FRAMING_HTTP1,		/* HTTP/1.1, keep-alive, Content-Length */
	RT_FRAMING_RESP,		/* redis: arrays of bulk strings, inline commands */
	RT_FRAMING_MEMCACHE_TEXT,	/* memcached text protocol */
	RT_FRAMING_MEMCACHE_BINARY,	/* memcached binary protocol */
	RT_FRAMING_LENGTH_PREFIXED,	/* 4-byte big-endian length + payload */
	RT_FRAMING_POSTGRES,		/* PostgreSQL protocol 3.0, simple and extended queries */
	RT_FRAMING_MYSQL,		/* MySQL/MariaDB protocol 4.1, text and prepared statements */
};

enum rt_io {
	RT_IO_EPOLL = 0,	/* epoll_wait loops */
	RT_IO_POLL,		/* poll() loop */
	RT_IO_SELECT,		/* select() loop */
	RT_IO_BLOCKING,		/* blocking accept, one thread per connection */
	RT_IO_BUSYPOLL,		/* non-blocking fds polled in a spin loop */
};

/* How the acceptor of accept_dispatch waits for its listen socket: as the
 * serving threads wait (in their epoll/poll/select call, or in accept4()
 * for blocking and busy-polling ones), or as the original's acceptor
 * class did when that differs (a main thread blocked in accept4() that
 * hands sockets to epoll threads). */
enum rt_accept_wait {
	RT_ACCEPT_WAIT_AS_SERVING = 0,
	RT_ACCEPT_WAIT_ACCEPT,		/* blocked in accept4() */
	RT_ACCEPT_WAIT_EPOLL,
	RT_ACCEPT_WAIT_POLL,
	RT_ACCEPT_WAIT_SELECT,
};

/* What a replayed system call does; the generator derives it from the
 * syscall description table (argument roles and class). */
enum rt_replay {
	RT_REPLAY_FILE_READ = 0,	/* read family on the scratch file */
	RT_REPLAY_FILE_WRITE,		/* write family on the scratch file */
	RT_REPLAY_FSYNC,		/* fsync / fdatasync on the scratch file */
	RT_REPLAY_OPEN,			/* open the scratch file and close it again */
	RT_REPLAY_CLOSE,		/* close of a fd opened for it (dup of scratch) */
	RT_REPLAY_STAT,			/* stat family on the scratch file */
	RT_REPLAY_LSEEK,		/* lseek on the scratch file, offset drawn */
	RT_REPLAY_SLEEP,		/* nanosleep family, size = ns */
	RT_REPLAY_YIELD,		/* sched_yield */
	RT_REPLAY_FUTEX_WAKE,		/* FUTEX_WAKE on a private word (no waiter) */
	RT_REPLAY_MMAP,			/* anonymous mmap of size bytes, then munmap */
	RT_REPLAY_MMAP_FILE,		/* private read-only map of the scratch file */
	RT_REPLAY_MPROTECT,		/* mprotect of size bytes of a thread's region, unchanged */
	RT_REPLAY_MADVISE,		/* madvise(MADV_DONTNEED) of size bytes of that region */
	RT_REPLAY_EVENTFD_READ,		/* read of the process's eventfd (rt_eventfd.c) */
	RT_REPLAY_EVENTFD_WRITE,	/* write of it */
};

/* One kind of call issued per request at its model rate. */
#define RT_FAILS 4	/* errno values a call fails with */

struct rt_call {
	const char *name;	/* the original call's name, for messages */
	long nr;		/* the system call number issued (x86-64) */
	enum rt_replay kind;
	double per_request;	/* calls per request; fractions accumulate */
	struct rt_hist size;	/* bytes moved (ns for sleeps) */
	struct rt_hist offset;	/* file offsets of non-sequential calls */
	double sequential;	/* share of calls at the previous call's end */
	unsigned iovcnt;	/* > 0: the vectored form with this many iovecs */
	bool positional;	/* the p-form (offset argument) */
	/* Shares of the calls that fail, by errno, as the original's did
	 * (rt_replay.c makes each: open ENOENT, ENOTDIR, EEXIST, EISDIR;
	 * stat ENOENT, ENOTDIR; other file calls EBADF, and EINVAL for
	 * lseek and the positional forms); err 0 ends the list. Sleeps,
	 * yields, futex wakes and anonymous mmaps do not fail; a file's mmap
	 * fails EBADF. */
	struct rt_fail {
		int err;
		double share;
	} fail[RT_FAILS];
};

/* When a socket option is set on a connection. */
enum rt_sockopt_when {
	RT_SOCKOPT_ACCEPT = 0,		/* once, on the accepted socket */
	RT_SOCKOPT_BEFORE_RESPONSE,	/* before each response's writes (TCP_CORK 1) */
	RT_SOCKOPT_AFTER_RESPONSE,	/* once a response is all sent (TCP_CORK 0) */
};

/* An int socket option the original's connections had (setsockopt). */
struct rt_sockopt {
	int level, name, value;
	enum rt_sockopt_when when;
};

/*
 * Responses partly sent from a file with sendfile(), as the original's
 * were (a static-file server): the last `share` of each response's bytes
 * go from the scratch file in `per_request` calls (at least one), the
 * rest in the usual writes. share 0: none.
 */
struct rt_sendfile {
	double per_request;
	double share;
};

/* How the request-serving threads use their sockets. */
/* A wait in an event loop's call, as the original's thread made it: a
 * background class between wake-ups (an idle process of PostgreSQL waits
 * on its latch in epoll_wait). */
enum rt_wait {
	RT_WAIT_NONE = 0,
	RT_WAIT_EPOLL,
	RT_WAIT_POLL,
	RT_WAIT_SELECT,
};

struct rt_net {
	long read_nr;		/* read, recvfrom, readv or recvmsg */
	uint32_t read_size;	/* buffer size asked for per read */
	/* Bytes of a request's first read, its head, the rest read at once
	 * after it (0: one read): MariaDB reads a packet's 4-byte header
	 * alone, then its payload, two reads a request. */
	uint32_t head_read;
	long write_nr;		/* write, sendto, writev or sendmsg */
	unsigned write_iov;	/* iovecs per vectored write (>= 1) */
	double writes_per_request;	/* >= 1: a response is cut in that many writes */
	uint32_t epoll_events;	/* maxevents per epoll_wait */
	/* Share of an epoll thread's wake-ups whose responses are held until
	 * every ready connection was read, then written (redis writes its
	 * replies before it sleeps again): fewer answers reach the clients
	 * while the thread still serves, so fewer requests wait at its next
	 * epoll_wait. */
	double hold_share;
	/* Reads per request that find nothing (EAGAIN) besides the one that
	 * reads the request: a non-blocking skeleton reads once more at this
	 * rate, as servers that read until EAGAIN do. */
	double again_per_request;
	/* accept4() calls per request that find no connection (EAGAIN): a
	 * busy-polling loop that cannot go round as often per request as its
	 * original makes the ones its rounds owe. */
	double accept_again_per_request;
	/* Share of the body a request runs after its response is written:
	 * the original's work after it answered (logging, clean-up), as
	 * time from the response to the next read or wait over that plus the
	 * service time. The next request may then arrive while the thread
	 * still works, and be read without a wait, as in the original. */
	double after_response_share;
	/* The serving thread's multiplexing waits per request (epoll): an
	 * event loop such as node's turns once per I/O event, a timer or an
	 * immediate callback, more often than once per request and reply;
	 * the epoll skeleton waits without blocking (timeout 0) when it owes
	 * waits at this rate. 0: none owed. */
	double waits_per_request;
	/* Share of the body an event loop (epoll, poll) runs once per
	 * wake-up that began requests, instead of once per request: a
	 * loop's own work per turn (node's timers, microtasks, its garbage
	 * collector's share), which the requests of one wake-up share, so
	 * that the CPU per request falls as the load packs more requests
	 * into a wake-up, as the original's does. A wake-up's share is drawn
	 * like a request's body; at one request per wake-up the CPU per
	 * request is the same whatever the share. 0: all per request. */
	double wake_share;
};

/* A background thread class: `threads` threads that each wake every
 * period_ns and keep the CPU busy_ns per wake-up, waiting in
 * clock_nanosleep when `sleeps` (the original slept), else on a futex,
 * unless `wait` names an event loop's call. Under valgrind each wakes
 * every requests_per_wake served requests instead, when that is known
 * (see rt_background.c). */
struct rt_background {
	const char *name;
	unsigned threads;
	uint64_t period_ns;
	uint64_t busy_ns;
	bool sleeps;
	uint64_t requests_per_wake;
	enum rt_wait wait;
	/* Woken every requests_per_wake served requests natively too (the
	 * serving class woke it in the original), not every period_ns. */
	bool paced;
	/* Its futex calls per wake-up besides its wait (FUTEX_WAKE of a
	 * word nobody waits on): the original's locks and hand-offs. */
	double futex_per_wake;
	/* Its eventfd writes per wake-up (a pool telling its loop that work
	 * is done; the loop's reads are the serving class's replay). */
	double eventfd_per_wake;
	/* Its other calls, per wake-up (per_request reads "per wake-up"):
	 * a garbage collector's mmap, mprotect and madvise, a flusher's
	 * writes and fsyncs, replayed as the serving class's are. */
	const struct rt_call *calls;
	unsigned ncalls;
};

/* An edge from this service to a child node of the model's graph. */
enum rt_call_order {
	RT_ORDER_SEQUENTIAL = 0,	/* one call after the other */
	RT_ORDER_PARALLEL,		/* written together, read together */
};

struct rt_upstream {
	const char *name;	/* the child node's name */
	const char *env;	/* DITTO_UPSTREAM_<ENVNAME>: its address's variable */
	enum rt_framing framing;	/* the child's: requests built, replies read */
	struct rt_hist fanout;	/* calls per inbound request */
	struct rt_hist request_bytes;	/* whole request on the wire */
	struct rt_hist response_bytes;	/* the child's replies, as the parent saw them */
	enum rt_call_order order;
	bool async;		/* the response does not wait for the calls */
};

struct rt_config {
	const char *service;	/* the model's service name */
	/* The model has the graph from traces, and this service is in none
	 * of its edges: the original exported no spans and carried no trace
	 * context, nor does the clone (no traceparent on its calls). */
	bool untraced;
	enum rt_framing framing;
	uint16_t port;		/* default listen port */
	enum rt_io io;
	unsigned processes;	/* > 1: pre-forked processes sharing the listen socket */
	/* Request-serving threads in each process. Blocking io: 0 is one
	 * thread per connection; without accept_dispatch each of them
	 * accepts and serves its own connections (rt_net_accepting.c). */
	unsigned threads;
	bool accept_dispatch;	/* an acceptor thread hands connections to the threads */
	/* The acceptor (of accept_dispatch, or of one thread per connection)
	 * is a thread of its own; false: the process's main thread accepts,
	 * as the original's did (unless that plays the class "main"). */
	bool acceptor_thread;
	enum rt_accept_wait accept_wait;
	/* The main thread accepts and forks a process per connection, which
	 * serves it with io's loop (or blocking reads) in one thread and exits
	 * when it closes (PostgreSQL's postmaster and backends); processes is
	 * then what the model saw, not what is started. */
	bool fork_per_connection;
	/* Each serving thread waits on the listener as accept_wait says,
	 * accepts one connection and serves it alone with io's loop until it
	 * closes, then accepts the next (Apache's pre-forked children poll
	 * their one connection); further clients wait in the backlog. */
	bool serial_connections;
	/* The serving processes are children of a parent that serves nothing
	 * and plays `parent` (a master), even when processes is 1. */
	bool master_process;
	bool reuseport;		/* > 1 thread without dispatch: one SO_REUSEPORT socket each */
	struct rt_net net;
	struct rt_hist response_bytes;	/* whole response on the wire, bytes */
	struct rt_hist insts_per_request;	/* request body instructions */
	const struct rt_call *calls;
	unsigned ncalls;
	const struct rt_background *background;
	unsigned nbackground;
	/* How a pre-forking parent waits between looks at its children: as
	 * the original master's class "main" did (Apache's wakes every second
	 * in select). No wait or no period: it blocks in waitpid(). */
	struct rt_background parent;
	/* Set on each accepted connection, or around each response; none:
	 * the clone's sockets keep the kernel's defaults (Nagle on). */
	const struct rt_sockopt *sockopts;
	unsigned nsockopts;
	struct rt_sendfile sendfile;
	uint64_t scratch_bytes;	/* size of the scratch file file calls use (0: none) */
	uint64_t seed;		/* per-thread generators derive from it */
	/* The request body (body.S): one call runs state[0] loop iterations of
	 * body_loop_insts instructions (0: its built-in count); state[1] is
	 * the body's own. Regions of *body_region_bytes belong to the caller. */
	void (*body)(void *regions, uint64_t state[2]);
	const uint64_t *body_region_bytes;
	uint64_t body_loop_insts;
	/* Runs every far-code chunk of the body once, at startup. */
	void (*body_warm)(void *regions);
	/* Bytes of data each request walks as one chain of dependent loads
	 * (synth.footprint_kib; 0: none), apart from the body's regions. */
	uint64_t footprint_bytes;
	/* The share of its lines walked after the response, the rest before
	 * (synth.footprint_after_share; 0: all before). */
	double footprint_after_share;
	/* Each request's body length is its draw times a factor of mean 1
	 * and this coefficient of variation (synth.body_spread; 0: the draw
	 * alone): a tail of long requests at the same mean CPU time. The
	 * share run per wake-up (wake_share) is not spread. */
	double body_spread;
	/* The children this service calls (rt_upstream.c); none: a leaf. */
	const struct rt_upstream *upstreams;
	unsigned nupstreams;
};

extern const struct rt_config rt_config;

#endif /* DITTO_RT_H */
