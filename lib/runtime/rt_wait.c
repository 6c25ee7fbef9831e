/* SPDX-License-Identifier: MIT */
/*
 * Waits in an event loop's call (enum rt_wait) where the original's thread
 * made one, so that its class looks to a profiler as the original's did (a
 * thread that waits in epoll_wait is of io model epoll whatever it waits
 * for): a background thread's, over the stop eventfd with a timeout to its
 * next wake-up.
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
void rt_wait_once(enum rt_wait how, int ep, int ms)
{
	struct pollfd p = { .fd = rt_stop_fd, .events = POLLIN };
	struct epoll_event ev;
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
	fd_set rd;

	switch (how) {
	case RT_WAIT_EPOLL:
		if (ep >= 0) {
			epoll_wait(ep, &ev, 1, ms);
			return;
		}
		/* no set (out of descriptors): poll, not a spinning caller */
		/* fall through */
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
		rt_wait_once(how, ep, (int)((left + 999999) / 1000000));
	}
}
