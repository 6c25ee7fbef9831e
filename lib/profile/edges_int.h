/* SPDX-License-Identifier: MIT */
/* The graph's event bookkeeping, shared by edges.c and edges_store.c. */
#ifndef DITTO_EDGES_INT_H
#define DITTO_EDGES_INT_H

#include "profile_int.h"

/* Bounds: a window with more is recorded up to them, the rest counted. */
#define EDGES_MAX_REQS (1u << 20)	/* 32 MiB of requests */
#define EDGES_MAX_CALLS (2u << 20)	/* 128 MiB of calls */
#define NONE UINT32_MAX

/* An inbound request: from its first read to its first response write. */
struct ev_req {
	uint64_t begin, respond;	/* respond 0: not answered in the window */
	uint32_t tid;
	uint32_t first_call;		/* the calls attributed to it, linked */
	uint8_t svc;
};

/* An outbound call: from its first send to the first read of its answer. */
struct ev_call {
	uint64_t begin, end;		/* end 0: no answer read in the window */
	struct dt_ep_key ep;
	uint32_t req;			/* NONE: made outside any request */
	uint32_t next;			/* next call of the same request */
	bool ambiguous;			/* the thread had several open requests */
};

/* What a thread is doing, as far as the events tell. */
struct ev_thread {
	uint32_t ctx;			/* the request its last read was for */
	uint32_t open;			/* its requests begun and not answered */
};

struct edges {
	struct ev_req *reqs;
	size_t nreqs, reqs_cap;
	struct ev_call *calls;
	size_t ncalls, calls_cap;
	struct ev_thread *threads;
	size_t nthreads, threads_cap;
	struct idmap conn_req;	/* accepted socket -> its current request */
	struct idmap sock_call;	/* outbound socket -> its current call */
	struct idmap tid_thread;	/* thread id -> threads[] */
	/* A Unix listener's address (as the kernel names it) -> the service
	 * that served a request on it, for the calls that reach it. */
	struct idmap unix_listener;
	uint64_t lost;			/* events beyond the bounds: the first stops the graph */
	int err;			/* the first allocation failure */
};

#endif
