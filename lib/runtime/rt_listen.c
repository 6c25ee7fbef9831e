/* SPDX-License-Identifier: MIT */
/*
 * The listen sockets, all on 127.0.0.1 and all opened before any process
 * or thread starts (so "ready" means every one exists): one shared socket,
 * or one SO_REUSEPORT socket per serving thread of every process.
 * DITTO_LISTEN_ADDRESS (an IPv4 literal) moves them to another address:
 * a pod's Service reaches the pod's address, never its loopback.
 */
#include "rt_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
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

/* The address to listen on: 127.0.0.1 unless DITTO_LISTEN_ADDRESS says;
 * text for messages in buf. -EINVAL for a value that is no IPv4 literal
 * (refused, not replaced: a clone on another address than asked would
 * look up and serve no one). */
static int listen_addr(struct in_addr *a, char *buf, size_t len)
{
	const char *s = getenv("DITTO_LISTEN_ADDRESS");

	a->s_addr = htonl(INADDR_LOOPBACK);
	if (s && *s && inet_pton(AF_INET, s, a) != 1)
		return -EINVAL;
	inet_ntop(AF_INET, a, buf, (socklen_t)len);
	return 0;
}

static int open_one(uint16_t port, bool reuseport, int *fd)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	char text[INET_ADDRSTRLEN];
	int one = 1, s, err;

	if (listen_addr(&sa.sin_addr, text, sizeof(text)))
		return -EINVAL;
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
	char at[INET_ADDRSTRLEN];
	struct in_addr a;
	int rc;
	unsigned i;

	if (listen_addr(&a, at, sizeof(at))) {
		rt_err(EINVAL, "DITTO_LISTEN_ADDRESS=%.64s is not an IPv4 address",
		       getenv("DITTO_LISTEN_ADDRESS"));
		return -1;
	}
	rc = reuse ? probe(port) : 0;

	for (i = 0; !rc && i < n; i++)
		if ((rc = open_one(port, reuse, &fds[i])))
			break;
	if (!rc)
		return 0;
	while (i--)		/* fds[0..i) were opened */
		close(fds[i]);
	if (rc == -EADDRINUSE) {
		rt_err(EADDRINUSE, "cannot listen on %s:%u", at, (unsigned)port);
		return -EADDRINUSE;
	}
	rt_err(-rc, "cannot listen on %s:%u", at, (unsigned)port);
	return -1;
}
