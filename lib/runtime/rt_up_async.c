/* SPDX-License-Identifier: MIT */
/*
 * The async calls: serving threads queue them (drawn and with their
 * request's trace context) and go on serving; one caller thread per
 * process makes what is queued, up to a batch's worth in flight at once
 * (the order of one request's async calls is not kept). A full queue
 * drops the call, counted as skipped. A process forked after the caller
 * started (one per connection) has no caller: it makes its async calls
 * itself after the response, as the simplification in rt.h says.
 */
#include "rt_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define QUEUE_MAX 4096u
#define TAKE_MAX 32u	/* calls in flight at once */

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct rt_up_ctx q[QUEUE_MAX];
	unsigned head, len;
	bool stop, started;
	pid_t pid;		/* the process the caller runs in */
	pthread_t tid;
	struct rt_thread t;	/* its pools and ids */
} aq = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

static void *caller(void *arg)
{
	struct rt_up_ctx take[TAKE_MAX];

	(void)arg;
	for (;;) {
		unsigned n = 0;

		pthread_mutex_lock(&aq.lock);
		while (!aq.len && !aq.stop)
			pthread_cond_wait(&aq.wake, &aq.lock);
		for (; n < TAKE_MAX && aq.len; n++, aq.len--) {
			take[n] = aq.q[aq.head];
			aq.head = (aq.head + 1) % QUEUE_MAX;
		}
		pthread_mutex_unlock(&aq.lock);
		if (!n || rt_stopping())
			break;
		rt_up_batch(&aq.t, take, n);
	}
	return NULL;
}

int rt_up_async_start(void)
{
	bool any = false;

	for (unsigned i = 0; i < rt_config.nupstreams; i++)
		any |= rt_config.upstreams[i].async;
	if (!any)
		return 0;
	memset(&aq.t, 0, sizeof(aq.t));
	if (rt_up_thread_init(&aq.t, 1ull << 40))
		return -1;
	aq.stop = false;
	aq.head = aq.len = 0;
	aq.pid = getpid();
	if (rt_thread_start(&aq.tid, caller, NULL, "the async caller")) {
		rt_up_thread_fini(&aq.t);
		return -1;
	}
	aq.started = true;
	return 0;
}

void rt_up_async_stop(void)
{
	if (!aq.started || aq.pid != getpid())
		return;
	pthread_mutex_lock(&aq.lock);
	aq.stop = true;
	pthread_cond_broadcast(&aq.wake);
	pthread_mutex_unlock(&aq.lock);
	pthread_join(aq.tid, NULL);	/* its calls end at the stop or their timeout */
	rt_up_thread_fini(&aq.t);
	aq.started = false;
}

void rt_up_async_push(struct rt_thread *t, const struct rt_up_ctx *ctx)
{
	bool queued = false;

	if (!aq.started || aq.pid != getpid()) {
		rt_up_batch(t, ctx, 1);
		return;
	}
	pthread_mutex_lock(&aq.lock);
	if (aq.len < QUEUE_MAX && !aq.stop) {
		aq.q[(aq.head + aq.len) % QUEUE_MAX] = *ctx;
		aq.len++;
		queued = true;
		pthread_cond_signal(&aq.wake);
	}
	pthread_mutex_unlock(&aq.lock);
	if (!queued)
		rt_upstream_count(ctx->up, RT_UP_SKIPPED);
}
