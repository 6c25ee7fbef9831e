/* SPDX-License-Identifier: MIT */
/*
 * The listen sockets, all on 127.0.0.1 and all opened before any process
 * or thread starts (so "ready" means every one exists): one shared socket,
 * or one SO_REUSEPORT socket per serving thread of every process.
 */
#include "rt_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#define BACKLOG 1024

static bool per_thread(void)
{
	return rt_config.reuseport && !rt_config.accept_dispatch && rt_config.io != RT_IO_BLOCKING;
}

unsigned rt_listen_count(unsigned processes)
{
	unsigned threads = rt_config.threads ? rt_config.threads : 1;

	return per_thread() ? processes * threads : 1;
}

/* Blocking accept (acceptor threads) or non-blocking (event loops, and
 * acceptors that wait in an event call first: processes woken together
 * on a shared socket go back to waiting when another took the client). */
static bool nonblocking(void)
{
	return (!rt_config.accept_dispatch && rt_config.io != RT_IO_BLOCKING) ||
	       rt_config.accept_wait == RT_ACCEPT_WAIT_EPOLL ||
	       rt_config.accept_wait == RT_ACCEPT_WAIT_POLL ||
	       rt_config.accept_wait == RT_ACCEPT_WAIT_SELECT;
}

static int open_one(uint16_t port, bool reuseport, int *fd)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, s, err;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblocking() ? SOCK_NONBLOCK : 0), 0);
	if (s < 0)
		return -errno;
	if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    (reuseport && setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one))) ||
	    bind(s, (struct sockaddr *)&sa, sizeof(sa)) || listen(s, BACKLOG)) {
		err = errno;
		close(s);
		return -err;
	}
	*fd = s;
	return 0;
}

/* SO_REUSEPORT sockets bind next to another program's: a plain socket
 * bound first finds a port in use. */
static int probe(uint16_t port)
{
	int fd, rc = open_one(port, false, &fd);

	if (!rc)
		close(fd);
	return rc;
}

int rt_listen_open(uint16_t port, unsigned n, int *fds)
{
	bool reuse = per_thread();
	int rc = reuse ? probe(port) : 0;
	unsigned i;

	for (i = 0; !rc && i < n; i++)
		if ((rc = open_one(port, reuse, &fds[i])))
			break;
	if (!rc)
		return 0;
	while (i--)		/* fds[0..i) were opened */
		close(fds[i]);
	if (rc == -EADDRINUSE) {
		rt_err(EADDRINUSE, "cannot listen on 127.0.0.1:%u", (unsigned)port);
		return -EADDRINUSE;
	}
	rt_err(-rc, "cannot listen on 127.0.0.1:%u", (unsigned)port);
	return -1;
}
