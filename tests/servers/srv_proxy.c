/* SPDX-License-Identifier: MIT */
/*
 * srv_proxy: srv_blocking (thread per connection) that, for every request,
 * makes one call to a back end (another ground-truth server, --backend
 * PORT on 127.0.0.1) before it answers: the request is forwarded as a
 * frame of the same length, the back end's whole answer read, then the
 * client gets this server's own --response-bytes answer. Each serving
 * thread connects to the back end once, when its connection's first
 * request arrives, and keeps that connection. Per request on the serving
 * thread: client side 1 read, 1 write; back-end side 1 write, 1 read (more
 * when the back end's answer arrives in pieces).
 */
#define GT_SERVE(c) proxy_serve(c)
#define GT_OWN_OPTIONS(argc, argv) proxy_options(argc, argv)

#include "gt_common.h"

static unsigned backend_port;

/* Takes --backend PORT out of argv; gt_parse() reads the rest. */
static void proxy_options(int *argc, char **argv)
{
	int out = 1;

	for (int i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--backend") == 0 && i + 1 < *argc) {
			backend_port = (unsigned)gt_number(argv[0], argv[++i], 1, 65535);
			continue;
		}
		argv[out++] = argv[i];
	}
	*argc = out;
	argv[out] = NULL;
	if (!backend_port) {
		fprintf(stderr, "%s: --backend PORT is required\n", argv[0]);
		exit(GT_EXIT_USAGE);
	}
}

static int backend_connect(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)backend_port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		perror("srv_proxy: connect to the back end");
		close(fd);
		return -1;
	}
	gt_nodelay(fd);
	return fd;
}

/* Reads until the back end's whole frame has come: the header is kept at
 * the start of buf, the payload overwrites itself after it. One read
 * usually takes all of it. */
static int backend_answer(int fd, unsigned char *buf, size_t cap)
{
	size_t have = 0, whole = 4;

	while (have < whole) {
		size_t at = have < 4 ? have : 4;
		ssize_t n = read(fd, buf + at, cap - at);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		have += (size_t)n;
		if (whole == 4 && have >= 4)
			whole = 4 + (size_t)gt_get_be32(buf);
	}
	return have == whole ? 0 : -1;
}

/* One call: the request's length forwarded in one write, the answer read. */
static int backend_call(int fd, uint32_t len, unsigned char *buf, size_t cap)
{
	gt_put_be32(buf, len);
	memset(buf + 4, 'q', len);
	if (gt_write_all(fd, buf, 4 + (size_t)len) < 0)
		return -1;
	return backend_answer(fd, buf, cap);
}

static void proxy_serve(struct gt_conn *c)
{
	size_t cap = 4 + GT_MAX_REQUEST;
	unsigned char *buf = malloc(cap);
	int bfd = -1;

	while (buf) {
		uint32_t len = c->have >= 4 ? gt_get_be32(c->buf) : 0;
		int f = gt_take_frame(c);

		if (f < 0)
			break;
		if (f == 0) {
			if (gt_read_more(c) <= 0)
				break;
			continue;
		}
		if (bfd < 0 && (bfd = backend_connect()) < 0)
			break;
		if (backend_call(bfd, len, buf, cap) < 0 || gt_write_response(c->fd) < 0)
			break;
	}
	if (bfd >= 0)
		close(bfd);
	free(buf);
}

#include "srv_blocking.c"
