/* SPDX-License-Identifier: MIT */
/*
 * The process's main thread when the original's did not serve requests:
 * the profiler names such a class "main" (a listener or housekeeping loop,
 * as memcached's), and then all serving threads are started threads while
 * the main thread, like the original's, waits in epoll_wait (on the stop
 * eventfd) between its periodic wake-ups and burns busy_ns at each one,
 * then makes its class's calls of a wake-up (rt_background.calls).
 */
#include "rt_int.h"

#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>

/* Milliseconds to the deadline, rounded up (epoll_wait's unit). */
static int timeout_ms(uint64_t deadline)
{
	uint64_t now = rt_now_ns(), ms;

	if (deadline <= now)
		return 0;
	ms = (deadline - now + 999999) / 1000000;
	return ms > 1000000 ? 1000000 : (int)ms;
}

void rt_main_thread_run(void)
{
	const struct rt_background *b = rt_background_main();
	struct epoll_event ev = { .events = EPOLLIN };
	uint64_t next = rt_now_ns();
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct rt_replayer *replay = b->ncalls ? rt_replay_new_for(b->calls, b->ncalls) : NULL;
	struct rt_rng rng;

	rt_rng_seed(&rng, rt_config.seed, RT_BG_MAIN_STREAM);

	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, rt_stop_fd, &ev)) {
		rt_err(errno, "epoll set of the main thread");
		rt_fail();
	}
	next += b->period_ns;
	while (!rt_stopping()) {
		int n = epoll_wait(ep, &ev, 1, b->period_ns ? timeout_ms(next) : -1);

		if (n < 0 && errno != EINTR) {
			rt_err(errno, "epoll_wait");
			rt_fail();
			break;
		}
		if (n || !b->period_ns || rt_now_ns() < next)
			continue;
		rt_spin(b->busy_ns);
		if (replay)
			rt_replay_run(replay, &rng);
		/* behind schedule: the next period starts now, no burst */
		next = next + b->period_ns < rt_now_ns() ? rt_now_ns() + b->period_ns : next + b->period_ns;
	}
	if (ep >= 0)
		close(ep);
	rt_replay_free(replay);
}
