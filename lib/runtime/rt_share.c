/* SPDX-License-Identifier: MIT */
/*
 * Connections per process, for pre-forked processes that accept from one
 * shared listen socket. A process holding more connections than the
 * least loaded other one stops watching the socket until the others catch
 * up, so every serving process of the model serves. EPOLLEXCLUSIVE
 * wakes the first waiting process, and a clone's loop is back in
 * epoll_wait long before a burst of connections has arrived: one process
 * took every connection of a load opened together, and the clone's
 * profile had one serving process where its original's had two.
 *
 * EPOLLEXCLUSIVE wakes one process per connection: those still queued
 * when the process woken for them stops taking more would wake nobody.
 * So a process that stops with connections queued kicks the others
 * through a shared eventfd, and they add the socket to their sets again:
 * the kernel looks at its queue when it is added. A process that left
 * (its --max-requests, a failure) counts no more.
 */
#include "rt_int.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#define GONE (~0u)		/* the count of a process that left */

static unsigned *counts;	/* shared by the processes, one per process */
static unsigned nprocs, self;
static int kick_fd = -1;

int rt_share_init(unsigned procs)
{
	void *p = mmap(NULL, procs * sizeof(*counts), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		rt_err(errno, "connection counts shared by %u processes", procs);
		return -1;
	}
	kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (kick_fd < 0) {
		rt_err(errno, "an eventfd shared by %u processes", procs);
		munmap(p, procs * sizeof(*counts));
		return -1;
	}
	counts = p;
	nprocs = procs;
	return 0;
}

int rt_share_kick_fd(void)
{
	return kick_fd;
}

static void kick(void)
{
	uint64_t one = 1, n;

	/* edge-triggered in every set: nobody reads it but a full counter */
	if (write(kick_fd, &one, sizeof(one)) < 0 && errno == EAGAIN &&
	    read(kick_fd, &n, sizeof(n)) == sizeof(n) && write(kick_fd, &one, sizeof(one)) < 0) {
		/* the others look again within RT_SHARE_LOOK_MS */
	}
}

void rt_share_kick_queued(const int *lfd, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct pollfd p = { .fd = lfd[i], .events = POLLIN };

		if (poll(&p, 1, 0) > 0) {
			kick();
			return;
		}
	}
}

void rt_share_enter(unsigned proc)
{
	self = proc < nprocs ? proc : 0;
}

void rt_share_leave(unsigned proc)
{
	if (counts && proc < nprocs)
		__atomic_store_n(&counts[proc], GONE, __ATOMIC_RELAXED);
}

void rt_share_count(int delta)
{
	if (counts)
		__atomic_add_fetch(&counts[self], (unsigned)delta, __ATOMIC_RELAXED);
}

bool rt_share_accepting(void)
{
	unsigned own, least = GONE;

	if (!counts || nprocs < 2)
		return true;
	own = __atomic_load_n(&counts[self], __ATOMIC_RELAXED);
	for (unsigned p = 0; p < nprocs; p++) {
		unsigned n = __atomic_load_n(&counts[p], __ATOMIC_RELAXED);

		if (p != self && n < least)
			least = n;	/* GONE is never the least of live ones */
	}
	return least == GONE || own <= least;
}
