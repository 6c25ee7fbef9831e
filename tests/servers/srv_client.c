/* SPDX-License-Identifier: MIT */
/*
 * srv_client: load for the ground-truth servers. C connections, one thread
 * each, share K requests; each thread writes one frame (or --pipeline D
 * frames in one write), reads the whole answer(s), checks every response
 * header says --response-bytes and the byte count matches, and repeats.
 * Prints {"requests":done,"errors":E,"seconds":T}; exits 1 on any error.
 * Bounded: K requests, a 10 s socket timeout, and --max-seconds overall.
 */
#include "gt_common.h"	/* first: it defines _GNU_SOURCE */

#include <arpa/inet.h>
#include <stdbool.h>
#include <sys/time.h>
#include <time.h>

#define MAX_CONNECTIONS 4096
#define MAX_PIPELINE 1024
#define IO_TIMEOUT_S 10

struct config {
	unsigned port, connections, pipeline, max_seconds;
	unsigned long requests;
	size_t request_bytes, response_bytes;
	double rate;			/* requests per second over all, 0: flat out */
	bool hold;			/* wait for a line on stdin before the first request */
};

struct job {
	const struct config *cfg;
	pthread_t tid;
	unsigned id;
	unsigned long share, done;
};

static pthread_barrier_t connected, start_line;
static struct timespec deadline;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static struct timespec at(double s)
{
	struct timespec t = { .tv_sec = (time_t)s };

	t.tv_nsec = (long)((s - (double)t.tv_sec) * 1e9);
	return t;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s --port P --connections C --requests K --request-bytes L\n"
		"          [--response-bytes R] [--pipeline D] [--rate QPS] [--max-seconds S]\n"
		"          [--hold]\n",
		prog);
	exit(GT_EXIT_USAGE);
}

static void parse(int argc, char **argv, struct config *c)
{
	static const struct option longs[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "connections", required_argument, NULL, 'c' },
		{ "requests", required_argument, NULL, 'k' },
		{ "request-bytes", required_argument, NULL, 'l' },
		{ "response-bytes", required_argument, NULL, 'r' },
		{ "pipeline", required_argument, NULL, 'd' },
		{ "rate", required_argument, NULL, 'q' },
		{ "max-seconds", required_argument, NULL, 's' },
		{ "hold", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *p = argv[0];
	int o;

	*c = (struct config){ .connections = 1, .requests = 1, .response_bytes = 128,
			      .pipeline = 1, .max_seconds = 120 };
	while ((o = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (o) {
		case 'p': c->port = (unsigned)gt_number(p, optarg, 1, 65535); break;
		case 'c': c->connections = (unsigned)gt_number(p, optarg, 1, MAX_CONNECTIONS); break;
		case 'k': c->requests = gt_number(p, optarg, 1, 1000000000); break;
		case 'l': c->request_bytes = gt_number(p, optarg, 0, GT_MAX_REQUEST); break;
		case 'r': c->response_bytes = gt_number(p, optarg, 0, GT_MAX_RESPONSE); break;
		case 'd': c->pipeline = (unsigned)gt_number(p, optarg, 1, MAX_PIPELINE); break;
		case 'q': c->rate = (double)gt_number(p, optarg, 1, 10000000); break;
		case 's': c->max_seconds = (unsigned)gt_number(p, optarg, 1, 86400); break;
		case 'h': c->hold = true; break;
		default: usage(p);
		}
	}
	if (optind != argc || !c->port)
		usage(p);
}

/* Blocking socket with timeouts, so a stuck server fails us, never hangs. */
static int dial(unsigned port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = IO_TIMEOUT_S };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		perror("socket");
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	gt_nodelay(fd);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		perror("connect");
		close(fd);
		return -1;
	}
	return fd;
}

/* D request frames back to back, so a batch goes out in one write. */
static unsigned char *make_frames(size_t l, unsigned d)
{
	unsigned char *f = malloc((4 + l) * d);

	for (unsigned i = 0; f && i < d; i++) {
		unsigned char *p = f + (4 + l) * i;
		gt_put_be32(p, (uint32_t)l);
		memset(p + 4, 'q', l);
	}
	return f;
}

/* Read exactly count responses of r bytes. buf holds two responses, so a
 * read may run into the next one; anything past the last is an error. */
static int read_responses(int fd, unsigned char *buf, size_t r, unsigned count)
{
	size_t whole = 4 + r, cap = 2 * whole, have = 0;

	while (count) {
		if (have >= 4 && gt_get_be32(buf) != r) {
			fprintf(stderr, "response says %u bytes, want %zu\n", gt_get_be32(buf), r);
			return -1;
		}
		if (have >= whole) {
			have -= whole;
			memmove(buf, buf + whole, have);
			count--;
			continue;
		}
		ssize_t n = read(fd, buf + have, cap - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "read: %s\n", n ? strerror(errno) : "server closed");
			return -1;
		}
		have += (size_t)n;
	}
	if (have)
		fprintf(stderr, "%zu bytes beyond the last response\n", have);
	return have ? -1 : 0;
}

/* --rate: this connection's share of the rate, offset per connection so
 * that the connections do not fire in lockstep. */
static void pace(const struct job *j, double t0, unsigned long sent)
{
	if (j->cfg->rate <= 0)
		return;
	double gap = j->cfg->connections / j->cfg->rate;
	struct timespec t = at(t0 + gap * ((double)sent + (double)j->id / j->cfg->connections));
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

static int past_deadline(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec > deadline.tv_sec ||
	       (t.tv_sec == deadline.tv_sec && t.tv_nsec >= deadline.tv_nsec);
}

static void run(struct job *j, int fd, unsigned char *frames, unsigned char *resp)
{
	const struct config *c = j->cfg;
	double t0 = now_s();

	while (j->done < j->share && !past_deadline()) {
		unsigned batch = c->pipeline;
		if (j->share - j->done < batch)
			batch = (unsigned)(j->share - j->done);
		pace(j, t0, j->done);
		if (gt_write_all(fd, frames, (4 + c->request_bytes) * batch) < 0) {
			perror("write");
			return;
		}
		if (read_responses(fd, resp, c->response_bytes, batch) < 0)
			return;
		j->done += batch;
	}
}

/* --hold: the connections are up; say so and wait for a line (or end of
 * file) on stdin, so that a profiler can open its window in between and
 * see only connections it did not see accepted. */
static void hold(void)
{
	char line[64];

	printf("connected\n");
	fflush(stdout);
	while (!fgets(line, sizeof(line), stdin) && ferror(stdin) && errno == EINTR)
		clearerr(stdin);
}

/* Every thread connects before any sends, so the server sees all C
 * connections at once; requests not done count as errors. */
static void *client(void *arg)
{
	struct job *j = arg;
	const struct config *c = j->cfg;
	int fd = dial(c->port);
	unsigned char *frames = make_frames(c->request_bytes, c->pipeline);
	unsigned char *resp = malloc(2 * (4 + c->response_bytes));

	pthread_barrier_wait(&connected);
	pthread_barrier_wait(&start_line);
	if (fd >= 0 && frames && resp)
		run(j, fd, frames, resp);
	if (fd >= 0)
		close(fd);
	free(frames);
	free(resp);
	return NULL;
}

int main(int argc, char **argv)
{
	static struct job jobs[MAX_CONNECTIONS];
	struct config c;
	unsigned long done = 0;
	unsigned started = 0;

	parse(argc, argv, &c);
	signal(SIGPIPE, SIG_IGN);
	deadline = at(now_s() + c.max_seconds);
	pthread_barrier_init(&connected, NULL, c.connections + 1);
	pthread_barrier_init(&start_line, NULL, c.connections + 1);
	for (unsigned i = 0; i < c.connections; i++) {
		jobs[i] = (struct job){ .cfg = &c, .id = i,
					.share = c.requests / c.connections + (i < c.requests % c.connections) };
		if (pthread_create(&jobs[i].tid, NULL, client, &jobs[i])) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;	/* the barrier would never fill */
		}
		started++;
	}
	pthread_barrier_wait(&connected);
	if (c.hold)
		hold();
	pthread_barrier_wait(&start_line);
	double t0 = now_s();
	for (unsigned i = 0; i < started; i++) {
		pthread_join(jobs[i].tid, NULL);
		done += jobs[i].done;
	}
	double secs = now_s() - t0;
	pthread_barrier_destroy(&connected);
	pthread_barrier_destroy(&start_line);
	printf("{\"requests\":%lu,\"errors\":%lu,\"seconds\":%.6f}\n", done, c.requests - done, secs);
	return done == c.requests ? 0 : 1;
}
