/* SPDX-License-Identifier: MIT */
/*
 * CPUs of a pinned measurement: the load generator (and the thread that
 * observes the service) on the first CPU this process may use, the
 * service on the others. On a small machine, where the generator and the
 * service otherwise share CPUs as the scheduler pleases, how many requests
 * one epoll_wait gathers (and so the system calls per request) moved by
 * 7% between runs of one redis-server; pinned, by under 1%.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "measure_int.h"

void pin_plan(struct pin *p)
{
	cpu_set_t all;
	int first = -1;

	memset(p, 0, sizeof(*p));
	if (sched_getaffinity(0, sizeof(all), &all) || CPU_COUNT(&all) < 2)
		return;		/* one CPU: nothing to separate */
	for (int i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, &all))
			continue;
		if (first < 0) {
			first = i;
			CPU_SET(i, &p->load);
		} else {
			CPU_SET(i, &p->svc);
		}
	}
	p->on = true;
}

bool pin_thread(const struct pin *p, cpu_set_t *saved)
{
	if (!p->on || pthread_getaffinity_np(pthread_self(), sizeof(*saved), saved))
		return false;
	return !pthread_setaffinity_np(pthread_self(), sizeof(p->load), &p->load);
}

void pin_restore(bool pinned, const cpu_set_t *saved)
{
	if (pinned)
		pthread_setaffinity_np(pthread_self(), sizeof(*saved), saved);
}
