/* SPDX-License-Identifier: MIT */
/*
 * A listener handing ready connections to a blocking pool: the model's
 * blocking io with network_dispatch and a pool of network_threads (a
 * listener thread feeding workers through a queue and a condition
 * variable). The listener, the main thread unless the original accepted
 * on a thread of its own, waits in epoll_wait on the listen socket and on
 * every idle connection (EPOLLONESHOT), accepts new ones and queues each
 * ready one; a pool thread, woken through the condition variable's
 * futex, serves it (reads until one finds nothing when the original read
 * so, the requests they complete, the empty reads the model still owes)
 * and re-arms it in the listener's set. Pool threads
 * sleep on the futex between connections and never poll: any number of
 * connections share the `threads` threads, as in the original.
 */
#include "rt_int.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

enum { TAG_STOP = 1, TAG_LISTEN = 2 };	/* epoll data that no address is */

struct handoff {
	int ep, lfd;
	unsigned proc;
	pthread_mutex_t lock;
	pthread_cond_t ready;
	struct rt_conn **q;	/* ring of ready connections */
	size_t qhead, qlen, qcap;
	struct rt_conn **all;	/* every open connection, c->slot its index */
	size_t nall, allcap;
	atomic_bool done;	/* the listener thread has returned */
};

struct pool_thread {
	struct handoff *h;
	unsigned index;
	pthread_t tid;
	bool started;
};

static int grow_all(struct handoff *h)
{
	size_t cap = h->allcap ? 2 * h->allcap : 16;
	struct rt_conn **p = realloc(h->all, cap * sizeof(*p));

	if (!p)
		return -1;
	h->all = p;
	h->allcap = cap;
	return 0;
}

static int push(struct handoff *h, struct rt_conn *c)
{
	if (h->qlen == h->qcap) {
		size_t cap = h->qcap ? 2 * h->qcap : 16;
		struct rt_conn **q = malloc(cap * sizeof(*q));

		if (!q)
			return -1;
		for (size_t i = 0; i < h->qlen; i++)
			q[i] = h->q[(h->qhead + i) % h->qcap];
		free(h->q);
		h->q = q;
		h->qcap = cap;
		h->qhead = 0;
	}
	h->q[(h->qhead + h->qlen++) % h->qcap] = c;
	pthread_cond_signal(&h->ready);
	return 0;
}

/* The next ready connection, or NULL at the stop. */
static struct rt_conn *pop(struct handoff *h)
{
	struct rt_conn *c = NULL;

	pthread_mutex_lock(&h->lock);
	while (!h->qlen && !rt_stopping())
		pthread_cond_wait(&h->ready, &h->lock);
	if (h->qlen && !rt_stopping()) {
		c = h->q[h->qhead];
		h->qhead = (h->qhead + 1) % h->qcap;
		h->qlen--;
	}
	pthread_mutex_unlock(&h->lock);
	return c;
}

static int arm(struct handoff *h, struct rt_conn *c, int op)
{
	struct epoll_event ev = {
		.events = (c->want == RT_WANT_WRITE ? EPOLLOUT : EPOLLIN) | EPOLLONESHOT,
		.data.ptr = c,
	};

	return epoll_ctl(h->ep, op, c->fd, &ev);
}

/* Closing the socket takes it out of the listener's set. */
static void drop(struct handoff *h, struct rt_conn *c)
{
	pthread_mutex_lock(&h->lock);
	h->all[c->slot] = h->all[--h->nall];
	h->all[c->slot]->slot = c->slot;
	pthread_mutex_unlock(&h->lock);
	rt_conn_free(c);
}

static void *pool_main(void *arg)
{
	struct pool_thread *p = arg;
	struct rt_thread t = { .replay = NULL };
	struct rt_conn *c;

	if (rt_thread_init(&t, (uint64_t)p->h->proc << 32 | p->index)) {
		rt_fail();
		return NULL;
	}
	while ((c = pop(p->h))) {
		enum rt_want want = c->want == RT_WANT_WRITE ? rt_conn_writable(c, &t)
							   : rt_conn_read_all(c, &t);

		if (want == RT_WANT_CLOSE || arm(p->h, c, EPOLL_CTL_MOD))
			drop(p->h, c);
	}
	rt_thread_fini(&t);
	return NULL;
}

static void on_listen(struct handoff *h)
{
	int fd = rt_conn_cap_accept(h->lfd, SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct rt_conn *c;

	if (fd < 0) {
		if (!rt_conn_cap_goes_on(errno)) {
			rt_err(errno, "accept");
			rt_fail();
		}
		return;
	}
	c = rt_conn_new(fd);
	if (!c) {
		rt_conn_cap_close_fd(fd);
		return;
	}
	rt_sock_setup(fd);
	pthread_mutex_lock(&h->lock);
	if (h->nall == h->allcap && grow_all(h)) {
		pthread_mutex_unlock(&h->lock);
		rt_conn_free(c);
		return;
	}
	c->slot = h->nall;
	h->all[h->nall++] = c;
	pthread_mutex_unlock(&h->lock);
	if (arm(h, c, EPOLL_CTL_ADD))
		drop(h, c);
}

static void on_ready(struct handoff *h, struct rt_conn *c)
{
	int rc;

	pthread_mutex_lock(&h->lock);
	rc = push(h, c);
	pthread_mutex_unlock(&h->lock);
	if (rc)
		drop(h, c);
}

static void *listener_main(void *arg)
{
	struct handoff *h = arg;
	struct epoll_event ev[64];

	while (!rt_stopping()) {
		int n = epoll_wait(h->ep, ev, 64, -1);

		if (n < 0 && errno != EINTR) {
			rt_err(errno, "epoll_wait");
			rt_fail();
		}
		for (int i = 0; i < n && !rt_stopping(); i++) {
			if (ev[i].data.u64 == TAG_LISTEN)
				on_listen(h);
			else if (ev[i].data.u64 != TAG_STOP)
				on_ready(h, ev[i].data.ptr);
		}
	}
	atomic_store(&h->done, true);
	return NULL;
}

static int handoff_init(struct handoff *h, int lfd, unsigned proc)
{
	struct epoll_event l = { .events = EPOLLIN, .data.u64 = TAG_LISTEN };
	struct epoll_event s = { .events = EPOLLIN, .data.u64 = TAG_STOP };

	h->lfd = lfd;
	h->proc = proc;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->ready, NULL);
	h->ep = epoll_create1(EPOLL_CLOEXEC);
	if (h->ep < 0 || epoll_ctl(h->ep, EPOLL_CTL_ADD, lfd, &l) ||
	    epoll_ctl(h->ep, EPOLL_CTL_ADD, rt_stop_fd, &s)) {
		rt_err(errno, "epoll set of the listener");
		return -1;
	}
	return 0;
}

/* After the threads: the connections left idle or queued. */
static void handoff_fini(struct handoff *h)
{
	while (h->nall)
		rt_conn_free(h->all[--h->nall]);
	free(h->all);
	free(h->q);
	if (h->ep >= 0)
		close(h->ep);
	pthread_cond_destroy(&h->ready);
	pthread_mutex_destroy(&h->lock);
}

static void wake_pool(struct handoff *h)
{
	pthread_mutex_lock(&h->lock);
	pthread_cond_broadcast(&h->ready);
	pthread_mutex_unlock(&h->lock);
}

int rt_net_handoff_run(int lfd, unsigned proc)
{
	unsigned n = rt_config.threads ? rt_config.threads : 1;
	bool own = rt_config.acceptor_thread || rt_background_main();
	struct pool_thread *p = calloc(n, sizeof(*p));
	struct handoff h = { .ep = -1 };
	struct pollfd stop = { .fd = rt_stop_fd, .events = POLLIN };
	pthread_t tid;
	int rc = -1;

	if (!p) {
		rt_err(ENOMEM, "%u pool threads", n);
		return -1;
	}
	if (handoff_init(&h, lfd, proc))
		goto out;
	for (unsigned i = 0; i < n; i++) {
		p[i] = (struct pool_thread){ .h = &h, .index = i };
		p[i].started = !rt_thread_start(&p[i].tid, pool_main, &p[i], "pool");
		if (!p[i].started)
			goto out;
	}
	if (own && rt_thread_start(&tid, listener_main, &h, "listener"))
		goto out;
	rt_announce_ready();
	if (!own)
		listener_main(&h);
	else if (rt_background_main())
		rt_main_thread_run();
	while (!rt_stopping())
		poll(&stop, 1, -1);
	rc = 0;
	if (own)
		rt_stop_kick_join(tid, &h.done);
out:
	rt_stop();
	wake_pool(&h);
	for (unsigned i = 0; i < n; i++)
		if (p[i].started)
			pthread_join(p[i].tid, NULL);
	handoff_fini(&h);
	free(p);
	return rc;
}
