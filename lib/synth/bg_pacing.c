/* SPDX-License-Identifier: MIT */
/*
 * Which background classes the clone wakes per request rather than by the
 * clock. A class the serving class wakes (its woken_by names it) and that
 * waits on a futex (not in a sleep, not in an event loop's call) does its
 * work because requests came: node's libuv pool and V8's workers, a
 * listener's helper threads. Woken by the clock at the profile's rate,
 * its wake-ups per request (and their futex calls and CPU time) fell as
 * far as the clone was faster than the original and rose as far as its
 * load was lighter (a graph tier's: 1.12 futex calls per request against
 * 0.49). Paced by requests served, they are the profile's per request at
 * any load (rt_background.c).
 */
#include <string.h>

#include "synth_int.h"

#include <ditto/model.h>

/* Calls of class t named name on fds of kind k (any kind: -1). */
static uint64_t kind_calls(const struct ditto_service *s, const struct ditto_thread_class *t,
			   const char *name, int k)
{
	uint64_t n = 0;

	for (size_t i = 0; i < ditto_service_syscall_count(s); i++) {
		const struct ditto_syscall *c = ditto_service_syscall(s, i);

		if (!strcmp(ditto_syscall_thread_class(c), ditto_thread_class_name(t)) &&
		    !strcmp(ditto_syscall_name(c), name) &&
		    (k < 0 || (int)ditto_syscall_fd_kind(c) == k))
			n += ditto_syscall_calls(c);
	}
	return n;
}

static uint64_t class_calls(const struct ditto_service *s, const struct ditto_thread_class *t,
			    const char *name)
{
	return kind_calls(s, t, name, -1);
}

bool bg_sleeps(const struct ditto_service *s, const struct ditto_thread_class *t)
{
	return class_calls(s, t, "clock_nanosleep") + class_calls(s, t, "nanosleep") >
	       class_calls(s, t, "futex");
}

static bool woken_by(const struct ditto_thread_class *t, const char *name)
{
	for (size_t i = 0; i < ditto_thread_class_woken_by_count(t); i++)
		if (!strcmp(ditto_thread_class_woken_by(t, i), name))
			return true;
	return false;
}

static bool waits_in_a_loop(const struct ditto_thread_class *t)
{
	switch (ditto_thread_class_io_model(t)) {
	case DITTO_IO_EPOLL:
	case DITTO_IO_POLL:
	case DITTO_IO_SELECT:
		return true;
	default:
		return false;
	}
}

bool bg_paced(const struct ditto_service *s, const struct ditto_thread_class *serving,
	      const struct ditto_thread_class *t)
{
	return serving && t != serving && ditto_thread_class_wakeups(t) &&
	       woken_by(t, ditto_thread_class_name(serving)) && !waits_in_a_loop(t) &&
	       !bg_sleeps(s, t);
}

/* Its own futex calls per wake-up beyond the wait the runtime makes. */
double bg_futex_per_wake(const struct ditto_service *s, const struct ditto_thread_class *t)
{
	uint64_t wake = ditto_thread_class_wakeups(t);
	double extra = wake ? (double)class_calls(s, t, "futex") / (double)wake - 1 : 0;

	return extra > 0 ? extra : 0;
}

double bg_eventfd_per_wake(const struct ditto_service *s, const struct ditto_thread_class *t)
{
	uint64_t wake = ditto_thread_class_wakeups(t);

	return wake ? (double)kind_calls(s, t, "write", DITTO_FD_EVENTFD) / (double)wake : 0;
}

double bg_signals_per_request(const struct ditto_service *s, const struct ditto_thread_class *serving,
			      double requests, double rate)
{
	double n = 0;

	for (size_t i = 0; requests > 0 && i < ditto_service_thread_count(s); i++) {
		const struct ditto_thread_class *t = ditto_service_thread(s, i);

		if (bg_paced(s, serving, t))
			n += (double)ditto_thread_class_wakeups(t) * rate / requests;
	}
	return n;
}
