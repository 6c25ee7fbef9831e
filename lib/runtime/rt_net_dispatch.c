/* SPDX-License-Identifier: MIT */
/*
 * The acceptor thread of accept_dispatch: blocking accept4() on the listen
 * socket, each connection queued round robin to a worker, whose eventfd
 * (in its epoll/poll/select set; busypoll peeks at the queue) wakes it.
 * At stop it is signalled out of accept (rt_stop_kick_join).
 */
#include "rt_int.h"

#include <errno.h>
#include <sys/socket.h>
#include <time.h>

void *rt_net_dispatch_acceptor(void *arg)
{
	struct rt_acceptor *a = arg;
	const struct timespec pause = { 0, 10 * 1000 * 1000 };
	unsigned next = 0;

	while (!rt_stopping()) {
		int fd = accept4(a->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			rt_worker_push(&a->w[next++ % a->nw], fd);
			continue;
		}
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			nanosleep(&pause, NULL);	/* out of descriptors: wait for closes */
		else if (errno != EINTR && errno != ECONNABORTED && errno != EAGAIN && errno != EPROTO) {
			rt_err(errno, "accept");
			rt_fail();
		}
	}
	atomic_store(&a->done, true);
	return NULL;
}
