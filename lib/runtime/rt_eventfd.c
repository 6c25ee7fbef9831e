/* SPDX-License-Identifier: MIT */
/*
 * The eventfd calls a clone replays: an event loop's pool tells the loop
 * that work is done with an eventfd write, and the loop reads it (node's
 * libuv: uv_async_send() in a pool thread, the read in the loop). One
 * eventfd per process, a semaphore primed far above what any run reads,
 * so that every read succeeds as the original's did and no write blocks.
 */
#include "rt_int.h"

#include <errno.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int efd = -1;

static void open_eventfd(void)
{
	uint64_t prime = 1ull << 62;

	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE);
	if (efd >= 0 && write(efd, &prime, sizeof(prime)) != (ssize_t)sizeof(prime)) {
		close(efd);
		efd = -1;
	}
	if (efd < 0)
		rt_err(errno, "no eventfd for the replayed eventfd calls: they are left out");
}

void rt_eventfd_call(bool write_it)
{
	uint64_t v = 1;
	ssize_t r;

	pthread_once(&once, open_eventfd);
	if (efd < 0)
		return;
	r = write_it ? write(efd, &v, sizeof(v)) : read(efd, &v, sizeof(v));
	(void)r;	/* a failure is the original's rare one: nothing to do */
}
