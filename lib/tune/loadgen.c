/* SPDX-License-Identifier: MIT */
/*
 * ditto_load_run(): one thread, one epoll set, non-blocking TCP_NODELAY
 * connections with at most one request outstanding each. Closed loop sends
 * on a connection as soon as its answer is complete; open loop walks a
 * timeline of arrivals and hands each to a free connection, measuring from
 * the arrival's intended time so that queueing behind a slow service is
 * counted (coordinated omission).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <ditto/model.h>
#include <ditto/tune.h>

#include "loadgen_int.h"
#include "model_int.h"

#define NS 1000000000ull
#define SCAN_NS (10 * 1000000ull)	/* timeouts and a stop set by another thread */
#define MAX_CONNS 100000
#define IN_MIN 4096
#define IN_MAX (LOADGEN_FRAME_MAX + LOADGEN_LINE_MAX)

struct cfg {
	const char *host, *path;
	unsigned port, framing, conns;
	enum ditto_load_mode mode;
	double qps, duration_s, warmup_s, write_share, timeout_s, deadline_s;
	uint64_t requests, value_bytes, seed;
	uint64_t keys;		/* key space; LOADGEN_MODEL_KEYS ones are set first */
	bool preset;
	const volatile int *stop;
};

struct conn {
	int fd;			/* -1: dropped */
	bool busy, in_free, want_out;
	uint64_t intended, sent;
	struct dbuf out;
	size_t out_off;
	char *in;
	size_t in_len, in_cap;
};

struct run {
	struct cfg cfg;
	struct sockaddr_in addr;
	char where[64];
	int ep;
	struct conn *c;
	unsigned *free_stack;
	unsigned nconn, nfree, alive;
	struct ditto_rng rng;
	struct ditto_load_result *res;
	uint64_t t0, rec_start, end, timeout_ns, next_scan;
	bool end_is_deadline;	/* the deadline comes before the duration's end */
	bool deadline_hit;	/* and ended the run */
	double next_at;		/* open loop: next arrival, ns after t0 */
	uint64_t inflight, recorded;
	bool no_pwait2;
	int fatal;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* Options                                                              */
/* ------------------------------------------------------------------ */

/* The model's mean request size less what the framing adds to a value. */
static uint64_t model_value_bytes(struct ditto_service *s, const struct cfg *c)
{
	struct ditto_requests *rq = ditto_service_requests(s);
	uint64_t n = ditto_requests_count(rq), total = ditto_requests_request_bytes_total(rq);
	double mean = n && total ? (double)total / (double)n :
		      ditto_hist_mean(ditto_requests_request_bytes(rq));
	double over = (double)loadgen_overhead(c->framing, c->host);

	if (!(mean > 0))
		return 32;
	return mean > over + 1 ? (uint64_t)(mean - over) : 1;
}

/* Largest value a fitted load writes (memcached stores up to 1 MiB). */
#define FIT_VALUE_MAX (512u << 10)

/* The share of writes that makes the mean request `req` bytes. */
static double fit_share(const struct loadgen_costs *k, double req)
{
	double w = (req - (double)k->req_read) / (double)(k->req_write - k->req_read);

	return w < 0 ? 0 : w > 1 ? 1 : w;
}

/* Mean answer with values of v bytes and the share that fits `req`; it
 * grows with v (a hit answer holds the value, writes get rarer). */
static double fit_answer(unsigned framing, uint64_t v, double req, double *w)
{
	struct loadgen_costs k;

	loadgen_costs(framing, v, &k);
	*w = fit_share(&k, req);
	return *w * (double)k.ans_write + (1 - *w) * (double)k.ans_read;
}

/* The largest value size from lo up whose requests are all writes: with
 * answers smaller than any hit, at least the request size is met. */
static uint64_t fit_all_writes(unsigned framing, uint64_t lo, double req)
{
	uint64_t hi = FIT_VALUE_MAX;
	double w;

	while (lo < hi) {
		uint64_t mid = hi - (hi - lo) / 2;

		fit_answer(framing, mid, req, &w);
		if (w >= 1)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Bisect for the value size whose mean answer is nearest `ans`. */
static void fit_means(unsigned framing, double req, double ans, struct cfg *c)
{
	uint64_t lo = 1, hi = FIT_VALUE_MAX;
	double w, w1;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (fit_answer(framing, mid, req, &w) < ans)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 1 && fabs(fit_answer(framing, lo - 1, req, &w1) - ans) <
		      fabs(fit_answer(framing, lo, req, &w) - ans))
		lo--;
	fit_answer(framing, lo, req, &w);
	if (w >= 1) {
		lo = fit_all_writes(framing, lo, req);
		fit_answer(framing, lo, req, &w);
	}
	c->value_bytes = lo;
	c->write_share = w > 0 ? w : -1;	/* -1: no writes at all */
}

/* The value size whose hit answers `ans` bytes, and the share that fits `req`. */
static void fit_reads(unsigned framing, double req, double ans, struct cfg *c)
{
	struct loadgen_costs k;
	uint64_t best = 1;
	double w, err = INFINITY;

	loadgen_costs(framing, 0, &k);
	/* the hit answer is its empty one plus the value, give or take a digit */
	for (double v = floor(ans - (double)k.ans_read) - 2; v <= ans - (double)k.ans_read + 2; v++) {
		if (v < 1 || v > FIT_VALUE_MAX)
			continue;
		loadgen_costs(framing, (uint64_t)v, &k);
		if (fabs((double)k.ans_read - ans) < err) {
			err = fabs((double)k.ans_read - ans);
			best = (uint64_t)v;
		}
	}
	fit_answer(framing, best, req, &w);
	c->value_bytes = best;
	c->write_share = w > 0 ? w : -1;
}

static double model_mean(uint64_t total, uint64_t n, const struct ditto_hist *h)
{
	return n && total ? (double)total / (double)n : ditto_hist_mean(h);
}

/*
 * Mean of the model's answers of at least `min` bytes, placed in their
 * log2 buckets as the clone draws them: spread evenly, or, given the exact
 * mean `exact`, all at the one relative place that gives it (synth's
 * hist_arrays_at_mean). 0 when there are none.
 */
static double answers_above(const struct ditto_hist *h, double exact, uint64_t min)
{
	double base = 0, span = 0, total = 0, at = -1, sum = 0, n = 0;
	uint64_t lo, hi, c;

	for (size_t i = 0; exact > 0 && !ditto_hist_bucket(h, i, &lo, &hi, &c); i++) {
		base += (double)lo * (double)c;
		span += (double)(hi - lo) * (double)c;
		total += (double)c;
	}
	if (span > 0)
		at = fmin(1, fmax(0, (exact * total - base) / span));
	for (size_t i = 0; !ditto_hist_bucket(h, i, &lo, &hi, &c); i++) {
		double a = (double)lo, b = (double)hi;

		if (at >= 0)
			a = b = (double)lo + round(at * (double)(hi - lo));
		if (b < (double)min)
			continue;
		sum += (double)c * (fmax(a, (double)min) + b) / 2;
		n += (double)c;
	}
	return n > 0 ? sum / n : 0;
}

/* The value size and write share that give the model's mean request and
 * answer sizes: from the mean of the answers as large as a hit where
 * writes are acked apart, else from the mean of all answers. */
static void fit_model(struct ditto_requests *rq, struct cfg *c)
{
	uint64_t n = ditto_requests_count(rq), ans_total = ditto_requests_response_bytes_total(rq);
	struct ditto_hist *h = ditto_requests_response_bytes(rq);
	double req = model_mean(ditto_requests_request_bytes_total(rq), n,
				ditto_requests_request_bytes(rq));
	double ans = model_mean(ans_total, n, h), reads = 0;
	struct loadgen_costs k;

	loadgen_costs(c->framing, 0, &k);
	if (k.acked_writes)
		reads = answers_above(h, n && ans_total ? (double)ans_total / (double)n : 0,
				      k.ans_read);
	if (req > 0 && reads > 0)
		fit_reads(c->framing, req, reads, c);
	else if (req > 0 && ans > 0)
		fit_means(c->framing, req, ans, c);
}

/* Where the framing's answers follow from the request (a key-value
 * store), a load fitted to the model's sizes over a small key space set
 * before the clock, so that reads hit; else the model's request size as
 * the value. */
static void model_load(struct ditto_service *s, struct cfg *c)
{
	struct loadgen_costs k;

	if (loadgen_costs(c->framing, 1, &k)) {
		c->keys = LOADGEN_MODEL_KEYS;
		c->preset = true;
		if (!c->value_bytes && c->write_share == 0)
			fit_model(ditto_service_requests(s), c);
	}
	if (!c->value_bytes)
		c->value_bytes = model_value_bytes(s, c);
}

/* Framing and value size from the model where the caller left them 0. */
static int from_model(struct ditto_model *m, const char *name, struct cfg *c)
{
	struct ditto_service *s;

	if (!m) {
		if (!c->framing)
			return ditto_err(-EINVAL, "load: no framing: give one, or a model");
		if (!c->value_bytes)
			c->value_bytes = 32;
		return 0;
	}
	if (!(s = model_pick_service(m, name)))
		return ditto_err(-DITTO_ENOTFOUND, name ? "load: the model has no service '%s'" :
				 "load: the model has no service%s", name ? name : "");
	if (!c->framing && !(c->framing = ditto_service_framing(s)))
		return ditto_err(-EINVAL, "load: service '%s' of the model has no known framing",
				 ditto_service_name(s));
	model_load(s, c);
	return 0;
}

static bool bad_seconds(double s)
{
	return !isfinite(s) || s < 0 || s > 1e6;	/* 1e6 s in ms still fits an int */
}

static int check_numbers(const struct cfg *c)
{
	if (!c->port || c->port > 65535)
		return ditto_err(-EINVAL, "load: port %u is not 1..65535", c->port);
	if (c->framing > DITTO_FRAMING_MYSQL)
		return ditto_err(-EINVAL, "load: framing %u is unknown", c->framing);
	if (c->mode < DITTO_LOAD_CLOSED || c->mode > DITTO_LOAD_FIXED)
		return ditto_err(-EINVAL, "load: mode %d is unknown", (int)c->mode);
	if (c->mode != DITTO_LOAD_CLOSED && (!isfinite(c->qps) || c->qps <= 0 || c->qps > 1e9))
		return ditto_err(-EINVAL, "load: open loop needs a target rate (qps > 0)");
	if (c->conns > MAX_CONNS)
		return ditto_err(-EINVAL, "load: %u connections is more than %u", c->conns, MAX_CONNS);
	if (bad_seconds(c->duration_s) || bad_seconds(c->warmup_s) || bad_seconds(c->timeout_s) ||
	    bad_seconds(c->deadline_s))
		return ditto_err(-EINVAL, "load: durations must be finite seconds >= 0");
	if (c->value_bytes > LOADGEN_FRAME_MAX / 2)
		return ditto_err(-EINVAL, "load: value of %llu bytes is too large",
				 (unsigned long long)c->value_bytes);
	if (isnan(c->write_share) || c->write_share > 1)
		return ditto_err(-EINVAL, "load: write share must be at most 1");
	return 0;
}

/* A run with only a request count still ends: 60 s for connecting
 * trouble and a slow start, plus 10 ms a request (a service slower than
 * 100 per second on average is not worth waiting for without asking). */
static double default_deadline(uint64_t requests)
{
	double s = 60 + 0.01 * (double)requests;

	return s < 1e6 ? s : 1e6;
}

/* 5 s, or the whole run if shorter: a request sent as the clock starts
 * and unanswered at the end then counts as a timeout, so that a service
 * that never answers is not a run of no errors. */
static double default_timeout(const struct cfg *c)
{
	double t = 5;

	if (c->duration_s > 0 && c->warmup_s + c->duration_s < t)
		t = c->warmup_s + c->duration_s;
	if (c->deadline_s > 0 && c->deadline_s < t)
		t = c->deadline_s;
	return t;
}

/* It goes into a request line as is: no spaces, no control characters. */
bool loadgen_http_path_ok(const char *p)
{
	size_t n = strlen(p);

	if (p[0] != '/' || n > 1024)
		return false;
	for (size_t i = 0; i < n; i++)
		if (p[i] <= ' ' || p[i] > '~')
			return false;
	return true;
}

static int opts_read(const struct ditto_loadgen_opts *o, struct run *r)
{
	struct cfg *c = &r->cfg;
	int err = OPTS_CHECK(o, ditto_loadgen_opts);

	if (err)
		return err;
	c->host = OPTS_GET(o, host, NULL) ? o->host : "127.0.0.1";
	c->port = OPTS_GET(o, port, 0u);
	c->framing = OPTS_GET(o, framing, 0u);
	c->mode = OPTS_GET(o, mode, 0) ? o->mode : DITTO_LOAD_CLOSED;
	c->qps = OPTS_GET(o, qps, 0.0);
	c->conns = OPTS_GET(o, connections, 0u) ? o->connections : 8;
	c->duration_s = OPTS_GET(o, duration_s, 0.0);
	c->requests = OPTS_GET(o, requests, (uint64_t)0);
	c->warmup_s = OPTS_GET(o, warmup_s, 0.0);
	c->value_bytes = OPTS_GET(o, value_bytes, (uint64_t)0);
	c->write_share = OPTS_GET(o, write_share, 0.0);
	c->seed = OPTS_GET(o, seed, (uint64_t)0) ? o->seed : 1;
	c->timeout_s = OPTS_GET(o, timeout_s, 0.0);
	c->stop = OPTS_GET(o, stop, NULL);
	c->deadline_s = OPTS_GET(o, deadline_s, 0.0);
	c->path = OPTS_GET(o, http_path, NULL);
	if (c->path && !loadgen_http_path_ok(c->path))
		return ditto_err(-EINVAL, "load: HTTP path '%.64s' is not '/' and printable ASCII "
				 "without spaces (at most 1024 bytes)", c->path);
	if ((err = check_numbers(c)))
		return err;
	if (c->duration_s == 0 && !c->requests)
		c->duration_s = 5;
	if (c->deadline_s == 0 && c->duration_s == 0)
		c->deadline_s = default_deadline(c->requests);
	if (c->timeout_s == 0)
		c->timeout_s = default_timeout(c);
	c->keys = LOADGEN_KEYS;
	if (inet_pton(AF_INET, c->host, &r->addr.sin_addr) != 1)
		return ditto_err(-EINVAL, "load: host '%s' is not an IPv4 address", c->host);
	r->addr.sin_family = AF_INET;
	r->addr.sin_port = htons((uint16_t)c->port);
	snprintf(r->where, sizeof(r->where), "%s:%u", c->host, c->port);
	/* the model fits the write share only where the caller left it 0 */
	err = from_model(OPTS_GET(o, model, NULL), OPTS_GET(o, service, NULL), c);
	c->write_share = c->write_share == 0 ? 0.5 : c->write_share < 0 ? 0 : c->write_share;
	return err;
}

/* ------------------------------------------------------------------ */
/* Connections                                                          */
/* ------------------------------------------------------------------ */

static bool stopped(const struct run *r)
{
	return r->cfg.stop && *r->cfg.stop;
}

/* Block until fd is ready for `events`, at most the answer timeout. */
static int wait_fd(const struct run *r, int fd, short events)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int n;

	/* rounded up: a timeout under 1 ms must still wait */
	while ((n = poll(&pfd, 1, (int)ceil(r->cfg.timeout_s * 1000))) < 0 && errno == EINTR &&
	       !stopped(r))
		;
	if (n < 0)
		return -errno;
	return n == 0 ? -ETIMEDOUT : 0;
}

/* Wait for a non-blocking connect; the loop stalls meanwhile, which only
 * happens at the start and on a reconnect. */
static int connect_wait(const struct run *r, int fd)
{
	int soerr = 0, err = wait_fd(r, fd, POLLOUT);
	socklen_t len = sizeof(soerr);

	if (err)
		return err;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len))
		return -errno;
	return -soerr;
}

static int greet(const struct run *r, struct conn *c);

static int connect_one(struct run *r, unsigned i)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };
	int one = 1, err = 0;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return ditto_err(-errno, "load: socket: %s", strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&r->addr, sizeof(r->addr)) < 0)
		err = errno == EINPROGRESS ? connect_wait(r, fd) : -errno;
	if (!err && epoll_ctl(r->ep, EPOLL_CTL_ADD, fd, &ev))
		err = -errno;
	r->c[i].fd = fd;
	if (!err)
		err = greet(r, &r->c[i]);
	if (err) {
		close(fd);
		r->c[i].fd = -1;
		return ditto_err(err, "load: cannot connect to %s: %s", r->where, strerror(-err));
	}
	r->c[i].want_out = false;
	return 0;
}

static void push_free(struct run *r, unsigned i)
{
	if (!r->c[i].in_free) {
		r->c[i].in_free = true;
		r->free_stack[r->nfree++] = i;
	}
}

static struct conn *pop_free(struct run *r)
{
	while (r->nfree) {
		struct conn *c = &r->c[r->free_stack[--r->nfree]];

		c->in_free = false;
		if (c->fd >= 0 && !c->busy)
			return c;
	}
	return NULL;
}

static bool recording(const struct run *r, uint64_t now)
{
	return now >= r->rec_start;
}

/* The kind of error an errno of connect, send or recv is. */
static int errno_kind(int e)
{
	switch (e) {
	case ECONNREFUSED: return DITTO_LOAD_ERR_REFUSED;
	case ECONNRESET: case EPIPE: return DITTO_LOAD_ERR_RESET;
	case ETIMEDOUT: return DITTO_LOAD_ERR_TIMEOUT;
	default: return DITTO_LOAD_ERR_OTHER;
	}
}

/* A request failed (an enum ditto_load_error kind) or an idle connection
 * broke: count the request, connect again or drop the connection (a
 * failed reconnect counts as an error of its own kind). */
static void conn_fail(struct run *r, struct conn *c, uint64_t now, int kind)
{
	unsigned i = (unsigned)(c - r->c);
	int err;

	if (c->busy) {
		c->busy = false;
		r->inflight--;
		if (recording(r, now)) {
			loadgen_result_error(r->res, kind);
			r->recorded++;
		}
	}
	close(c->fd);
	c->fd = -1;
	c->in_len = 0;
	c->out.len = c->out_off = 0;
	if ((err = connect_one(r, i)) == 0) {
		push_free(r, i);
		return;
	}
	ditto_debug("%s", ditto_last_error());
	if (recording(r, now))
		loadgen_result_error(r->res, errno_kind(-err));
	r->alive--;
}

static int open_all(struct run *r)
{
	int err = 0;

	for (unsigned i = 0; i < r->cfg.conns && !stopped(r); i++) {
		r->c[i].fd = -1;
		if ((err = connect_one(r, i)) == 0) {
			r->alive++;
			push_free(r, i);
		} else if (r->alive) {
			ditto_warn("%s: going on with %u connections", ditto_last_error(), r->alive);
			break;
		} else {
			return err;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Requests and answers                                                 */
/* ------------------------------------------------------------------ */

static void set_out(struct run *r, struct conn *c, bool on)
{
	struct epoll_event ev = { .events = EPOLLIN | (on ? EPOLLOUT : 0),
				  .data.u32 = (unsigned)(c - r->c) };

	if (c->want_out != on && epoll_ctl(r->ep, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->want_out = on;
}

static void flush(struct run *r, struct conn *c, uint64_t now)
{
	while (c->out_off < c->out.len) {
		ssize_t k = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN) {
			set_out(r, c, true);
			return;
		}
		if (k < 0) {
			conn_fail(r, c, now, errno_kind(errno));
			return;
		}
		c->out_off += (size_t)k;
		if (recording(r, now))
			r->res->bytes_sent += (uint64_t)k;
	}
	set_out(r, c, false);
}

static void send_request(struct run *r, struct conn *c, uint64_t intended, uint64_t now)
{
	struct loadgen_req q = { .host = r->cfg.host, .path = r->cfg.path,
				 .value_bytes = r->cfg.value_bytes };

	q.write = loadgen_has_writes(r->cfg.framing) && ditto_rng_double(&r->rng) < r->cfg.write_share;
	q.key = ditto_rng_below(&r->rng, r->cfg.keys);
	c->out.len = 0;
	loadgen_encode(r->cfg.framing, &q, &c->out);
	if (c->out.oom) {
		r->fatal = ditto_err(-ENOMEM, "load: out of memory");
		return;
	}
	c->busy = true;
	c->intended = intended;
	c->sent = now;
	c->out_off = 0;
	r->inflight++;
	flush(r, c, now);
}

static void complete(struct run *r, struct conn *c, uint64_t now, bool failed)
{
	c->busy = false;
	c->in_len = 0;
	r->inflight--;
	push_free(r, (unsigned)(c - r->c));
	if (!recording(r, now))
		return;
	r->recorded++;
	if (failed)
		loadgen_result_error(r->res, DITTO_LOAD_ERR_REPLY);
	else if (loadgen_result_add(r->res, now - c->intended))
		r->fatal = ditto_err(-ENOMEM, "load: out of memory");
}

static bool grow_in(struct conn *c)
{
	size_t cap = c->in_cap ? c->in_cap * 2 : IN_MIN;
	char *p;

	if (c->in_cap >= IN_MAX)
		return false;
	if (cap > IN_MAX)
		cap = IN_MAX;
	if (!(p = realloc(c->in, cap)))
		return false;
	c->in = p;
	c->in_cap = cap;
	return true;
}

static void on_readable(struct run *r, struct conn *c, uint64_t now)
{
	bool failed;
	ssize_t k;
	long e;

	if (c->in_len == c->in_cap && !grow_in(c)) {
		/* an answer larger than we take (or no memory for it) */
		conn_fail(r, c, now, DITTO_LOAD_ERR_UNPARSEABLE);
		return;
	}
	k = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, MSG_DONTWAIT);
	if (k < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (k <= 0) {
		conn_fail(r, c, now, k == 0 ? DITTO_LOAD_ERR_CLOSED : errno_kind(errno));
		return;
	}
	if (recording(r, now))
		r->res->bytes_received += (uint64_t)k;
	c->in_len += (size_t)k;
	if (!c->busy) {
		/* raw: the rest of an answer that came in pieces; otherwise a
		 * service that talks out of turn */
		if (r->cfg.framing == DITTO_FRAMING_RAW)
			c->in_len = 0;
		else
			conn_fail(r, c, now, DITTO_LOAD_ERR_UNPARSEABLE);	/* idle: not counted */
		return;
	}
	e = loadgen_parse(r->cfg.framing, c->in, c->in_len, &failed);
	if (e < 0 || (e > 0 && (size_t)e != c->in_len))	/* malformed, or two answers */
		conn_fail(r, c, now, DITTO_LOAD_ERR_UNPARSEABLE);
	else if (e > 0)
		complete(r, c, now, failed);
}

static void on_event(struct run *r, const struct epoll_event *ev, uint64_t now)
{
	struct conn *c = &r->c[ev->data.u32];

	if (c->fd < 0)
		return;
	/* not only when busy: a raw answer may come before the request is out */
	if (ev->events & EPOLLOUT)
		flush(r, c, now);
	if (c->fd >= 0 && (ev->events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		on_readable(r, c, now);
}

/* ------------------------------------------------------------------ */
/* Keys set before the clock                                            */
/* ------------------------------------------------------------------ */

static int send_all(const struct run *r, struct conn *c)
{
	size_t off = 0;
	int err;

	while (off < c->out.len) {
		ssize_t k = send(c->fd, c->out.data + off, c->out.len - off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (k >= 0) {
			off += (size_t)k;
		} else if (errno == EAGAIN) {
			if ((err = wait_fd(r, c->fd, POLLOUT)))
				return err;
		} else if (errno != EINTR) {
			return -errno;
		}
	}
	return 0;
}

/* Read one whole answer (one MySQL packet with `packet`); *failed: an
 * error reply. */
static int recv_answer_or_packet(const struct run *r, struct conn *c, bool packet, bool *failed)
{
	long e = 0;
	int err;

	while (e == 0) {
		ssize_t k;

		if (c->in_len == c->in_cap && !grow_in(c))
			return -EMSGSIZE;
		if ((err = wait_fd(r, c->fd, POLLIN)))
			return err;
		k = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, MSG_DONTWAIT);
		if (k == 0)
			return -ECONNRESET;
		if (k < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		c->in_len += k > 0 ? (size_t)k : 0;
		e = packet ? loadgen_my_packet(c->in, c->in_len, failed) :
			     loadgen_parse(r->cfg.framing, c->in, c->in_len, failed);
	}
	if (e < 0 || (size_t)e != c->in_len)
		return -EPROTO;
	c->in_len = 0;
	return 0;
}

static int recv_whole(const struct run *r, struct conn *c, bool *failed)
{
	return recv_answer_or_packet(r, c, false, failed);
}

/* Read one whole answer; an error reply only means the key stays unset. */
static int recv_answer(const struct run *r, struct conn *c)
{
	bool failed;
	int err = recv_whole(r, c, &failed);

	if (!err && failed)
		ditto_debug("load: %s refused a SET before the run", r->where);
	return err;
}

/* What opens a connection of the framing (PostgreSQL's startup, MySQL's
 * handshake after the server's), before its first request and outside
 * the clock; refused: -EACCES. */
static int greet(const struct run *r, struct conn *c)
{
	bool packet = loadgen_server_first(r->cfg.framing), failed = false;
	int err = 0;

	if (packet && (err = recv_answer_or_packet(r, c, true, &failed)))
		return err;
	if (failed)
		return -EACCES;
	c->out.len = 0;
	if (!loadgen_greeting(r->cfg.framing, &c->out))
		return 0;
	err = c->out.oom ? -ENOMEM : send_all(r, c);
	c->out.len = 0;
	if (!err)
		err = recv_answer_or_packet(r, c, packet, &failed);
	return err ? err : failed ? -EACCES : 0;
}

/* Set every key once, one at a time round the connections, so that the
 * run's reads hit. Neither counted nor recorded; kept to LOADGEN_MODEL_KEYS
 * requests since a measured service pays for each. */
static int preset_keys(struct run *r)
{
	struct loadgen_req q = { .write = true, .value_bytes = r->cfg.value_bytes, .host = r->cfg.host,
				 .path = r->cfg.path };
	unsigned i = 0;
	int err = 0;

	for (; r->cfg.preset && r->alive && q.key < r->cfg.keys && !stopped(r) && !err; q.key++) {
		struct conn *c;

		while ((c = &r->c[i++ % r->nconn])->fd < 0)
			;
		c->out.len = 0;
		loadgen_encode(r->cfg.framing, &q, &c->out);
		if (c->out.oom)
			return ditto_err(-ENOMEM, "load: out of memory");
		if (!(err = send_all(r, c)))
			err = recv_answer(r, c);
		c->out.len = 0;
	}
	if (err)
		return ditto_err(err, "load: setting key %llu on %s before the run: %s",
				 (unsigned long long)q.key - 1, r->where, strerror(-err));
	return 0;
}

/* ------------------------------------------------------------------ */
/* The loop                                                             */
/* ------------------------------------------------------------------ */

static bool may_issue(const struct run *r)
{
	return !r->cfg.requests || r->recorded + r->inflight < r->cfg.requests;
}

static double gap_ns(struct run *r)
{
	double mean = 1e9 / r->cfg.qps;

	if (r->cfg.mode == DITTO_LOAD_FIXED)
		return mean;
	return -log1p(-ditto_rng_double(&r->rng)) * mean;
}

/* Hand due arrivals (open loop) or every free connection (closed loop) a
 * request. Arrivals that find no free connection wait on the timeline. */
static void dispatch(struct run *r, uint64_t now)
{
	bool open = r->cfg.mode != DITTO_LOAD_CLOSED;

	/* at most one turn per connection: one that fails at once and is
	 * reconnected must not keep this loop from the clock */
	for (unsigned k = 0; k < r->nconn && !r->fatal && may_issue(r) &&
	     (!open || r->t0 + (uint64_t)r->next_at <= now); k++) {
		struct conn *c = pop_free(r);

		if (!c)
			return;
		send_request(r, c, open ? r->t0 + (uint64_t)r->next_at : now, now);
		if (open)
			r->next_at += gap_ns(r);
	}
}

static void scan_timeouts(struct run *r, uint64_t now)
{
	for (unsigned i = 0; i < r->nconn; i++) {
		struct conn *c = &r->c[i];

		if (c->fd >= 0 && c->busy && now - c->sent > r->timeout_ns)
			conn_fail(r, c, now, DITTO_LOAD_ERR_TIMEOUT);
	}
	r->next_scan = now + SCAN_NS;
}

static bool requests_done(const struct run *r)
{
	return r->cfg.requests && r->recorded >= r->cfg.requests;
}

static bool done(const struct run *r, uint64_t now)
{
	return r->fatal || stopped(r) || now >= r->end || !r->alive || requests_done(r);
}

/*
 * Requests still outstanding when the loop ends: those that waited the
 * answer timeout (the last scan may not have seen them), or all of them
 * when the deadline ended the run, are timeouts; the others were merely
 * cut off by the end and are not counted.
 */
static void count_unanswered(struct run *r, uint64_t now)
{
	r->deadline_hit = r->end_is_deadline && now >= r->end && !stopped(r) && !requests_done(r);
	for (unsigned i = 0; i < r->nconn; i++) {
		struct conn *c = &r->c[i];

		if (c->fd < 0 || !c->busy || (!r->deadline_hit && now - c->sent < r->timeout_ns))
			continue;
		c->busy = false;
		r->inflight--;
		if (recording(r, now)) {
			loadgen_result_error(r->res, DITTO_LOAD_ERR_TIMEOUT);
			r->recorded++;
		}
	}
}

/* How long to sleep: until the next arrival (if a connection could take
 * it), the end, or the next timeout scan. */
static uint64_t wait_ns(const struct run *r, uint64_t now)
{
	uint64_t until = r->next_scan < r->end ? r->next_scan : r->end;

	if (r->cfg.mode != DITTO_LOAD_CLOSED && r->nfree && may_issue(r) &&
	    r->t0 + (uint64_t)r->next_at < until)
		until = r->t0 + (uint64_t)r->next_at;
	return until > now ? until - now : 0;
}

static int wait_events(struct run *r, struct epoll_event *evs, int max, uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / NS), .tv_nsec = (long)(ns % NS) };
	int n;

	if (!r->no_pwait2) {
		n = epoll_pwait2(r->ep, evs, max, &ts, NULL);
		if (n >= 0 || errno != ENOSYS)
			return n;
		r->no_pwait2 = true;	/* kernels before 5.11: millisecond sleeps */
	}
	return epoll_wait(r->ep, evs, max, (int)(ns / 1000000));
}

static int loop(struct run *r)
{
	struct epoll_event evs[256];
	/* the first requests go out as the clock starts: one unanswered for
	 * the whole run has then waited exactly that long (default_timeout) */
	uint64_t now = r->t0;

	while (!done(r, now)) {
		int n;

		dispatch(r, now);
		n = wait_events(r, evs, (int)ARRAY_SIZE(evs), wait_ns(r, now));
		if (n < 0 && errno != EINTR)
			return ditto_err(-errno, "load: epoll_wait: %s", strerror(errno));
		now = now_ns();
		for (int i = 0; i < n && !r->fatal; i++)
			on_event(r, &evs[i], now);
		if (now >= r->next_scan)
			scan_timeouts(r, now);
	}
	if (!r->fatal)
		count_unanswered(r, now);
	now = now < r->end ? now : r->end;
	r->res->elapsed_s = now > r->rec_start ? (double)(now - r->rec_start) / 1e9 : 0;
	return r->fatal;
}

/* "16 failed: timeout 16", or "none failed". */
static void failures(const struct ditto_load_result *res, char *buf, size_t len)
{
	char kinds[256];

	if (!res->errors) {
		snprintf(buf, len, "none failed");
		return;
	}
	loadgen_result_kinds(res, kinds, sizeof(kinds));
	snprintf(buf, len, "%llu failed: %s", (unsigned long long)res->errors, kinds);
}

/*
 * A run that the deadline cut short, or that answered no request (every
 * one failed, or none came back), failed: never a result of zeros that
 * reads as a quiet success. The message names the kinds of the errors.
 */
static int verdict(const struct run *r)
{
	const struct ditto_load_result *res = r->res;
	char why[320];

	failures(res, why, sizeof(why));
	if (r->deadline_hit && r->cfg.requests)
		return ditto_err(-ETIMEDOUT, "load: deadline of %g s passed with %llu of %llu "
				 "requests to %s answered (%s)", r->cfg.deadline_s,
				 (unsigned long long)res->completed,
				 (unsigned long long)r->cfg.requests, r->where, why);
	if (r->deadline_hit)
		return ditto_err(-ETIMEDOUT, "load: deadline of %g s passed with %llu requests to "
				 "%s answered (%s)", r->cfg.deadline_s,
				 (unsigned long long)res->completed, r->where, why);
	if (res->completed)
		return 0;
	if (stopped(r) && !res->errors)
		return ditto_err(-ECANCELED, "load: stopped before any request to %s was answered",
				 r->where);
	if (r->inflight)
		return ditto_err(-EIO, "load: no request to %s was answered in %.3g s (%s; %llu "
				 "unanswered at the end, answer timeout %g s)", r->where,
				 res->elapsed_s, why, (unsigned long long)r->inflight,
				 r->cfg.timeout_s);
	return ditto_err(-EIO, "load: no request to %s was answered in %.3g s (%s)", r->where,
			 res->elapsed_s, why);
}

/* ------------------------------------------------------------------ */

static void run_free(struct run *r)
{
	for (unsigned i = 0; r->c && i < r->nconn; i++) {
		if (r->c[i].fd >= 0)
			close(r->c[i].fd);
		dbuf_free(&r->c[i].out);
		free(r->c[i].in);
	}
	free(r->c);
	free(r->free_stack);
	if (r->ep >= 0)
		close(r->ep);
	ditto_load_result_free(r->res);
}

static int setup(struct run *r)
{
	const struct cfg *c = &r->cfg;

	r->nconn = c->conns;
	r->c = calloc(c->conns, sizeof(*r->c));
	r->free_stack = calloc(c->conns, sizeof(*r->free_stack));
	r->res = loadgen_result_new(c->mode == DITTO_LOAD_CLOSED ? 0 : c->qps);
	if (!r->c || !r->free_stack || !r->res)
		return ditto_err(-ENOMEM, "load: out of memory");
	for (unsigned i = 0; i < c->conns; i++)
		r->c[i].fd = -1;
	if ((r->ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return ditto_err(-errno, "load: epoll_create1: %s", strerror(errno));
	ditto_rng_seed(&r->rng, c->seed);
	r->timeout_ns = (uint64_t)(c->timeout_s * 1e9);
	return open_all(r);
}

DITTO_API int ditto_load_run(const struct ditto_loadgen_opts *opts, struct ditto_load_result **out)
{
	struct run r = { .ep = -1 };
	int err;

	if (!out)
		return ditto_err(-EINVAL, "load: an output pointer is needed");
	*out = NULL;
	if ((err = opts_read(opts, &r)) || (err = setup(&r)) || (err = preset_keys(&r)))
		goto out;
	/* the clock starts once every connection is open and the keys set */
	r.t0 = now_ns();
	r.rec_start = r.t0 + (uint64_t)(r.cfg.warmup_s * 1e9);
	r.end = r.cfg.duration_s > 0 ? r.rec_start + (uint64_t)(r.cfg.duration_s * 1e9) : UINT64_MAX;
	if (r.cfg.deadline_s > 0 && r.t0 + (uint64_t)(r.cfg.deadline_s * 1e9) < r.end) {
		r.end = r.t0 + (uint64_t)(r.cfg.deadline_s * 1e9);
		r.end_is_deadline = true;
	}
	r.next_scan = r.t0 + SCAN_NS;
	if ((err = loop(&r)))
		goto out;
	/* a failed run still hands out its result: the counts say why */
	err = verdict(&r);
	*out = r.res;
	r.res = NULL;
out:
	run_free(&r);
	return err;
}
