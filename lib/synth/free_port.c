/* SPDX-License-Identifier: MIT */
/* A free port on 127.0.0.1, for a graph's tiers and the tuner's clones. */
#include <netinet/in.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

#include "synth_int.h"

bool synth_port_in(unsigned port, const unsigned *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == port)
			return true;
	return false;
}

/* The kernel's choice of an ephemeral port, retried while it is one to
 * avoid: the port is free when asked, and may be taken again later (the
 * runner checks again). */
unsigned synth_free_port(const unsigned *avoid, size_t n)
{
	for (int tries = 0; tries < 64; tries++) {
		struct sockaddr_in a = { .sin_family = AF_INET,
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t len = sizeof(a);
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		unsigned port = 0;

		if (fd < 0)
			return 0;
		if (!bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
		    !getsockname(fd, (struct sockaddr *)&a, &len))
			port = ntohs(a.sin_port);
		close(fd);
		if (port && !synth_port_in(port, avoid, n))
			return port;
	}
	return 0;
}
