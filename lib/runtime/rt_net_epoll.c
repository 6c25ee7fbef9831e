/* SPDX-License-Identifier: MIT */
/*
 * The epoll skeleton: one level-triggered epoll loop per serving thread
 * over its listen sockets (or its dispatch eventfd), its connections and
 * the stop eventfd; maxevents from the model (64 when it has none).
 */
#include "rt_int.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

/* epoll's data: a connection's address or one of these small tags,
 * which no address can be. */
enum { TAG_STOP = 1, TAG_NOTIFY = 2, TAG_KICK = 3, TAG_LISTEN = 4 };

static int watch(int ep, int op, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = { .events = events, .data.u64 = data };

	return epoll_ctl(ep, op, fd, &ev);
}

/* c's events in the set follow its want; a parked connection keeps
 * what it had (rt_park.c), until an event comes for it. */
bool rt_net_epoll_watch(int ep, struct rt_conn *c)
{
	uint32_t ev = c->want == RT_WANT_WRITE ? EPOLLOUT : EPOLLIN;

	/* parked while it waited to write: out of the set, else it would
	 * wake the loop at once */
	if (c->want == RT_WANT_PARK && (c->events & EPOLLOUT)) {
		if (epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL))
			return false;
		c->events = 0;
	}
	if (c->want == RT_WANT_PARK || c->events == ev)
		return true;
	if (watch(ep, c->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd, ev, (uintptr_t)c))
		return false;
	c->events = ev;
	return true;
}

void rt_net_epoll_rewatch(struct rt_worker *w, int ep, struct rt_conn *c)
{
	if (c->want == RT_WANT_CLOSE || !rt_net_epoll_watch(ep, c))
		rt_worker_drop(w, c);
}

/* A new connection waits to read, or to write what it says first. */
static void add_conn(struct rt_worker *w, int ep, struct rt_conn *c)
{
	if (c)
		rt_net_epoll_rewatch(w, ep, c);
}

static void on_listen(struct rt_worker *w, int ep, int lfd)
{
	bool again = true;

	/* another process may have taken one since the gate (rt_share.c) */
	for (unsigned i = 0; i < rt_worker_accept_burst(w) && again && rt_share_accepting(); i++)
		add_conn(w, ep, rt_worker_accept(w, lfd, &again));
}

static void on_notify(struct rt_worker *w, int ep)
{
	uint64_t count;
	int fds[64];
	size_t n;

	if (read(w->notify_fd, &count, sizeof(count)) < 0) {
		/* EAGAIN: another wake-up already took the sockets */
	}
	while ((n = rt_worker_take(w, fds, 64)))
		for (size_t i = 0; i < n; i++)
			add_conn(w, ep, rt_worker_adopt(w, fds[i]));
}

/*
 * A parked connection's event (the client sent more, or went away; its
 * output drained) waits until its request is answered: out of the set
 * meanwhile, so that a level-triggered event does not spin the loop. A
 * connection answered and closing in this wake-up is dropped after it.
 */
static void on_conn(struct rt_worker *w, int ep, struct rt_conn *c, uint32_t events)
{
	bool err = events & (EPOLLERR | EPOLLHUP);

	if (c->want == RT_WANT_PARK) {
		if (c->events && !epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL))
			c->events = 0;
		return;
	}
	if (c->want == RT_WANT_CLOSE)
		return;
	if (rt_worker_service(w, c, (events & EPOLLIN) || err, (events & EPOLLOUT) || err))
		rt_net_epoll_rewatch(w, ep, c);
}

/*
 * A listen socket that other processes' (or threads') epoll sets watch
 * too wakes one of them per connection, as nginx's workers ask: woken all
 * at once, the first to run took every connection of a load opened
 * together, and the other worker served nothing.
 */
static uint32_t listen_exclusive(const struct rt_worker *w)
{
	bool shared = w->shared || (rt_config.processes > 1 && !rt_config.fork_per_connection &&
				    rt_listen_count(rt_config.processes) == 1);

	return shared ? EPOLLEXCLUSIVE : 0;
}

static int setup(struct rt_worker *w, int ep)
{
	if (watch(ep, EPOLL_CTL_ADD, rt_stop_fd, EPOLLIN, TAG_STOP))
		return -1;
	if (w->notify_fd >= 0 && watch(ep, EPOLL_CTL_ADD, w->notify_fd, EPOLLIN, TAG_NOTIFY))
		return -1;
	if (w->nlfd && rt_share_kick_fd() >= 0 &&
	    watch(ep, EPOLL_CTL_ADD, rt_share_kick_fd(), EPOLLIN | EPOLLET, TAG_KICK))
		return -1;
	for (unsigned i = 0; i < w->nlfd; i++)
		if (watch(ep, EPOLL_CTL_ADD, w->lfd[i], EPOLLIN | listen_exclusive(w), TAG_LISTEN + i))
			return -1;
	/* adopted before the loop (a process forked for its connection) */
	for (size_t i = w->nconns; i-- > 0;)
		add_conn(w, ep, w->conns[i]);
	return 0;
}

/*
 * Processes on one shared socket take turns (rt_share.c): a process too
 * far ahead unwatches the socket, kicks the others when connections are
 * queued, and looks again every RT_SHARE_LOOK_MS while it does.
 */
static bool watch_listen(struct rt_worker *w, int ep, int op)
{
	bool ok = true;

	for (unsigned i = 0; i < w->nlfd; i++)
		ok &= !watch(ep, op, w->lfd[i], EPOLLIN | listen_exclusive(w), TAG_LISTEN + i);
	return ok;
}

static int gate_listen(struct rt_worker *w, int ep, bool *armed)
{
	bool want = rt_share_accepting();

	if (want && !*armed) {
		/* a failed add is tried again at the next look */
		*armed = watch_listen(w, ep, EPOLL_CTL_ADD);
	} else if (!want && *armed) {
		watch_listen(w, ep, EPOLL_CTL_DEL);
		*armed = false;
		rt_share_kick_queued(w->lfd, w->nlfd);
	}
	return *armed ? -1 : RT_SHARE_LOOK_MS;
}

/* Another process stopped taking connections: added again, the socket is
 * looked at, and a connection its wake-up left queued is seen. */
static void on_kick(struct rt_worker *w, int ep, bool armed)
{
	if (armed) {
		watch_listen(w, ep, EPOLL_CTL_DEL);
		watch_listen(w, ep, EPOLL_CTL_ADD);
	}
}

static void dispatch(struct rt_worker *w, int ep, const struct epoll_event *ev, bool armed)
{
	uint64_t d = ev->data.u64;

	if (d == TAG_STOP)
		return;		/* the loop condition sees it */
	if (d & RT_PARK_TAG)
		rt_park_event(w->t.parker, d);
	else if (d == TAG_KICK)
		on_kick(w, ep, armed);
	else if (d == TAG_NOTIFY)
		on_notify(w, ep);
	else if (d >= TAG_LISTEN && d < TAG_LISTEN + w->nlfd)
		on_listen(w, ep, w->lfd[d - TAG_LISTEN]);
	else
		on_conn(w, ep, (struct rt_conn *)(uintptr_t)d, ev->events);
}

struct flush_ctx {
	struct rt_worker *w;
	int ep;
};

static void flushed(struct rt_conn *c, void *arg)
{
	struct flush_ctx *f = arg;

	rt_net_epoll_rewatch(f->w, f->ep, c);
}

/* The wake-up's held responses out (rt_net.hold_share). */
static void flush(struct rt_worker *w, int ep)
{
	struct flush_ctx f = { w, ep };

	rt_conn_hold_flush(&w->t, flushed, &f);
}

/*
 * The waits the thread owes at rt_net.waits_per_request, after its
 * wake-up: on an epoll set of its own that holds nothing, so that they
 * neither block nor take the readiness of its connections (waited on
 * its set, the next request came in the second one, and the rate never
 * caught up). A thread that waited more than that while idle owes
 * nothing for it later.
 */
#define OWED_WAITS_MAX 64	/* at once */
static void owed_waits(struct rt_thread *t, int owed_ep)
{
	struct epoll_event ev;

	if (t->wait_acc < -RT_AGAIN_SURPLUS)
		t->wait_acc = -RT_AGAIN_SURPLUS;
	for (unsigned i = 0; owed_ep >= 0 && t->wait_acc >= 1 && i < OWED_WAITS_MAX; i++) {
		if (epoll_wait(owed_ep, &ev, 1, 0) < 0 && errno != EINTR)
			return;
		t->wait_acc -= 1;
	}
}

/* The sooner of two waits in ms (-1: none). */
static int timeout(int gate_ms, const struct rt_parker *pk)
{
	int park_ms = rt_park_timeout_ms(pk);

	if (gate_ms < 0)
		return park_ms;
	return park_ms < 0 || gate_ms < park_ms ? gate_ms : park_ms;
}

void rt_net_epoll_loop(struct rt_worker *w)
{
	unsigned max = rt_config.net.epoll_events ? rt_config.net.epoll_events : RT_EPOLL_EVENTS_DEFAULT;
	struct epoll_event *ev = calloc(max, sizeof(*ev));
	int ep = epoll_create1(EPOLL_CLOEXEC);
	bool armed = true;
	struct rt_parker *pk = NULL;
	/* for owed waits (owed_waits()); none when the model owes none */
	int owed_ep = rt_config.net.waits_per_request > 0 ? epoll_create1(EPOLL_CLOEXEC) : -1;

	if (ev && ep >= 0)
		pk = rt_park_open(w, ep);
	if (!ev || ep < 0 || setup(w, ep)) {
		rt_err(ev ? errno : ENOMEM, "epoll set of serving thread %u", w->index);
		rt_fail();
	}
	rt_request_wake_loop(&w->t);
	/* A thread done with its one connection (serial connections, a
	 * process per connection) still reads the replies of its async
	 * calls in flight, until they end or time out: ended by the loop's
	 * end instead, they would count as timeouts. */
	while (rt_worker_running(w) || (!rt_stopping() && rt_park_pending(pk))) {
		int n = epoll_wait(ep, ev, (int)max, timeout(gate_listen(w, ep, &armed), pk));

		w->t.wait_acc -= 1;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rt_err(errno, "epoll_wait");
			rt_fail();
			break;
		}
		rt_conn_hold_begin(&w->t);
		for (int i = 0; i < n; i++)
			dispatch(w, ep, &ev[i], armed);
		if (pk)
			rt_park_expire(pk);
		flush(w, ep);
		if (pk)
			rt_park_dying(pk);
		rt_request_wake_end(&w->t);	/* its responses are out */
		owed_waits(&w->t, owed_ep);
	}
	rt_park_close(pk);
	if (owed_ep >= 0)
		close(owed_ep);
	if (ep >= 0)
		close(ep);
	free(ev);
}
