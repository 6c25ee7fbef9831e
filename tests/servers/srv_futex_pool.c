/* SPDX-License-Identifier: MIT */
/*
 * srv_futex_pool: a listener thread and a pool fed through a condition
 * variable (issue 18, item 2). The main thread waits in epoll_wait on the
 * listen socket and on every idle connection (EPOLLONESHOT); it accepts
 * new connections, and queues each readable one and signals the pool's
 * condition variable. A pool thread, woken through the futex, reads the
 * non-blocking socket until EAGAIN, answers the frames it completed,
 * re-arms the connection in the listener's set and waits again. Per
 * request: listener 1 epoll_wait (at most); pool thread 1 read, 1 EAGAIN
 * read, 1 write, 1 epoll_ctl(MOD), futex waits and wakes. The pool never
 * spins: it is a blocking pool whose threads read non-blocking sockets.
 */
#include "gt_common.h"	/* first: it defines _GNU_SOURCE */

#include <fcntl.h>
#include <sys/epoll.h>

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER;
static struct gt_conn *queue[4096];
static unsigned qhead, qlen;
static int epfd = -1;

static void push(struct gt_conn *c)
{
	pthread_mutex_lock(&qlock);
	if (qlen < sizeof queue / sizeof queue[0]) {
		queue[(qhead + qlen++) % (sizeof queue / sizeof queue[0])] = c;
		pthread_cond_signal(&qcond);
	}
	pthread_mutex_unlock(&qlock);
}

/* NULL at the stop. */
static struct gt_conn *pop(void)
{
	struct gt_conn *c = NULL;

	pthread_mutex_lock(&qlock);
	while (!qlen && !gt_stop)
		pthread_cond_wait(&qcond, &qlock);
	if (qlen) {
		c = queue[qhead];
		qhead = (qhead + 1) % (sizeof queue / sizeof queue[0]);
		qlen--;
	}
	pthread_mutex_unlock(&qlock);
	return c;
}

static void rearm(struct gt_conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.ptr = c };

	epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Read until EAGAIN, answering every completed frame (blocking writes:
 * responses are small). */
static void *pool_main(void *arg)
{
	struct gt_conn *c;

	(void)arg;
	while ((c = pop())) {
		enum gt_state st = GT_WANT_READ;

		for (;;) {
			ssize_t n = gt_read_more(c);
			int f;

			if (n == 0 || (n < 0 && !gt_again())) {
				st = GT_CLOSE;
				break;
			}
			if (n < 0)
				break;
			while ((f = gt_take_frame(c)) > 0) {
				if (gt_write_all(c->fd, gt_resp, gt_resp_len) < 0)
					break;
				gt_work_after();
			}
			if (f < 0) {
				st = GT_CLOSE;
				break;
			}
		}
		if (st == GT_CLOSE) {
			close(c->fd);	/* closing removes it from the set */
			free(c);
		} else {
			rearm(c);
		}
	}
	return NULL;
}

static void on_listener(int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	struct gt_conn *c;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };

	if (fd < 0) {
		gt_accept_error();
		return;
	}
	if (!(c = gt_conn_new(fd))) {
		close(fd);
		return;
	}
	ev.data.ptr = c;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev)) {
		close(fd);
		free(c);
	}
}

int main(int argc, char **argv)
{
	struct gt_opts o;
	pthread_t tids[GT_MAX_THREADS];
	static int lmark;	/* data.ptr of the listen socket */
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &lmark }, evs[64];
	unsigned started = 0;

	gt_parse(argc, argv, &o, 4);
	gt_response_init(o.response_bytes);
	int lfd = gt_listen(o.port, 1);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev)) {
		perror("epoll");
		return 1;
	}
	gt_install_signals(gt_on_signal, o.max_seconds);
	sigset_t old = gt_block_signals();
	while (started < o.threads && !pthread_create(&tids[started], NULL, pool_main, NULL))
		started++;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (started == o.threads)
		gt_ready();
	else
		gt_stop = 1;
	while (!gt_stop) {
		int n = epoll_wait(epfd, evs, 64, -1);

		for (int i = 0; i < n && !gt_stop; i++) {
			if (evs[i].data.ptr == &lmark)
				on_listener(lfd);
			else
				push(evs[i].data.ptr);
		}
	}
	pthread_mutex_lock(&qlock);
	pthread_cond_broadcast(&qcond);
	pthread_mutex_unlock(&qlock);
	for (unsigned i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	gt_close_listen(lfd);
	close(epfd);
	gt_response_free();
	return 0;
}
