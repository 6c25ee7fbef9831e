/* SPDX-License-Identifier: MIT */
/*
 * A service of the model -> clone_config.c, the one `struct rt_config` the
 * clone runtime reads (lib/runtime/rt.h): skeleton, framing, response
 * sizes, the per-request syscall replay table and background classes.
 * Only statistics go in: no payload, no code, no addresses.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core_int.h"
#include "synth_int.h"
#include "replay_map.h"

#include <ditto/model.h>

#define MAX_CALLS 64
#define SCRATCH_MIN (1u << 20)

struct cfg {
	const struct ditto_service *s;
	const struct config_in *in;
	struct synth_knobs k;	/* in->knobs, or the defaults */
	struct synth_limits *lim, own;	/* in->limits, or own */
	uint64_t procs, threads;	/* processes, serving threads of each */
	bool forks;		/* a process per connection (rt.h) */
	bool serial;		/* serial connections of an event loop (model.h) */
	bool master;		/* a parent serving nothing forks the serving processes */
	enum ditto_io_model io;	/* the serving threads' (io_name()) */
	uint64_t bg_budget;	/* background threads a process may have */
	struct dbuf *out;
	const struct ditto_thread_class *serving;
	unsigned nhist;
	double requests;
	int err;	/* the first number or name that cannot be written */
};

/* Largest figure written into a uint64_t field (a double's nearest below 2^64). */
#define U64_FIELD_MAX 1.8e19

/*
 * v, checked before it is printed into an initializer: a NaN or an
 * infinity would print as `nan` or `inf` (identifiers to the compiler),
 * and a figure past its field's range would not compile or would wrap.
 * Validation keeps a model's own numbers finite; this guards what the
 * generator derives from them (ratios, periods, knob products). A bad
 * figure fails the generation: a clone built from a silently repaired
 * one would not be what the model says.
 */
static double num(struct cfg *g, const char *what, double v, double max)
{
	if (isfinite(v) && v >= 0 && v <= max)
		return v;
	if (!g->err)
		g->err = ditto_err(-DITTO_EINVALID,
				   "synth: %s is %g, not a finite number in [0, %g]", what, v, max);
	return 0;
}

/* A model string as an escaped literal (c_literal()); the first refusal
 * is kept and fails the generation. */
static void lit(struct cfg *g, struct dbuf *b, const char *s)
{
	int err = c_literal(b, s);

	if (err && !g->err)
		g->err = err;
}

/* The class that reads requests from TCP sockets the most, else the first
 * network or worker class, else the first class. */
static const struct ditto_thread_class *serving_class(const struct ditto_service *s)
{
	const struct ditto_thread_class *best = NULL, *fallback = NULL;
	uint64_t best_calls = 0;

	for (size_t i = 0; i < ditto_service_syscall_count(s); i++) {
		const struct ditto_syscall *c = ditto_service_syscall(s, i);
		enum ditto_fd_kind k = ditto_syscall_fd_kind(c);

		if ((k == DITTO_FD_TCP || k == DITTO_FD_UNIX) && replay_is_net_read(ditto_syscall_name(c)) &&
		    ditto_syscall_calls(c) > best_calls) {
			best = ditto_service_find_thread(s, ditto_syscall_thread_class(c));
			best_calls = best ? ditto_syscall_calls(c) : 0;
		}
	}
	for (size_t i = 0; !best && i < ditto_service_thread_count(s); i++) {
		const struct ditto_thread_class *t = ditto_service_thread(s, i);
		enum ditto_role r = ditto_thread_class_role(t);

		if (!fallback)
			fallback = t;
		if (r == DITTO_ROLE_NETWORK || r == DITTO_ROLE_WORKER)
			best = t;
	}
	return best ? best : fallback;
}

static bool in_class(const struct cfg *g, const struct ditto_syscall *c)
{
	return g->serving &&
	       !strcmp(ditto_syscall_thread_class(c), ditto_thread_class_name(g->serving));
}

/* How a model bucket (an inclusive range) becomes a runtime one (half-open):
 * shifted down by `minus` then multiplied by `scale` (0: 1), or, with
 * `point`, narrowed to the one value at relative place `at` inside it. */
struct bucket_map {
	uint64_t minus;
	double scale;
	bool point;
	double at;
	uint64_t max;	/* > 0: no value above it */
};

static uint64_t less(uint64_t v, uint64_t minus, double scale)
{
	double r = (double)(v > minus ? v - minus : 0) * (scale > 0 ? scale : 1);

	return r >= 1.8e19 ? UINT64_MAX - 1 : (uint64_t)r;
}

static void map_bucket(const struct bucket_map *m, uint64_t lo, uint64_t hi, uint64_t out[2])
{
	if (m->point) {
		out[0] = lo + (uint64_t)llround(m->at * (double)(hi - lo));
		out[1] = out[0] + 1;
		return;
	}
	out[0] = less(lo, m->minus, m->scale);
	out[1] = hi == UINT64_MAX ? hi : less(hi, m->minus, m->scale) + 1;
	if (m->max && out[1] > m->max + 1) {
		out[0] = out[0] > m->max ? m->max : out[0];
		out[1] = m->max + 1;
	}
}

/* Emits the lo/hi/cum arrays of h and returns their index; the
 * initializer is written by hist_ref(). */
static unsigned hist_emit(struct cfg *g, const struct ditto_hist *h, const struct bucket_map *m)
{
	size_t n = h ? ditto_hist_bucket_count(h) : 0;
	unsigned id = g->nhist++;
	uint64_t cum = 0;

	for (int pass = 0; n && pass < 3; pass++) {
		dbuf_printf(g->out, "static const uint64_t h%u_%s[] = {", id,
			    pass == 0 ? "lo" : pass == 1 ? "hi" : "cum");
		for (size_t i = 0; i < n; i++) {
			uint64_t lo, hi, c, r[2];

			ditto_hist_bucket(h, i, &lo, &hi, &c);
			map_bucket(m, lo, hi, r);
			cum += pass == 2 ? c : 0;
			dbuf_printf(g->out, "%s%lluULL", i ? ", " : " ",
				    (unsigned long long)(pass < 2 ? r[pass] : cum));
		}
		dbuf_puts(g->out, " };\n");
	}
	return id;
}

static unsigned hist_arrays(struct cfg *g, const struct ditto_hist *h)
{
	return hist_emit(g, h, &(struct bucket_map){ 0 });
}

/*
 * h's buckets, each narrowed to one value at the same relative place
 * inside it, chosen so that the mean is `mean` (the exact figure the
 * profiler counted): log2 buckets alone would put a 132-byte response
 * anywhere in [128, 255].
 */
static unsigned hist_arrays_at_mean(struct cfg *g, const struct ditto_hist *h, double mean)
{
	struct bucket_map m = { .point = true, .at = synth_mean_point(h, mean) };

	return hist_emit(g, h, &m);
}

static void hist_ref(struct cfg *g, unsigned id, const struct ditto_hist *h, uint64_t dflt,
		     struct dbuf *b)
{
	size_t n = h ? ditto_hist_bucket_count(h) : 0;

	(void)g;
	if (!n || !ditto_hist_total(h))
		dbuf_printf(b, "{ .n = 0, .dflt = %lluULL }", (unsigned long long)dflt);
	else
		dbuf_printf(b, "{ .n = %zu, .lo = h%u_lo, .hi = h%u_hi, .cum = h%u_cum, .dflt = %lluULL }",
			    n, id, id, id, (unsigned long long)dflt);
}

static const char *framing_name(enum ditto_framing f)
{
	switch (f) {
	case DITTO_FRAMING_HTTP1: return "RT_FRAMING_HTTP1";
	case DITTO_FRAMING_RESP: return "RT_FRAMING_RESP";
	case DITTO_FRAMING_MEMCACHE_TEXT: return "RT_FRAMING_MEMCACHE_TEXT";
	case DITTO_FRAMING_MEMCACHE_BINARY: return "RT_FRAMING_MEMCACHE_BINARY";
	case DITTO_FRAMING_LENGTH_PREFIXED: return "RT_FRAMING_LENGTH_PREFIXED";
	case DITTO_FRAMING_POSTGRES: return "RT_FRAMING_POSTGRES";
	case DITTO_FRAMING_MYSQL: return "RT_FRAMING_MYSQL";
	default: return "RT_FRAMING_RAW";
	}
}

static const char *io_name(enum ditto_io_model io)
{
	switch (io) {
	case DITTO_IO_BLOCKING: return "RT_IO_BLOCKING";
	case DITTO_IO_NONBLOCKING: return "RT_IO_BUSYPOLL";
	case DITTO_IO_POLL: return "RT_IO_POLL";
	case DITTO_IO_SELECT: return "RT_IO_SELECT";
	default: return "RT_IO_EPOLL";
	}
}

/* Async calls per request the clone's async caller thread makes, with
 * its waits and futex calls: none where the serving threads run an epoll
 * loop, which makes them itself and reads their replies in its waits
 * (rt_park.c), as node does. */
static double caller_async_calls(const struct cfg *g)
{
	if (!strcmp(io_name(g->io), "RT_IO_EPOLL"))
		return 0;
	return upstream_async_calls(g->in->model, g->s);
}

/* iovecs per vectored write: the model's mean, rounded (2 when it has
 * none); the runtime takes at most 64. */
static unsigned write_iovecs(struct cfg *g, const struct ditto_syscall *wr)
{
	uint64_t calls = ditto_syscall_calls(wr), iov = ditto_syscall_iovecs_total(wr);

	if (!calls || !iov)
		return 2;
	return (unsigned)num(g, "iovecs per write", fmin(fmax(round((double)iov / calls), 1), 64), 64);
}

/*
 * The share of a request's time the original spent after its response
 * (requests.after_response_ns over that plus service_ns, both means of
 * wall time): the clone runs that share of its body after the response.
 * A simplification: the replayed calls stay before the response, and
 * time a thread waited for the CPU counts as work on either side. The
 * service time starts at the entry of the request's first read, so a
 * blocking server's includes its wait for the request, and its share
 * comes out low.
 */
static double after_response_share(struct cfg *g)
{
	const struct ditto_requests *r = ditto_service_requests(g->s);
	const struct ditto_hist *after = ditto_requests_after_response_ns(r);
	const struct ditto_hist *svc = ditto_requests_service_ns(r);
	double a, s;

	if (!ditto_hist_total(after) || !ditto_hist_total(svc))
		return 0;
	a = ditto_hist_mean(after);
	s = ditto_hist_mean(svc);
	return a + s > 0 ? num(g, "the share of work after the response", a / (a + s), 1) : 0;
}

/*
 * A request's head read alone (rt_net.head_read): when the original's
 * successful socket reads were 1.5 or more per request and its most
 * common read size bucket starts below 64 bytes (a header of known
 * size, then its payload), that bucket's lower bound.
 */
static unsigned head_read(struct cfg *g, const struct ditto_syscall *rd)
{
	uint64_t mode;

	if (!rd || !(g->requests > 0) ||
	    (double)(ditto_syscall_calls(rd) - ditto_syscall_errors(rd)) / g->requests < 1.5)
		return 0;
	mode = replay_mode(ditto_syscall_size(rd), 0);
	return mode < 64 ? (unsigned)mode : 0;
}

/* The busiest socket read and write calls of the serving class and the
 * multiplexer's event count. */
static void net_section(struct cfg *g, struct dbuf *b)
{
	const struct ditto_syscall *rd = NULL, *wr = NULL, *mux = NULL;
	double wpr = 1, accept_again = 0, waits = 0;

	for (size_t i = 0; i < ditto_service_syscall_count(g->s); i++) {
		const struct ditto_syscall *c = ditto_service_syscall(g->s, i);
		const char *name = ditto_syscall_name(c);
		enum ditto_fd_kind k = ditto_syscall_fd_kind(c);
		bool sock = k == DITTO_FD_TCP || k == DITTO_FD_UNIX || k == DITTO_FD_UDP;

		if (!in_class(g, c))
			continue;
		if (sock && replay_is_net_read(name) && (!rd || ditto_syscall_calls(c) > ditto_syscall_calls(rd)))
			rd = c;
		if (sock && replay_is_net_write(name) && (!wr || ditto_syscall_calls(c) > ditto_syscall_calls(wr)))
			wr = c;
		if (!strncmp(name, "epoll_wait", 10) || !strncmp(name, "epoll_pwait", 11)) {
			mux = c;
			waits += g->requests > 0 ? ditto_syscall_calls(c) / g->requests : 0;
		}
		if (sock && (!strcmp(name, "accept4") || !strcmp(name, "accept")) && g->requests > 0)
			accept_again += ditto_syscall_errors(c) / g->requests;
	}
	/* The original read its async calls' replies in these waits; a
	 * clone's async caller thread waits for them in its own (about one
	 * poll per call), which the serving thread does not owe again. */
	waits = fmax(0, waits - caller_async_calls(g));
	/* Owed waits are measured to help a graph's tiers (node's loop);
	 * a lone redis clone owed none and went 22% over its syscalls per
	 * request with them (scripts/quickstart.sh): not yet understood. */
	if (!upstream_in_graph(g->in->model, g->s))
		waits = 0;
	if (wr && g->requests > 0)
		wpr = synth_limit(g->lim, SYNTH_LIMIT_WRITES,
				  fmax(1.0, ditto_syscall_calls(wr) / g->requests));
	/* No comment names the calls: comments hold no model string (a name
	 * holding its end marker would turn the rest into code). */
	dbuf_printf(b, "\t.net = {\n\t\t.read_nr = %ld,\n\t\t.read_size = %u,\n\t\t.head_read = %u,\n"
		    "\t\t.write_nr = %ld,\n\t\t.write_iov = %u,\n"
		    "\t\t.writes_per_request = %.4f,\n\t\t.epoll_events = %u,\n"
		    "\t\t.hold_share = %.4f,\n\t\t.again_per_request = %.6f,\n"
		    "\t\t.accept_again_per_request = %.6f,\n"
		    "\t\t.after_response_share = %.4f,\n\t\t.waits_per_request = %.6f,\n"
		    "\t\t.wake_share = %.4f,\n\t},\n",
		    rd ? replay_nr(ditto_syscall_name(rd)) : 0L,
		    rd ? replay_read_size(ditto_syscall_size(rd)) : 16384u, head_read(g, rd),
		    wr ? replay_nr(ditto_syscall_name(wr)) : 1L,
		    wr && replay_is_vectored(ditto_syscall_name(wr)) ? write_iovecs(g, wr) : 1u,
		    num(g, "writes per request", wpr, 1e9),
		    mux ? (unsigned)fmax(1, (double)replay_mode(ditto_syscall_size(mux), 64)) : 64u,
		    num(g, "the knob synth.hold_share", g->k.hold_share, 1),
		    num(g, "failed socket reads per request",
			rd && g->requests > 0 ? synth_limit(g->lim, SYNTH_LIMIT_CALLS,
							    ditto_syscall_errors(rd) / g->requests) : 0,
			1e12),
		    num(g, "failed accept calls per request",
			synth_limit(g->lim, SYNTH_LIMIT_CALLS, accept_again), 1e12),
		    after_response_share(g),
		    num(g, "epoll waits per request",
			synth_limit(g->lim, SYNTH_LIMIT_CALLS, waits), 1e12),
		    num(g, "the knob synth.wake_share", g->k.wake_share, 1));
	if (!rd || !wr)
		ditto_warn("synth: %s: no socket %s in the model's syscalls: the clone uses %s",
			   ditto_service_name(g->s), !rd ? "reads" : "writes", !rd ? "read()" : "write()");
}

/* Sizes past what the runtime moves in one replayed call: named, as the
 * runtime caps them. */
static void runtime_caps(struct cfg *g, const struct replay_entry *e, const struct ditto_hist *size)
{
	double top = ditto_hist_quantile(size, 1.0);

	if (e->file && !strcmp(e->kind, "RT_REPLAY_MMAP_FILE"))
		synth_limit(g->lim, SYNTH_LIMIT_MMAP, top);
	else if (e->file)
		synth_limit(g->lim, SYNTH_LIMIT_FILE_CALL, top);
	else if (!strcmp(e->kind, "RT_REPLAY_SLEEP"))
		synth_limit(g->lim, SYNTH_LIMIT_SLEEP, top);
	else if (!strcmp(e->kind, "RT_REPLAY_MMAP"))
		synth_limit(g->lim, SYNTH_LIMIT_MMAP, top);
	else if (!strcmp(e->kind, "RT_REPLAY_MPROTECT") || !strcmp(e->kind, "RT_REPLAY_MADVISE"))
		synth_limit(g->lim, SYNTH_LIMIT_PAGES, top);
}

/* `.fail = { ... }`: the shares of c's calls that fail, by errno. */
static void fail_list(struct cfg *g, const struct ditto_syscall *c, const struct replay_entry *e,
		      struct dbuf *b)
{
	struct synth_fail f[SYNTH_FAILS];
	unsigned n = synth_fails(ditto_service_name(g->s), c, e, f);

	dbuf_puts(b, " .fail = {");
	for (unsigned k = 0; k < n; k++)
		dbuf_printf(b, " { %d /* %s */, %.6f },", f[k].err, strerrorname_np(f[k].err),
			    num(g, "the failed share of a call", fmin(f[k].share, 1), 1));
	dbuf_puts(b, " } },\n");
}

/* A blocking pool fed by a listener (the runtime's rt_net_handoff.c):
 * its threads wait and are woken on a condition variable, so the
 * serving class's futex calls are the skeleton's own, not replayed. */
static bool skeleton_futex(const struct ditto_service *s, const struct replay_entry *e)
{
	const struct ditto_network *net = ditto_service_network(s);

	return net && !strcmp(e->kind, "RT_REPLAY_FUTEX_WAKE") &&
	       ditto_network_io_model(net) == DITTO_IO_BLOCKING &&
	       ditto_network_network_dispatch(net) && ditto_network_network_threads(net);
}

/*
 * Calls per request of c to replay. The runtime's async caller (not an
 * epoll loop's: caller_async_calls()) makes futex calls of its own, up to
 * two per async call (the serving thread's wake-up, the caller's wait):
 * the original made none of those (node makes its async calls on its
 * event loop), so its serving class's futex calls replay less by them
 * (*owed: what is left to take off).
 * So do the serving threads' wake-ups of paced background classes
 * (bg_pacing.c): those were among the original's futex calls.
 */
static double replay_rate(const struct cfg *g, const struct ditto_syscall *c,
			  const struct replay_entry *e, double *owed)
{
	double rate = ditto_syscall_calls(c) / g->requests, off;

	if (strcmp(e->kind, "RT_REPLAY_FUTEX_WAKE"))
		return rate;
	off = fmin(rate, *owed);
	*owed -= off;
	return rate - off;
}

/* The rt_call entry of c at `rate` calls per request (per wake-up in a
 * background class's table); *scratch grows to what its file calls reach. */
static void call_entry(struct cfg *g, struct dbuf *b, const struct ditto_syscall *c,
		       const struct replay_entry *e, double rate, uint64_t *scratch)
{
	unsigned hs = hist_arrays(g, ditto_syscall_size(c)), ho = hist_arrays(g, ditto_syscall_offset(c));

	dbuf_puts(b, "\t{ .name = ");
	lit(g, b, ditto_syscall_name(c));
	dbuf_printf(b, ", .nr = %ld, .kind = %s, .per_request = %.6f,\n\t  .size = ",
		    e->nr, e->kind, num(g, "calls per request",
					synth_limit(g->lim, SYNTH_LIMIT_CALLS, rate), 1e12));
	runtime_caps(g, e, ditto_syscall_size(c));
	hist_ref(g, hs, ditto_syscall_size(c), e->file ? 4096 : 0, b);
	dbuf_puts(b, ",\n\t  .offset = ");
	hist_ref(g, ho, ditto_syscall_offset(c), 0, b);
	dbuf_printf(b, ",\n\t  .sequential = %.4f, .iovcnt = %u, .positional = %s,",
		    num(g, "the sequential share of a call", !ditto_syscall_calls(c) ? 0 :
			(double)ditto_syscall_sequential(c) / ditto_syscall_calls(c), 1e12),
		    e->iovcnt, e->positional ? "true" : "false");
	fail_list(g, c, e, b);
	if (e->file) {
		double reach = ditto_hist_quantile(ditto_syscall_offset(c), 1.0) +
			       ditto_hist_quantile(ditto_syscall_size(c), 1.0);

		*scratch = reach > *scratch ? (uint64_t)reach : *scratch;
		*scratch = *scratch < SCRATCH_MIN ? SCRATCH_MIN : *scratch;
	}
}

/* One replay entry per modelled call the skeleton does not make itself. */
static unsigned calls_section(struct cfg *g, struct dbuf *b, uint64_t *scratch)
{
	double owed_futex = 2 * caller_async_calls(g) +
			    bg_signals_per_request(g->s, g->serving, g->requests, g->k.background_rate);
	unsigned n = 0;

	dbuf_puts(b, "static const struct rt_call calls[] = {\n");
	for (size_t i = 0; i < ditto_service_syscall_count(g->s) && n < MAX_CALLS; i++) {
		const struct ditto_syscall *c = ditto_service_syscall(g->s, i);
		struct replay_entry e;

		if (!in_class(g, c) || g->requests <= 0 ||
		    replay_map(ditto_syscall_name(c), ditto_syscall_fd_kind(c), &e) ||
		    skeleton_futex(g->s, &e))
			continue;
		call_entry(g, b, c, &e, replay_rate(g, c, &e, &owed_futex), scratch);
		n++;
	}
	if (!n)
		dbuf_puts(b, "\t{ .name = \"none\" },\n");
	dbuf_puts(b, "};\n");
	return n;
}

/* A background class's calls replayed per wake-up: those replay_map()
 * knows but the ones the runtime makes for the class already (its sleep,
 * its futex calls: futex_per_wake; its eventfd writes). */
static bool bg_replayed(const struct replay_entry *e)
{
	return strcmp(e->kind, "RT_REPLAY_SLEEP") && strcmp(e->kind, "RT_REPLAY_FUTEX_WAKE") &&
	       strcmp(e->kind, "RT_REPLAY_EVENTFD_READ") && strcmp(e->kind, "RT_REPLAY_EVENTFD_WRITE");
}

/* Class t's table (bg_calls<idx>[]) of calls per wake-up; its length. */
static unsigned bg_calls(struct cfg *g, struct dbuf *b, const struct ditto_thread_class *t,
			 unsigned idx, uint64_t *scratch)
{
	uint64_t wake = ditto_thread_class_wakeups(t);
	unsigned n = 0;

	for (size_t i = 0; wake && i < ditto_service_syscall_count(g->s) && n < MAX_CALLS; i++) {
		const struct ditto_syscall *c = ditto_service_syscall(g->s, i);
		struct replay_entry e;

		if (strcmp(ditto_syscall_thread_class(c), ditto_thread_class_name(t)) ||
		    replay_map(ditto_syscall_name(c), ditto_syscall_fd_kind(c), &e) || !bg_replayed(&e))
			continue;
		if (!n)
			dbuf_printf(b, "static const struct rt_call bg_calls%u[] = {\n", idx);
		call_entry(g, b, c, &e, (double)ditto_syscall_calls(c) / (double)wake, scratch);
		n++;
	}
	if (n)
		dbuf_puts(b, "};\n");
	return n;
}

/* A class that waited in an event loop's call waits in the same one. */
static const char *class_wait(const struct ditto_thread_class *t)
{
	switch (ditto_thread_class_io_model(t)) {
	case DITTO_IO_EPOLL: return "RT_WAIT_EPOLL";
	case DITTO_IO_POLL: return "RT_WAIT_POLL";
	case DITTO_IO_SELECT: return "RT_WAIT_SELECT";
	default: return "RT_WAIT_NONE";
	}
}

/* The acceptor class of a service that hands connections to its serving
 * threads is played by the runtime's own acceptor (accept_dispatch). */
static bool dispatching_acceptor(struct cfg *g, const struct ditto_thread_class *t)
{
	const struct ditto_network *net = ditto_service_network(g->s);

	return net && ditto_network_network_dispatch(net) &&
	       ditto_thread_class_role(t) == DITTO_ROLE_ACCEPTOR;
}

/* The original's main thread in a class of its own while other processes
 * serve: the master of a pre-forking server (nginx's, Apache's). The
 * clone's parent process plays it once, waiting for its children
 * (rt_prefork.c), instead of one thread of it in every serving process. */
static bool parents_class(struct cfg *g, const struct ditto_thread_class *t)
{
	return (g->procs > 1 || g->master) && !g->forks && ditto_thread_class_role(t) == DITTO_ROLE_MAIN;
}

/*
 * One acceptor thread in all the service's processes, serving done by
 * several others that do not accept: a master forking a process per
 * connection (PostgreSQL's postmaster). Several processes each with an
 * acceptor handing out connections have as many acceptors as processes.
 */
static bool forks_per_connection(const struct ditto_service *s, uint64_t procs)
{
	const struct ditto_network *net = ditto_service_network(s);
	uint64_t acceptors = 0;

	if (!net || procs <= 1 || !ditto_network_network_dispatch(net) ||
	    ditto_network_accept_dispatch(net))
		return false;
	for (size_t i = 0; i < ditto_service_thread_count(s); i++) {
		const struct ditto_thread_class *t = ditto_service_thread(s, i);

		if (ditto_thread_class_role(t) == DITTO_ROLE_ACCEPTOR)
			acceptors += ditto_thread_class_count(t);
	}
	return acceptors == 1;
}

/* A class serving connections besides the serving class, in a service
 * forking a process per connection: more of those processes (a profile
 * splits them when some connections are busier than others). The clone's
 * children serve every connection; as a thread of the parent it would be
 * one the original's master never had, busy in its loop. */
static bool forked_server_class(const struct cfg *g, const struct ditto_thread_class *t)
{
	return g->forks && ditto_thread_class_role(t) == DITTO_ROLE_NETWORK;
}

/* Processes the background classes are shared out over: all of them,
 * but a forking parent runs them alone. */
static uint64_t bg_procs(const struct cfg *g)
{
	return g->forks ? 1 : g->procs;
}

/* A class's threads in one clone process: thread counts are totals over
 * all the service's processes (model.h), so a multi-process service's
 * other classes are shared out over its serving processes, rounded up. */
static uint64_t per_process(const struct cfg *g, uint64_t count)
{
	return (count + g->procs - 1) / g->procs;
}

/* Every other class wakes as often and burns as much CPU as it did
 * (times the background_rate knob: a service whose timers back off when
 * idle wakes less under a lighter load than its profile's); under
 * valgrind as often per request as in the profile's window. */
/* Threads of a class within the limits, given the used ones; 0: none left. */
static uint64_t class_threads(struct cfg *g, uint64_t count, uint64_t used)
{
	uint64_t left = g->bg_budget - used;

	count = (uint64_t)synth_limit(g->lim, SYNTH_LIMIT_CLASS_THREADS, (double)count);
	if (count <= left)
		return count;
	if (g->bg_budget == (uint64_t)synth_limit_max(g->lim, SYNTH_LIMIT_BG_THREADS))
		synth_limit(g->lim, SYNTH_LIMIT_BG_THREADS, (double)(used + count));
	else
		synth_limit(g->lim, SYNTH_LIMIT_ALL_THREADS,
			    (double)g->procs * (double)(g->threads + used + count));
	return left;
}

uint64_t config_processes(const struct ditto_service *s, struct synth_limits *l)
{
	const struct ditto_network *net = ditto_service_network(s);
	uint64_t procs = net && ditto_network_processes(net) ? ditto_network_processes(net) : 1;

	return l->processes = (uint64_t)synth_limit(l, SYNTH_LIMIT_PROCESSES, (double)procs);
}

/*
 * Processes and their threads within the limits: each on its own, then
 * all threads of all processes together, serving threads first; what is
 * left of a process's share goes to its background classes.
 */
static void thread_budget(struct cfg *g)
{
	uint64_t all = (uint64_t)synth_limit_max(g->lim, SYNTH_LIMIT_ALL_THREADS), share;
	uint64_t bg = (uint64_t)synth_limit_max(g->lim, SYNTH_LIMIT_BG_THREADS);
	double asked = (double)g->procs * (double)g->threads;

	g->procs = config_processes(g->s, g->lim);
	g->threads = (uint64_t)synth_limit(g->lim, SYNTH_LIMIT_THREADS, (double)g->threads);
	share = all / g->procs;
	if (g->threads > share)
		g->threads = (uint64_t)synth_limit(g->lim, SYNTH_LIMIT_ALL_THREADS, asked) / g->procs;
	g->bg_budget = share - g->threads < bg ? share - g->threads : bg;
}

/* The classes' call tables (bg_calls) go into b before the array, which
 * is written into arr meanwhile. */
static unsigned background_section(struct cfg *g, struct dbuf *b, uint64_t *scratch)
{
	unsigned n = 0, max_classes = (unsigned)synth_limit_max(g->lim, SYNTH_LIMIT_CLASSES);
	uint64_t used = 0;
	double window_ns = (g->in->window_s > 0 ? g->in->window_s : 1) * 1e9;
	double requests = (double)ditto_requests_count(ditto_service_requests(g->s));
	struct dbuf arr;

	dbuf_init(&arr);
	for (size_t i = 0; i < ditto_service_thread_count(g->s); i++) {
		const struct ditto_thread_class *t = ditto_service_thread(g->s, i);
		uint64_t count = ditto_thread_class_count(t), wake = ditto_thread_class_wakeups(t);
		double period = 0, busy = 0, per_wake = 0;
		unsigned ncalls;
		bool paced;

		if (t == g->serving || !count || dispatching_acceptor(g, t) || parents_class(g, t) ||
		    forked_server_class(g, t))
			continue;
		count = (count + bg_procs(g) - 1) / bg_procs(g);
		if (n == max_classes) {
			synth_limit(g->lim, SYNTH_LIMIT_CLASSES,
				    (double)ditto_service_thread_count(g->s) - (g->serving ? 1 : 0));
			break;
		}
		/* A class cut to fewer threads keeps its wake-ups and CPU time:
		 * each thread wakes more often. */
		if (!(count = class_threads(g, count, used)))
			break;
		used += count;
		if (wake) {
			/* wake-ups are the class's in all processes */
			period = window_ns * count * bg_procs(g) / wake / g->k.background_rate;
			busy = (double)ditto_thread_class_cpu_ns(t) / wake;
			per_wake = requests * count / wake / g->k.background_rate;
			/* 0: not known (or a corrupt model), the clock paces it */
			per_wake = per_wake > 0 && per_wake < 1e15 ? fmax(per_wake, 1) : 0;
		}
		paced = per_wake > 0 && bg_paced(g->s, g->serving, t);
		ncalls = bg_calls(g, b, t, n, scratch);
		dbuf_puts(&arr, "\t{ .name = ");
		lit(g, &arr, ditto_thread_class_name(t));
		dbuf_printf(&arr, ", .threads = %llu, .period_ns = %.0f, .busy_ns = %.0f,"
			    " .sleeps = %s, .requests_per_wake = %.0f, .wait = %s,\n\t  .paced = %s,"
			    " .futex_per_wake = %.4f, .eventfd_per_wake = %.4f,\n",
			    (unsigned long long)count,
			    num(g, "a background period (ns)", period, U64_FIELD_MAX),
			    num(g, "a background busy time (ns)", busy, U64_FIELD_MAX),
			    bg_sleeps(g->s, t) ? "true" : "false",
			    num(g, "requests per background wake-up", per_wake, U64_FIELD_MAX),
			    class_wait(t), paced ? "true" : "false",
			    num(g, "a background class's futex calls per wake-up",
				bg_futex_per_wake(g->s, t), 1e6),
			    num(g, "a background class's eventfd writes per wake-up",
				paced ? bg_eventfd_per_wake(g->s, t) : 0, 1e6));
		if (ncalls)
			dbuf_printf(&arr, "\t  .calls = bg_calls%u, .ncalls = %u },\n", n, ncalls);
		else
			dbuf_puts(&arr, "\t  .calls = NULL, .ncalls = 0 },\n");
		n++;
	}
	if (!n)
		dbuf_puts(&arr, "\t{ .name = \"none\" },\n");
	dbuf_puts(b, "static const struct rt_background background[] = {\n");
	dbuf_put(b, arr.data, arr.len);
	b->oom |= arr.oom;
	dbuf_free(&arr);
	dbuf_puts(b, "};\n");
	return n;
}

/*
 * Instructions the runtime itself runs per request (framing, event loop,
 * replay bookkeeping), which the body must leave out of the model's
 * instructions per request. Measured on this project's development VM
 * with clones of an empty body under their load generators (RESP with
 * redis-benchmark: about 1500; memcached text with memcaslap: about 2900,
 * most of it in command and key parsing); the tuner
 * calibrates it per clone through the knob "synth.runtime_insts".
 */
/* Instructions per request of a body whose profile has none (as the
 * body generator's built-in count). */
#define DEFAULT_BODY_INSTS 10000

static uint64_t runtime_insts(const struct ditto_service *s, const struct synth_knobs *k)
{
	if (k->runtime_insts >= 0)
		return (uint64_t)k->runtime_insts;
	switch (ditto_service_framing(s)) {
	case DITTO_FRAMING_RESP: return 1500;
	case DITTO_FRAMING_MEMCACHE_TEXT:
	case DITTO_FRAMING_MEMCACHE_BINARY: return 2900;
	default: return 1000;
	}
}

/* Body instructions per request: the profile's less the runtime's own,
 * times the body_scale and cpu_scale knobs, within the limit. */
static unsigned insts_hist(struct cfg *g, const struct ditto_hist *ipr)
{
	struct bucket_map m = { .minus = runtime_insts(g->s, &g->k), .scale = g->k.body_scale * g->k.cpu_scale };
	uint64_t top[2];

	if (ipr && ditto_hist_bucket_count(ipr)) {
		uint64_t lo, hi, c;

		ditto_hist_bucket(ipr, ditto_hist_bucket_count(ipr) - 1, &lo, &hi, &c);
		map_bucket(&m, lo, hi, top);
		m.max = (uint64_t)synth_limit(g->lim, SYNTH_LIMIT_INSTS, (double)top[1] - 1);
	}
	return hist_emit(g, ipr, &m);
}

static void warn_missing(struct cfg *g)
{
	const struct ditto_service *s = g->s;
	const char *name = ditto_service_name(s);

	if (ditto_service_framing(s) == DITTO_FRAMING_UNKNOWN)
		ditto_warn("synth: %s: framing unknown: the clone answers each read as one request (raw)",
			   name);
	if (!ditto_service_thread_count(s))
		ditto_warn("synth: %s: no thread classes: the clone runs one epoll thread", name);
	if (g->requests <= 0)
		ditto_warn("synth: %s: no requests counted: syscalls are not replayed per request "
			   "and responses are 64 bytes", name);
	if (!ditto_service_syscall_count(s))
		ditto_warn("synth: %s: no syscalls section: the clone makes only its socket calls", name);
}

/* The class the pre-forking parent plays (parents_class): its wake-ups
 * and waits, for rt_config.parent. */
static void parent_section(struct cfg *g, struct dbuf *out)
{
	double window_ns = (g->in->window_s > 0 ? g->in->window_s : 1) * 1e9;

	for (size_t i = 0; i < ditto_service_thread_count(g->s); i++) {
		const struct ditto_thread_class *t = ditto_service_thread(g->s, i);
		uint64_t count = ditto_thread_class_count(t), wake = ditto_thread_class_wakeups(t);

		if (!parents_class(g, t) || !count || !wake)
			continue;
		dbuf_puts(out, "\t.parent = { .name = ");
		lit(g, out, ditto_thread_class_name(t));
		dbuf_printf(out, ", .threads = 1, .period_ns = %.0f, .busy_ns = %.0f, .wait = %s },\n",
			    num(g, "the parent's period (ns)", window_ns * count / wake, U64_FIELD_MAX),
			    num(g, "the parent's busy time (ns)",
				(double)ditto_thread_class_cpu_ns(t) / wake, U64_FIELD_MAX),
			    class_wait(t));
		return;
	}
}

/* Blocking with network_threads 0: one thread per connection (rt.h's
 * threads 0), not a pool that accepts for itself. */
static bool per_connection(const struct ditto_network *net, enum ditto_io_model io)
{
	return io == DITTO_IO_BLOCKING && !ditto_network_network_threads(net);
}

/* Serial connections (model.h) of an event-loop io model whose serving
 * threads accept for themselves: each clone thread accepts one and serves
 * it alone with the io's loop (rt.h). Behind a dispatcher the clone keeps
 * its pool (not reproduced: a worker there holds what it is handed). */
static bool serial(const struct ditto_network *net, enum ditto_io_model io)
{
	return net && ditto_network_serial_connections(net) && !ditto_network_network_dispatch(net) &&
	       (io == DITTO_IO_EPOLL || io == DITTO_IO_POLL || io == DITTO_IO_SELECT);
}

static const char *accept_wait_of(enum ditto_io_model io)
{
	switch (io) {
	case DITTO_IO_BLOCKING: return "RT_ACCEPT_WAIT_ACCEPT";
	case DITTO_IO_EPOLL: return "RT_ACCEPT_WAIT_EPOLL";
	case DITTO_IO_POLL: return "RT_ACCEPT_WAIT_POLL";
	case DITTO_IO_SELECT: return "RT_ACCEPT_WAIT_SELECT";
	default: return "RT_ACCEPT_WAIT_AS_SERVING";
	}
}

/* How the original's acceptor class waited for its listen socket, when
 * that differs from how its serving class waits (rt.h's accept_wait). A
 * serial server's threads accept as they wait for requests. */
static const char *accept_wait(const struct ditto_service *s, enum ditto_io_model io, bool serial)
{
	for (size_t i = 0; i < ditto_service_thread_count(s); i++) {
		const struct ditto_thread_class *t = ditto_service_thread(s, i);
		enum ditto_io_model a = ditto_thread_class_io_model(t);

		if (ditto_thread_class_role(t) == DITTO_ROLE_ACCEPTOR && a != io)
			return accept_wait_of(a);
	}
	return serial && io != DITTO_IO_BLOCKING ? accept_wait_of(io) : "RT_ACCEPT_WAIT_AS_SERVING";
}

/* The acceptor on a thread of its own: the original accepted away from
 * the main thread of its one process (the model's accept_dispatch). In
 * several processes accept_dispatch says only that worker processes
 * accepted, on whichever thread: there the acceptor is the main thread
 * of each, as in most pre-forking servers. */
static bool acceptor_thread(const struct ditto_network *net, uint64_t procs)
{
	return net && ditto_network_accept_dispatch(net) && procs <= 1;
}

enum ditto_io_model synth_io_model(const struct ditto_service *s)
{
	const struct ditto_thread_class *c = serving_class(s);
	enum ditto_io_model io = ditto_network_io_model(ditto_service_network(s));

	return io == DITTO_IO_UNKNOWN && c ? ditto_thread_class_io_model(c) : io;
}

int config_generate(const struct ditto_service *s, const struct config_in *in, struct dbuf *out)
{
	const struct ditto_network *net = ditto_service_network(s);
	const struct ditto_requests *req = ditto_service_requests(s);
	struct cfg g = { .s = s, .in = in, .out = out, .serving = serving_class(s) };
	struct dbuf b;
	const struct ditto_hist *resp = ditto_requests_response_bytes(req), *ipr = NULL;
	const struct ditto_cpu *cpu =
		g.serving ? ditto_service_find_cpu(s, ditto_thread_class_name(g.serving)) : NULL;
	enum ditto_io_model io = synth_io_model(s);
	uint64_t threads = ditto_network_network_threads(net);
	uint64_t scratch = 0;
	unsigned hresp, hipr, ncalls, nbg, nso, nup;
	double resp_mean = 0;
	struct dbuf sf;
	uint16_t port = in->port ? in->port : ditto_service_port_count(s) ? ditto_service_port(s, 0) : 8080;

	if (in->knobs)
		g.k = *in->knobs;
	else
		synth_knobs_defaults(&g.k);
	g.lim = in->limits;
	if (!g.lim) {
		synth_limits_init(&g.own, ditto_service_name(s), false);
		g.lim = &g.own;
	}
	g.procs = config_processes(s, g.lim);
	g.forks = forks_per_connection(s, g.procs);
	g.master = net && ditto_network_master_process(net) && !g.forks;
	/* network_threads counts the serving threads of all processes */
	g.threads = per_process(&g, threads ? threads : 1);
	thread_budget(&g);
	g.requests = req ? (double)ditto_requests_count(req) : 0;
	warn_missing(&g);
	g.serial = serial(net, io);
	g.io = io;
	if (!cpu && ditto_service_cpu_count(s))
		cpu = ditto_service_cpu(s, 0);
	ipr = cpu ? ditto_cpu_insts_per_request(cpu) : NULL;
	dbuf_init(&b);
	dbuf_printf(out, "/* Generated by libditto from a model (seed %llu): the clone's\n"
		    " * configuration (see rt.h). Statistics only; the model's names appear\n"
		    " * only as escaped string literals. */\n#include \"rt.h\"\n\n",
		    (unsigned long long)in->seed);
	if (in->body_name)
		dbuf_printf(out, "extern void %s(void *regions, uint64_t state[2]);\n"
			    "extern void %s_warm(void *regions);\n"
			    "extern const uint64_t %s_region_bytes, %s_loop_insts;\n\n",
			    in->body_name, in->body_name, in->body_name, in->body_name);
	synth_limit(g.lim, SYNTH_LIMIT_RESPONSE, ditto_hist_quantile(resp, 1.0));	/* the runtime's cap */
	/* Over the responses the histogram holds, which the total sums: the
	 * last response of each connection in the window ends after it and
	 * is in neither. Per request it would read 2% short at 250 requests
	 * on 4 connections. */
	if (req && ditto_requests_response_bytes_total(req) && (ditto_hist_total(resp) || g.requests > 0)) {
		resp_mean = ditto_requests_response_bytes_total(req) /
			    (ditto_hist_total(resp) ? (double)ditto_hist_total(resp) : g.requests);
		hresp = hist_arrays_at_mean(&g, resp, resp_mean);
	} else {
		hresp = hist_arrays(&g, resp);
	}
	hipr = insts_hist(&g, ipr);
	ncalls = calls_section(&g, &b, &scratch);
	nbg = background_section(&g, &b, &scratch);
	scratch = (uint64_t)synth_limit(g.lim, SYNTH_LIMIT_SCRATCH, (double)scratch);
	nso = sockopt_section(s, g.requests, &b);
	nup = upstream_section(in->model, s, &b, &g.err);
	dbuf_init(&sf);
	/* The file sendfile reads holds a whole response. */
	if (sendfile_section(s, g.serving ? ditto_thread_class_name(g.serving) : NULL, g.requests,
			     resp_mean, &sf) > 0 && ditto_hist_quantile(resp, 1.0) > (double)scratch)
		scratch = (uint64_t)synth_limit(g.lim, SYNTH_LIMIT_SCRATCH,
						fmin(ditto_hist_quantile(resp, 1.0), 16u << 20));
	dbuf_put(out, b.data, b.len);
	dbuf_free(&b);
	/* The runtime's accept_dispatch is an acceptor thread handing out the
	 * connections: the model's network_dispatch (accepted by one thread,
	 * served by others). The model's accept_dispatch (accepting away from
	 * the main thread, as worker processes do) is the runtime's default of
	 * serving threads that accept themselves. */
	dbuf_puts(out, "\nconst struct rt_config rt_config = {\n\t.service = ");
	lit(&g, out, ditto_service_name(s));
	if (upstream_untraced(in->model, ditto_service_name(s)))
		dbuf_puts(out, ",\n\t.untraced = true");
	dbuf_printf(out, ",\n\t.framing = %s,\n"
		    "\t.port = %u,\n\t.io = %s,\n\t.processes = %llu,\n\t.threads = %llu,\n"
		    "\t.accept_dispatch = %s,\n\t.acceptor_thread = %s,\n\t.accept_wait = %s,\n"
		    "\t.fork_per_connection = %s,\n\t.serial_connections = %s,\n"
		    "\t.master_process = %s,\n\t.reuseport = false,\n",
		    framing_name(ditto_service_framing(s)), port, io_name(io),
		    (unsigned long long)g.procs,
		    (unsigned long long)(per_connection(net, io) ? 0 : g.threads),
		    net && ditto_network_network_dispatch(net) && !g.forks ? "true" : "false",
		    acceptor_thread(net, g.procs) ? "true" : "false",
		    accept_wait(s, io, g.serial),
		    g.forks ? "true" : "false", g.serial ? "true" : "false",
		    g.master ? "true" : "false");
	net_section(&g, out);
	parent_section(&g, out);
	dbuf_puts(out, "\t.response_bytes = ");
	hist_ref(&g, hresp, resp, 64, out);
	dbuf_puts(out, ",\n\t.insts_per_request = ");
	/* A profile whose windows never held a whole request, or a model
	 * without a cpu section, has no instructions per request: the
	 * default body's length stands in (as synth's warning says), so that
	 * the clone does work per request and the tuner's body_scale has
	 * something to scale. */
	hist_ref(&g, hipr, ipr, (uint64_t)(DEFAULT_BODY_INSTS * g.k.body_scale * g.k.cpu_scale), out);
	dbuf_printf(out, ",\n");
	dbuf_put(out, sf.data, sf.len);
	out->oom |= sf.oom;
	dbuf_free(&sf);
	dbuf_printf(out, "\t.calls = calls,\n\t.ncalls = %u,\n\t.background = background,\n"
		    "\t.nbackground = %u,\n\t.sockopts = sockopts,\n\t.nsockopts = %u,\n"
		    "\t.scratch_bytes = %lluULL,\n\t.seed = %lluULL,\n",
		    ncalls, nbg, nso, (unsigned long long)scratch, (unsigned long long)in->seed);
	dbuf_printf(out, "\t.footprint_bytes = %lluULL,\n",
		    (unsigned long long)(num(&g, "the knob synth.footprint_kib", g.k.footprint_kib,
					     65536) * 1024));
	dbuf_printf(out, "\t.footprint_after_share = %.4f,\n",
		    num(&g, "the knob synth.footprint_after_share", g.k.footprint_after_share, 1));
	dbuf_printf(out, "\t.body_spread = %.4f,\n",
		    num(&g, "the knob synth.body_spread", g.k.body_spread, 2));
	if (in->body_name)
		dbuf_printf(out, "\t.body = %s,\n\t.body_region_bytes = &%s_region_bytes,\n"
			    "\t.body_loop_insts = %lluULL,\n\t.body_warm = %s_warm,\n",
			    in->body_name, in->body_name, (unsigned long long)in->body_loop_insts,
			    in->body_name);
	if (nup)
		dbuf_printf(out, "\t.upstreams = upstreams,\n\t.nupstreams = %u,\n", nup);
	dbuf_puts(out, "};\n");
	if (g.err)
		return g.err;
	return out->oom ? ditto_err(-ENOMEM, "synth: out of memory writing the configuration") : 0;
}
