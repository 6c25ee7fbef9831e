/* SPDX-License-Identifier: MIT */
/*
 * srv_epoll_pool: memcached-style. The main thread blocks in accept() and
 * hands each connection, round robin, to one of N worker threads by
 * writing its fd into that worker's pipe. Each worker runs its own
 * level-triggered epoll loop over its pipe and its connections and serves
 * requests itself (no further hand-off). Per request on a worker: 1 read,
 * 1 write, at most 1 epoll_wait. Per connection: accept4 + pipe write on
 * the acceptor, pipe read + epoll_ctl on the worker.
 */
#include "gt_common.h"	/* first: it defines _GNU_SOURCE */

#include <fcntl.h>
#include <sys/epoll.h>

#define MAX_EVENTS 64

struct worker {
	pthread_t tid;
	int pipe[2];		/* [0] read by the worker, [1] written by main */
	int ep;
	struct gt_connset set;
};

/* The pipe is registered with a NULL pointer. */
static int watch(int ep, int op, int fd, struct gt_conn *c, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = c };

	return epoll_ctl(ep, op, fd, &ev);
}

/* Adopt the fds main wrote; returns 0 once main closed its end (stop).
 * Writes of one int are atomic and reads ask for whole ints, so a read
 * never splits an fd. */
static int on_pipe(struct worker *w)
{
	int fds[64];
	ssize_t n = read(w->pipe[0], fds, sizeof fds);

	if (n < 0)
		return errno == EINTR || gt_again();
	for (size_t i = 0; i < (size_t)n / sizeof fds[0]; i++) {
		struct gt_conn *c = gt_connset_adopt(&w->set, fds[i]);
		if (c && watch(w->ep, EPOLL_CTL_ADD, c->fd, c, EPOLLIN) < 0) {
			perror("epoll_ctl");
			gt_connset_drop(&w->set, c);
		}
	}
	return n > 0;
}

/* Same as srv_epoll: serve one report, then re-aim the interest. */
static void on_conn(struct worker *w, struct gt_conn *c)
{
	enum gt_state st = gt_step(c);
	int want_out = st == GT_WANT_WRITE;

	if (st != GT_CLOSE && want_out != c->aux) {
		c->aux = want_out;
		if (watch(w->ep, EPOLL_CTL_MOD, c->fd, c, want_out ? EPOLLOUT : EPOLLIN) < 0)
			st = GT_CLOSE;
	}
	if (st == GT_CLOSE)
		gt_connset_drop(&w->set, c);
}

/* Runs until main closes the pipe; owns and finally closes its conns. */
static void *work(void *arg)
{
	struct worker *w = arg;
	struct epoll_event evs[MAX_EVENTS];
	int running = 1;

	pthread_setname_np(pthread_self(), "network");
	while (running) {
		int n = epoll_wait(w->ep, evs, MAX_EVENTS, -1);
		if (n < 0 && errno != EINTR) {
			perror("epoll_wait");
			break;
		}
		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr)
				on_conn(w, evs[i].data.ptr);
			else
				running = on_pipe(w);
		}
	}
	gt_connset_free(&w->set);
	return NULL;
}

static int start(struct worker *w)
{
	w->set = (struct gt_connset){ 0 };
	if (pipe2(w->pipe, O_CLOEXEC) < 0 || (w->ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    watch(w->ep, EPOLL_CTL_ADD, w->pipe[0], NULL, EPOLLIN) < 0) {
		perror("worker setup");
		return -1;
	}
	int err = pthread_create(&w->tid, NULL, work, w);
	if (err)
		fprintf(stderr, "pthread_create: %s\n", strerror(err));
	return err ? -1 : 0;
}

/* Closing the write end is the stop message: the worker reads EOF. */
static void finish(struct worker *w)
{
	close(w->pipe[1]);
	pthread_join(w->tid, NULL);
	close(w->pipe[0]);
	close(w->ep);
}

static void accept_loop(int lfd, struct worker *ws, unsigned n)
{
	unsigned next = 0;

	while (!gt_stop) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			gt_accept_error();
			continue;
		}
		if (write(ws[next].pipe[1], &fd, sizeof fd) != (ssize_t)sizeof fd) {
			perror("hand-off");
			close(fd);
		}
		next = (next + 1) % n;
	}
}

int main(int argc, char **argv)
{
	static struct worker ws[GT_MAX_THREADS];
	struct gt_opts o;
	unsigned started = 0;

	gt_parse(argc, argv, &o, 4);
	gt_response_init(o.response_bytes);
	int lfd = gt_listen(o.port, 0);
	gt_install_signals(gt_on_signal, o.max_seconds);
	/* Workers inherit a mask with the stop signals blocked. */
	sigset_t old = gt_block_signals();
	while (started < o.threads && start(&ws[started]) == 0)
		started++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (started == o.threads) {
		gt_ready();
		accept_loop(lfd, ws, o.threads);
	}
	gt_close_listen(lfd);
	for (unsigned i = 0; i < started; i++)
		finish(&ws[i]);
	gt_response_free();
	return started == o.threads ? 0 : 1;
}
