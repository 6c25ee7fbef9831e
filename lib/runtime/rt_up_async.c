/* SPDX-License-Identifier: MIT */
/*
 * The async calls: a serving thread sends each one itself, right after
 * its response (so the call is sent in the request it was made for, as
 * the original's was, and a profile of the clone attributes it there),
 * on a connection from a pool the process's threads share, and hands it
 * to one caller thread per process, which reads the replies (up to a
 * batch's worth in flight at once) and gives the connections back. The
 * serving thread never waits for a reply. A full queue drops the call,
 * counted as skipped. A process forked after the caller started (one per
 * connection) has no caller: it makes its async calls itself after the
 * response, as the simplification in rt.h says. Not in the epoll
 * skeleton, whose loops make their async calls themselves (rt_park.c).
 * The caller dozes when
 * the queue is empty (rt_doze.c): a hand-off to it costs one futex call
 * on each side, none while it is busy.
 */
#include "rt_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define QUEUE_MAX 4096u
#define TAKE_MAX 32u	/* calls in flight at once */

static struct {
	pthread_mutex_t lock;	/* the queue */
	pthread_mutex_t pool_lock;	/* t's connection pools */
	struct rt_doze doze;	/* the caller's, when the queue is empty */
	struct rt_up_call *q;	/* QUEUE_MAX calls begun, their replies unread */
	unsigned head, len;
	/* started: the caller runs in this process (a forked child has
	 * none: forked() clears it, so that no request pays a getpid(),
	 * which a profile of the clone would count per request) */
	bool stop, started;
	pthread_t tid;
	struct rt_thread t;	/* the shared pools */
} aq = { .lock = PTHREAD_MUTEX_INITIALIZER, .pool_lock = PTHREAD_MUTEX_INITIALIZER };

/* Up to TAKE_MAX queued calls into take; *stop: the queue is stopped. */
static unsigned take_calls(struct rt_up_call *take, bool *stop)
{
	unsigned n = 0;

	pthread_mutex_lock(&aq.lock);
	for (; n < TAKE_MAX && aq.len; n++, aq.len--) {
		take[n] = aq.q[aq.head];
		aq.head = (aq.head + 1) % QUEUE_MAX;
	}
	*stop = aq.stop;
	pthread_mutex_unlock(&aq.lock);
	return n;
}

/* Calls to end, dozing while there are none; 0 once stopped and empty. */
static unsigned next_calls(struct rt_up_call *take)
{
	bool stop;
	unsigned n;

	while (!(n = take_calls(take, &stop)) && !stop) {
		uint32_t seq = rt_doze_prepare(&aq.doze);

		if ((n = take_calls(take, &stop)) || stop) {
			rt_doze_cancel(&aq.doze);
			break;
		}
		rt_doze_wait(&aq.doze, seq);
	}
	return n;
}

static void *caller(void *arg)
{
	struct rt_up_call take[TAKE_MAX];

	(void)arg;
	for (;;) {
		unsigned n = next_calls(take);

		if (!n)
			break;
		/* at the stop, the calls still end: connections are closed
		 * and their spans recorded (run() stops waiting at once) */
		rt_up_calls_end(&aq.t, take, n);
	}
	return NULL;
}

static void forked(void)
{
	aq.started = false;
}

int rt_up_async_start(void)
{
	static bool hooked;
	bool any = false;

	for (unsigned i = 0; i < rt_config.nupstreams; i++)
		any |= rt_config.upstreams[i].async;
	/* an epoll loop makes them itself (rt_park_async) */
	if (!any || rt_config.io == RT_IO_EPOLL)
		return 0;
	memset(&aq.t, 0, sizeof(aq.t));
	aq.q = calloc(QUEUE_MAX, sizeof(*aq.q));
	if (!aq.q || rt_up_thread_init(&aq.t, 1ull << 40)) {
		free(aq.q);
		aq.q = NULL;
		return -1;
	}
	aq.stop = false;
	aq.head = aq.len = 0;
	if (!hooked && pthread_atfork(NULL, NULL, forked)) {
		rt_up_thread_fini(&aq.t);
		free(aq.q);
		aq.q = NULL;
		return -1;
	}
	hooked = true;
	if (rt_thread_start(&aq.tid, caller, NULL, "the async caller")) {
		rt_up_thread_fini(&aq.t);
		free(aq.q);
		aq.q = NULL;
		return -1;
	}
	aq.started = true;
	return 0;
}

void rt_up_async_stop(void)
{
	if (!aq.started)
		return;
	pthread_mutex_lock(&aq.lock);
	aq.stop = true;
	pthread_mutex_unlock(&aq.lock);
	rt_doze_wake(&aq.doze);
	pthread_join(aq.tid, NULL);	/* its calls end at the stop or their timeout */
	rt_up_thread_fini(&aq.t);
	free(aq.q);
	aq.q = NULL;
	aq.started = false;
}

void rt_up_async_push(struct rt_thread *t, const struct rt_up_ctx *ctx)
{
	struct rt_up_call k;
	bool room;

	if (!aq.started) {
		rt_up_batch(t, ctx, 1);
		return;
	}
	pthread_mutex_lock(&aq.lock);
	room = aq.len < QUEUE_MAX && !aq.stop;
	pthread_mutex_unlock(&aq.lock);
	if (!room) {
		rt_upstream_count(ctx->up, RT_UP_SKIPPED);
		return;
	}
	rt_up_call_begin(t, &aq.t, &aq.pool_lock, ctx, &k);
	pthread_mutex_lock(&aq.lock);
	if (aq.len < QUEUE_MAX && !aq.stop) {
		aq.q[(aq.head + aq.len) % QUEUE_MAX] = k;
		aq.len++;
		room = true;
	} else {
		room = false;
	}
	pthread_mutex_unlock(&aq.lock);
	if (room)
		rt_doze_wake(&aq.doze);
	else	/* filled or stopped meanwhile: ended here */
		rt_up_calls_end(&aq.t, &k, 1);
}
