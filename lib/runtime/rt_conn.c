/* SPDX-License-Identifier: MIT */
/*
 * One connection's state machine, the same for every skeleton: read once
 * (a request's head alone first, or until EAGAIN in a listener's pool,
 * where the original read so), cut the requests out of the bytes
 * (pipelined ones each in turn, a partial one waits), serve each (body, replay, response) and write its
 * response in the model's number of writes. A write that would block
 * leaves the rest queued: the connection then waits to be writable and
 * serves no further request until its output is gone.
 */
#include "rt_int.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define KEEP_BUF (1u << 20)	/* larger idle buffers are given back */

struct rt_conn *rt_conn_new(int fd)
{
	struct rt_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->fd = fd;
	c->want = RT_WANT_READ;
	atomic_init(&c->idle_since, 0);
	rt_conn_cap_add(c);
	return c;
}

void rt_conn_free(struct rt_conn *c)
{
	rt_conn_cap_close(c);
	rt_buf_free(&c->in);
	rt_buf_free(&c->out);
	free(c);
}

static size_t pending(const struct rt_conn *c)
{
	return c->out.len - c->out_off;
}

/* Tells the cap whether c could be shut down for room: it waits for a
 * new request with nothing half read or unsent. */
static void note(struct rt_conn *c)
{
	rt_conn_cap_mark(c, c->want == RT_WANT_READ && !c->in.len && !pending(c) && !c->held);
}

static void trim(struct rt_buf *b)
{
	if (!b->len && b->cap > KEEP_BUF)
		rt_buf_free(b);
}

static void sent_all(struct rt_conn *c)
{
	rt_sock_response_end(c->fd);
	c->out.len = c->out_off = 0;
	trim(&c->out);
}

/* Writes max bytes of the queue: 1 done, 0 the socket is full, -1 error. */
static int send_some(struct rt_conn *c, size_t max)
{
	while (max) {
		size_t m = max < pending(c) ? max : pending(c);
		ssize_t n = rt_sock_write(c->fd, c->out.data + c->out_off, m);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
		c->out_off += (size_t)n;
		max -= (size_t)n;
	}
	return 1;
}

static unsigned writes_per_response(void)
{
	double w = rt_config.net.writes_per_request;

	if (!(w >= 1.0))
		return 1;
	return w > 1024 ? 1024 : (unsigned)(w + 0.5);	/* rounded; no libm */
}

/* The next `part` bytes of the queue, sent from the scratch file in
 * `calls` sendfile() calls instead of written: the bytes on the wire are
 * the model's either way. What the file cannot give is written. */
static int send_file_part(struct rt_conn *c, size_t part, unsigned calls)
{
	size_t chunk = (part + calls - 1) / calls;

	while (part) {
		size_t m = chunk < part ? chunk : part;
		ssize_t n = rt_sock_sendfile(c->fd, m);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
		if (n == 0)
			return send_some(c, part);
		c->out_off += (size_t)n;
		part -= (size_t)n;
	}
	return 1;
}

/* The response at out[start..]: in writes_per_response() pieces, its end
 * from the file when the model sent files, unless older bytes still wait
 * for the socket (they go out together later). */
static int send_response(struct rt_conn *c, size_t start)
{
	size_t len = c->out.len - start, file = rt_sock_sendfile_bytes(len), chunk, done;
	unsigned k = writes_per_response();
	int r;

	if (c->out_off < start)
		return 0;
	len -= file;
	chunk = (len + k - 1) / k;
	rt_sock_response_begin(c->fd);
	for (done = 0; done < len; done += chunk) {
		size_t m = chunk < len - done ? chunk : len - done;

		if ((r = send_some(c, m)) <= 0)
			return r;
	}
	if (file && (r = send_file_part(c, file, rt_sock_sendfile_calls())) <= 0)
		return r;
	sent_all(c);
	return 1;
}

/* Keep c's responses for rt_conn_hold_flush(); false (send now) when the
 * list cannot grow. */
static bool hold(struct rt_conn *c, struct rt_thread *t)
{
	if (c->held)
		return true;
	if (t->nheld == t->heldcap) {
		size_t cap = t->heldcap ? 2 * t->heldcap : 16;
		struct rt_conn **h = realloc(t->held, cap * sizeof(*h));

		if (!h)
			return false;
		t->held = h;
		t->heldcap = cap;
	}
	t->held[t->nheld++] = c;
	return c->held = true;
}

/* A greeting answers no request: it goes out whole in one write, not in
 * the model's writes per response, and runs no body. */
void rt_conn_greet(struct rt_conn *c)
{
	int r;

	if (rt_frame_greet(c, &c->out)) {
		c->want = RT_WANT_CLOSE;
		return;
	}
	if (!pending(c))
		return;
	r = send_some(c, pending(c));
	if (r > 0)
		c->out.len = c->out_off = 0;
	else
		c->want = r < 0 ? RT_WANT_CLOSE : RT_WANT_WRITE;
	note(c);
}

/* req's response queued and sent (or held), then its work after the
 * response: 1 sent, 0 the socket is full, -1 the connection ends. */
static int answer(struct rt_conn *c, struct rt_thread *t, const struct rt_req *req)
{
	size_t start = c->out.len;
	int r = -1;

	if (!rt_frame_respond(c, req, &t->rng, &c->out)) {
		c->closing = req->close_after;
		r = t->hold && !c->closing && hold(c, t) ? 1 : send_response(c, start);
	}
	if (req->serve) {
		rt_request_after(t);
		rt_stop_count_request();
	}
	return r;
}

/* A served request's body, replay and calls; true when it waits for its
 * calls, parked (its bytes stay at the input's start). */
static bool work(struct rt_conn *c, struct rt_thread *t, const struct rt_req *req, long n,
		 size_t pos)
{
	rt_trace_begin(t, req);
	t->again_acc += rt_config.net.again_per_request;
	t->wait_acc += rt_config.net.waits_per_request;
	if (!t->parker) {
		rt_request_work(t);
		return false;
	}
	return rt_request_work_parked(t, c, req, n, c->in.data + pos);
}

/* After the requests up to pos: what the connection waits for. */
static enum rt_want settle(struct rt_conn *c, size_t pos, enum rt_want want)
{
	rt_buf_drop(&c->in, pos);
	trim(&c->in);
	if (want == RT_WANT_READ && pending(c) && !c->held)
		want = RT_WANT_WRITE;
	if (want == RT_WANT_READ && c->closing)
		want = RT_WANT_CLOSE;
	c->want = want;
	note(c);
	return want;
}

/* Serves the complete requests in the input, in order. */
static enum rt_want serve(struct rt_conn *c, struct rt_thread *t)
{
	enum rt_want want = RT_WANT_READ;
	size_t pos = 0;

	while (pos < c->in.len && !c->closing && !rt_stopping()) {
		struct rt_req req;
		long n = rt_frame_cut(c, c->in.data + pos, c->in.len - pos, &req);
		int r;

		if (n == 0)
			break;
		if (n < 0) {	/* malformed: this connection ends */
			want = RT_WANT_CLOSE;
			break;
		}
		if (req.serve && work(c, t, &req, n, pos)) {
			want = RT_WANT_PARK;
			break;
		}
		r = answer(c, t, &req);
		pos += (size_t)n;
		if (r <= 0) {
			want = r < 0 ? RT_WANT_CLOSE : RT_WANT_WRITE;
			break;
		}
	}
	return settle(c, pos, want);
}

void rt_conn_resume(struct rt_conn *c, struct rt_thread *t, const struct rt_req *req, long len)
{
	int r = answer(c, t, req);

	if (r <= 0)
		settle(c, (size_t)len, r < 0 ? RT_WANT_CLOSE : RT_WANT_WRITE);
	else if (settle(c, (size_t)len, RT_WANT_READ) == RT_WANT_READ)
		serve(c, t);	/* the requests that came after it */
}

/* One read of up to n bytes onto c's input: its result, errno kept. */
static ssize_t read_in(struct rt_conn *c, size_t n)
{
	ssize_t r;

	if (rt_buf_reserve(&c->in, n)) {
		errno = ENOMEM;
		return -1;
	}
	r = rt_sock_read(c->fd, c->in.data + c->in.len, n);
	if (r > 0)
		c->in.len += (size_t)r;
	return r;
}

static bool again(ssize_t r)
{
	return r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/*
 * The first read of a request: the model's head_read bytes alone when the
 * original read each request's head so (MariaDB reads a packet's 4-byte
 * header, then its payload), then the rest at once if the head says more
 * comes (a blocking read would wait for a payload that an empty or
 * malformed packet does not have); else one read. Returns what decides
 * the connection's fate; *empties: reads that found nothing.
 */
static ssize_t read_request(struct rt_conn *c, unsigned *empties)
{
	size_t head = rt_config.net.head_read;
	bool split = head && !c->in.len;
	ssize_t r = read_in(c, split ? head : rt_sock_read_size());

	*empties += again(r);
	if (split && r == (ssize_t)head && rt_frame_needs_more(c, c->in.data, c->in.len)) {
		ssize_t rest = read_in(c, rt_sock_read_size());

		*empties += again(rest);
		if (rest == 0 || (rest < 0 && !again(rest) && errno != EINTR))
			return rest;
	}
	return r;
}

/* A request's reads and the requests they complete; *empties: reads that
 * found nothing. */
static enum rt_want read_and_serve(struct rt_conn *c, struct rt_thread *t, unsigned *empties)
{
	ssize_t n;

	*empties = 0;
	n = read_request(c, empties);
	if (n == 0)
		return c->want = RT_WANT_CLOSE;
	if (n < 0)
		return again(n) || errno == EINTR ? c->want : (c->want = RT_WANT_CLOSE);
	rt_conn_cap_mark(c, false);	/* a request in progress */
	return serve(c, t);
}

/* Whether the serving threads read non-blocking sockets: event loops,
 * busy polling, and a blocking pool fed by a listener (rt_net_handoff.c),
 * whose threads block on a futex, not in their reads. */
static bool reads_nonblocking(void)
{
	return rt_config.io != RT_IO_BLOCKING || (rt_config.threads && rt_config.accept_dispatch);
}

/* A read and the requests it completes; an empty one counts against the
 * model's EAGAIN rate (the original's were such reads too). */
static enum rt_want read_once(struct rt_conn *c, struct rt_thread *t, bool *empty)
{
	unsigned empties;
	enum rt_want want = read_and_serve(c, t, &empties);

	t->again_acc -= empties;
	t->empty_reads += empties;
	*empty = empties > 0;
	return want;
}

/* The empty reads the model's EAGAIN rate still owes (non-blocking reads
 * only: a blocking read does not return EAGAIN). */
static void owed_empty_reads(struct rt_conn *c, struct rt_thread *t, enum rt_want want)
{
	if (want == RT_WANT_READ && reads_nonblocking() &&
	    !rt_buf_reserve(&c->in, rt_sock_read_size()))
		rt_empty_reads(t, c->in.data + c->in.len, rt_sock_read_size());
}

enum rt_want rt_conn_readable(struct rt_conn *c, struct rt_thread *t)
{
	bool empty;
	enum rt_want want = read_once(c, t, &empty);

	owed_empty_reads(c, t, want);
	return want;
}

/*
 * Reads until one finds nothing, as a server that reads its non-blocking
 * sockets until EAGAIN does when the model has such reads: its next wait
 * (a re-arm, a futex, a poll) then follows an empty read, and a request
 * that came while the thread still worked is read without one. It reads
 * on only while the model owes empty reads (again_acc > 0): a clone that
 * serves faster than its original finds the socket empty more often, and
 * reading on after every request made an empty read per request where
 * Apache made 0.63 (its polls, one per empty read, followed). At most
 * READ_ALL rounds of reads (two calls each with head reads), so that a
 * pipelining client does not keep the thread forever.
 */
#define READ_ALL 64
/* Empty reads per request from which the original is taken to read until
 * EAGAIN (one that read once and re-armed makes next to none). */
#define READ_ALL_RATE 0.25
enum rt_want rt_conn_read_all(struct rt_conn *c, struct rt_thread *t)
{
	enum rt_want want = c->want;
	bool empty = false;

	if (!(rt_config.net.again_per_request >= READ_ALL_RATE))
		return rt_conn_readable(c, t);
	if (t->again_acc < -RT_AGAIN_SURPLUS)
		t->again_acc = -RT_AGAIN_SURPLUS;
	/* the model's owed ones after the thread's own: in between, they
	 * would give the client time to send what the next read finds */
	for (unsigned i = 0; i < READ_ALL && !empty && want == RT_WANT_READ && !rt_stopping(); i++) {
		if (i > 0 && !(t->again_acc > 0))
			break;	/* the model owes no empty read: back to the wait */
		want = read_once(c, t, &empty);
	}
	owed_empty_reads(c, t, want);
	return want;
}

/* Blocking writes finish, so only reads are waited for. */
void rt_conn_serve_blocking(struct rt_conn *c, struct rt_thread *t)
{
	while (!rt_stopping() && c->want != RT_WANT_CLOSE && rt_conn_readable(c, t) != RT_WANT_CLOSE)
		;
}

void rt_conn_serve_blocking_fd(int fd, struct rt_thread *t)
{
	struct rt_conn *c = rt_conn_new(fd);

	if (!c) {
		rt_conn_cap_close_fd(fd);
		return;
	}
	rt_sock_setup(fd);
	rt_conn_greet(c);
	rt_conn_serve_blocking(c, t);
	rt_conn_free(c);
}

enum rt_want rt_conn_writable(struct rt_conn *c, struct rt_thread *t)
{
	int r = send_some(c, pending(c));

	if (r <= 0)
		return c->want = r < 0 ? RT_WANT_CLOSE : RT_WANT_WRITE;
	sent_all(c);
	if (c->closing)
		return c->want = RT_WANT_CLOSE;
	return serve(c, t);
}

void rt_conn_hold_begin(struct rt_thread *t)
{
	double share = rt_config.net.hold_share;

	t->hold = share >= 1 || (share > 0 && rt_rng_unit(&t->hold_rng) < share);
}

/* Every held response goes out in the model's number of writes, a
 * connection's several pipelined ones together. */
void rt_conn_hold_flush(struct rt_thread *t, void (*changed)(struct rt_conn *c, void *arg),
			void *arg)
{
	size_t n = t->nheld;

	t->nheld = 0;
	t->hold = false;
	for (size_t i = 0; i < n; i++) {
		struct rt_conn *c = t->held[i];
		int r;

		c->held = false;
		/* parked on a later request: what it answered goes now */
		if (c->want == RT_WANT_PARK && pending(c) && send_response(c, c->out_off) < 0)
			c->closing = true;	/* answered at the resume, then closed */
		if (c->want != RT_WANT_READ)	/* already waits to write, or closes */
			continue;
		r = pending(c) ? send_response(c, c->out_off) : 1;
		c->want = r < 0 ? RT_WANT_CLOSE : r == 0 ? RT_WANT_WRITE :
			  c->closing ? RT_WANT_CLOSE : RT_WANT_READ;
		note(c);
		if (c->want != RT_WANT_READ)
			changed(c, arg);
	}
}

void rt_conn_hold_forget(struct rt_thread *t, struct rt_conn *c)
{
	for (size_t i = 0; c->held && i < t->nheld; i++)
		if (t->held[i] == c) {
			t->held[i] = t->held[--t->nheld];
			c->held = false;
		}
}
