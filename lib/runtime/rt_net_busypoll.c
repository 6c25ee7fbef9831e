/* SPDX-License-Identifier: MIT */
/*
 * The busy-polling skeleton: each serving thread spins over its
 * non-blocking listen sockets and connections, trying accept, read and
 * write until they stop saying EAGAIN; it never blocks in the kernel.
 */
#include "rt_int.h"

static void take_queued(struct rt_worker *w)
{
	int fds[64];
	size_t n;

	while ((n = rt_worker_take(w, fds, 64)))
		for (size_t i = 0; i < n; i++)
			rt_worker_adopt(w, fds[i]);
}

static void accept_some(struct rt_worker *w, int lfd)
{
	bool again = true;

	for (int i = 0; i < 32 && again; i++)
		rt_worker_accept(w, lfd, &again);
}

void rt_net_busypoll_loop(struct rt_worker *w)
{
	while (!rt_stopping()) {
		for (unsigned i = 0; i < w->nlfd; i++)
			accept_some(w, w->lfd[i]);
		take_queued(w);
		/* a dropped connection's slot takes the last one: look again */
		for (size_t i = 0; i < w->nconns;)
			i += rt_worker_service(w, w->conns[i], true, true);
		__builtin_ia32_pause();
	}
}
