/* SPDX-License-Identifier: MIT */
/*
 * A serving thread's connections, whatever loop drives them: accepting
 * (under the process's connection cap, rt_conn_cap.c) or adopting a
 * socket, serving it when ready, closing it, and the queue an acceptor
 * thread hands sockets over with (an eventfd says when).
 */
#include "rt_int.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

struct rt_conn *rt_worker_adopt(struct rt_worker *w, int fd)
{
	struct rt_conn *c;

	/* select() cannot watch descriptors at or above FD_SETSIZE */
	if (fd >= w->fd_limit) {
		rt_conn_cap_close_fd(fd);
		return NULL;
	}
	if (w->nconns == w->conncap) {
		size_t cap = w->conncap ? 2 * w->conncap : 16;
		struct rt_conn **p = realloc(w->conns, cap * sizeof(*p));

		if (!p) {
			rt_conn_cap_close_fd(fd);
			return NULL;
		}
		w->conns = p;
		w->conncap = cap;
	}
	c = rt_conn_new(fd);
	if (!c) {
		rt_conn_cap_close_fd(fd);
		return NULL;
	}
	rt_sock_setup(fd);
	c->slot = w->nconns;
	w->conns[w->nconns++] = c;
	rt_share_count(1);
	rt_conn_greet(c);
	if (c->want == RT_WANT_CLOSE) {
		rt_worker_drop(w, c);
		return NULL;
	}
	return c;
}

/*
 * *again: a socket came (another accept may succeed). EAGAIN is normal:
 * threads and processes sharing a listen socket race for each one. On a
 * shared socket every worker is woken and the first to run would take a
 * whole burst of connections: sockets go round robin to the workers of
 * the process, in the order they were accepted (the accept and the turn
 * under one lock), through its queue when that is another one (the same
 * hand-over as accept_dispatch), as memcached's dispatcher hands them
 * out. They used to go to the least loaded worker, but a connection that
 * has just closed (a client's readiness probe) still counts until its
 * worker reads the end, and which of four connections opened together
 * shared a thread then followed the threads' timing: one memcached
 * clone's D1 rates under valgrind moved by 28% between runs.
 */
struct rt_conn *rt_worker_accept(struct rt_worker *w, int lfd, bool *again)
{
	static pthread_mutex_t order = PTHREAD_MUTEX_INITIALIZER;
	static unsigned turn;
	struct rt_worker *to = w;
	int fd;

	if (!w->shared) {
		fd = rt_conn_cap_accept(lfd, SOCK_NONBLOCK | SOCK_CLOEXEC);
	} else {
		pthread_mutex_lock(&order);
		fd = rt_conn_cap_accept(lfd, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0)
			to = &w->pool[turn++ % w->npool];
		pthread_mutex_unlock(&order);
	}
	/* a refused connection (at the cap, none idle) leaves others queued */
	*again = fd >= 0 || errno == ECONNABORTED;
	if (fd < 0)
		return NULL;
	if (to != w) {
		rt_worker_push(to, fd);
		return NULL;
	}
	return rt_worker_adopt(w, fd);
}

/*
 * Connections accepted per readiness of a listen socket. Processes that
 * share one socket accept one each time, as pre-forking servers do
 * (nginx's multi_accept off, Apache's workers): every waiting process is
 * woken and each takes one, so connections spread over the processes. A
 * burst let the first process awake take all 16 connections of a load
 * opened together but a few, and its clone's workers, loaded 5:1, were
 * no longer one thread class as the original's.
 */
unsigned rt_worker_accept_burst(const struct rt_worker *w)
{
	return rt_config.processes > 1 && w->nlfd == 1 && rt_listen_count(rt_config.processes) == 1
	       ? 1 : 32;
}

void rt_worker_drop(struct rt_worker *w, struct rt_conn *c)
{
	struct rt_conn *last = w->conns[--w->nconns];

	if (c->park)
		rt_park_cancel(w->t.parker, c);
	rt_conn_hold_forget(&w->t, c);
	rt_share_count(-1);
	w->conns[c->slot] = last;
	last->slot = c->slot;
	rt_conn_free(c);
	w->done |= w->single && !w->nconns;
}

/*
 * A readable connection of a loop that waits (epoll, poll, select) is read
 * until a read finds nothing when the original did so (rt_conn_read_all):
 * Apache and MariaDB read on after a response and find the next request
 * there without a poll when it came while they still worked. A
 * busy-polling loop reads once a round (its empty reads are its rounds);
 * a wake-up that holds its responses reads once, so that no pipelined
 * request is read before the held answers go out.
 */
static enum rt_want read_ready(struct rt_worker *w, struct rt_conn *c)
{
	if (rt_config.io == RT_IO_BUSYPOLL || w->t.hold)
		return rt_conn_readable(c, &w->t);
	return rt_conn_read_all(c, &w->t);
}

/* Readiness in, served out; false when the connection was closed. */
bool rt_worker_service(struct rt_worker *w, struct rt_conn *c, bool readable, bool writable)
{
	enum rt_want want = c->want;

	if (want == RT_WANT_WRITE && writable)
		want = rt_conn_writable(c, &w->t);
	else if (want == RT_WANT_READ && readable)
		want = read_ready(w, c);
	if (want == RT_WANT_CLOSE) {
		rt_worker_drop(w, c);
		return false;
	}
	return true;
}

void rt_worker_push(struct rt_worker *w, int fd)
{
	uint64_t one = 1;

	pthread_mutex_lock(&w->qlock);
	if (w->qlen == w->qcap) {
		size_t cap = w->qcap ? 2 * w->qcap : 16;
		int *q = realloc(w->q, cap * sizeof(*q));

		if (!q) {
			pthread_mutex_unlock(&w->qlock);
			rt_conn_cap_close_fd(fd);
			return;
		}
		w->q = q;
		w->qcap = cap;
	}
	w->q[w->qlen++] = fd;
	atomic_store(&w->queued, w->qlen);
	pthread_mutex_unlock(&w->qlock);
	if (w->notify_fd >= 0 && write(w->notify_fd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow with one write per socket */
	}
}

size_t rt_worker_take(struct rt_worker *w, int *fds, size_t max)
{
	size_t n;

	if (!atomic_load(&w->queued))
		return 0;
	pthread_mutex_lock(&w->qlock);
	n = w->qlen < max ? w->qlen : max;
	memcpy(fds, w->q, n * sizeof(*fds));
	memmove(w->q, w->q + n, (w->qlen - n) * sizeof(*fds));
	w->qlen -= n;
	atomic_store(&w->queued, w->qlen);
	pthread_mutex_unlock(&w->qlock);
	return n;
}

bool rt_worker_running(const struct rt_worker *w)
{
	return !rt_stopping() && !w->done;
}

/* No listen socket and no hand-over queue: the thread adopts what it
 * accepted (or what its parent accepted) and serves it alone. */
int rt_worker_init_one(struct rt_worker *w, uint64_t stream)
{
	memset(w, 0, sizeof(*w));
	w->pool = w;
	w->npool = 1;
	w->notify_fd = -1;
	w->single = true;
	w->fd_limit = rt_config.io == RT_IO_SELECT ? FD_SETSIZE : INT_MAX;
	pthread_mutex_init(&w->qlock, NULL);
	return rt_thread_init(&w->t, stream);
}

void rt_worker_serve_one(struct rt_worker *w, int fd)
{
	w->done = false;
	if (rt_worker_adopt(w, fd))
		rt_net_loop_of(rt_config.io)(w);
	while (w->nconns)
		rt_worker_drop(w, w->conns[w->nconns - 1]);
}

void rt_worker_fini_one(struct rt_worker *w)
{
	free(w->conns);
	w->conns = NULL;
	pthread_mutex_destroy(&w->qlock);
	rt_thread_fini(&w->t);
}
