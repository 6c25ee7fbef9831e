/* SPDX-License-Identifier: MIT */
/*
 * Waits in an event loop's call (enum rt_wait) where the original's thread
 * made one, so that its class looks to a profiler as the original's did (a
 * thread that waits in epoll_wait is of io model epoll whatever it waits
 * for): a background thread's, over the stop eventfd with a timeout to its
 * next wake-up; a blocking server's, on its connection before it reads the
 * next request (rt_net.conn_wait).
 */
#include "rt_int.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <unistd.h>

#define SLICE_NS 100000000ull	/* a stop without the eventfd is seen within it */

int rt_wait_open(enum rt_wait how)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep;

	if (how != RT_WAIT_EPOLL)
		return -1;
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep >= 0 && rt_stop_fd >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, rt_stop_fd, &ev)) {
		close(ep);
		return -1;
	}
	return ep;
}

/* One call of at most ms milliseconds (-1: until the stop). */
static void wait_once(enum rt_wait how, int ep, int ms)
{
	struct pollfd p = { .fd = rt_stop_fd, .events = POLLIN };
	struct epoll_event ev;
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
	fd_set rd;

	switch (how) {
	case RT_WAIT_EPOLL:
		if (ep >= 0)
			epoll_wait(ep, &ev, 1, ms);
		return;
	case RT_WAIT_POLL:
		poll(&p, rt_stop_fd >= 0, ms);
		return;
	default:
		FD_ZERO(&rd);
		if (rt_stop_fd >= 0 && rt_stop_fd < FD_SETSIZE)
			FD_SET(rt_stop_fd, &rd);
		select(rt_stop_fd >= 0 && rt_stop_fd < FD_SETSIZE ? rt_stop_fd + 1 : 0, &rd, NULL, NULL,
		       ms < 0 ? NULL : &tv);
		return;
	}
}

void rt_wait_until(enum rt_wait how, int ep, uint64_t deadline, bool (*done)(void))
{
	while (!done()) {
		uint64_t now = rt_now_ns(), left;

		if (deadline && now >= deadline)
			return;
		left = deadline ? deadline - now : SLICE_NS;
		left = left < SLICE_NS ? left : SLICE_NS;
		wait_once(how, ep, (int)((left + 999999) / 1000000));
	}
}

/* An epoll set with the stop eventfd and fd, when conn_wait is epoll. */
int rt_conn_wait_open(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = rt_wait_open(rt_config.net.conn_wait);

	if (ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
		close(ep);
		return -1;
	}
	return ep;
}

/* Before a blocking read of c with nothing of a request buffered: until
 * the connection (or the stop eventfd) is readable, or a signal. */
void rt_conn_wait_request(const struct rt_conn *c, int ep)
{
	struct pollfd p[2] = { { c->fd, POLLIN, 0 }, { rt_stop_fd, POLLIN, 0 } };
	struct epoll_event ev;
	int top = c->fd > rt_stop_fd ? c->fd : rt_stop_fd;
	fd_set rd;

	if (c->in.len)
		return;
	switch (rt_config.net.conn_wait) {
	case RT_WAIT_EPOLL:
		if (ep >= 0)
			epoll_wait(ep, &ev, 1, -1);
		return;
	case RT_WAIT_POLL:
		poll(p, rt_stop_fd >= 0 ? 2 : 1, -1);
		return;
	case RT_WAIT_SELECT:
		if (top < FD_SETSIZE) {
			FD_ZERO(&rd);
			FD_SET(c->fd, &rd);
			if (rt_stop_fd >= 0)
				FD_SET(rt_stop_fd, &rd);
			select(top + 1, &rd, NULL, NULL, NULL);
		}
		return;
	default:
		return;
	}
}

/* A connection served with blocking reads and writes until it closes or
 * the clone stops, waiting before each request as the original did
 * (blocking writes finish, so only reads are waited for). */
void rt_conn_serve_blocking(struct rt_conn *c, struct rt_thread *t)
{
	int ep = rt_conn_wait_open(c->fd);

	while (!rt_stopping() && c->want != RT_WANT_CLOSE) {
		rt_conn_wait_request(c, ep);
		if (rt_stopping() || rt_conn_readable(c, t) == RT_WANT_CLOSE)
			break;
	}
	if (ep >= 0)
		close(ep);
}
