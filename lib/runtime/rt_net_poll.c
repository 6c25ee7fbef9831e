/* SPDX-License-Identifier: MIT */
/*
 * The poll() and select() skeletons: one loop that rebuilds its set each
 * round from the stop eventfd, the dispatch eventfd, the listen sockets
 * and the connections. select() takes descriptors below FD_SETSIZE only:
 * connections above it are refused (closed) when accepted. Processes on
 * one shared socket take turns (rt_share.c): one too far ahead leaves the
 * socket out of its set and looks again every RT_SHARE_LOOK_MS (each
 * process that watches it is woken by a connection: no kick is needed).
 */
#include "rt_int.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/select.h>
#include <sys/time.h>
#include <unistd.h>

struct set {
	struct pollfd *pfd;
	struct rt_conn **who;	/* NULL: not a connection */
	size_t n, cap, fixed;	/* fixed: entries before the connections */
	int timeout_ms;		/* -1, or RT_SHARE_LOOK_MS without the listen sockets */
};

static int grow(struct set *s, size_t need)
{
	struct pollfd *p;
	struct rt_conn **q;

	if (need <= s->cap)
		return 0;
	p = realloc(s->pfd, need * sizeof(*p));
	if (p)
		s->pfd = p;
	q = realloc(s->who, need * sizeof(*q));
	if (q)
		s->who = q;
	if (!p || !q)
		return -1;
	s->cap = need;
	return 0;
}

static void add(struct set *s, int fd, short events, struct rt_conn *c)
{
	s->pfd[s->n] = (struct pollfd){ .fd = fd, .events = events };
	s->who[s->n++] = c;
}

static int build(struct rt_worker *w, struct set *s)
{
	if (grow(s, 2 + w->nlfd + w->nconns))
		return -1;
	s->n = 0;
	s->timeout_ms = -1;
	add(s, rt_stop_fd, POLLIN, NULL);
	if (w->notify_fd >= 0)
		add(s, w->notify_fd, POLLIN, NULL);
	if (w->nlfd && !rt_share_accepting())
		s->timeout_ms = RT_SHARE_LOOK_MS;
	for (unsigned i = 0; i < w->nlfd && s->timeout_ms < 0; i++)
		add(s, w->lfd[i], POLLIN, NULL);
	s->fixed = s->n;
	for (size_t i = 0; i < w->nconns; i++)
		add(s, w->conns[i]->fd, w->conns[i]->want == RT_WANT_WRITE ? POLLOUT : POLLIN, w->conns[i]);
	return 0;
}

static int wait_poll(struct set *s)
{
	return poll(s->pfd, s->n, s->timeout_ms);
}

/* select() on the same set, results written back as poll's revents. */
static int wait_select(struct set *s)
{
	struct timeval tv = { 0, s->timeout_ms * 1000 };
	fd_set rd, wr;
	int maxfd = -1, n;

	FD_ZERO(&rd);
	FD_ZERO(&wr);
	for (size_t i = 0; i < s->n; i++) {
		FD_SET(s->pfd[i].fd, s->pfd[i].events & POLLOUT ? &wr : &rd);
		maxfd = s->pfd[i].fd > maxfd ? s->pfd[i].fd : maxfd;
	}
	n = select(maxfd + 1, &rd, &wr, NULL, s->timeout_ms < 0 ? NULL : &tv);
	for (size_t i = 0; n > 0 && i < s->n; i++)
		s->pfd[i].revents = (short)((FD_ISSET(s->pfd[i].fd, &rd) ? POLLIN : 0) |
					    (FD_ISSET(s->pfd[i].fd, &wr) ? POLLOUT : 0));
	return n;
}

static void on_fixed(struct rt_worker *w, const struct pollfd *p)
{
	uint64_t count;
	int fds[64];
	size_t n;

	if (p->fd == rt_stop_fd)
		return;
	if (p->fd == w->notify_fd) {
		if (read(w->notify_fd, &count, sizeof(count)) < 0) {
			/* EAGAIN: the sockets were taken already */
		}
		while ((n = rt_worker_take(w, fds, 64)))
			for (size_t i = 0; i < n; i++)
				rt_worker_adopt(w, fds[i]);
		return;
	}
	bool again = true;

	for (unsigned i = 0; i < rt_worker_accept_burst(w) && again && rt_share_accepting(); i++)
		rt_worker_accept(w, p->fd, &again);
}

static void run(struct rt_worker *w, int (*wait)(struct set *), const char *what)
{
	struct set s = { 0 };

	rt_request_wake_loop(&w->t);
	while (rt_worker_running(w)) {
		int n;

		if (build(w, &s)) {
			rt_err(ENOMEM, "%s set", what);
			rt_fail();
			break;
		}
		n = wait(&s);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rt_err(errno, "%s", what);
			rt_fail();
			break;
		}
		for (size_t i = 0; i < s.fixed; i++)
			if (s.pfd[i].revents)
				on_fixed(w, &s.pfd[i]);
		for (size_t i = s.fixed; i < s.n; i++) {
			short r = s.pfd[i].revents, err = r & (POLLHUP | POLLERR | POLLNVAL);

			if (r)
				rt_worker_service(w, s.who[i], (r & POLLIN) || err, (r & POLLOUT) || err);
		}
		rt_request_wake_end(&w->t);
	}
	free(s.pfd);
	free(s.who);
}

void rt_net_poll_loop(struct rt_worker *w)
{
	run(w, wait_poll, "poll");
}

void rt_net_select_loop(struct rt_worker *w)
{
	run(w, wait_select, "select");
}
