/* SPDX-License-Identifier: MIT */
/*
 * srv_blocking: thread per connection. The main thread blocks in accept();
 * each connection gets a new thread doing blocking read()/write() until
 * the peer closes. Per request on the serving thread: 1 read, 1 write.
 */
#include "gt_common.h"

/* srv_proxy serves a connection its own way and takes options of its own. */
#ifndef GT_SERVE
#define GT_SERVE(c) gt_serve_blocking(c)
#define GT_OWN_OPTIONS(argc, argv) ((void)0)
#endif

/* One serving thread and its connection; main keeps them in a list so it
 * can wake and join them at stop. */
struct worker {
	pthread_t tid;
	struct gt_conn *conn;
	int done;		/* under lock: thread finished, fd closed */
	struct worker *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct worker *workers;

static void *serve(void *arg)
{
	struct worker *w = arg;

	pthread_setname_np(pthread_self(), "conn");
	GT_SERVE(w->conn);
	/* Close under the lock so main never shuts down a recycled fd. */
	pthread_mutex_lock(&lock);
	close(w->conn->fd);
	w->done = 1;
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void release(struct worker *w)
{
	pthread_join(w->tid, NULL);
	free(w->conn);
	free(w);
}

/* Join threads whose connection has ended, so a long run does not pile
 * up finished threads. */
static void reap(void)
{
	struct worker **pp = &workers;

	pthread_mutex_lock(&lock);
	while (*pp) {
		struct worker *w = *pp;
		if (w->done) {
			*pp = w->next;
			release(w);
		} else {
			pp = &w->next;
		}
	}
	pthread_mutex_unlock(&lock);
}

static void spawn(int fd)
{
	struct worker *w = calloc(1, sizeof *w);
	pthread_attr_t attr;
	int err;

	if (!w || !(w->conn = gt_conn_new(fd))) {
		free(w);
		close(fd);
		return;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 << 10);	/* the buffer is on the heap */
	/* Threads inherit a mask with the stop signals blocked. */
	sigset_t old = gt_block_signals();
	err = pthread_create(&w->tid, &attr, serve, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		fprintf(stderr, "pthread_create: %s\n", strerror(err));
		close(fd);
		free(w->conn);
		free(w);
		return;
	}
	pthread_mutex_lock(&lock);
	w->next = workers;
	workers = w;
	pthread_mutex_unlock(&lock);
}

/* Wake every thread still blocked in read() (it then sees end of file),
 * and join them all. */
static void stop_all(void)
{
	pthread_mutex_lock(&lock);
	for (struct worker *w = workers; w; w = w->next)
		if (!w->done)
			shutdown(w->conn->fd, SHUT_RDWR);
	pthread_mutex_unlock(&lock);
	while (workers) {
		struct worker *w = workers;
		workers = w->next;
		release(w);
	}
}

int main(int argc, char **argv)
{
	struct gt_opts o;

	GT_OWN_OPTIONS(&argc, argv);
	gt_parse(argc, argv, &o, 0);
	gt_response_init(o.response_bytes);
	int lfd = gt_listen(o.port, 0);
	gt_install_signals(gt_on_signal, o.max_seconds);
	gt_ready();
	while (!gt_stop) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			gt_accept_error();
			continue;
		}
		reap();
		spawn(fd);
	}
	gt_close_listen(lfd);
	stop_all();
	gt_response_free();
	return 0;
}
