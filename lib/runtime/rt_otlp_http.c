/* SPDX-License-Identifier: MIT */
/*
 * Where the spans go and how: a plain http:// URL (a collector's OTLP/HTTP
 * receiver, or libditto's own during a profile), one keep-alive
 * connection, a POST per batch with its Content-Length, the answer's
 * status read and its body skipped. Bounded everywhere: a receiver that
 * answers slowly, wrongly or never costs the exporter thread a timeout,
 * never a serving thread anything.
 */
#include "rt_int.h"
#include "rt_otlp.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define HEAD_MAX 8192	/* an answer's head, at most */

static int copy_part(char *dst, size_t cap, const char *p, size_t n)
{
	if (n == 0 || n >= cap)
		return -1;
	memcpy(dst, p, n);
	dst[n] = '\0';
	return 0;
}

int rt_otlp_url_parse(const char *url, struct rt_otlp_url *out, const char **why)
{
	const char *host = url + 7, *end, *colon, *path;

	memset(out, 0, sizeof(*out));
	if (strncmp(url, "http://", 7) != 0)
		return *why = "not an http:// URL (https is not supported)", -1;
	path = strchr(host, '/');
	end = path ? path : host + strlen(host);
	if (*host == '[') {	/* [v6]:port */
		const char *close = memchr(host, ']', (size_t)(end - host));

		if (!close || copy_part(out->host, sizeof(out->host), host + 1,
					(size_t)(close - host - 1)))
			return *why = "bad IPv6 address", -1;
		colon = close[1] == ':' ? close + 1 : NULL;
		if (!colon && close + 1 != end)
			return *why = "junk after the address", -1;
	} else {
		colon = memchr(host, ':', (size_t)(end - host));
		if (copy_part(out->host, sizeof(out->host), host,
			      (size_t)((colon ? colon : end) - host)))
			return *why = "no host, or one too long", -1;
	}
	if (!colon)
		strcpy(out->port, "80");
	else if (copy_part(out->port, sizeof(out->port), colon + 1, (size_t)(end - colon - 1)) ||
		 strspn(out->port, "0123456789") != strlen(out->port) || atoi(out->port) < 1 ||
		 atoi(out->port) > 65535)
		return *why = "bad port", -1;
	if (!path || !path[1])
		path = "/v1/traces";
	if (strlen(path) >= sizeof(out->path) || strpbrk(path, " \r\n\t"))
		return *why = "bad path", -1;
	strcpy(out->path, path);
	/* A host goes into the request's Host line as it is. */
	if (strpbrk(out->host, " \r\n\t/?#@"))
		return *why = "bad host", -1;
	return 0;
}

static int connect_to(const struct rt_otlp_url *u, int timeout_ms)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL, *a;
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	int fd = -1, one = 1;

	if (getaddrinfo(u->host, u->port, &hints, &res))
		return -1;
	for (a = res; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (connect(fd, a->ai_addr, a->ai_addrlen)) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Content-Length of a head ("content-length:" in any case); -1: none. */
static long head_length(const char *head)
{
	for (const char *p = head; (p = strchr(p, '\n')); ) {
		p++;
		if (strncasecmp(p, "content-length:", 15) == 0)
			return strtol(p + 15, NULL, 10);
	}
	return -1;
}

/* Reads the answer: its status, its body skipped (kept-alive only with a
 * Content-Length: otherwise the caller closes). */
static int read_answer(int fd, bool *keep)
{
	char head[HEAD_MAX + 1], *end = NULL;
	size_t len = 0;
	long body, extra;
	int status = -1;

	*keep = false;
	while (!end && len < HEAD_MAX) {
		ssize_t r = recv(fd, head + len, HEAD_MAX - len, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		len += (size_t)r;
		head[len] = '\0';
		end = strstr(head, "\r\n\r\n");
	}
	if (!end || sscanf(head, "HTTP/1.%*d %d", &status) != 1)
		return -1;
	body = head_length(head);
	extra = (long)len - (end + 4 - head);
	for (char sink[4096]; body >= 0 && extra < body; ) {
		ssize_t r = recv(fd, sink, sizeof(sink), 0);

		if (r <= 0)
			return status;
		extra += r;
	}
	*keep = body >= 0 && extra == body;
	return status;
}

int rt_otlp_post(const struct rt_otlp_url *u, int *fd, const char *body, size_t len,
		 int timeout_ms)
{
	char head[1024];
	int n, status;
	bool keep;

	for (int attempt = 0; attempt < 2; attempt++) {
		bool fresh = *fd < 0;

		if (fresh && (*fd = connect_to(u, timeout_ms)) < 0)
			return -1;
		n = snprintf(head, sizeof(head),
			     "POST %s HTTP/1.1\r\nHost: %s:%s\r\nContent-Type: application/json\r\n"
			     "Content-Length: %zu\r\n\r\n", u->path, u->host, u->port, len);
		if (n > 0 && (size_t)n < sizeof(head) && !send_all(*fd, head, (size_t)n) &&
		    !send_all(*fd, body, len) && (status = read_answer(*fd, &keep)) >= 0) {
			if (!keep) {
				close(*fd);
				*fd = -1;
			}
			return status;
		}
		close(*fd);
		*fd = -1;
		/* A kept-alive connection the receiver closed meanwhile: once
		 * more on a fresh one. */
		if (fresh)
			break;
	}
	return -1;
}
