/* SPDX-License-Identifier: MIT */
/*
 * The acceptor of accept_dispatch: it waits for the listen socket the way
 * the original's acceptor did (rt_config.accept_wait: a dispatcher like
 * memcached's listens in an event loop, srv_epoll_pool's main thread
 * blocks in accept4()), by default as the serving threads wait for
 * theirs (blocking accept4() for busy-polling pools), accepts, and
 * queues each connection round robin to a worker, whose eventfd (in its
 * epoll/poll/select set; busypoll peeks at the queue) wakes it. At stop
 * it is signalled out of its wait (rt_stop_kick_join), or, on the main
 * thread, the stop signals interrupt it.
 */
#include "rt_int.h"

#include <errno.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

/* The acceptor's wait as an io model: the original acceptor's, else the
 * serving threads' (blocking and busy-polling ones: accept4() blocks). */
static enum rt_io accept_io(void)
{
	switch (rt_config.accept_wait) {
	case RT_ACCEPT_WAIT_ACCEPT: return RT_IO_BLOCKING;
	case RT_ACCEPT_WAIT_EPOLL: return RT_IO_EPOLL;
	case RT_ACCEPT_WAIT_POLL: return RT_IO_POLL;
	case RT_ACCEPT_WAIT_SELECT: return RT_IO_SELECT;
	default: return rt_config.io;
	}
}

/* Wait until the listen socket is readable, or the stop eventfd is (so
 * the acceptor may run on the main thread), or a signal comes; with the
 * signal mask `during` for the wait alone (epoll_pwait, ppoll, pselect),
 * else the plain calls. False: no wait, accept4() itself blocks. */
bool rt_acceptor_wait_sig(int lfd, int epfd, const sigset_t *during)
{
	struct epoll_event ev;
	struct pollfd p[2] = { { lfd, POLLIN, 0 }, { rt_stop_fd, POLLIN, 0 } };
	nfds_t np = rt_stop_fd >= 0 ? 2 : 1;
	int top = lfd > rt_stop_fd ? lfd : rt_stop_fd;
	fd_set rd;

	switch (accept_io()) {
	case RT_IO_EPOLL:
		if (epfd >= 0 && during)
			epoll_pwait(epfd, &ev, 1, -1, during);
		else if (epfd >= 0)
			epoll_wait(epfd, &ev, 1, -1);
		return true;
	case RT_IO_POLL:
		if (during)
			ppoll(p, np, NULL, during);
		else
			poll(p, np, -1);
		return true;
	case RT_IO_SELECT:
		if (top < FD_SETSIZE) {
			FD_ZERO(&rd);
			FD_SET(lfd, &rd);
			if (rt_stop_fd >= 0)
				FD_SET(rt_stop_fd, &rd);
			if (during)
				pselect(top + 1, &rd, NULL, NULL, NULL, during);
			else
				select(top + 1, &rd, NULL, NULL, NULL);
		}
		return true;
	default:
		return false;
	}
}

void rt_acceptor_wait(int lfd, int epfd)
{
	rt_acceptor_wait_sig(lfd, epfd, NULL);
}

int rt_acceptor_epoll(int lfd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = lfd };
	struct epoll_event stop = { .events = EPOLLIN, .data.fd = rt_stop_fd };
	int epfd;

	if (accept_io() != RT_IO_EPOLL)
		return -1;
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd >= 0 && (epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev) ||
			  (rt_stop_fd >= 0 && epoll_ctl(epfd, EPOLL_CTL_ADD, rt_stop_fd, &stop)))) {
		close(epfd);
		return -1;
	}
	return epfd;
}

void *rt_net_dispatch_acceptor(void *arg)
{
	struct rt_acceptor *a = arg;
	int epfd = rt_acceptor_epoll(a->lfd);
	unsigned next = 0;

	while (!rt_stopping()) {
		int fd;

		rt_acceptor_wait(a->lfd, epfd);
		if (rt_stopping())
			break;
		fd = rt_conn_cap_accept(a->lfd, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			rt_worker_push(&a->w[next++ % a->nw], fd);
			continue;
		}
		if (!rt_conn_cap_goes_on(errno)) {
			rt_err(errno, "accept");
			rt_fail();
		}
	}
	if (epfd >= 0)
		close(epfd);
	atomic_store(&a->done, true);
	return NULL;
}
