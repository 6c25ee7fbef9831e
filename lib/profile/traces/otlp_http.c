/* SPDX-License-Identifier: MIT */
/*
 * The OTLP receiver's HTTP/1.1 loop: one thread, poll(), up to max_conns
 * connections, keep-alive. Every client is assumed hostile: a head is at
 * most OTLP_MAX_HEAD bytes, a body at most max_body and only once its
 * Content-Length fits in what is left of max_buffered, a request has
 * timeout_ms from its first byte to its last, an idle connection as long;
 * past any of these the client is answered (when it can be) and dropped,
 * and the loop goes on with the others.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core_int.h"
#include "http_chunked.h"
#include "otlp_recv_int.h"

/* Room kept free for the next read of a chunked body. */
#define CHUNKED_READ (16u << 10)

enum after { AFTER_CONTINUE, AFTER_NEXT, AFTER_CLOSE };

struct otlp_conn {
	int fd;
	char *buf;		/* what was received of the current request (and after) */
	size_t len, cap;
	struct http_head h;
	bool have_head;
	size_t reserved;	/* this request's share of r->buffered */
	struct http_chunked ck;	/* a chunked body's decoder */
	size_t body_end;	/* a chunked body: decoded up to here */
	size_t msg_end;		/* where the next request starts, once this one is whole */
	int64_t deadline;	/* ms, CLOCK_MONOTONIC */
	bool in_request;	/* a byte of a request has arrived */
	char out[640];		/* the answer being sent */
	size_t out_len, out_off;
	enum after after;	/* once out is sent */
	bool dead;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *reason(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 411: return "Length Required";
	case 413: return "Content Too Large";
	case 415: return "Unsupported Media Type";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	default: return "Service Unavailable";
	}
}

static uint64_t *status_counter(struct ditto_otlp_stats *st, int status)
{
	switch (status) {
	case 200: return &st->accepted;
	case 400: return &st->bad_request;
	case 404: return &st->not_found;
	case 405: return &st->bad_method;
	case 411: return &st->length_required;
	case 413: return &st->too_large;
	case 415: return &st->bad_media_type;
	case 431: return &st->head_too_large;
	case 503: return &st->busy;
	default: return NULL;	/* 500: only in requests */
	}
}

static void release(struct ditto_otlp_receiver *r, struct otlp_conn *c)
{
	r->buffered -= c->reserved;
	c->reserved = 0;
}

/* Queue an answer; an error answer closes the connection after it: what
 * follows the refused request on the wire cannot be trusted to start a
 * new one. */
static void answer(struct ditto_otlp_receiver *r, struct otlp_conn *c, int status,
		   const char *ctype, const char *body)
{
	bool close_after = status != 200 || !c->have_head || !c->h.keep_alive;
	int n;

	n = snprintf(c->out, sizeof(c->out),
		     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s%s\r\n%s",
		     status, reason(status), ctype, strlen(body),
		     status == 405 ? "Allow: POST\r\n" : "",
		     close_after ? "Connection: close\r\n" : "", body);
	c->out_len = n < 0 ? 0 : (size_t)n >= sizeof(c->out) ? sizeof(c->out) - 1 : (size_t)n;
	c->out_off = 0;
	c->after = close_after ? AFTER_CLOSE : AFTER_NEXT;
	release(r, c);
	pthread_mutex_lock(&r->stats_lock);
	r->st.requests++;
	if (status_counter(&r->st, status))
		(*status_counter(&r->st, status))++;
	pthread_mutex_unlock(&r->stats_lock);
}

static void refuse(struct ditto_otlp_receiver *r, struct otlp_conn *c, int status,
		   const char *msg)
{
	char body[300];

	snprintf(body, sizeof(body), "%s\n", msg);
	answer(r, c, status, "text/plain", body);
}

/* Expect: 100-continue (curl sends it for bodies over 1 KiB). */
static void queue_continue(struct otlp_conn *c)
{
	c->out_len = (size_t)snprintf(c->out, sizeof(c->out), "HTTP/1.1 100 Continue\r\n\r\n");
	c->out_off = 0;
	c->after = AFTER_CONTINUE;
}

/* The head is complete: 0 to read the body, or the request was refused. */
static int check_head(struct ditto_otlp_receiver *r, struct otlp_conn *c)
{
	const struct http_head *h = &c->h;
	char msg[200];

	if (h->truncated_path || strcmp(h->path, "/v1/traces") != 0) {
		refuse(r, c, 404, "not found: the receiver takes POST /v1/traces");
		return -1;
	}
	if (strcmp(h->method, "POST") != 0) {
		refuse(r, c, 405, "method not allowed: POST /v1/traces");
		return -1;
	}
	if (h->other_te) {
		refuse(r, c, 411, "length required: a Content-Length or chunked, no other transfer coding");
		return -1;
	}
	if (h->chunked && h->content_length >= 0) {
		refuse(r, c, 400, "both Content-Length and chunked: which one frames the body?");
		return -1;
	}
	if (!h->chunked && h->content_length < 0) {
		refuse(r, c, 411, "length required: send a Content-Length or a chunked body");
		return -1;
	}
	if (h->other_ce) {
		refuse(r, c, 415, "unsupported content encoding: gzip or none");
		return -1;
	}
	if (h->ctype != HTTP_CT_PROTOBUF && h->ctype != HTTP_CT_JSON) {
		refuse(r, c, 415,
		       "unsupported media type: application/x-protobuf or application/json");
		return -1;
	}
	if (h->chunked) {
		/* The buffer grows as the chunks come (do_read), within
		 * max_buffered; the decoder stops at max_body. */
		http_chunked_init(&c->ck);
		c->body_end = h->head_len;
		if (h->expect_continue && c->len == h->head_len)
			queue_continue(c);
		return 0;
	}
	if ((uint64_t)h->content_length > r->max_body) {
		snprintf(msg, sizeof(msg), "body of %lld bytes is over the receiver's %zu-byte limit",
			 (long long)h->content_length, r->max_body);
		refuse(r, c, 413, msg);
		return -1;
	}
	if ((size_t)h->content_length > r->max_buffered - r->buffered) {
		refuse(r, c, 503, "busy: too many request bodies in flight; retry");
		return -1;
	}
	c->reserved = (size_t)h->content_length;
	r->buffered += c->reserved;
	if (c->cap < h->head_len + c->reserved) {
		char *p = realloc(c->buf, h->head_len + c->reserved);

		if (!p) {
			refuse(r, c, 503, "out of memory");
			return -1;
		}
		c->buf = p;
		c->cap = h->head_len + c->reserved;
	}
	if (h->expect_continue && c->len == h->head_len && c->reserved)
		queue_continue(c);
	return 0;
}

static void body_done(struct ditto_otlp_receiver *r, struct otlp_conn *c, size_t len)
{
	struct otlp_answer a;

	otlp_handle_body(r, &c->h, (const uint8_t *)c->buf + c->h.head_len, len, &a);
	answer(r, c, a.status, a.ctype, a.body);
}

/* Act on what the buffer holds: a head to parse, a body complete. */
static void process(struct ditto_otlp_receiver *r, struct otlp_conn *c)
{
	if (c->out_len)
		return;
	if (!c->have_head) {
		int rc = http_head_parse(c->buf, c->len, &c->h);

		if (rc == 0) {
			if (c->len >= OTLP_MAX_HEAD)
				refuse(r, c, 431, "request head over 16 KiB");
			return;
		}
		if (rc < 0) {
			refuse(r, c, 400, "malformed HTTP request");
			return;
		}
		c->have_head = true;
		if (check_head(r, c) || c->out_len)
			return;
	}
	if (c->h.chunked) {
		int rc = http_chunked_decode(&c->ck, c->buf, c->h.head_len, &c->body_end, &c->len,
					     r->max_body);
		char msg[160];

		if (rc == -E2BIG) {
			snprintf(msg, sizeof(msg), "chunked body over the receiver's %zu-byte limit",
				 r->max_body);
			refuse(r, c, 413, msg);
		} else if (rc < 0) {
			refuse(r, c, 400, "malformed chunked body");
		} else if (rc == 1) {
			c->msg_end = c->body_end;
			body_done(r, c, c->body_end - c->h.head_len);
		}
		return;
	}
	if (c->len >= c->h.head_len + (size_t)c->h.content_length) {
		c->msg_end = c->h.head_len + (size_t)c->h.content_length;
		body_done(r, c, (size_t)c->h.content_length);
	}
}

/* The answer is sent: go on as it said. */
static void sent(struct ditto_otlp_receiver *r, struct otlp_conn *c)
{
	size_t used;

	c->out_len = c->out_off = 0;
	if (c->after == AFTER_CONTINUE) {
		process(r, c);	/* the body may be there already */
		return;
	}
	if (c->after == AFTER_CLOSE) {
		c->dead = true;
		return;
	}
	/* Keep-alive: bytes past this request (pipelined) start the next. */
	used = c->msg_end;
	memmove(c->buf, c->buf + used, c->len - used);
	c->len -= used;
	c->have_head = false;
	c->in_request = c->len > 0;
	c->deadline = now_ms() + r->timeout_ms;
	if (c->cap > 2 * OTLP_MAX_HEAD && c->len <= OTLP_MAX_HEAD) {
		char *p = realloc(c->buf, OTLP_MAX_HEAD);

		if (p) {
			c->buf = p;
			c->cap = OTLP_MAX_HEAD;
		}
	}
	process(r, c);
}

static void do_write(struct ditto_otlp_receiver *r, struct otlp_conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				c->dead = true;
			return;
		}
		c->out_off += (size_t)n;
	}
	sent(r, c);
}

/* Room for the next read of a chunked body, within max_buffered: false
 * when the request was refused. */
static bool chunked_room(struct ditto_otlp_receiver *r, struct otlp_conn *c)
{
	size_t limit = c->h.head_len + r->max_body + CHUNKED_READ, ncap, grow;
	char *p;

	if (c->cap - c->len >= CHUNKED_READ / 2 || c->cap >= limit)
		return true;
	ncap = c->cap * 2 > c->len + CHUNKED_READ ? c->cap * 2 : c->len + CHUNKED_READ;
	if (ncap > limit)
		ncap = limit;
	grow = ncap - c->cap;
	if (grow > r->max_buffered - r->buffered) {
		refuse(r, c, 503, "busy: too many request bodies in flight; retry");
		return false;
	}
	p = realloc(c->buf, ncap);
	if (!p) {
		refuse(r, c, 503, "out of memory");
		return false;
	}
	c->buf = p;
	c->cap = ncap;
	c->reserved += grow;
	r->buffered += grow;
	return true;
}

static void do_read(struct ditto_otlp_receiver *r, struct otlp_conn *c)
{
	/* Never read past the current request's end once it is known, nor
	 * past the head's bound before; a chunked body reads into the room
	 * its buffer has (its end is found by decoding). */
	size_t want = !c->have_head ? OTLP_MAX_HEAD
		      : c->h.chunked ? c->cap
				     : c->h.head_len + (size_t)c->h.content_length;
	ssize_t n;

	if (c->have_head && c->h.chunked) {
		if (!chunked_room(r, c))
			return;
		want = c->cap;
	}

	if (c->len >= want)
		return;
	if (c->cap < want && !c->have_head) {
		char *p = realloc(c->buf, OTLP_MAX_HEAD);

		if (!p) {
			c->dead = true;
			return;
		}
		c->buf = p;
		c->cap = OTLP_MAX_HEAD;
	}
	n = recv(c->fd, c->buf + c->len, want - c->len, MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		c->dead = true;	/* closed or reset: nothing to answer */
		return;
	}
	if (n < 0)
		return;
	if (!c->in_request) {
		c->in_request = true;
		c->deadline = now_ms() + r->timeout_ms;
	}
	c->len += (size_t)n;
	process(r, c);
}

static void conn_close(struct ditto_otlp_receiver *r, struct otlp_conn *c)
{
	release(r, c);
	close(c->fd);
	free(c->buf);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

static void do_accept(struct ditto_otlp_receiver *r)
{
	for (int i = 0; i < 16; i++) {
		int fd = accept4(r->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct otlp_conn *c;

		if (fd < 0)
			return;	/* EAGAIN, or a connection that died queued */
		otlp_count(r, &r->st.connections, 1);
		if (r->nconns >= r->max_conns) {
			static const char busy[] =
				"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

			/* Best effort: the socket buffer takes it or not. */
			if (send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
				ditto_debug("OTLP receiver: could not tell a client it is busy: %s",
					    strerror(errno));
			close(fd);
			otlp_count(r, &r->st.busy, 1);
			continue;
		}
		c = &r->conns[r->nconns++];
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->deadline = now_ms() + r->timeout_ms;
	}
}

void *otlp_http_thread(void *arg)
{
	struct ditto_otlp_receiver *r = arg;
	struct pollfd *pfd = calloc(r->max_conns + 2, sizeof(*pfd));

	r->conns = calloc(r->max_conns, sizeof(*r->conns));
	if (!pfd || !r->conns) {
		ditto_warn("OTLP receiver on %s: out of memory; it receives nothing", r->name);
		free(pfd);
		return NULL;
	}
	for (;;) {
		int64_t now = now_ms(), next = now + 60000;

		pfd[0] = (struct pollfd){ .fd = r->stop_fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = r->lfd, .events = POLLIN };
		for (unsigned i = 0; i < r->nconns; i++) {
			struct otlp_conn *c = &r->conns[i];

			pfd[2 + i] = (struct pollfd){ .fd = c->fd,
						      .events = c->out_len ? POLLOUT : POLLIN };
			if (c->deadline < next)
				next = c->deadline;
		}
		if (poll(pfd, r->nconns + 2, next > now ? (int)(next - now) : 0) < 0 &&
		    errno != EINTR) {
			ditto_warn("OTLP receiver on %s: poll: %s; it stops", r->name,
				   strerror(errno));
			break;
		}
		if (pfd[0].revents)
			break;
		now = now_ms();
		for (unsigned i = 0; i < r->nconns; i++) {
			struct otlp_conn *c = &r->conns[i];

			if (pfd[2 + i].revents & POLLOUT)
				do_write(r, c);
			else if (pfd[2 + i].revents & (POLLIN | POLLHUP | POLLERR))
				do_read(r, c);
			if (c->out_len && !c->dead)
				do_write(r, c);	/* an answer just queued: try at once */
			if (!c->dead && now >= c->deadline) {
				c->dead = true;
				otlp_count(r, &r->st.timeouts, 1);
			}
		}
		for (unsigned i = 0; i < r->nconns; i++) {
			if (!r->conns[i].dead)
				continue;
			conn_close(r, &r->conns[i]);
			r->conns[i] = r->conns[--r->nconns];
			i--;
		}
		if (pfd[1].revents)
			do_accept(r);
	}
	for (unsigned i = 0; i < r->nconns; i++)
		conn_close(r, &r->conns[i]);
	r->nconns = 0;
	free(r->conns);
	r->conns = NULL;
	free(pfd);
	return NULL;
}
