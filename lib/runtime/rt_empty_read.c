/* SPDX-License-Identifier: MIT */
/*
 * Socket reads that find nothing (EAGAIN), at the model's rate per request
 * (rt_net.again_per_request): servers that read until EAGAIN make one
 * after most wake-ups. They are made on a loopback TCP connection of the
 * process's own that nobody writes to, so that each one owed comes out
 * EAGAIN whatever the clients do: made on the client's own socket, a read
 * found the next request as often as not (a fast or pipelining client's),
 * and the rate followed the client's speed, not the model.
 *
 * The read end is accepted on the clone's own port, at another loopback
 * address (127.0.0.2 and on; the clone listens on 127.0.0.1): a profiler
 * that meets it after it was made takes a connected socket on a port the
 * service does not listen on for one the service connected, a call to a
 * back end, and the empty reads left the clone's inbound calls. An
 * ephemeral port is the fallback when those are taken.
 */
#include "rt_int.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int empty_fd = -1;	/* the end read from, non-blocking */
static int peer_fd = -1;	/* the other end, kept open and silent */

/* A listener on 127.0.0.x:port, x from 2; an ephemeral port at last. */
static int listen_aside(struct sockaddr_in *sa)
{
	for (unsigned x = 2; x <= 10; x++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			return -1;
		sa->sin_addr.s_addr = htonl(x <= 9 ? INADDR_LOOPBACK + x - 1 : INADDR_LOOPBACK);
		sa->sin_port = x <= 9 ? htons(rt_opts.port) : 0;
		if (!bind(fd, (struct sockaddr *)sa, sizeof(*sa)) && !listen(fd, 1))
			return fd;
		close(fd);
	}
	return -1;
}

static void open_pair(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int lfd = listen_aside(&sa);

	if (lfd < 0 || getsockname(lfd, (struct sockaddr *)&sa, &len))
		goto fail;
	peer_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (peer_fd < 0 || connect(peer_fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto fail;
	empty_fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (empty_fd < 0)
		goto fail;
	close(lfd);
	return;
fail:
	rt_err(errno, "no loopback connection for the empty reads: they are left out");
	if (lfd >= 0)
		close(lfd);
	if (peer_fd >= 0)
		close(peer_fd);
	peer_fd = -1;
}

/* At start, before "ready": its connect() is then none of the
 * connections a profile of the clone sees it make (client_connections). */
void rt_empty_reads_open(void)
{
	if (rt_config.net.again_per_request > 0 || rt_config.net.accept_again_per_request > 0)
		pthread_once(&once, open_pair);
}

void rt_empty_reads(struct rt_thread *t, void *buf, size_t n)
{
	if (!(t->again_acc >= 1.0))
		return;
	pthread_once(&once, open_pair);
	while (t->again_acc >= 1.0) {
		t->again_acc -= 1.0;
		if (empty_fd >= 0)
			rt_sock_read(empty_fd, buf, n);
	}
}
