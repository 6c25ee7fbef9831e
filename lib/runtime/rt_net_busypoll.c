/* SPDX-License-Identifier: MIT */
/*
 * The busy-polling skeleton: each serving thread spins over its
 * non-blocking listen sockets and connections, trying accept, read and
 * write until they stop saying EAGAIN; it never blocks in the kernel.
 *
 * How many reads find nothing per request follows how fast the loop goes
 * round against how long clients take to send the next request: a clone
 * that went round faster or slower than its original made more or fewer
 * of them (1.79 reads per request against 2.01). So the rounds are paced:
 * every PACE_WINDOW requests, the empty reads made are compared with what
 * the model's rate (rt_net.again_per_request) owes, and each round is
 * stretched by a spin (no system call) longer or shorter in proportion;
 * what a loop that cannot go faster still owes comes from the empty
 * reads of rt_empty_read.c, and the failed accept4() calls it owes
 * (rt_net.accept_again_per_request) are made at the round's end: a
 * clone's round that serves a request body is slower than a bare
 * original's.
 */
#include "rt_int.h"

/* Requests between looks at the rate: enough to average over the spells
 * in which a client is not scheduled and every round finds nothing. */
#define PACE_WINDOW 512
/* Longest stretch of one round (ns): a client that went quiet must not
 * leave the loop slow for the next one. */
#define PACE_MAX_NS 1000000.0
#define PACE_MIN_NS 50.0	/* below it, no stretch at all */
/* Surplus calls (RT_AGAIN_SURPLUS) are cut once no request came for
 * IDLE_NS: an idle spell must not owe the next busy one a deficit, but a
 * client's short absence from the CPU is part of the rate the original
 * had too. */
#define IDLE_NS 100000000ull

struct pacer {
	double pace;		/* ns each round lasts at least */
	uint64_t served, empty;	/* the thread's counts at the last look */
	uint64_t round_served;	/* its served count at the round's start */
	uint64_t last_served_ns;
	double accept_acc;	/* failed accepts owed (< 0: made beyond) */
};

static void take_queued(struct rt_worker *w)
{
	int fds[64];
	size_t n;

	while ((n = rt_worker_take(w, fds, 64)))
		for (size_t i = 0; i < n; i++)
			rt_worker_adopt(w, fds[i]);
}

/* Returns the attempts that found no connection. */
static unsigned accept_some(struct rt_worker *w, int lfd, unsigned burst)
{
	bool again = true;
	unsigned i;

	for (i = 0; i < burst && again; i++)
		rt_worker_accept(w, lfd, &again);
	return again ? 0 : 1;
}

/* A round's accounting of the calls owed (model rates per request) and
 * made: the pace makes up a deficit while rounds are stretched (both
 * would overshoot); a loop that cannot go faster makes the failed
 * accepts it owes (the empty reads come in rt_conn_readable). */
static void settle(struct rt_worker *w, struct pacer *p, unsigned failed_accepts)
{
	uint64_t now = rt_now_ns(), served = w->t.served - p->round_served;

	p->accept_acc += rt_config.net.accept_again_per_request * (double)served - failed_accepts;
	if (served)
		p->last_served_ns = now;
	if (now - p->last_served_ns >= IDLE_NS) {
		if (w->t.again_acc < -RT_AGAIN_SURPLUS)
			w->t.again_acc = -RT_AGAIN_SURPLUS;
		if (p->accept_acc < -RT_AGAIN_SURPLUS)
			p->accept_acc = -RT_AGAIN_SURPLUS;
	}
	if (p->pace >= PACE_MIN_NS) {
		w->t.again_acc = w->t.again_acc > 0 ? 0 : w->t.again_acc;
		p->accept_acc = p->accept_acc > 0 ? 0 : p->accept_acc;
	}
	for (; p->accept_acc >= 1.0 && w->nlfd; p->accept_acc -= 1.0)
		accept_some(w, w->lfd[0], 1);
}

/* Rounds go half the error slower or faster (within 0.5 and 2 times):
 * damped, as fewer rounds also leave more requests for each to find. */
static void repace(struct pacer *p, const struct rt_thread *t)
{
	uint64_t served = t->served - p->served;
	double ratio;

	if (served < PACE_WINDOW)
		return;
	ratio = (double)(t->empty_reads - p->empty) /
		(rt_config.net.again_per_request * (double)served);
	ratio = (1 + (ratio > 3 ? 3 : ratio)) / 2;
	if (p->pace < PACE_MIN_NS)
		p->pace = ratio > 1 ? PACE_MIN_NS * ratio : 0;
	else
		p->pace = p->pace * ratio > PACE_MAX_NS ? PACE_MAX_NS : p->pace * ratio;
	p->served = t->served;
	p->empty = t->empty_reads;
}

static void spin_until(uint64_t end)
{
	while (rt_now_ns() < end && !rt_stopping())
		for (int i = 0; i < 16; i++)
			__builtin_ia32_pause();
}

void rt_net_busypoll_loop(struct rt_worker *w)
{
	bool paced = rt_config.net.again_per_request > 0;
	struct pacer p = { .last_served_ns = rt_now_ns() };

	while (rt_worker_running(w)) {
		uint64_t start = rt_now_ns();
		unsigned failed = 0;

		p.round_served = w->t.served;
		for (unsigned i = 0; i < w->nlfd; i++)
			failed += accept_some(w, w->lfd[i], rt_worker_accept_burst(w));
		take_queued(w);
		/* a dropped connection's slot takes the last one: look again */
		for (size_t i = 0; i < w->nconns;)
			i += rt_worker_service(w, w->conns[i], true, true);
		settle(w, &p, failed);
		if (paced)
			repace(&p, &w->t);
		if (p.pace >= PACE_MIN_NS)
			spin_until(start + (uint64_t)p.pace);
		else
			__builtin_ia32_pause();
	}
}
