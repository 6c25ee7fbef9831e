/* SPDX-License-Identifier: MIT */
/*
 * srv_epoll: one thread, one level-triggered epoll set holding the listen
 * socket and every connection. Level-triggered means a connection that
 * still has input is reported again, so one read per wakeup suffices and
 * no read ever has to fail with EAGAIN. Per request: 1 read, 1 write and
 * at most 1 epoll_wait (fewer when one wakeup reports several clients).
 *
 * --wake-work N: N more steps of gt_work() once per wakeup that read a
 * request, whatever their number (an event loop's own work per turn):
 * its CPU per request falls as its load puts more requests in a wakeup.
 * --work-after N: N steps per request once the wakeup's responses are
 * written (a server that pays for its table after it has answered).
 */
#include "gt_common.h"	/* first: it defines _GNU_SOURCE */

#include <sys/epoll.h>

#define MAX_EVENTS 64

/* The listen socket is registered with a NULL pointer. */
static int watch(int ep, int op, int fd, struct gt_conn *c, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = c };

	return epoll_ctl(ep, op, fd, &ev);
}

static void on_listen(int ep, int lfd, struct gt_connset *set)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct gt_conn *c;

	if (fd < 0) {
		gt_accept_error();
		return;
	}
	c = gt_connset_adopt(set, fd);
	if (c && watch(ep, EPOLL_CTL_ADD, fd, c, EPOLLIN) < 0) {
		perror("epoll_ctl");
		gt_connset_drop(set, c);
	}
}

/* Serve one readiness report, then watch for what the connection waits
 * on now; only a response too large for the socket buffer switches the
 * interest to EPOLLOUT (closing the fd removes it from the set). */
static void on_conn(int ep, struct gt_connset *set, struct gt_conn *c)
{
	enum gt_state st = gt_step(c);
	int want_out = st == GT_WANT_WRITE;

	if (st != GT_CLOSE && want_out != c->aux) {
		c->aux = want_out;
		if (watch(ep, EPOLL_CTL_MOD, c->fd, c, want_out ? EPOLLOUT : EPOLLIN) < 0)
			st = GT_CLOSE;
	}
	if (st == GT_CLOSE)
		gt_connset_drop(set, c);
}

static unsigned long wake_steps;

/* Takes --wake-work N out of argv; gt_parse() reads the rest. */
static void wake_options(int *argc, char **argv)
{
	int out = 1;

	for (int i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--wake-work") == 0 && i + 1 < *argc) {
			wake_steps = gt_number(argv[0], argv[++i], 0, 100000000);
			continue;
		}
		argv[out++] = argv[i];
	}
	*argc = out;
	argv[out] = NULL;
}

/* A connection shows up at most once per batch and only its own handler
 * frees it, so the pointers in evs stay valid for the whole batch. */
static void loop(int ep, int lfd, struct gt_connset *set)
{
	struct epoll_event evs[MAX_EVENTS];

	while (!gt_stop) {
		int n = epoll_wait(ep, evs, MAX_EVENTS, -1);
		if (n < 0 && errno != EINTR) {
			perror("epoll_wait");
			return;
		}
		unsigned long before = gt_requests;

		for (int i = 0; i < n && !gt_stop; i++) {
			if (evs[i].data.ptr)
				on_conn(ep, set, evs[i].data.ptr);
			else
				on_listen(ep, lfd, set);
		}
		if (gt_requests != before)
			gt_work_n(wake_steps);
		for (unsigned long k = before; k < gt_requests; k++)
			gt_work_after();
	}
}

int main(int argc, char **argv)
{
	struct gt_opts o;
	struct gt_connset set = { 0 };

	wake_options(&argc, argv);
	gt_parse(argc, argv, &o, 0);
	if (wake_steps && !o.work) {
		fprintf(stderr, "%s: --wake-work needs --work (its table)\n", argv[0]);
		return GT_EXIT_USAGE;
	}
	gt_response_init(o.response_bytes);
	int lfd = gt_listen(o.port, 1);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || watch(ep, EPOLL_CTL_ADD, lfd, NULL, EPOLLIN) < 0) {
		perror("epoll");
		return 1;
	}
	/* Stopping shuts lfd down, which epoll reports: the loop wakes. */
	gt_install_signals(gt_on_signal, o.max_seconds);
	gt_ready();
	loop(ep, lfd, &set);
	gt_connset_free(&set);
	close(ep);
	gt_close_listen(lfd);
	gt_response_free();
	return 0;
}
