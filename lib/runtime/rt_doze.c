/* SPDX-License-Identifier: MIT */
/*
 * A thread that sleeps until another has work for it, on a futex word of
 * its own: one FUTEX_WAIT per sleep and one FUTEX_WAKE from the waker, and
 * none while it is awake. On a condition variable signalled inside the
 * waker's critical section, the woken thread wanted the mutex at once and
 * both sides made about one more futex call per hand-off, contended: the
 * clone's hand-offs to its background pool and its async caller made up to
 * twice the futex calls per request of the original's (node's).
 *
 * The sleeper says it sleeps before it looks for work a last time; a waker
 * publishes its work, then bumps the word, then looks whether the sleeper
 * sleeps: one of the two sees the other (sequentially consistent), and a
 * bump between the sleeper's read of the word and its wait makes
 * FUTEX_WAIT return at once.
 */
#include "rt_int.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

uint32_t rt_doze_prepare(struct rt_doze *d)
{
	uint32_t seq = atomic_load(&d->seq);

	atomic_store(&d->sleeping, true);
	return seq;
}

void rt_doze_wait(struct rt_doze *d, uint32_t seq)
{
	syscall(SYS_futex, &d->seq, FUTEX_WAIT_PRIVATE, seq, NULL, NULL, 0);
	atomic_store(&d->sleeping, false);
}

void rt_doze_cancel(struct rt_doze *d)
{
	atomic_store(&d->sleeping, false);
}

void rt_doze_wake(struct rt_doze *d)
{
	atomic_fetch_add(&d->seq, 1);
	if (atomic_exchange(&d->sleeping, false))
		syscall(SYS_futex, &d->seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
