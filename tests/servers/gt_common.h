/* SPDX-License-Identifier: MIT */
/*
 * Shared pieces of the ground-truth servers: options, the listen socket,
 * the length-prefixed protocol and a clean stop on SIGTERM/SIGINT or after
 * --max-seconds. Each server includes this once and keeps its I/O model
 * (the part a test wants to recognise) in its own file.
 *
 * Protocol: a request is a 4-byte big-endian length L and L bytes; the
 * answer is a 4-byte big-endian length R and R bytes, R fixed per run.
 * A request is read with one read() of up to 4 + GT_MAX_REQUEST bytes, so
 * a frame that has fully arrived costs exactly one read; a response is one
 * write() of 4 + R bytes (more only when the socket buffer is full).
 */
#ifndef GT_COMMON_H
#define GT_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

/* Largest request payload accepted; also sizes the one read per request. */
#define GT_MAX_REQUEST (1u << 20)
/* Largest response payload, to keep a typo from allocating gigabytes. */
#define GT_MAX_RESPONSE (64u << 20)
/* Upper bound of --threads: enough for any test, small enough for arrays. */
#define GT_MAX_THREADS 256

/* Exit status when the port is taken, so a test can retry another port. */
#define GT_EXIT_ADDRINUSE 3
#define GT_EXIT_USAGE 2

struct gt_opts {
	unsigned port;
	unsigned threads;		/* 0: the server takes no --threads */
	size_t response_bytes;
	unsigned max_seconds;
	unsigned long work;		/* steps of gt_work() per request */
	unsigned long work_after;	/* steps of gt_work_after() per response */
	size_t work_bytes;		/* its table */
	unsigned long slow_permille;	/* requests in 1000 that work slow_times as long */
	unsigned long slow_times;
};

/* ------------------------------------------------------------------ */
/* Known CPU work per request (--work N --work-bytes B)                 */
/* ------------------------------------------------------------------ */

/* N xorshift steps; each branches on a random bit (taken half the time,
 * unpredictable) and on one side reads a random byte of a B-byte table:
 * a request costs about 10 N instructions, N / 2 random branches and
 * N / 2 reads over B bytes, for the tuner's tests to aim at. */
static unsigned long gt_work_steps;
static size_t gt_work_bytes = 1;
static unsigned char *gt_work_table;
static __thread uint64_t gt_work_x = 88172645463325252ull;
static volatile uint64_t gt_work_sink;

static unsigned long gt_work_after_steps;
static unsigned long gt_slow_permille, gt_slow_times = 1;
static unsigned long gt_requests;	/* whole requests read, this thread's or all */
static int gt_split_reads;	/* --split-reads: gt_read_more() */

static inline void gt_work_n(unsigned long steps)
{
	uint64_t x = gt_work_x, acc = 0;

	for (unsigned long i = 0; i < steps; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (x & 1)
			acc += gt_work_table[(x >> 8) % gt_work_bytes];
		else
			acc ^= x;
	}
	gt_work_x = x;
	gt_work_sink = acc;
}

/* --slow-share P --slow-times T: P requests in 1000, drawn at random,
 * work T times as long: a tail of slow requests (a server whose rare
 * requests miss a cache or take a lock), for the graph tuner's p99 row. */
static inline void gt_work(void)
{
	uint64_t x = gt_work_x;

	if (!gt_slow_permille) {	/* as before the option: the same steps */
		gt_work_n(gt_work_steps);
		return;
	}
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	gt_work_x = x;
	gt_work_n(x % 1000 < gt_slow_permille ? gt_work_steps * gt_slow_times : gt_work_steps);
}

/* Work after a response is written (--work-after N), as a server that
 * logs or cleans up once it has answered: srv_blocking and
 * srv_futex_pool do it. */
static inline void gt_work_after(void)
{
	gt_work_n(gt_work_after_steps);
}

static inline void gt_work_init(const struct gt_opts *o)
{
	gt_work_after_steps = o->work_after;
	gt_slow_permille = o->slow_permille;
	gt_slow_times = o->slow_times ? o->slow_times : 1;
	if (!o->work && !o->work_after)
		return;
	gt_work_steps = o->work;
	gt_work_bytes = o->work_bytes ? o->work_bytes : 1;
	gt_work_table = malloc(gt_work_bytes);
	if (!gt_work_table) {
		perror("malloc");
		exit(1);
	}
	for (size_t i = 0; i < gt_work_bytes; i++)
		gt_work_table[i] = (unsigned char)i;
}

/* Set by the signal handler; every loop checks it. */
static volatile sig_atomic_t gt_stop;
/* Sockets the handler shuts down to wake a thread blocked on them. */
static volatile int gt_listen_fd = -1;
static volatile int gt_conn_fd = -1;

/* The one response of this run, header included, built once. */
static unsigned char *gt_resp;
static size_t gt_resp_len;

static inline uint32_t gt_get_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline void gt_put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* ------------------------------------------------------------------ */
/* Options                                                              */
/* ------------------------------------------------------------------ */

static inline void gt_usage(const char *prog, int threads)
{
	fprintf(stderr, "usage: %s --port P%s [--response-bytes R] [--max-seconds S]"
		" [--work N] [--work-bytes B] [--work-after N] [--split-reads]\n"
		"       [--slow-share PERMILLE --slow-times T]\n",
		prog, threads ? " [--threads N]" : "");
	exit(GT_EXIT_USAGE);
}

/* Parse a decimal in [lo, hi] or die with usage: options come from tests,
 * and a silently clamped value would make a wrong ground truth. */
static inline unsigned long gt_number(const char *prog, const char *s,
				      unsigned long lo, unsigned long hi)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi) {
		fprintf(stderr, "%s: bad number '%s' (want %lu..%lu)\n", prog, s, lo, hi);
		exit(GT_EXIT_USAGE);
	}
	return v;
}

/* default_threads 0 means the server has no thread count to set. */
static inline void gt_parse(int argc, char **argv, struct gt_opts *o,
			    unsigned default_threads)
{
	static const struct option longs[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "threads", required_argument, NULL, 't' },
		{ "response-bytes", required_argument, NULL, 'r' },
		{ "max-seconds", required_argument, NULL, 's' },
		{ "work", required_argument, NULL, 'w' },
		{ "work-bytes", required_argument, NULL, 'b' },
		{ "work-after", required_argument, NULL, 'a' },
		{ "split-reads", no_argument, NULL, 'S' },
		{ "slow-share", required_argument, NULL, 'l' },
		{ "slow-times", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *prog = argv[0];
	int c;

	*o = (struct gt_opts){ .threads = default_threads, .response_bytes = 128,
			       .max_seconds = 120 };
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 'p': o->port = (unsigned)gt_number(prog, optarg, 1, 65535); break;
		case 't':
			if (!default_threads)
				gt_usage(prog, 0);
			o->threads = (unsigned)gt_number(prog, optarg, 1, GT_MAX_THREADS);
			break;
		case 'r': o->response_bytes = gt_number(prog, optarg, 0, GT_MAX_RESPONSE); break;
		case 's': o->max_seconds = (unsigned)gt_number(prog, optarg, 1, 86400); break;
		case 'w': o->work = gt_number(prog, optarg, 0, 100000000); break;
		case 'b': o->work_bytes = gt_number(prog, optarg, 1, 1ul << 30); break;
		case 'a': o->work_after = gt_number(prog, optarg, 0, 100000000); break;
		case 'S': gt_split_reads = 1; break;
		case 'l': o->slow_permille = gt_number(prog, optarg, 0, 1000); break;
		case 'T': o->slow_times = gt_number(prog, optarg, 1, 1000); break;
		default: gt_usage(prog, default_threads != 0);
		}
	}
	if (optind != argc || !o->port)
		gt_usage(prog, default_threads != 0);
	if (o->slow_permille && !o->work) {
		fprintf(stderr, "%s: --slow-share needs --work (the work it makes longer)\n", prog);
		exit(GT_EXIT_USAGE);
	}
	gt_work_init(o);
}

/* ------------------------------------------------------------------ */
/* Start and stop                                                       */
/* ------------------------------------------------------------------ */

/* Bound to 127.0.0.1 only: these servers answer anyone who connects. */
static inline int gt_listen(unsigned port, int nonblock)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
	int one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

	if (fd < 0) {
		perror("socket");
		exit(1);
	}
	/* Lets a test reuse a port still in TIME_WAIT from a previous run. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		int e = errno;
		fprintf(stderr, "bind 127.0.0.1:%u: %s\n", port, strerror(e));
		exit(e == EADDRINUSE ? GT_EXIT_ADDRINUSE : 1);
	}
	if (listen(fd, 1024) < 0) {
		perror("listen");
		exit(1);
	}
	gt_listen_fd = fd;
	return fd;
}

/* Runs in whichever thread the signal lands on. Shutting the listen socket
 * down wakes a blocked accept() (it fails with EINVAL) and makes the socket
 * readable for epoll/poll/select, so no thread can miss the stop between
 * testing gt_stop and blocking. The same for a connection being served
 * by a blocking prefork child. */
__attribute__((unused)) static void gt_on_signal(int sig)
{
	int saved = errno;
	int lfd = gt_listen_fd, cfd = gt_conn_fd;

	(void)sig;
	gt_stop = 1;
	if (lfd >= 0)
		shutdown(lfd, SHUT_RDWR);
	if (cfd >= 0)
		shutdown(cfd, SHUT_RDWR);
	errno = saved;
}

/* No SA_RESTART: a blocking call in the main thread returns EINTR. The
 * alarm is the guard against a test that forgets to stop its server. */
static inline void gt_install_signals(void (*handler)(int), unsigned max_seconds)
{
	struct sigaction sa = { .sa_handler = handler };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);	/* a client gone mid-write is an error, not a death */
	alarm(max_seconds);
}

/* Helper threads run with the stop signals blocked so that the main thread
 * is the one interrupted; returns the mask to restore afterwards. */
static inline sigset_t gt_block_signals(void)
{
	sigset_t set, old;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	return old;
}

static inline void gt_ready(void)
{
	fputs("ready\n", stdout);
	fflush(stdout);
}

/* Build the response once: every request gets the same bytes. */
static inline void gt_response_init(size_t r)
{
	gt_resp_len = 4 + r;
	gt_resp = malloc(gt_resp_len);
	if (!gt_resp) {
		perror("malloc");
		exit(1);
	}
	gt_put_be32(gt_resp, (uint32_t)r);
	for (size_t i = 0; i < r; i++)
		gt_resp[4 + i] = (unsigned char)('a' + i % 26);
}

static inline void gt_response_free(void)
{
	free(gt_resp);
	gt_resp = NULL;
}

/* Close the listen socket, first hiding it from the signal handler. */
static inline void gt_close_listen(int fd)
{
	gt_listen_fd = -1;
	close(fd);
}

/* Report accept() failures that are not the expected ones; quiet when
 * there is simply nothing yet. EINVAL means the listen socket was shut
 * down: a stop, possibly by a sibling prefork worker sharing the socket
 * whose signal came first, so take it as our own stop too. */
static inline void gt_accept_error(void)
{
	if (errno == EINVAL)
		gt_stop = 1;
	if (gt_stop)
		return;
	switch (errno) {
	case EAGAIN:
#if EWOULDBLOCK != EAGAIN
	case EWOULDBLOCK:
#endif
	case EINTR:
	case ECONNABORTED:
	case EPROTO:
		return;
	default:
		perror("accept");
	}
}

/* ------------------------------------------------------------------ */
/* Connections and the protocol                                         */
/* ------------------------------------------------------------------ */

struct gt_conn {
	int fd;
	int aux;		/* server's own use: "waiting for output" */
	size_t idx;		/* position in a gt_connset */
	size_t have;		/* bytes of input in buf */
	size_t out_left;	/* bytes of the current response not yet sent */
	unsigned char buf[4 + GT_MAX_REQUEST];
};

/* Disable Nagle so a response leaves at once: each write is one reply. */
static inline void gt_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Large but lazily backed: only the pages a request touches get memory. */
static inline struct gt_conn *gt_conn_new(int fd)
{
	struct gt_conn *c = malloc(sizeof *c);

	if (!c) {
		perror("malloc");
		return NULL;
	}
	/* Without it a pipelined reply waits for the client's delayed ACK
	 * (srv_nagle wants exactly that). */
#ifndef GT_KEEP_NAGLE
	if (fd >= 0)
		gt_nodelay(fd);
#endif
	c->fd = fd;
	c->aux = 0;
	c->idx = 0;
	c->have = 0;
	c->out_left = 0;
	return c;
}

/* If buf starts with a complete frame drop it and return 1; 0 when more
 * bytes are needed; -1 when the header asks for more than we accept. */
static inline int gt_take_frame(struct gt_conn *c)
{
	if (c->have < 4)
		return 0;
	uint32_t len = gt_get_be32(c->buf);
	if (len > GT_MAX_REQUEST)
		return -1;
	size_t whole = 4 + (size_t)len;
	if (c->have < whole)
		return 0;
	c->have -= whole;
	if (c->have)	/* a pipelining client: keep the next frame's bytes */
		memmove(c->buf, c->buf + whole, c->have);
	gt_work();
	gt_requests++;
	return 1;
}

/* One read for whatever has arrived, up to a whole maximal frame; with
 * --split-reads the header's 4 bytes, then the rest of the frame (as
 * MariaDB reads a packet: two reads per request). */
static inline ssize_t gt_read_more(struct gt_conn *c)
{
	size_t room = sizeof c->buf - c->have;
	ssize_t n;

	if (gt_split_reads) {
		long long want = c->have < 4 ? 4 - (long long)c->have
					     : 4 + (long long)gt_get_be32(c->buf) - (long long)c->have;

		if (want > 0 && (size_t)want < room)
			room = (size_t)want;
	}
	do
		n = read(c->fd, c->buf + c->have, room);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		c->have += (size_t)n;
	return n;
}

/* Blocking sockets: loop only on a short write. */
static inline int gt_write_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Writes per response of the blocking servers: srv_nagle answers in 2. */
#ifndef GT_WRITES
#define GT_WRITES 1
#endif

#ifdef GT_SENDFILE
/* srv_sendfile: the header is written, the payload sent from this file
 * (sparse, unlinked; srv_client counts the payload's bytes, never reads
 * them). */
static int gt_file_fd = -1;

__attribute__((constructor)) static void gt_file_open(void)
{
	char path[] = "/tmp/gt-sendfile.XXXXXX";

	gt_file_fd = mkstemp(path);
	if (gt_file_fd < 0 || unlink(path) || ftruncate(gt_file_fd, GT_MAX_RESPONSE)) {
		perror("srv_sendfile: payload file");
		exit(1);
	}
}

static inline int gt_write_response(int fd)
{
	size_t left = gt_resp_len - 4;
	off_t off = 0;

	if (gt_write_all(fd, gt_resp, 4) < 0)
		return -1;
	while (left) {
		ssize_t n = sendfile(fd, gt_file_fd, &off, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		left -= (size_t)n;
	}
	return 0;
}
#else
static inline int gt_write_response(int fd)
{
	size_t part = gt_resp_len / GT_WRITES;

	for (unsigned i = 0; i + 1 < GT_WRITES; i++)
		if (gt_write_all(fd, gt_resp + i * part, part) < 0)
			return -1;
	return gt_write_all(fd, gt_resp + (GT_WRITES - 1) * part,
			    gt_resp_len - (GT_WRITES - 1) * part);
}
#endif

/* Serve a blocking connection until the peer closes or errs: answer every
 * complete frame, then read again. */
static inline void gt_serve_blocking(struct gt_conn *c)
{
	for (;;) {
		int f = gt_take_frame(c);
		if (f < 0)
			return;
		if (f > 0) {
			if (gt_write_response(c->fd) < 0)
				return;
			gt_work_after();
			continue;
		}
		if (gt_read_more(c) <= 0)
			return;
	}
}

/* What a non-blocking connection waits for next. */
enum gt_state { GT_WANT_READ, GT_WANT_WRITE, GT_CLOSE };

static inline int gt_again(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK;
}

/* Non-blocking: finish the pending response, then answer complete frames,
 * one write each; stop at the first write the socket will not take. */
static inline enum gt_state gt_pump(struct gt_conn *c)
{
	for (;;) {
		if (c->out_left) {
			ssize_t n = write(c->fd, gt_resp + (gt_resp_len - c->out_left), c->out_left);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return gt_again() ? GT_WANT_WRITE : GT_CLOSE;
			c->out_left -= (size_t)n;
			continue;
		}
		int f = gt_take_frame(c);
		if (f < 0)
			return GT_CLOSE;
		if (f == 0)
			return GT_WANT_READ;
		c->out_left = gt_resp_len;
	}
}

/* Non-blocking: one read, then answer what it completed. EAGAIN is the
 * normal "nothing yet" of the busy-polling server. */
static inline enum gt_state gt_on_readable(struct gt_conn *c)
{
	ssize_t n = gt_read_more(c);

	if (n == 0)
		return GT_CLOSE;
	if (n < 0)
		return gt_again() ? GT_WANT_READ : GT_CLOSE;
	return gt_pump(c);
}

/* Continue a connection in the state it is waiting for. */
static inline enum gt_state gt_step(struct gt_conn *c)
{
	return c->out_left ? gt_pump(c) : gt_on_readable(c);
}

/* ------------------------------------------------------------------ */
/* A set of connections owned by one thread                             */
/* ------------------------------------------------------------------ */

struct gt_connset {
	struct gt_conn **v;
	size_t n, cap;
};

static inline int gt_connset_add(struct gt_connset *s, struct gt_conn *c)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct gt_conn **v = realloc(s->v, cap * sizeof *v);
		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	c->idx = s->n;
	s->v[s->n++] = c;
	return 0;
}

/* Close and free c; the last connection takes its slot. */
static inline void gt_connset_drop(struct gt_connset *s, struct gt_conn *c)
{
	struct gt_conn *last = s->v[--s->n];

	last->idx = c->idx;
	s->v[c->idx] = last;
	close(c->fd);
	free(c);
}

/* Accept-side helper: wrap fd in a connection and add it, or close it. */
static inline struct gt_conn *gt_connset_adopt(struct gt_connset *s, int fd)
{
	struct gt_conn *c = gt_conn_new(fd);

	if (c && gt_connset_add(s, c) == 0)
		return c;
	free(c);
	close(fd);
	return NULL;
}

static inline void gt_connset_free(struct gt_connset *s)
{
	while (s->n)
		gt_connset_drop(s, s->v[s->n - 1]);
	free(s->v);
	s->v = NULL;
	s->cap = 0;
}

#endif
