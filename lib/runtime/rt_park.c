/* SPDX-License-Identifier: MIT */
/*
 * Requests parked on their sync calls, in the epoll skeleton. An event
 * loop (node's, nginx's) does not wait for a child's reply in the thread
 * that serves: it serves its other connections meanwhile and answers
 * when the reply comes. A clone that waited in its serving thread served
 * one request at a time however many its original had in flight, and a
 * graph of such clones saturated at half the original's rate.
 *
 * So a request with sync calls is parked once its body and replay ran:
 * its connection serves nothing more until it is answered, its calls go
 * out batch by batch as rt_up_calls() makes them (a sequential edge's
 * calls one after the other, the parallel ones together), their sockets
 * in the thread's epoll set, each batch bounded by --upstream-timeout-ms;
 * after the last batch the response goes out and the connection serves
 * on. Pooled connections stay in the set while idle (for a child that
 * closes one): a call on a kept connection costs no epoll_ctl, as an
 * event loop's kept sockets cost none.
 *
 * A request's async calls are made the same way once it is answered, as
 * a park of no connection freed when they end: their replies are read in
 * the loop's own waits, as node reads them, where a caller thread of the
 * process's (rt_up_async.c) cost a hand-off, its futex calls and its
 * waits per call that the original never made.
 */
#include "rt_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

struct rt_park {
	struct rt_park *prev, *next;
	struct rt_conn *c;
	/* the request: at the start of c's input while parked, its
	 * pointers kept as offsets (SIZE_MAX: none) */
	struct rt_req req;
	size_t off_p, off_arg, off_tp;
	long len;
	struct rt_trace trace;	/* the thread's, of this request */
	uint64_t after_loops;
	/* the calls in order; batch b is plan[ends[b - 1]..ends[b]) */
	struct rt_up_ctx *plan;
	unsigned *ends;
	unsigned nplan, capplan, nbatch, capbatch, batch;
	struct rt_up_call *calls;	/* the batch in flight */
	unsigned ncalls, capcalls, open;
	uint64_t deadline;
};

/* The call in flight on an upstream socket, by its fd. */
struct park_slot {
	struct rt_park *p;
	unsigned i;
};

struct rt_parker {
	struct rt_worker *w;
	int ep;
	/* by deadline: every batch has the same bound, so a park whose
	 * batch begins goes last and the first is the soonest */
	struct rt_park *head, *tail;
	struct park_slot *byfd;
	size_t nfd;
	struct rt_conn **dying;	/* answered and closing: dropped after the wake-up */
	unsigned ndying, capdying;
};

static bool grow(void **p, unsigned *cap, unsigned need, size_t size)
{
	unsigned n = *cap ? *cap : 4;
	void *q;

	if (need <= *cap)
		return true;
	while (n < need)
		n *= 2;
	q = realloc(*p, (size_t)n * size);
	if (!q)
		return false;
	*p = q;
	*cap = n;
	return true;
}

struct plan_ctx {
	struct rt_park *p;
	bool failed;
};

static void emit(void *arg, const struct rt_up_ctx *ctx, unsigned n)
{
	struct plan_ctx *pc = arg;
	struct rt_park *p = pc->p;

	if (pc->failed || !grow((void **)&p->plan, &p->capplan, p->nplan + n, sizeof(*ctx)) ||
	    !grow((void **)&p->ends, &p->capbatch, p->nbatch + 1, sizeof(*p->ends))) {
		pc->failed = true;
		return;
	}
	memcpy(p->plan + p->nplan, ctx, n * sizeof(*ctx));
	p->nplan += n;
	p->ends[p->nbatch++] = p->nplan;
}

static void park_free(struct rt_park *p)
{
	free(p->plan);
	free(p->ends);
	free(p->calls);
	free(p);
}

static struct park_slot *slot(struct rt_parker *pk, int fd)
{
	if (fd < 0)
		return NULL;
	if ((size_t)fd >= pk->nfd) {
		size_t n = pk->nfd ? pk->nfd : 64;
		struct park_slot *s;

		while (n <= (size_t)fd)
			n *= 2;
		s = realloc(pk->byfd, n * sizeof(*s));
		if (!s)
			return NULL;
		memset(s + pk->nfd, 0, (n - pk->nfd) * sizeof(*s));
		pk->byfd = s;
		pk->nfd = n;
	}
	return &pk->byfd[fd];
}

static void unslot(struct rt_parker *pk, const struct rt_park *p, int fd)
{
	if (fd >= 0 && (size_t)fd < pk->nfd && pk->byfd[fd].p == p)
		pk->byfd[fd].p = NULL;
}

static uint64_t tag(int fd)
{
	return RT_PARK_TAG | (uint64_t)fd;
}

/* The call's socket watched for what it waits for; false: it cannot be. */
static bool watch_call(struct rt_parker *pk, struct rt_park *p, unsigned i)
{
	struct rt_up_call *k = &p->calls[i];
	uint32_t ev = k->st == RT_UP_WRITING ? EPOLLOUT : EPOLLIN;
	struct epoll_event e = { .events = ev, .data.u64 = tag(k->c.fd) };
	struct park_slot *s = slot(pk, k->c.fd);

	if (!s)
		return false;
	s->p = p;
	s->i = i;
	if (k->c.watched && k->c.events == ev)
		return true;
	/* a flag from another set (a thread's earlier loop) is tried the
	 * other way once */
	if (epoll_ctl(pk->ep, k->c.watched ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, k->c.fd, &e) &&
	    ((errno != ENOENT && errno != EEXIST) ||
	     epoll_ctl(pk->ep, errno == ENOENT ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, k->c.fd, &e)))
		return false;
	k->c.watched = true;
	k->c.events = ev;
	return true;
}

/* The call ended: its socket, if kept, waits idle for EPOLLIN only. */
static void end_call(struct rt_parker *pk, struct rt_park *p, struct rt_up_call *k)
{
	unslot(pk, p, k->c.fd);
	if (k->st == RT_UP_DONE && k->keep && k->c.watched && k->c.events != EPOLLIN) {
		struct epoll_event e = { .events = EPOLLIN, .data.u64 = tag(k->c.fd) };

		if (epoll_ctl(pk->ep, EPOLL_CTL_MOD, k->c.fd, &e))
			k->keep = false;
		else
			k->c.events = EPOLLIN;
	}
	rt_up_call_end(&pk->w->t, k);
}

static bool in_flight(const struct rt_up_call *k)
{
	return k->st == RT_UP_WRITING || k->st == RT_UP_READING;
}

/* After a step: the call ends, or waits for its socket (which a retry
 * may have replaced). */
static void settle(struct rt_parker *pk, struct rt_park *p, unsigned i, int fd_before)
{
	struct rt_up_call *k = &p->calls[i];

	if (k->c.fd != fd_before)
		unslot(pk, p, fd_before);
	if (in_flight(k) && !watch_call(pk, p, i))
		rt_up_call_fail(k);
	if (!in_flight(k)) {
		end_call(pk, p, k);
		p->open--;
	}
}

/* The next batch begun; false when none is left. */
static bool next_batch(struct rt_parker *pk, struct rt_park *p)
{
	while (p->batch < p->nbatch && !rt_stopping()) {
		unsigned from = p->batch ? p->ends[p->batch - 1] : 0, n = p->ends[p->batch] - from;

		p->batch++;
		if (!grow((void **)&p->calls, &p->capcalls, n, sizeof(*p->calls))) {
			for (unsigned i = from; i < from + n; i++)
				rt_upstream_count(p->plan[i].up, RT_UP_SKIPPED);
			continue;
		}
		p->deadline = rt_now_ns() + (uint64_t)rt_opts.upstream_timeout_ms * 1000000;
		p->open = p->ncalls = n;
		for (unsigned i = 0; i < n; i++) {
			rt_up_call_begin(&pk->w->t, &pk->w->t, NULL, &p->plan[from + i], &p->calls[i]);
			settle(pk, p, i, p->calls[i].c.fd);
		}
		if (p->open)
			return true;
	}
	return false;
}

static void link_park(struct rt_parker *pk, struct rt_park *p)
{
	p->next = NULL;
	p->prev = pk->tail;
	if (pk->tail)
		pk->tail->next = p;
	else
		pk->head = p;
	pk->tail = p;
}

static void unlink_park(struct rt_parker *pk, struct rt_park *p)
{
	if (p->prev)
		p->prev->next = p->next;
	else
		pk->head = p->next;
	if (p->next)
		p->next->prev = p->prev;
	else
		pk->tail = p->prev;
}

static size_t offset(const char *q, const char *base)
{
	return q ? (size_t)(q - base) : SIZE_MAX;
}

static const char *at(const char *base, size_t off)
{
	return off == SIZE_MAX ? NULL : base + off;
}

bool rt_park_async(struct rt_parker *pk)
{
	struct rt_park *p = calloc(1, sizeof(*p));
	struct plan_ctx pc = { p, false };

	if (!p)
		return false;
	rt_up_plan_async(&pk->w->t, emit, &pc);
	if (pc.failed) {	/* the calls drawn and not made */
		for (unsigned i = 0; i < p->nplan; i++)
			rt_upstream_count(p->plan[i].up, RT_UP_SKIPPED);
		park_free(p);
		return true;
	}
	if (!next_batch(pk, p)) {	/* no call, or every one ended at once */
		park_free(p);
		return true;
	}
	link_park(pk, p);
	return true;
}

bool rt_park_request(struct rt_parker *pk, struct rt_conn *c, const struct rt_req *req,
		     long len, const char *base)
{
	struct rt_thread *t = &pk->w->t;
	struct rt_park *p = calloc(1, sizeof(*p));
	struct plan_ctx pc = { p, false };

	if (!p) {
		rt_up_calls(t, false);	/* no room to park: the calls block */
		return false;
	}
	rt_up_plan(t, emit, &pc);
	if (pc.failed) {	/* the calls drawn and not made */
		for (unsigned i = 0; i < p->nplan; i++)
			rt_upstream_count(p->plan[i].up, RT_UP_SKIPPED);
		park_free(p);
		return false;
	}
	p->c = c;
	p->req = *req;
	p->off_p = offset(req->p, base);
	p->off_arg = offset(req->arg, base);
	p->off_tp = offset(req->traceparent, base);
	p->len = len;
	if (!next_batch(pk, p)) {	/* no call, or every one ended at once */
		park_free(p);
		return false;
	}
	p->trace = t->trace;
	p->after_loops = t->after_loops;
	link_park(pk, p);
	c->park = p;
	return true;
}

/* The request answered and its connection served on; one that ends is
 * dropped after the wake-up (an event of this one may still name it). */
static void resume(struct rt_parker *pk, struct rt_park *p)
{
	struct rt_thread *t = &pk->w->t;
	struct rt_conn *c = p->c;
	struct rt_req req = p->req;

	unlink_park(pk, p);
	if (!c) {	/* async calls: nobody waits for them */
		park_free(p);
		return;
	}
	c->park = NULL;
	req.p = at(c->in.data, p->off_p);
	req.arg = at(c->in.data, p->off_arg);
	req.traceparent = at(c->in.data, p->off_tp);
	t->trace = p->trace;
	t->after_loops = p->after_loops;
	rt_conn_resume(c, t, &req, p->len);
	park_free(p);
	if (c->want == RT_WANT_CLOSE || !rt_net_epoll_watch(pk->ep, c)) {
		c->want = RT_WANT_CLOSE;
		if (grow((void **)&pk->dying, &pk->capdying, pk->ndying + 1, sizeof(*pk->dying)))
			pk->dying[pk->ndying++] = c;
		else
			rt_worker_drop(pk->w, c);	/* out of memory: now */
	}
}

/* The batch ended: the next one, or the answer. */
static void advance(struct rt_parker *pk, struct rt_park *p)
{
	if (p->open)
		return;
	if (!next_batch(pk, p)) {
		resume(pk, p);
		return;
	}
	unlink_park(pk, p);
	link_park(pk, p);
}

/* A pooled connection's event while it is idle: its child closed it (or
 * sent what no call asked for); a stale event (the socket's call ended
 * in this wake-up) finds nothing to read. */
static void idle_event(struct rt_parker *pk, int fd)
{
	char b;
	ssize_t n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	/* not pooled: a socket closed in this wake-up, out of the set
	 * already (its number may be a new connection's now) */
	rt_up_pool_forget(&pk->w->t, fd);
}

void rt_park_event(struct rt_parker *pk, uint64_t data)
{
	int fd = (int)(data & ~RT_PARK_TAG);
	struct park_slot *s = (size_t)fd < pk->nfd ? &pk->byfd[fd] : NULL;
	struct rt_park *p;

	if (!s || !s->p) {
		idle_event(pk, fd);
		return;
	}
	p = s->p;
	rt_up_call_step(&p->calls[s->i]);
	settle(pk, p, s->i, fd);
	advance(pk, p);
}

bool rt_park_pending(const struct rt_parker *pk)
{
	return pk && pk->head;
}

int rt_park_timeout_ms(const struct rt_parker *pk)
{
	uint64_t now, first;

	if (!pk || !pk->head)
		return -1;	/* nor a clock read: it is work the original did not do */
	now = rt_now_ns();
	first = pk->head->deadline;
	return first <= now ? 0 : (int)((first - now + 999999) / 1000000);
}

/* Every call of p's batch still in flight ends (out of time). */
static void cut(struct rt_parker *pk, struct rt_park *p)
{
	if (!p->open)	/* ended already: its calls' connections are gone */
		return;
	for (unsigned i = 0; i < p->ncalls; i++)
		if (in_flight(&p->calls[i]))
			end_call(pk, p, &p->calls[i]);
	p->open = 0;
}

void rt_park_expire(struct rt_parker *pk)
{
	uint64_t now;
	struct rt_park *p;

	if (!pk->head)
		return;
	now = rt_now_ns();
	while ((p = pk->head) && p->deadline <= now) {
		cut(pk, p);
		advance(pk, p);
	}
}

void rt_park_dying(struct rt_parker *pk)
{
	for (unsigned i = 0; i < pk->ndying; i++)
		rt_worker_drop(pk->w, pk->dying[i]);
	pk->ndying = 0;
}

static void cancel(struct rt_parker *pk, struct rt_park *p)
{
	cut(pk, p);
	unlink_park(pk, p);
	if (p->c)
		p->c->park = NULL;
	park_free(p);
}

void rt_park_cancel(struct rt_parker *pk, struct rt_conn *c)
{
	if (c->park)
		cancel(pk, c->park);
}

struct rt_parker *rt_park_open(struct rt_worker *w, int ep)
{
	struct rt_parker *pk;

	/* without room, sync calls block as in the other skeletons and
	 * async ones go to the caller thread */
	if (!rt_config.nupstreams || !(pk = calloc(1, sizeof(*pk))))
		return NULL;
	pk->w = w;
	pk->ep = ep;
	w->t.parker = pk;
	return pk;
}

void rt_park_close(struct rt_parker *pk)
{
	if (!pk)
		return;
	while (pk->head)
		cancel(pk, pk->head);
	rt_park_dying(pk);
	rt_up_pool_unwatched(&pk->w->t);	/* the set closes: a next loop has its own */
	pk->w->t.parker = NULL;
	free(pk->byfd);
	free(pk->dying);
	free(pk);
}
