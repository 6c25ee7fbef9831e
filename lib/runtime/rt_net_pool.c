/* SPDX-License-Identifier: MIT */
/*
 * The serving threads of one process for the event-loop skeletons (epoll,
 * poll, select, busypoll): `threads` workers, the first one on the main
 * thread unless that plays the class "main" (rt_main_thread.c). Each listens on its own SO_REUSEPORT socket, or all share one
 * (and hand connections round robin, see rt_worker_accept), or
 * (accept_dispatch) an acceptor thread hands them connections.
 */
#include "rt_int.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <unistd.h>

rt_loop_fn rt_net_loop_of(enum rt_io io)
{
	switch (io) {
	case RT_IO_POLL:
		return rt_net_poll_loop;
	case RT_IO_SELECT:
		return rt_net_select_loop;
	case RT_IO_BUSYPOLL:
		return rt_net_busypoll_loop;
	default:
		return rt_net_epoll_loop;
	}
}

static void *worker_main(void *arg)
{
	rt_net_loop_of(rt_config.io)(arg);
	return NULL;
}

static int worker_init(struct rt_worker *w, unsigned i, const int *lfd, unsigned nlfd, unsigned proc)
{
	w->index = i;
	w->pool = w - i;
	w->npool = rt_config.threads ? rt_config.threads : 1;
	w->notify_fd = -1;
	w->fd_limit = rt_config.io == RT_IO_SELECT ? FD_SETSIZE : INT_MAX;
	pthread_mutex_init(&w->qlock, NULL);
	if (!rt_config.accept_dispatch) {
		/* one socket each with SO_REUSEPORT, else the shared one */
		w->lfd = nlfd > 1 ? &lfd[i % nlfd] : lfd;
		w->nlfd = 1;
		w->shared = nlfd == 1 && w->npool > 1;
	}
	/* the acceptor's or the other workers' hand-over (rt_worker_accept) */
	if (rt_config.accept_dispatch || w->shared) {
		w->notify_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (w->notify_fd < 0) {
			rt_err(errno, "eventfd of serving thread %u", i);
			return -1;
		}
	}
	return rt_thread_init(&w->t, (uint64_t)proc << 32 | i);
}

static void worker_fini(struct rt_worker *w)
{
	int fd;

	while (w->nconns)
		rt_worker_drop(w, w->conns[w->nconns - 1]);
	while (rt_worker_take(w, &fd, 1))
		rt_conn_cap_close_fd(fd);
	free(w->conns);
	free(w->q);
	if (w->notify_fd >= 0)
		close(w->notify_fd);
	pthread_mutex_destroy(&w->qlock);
	rt_thread_fini(&w->t);
}

/* A dispatching service accepts on its main thread (memcached's libevent
 * loop does, srv_epoll_pool's blocks in accept4()), unless the original
 * accepted on a thread of its own or the main thread plays the class
 * "main". */
static bool acceptor_on_main(void)
{
	return rt_config.accept_dispatch && !rt_config.acceptor_thread && !rt_background_main();
}

static int start(struct rt_worker *w, unsigned first, unsigned n, struct rt_acceptor *acc, const int *lfd)
{
	for (unsigned i = first; i < n; i++) {
		if (rt_thread_start(&w[i].tid, worker_main, &w[i], "serving"))
			return -1;
		w[i].started = true;
	}
	if (!rt_config.accept_dispatch)
		return 0;
	acc->lfd = lfd[0];
	acc->w = w;
	acc->nw = n;
	if (acceptor_on_main())
		return 0;
	if (rt_thread_start(&acc->tid, rt_net_dispatch_acceptor, acc, "acceptor"))
		return -1;
	acc->started = true;
	return 0;
}

int rt_net_pool_run(const int *lfd, unsigned nlfd, unsigned proc)
{
	unsigned n = rt_config.threads ? rt_config.threads : 1, ready = 0;
	/* w[0] runs on the main thread unless that plays the class "main"
	 * or the acceptor */
	unsigned first = rt_background_main() || acceptor_on_main() ? 0 : 1;
	struct rt_worker *w = calloc(n, sizeof(*w));
	struct rt_acceptor acc = { .lfd = -1 };
	int rc = -1;

	if (!w) {
		rt_err(ENOMEM, "%u serving threads", n);
		return -1;
	}
	for (; ready < n; ready++)
		if (worker_init(&w[ready], ready, lfd, nlfd, proc))
			break;
	if (ready == n && !start(w, first, n, &acc, lfd)) {
		rt_announce_ready();
		if (acceptor_on_main())
			rt_net_dispatch_acceptor(&acc);
		else if (first)
			worker_main(&w[0]);
		else
			rt_main_thread_run();
		rc = 0;
	}
	rt_stop();
	if (acc.started)
		rt_stop_kick_join(acc.tid, &acc.done);
	for (unsigned i = 0; i < n; i++)
		if (w[i].started)
			pthread_join(w[i].tid, NULL);
	/* the workers set up, and the one whose setup failed */
	for (unsigned i = 0; i < n && i <= ready; i++)
		worker_fini(&w[i]);
	free(w);
	return rc;
}
