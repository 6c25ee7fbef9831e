/* SPDX-License-Identifier: MIT */
/*
 * What the clone runtime's files share: options, the stop machinery,
 * random numbers, buffers, connections, framings, workers and skeletons.
 * Internal to the runtime; rt.h is the interface the generator writes to.
 */
#ifndef DITTO_RT_INT_H
#define DITTO_RT_INT_H

/* Included first by every runtime file: clones are built with a bare
 * `cc`, so the GNU extensions (accept4, statx...) are asked for here. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/types.h>

#include "rt.h"

#define RT_RESPONSE_MAX (16u << 20)	/* largest response built */
#define RT_FRAME_MAX (64u << 20)	/* largest request accepted */
#define RT_LINE_MAX (64u << 10)		/* longest text line / header block */
#define RT_READ_SIZE_DEFAULT 16384u
#define RT_EPOLL_EVENTS_DEFAULT 64u

/* Prints "clone: <what>" (and strerror(err) when err != 0) on stderr. */
void rt_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- rt_opts.c: the command line ---- */
struct rt_opts {
	uint16_t port;
	double max_seconds;	/* 0: no limit */
	uint64_t max_requests;	/* 0: no limit; per process when pre-forked */
	const char *scratch_dir;
	/* --upstream NAME=HOST:PORT, as given (rt_upstream.c reads them) */
	const char **upstream_args;
	unsigned nupstream_args;
	uint32_t upstream_timeout_ms;	/* a call's whole exchange; default 1000 */
	bool stats;		/* --stats: requests served, printed at exit */
	const char *otlp_url;	/* --otlp URL (NULL: the environment's, if any) */
};
extern struct rt_opts rt_opts;
int rt_opts_parse(int argc, char **argv);	/* 0; 1: --help; -1 after a message */

/* ---- rt_stop.c: why and how the clone stops ---- */
extern int rt_stop_fd;	/* eventfd, readable (never drained) once stopping */
int rt_stop_init(void);	/* handlers, eventfd, deadline timer of this process */
void rt_stop_signals(sigset_t *set);	/* SIGTERM, SIGINT, SIGALRM: what stops a clone */
void rt_stop(void);	/* async-signal-safe, idempotent */
bool rt_stopping(void);
/* In a child forked per connection: a stop of its own, requests counted
 * with the parent's (rt_stop_share_count() before forking) and
 * --max-requests stopping the parent too. */
void rt_stop_child(pid_t parent);
int rt_stop_share_count(void);
void rt_fail(void);	/* a thread failed (message printed): stop, exit 1 */
bool rt_failed(void);
void rt_stop_count_request(void);	/* one request served; stops at --max-requests */
/* Signals t out of blocking calls until it has set *done, then joins it. */
void rt_stop_kick_join(pthread_t t, atomic_bool *done);
int rt_thread_start(pthread_t *t, void *(*fn)(void *), void *arg, const char *what);

/* ---- rt_rng.c: per-thread generators and histogram draws ---- */
struct rt_rng {
	uint64_t s[4];
};
void rt_rng_seed(struct rt_rng *r, uint64_t seed, uint64_t stream);
uint64_t rt_rng_next(struct rt_rng *r);
uint64_t rt_rng_below(struct rt_rng *r, uint64_t bound);	/* [0, bound), 0 if bound == 0 */
double rt_rng_unit(struct rt_rng *r);	/* [0, 1) */
double rt_rng_spread(struct rt_rng *r, double cv);	/* mean 1, coefficient of variation cv */
uint64_t rt_hist_draw(const struct rt_hist *h, struct rt_rng *r);
uint64_t rt_hist_draw_min(const struct rt_hist *h, struct rt_rng *r, uint64_t min);
/* The generators of background threads: streams of their own (rt_request.c
 * and rt_up_call.c use bits 61 to 63, a serving thread's index below);
 * the main thread playing class "main" takes the last. */
#define RT_BG_STREAMS (1ull << 60)
#define RT_BG_MAIN_STREAM (RT_BG_STREAMS | 0xffffffffull)

/* ---- rt_buf.c: growable byte buffers ---- */
struct rt_buf {
	char *data;
	size_t len, cap;
};
int rt_buf_reserve(struct rt_buf *b, size_t more);	/* 0 or -ENOMEM */
int rt_buf_put(struct rt_buf *b, const void *p, size_t n);
int rt_buf_puts(struct rt_buf *b, const char *s);
int rt_buf_printf(struct rt_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int rt_buf_fill(struct rt_buf *b, size_t n);	/* n filler bytes */
int rt_buf_put_u64(struct rt_buf *b, uint64_t v);	/* decimal, without printf's cost */
void rt_buf_drop(struct rt_buf *b, size_t n);	/* removes the first n bytes */
void rt_buf_free(struct rt_buf *b);

/* ---- rt_scratch.c: the per-process scratch file ---- */
extern int rt_scratch_fd;		/* -1 when the config needs none */
extern char rt_scratch_path[4096];
extern uint64_t rt_scratch_size;
int rt_scratch_create(void);
void rt_scratch_remove(void);

/* ---- rt_replay.c: the per-request system calls ---- */
#define RT_REPLAY_RING 64	/* descriptors OPEN may leave open per thread */
struct rt_replayer;
struct rt_replayer *rt_replay_new(void);	/* NULL after a message */
/* Of another table: a background class's calls per wake-up. */
struct rt_replayer *rt_replay_new_for(const struct rt_call *calls, unsigned ncalls);
void rt_replay_run(struct rt_replayer *r, struct rt_rng *rng);
void rt_replay_free(struct rt_replayer *r);

/* ---- rt_request.c: what a request costs besides its bytes ---- */
extern void *rt_regions;	/* the body's data regions (one mapping per process) */
int rt_regions_map(void);
void rt_regions_unmap(void);

/* ---- rt_trace.c: W3C trace context, and the spans it makes ---- */
#define RT_TRACEPARENT_LEN 55	/* version 00: "00-" 32 hex "-" 16 hex "-" 2 hex */
/* The trace context of the request a thread serves. */
struct rt_trace {
	uint8_t trace_id[16];
	uint8_t parent_id[8];	/* the caller's span (all zero: none came in) */
	uint8_t span_id[8];	/* this request's server span */
	uint8_t flags;		/* trace-flags, passed on (01: sampled) */
	bool remote;		/* trace id and parent from an inbound traceparent */
	uint64_t start_ns;
};
/*
 * A finished span, handed to rt_span_end(): the hook an exporter (OTLP,
 * a later change) fills. It is called on the request path, so an
 * exporter must only copy the span into a bounded per-process queue that
 * a background thread sends in batches, dropping (and counting) spans
 * when the queue is full; ids are borrowed for the call's duration.
 */
enum rt_span_kind { RT_SPAN_SERVER, RT_SPAN_CLIENT };
struct rt_span {
	enum rt_span_kind kind;
	const uint8_t *trace_id;	/* 16 bytes */
	const uint8_t *span_id;		/* 8 bytes */
	const uint8_t *parent_id;	/* 8 bytes, all zero: a root span */
	uint64_t start_ns, end_ns;	/* CLOCK_MONOTONIC */
	int upstream;		/* a client span's index in rt_config.upstreams, else -1 */
	bool error;
};
void rt_span_end(const struct rt_span *s);
/* 0 and *out's trace id, parent and flags, or -1: v[0..n) is no valid
 * version-00 traceparent (length, dashes, lowercase hex, ids not all
 * zero, version not ff). */
int rt_traceparent_parse(const char *v, size_t n, struct rt_trace *out);
/* The RT_TRACEPARENT_LEN characters (and a NUL) of a traceparent. */
void rt_traceparent_format(char out[RT_TRACEPARENT_LEN + 1], const uint8_t trace_id[16],
			   const uint8_t span_id[8], uint8_t flags);

/* ---- rt_upstream.c, rt_up_call.c, rt_up_wire.c: the client side ---- */
struct rt_up_conn {
	int fd;
	bool reused;		/* it served a call before this one */
	/* in its thread's epoll set (rt_park.c), with these events */
	bool watched;
	uint32_t events;
	struct rt_buf in, out;
	size_t out_off;
};
/* A serving thread's idle connections to one child. */
struct rt_up_pool {
	struct rt_up_conn *idle;
	unsigned n, cap;
};
/* One call to make: its edge, request size and the request it is for. */
struct rt_up_ctx {
	unsigned up;
	uint64_t size;
	uint8_t trace_id[16], parent_id[8], flags;
};
int rt_upstream_init(void);	/* addresses and counters, at start; -1 after a message */
void rt_upstream_report(void);	/* one line per child on stderr */
uint16_t rt_upstream_port(unsigned i);	/* child i's configured port (0: none) */
/* A new non-blocking socket to child i, its connect started (or done):
 * the fd, or -1 with errno (ENOENT: no usable address). */
int rt_upstream_connect(unsigned i);
bool rt_upstream_configured(unsigned i);	/* it has an address */
void rt_upstream_failed(unsigned i);	/* a connection failed: resolve again */
enum rt_up_count { RT_UP_CALLS, RT_UP_ERRORS, RT_UP_TIMEOUTS, RT_UP_SKIPPED, RT_UP_NCOUNTS };
void rt_upstream_count(unsigned i, enum rt_up_count what);
/* The request of one call into out: `size` bytes on the wire where the
 * framing allows (at least its smallest request); traceparent (NULL:
 * none) goes into HTTP requests. 0 or -ENOMEM. */
int rt_up_request(enum rt_framing f, uint64_t size, const char *traceparent, struct rt_buf *out);
/* The reply at p[0..n): its length when whole, 0 when more is needed
 * (eof: the connection ended after these bytes), -1 when it cannot be a
 * reply. *failed: a whole reply that reports an error (RESP '-', HTTP
 * 4xx/5xx, memcache ERROR/CLIENT_ERROR/SERVER_ERROR, a binary status). */
long rt_up_reply(enum rt_framing f, const char *p, size_t n, bool eof, bool *failed);

/* Per serving thread: generator, body state, replay state. */
struct rt_thread {
	struct rt_rng rng;
	uint64_t body_state[2];
	struct rt_replayer *replay;
	double again_acc;	/* reads owed at rt_net.again_per_request */
	double wait_acc;	/* epoll waits owed at rt_net.waits_per_request */
	uint64_t served;	/* requests served */
	uint64_t empty_reads;	/* reads of its connections that found nothing */
	/* Body loops of the request just served left for after its response,
	 * and the fraction of one carried to the next request. */
	uint64_t after_loops;
	double after_acc;
	/* rt_net.wake_share: requests began this wake-up, the loop runs the
	 * wake-up's body at its end (rt_request_wake_end()); draws of their
	 * own, the fraction of a loop carried. */
	bool wake_loop, wake_began;
	struct rt_rng wake_rng;
	double wake_acc;
	/* This wake-up's responses wait in held (rt_conn_hold_flush()). */
	bool hold;
	struct rt_rng hold_rng;
	struct rt_conn **held;
	size_t nheld, heldcap;
	/* The client side: fan-outs and request sizes from their own stream
	 * (the other draws stay as they were without children); ids from a
	 * generator seeded per process, so that traces never repeat. */
	struct rt_rng up_rng, id_rng;
	struct rt_up_pool *up;	/* one per rt_config.upstreams */
	struct rt_trace trace;	/* of the request being served */
	/* Its epoll loop parks requests on their sync calls (rt_park.c);
	 * NULL: they block. */
	struct rt_parker *parker;
};
int rt_thread_init(struct rt_thread *t, uint64_t stream);
/* rt_footprint.c: the request's data footprint (rt_config.footprint_bytes). */
int rt_footprint_map(void);
void rt_footprint_unmap(void);
void rt_footprint_walk_before(void);
void rt_footprint_walk_after(void);
void rt_thread_fini(struct rt_thread *t);
void rt_request_work(struct rt_thread *t);	/* body, then replay */
/* The same with the sync calls parked (t->parker set): true when req
 * (len bytes at base, c's input) waits for them (rt_park_request()). */
struct rt_conn;
struct rt_req;
bool rt_request_work_parked(struct rt_thread *t, struct rt_conn *c, const struct rt_req *req,
			    long len, const char *base);
void rt_request_after(struct rt_thread *t);	/* the body's share after the response */
/* An event loop's thread runs the wake-up's share of the body
 * (rt_net.wake_share) at the end of each wake-up: rt_request_wake_loop()
 * once, before its loop, then rt_request_wake_end() after each wake-up. */
void rt_request_wake_loop(struct rt_thread *t);
void rt_request_wake_end(struct rt_thread *t);
uint64_t rt_served(void);	/* requests this process served */
/* The request's trace context (from req's traceparent, else fresh), at
 * its start; its server span ends in rt_request_after(). */
struct rt_req;
void rt_trace_begin(struct rt_thread *t, const struct rt_req *req);
void rt_trace_end(struct rt_thread *t);
void rt_trace_child(struct rt_thread *t, uint8_t span_id[8]);	/* a call's new span id */
/* The thread's client side; the calls of its sync (async false) or
 * async edges for the request being served. */
int rt_up_thread_init(struct rt_thread *t, uint64_t stream);
void rt_up_thread_fini(struct rt_thread *t);
void rt_up_calls(struct rt_thread *t, bool async);
/* Calls ctx[0..n) made together (in flight at once), each to its end. */
void rt_up_batch(struct rt_thread *t, const struct rt_up_ctx *ctx, unsigned n);
/* The sync calls of t's request, batch by batch in the order rt_up_calls()
 * makes them, to emit(arg, ctx, n) (the draws as rt_up_calls() draws). */
typedef void (*rt_up_emit_fn)(void *arg, const struct rt_up_ctx *ctx, unsigned n);
void rt_up_plan(struct rt_thread *t, rt_up_emit_fn emit, void *arg);
/* The same of its async calls, all in one batch. */
void rt_up_plan_async(struct rt_thread *t, rt_up_emit_fn emit, void *arg);
/* One call to a child, from its start to its end. */
enum rt_up_state { RT_UP_WRITING, RT_UP_READING, RT_UP_DONE, RT_UP_FAILED };

struct rt_up_call {
	unsigned up;
	struct rt_up_conn c;
	enum rt_up_state st;
	bool retried;		/* a stale pooled connection was replaced once */
	bool reply_failed;	/* the child answered with an error */
	bool keep;		/* the connection may serve another call */
	uint64_t start_ns;
	uint8_t span[8];
	struct rt_up_ctx ctx;	/* the request it is made for */
	/* The pool its connection comes from and goes back to, shared by
	 * threads under this lock (an async call: rt_up_async.c); NULL: the
	 * calling thread's own. */
	pthread_mutex_t *lock;
};
/* An async call begun by a serving thread (its request written with a
 * connection of pool's, under lock), ended by the async caller (replies
 * read, connections back to pool): the kernel sees the call sent in the
 * request it was made for, as the original's. */
void rt_up_call_begin(struct rt_thread *t, struct rt_thread *pool, pthread_mutex_t *lock,
		      const struct rt_up_ctx *ctx, struct rt_up_call *k);
void rt_up_calls_end(struct rt_thread *pool, struct rt_up_call *k, unsigned n);
/* A call driven by its thread's event loop (rt_park.c): begun with
 * rt_up_call_begin(t, t, NULL, ...), a step when its socket is ready, a
 * failure (its socket could not be watched), its end (span, connection
 * back to t's pool or closed). */
void rt_up_call_step(struct rt_up_call *k);
void rt_up_call_fail(struct rt_up_call *k);
void rt_up_call_end(struct rt_thread *t, struct rt_up_call *k);
/* Closes t's idle pooled connection fd (its child closed it); false: none. */
bool rt_up_pool_forget(struct rt_thread *t, int fd);
/* t's pooled connections are in no epoll set (its loop's set closed). */
void rt_up_pool_unwatched(struct rt_thread *t);
/* rt_up_async.c: a caller thread per process makes the async calls, so
 * that they delay neither this response nor the thread's next request. */
int rt_up_async_start(void);
void rt_up_async_stop(void);
void rt_up_async_push(struct rt_thread *t, const struct rt_up_ctx *ctx);

/* ---- rt_sock.c: socket calls by the model's system call numbers ---- */
ssize_t rt_sock_read(int fd, void *buf, size_t n);
/* How far a thread's own empty reads (or failed accepts) may run ahead of
 * the model's rate: past that they owe nothing more, so that an idle
 * spell does not pay for the next busy one. */
#define RT_AGAIN_SURPLUS 8.0
/* rt_empty_read.c: the reads t owes at rt_net.again_per_request, each of
 * n bytes into buf, all finding nothing. */
struct rt_thread;
void rt_empty_reads(struct rt_thread *t, void *buf, size_t n);
void rt_empty_reads_open(void);	/* the loopback pair, at start */
ssize_t rt_sock_write(int fd, const char *p, size_t n);
void rt_sock_setup(int fd);	/* the options set at accept */
size_t rt_sock_sendfile_bytes(size_t len);	/* of a response, sent from the file */
unsigned rt_sock_sendfile_calls(void);		/* sendfile calls per response */
ssize_t rt_sock_sendfile(int fd, size_t n);	/* from the scratch file's start */
void rt_sock_response_begin(int fd);	/* options set before a response (TCP_CORK on) */
void rt_sock_response_end(int fd);	/* and once it is sent (TCP_CORK off) */
size_t rt_sock_read_size(void);

/* ---- rt_framing.c and rt_frame_*.c: requests in, responses out ---- */
struct rt_conn;

/* One request cut from the input; pointers are into the input buffer. */
struct rt_req {
	const char *p;		/* the request's bytes */
	size_t len;
	int op;			/* framing-specific command */
	bool serve;		/* a request: runs the body and replay, is counted */
	bool quiet;		/* no response */
	bool close_after;	/* close the connection once answered */
	const char *arg;	/* framing-specific argument (RESP: CONFIG parameter) */
	size_t arglen;
	int minor;		/* HTTP: minor version */
	const char *traceparent;	/* HTTP: the header's value, unchecked (NULL: none) */
	size_t traceparent_len;
};

/* > 0: a request of that many bytes is in req; 0: need more; -1: malformed. */
typedef long (*rt_cut_fn)(const char *p, size_t n, struct rt_req *req);
/* Appends the response to out; 0 or -ENOMEM. */
typedef int (*rt_respond_fn)(const struct rt_req *req, struct rt_rng *rng, struct rt_buf *out);

long rt_frame_cut(struct rt_conn *c, const char *p, size_t n, struct rt_req *req);
/* Whether p[0..n) starts a request that needs more bytes, changing nothing
 * (MySQL's and PostgreSQL's cutters change the connection's state on a
 * whole frame); false when that cannot be told so. */
bool rt_frame_needs_more(struct rt_conn *c, const char *p, size_t n);
int rt_frame_respond(struct rt_conn *c, const struct rt_req *req, struct rt_rng *rng, struct rt_buf *out);
uint64_t rt_frame_size(struct rt_rng *rng, uint64_t min);	/* drawn response size, clamped */
uint64_t rt_frame_size_min(struct rt_rng *rng, uint64_t min);	/* draw among buckets >= min */
unsigned rt_digits(uint64_t v);
uint64_t rt_fit_decimal(uint64_t total, uint64_t fixed);	/* n with fixed + digits(n) + n <= total */

long rt_resp_cut(const char *p, size_t n, struct rt_req *req);
int rt_resp_respond(const struct rt_req *req, struct rt_rng *rng, struct rt_buf *out);
long rt_mctext_cut(const char *p, size_t n, struct rt_req *req);
int rt_mctext_respond(const struct rt_req *req, struct rt_rng *rng, struct rt_buf *out);
long rt_mcbin_cut(const char *p, size_t n, struct rt_req *req);
int rt_mcbin_respond(const struct rt_req *req, struct rt_rng *rng, struct rt_buf *out);
long rt_http_cut(const char *p, size_t n, struct rt_req *req);
int rt_http_respond(const struct rt_req *req, struct rt_rng *rng, struct rt_buf *out);
long rt_lp_cut(const char *p, size_t n, struct rt_req *req);
int rt_lp_respond(const struct rt_req *req, struct rt_rng *rng, struct rt_buf *out);
long rt_raw_cut(const char *p, size_t n, struct rt_req *req);
int rt_raw_respond(const struct rt_req *req, struct rt_rng *rng, struct rt_buf *out);

/* rt_frame_pg.c, rt_frame_pg_sql.c: PostgreSQL, whose startup and prepared
 * statements are state of the connection. */
#define RT_PG_STMTS 32		/* prepared statements remembered, by name hash */
#define RT_PG_COLS_MAX 64	/* columns of a result */
#define RT_PG_WORD_MAX 32	/* longest first keyword looked at */
enum { RT_PG_TXN_KEEP, RT_PG_TXN_OPEN, RT_PG_TXN_CLOSE };
struct rt_pg_kw {
	const char *word, *tag;
	unsigned char rows, txn;
};
struct rt_pg_stmt {
	unsigned kw, cols;	/* rt_pg_kw() index; columns when it returns rows */
	const char *word;	/* the first keyword, in the client's bytes */
	size_t wordlen;
	bool empty;
};
struct rt_pg_conn {
	bool in_txn;
	uint8_t kw[RT_PG_STMTS], cols[RT_PG_STMTS];
};
const struct rt_pg_kw *rt_pg_kw(unsigned idx);
struct rt_pg_stmt rt_pg_classify(const char *s, size_t n);
size_t rt_pg_statement_len(const char *s, size_t n);
long rt_pg_cut(struct rt_conn *c, const char *p, size_t n, struct rt_req *req);
int rt_pg_respond(struct rt_conn *c, const struct rt_req *req, struct rt_rng *rng, struct rt_buf *out);

/* rt_frame_my.c, rt_frame_my_hello.c, rt_frame_my_reply.c: MySQL/MariaDB,
 * whose server speaks first and whose prepared statements are state of
 * the connection. Statement text is read with rt_pg_classify(): SQL's
 * first keyword and select list are the same question in both. */
#define RT_MY_STMTS 32		/* prepared statements remembered, by id */
#define RT_MY_PACKET_MAX 0xfffffeu	/* largest payload of one packet built */
enum { RT_MY_HELLO, RT_MY_SWITCHED, RT_MY_COMMANDS };	/* rt_conn.proto */
enum { RT_MY_OP_AUTH_OK = 0x100, RT_MY_OP_AUTH_SWITCH };	/* else the command byte */
struct rt_my_stmt {
	uint32_t id;		/* 0: a free slot */
	uint16_t params;
	uint8_t cols, txn;	/* columns of its result; RT_PG_TXN_* */
};
struct rt_my_conn {
	bool in_txn;
	uint32_t next_id;
	double owed;	/* bytes sent beyond the sizes drawn (rt_my_fit) */
	struct rt_my_stmt stmts[RT_MY_STMTS];
};
/* A reply's packets: their sequence numbers, the first row's value that
 * rt_my_fit() grows, and the cap of the whole answer. */
struct rt_my_reply {
	struct rt_buf *out;
	size_t row, val;	/* offsets of the row packet and its value's length */
	size_t limit;
	uint8_t seq;
	bool have_row;
	int err;
};
void rt_my_put(struct rt_my_reply *r, const void *p, size_t n);
void rt_my_put_le(struct rt_my_reply *r, uint64_t v, int bytes);
void rt_my_put_lenenc(struct rt_my_reply *r, uint64_t v);
size_t rt_my_begin(struct rt_my_reply *r);	/* a packet; its length set by rt_my_end() */
void rt_my_end(struct rt_my_reply *r, size_t at);
uint16_t rt_my_status(const struct rt_conn *c);
void rt_my_ok(struct rt_my_reply *r, const struct rt_conn *c, uint64_t affected);
void rt_my_eof(struct rt_my_reply *r, const struct rt_conn *c);
void rt_my_error(struct rt_my_reply *r, unsigned code, const char *state, const char *msg);
void rt_my_columns(struct rt_my_reply *r, const struct rt_conn *c, unsigned n);	/* defs + EOF */
void rt_my_row(struct rt_my_reply *r, unsigned cols, bool binary);	/* value "1", others NULL */
void rt_my_fit(struct rt_my_reply *r, struct rt_my_conn *my, size_t start, struct rt_rng *rng);
int rt_my_greet(struct rt_conn *c, struct rt_buf *out);
/* The connection phase's packet (body of n bytes): 0, or -1 if malformed. */
int rt_my_cut_hello(struct rt_conn *c, const char *body, size_t n, uint8_t seq, struct rt_req *req);
void rt_my_auth_switch(struct rt_my_reply *r);
long rt_my_cut(struct rt_conn *c, const char *p, size_t n, struct rt_req *req);
bool rt_my_needs_more(const char *p, size_t n);	/* from the packet header alone */
int rt_my_respond(struct rt_conn *c, const struct rt_req *req, struct rt_rng *rng, struct rt_buf *out);

/* What a server-speaks-first framing sends on accept; 0 or -ENOMEM. */
int rt_frame_greet(struct rt_conn *c, struct rt_buf *out);

/* ---- rt_conn.c: one connection's buffers and state ---- */
/* RT_WANT_PARK: a request waits for its calls (rt_park.c), nothing is
 * read or written until it is answered. */
enum rt_want { RT_WANT_READ, RT_WANT_WRITE, RT_WANT_CLOSE, RT_WANT_PARK };

struct rt_conn {
	int fd;
	size_t slot;		/* index in the owning worker's list */
	struct rt_buf in, out;
	size_t out_off;		/* bytes of out already sent */
	enum rt_want want;	/* what the connection waits for */
	bool closing;		/* close once out is sent */
	bool held;		/* on its thread's held list */
	uint8_t proto;		/* memcache: 0 undecided, 1 text, 2 binary;
				 * postgres: 0 before the StartupMessage, 1 after;
				 * mysql: RT_MY_HELLO, RT_MY_SWITCHED, RT_MY_COMMANDS */
	union {			/* transaction, prepared statements */
		struct rt_pg_conn pg;
		struct rt_my_conn my;
	};
	/* rt_conn_cap.c: when it last became idle (0: a request in
	 * progress), set by its thread; its registry slot and whether it
	 * was shut down for room, under the cap's lock */
	_Atomic uint64_t idle_since;
	size_t cap_slot;
	bool cap_shut;
	struct rt_park *park;	/* its parked request (rt_park.c) */
	uint32_t events;	/* what its epoll set watches (0: not in it) */
};
struct rt_conn *rt_conn_new(int fd);
/* Once accepted and set up: what the framing sends first (MySQL's
 * handshake); want is RT_WANT_WRITE if it did not all go, CLOSE on error. */
void rt_conn_greet(struct rt_conn *c);
void rt_conn_free(struct rt_conn *c);	/* closes the fd */
enum rt_want rt_conn_readable(struct rt_conn *c, struct rt_thread *t);
enum rt_want rt_conn_read_all(struct rt_conn *c, struct rt_thread *t);
enum rt_want rt_conn_writable(struct rt_conn *c, struct rt_thread *t);
/* The parked req (len bytes at the input's start) answered now that its
 * calls ended, then the requests after it served; c->want is set. */
void rt_conn_resume(struct rt_conn *c, struct rt_thread *t, const struct rt_req *req, long len);
/* Blocking reads and writes until it closes or the clone stops. */
void rt_conn_serve_blocking(struct rt_conn *c, struct rt_thread *t);
/* The same for an accepted socket: set up, greeted, served, closed. */
void rt_conn_serve_blocking_fd(int fd, struct rt_thread *t);
/* Start a wake-up: whether its responses are held (rt_net.hold_share). */
void rt_conn_hold_begin(struct rt_thread *t);
/* Write the held responses of t; each connection's new want is set, and
 * changed(c) is called for each whose want is no longer RT_WANT_READ. */
void rt_conn_hold_flush(struct rt_thread *t, void (*changed)(struct rt_conn *c, void *arg),
			void *arg);
/* Forget c if it is held (it is being dropped). */
void rt_conn_hold_forget(struct rt_thread *t, struct rt_conn *c);

/* ---- rt_conn_cap.c: connections capped below the descriptor limit ---- */
void rt_conn_cap_init(void);	/* raises the soft limit, derives the cap */
void rt_conn_cap_fini(void);
/* accept4() under the cap: the socket, or -1 with errno ECONNABORTED (one
 * was taken and refused), EMFILE, ENFILE, ENOBUFS, ENOMEM (after a pause:
 * try again at once) or accept4's other errors. */
int rt_conn_cap_accept(int lfd, int flags);
bool rt_conn_cap_goes_on(int err);	/* an accept error an acceptor waits out */
void rt_conn_cap_close_fd(int fd);	/* an accepted socket that is no rt_conn */
void rt_conn_cap_add(struct rt_conn *c);	/* by rt_conn_new */
void rt_conn_cap_close(struct rt_conn *c);	/* by rt_conn_free: forgets c, closes its socket */
void rt_conn_cap_mark(struct rt_conn *c, bool idle);	/* by c's thread */

/* ---- rt_worker.c: a serving thread's connections ---- */
struct rt_worker {
	unsigned index;
	struct rt_thread t;
	const int *lfd;		/* listen sockets this worker accepts on */
	unsigned nlfd;
	int fd_limit;		/* connections at or above it are refused (select) */
	int notify_fd;		/* eventfd written when fds are queued (dispatch, shared), else -1 */
	pthread_mutex_t qlock;	/* dispatch queue */
	int *q;
	size_t qlen, qcap;
	atomic_size_t queued;	/* qlen, readable without the lock (busypoll) */
	struct rt_conn **conns;
	size_t nconns, conncap;
	struct rt_worker *pool;	/* all workers of the process */
	unsigned npool;
	bool shared;		/* its listen socket is other workers' too */
	bool single;		/* its loop ends when its connection closes (done) */
	bool done;
	pthread_t tid;
	bool started;
};
typedef void (*rt_loop_fn)(struct rt_worker *w);

struct rt_conn *rt_worker_accept(struct rt_worker *w, int lfd, bool *again);
struct rt_conn *rt_worker_adopt(struct rt_worker *w, int fd);
unsigned rt_worker_accept_burst(const struct rt_worker *w);	/* accepts per readiness */
void rt_worker_drop(struct rt_worker *w, struct rt_conn *c);
bool rt_worker_running(const struct rt_worker *w);	/* its loop goes on */
/* A worker of its own that serves one connection at a time with the io's
 * loop: a child forked for it, a serial server's thread (rt_config). */
int rt_worker_init_one(struct rt_worker *w, uint64_t stream);
void rt_worker_serve_one(struct rt_worker *w, int fd);
void rt_worker_fini_one(struct rt_worker *w);
bool rt_worker_service(struct rt_worker *w, struct rt_conn *c, bool readable, bool writable);
void rt_worker_push(struct rt_worker *w, int fd);
size_t rt_worker_take(struct rt_worker *w, int *fds, size_t max);

/* ---- rt_park.c: requests parked on their sync calls (epoll) ---- */
/* epoll data of a call's socket: this bit and its fd (no address of a
 * connection has it) */
#define RT_PARK_TAG (1ull << 63)
struct rt_parker;
/* w's parker on its epoll set ep, if its requests make calls. */
struct rt_parker *rt_park_open(struct rt_worker *w, int ep);
void rt_park_close(struct rt_parker *pk);	/* parked requests dropped */
/* The current request's async calls, made from the loop (a park of no
 * connection, freed when they end); false: not made (no memory). */
bool rt_park_async(struct rt_parker *pk);
/* After body and replay: true when req (len bytes at base in c's input)
 * waits for its calls (c->park set); false: they all ended, answer now. */
bool rt_park_request(struct rt_parker *pk, struct rt_conn *c, const struct rt_req *req,
		     long len, const char *base);
void rt_park_event(struct rt_parker *pk, uint64_t data);	/* a call's socket is ready */
int rt_park_timeout_ms(const struct rt_parker *pk);	/* to the first deadline; -1: none */
bool rt_park_pending(const struct rt_parker *pk);	/* calls in flight (none: NULL) */
void rt_park_expire(struct rt_parker *pk);	/* calls past their deadline end */
void rt_park_dying(struct rt_parker *pk);	/* answered connections that close, dropped */
void rt_park_cancel(struct rt_parker *pk, struct rt_conn *c);	/* c is dropped */
/* rt_net_epoll.c: c's events in the set follow its want (closes drop it). */
void rt_net_epoll_rewatch(struct rt_worker *w, int ep, struct rt_conn *c);
/* The same without the drop: false when the set refused it. */
bool rt_net_epoll_watch(int ep, struct rt_conn *c);

/* ---- the skeletons ---- */
void rt_net_epoll_loop(struct rt_worker *w);
void rt_net_poll_loop(struct rt_worker *w);
void rt_net_select_loop(struct rt_worker *w);
void rt_net_busypoll_loop(struct rt_worker *w);
int rt_net_pool_run(const int *lfd, unsigned nlfd, unsigned proc);
int rt_net_blocking_run(int lfd, unsigned proc);
int rt_net_accepting_run(int lfd, unsigned proc);	/* blocking, no dispatch */
int rt_net_handoff_run(int lfd, unsigned proc);	/* blocking pool, dispatch */
int rt_net_forking_run(int lfd, unsigned proc);	/* a process per connection */
rt_loop_fn rt_net_loop_of(enum rt_io io);

/* rt_net_dispatch.c: hands accepted sockets round robin to the workers. */
struct rt_acceptor {
	int lfd;
	struct rt_worker *w;
	unsigned nw;
	pthread_t tid;
	bool started;
	atomic_bool done;
};
void *rt_net_dispatch_acceptor(void *arg);
/* The acceptor's wait for its listen socket, as rt_config.accept_wait
 * says; epfd from rt_acceptor_epoll() (-1 unless it waits in epoll). */
int rt_acceptor_epoll(int lfd);
void rt_acceptor_wait(int lfd, int epfd);
/* The same with the signal mask `during` for the wait alone (NULL: the
 * plain calls); false: no wait (accept4() itself blocks). */
bool rt_acceptor_wait_sig(int lfd, int epfd, const sigset_t *during);
/* ---- rt_listen.c, rt_process.c, rt_prefork.c, rt_background.c ---- */
unsigned rt_listen_count(unsigned processes);	/* listen sockets to open */
int rt_listen_open(uint16_t port, unsigned n, int *fds);	/* 0, -EADDRINUSE or -1 */
extern int rt_ready_fd;	/* pre-forked child: tells the parent instead of stdout */
void rt_announce_ready(void);	/* once serving: "ready" */
int rt_process_run(const int *lfd, unsigned nlfd, unsigned proc);
int rt_prefork_run(const int *lfd, unsigned nlfd);
int rt_background_start(void);
void rt_background_stop(void);
void rt_background_served(void);	/* a request was served */

/* An eventfd write (write_it) or read of the process's replay eventfd
 * (rt_eventfd.c): both succeed. */
void rt_eventfd_call(bool write_it);

/* A sleep until woken, on a futex word of the sleeper's (rt_doze.c):
 * prepare, look for work a last time, then wait or cancel; a waker
 * publishes its work, then wakes. Zeroed: awake. */
struct rt_doze {
	_Atomic uint32_t seq;
	atomic_bool sleeping;
};
uint32_t rt_doze_prepare(struct rt_doze *d);
void rt_doze_wait(struct rt_doze *d, uint32_t seq);
void rt_doze_cancel(struct rt_doze *d);
void rt_doze_wake(struct rt_doze *d);
uint64_t rt_now_ns(void);	/* CLOCK_MONOTONIC */
void rt_spin(uint64_t ns);	/* CPU busy for ns, or until the stop */
const struct rt_background *rt_background_main(void);	/* the class "main", or NULL */
/* rt_wait.c: waits in how's call until deadline (0: until done()). */
int rt_wait_open(enum rt_wait how);	/* an epoll set, or -1 */
void rt_wait_once(enum rt_wait how, int ep, int ms);	/* one call, ms -1: no timeout */
void rt_wait_until(enum rt_wait how, int ep, uint64_t deadline, bool (*done)(void));

void rt_main_thread_run(void);	/* rt_main_thread.c */

/* rt_share.c: connections per process on one shared listen socket. */
int rt_share_init(unsigned procs);	/* the parent, before forking */
void rt_share_enter(unsigned proc);	/* a child: which count is its own */
void rt_share_count(int delta);	/* a connection adopted (+1) or dropped (-1) */
void rt_share_leave(unsigned proc);	/* proc exits: it takes no share */
bool rt_share_accepting(void);	/* false: leave the next ones to the others */
/* A process that does not accept looks again this often: the others'
 * accepts, which may make it the least loaded, do not wake it. */
#define RT_SHARE_LOOK_MS 50
int rt_share_kick_fd(void);	/* -1 unless shared: EPOLLET in every set */
/* The others look at the socket's queue again, if a connection waits. */
void rt_share_kick_queued(const int *lfd, unsigned n);

#endif /* DITTO_RT_INT_H */
