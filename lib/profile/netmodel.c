/* SPDX-License-Identifier: MIT */
/*
 * The network model, in the artifact's terms: which class accepts, which
 * serves connections, whether connections are handed from one to the
 * other (network_dispatch), whether accepting is done away from the main
 * thread of the main process (accept_dispatch), the I/O model and pool
 * size of the serving class, and the client side.
 */
#include <string.h>

#include "profile_int.h"

#define NR_ACCEPT 43
#define NR_ACCEPT4 288
#define NR_CONNECT 42

/* Per class: accept calls, calls on accepted connections, connect calls. */
struct class_calls {
	uint64_t accepts, conn_io, connects;
};

static void count_calls(const struct snapshot *s, struct class_calls *cc)
{
	for (size_t i = 0; i < s->nstats; i++) {
		const struct stat_rec *r = &s->stats[i];
		const struct thread_rec *t = snapshot_thread(s, r->key.tid);

		if (!t || t->cls < 0)
			continue;
		if (r->key.nr == NR_ACCEPT || r->key.nr == NR_ACCEPT4)
			cc[t->cls].accepts += r->val.calls - r->val.errors;
		else if (r->key.nr == NR_CONNECT)
			cc[t->cls].connects += r->val.calls;
		else if (r->key.side == SIDE_ACCEPTED)
			cc[t->cls].conn_io += r->val.calls;
	}
}

static int busiest(const struct classes *c, const struct class_calls *cc, uint32_t bit,
		   size_t field)
{
	uint64_t best = 0;
	int idx = -1;

	for (size_t i = 0; i < c->n; i++) {
		uint64_t v = field == 0 ? cc[i].accepts : cc[i].conn_io;

		if ((c->cls[i].bits & bit) && (idx < 0 || v > best)) {
			best = v;
			idx = (int)i;
		}
	}
	return idx;
}

static uint64_t serving_processes(const struct snapshot *s, int cls)
{
	uint32_t seen[256];
	size_t n = 0;

	for (size_t i = 0; i < s->nthreads && n < ARRAY_SIZE(seen); i++) {
		bool dup = false;

		if (s->threads[i].cls != cls)
			continue;
		for (size_t j = 0; j < n && !dup; j++)
			dup = seen[j] == s->threads[i].info.tgid;
		if (!dup)
			seen[n++] = s->threads[i].info.tgid;
	}
	return n;
}

/* Class cls serves only in processes other than the target's: the target
 * is a master that forked them (model.h, master_process). */
static bool served_by_children(const struct snapshot *s, int cls)
{
	bool others = false;

	for (size_t i = 0; i < s->nthreads; i++) {
		if (s->threads[i].cls != cls)
			continue;
		if (s->threads[i].info.tgid == (uint32_t)s->target)
			return false;
		others = true;
	}
	return others;
}

/* Whether the target's main thread is in class cls and has all of bits. */
static bool main_in(const struct snapshot *s, int cls, uint32_t bits)
{
	const struct thread_rec *t = snapshot_thread(s, (uint32_t)s->target);

	return t && t->cls == cls && (t->info.bits & bits) == bits;
}

static void client_side(const struct classes *c, const struct class_calls *cc,
			struct network_rec *n)
{
	bool async = false;

	for (size_t i = 0; i < c->n; i++) {
		n->client_connections += cc[i].connects;
		async |= (c->cls[i].bits & TB_ASYNC_CONN) != 0;
	}
	n->client_mode = !n->client_connections ? DITTO_CALL_UNKNOWN
			 : async ? DITTO_CALL_ASYNC : DITTO_CALL_SYNC;
}

/* Every thread of class cls read and wrote one connection all window, and
 * no two of them the same one. */
static bool one_connection_each(const struct snapshot *s, int cls)
{
	for (size_t i = 0; i < s->nthreads; i++) {
		const struct thread_rec *t = &s->threads[i];

		if (t->cls != cls || !(t->info.bits & TB_CONN_IO))
			continue;
		if (t->info.conn_moves || !t->info.conn_sk)
			return false;
		for (size_t j = 0; j < i; j++)
			if (s->threads[j].cls == cls && s->threads[j].info.conn_sk == t->info.conn_sk)
				return false;
	}
	return true;
}

/*
 * Thread per connection: blocking serving threads in one process, either
 * made during the window and about as many as the connections accepted (a
 * fixed pool made at start-up, as in launch mode, has far fewer threads
 * than connections unless the load used very few), or, when they predate
 * the window with their connections, each serving its own single
 * connection all window, away from the main thread (a blocking server
 * that serves in its main thread serves connections one after another).
 */
static bool per_connection(const struct snapshot *s, int cls,
			   const struct thread_class_rec *net, uint64_t processes)
{
	uint64_t conns = s->reqs.connections;

	if (net->io != DITTO_IO_BLOCKING || processes > 1)
		return false;
	if (net->created)
		return conns && net->count * 2 >= conns;
	return !net->has_main && one_connection_each(s, cls);
}

/*
 * The serving threads take their connections one after another: none moved
 * from a connection to another while the first was open, and there is a
 * positive sign. Where the serving class accepts for itself: one waits at
 * the window's end in an event call on its connection without the
 * listener (a pre-forked Apache child polls its one connection between
 * requests; an event loop that accepts keeps its listener in the set, and
 * one holding several connections moves between open ones at nearly every
 * request). Having served two in turn is no sign there: a client that
 * opens a connection per request and waits for each answer gives any
 * server that (node behind nginx, which closes its upstream connections,
 * under one client: its clone took one connection at a time, and nginx's
 * clone, which pools them, waited for ever on a second). A dispatcher's
 * workers never watch the listener, so having served two in turn is all
 * there is to go by there (it has the same false positive; synth does not
 * use the flag behind a dispatcher). The wait sign needs ptrace access to
 * the target (listen_waiters.c): without it, a self-accepting loop is
 * never taken for serial. Blocking threads need no flag (they can only
 * serve one connection).
 */
static bool serial_connections(const struct snapshot *s, int cls, enum ditto_io_model io,
			       bool dispatch)
{
	uint64_t moves = 0, waits = 0;

	if (io != DITTO_IO_POLL && io != DITTO_IO_SELECT && io != DITTO_IO_EPOLL)
		return false;
	for (size_t i = 0; i < s->nthreads; i++) {
		const struct thread_rec *t = &s->threads[i];

		if (t->cls != cls || !(t->info.bits & TB_CONN_IO))
			continue;
		if (t->info.conn_interleaves)
			return false;
		moves += t->info.conn_moves;
		waits += (t->info.bits & TB_CONN_WAIT) != 0;
	}
	return dispatch ? moves > 0 : waits > 0;
}

void network_model(const struct snapshot *s, const struct classes *c, struct network_rec *n)
{
	struct class_calls cc[64];
	const struct thread_class_rec *net;

	memset(n, 0, sizeof(*n));
	memset(cc, 0, sizeof(cc));
	n->acceptor = n->network = -1;
	if (c->n > ARRAY_SIZE(cc))
		return;
	count_calls(s, cc);
	client_side(c, cc, n);
	n->acceptor = busiest(c, cc, TB_ACCEPTS, 0);
	n->network = busiest(c, cc, TB_CONN_IO, 1);
	if (n->network < 0)
		return;
	net = &c->cls[n->network];
	n->io = net->io;
	/*
	 * Nobody accepted in the window nor waits on a listening socket at its
	 * end (listen_waiters.c): every connection predates the window and the
	 * listener is watched by no set we can read, e.g. worker processes
	 * blocked in reads on their connections. With no sign of another
	 * acceptor, the serving class is taken to accept its connections.
	 */
	if (n->acceptor < 0) {
		n->acceptor = n->network;
		n->accept_dispatch = !main_in(s, n->network, 0);
	} else {
		n->accept_dispatch = !main_in(s, n->acceptor, TB_ACCEPTS);
	}
	n->network_dispatch = n->acceptor != n->network;
	n->processes = serving_processes(s, n->network);
	n->network_threads = per_connection(s, n->network, net, n->processes) ? 0 : net->count;
	n->serial_connections = serial_connections(s, n->network, n->io, n->network_dispatch);
	n->master_process = served_by_children(s, n->network);
}
