/* SPDX-License-Identifier: MIT */
/*
 * Serving threads that accept their own connections and serve one at a
 * time: the model's blocking io without network_dispatch (the class that
 * accepts is the class that serves), as a pre-forked worker or a thread
 * pool on one listen socket, and serial connections of an event-loop io
 * (rt_config.serial_connections: Apache's prefork children). Each of the
 * process's `threads` threads waits as accept_wait says, accepts, serves
 * that connection with blocking reads and writes, or with the io's loop
 * over it alone, until it closes, then accepts again; the
 * first runs on the main thread, so a one-thread worker process is one
 * thread, as the original's. The stop signals are blocked in the others
 * (rt_thread_start): a signal interrupts the main thread, which then
 * kicks the others out of their blocking calls (rt_stop_kick_join). A
 * signal that comes just before the main thread blocks is seen at its
 * next connection or request.
 */
#include "rt_int.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/socket.h>

struct accepting {
	int lfd, epfd;
	uint64_t stream;
	pthread_t tid;
	bool started;
	atomic_bool done;
};

static void *accepting_main(void *arg)
{
	struct accepting *a = arg;
	bool loop = rt_config.io != RT_IO_BLOCKING;	/* serial connections */
	int flags = SOCK_CLOEXEC | (loop ? SOCK_NONBLOCK : 0);
	struct rt_worker w;

	a->epfd = rt_acceptor_epoll(a->lfd);
	if (rt_worker_init_one(&w, a->stream))
		rt_fail();
	while (!rt_stopping()) {
		int fd;

		/* as the original's waited: an Apache child polls its listener */
		rt_acceptor_wait(a->lfd, a->epfd);
		if (rt_stopping())
			break;
		fd = rt_conn_cap_accept(a->lfd, flags);
		if (fd >= 0 && loop)
			rt_worker_serve_one(&w, fd);
		else if (fd >= 0)
			rt_conn_serve_blocking_fd(fd, &w.t);
		else if (!rt_conn_cap_goes_on(errno)) {
			rt_err(errno, "accept");
			rt_fail();
		}
	}
	rt_worker_fini_one(&w);
	if (a->epfd >= 0)
		close(a->epfd);
	atomic_store(&a->done, true);
	return NULL;
}

/* Threads 1..n-1 (rt_thread_start blocks the stop signals in them). */
static void start_others(struct accepting *a, unsigned n)
{
	for (unsigned i = 1; i < n; i++)
		a[i].started = !rt_thread_start(&a[i].tid, accepting_main, &a[i], "serving");
}

int rt_net_accepting_run(int lfd, unsigned proc)
{
	unsigned n = rt_config.threads ? rt_config.threads : 1;
	/* the main thread plays the class "main" when there is one */
	unsigned first = rt_background_main() ? 0 : 1;
	struct accepting *a = calloc(n, sizeof(*a));

	if (!a) {
		rt_err(ENOMEM, "%u serving threads", n);
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		a[i].lfd = lfd;
		a[i].stream = (uint64_t)proc << 32 | i;
	}
	start_others(a, n);
	if (!first)
		a[0].started = !rt_thread_start(&a[0].tid, accepting_main, &a[0], "serving");
	rt_announce_ready();
	if (first)
		accepting_main(&a[0]);
	else
		rt_main_thread_run();
	rt_stop();
	for (unsigned i = 0; i < n; i++)
		if (a[i].started)
			rt_stop_kick_join(a[i].tid, &a[i].done);
	free(a);
	return 0;
}
