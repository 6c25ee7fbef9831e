/* SPDX-License-Identifier: MIT */
/*
 * srv_poll: one thread, poll() over the listen socket and every
 * connection, the pollfd array rebuilt each turn. Per request: 1 read,
 * 1 write, at most 1 poll.
 */
#include "gt_common.h"	/* first: it defines _GNU_SOURCE */

#include <poll.h>

/* pfd[0] is the listen socket, pfd[i + 1] belongs to snap[i]. */
struct turn {
	struct pollfd *pfd;
	struct gt_conn **snap;
	size_t cap;
};

/* Snapshot the set: handlers may drop or add connections while the
 * results are walked, the snapshot keeps each result tied to its conn. */
static int prepare(struct turn *t, int lfd, const struct gt_connset *set)
{
	if (set->n + 1 > t->cap) {
		size_t cap = 2 * (set->n + 1);
		struct pollfd *p = realloc(t->pfd, cap * sizeof *p);
		if (p)
			t->pfd = p;
		struct gt_conn **s = realloc(t->snap, cap * sizeof *s);
		if (s)
			t->snap = s;
		if (!p || !s)
			return -1;
		t->cap = cap;
	}
	t->pfd[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
	for (size_t i = 0; i < set->n; i++) {
		struct gt_conn *c = set->v[i];
		t->snap[i] = c;
		t->pfd[i + 1] = (struct pollfd){ .fd = c->fd, .events = c->out_left ? POLLOUT : POLLIN };
	}
	return 0;
}

static void on_listen(int lfd, struct gt_connset *set)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0) {
		gt_accept_error();
		return;
	}
	gt_connset_adopt(set, fd);
}

/* Serve the ready connections of one turn: the nconn of the snapshot,
 * then the listen socket, so a new arrival waits for the next turn. */
static void dispatch(struct turn *t, size_t nconn, int lfd, struct gt_connset *set)
{
	for (size_t i = 0; i < nconn; i++) {
		if (!t->pfd[i + 1].revents)
			continue;
		if (gt_step(t->snap[i]) == GT_CLOSE)
			gt_connset_drop(set, t->snap[i]);
	}
	if (t->pfd[0].revents)
		on_listen(lfd, set);
}

int main(int argc, char **argv)
{
	struct gt_opts o;
	struct gt_connset set = { 0 };
	struct turn t = { 0 };

	gt_parse(argc, argv, &o, 0);
	gt_response_init(o.response_bytes);
	int lfd = gt_listen(o.port, 1);
	/* Stopping shuts lfd down, which poll reports: the loop wakes. */
	gt_install_signals(gt_on_signal, o.max_seconds);
	gt_ready();
	while (!gt_stop) {
		size_t nconn = set.n;
		if (prepare(&t, lfd, &set) < 0) {
			perror("realloc");
			break;
		}
		int n = poll(t.pfd, nconn + 1, -1);
		if (n < 0 && errno != EINTR) {
			perror("poll");
			break;
		}
		if (n > 0 && !gt_stop)
			dispatch(&t, nconn, lfd, &set);
	}
	free(t.pfd);
	free(t.snap);
	gt_connset_free(&set);
	gt_close_listen(lfd);
	gt_response_free();
	return 0;
}
