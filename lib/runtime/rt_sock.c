/* SPDX-License-Identifier: MIT */
/*
 * Connection reads and writes through the system calls the model saw
 * (read, recvfrom, readv, recvmsg; write, sendto, writev, sendmsg), with
 * its read size and iovec count. Unknown numbers fall back to read/write.
 * Also the socket options the model's connections had.
 */
#include "rt_int.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define WRITE_IOV_MAX 64

size_t rt_sock_read_size(void)
{
	return rt_config.net.read_size ? rt_config.net.read_size : RT_READ_SIZE_DEFAULT;
}

static void sockopts_at(int fd, enum rt_sockopt_when when)
{
	for (unsigned i = 0; i < rt_config.nsockopts; i++) {
		const struct rt_sockopt *o = &rt_config.sockopts[i];

		if (o->when == when)
			setsockopt(fd, o->level, o->name, &o->value, sizeof(o->value));
	}
}

/* The model's options, not always TCP_NODELAY: a server that leaves Nagle
 * on and answers in two writes waits for the client's delayed ACK, and
 * its clone must too. */
void rt_sock_setup(int fd)
{
	sockopts_at(fd, RT_SOCKOPT_ACCEPT);
}

void rt_sock_response_begin(int fd)
{
	sockopts_at(fd, RT_SOCKOPT_BEFORE_RESPONSE);
}

void rt_sock_response_end(int fd)
{
	sockopts_at(fd, RT_SOCKOPT_AFTER_RESPONSE);
}

ssize_t rt_sock_read(int fd, void *buf, size_t n)
{
	struct iovec iov = { buf, n };
	struct msghdr msg;

	switch (rt_config.net.read_nr) {
	case SYS_recvfrom:
		return recvfrom(fd, buf, n, 0, NULL, NULL);
	case SYS_readv:
		return readv(fd, &iov, 1);
	case SYS_recvmsg:
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		return recvmsg(fd, &msg, 0);
	default:
		return read(fd, buf, n);
	}
}

/* Splits [p, p + n) into the model's iovec count (at least one). */
static int split(const char *p, size_t n, struct iovec *iov)
{
	unsigned k = rt_config.net.write_iov ? rt_config.net.write_iov : 1;
	size_t part;

	k = k > WRITE_IOV_MAX ? WRITE_IOV_MAX : k;
	k = n < k ? (n ? (unsigned)n : 1) : k;
	part = n / k;
	for (unsigned i = 0; i < k; i++) {
		iov[i].iov_base = (char *)p + i * part;
		iov[i].iov_len = i + 1 < k ? part : n - i * part;
	}
	return (int)k;
}

ssize_t rt_sock_write(int fd, const char *p, size_t n)
{
	struct iovec iov[WRITE_IOV_MAX];
	struct msghdr msg;

	switch (rt_config.net.write_nr) {
	case SYS_sendto:
		return sendto(fd, p, n, MSG_NOSIGNAL, NULL, 0);
	case SYS_writev:
		return writev(fd, iov, split(p, n, iov));
	case SYS_sendmsg:
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = iov;
		msg.msg_iovlen = (size_t)split(p, n, iov);
		return sendmsg(fd, &msg, MSG_NOSIGNAL);
	default:
		return write(fd, p, n);
	}
}

/* Bytes of a response of len the model sends from a file: its end, never
 * its first byte (the framing's header stays in the writes). */
size_t rt_sock_sendfile_bytes(size_t len)
{
	double share = rt_config.sendfile.share;
	size_t n;

	if (!(share > 0) || rt_scratch_fd < 0 || len < 2)
		return 0;
	n = (size_t)((double)len * (share < 1 ? share : 1));
	return n < len ? n : len - 1;
}

unsigned rt_sock_sendfile_calls(void)
{
	double k = rt_config.sendfile.per_request;

	if (!(k >= 1))
		return 1;
	return k > 1024 ? 1024 : (unsigned)(k + 0.5);
}

/* n bytes of the scratch file's start to fd; 0 when the file has fewer
 * (the caller writes them instead). */
ssize_t rt_sock_sendfile(int fd, size_t n)
{
	off_t off = 0;
	uint64_t have = rt_scratch_size;

	if (n > have)
		n = (size_t)have;
	if (!n)
		return 0;
	return sendfile(fd, rt_scratch_fd, &off, n);
}
