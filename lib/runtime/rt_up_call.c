/* SPDX-License-Identifier: MIT */
/*
 * A serving thread's calls to its children for the request it serves
 * (see rt.h for the rules): per edge the fan-out drawn, sequential edges
 * called one call after the other, then the calls of all parallel edges
 * in flight together, one pooled connection each. Every exchange of a
 * batch is bounded by --upstream-timeout-ms and by the clone's stop; a
 * failure is counted and the connection dropped, never more.
 */
#include "rt_int.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define POOL_MAX 64		/* idle connections kept per child and thread */
#define BATCH_MAX 64		/* parallel calls in flight at once */
#define FANOUT_MAX 4096		/* calls per edge and request at most */
#define REPLY_READ 16384u
/* Streams of the fan-out and size draws, apart from the thread's others
 * (rt_request.c uses bits 62 and 63). */
#define UP_STREAMS (1ull << 61)

int rt_up_thread_init(struct rt_thread *t, uint64_t stream)
{
	rt_rng_seed(&t->up_rng, rt_config.seed, UP_STREAMS | stream);
	/* ids differ between runs and processes of one seed: traces of two
	 * runs must not merge */
	rt_rng_seed(&t->id_rng, rt_now_ns() ^ (uint64_t)getpid() << 40 ^ (uint64_t)(uintptr_t)t,
		    stream);
	memset(&t->trace, 0, sizeof(t->trace));
	t->up = NULL;
	if (!rt_config.nupstreams)
		return 0;
	t->up = calloc(rt_config.nupstreams, sizeof(*t->up));
	return t->up ? 0 : -1;
}

static void conn_close(struct rt_up_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	rt_buf_free(&c->in);
	rt_buf_free(&c->out);
}

void rt_up_thread_fini(struct rt_thread *t)
{
	for (unsigned i = 0; t->up && i < rt_config.nupstreams; i++) {
		for (unsigned k = 0; k < t->up[i].n; k++)
			conn_close(&t->up[i].idle[k]);
		free(t->up[i].idle);
	}
	free(t->up);
	t->up = NULL;
}

/* Back to the pool when it may serve again, else closed (its lock held). */
static void give_back_locked(struct rt_thread *t, struct rt_up_call *k)
{
	struct rt_up_pool *p = &t->up[k->up];

	if (k->keep && p->n == p->cap && p->cap < POOL_MAX) {
		unsigned cap = p->cap ? 2 * p->cap : 4;
		struct rt_up_conn *n = realloc(p->idle, cap * sizeof(*n));

		if (n) {
			p->idle = n;
			p->cap = cap;
		}
	}
	if (!k->keep || p->n == p->cap) {
		conn_close(&k->c);
		return;
	}
	k->c.in.len = 0;
	k->c.reused = true;
	p->idle[p->n++] = k->c;
}

static void pool_lock(const struct rt_up_call *k)
{
	if (k->lock)
		pthread_mutex_lock(k->lock);
}

static void pool_unlock(const struct rt_up_call *k)
{
	if (k->lock)
		pthread_mutex_unlock(k->lock);
}

/* Back to the pool when it may serve again, else closed. */
static void give_back(struct rt_thread *t, struct rt_up_call *k)
{
	pool_lock(k);
	give_back_locked(t, k);
	pool_unlock(k);
}

/* The call's connection: an idle one, else a new one (connect started). */
static int take(struct rt_thread *t, struct rt_up_call *k)
{
	struct rt_up_pool *p = &t->up[k->up];

	pool_lock(k);
	if (p->n) {
		k->c = p->idle[--p->n];
		pool_unlock(k);
		return 0;
	}
	pool_unlock(k);
	memset(&k->c, 0, sizeof(k->c));
	k->c.fd = rt_upstream_connect(k->up);
	return k->c.fd < 0 ? -1 : 0;
}

static void fail(struct rt_up_call *k)
{
	k->st = RT_UP_FAILED;
	k->keep = false;
	rt_upstream_count(k->up, RT_UP_ERRORS);
	rt_upstream_failed(k->up);
}

/* A pooled connection the child closed while it was idle fails before
 * any reply byte: one fresh connection is tried instead, uncounted. */
static bool retry(struct rt_up_call *k, int err)
{
	if (!k->c.reused || k->retried || k->c.in.len ||
	    (err && err != ECONNRESET && err != EPIPE))
		return false;
	close(k->c.fd);
	k->c.fd = rt_upstream_connect(k->up);
	k->c.reused = false;
	k->c.watched = false;
	k->c.events = 0;
	k->c.out_off = 0;
	k->retried = true;
	k->st = RT_UP_WRITING;
	return k->c.fd >= 0;
}

static void writing(struct rt_up_call *k)
{
	while (k->c.out_off < k->c.out.len) {
		ssize_t n = send(k->c.fd, k->c.out.data + k->c.out_off, k->c.out.len - k->c.out_off,
				 MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0) {
			if (!retry(k, errno))
				fail(k);
			return;
		}
		k->c.out_off += (size_t)n;
	}
	k->st = RT_UP_READING;
}

static void reading(struct rt_up_call *k)
{
	enum rt_framing f = rt_config.upstreams[k->up].framing;
	ssize_t n;
	long whole;

	if (rt_buf_reserve(&k->c.in, REPLY_READ)) {
		fail(k);
		return;
	}
	n = recv(k->c.fd, k->c.in.data + k->c.in.len, REPLY_READ, 0);
	if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n <= 0) {
		if (n == 0 && k->c.in.len &&
		    rt_up_reply(f, k->c.in.data, k->c.in.len, true, &k->reply_failed) > 0) {
			k->st = RT_UP_DONE;
			k->keep = false;	/* it ended with the reply */
		} else if (!retry(k, n ? errno : 0)) {
			fail(k);
		}
		return;
	}
	k->c.in.len += (size_t)n;
	whole = rt_up_reply(f, k->c.in.data, k->c.in.len, false, &k->reply_failed);
	if (whole < 0) {
		fail(k);
	} else if (whole > 0) {
		k->st = RT_UP_DONE;
		/* bytes past the reply: the exchange is out of step */
		k->keep = (size_t)whole == k->c.in.len;
	}
}

/* The call's request (of size bytes) built and its connection taken;
 * -1: none to be had. */
static int start(struct rt_thread *t, struct rt_thread *pool, pthread_mutex_t *lock,
		 struct rt_up_call *k, const struct rt_up_ctx *ctx)
{
	unsigned up = ctx->up;
	const struct rt_upstream *u = &rt_config.upstreams[up];
	char tp[RT_TRACEPARENT_LEN + 1];

	memset(k, 0, sizeof(*k));
	k->lock = lock;
	k->ctx = *ctx;
	k->up = up;
	k->keep = true;
	k->start_ns = rt_now_ns();
	rt_trace_child(t, k->span);
	rt_upstream_count(up, RT_UP_CALLS);
	if (take(pool, k)) {
		k->c.fd = -1;
		fail(k);
		return -1;
	}
	rt_traceparent_format(tp, ctx->trace_id, k->span, ctx->flags);
	k->c.out.len = k->c.out_off = 0;
	k->c.in.len = 0;
	/* A clone of a tier that carried no trace context (nginx in front of
	 * traced tiers) carries none: its children's requests keep their
	 * original sizes, and they start their traces as the originals did. */
	if (rt_up_request(u->framing, ctx->size,
			  u->framing == RT_FRAMING_HTTP1 && !rt_config.untraced ? tp : NULL,
			  &k->c.out)) {
		fail(k);
		return -1;
	}
	k->st = RT_UP_WRITING;
	writing(k);
	return 0;
}

static void finish(struct rt_thread *t, struct rt_up_call *k)
{
	struct rt_span s = { .kind = RT_SPAN_CLIENT, .trace_id = k->ctx.trace_id,
			     .span_id = k->span, .parent_id = k->ctx.parent_id,
			     .start_ns = k->start_ns, .end_ns = rt_now_ns(), .upstream = (int)k->up };

	if (k->st == RT_UP_WRITING || k->st == RT_UP_READING) {
		/* out of time; a call the clone's stop cut short is a call only */
		if (!rt_stopping())
			rt_upstream_count(k->up, RT_UP_TIMEOUTS);
		k->keep = false;
	}
	if (k->st == RT_UP_DONE && k->reply_failed)
		rt_upstream_count(k->up, RT_UP_ERRORS);
	s.error = k->st != RT_UP_DONE || k->reply_failed;
	rt_span_end(&s);
	if (k->c.fd >= 0)
		give_back(t, k);
	else
		conn_close(&k->c);
}

static int wait_ms(uint64_t deadline)
{
	uint64_t now = rt_now_ns(), ms;

	if (now >= deadline)
		return -1;
	ms = (deadline - now + 999999) / 1000000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* The calls k[0..n) started together, each to its end or the deadline. */
static void run(struct rt_thread *t, struct rt_up_call *k, unsigned n)
{
	uint64_t deadline = rt_now_ns() + (uint64_t)rt_opts.upstream_timeout_ms * 1000000;
	struct pollfd pfd[BATCH_MAX + 1];
	unsigned idx[BATCH_MAX];

	for (;;) {
		unsigned np = 0;
		int ms;

		for (unsigned i = 0; i < n; i++)
			if (k[i].st == RT_UP_WRITING || k[i].st == RT_UP_READING) {
				pfd[np] = (struct pollfd){ k[i].c.fd, k[i].st == RT_UP_WRITING ? POLLOUT : POLLIN, 0 };
				idx[np++] = i;
			}
		if (!np || rt_stopping() || (ms = wait_ms(deadline)) < 0)
			break;
		pfd[np] = (struct pollfd){ rt_stop_fd, POLLIN, 0 };
		if (poll(pfd, np + (rt_stop_fd >= 0), ms) < 0 && errno != EINTR)
			break;
		for (unsigned j = 0; j < np; j++) {
			struct rt_up_call *c = &k[idx[j]];

			if (!pfd[j].revents)
				continue;
			if (c->st == RT_UP_WRITING)
				writing(c);
			else if (c->st == RT_UP_READING)
				reading(c);
		}
	}
	for (unsigned i = 0; i < n; i++)
		finish(t, &k[i]);
}

/* A call of edge up for the request t serves, its size drawn. */
static void context(struct rt_thread *t, unsigned up, struct rt_up_ctx *ctx)
{
	ctx->up = up;
	ctx->size = rt_hist_draw(&rt_config.upstreams[up].request_bytes, &t->up_rng);
	memcpy(ctx->trace_id, t->trace.trace_id, 16);
	memcpy(ctx->parent_id, t->trace.span_id, 8);
	ctx->flags = t->trace.flags;
}

void rt_up_batch(struct rt_thread *t, const struct rt_up_ctx *ctx, unsigned n)
{
	struct rt_up_call batch[BATCH_MAX];

	while (n) {
		unsigned m = n < BATCH_MAX ? n : BATCH_MAX;

		for (unsigned i = 0; i < m; i++)
			start(t, t, NULL, &batch[i], &ctx[i]);
		run(t, batch, m);
		ctx += m;
		n -= m;
	}
}

void rt_up_call_begin(struct rt_thread *t, struct rt_thread *pool, pthread_mutex_t *lock,
		      const struct rt_up_ctx *ctx, struct rt_up_call *k)
{
	start(t, pool, lock, k, ctx);
}

void rt_up_calls_end(struct rt_thread *pool, struct rt_up_call *k, unsigned n)
{
	run(pool, k, n);
}

/* Calls of edge i for t's request: the fan-out drawn, those to a child
 * without an address counted as skipped. */
static uint64_t fanout(struct rt_thread *t, unsigned i)
{
	uint64_t calls = rt_hist_draw(&rt_config.upstreams[i].fanout, &t->up_rng);

	calls = calls > FANOUT_MAX ? FANOUT_MAX : calls;
	for (; calls && !rt_upstream_configured(i); calls--)
		rt_upstream_count(i, RT_UP_SKIPPED);
	return calls;
}

/* The calls of t's request on its sync edges (async: its async ones),
 * in the order they are made: emit(arg, ctx, n) gets each batch (calls
 * in flight together), a sync sequential edge's calls one batch each,
 * the parallel edges' calls together last; async calls all together
 * (none waits for another). */
static void plan(struct rt_thread *t, bool async, rt_up_emit_fn emit, void *arg)
{
	struct rt_up_ctx par[BATCH_MAX];
	unsigned np = 0;

	for (unsigned i = 0; i < rt_config.nupstreams && !rt_stopping(); i++) {
		const struct rt_upstream *u = &rt_config.upstreams[i];

		if (u->async != async)
			continue;
		for (uint64_t calls = fanout(t, i); calls; calls--) {
			struct rt_up_ctx one;

			if (!async && u->order != RT_ORDER_PARALLEL) {
				context(t, i, &one);
				emit(arg, &one, 1);
			} else {
				context(t, i, &par[np]);
				if (++np == BATCH_MAX) {
					emit(arg, par, np);
					np = 0;
				}
			}
		}
	}
	if (np)
		emit(arg, par, np);
}

void rt_up_plan(struct rt_thread *t, rt_up_emit_fn emit, void *arg)
{
	plan(t, false, emit, arg);
}

void rt_up_plan_async(struct rt_thread *t, rt_up_emit_fn emit, void *arg)
{
	plan(t, true, emit, arg);
}

static void run_now(void *t, const struct rt_up_ctx *ctx, unsigned n)
{
	rt_up_batch(t, ctx, n);
}

/* The calls of t's request on its sync edges (async false), made now;
 * or its async ones, made from an epoll loop's own waits (rt_park.c) or
 * handed to the process's async caller (rt_up_async.c). */
void rt_up_calls(struct rt_thread *t, bool async)
{
	if (!async) {
		rt_up_plan(t, run_now, t);
		return;
	}
	if (t->parker && rt_park_async(t->parker))
		return;
	for (unsigned i = 0; i < rt_config.nupstreams && !rt_stopping(); i++) {
		if (!rt_config.upstreams[i].async)
			continue;
		for (uint64_t calls = fanout(t, i); calls; calls--) {
			struct rt_up_ctx one;

			context(t, i, &one);
			rt_up_async_push(t, &one);
		}
	}
}

/* One step of a call its socket is ready for (rt_park.c). */
void rt_up_call_step(struct rt_up_call *k)
{
	if (k->st == RT_UP_WRITING)
		writing(k);
	else if (k->st == RT_UP_READING)
		reading(k);
}

void rt_up_call_fail(struct rt_up_call *k)
{
	fail(k);
}

void rt_up_call_end(struct rt_thread *t, struct rt_up_call *k)
{
	finish(t, k);
}

void rt_up_pool_unwatched(struct rt_thread *t)
{
	for (unsigned i = 0; t->up && i < rt_config.nupstreams; i++)
		for (unsigned k = 0; k < t->up[i].n; k++) {
			t->up[i].idle[k].watched = false;
			t->up[i].idle[k].events = 0;
		}
}

bool rt_up_pool_forget(struct rt_thread *t, int fd)
{
	for (unsigned i = 0; t->up && i < rt_config.nupstreams; i++) {
		struct rt_up_pool *p = &t->up[i];

		for (unsigned k = 0; k < p->n; k++)
			if (p->idle[k].fd == fd) {
				conn_close(&p->idle[k]);
				p->idle[k] = p->idle[--p->n];
				return true;
			}
	}
	return false;
}
