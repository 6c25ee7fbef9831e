/* SPDX-License-Identifier: MIT */
/*
 * The OTLP/HTTP receiver's parts, each using only those listed before it:
 * what a request body becomes (otlp_body.c), the listening socket
 * (otlp_listen.c), the HTTP loop on its thread (otlp_http.c), the public
 * API (otlp_receiver.c).
 */
#ifndef DITTO_OTLP_RECV_INT_H
#define DITTO_OTLP_RECV_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ditto/profile.h>

#include "http_head.h"
#include "trace_span.h"

#define OTLP_DEFAULT_LISTEN "127.0.0.1:4318"
#define OTLP_DEFAULT_MAX_BODY (4u << 20)
#define OTLP_DEFAULT_MAX_CONNS 64
#define OTLP_DEFAULT_TIMEOUT_S 10.0
/* A request head (request line and fields) is at most this long: an
 * exporter's is a few hundred bytes. */
#define OTLP_MAX_HEAD (16u << 10)

struct otlp_conn;

struct ditto_otlp_receiver {
	int lfd;		/* listening socket */
	int stop_fd;		/* eventfd: finish/free asks the thread to end */
	uint16_t port;
	char name[96];		/* "127.0.0.1:4318", for messages */
	pthread_t thread;
	bool running;		/* the thread was started and not joined */
	bool finished;

	size_t max_body, max_buffered;
	unsigned max_conns;
	int timeout_ms;

	/* Owned by the thread while it runs. */
	struct otlp_conn *conns;
	unsigned nconns;
	size_t buffered;	/* body bytes reserved by connections */

	struct trace_set set;

	pthread_mutex_t stats_lock;
	struct ditto_otlp_stats st;
};

/* Bind and listen on "HOST:PORT" (see ditto_otlp_receiver_start()):
 * 0 with *fd, *port and name ("HOST:PORT" as bound), or -errno with the
 * message set (ditto_err). */
int otlp_listen(const char *listen, bool allow_remote, int *fd, uint16_t *port, char *name,
		size_t namelen);

/* The thread's body (arg: the receiver). */
void *otlp_http_thread(void *arg);

/* What one complete request gets back. */
struct otlp_answer {
	int status;
	const char *ctype;	/* of the body */
	char body[320];		/* "" for none */
};

/* A complete POST /v1/traces body (still encoded as h says) into the
 * receiver's set and the answer to send. */
void otlp_handle_body(struct ditto_otlp_receiver *r, const struct http_head *h,
		      const uint8_t *body, size_t len, struct otlp_answer *ans);

/* For the tests of internals: the receiver's spans (lock set->lock to
 * read them while it runs). */
struct trace_set *otlp_receiver_set(struct ditto_otlp_receiver *r);

/* Counters: one place that takes the lock. */
void otlp_count(struct ditto_otlp_receiver *r, uint64_t *field, uint64_t n);

#endif
