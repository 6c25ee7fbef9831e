/* SPDX-License-Identifier: MIT */
/*
 * srv_busypoll: one thread, every socket non-blocking, and no readiness
 * API at all: it spins over accept4() and read() and takes EAGAIN as
 * "nothing yet". It never sleeps, so it burns one core while it runs.
 * Per request: 1 successful read, 1 write, and many EAGAIN reads and
 * accepts (as many as loop turns while the client thinks).
 */
#include "gt_common.h"

/* Take at most one new connection per turn, like a naive poller would. */
static void try_accept(int lfd, struct gt_connset *set)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0) {
		gt_accept_error();
		return;
	}
	gt_connset_adopt(set, fd);
}

/* One read (or pending write) attempt per connection per turn. Walk
 * backwards: a dropped connection's slot is refilled from the end, which
 * this turn has already visited. */
static void poll_all(struct gt_connset *set)
{
	for (size_t i = set->n; i-- > 0;) {
		struct gt_conn *c = set->v[i];
		if (gt_step(c) == GT_CLOSE)
			gt_connset_drop(set, c);
	}
}

int main(int argc, char **argv)
{
	struct gt_opts o;
	struct gt_connset set = { 0 };

	gt_parse(argc, argv, &o, 0);
	gt_response_init(o.response_bytes);
	int lfd = gt_listen(o.port, 1);
	gt_install_signals(gt_on_signal, o.max_seconds);
	gt_ready();
	while (!gt_stop) {
		try_accept(lfd, &set);
		poll_all(&set);
	}
	gt_connset_free(&set);
	gt_close_listen(lfd);
	gt_response_free();
	return 0;
}
