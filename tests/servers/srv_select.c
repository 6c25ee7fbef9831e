/* SPDX-License-Identifier: MIT */
/*
 * srv_select: one thread, select() over the listen socket and every
 * connection, the fd sets rebuilt each turn. Per request: 1 read,
 * 1 write, at most 1 select. Connections whose fd does not fit in an
 * fd_set (>= FD_SETSIZE) are refused.
 */
#include "gt_common.h"	/* first: it defines _GNU_SOURCE */

#include <sys/select.h>

/* Both sets and the connections they were built from. */
struct turn {
	fd_set rd, wr;
	int maxfd;
	struct gt_conn **snap;
	size_t n, cap;
};

/* Snapshot the set so each result stays tied to its connection while
 * handlers drop and add. */
static int prepare(struct turn *t, int lfd, const struct gt_connset *set)
{
	if (set->n > t->cap) {
		struct gt_conn **s = realloc(t->snap, 2 * set->n * sizeof *s);
		if (!s)
			return -1;
		t->snap = s;
		t->cap = 2 * set->n;
	}
	FD_ZERO(&t->rd);
	FD_ZERO(&t->wr);
	FD_SET(lfd, &t->rd);
	t->maxfd = lfd;
	t->n = set->n;
	for (size_t i = 0; i < set->n; i++) {
		struct gt_conn *c = set->v[i];
		t->snap[i] = c;
		FD_SET(c->fd, c->out_left ? &t->wr : &t->rd);
		if (c->fd > t->maxfd)
			t->maxfd = c->fd;
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
	if (fd >= FD_SETSIZE) {
		fprintf(stderr, "fd %d does not fit select(): refused\n", fd);
		close(fd);
		return;
	}
	gt_connset_adopt(set, fd);
}

static void dispatch(struct turn *t, int lfd, struct gt_connset *set)
{
	for (size_t i = 0; i < t->n; i++) {
		struct gt_conn *c = t->snap[i];
		if (!FD_ISSET(c->fd, &t->rd) && !FD_ISSET(c->fd, &t->wr))
			continue;
		if (gt_step(c) == GT_CLOSE)
			gt_connset_drop(set, c);
	}
	if (FD_ISSET(lfd, &t->rd))
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
	/* Stopping shuts lfd down, which select reports: the loop wakes. */
	gt_install_signals(gt_on_signal, o.max_seconds);
	gt_ready();
	while (!gt_stop) {
		if (prepare(&t, lfd, &set) < 0) {
			perror("realloc");
			break;
		}
		int n = select(t.maxfd + 1, &t.rd, &t.wr, NULL, NULL);
		if (n < 0 && errno != EINTR) {
			perror("select");
			break;
		}
		if (n > 0 && !gt_stop)
			dispatch(&t, lfd, &set);
	}
	free(t.snap);
	gt_connset_free(&set);
	gt_close_listen(lfd);
	gt_response_free();
	return 0;
}
