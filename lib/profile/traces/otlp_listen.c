/* SPDX-License-Identifier: MIT */
/* The OTLP receiver's listening socket from "HOST:PORT". */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core_int.h"
#include "otlp_recv_int.h"

/* Split "HOST:PORT" or "[V6]:PORT"; host may be empty (loopback). */
static int split(const char *listen, char *host, size_t hostlen, char *port, size_t portlen)
{
	const char *colon, *h = listen, *he;

	if (listen[0] == '[') {
		const char *rb = strchr(listen, ']');

		if (!rb || rb[1] != ':')
			return -EINVAL;
		h = listen + 1;
		he = rb;
		colon = rb + 1;
	} else {
		colon = strrchr(listen, ':');
		if (!colon || memchr(listen, ':', (size_t)(colon - listen)))
			return -EINVAL;	/* a bare IPv6 address needs brackets */
		he = colon;
	}
	if ((size_t)(he - h) >= hostlen || strlen(colon + 1) >= portlen)
		return -EINVAL;
	memcpy(host, h, (size_t)(he - h));
	host[he - h] = '\0';
	strcpy(port, colon + 1);
	if (!port[0] || strspn(port, "0123456789") != strlen(port) || atol(port) > 65535)
		return -EINVAL;
	return 0;
}

static bool loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return false;
}

static int bind_one(const struct addrinfo *ai, int *fd)
{
	int one = 1, s, err;

	s = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
	if (s < 0)
		return -errno;
	/* SO_REUSEADDR: a restarted profile may bind while old connections
	 * sit in TIME_WAIT; on Linux it never shares a port with a live
	 * listener, so a taken port still fails with EADDRINUSE. */
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ai->ai_family == AF_INET6)
		setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(s, ai->ai_addr, ai->ai_addrlen) < 0 || listen(s, 128) < 0) {
		err = -errno;
		close(s);
		return err;
	}
	*fd = s;
	return 0;
}

static void bound_name(int fd, uint16_t *port, char *name, size_t namelen)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";

	*port = 0;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		return;
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		*port = ntohs(in->sin_port);
		snprintf(name, namelen, "%s:%u", host, *port);
	} else if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		*port = ntohs(in6->sin6_port);
		snprintf(name, namelen, "[%s]:%u", host, *port);
	}
}

int otlp_listen(const char *listen, bool allow_remote, int *fd, uint16_t *port, char *name,
		size_t namelen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	char host[256], portstr[8];
	int err, gai;

	if (split(listen, host, sizeof(host), portstr, sizeof(portstr)))
		return ditto_err(-EINVAL,
				 "OTLP receiver: \"%s\" is not HOST:PORT (IPv6 as [ADDR]:PORT, port 0-65535)",
				 listen);
	gai = getaddrinfo(host[0] ? host : "127.0.0.1", portstr, &hints, &res);
	if (gai)
		return ditto_err(-EINVAL, "OTLP receiver: %s: %s", listen, gai_strerror(gai));
	/* No authentication and no TLS: anyone who reaches the port can
	 * write graph edges into the model (and spend its memory up to the
	 * bounds). Loopback only, unless the caller says otherwise. */
	for (ai = res; ai; ai = ai->ai_next) {
		if (!allow_remote && !loopback(ai->ai_addr)) {
			freeaddrinfo(res);
			return ditto_err(-EPERM,
					 "OTLP receiver: %s is not a loopback address; the receiver has no authentication, so listening beyond this host needs allow_remote (--otlp-allow-remote)",
					 listen);
		}
	}
	err = -EADDRNOTAVAIL;
	for (ai = res; ai; ai = ai->ai_next) {
		err = bind_one(ai, fd);
		if (!err)
			break;
	}
	freeaddrinfo(res);
	if (err == -EADDRINUSE)
		return ditto_err(err,
				 "OTLP receiver: %s is already in use (a collector or another profile listening there?); choose another port, or port 0 for any free one",
				 listen);
	if (err == -EACCES)
		return ditto_err(err, "OTLP receiver: %s: ports below 1024 need CAP_NET_BIND_SERVICE",
				 listen);
	if (err)
		return ditto_err(err, "OTLP receiver: cannot listen on %s: %s", listen, strerror(-err));
	bound_name(*fd, port, name, namelen);
	return 0;
}
