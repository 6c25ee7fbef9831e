/* SPDX-License-Identifier: MIT */
/*
 * Calls attributed to requests, from the collector's ordered events.
 *
 * A call belongs to the request its thread was serving when it was sent.
 * A thread that serves one request at a time makes that plain. An event
 * loop interleaves requests, so the rule is causal: a thread's context is
 * the request of its last read, the request's own first read or the
 * answer of a call made for it (a handler runs right after the read that
 * woke it, and an awaited call's continuation right after the answer).
 * A call sent while the thread had more than one request begun and not
 * answered is marked ambiguous: the rule chose, nothing proved it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "edges_int.h"

int edges_new(struct edges **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : ditto_err(-ENOMEM, "out of memory");
}

void edges_free(struct edges *e)
{
	if (!e)
		return;
	free(e->reqs);
	free(e->calls);
	free(e->threads);
	idmap_free(&e->conn_req);
	idmap_free(&e->sock_call);
	idmap_free(&e->tid_thread);
	idmap_free(&e->unix_listener);
	free(e);
}

/* Room for one more element of size sz in *arr (n used, *cap allocated). */
static bool room(void **arr, size_t n, size_t *cap, size_t sz, size_t max)
{
	void *p;
	size_t c;

	if (n < *cap)
		return true;
	if (n >= max)
		return false;
	c = *cap ? *cap * 2 : 1024;
	p = realloc(*arr, c * sz);
	if (!p)
		return false;
	*arr = p;
	*cap = c;
	return true;
}

static struct ev_thread *thread_of(struct edges *e, uint32_t tid)
{
	uint32_t i;

	if (idmap_get(&e->tid_thread, tid, &i))
		return &e->threads[i];
	if (!room((void **)&e->threads, e->nthreads, &e->threads_cap, sizeof(*e->threads),
		  UINT32_MAX - 1) ||
	    idmap_put(&e->tid_thread, tid, (uint32_t)e->nthreads))
		return NULL;
	e->threads[e->nthreads] = (struct ev_thread){ .ctx = NONE };
	return &e->threads[e->nthreads++];
}

static void req_begin(struct edges *e, const struct dt_event *ev)
{
	struct ev_thread *t = thread_of(e, ev->tid);
	uint32_t i = (uint32_t)e->nreqs;

	if (!t || !room((void **)&e->reqs, e->nreqs, &e->reqs_cap, sizeof(*e->reqs),
			EDGES_MAX_REQS) ||
	    idmap_put(&e->conn_req, ev->sk, i)) {
		e->lost++;
		return;
	}
	e->reqs[e->nreqs++] = (struct ev_req){ .begin = ev->ts, .tid = ev->tid,
					       .first_call = NONE, .svc = ev->svc };
	if (ev->ep.family == AF_UNIX && ev->ep.addr[0] &&
	    idmap_put(&e->unix_listener, ev->ep.addr[0], ev->svc))
		e->lost++;
	t->ctx = i;
	t->open++;
}

static void req_respond(struct edges *e, const struct dt_event *ev)
{
	struct ev_thread *t;
	uint32_t i;

	if (!idmap_get(&e->conn_req, ev->sk, &i) || e->reqs[i].respond)
		return;
	e->reqs[i].respond = ev->ts;
	t = thread_of(e, e->reqs[i].tid);
	if (t && t->open)
		t->open--;
}

static void call_begin(struct edges *e, const struct dt_event *ev)
{
	struct ev_thread *t = thread_of(e, ev->tid);
	uint32_t i = (uint32_t)e->ncalls;
	struct ev_call *c;

	if (!t || !room((void **)&e->calls, e->ncalls, &e->calls_cap, sizeof(*e->calls),
			EDGES_MAX_CALLS) ||
	    idmap_put(&e->sock_call, ev->sk, i)) {
		e->lost++;
		return;
	}
	c = &e->calls[e->ncalls++];
	*c = (struct ev_call){ .begin = ev->ts, .ep = ev->ep, .req = NONE, .next = NONE };
	if (t->ctx == NONE || e->reqs[t->ctx].svc != ev->svc)
		return;
	c->req = t->ctx;
	c->ambiguous = t->open > 1;
	c->next = e->reqs[t->ctx].first_call;
	e->reqs[t->ctx].first_call = i;
}

static void call_end(struct edges *e, const struct dt_event *ev)
{
	struct ev_thread *t;
	uint32_t i;

	if (!idmap_get(&e->sock_call, ev->sk, &i) || e->calls[i].end)
		return;
	e->calls[i].end = ev->ts;
	/* The continuation of the request that made the call runs next. */
	t = thread_of(e, ev->tid);
	if (t && e->calls[i].req != NONE)
		t->ctx = e->calls[i].req;
}

int edges_event(void *ctx, void *data, size_t len)
{
	struct edges *e = ctx;
	const struct dt_event *ev = data;

	/* After the first event that could not be kept, nothing more is:
	 * calls kept on would go to requests whose successors were lost,
	 * and the graph covers the window up to that point, consistently. */
	if (len < sizeof(*ev) || e->lost)
		return 0;
	switch (ev->type) {
	case EV_REQ_BEGIN:
		req_begin(e, ev);
		break;
	case EV_REQ_RESPOND:
		req_respond(e, ev);
		break;
	case EV_CALL_BEGIN:
		call_begin(e, ev);
		break;
	case EV_CALL_END:
		call_end(e, ev);
		break;
	}
	return 0;
}

void edges_counts(const struct edges *e, uint64_t *requests, uint64_t *calls,
		  uint64_t *ambiguous, uint64_t *lost)
{
	*requests = e->nreqs;
	*calls = e->ncalls;
	*ambiguous = 0;
	for (size_t i = 0; i < e->ncalls; i++)
		*ambiguous += e->calls[i].ambiguous;
	*lost = e->lost;
}
