/* SPDX-License-Identifier: MIT */
/*
 * The span queue and its exporter thread (rt_otlp.h). A serving thread
 * holds the queue's lock for one copy; the exporter takes up to BATCH
 * spans at a time, every FLUSH_MS or as soon as a batch is full, encodes
 * and posts them with the lock released. At stop it drains what is left
 * within STOP_MS, so a clone still stops within about a second.
 */
#include "rt_int.h"
#include "rt_otlp.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define QUEUE 16384	/* spans waiting, at most: more are dropped */
#define BATCH 512	/* spans per request */
#define FLUSH_MS 500
#define POST_MS 2000	/* a request's send and answer, at most */
#define STOP_MS 800	/* the last flush's budget */

static struct {
	bool on, stopping;
	int64_t wall_minus_mono;	/* ns, at start */
	struct rt_otlp_url url;
	const char *service;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct rt_otlp_span *ring;
	size_t head, len;
	uint64_t recorded, dropped, sent, failed_batches, refused_batches;
} q = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

bool rt_otlp_on(void)
{
	return q.on;
}

static int64_t clock_ns(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

uint64_t rt_otlp_wall_ns(uint64_t mono_ns)
{
	return (uint64_t)((int64_t)mono_ns + q.wall_minus_mono);
}

void rt_otlp_forked(void)
{
	q.on = false;
}

void rt_otlp_record(const struct rt_otlp_span *s)
{
	if (!q.on)
		return;
	pthread_mutex_lock(&q.lock);
	if (q.len == QUEUE) {
		q.dropped++;
	} else {
		q.ring[(q.head + q.len++) % QUEUE] = *s;
		q.recorded++;
		if (q.len == BATCH)
			pthread_cond_signal(&q.wake);
	}
	pthread_mutex_unlock(&q.lock);
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* Up to BATCH spans out of the queue into out (lock held). */
static size_t take(struct rt_otlp_span *out)
{
	size_t n = q.len < BATCH ? q.len : BATCH;

	for (size_t i = 0; i < n; i++)
		out[i] = q.ring[(q.head + i) % QUEUE];
	q.head = (q.head + n) % QUEUE;
	q.len -= n;
	return n;
}

static void post(const struct rt_otlp_span *s, size_t n, int *fd, int timeout_ms)
{
	struct rt_buf body = { 0 };
	int status;

	if (rt_otlp_encode(&body, q.service, s, n)) {
		q.failed_batches++;
	} else {
		status = rt_otlp_post(&q.url, fd, body.data, body.len, timeout_ms);
		if (status < 0)
			q.failed_batches++;
		else if (status < 200 || status > 299)
			q.refused_batches++;
		else
			q.sent += n;
	}
	rt_buf_free(&body);
}

static void wait_for_batch(void)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += FLUSH_MS * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (!q.stopping && q.len < BATCH)
		if (pthread_cond_timedwait(&q.wake, &q.lock, &until) == ETIMEDOUT)
			break;
}

static void *exporter(void *arg)
{
	struct rt_otlp_span *batch = arg;
	uint64_t deadline = 0;
	int fd = -1;

	pthread_mutex_lock(&q.lock);
	for (;;) {
		size_t n;

		wait_for_batch();
		if (q.stopping && !deadline)
			deadline = now_ms() + STOP_MS;
		n = take(batch);
		if (!n && q.stopping)
			break;
		pthread_mutex_unlock(&q.lock);
		if (n && (!deadline || now_ms() < deadline))
			post(batch, n, &fd, deadline ? STOP_MS : POST_MS);
		else if (n)
			q.failed_batches++;	/* past the stop's budget: dropped */
		pthread_mutex_lock(&q.lock);
	}
	pthread_mutex_unlock(&q.lock);
	if (fd >= 0)
		close(fd);
	free(batch);
	return NULL;
}

int rt_otlp_start(const char *url, const char *service)
{
	struct rt_otlp_span *batch;
	const char *why = NULL;

	if (!url || !*url)
		return 0;
	q.service = service;
	q.stopping = false;
	q.wall_minus_mono = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
	if (rt_otlp_url_parse(url, &q.url, &why)) {
		rt_err(0, "--otlp %s: %s", url, why);
		return -1;
	}
	q.ring = calloc(QUEUE, sizeof(*q.ring));
	batch = calloc(BATCH, sizeof(*batch));
	if (!q.ring || !batch || rt_thread_start(&q.thread, exporter, batch, "span exporter")) {
		if (!q.ring || !batch)
			rt_err(ENOMEM, "cannot queue spans");
		free(q.ring);
		free(batch);
		q.ring = NULL;
		return -1;
	}
	q.on = true;
	return 0;
}

void rt_otlp_stop(void)
{
	if (!q.on)
		return;
	pthread_mutex_lock(&q.lock);
	q.stopping = true;
	pthread_cond_signal(&q.wake);
	pthread_mutex_unlock(&q.lock);
	pthread_join(q.thread, NULL);
	q.on = false;
	free(q.ring);
	q.ring = NULL;
	fprintf(stderr,
		"clone: spans: %" PRIu64 " recorded, %" PRIu64 " sent, %" PRIu64
		" dropped (queue full), %" PRIu64 " batches failed, %" PRIu64 " refused\n",
		q.recorded, q.sent, q.dropped, q.failed_batches, q.refused_batches);
}
