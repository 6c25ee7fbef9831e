/* SPDX-License-Identifier: MIT */
/*
 * Background thread classes: per entry `threads` threads that wake every
 * period_ns (absolute deadlines on CLOCK_MONOTONIC, so a late wake-up
 * does not drift) and keep the CPU busy for busy_ns. They wait on a
 * condition variable so that the stop wakes them at once, in slices of
 * clock_nanosleep, or in an event loop's call over the stop eventfd
 * (rt_wait.c); period 0 means they only wait for the stop. One thread of a class named "main" is the
 * process's main thread (rt_main_thread.c). A paced class (the serving
 * class woke it in the original) wakes every requests_per_wake requests
 * served instead, natively as under valgrind (see paced_wait).
 */
#include "rt_int.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond;
static atomic_bool quit;
static pthread_t *tids;
static unsigned ntids;
static bool simulated;	/* on valgrind: see rt_spin */
static bool pacing;	/* simulated, or a paced class: requests are counted */
/* Under valgrind: requests served, and the fewest a waiting thread waits
 * for (see paced_wait). */
static atomic_uint_fast64_t served, due = UINT64_MAX;

uint64_t rt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Whether the process runs under valgrind: its client request "running
 * on valgrind" (valgrind.h, x86-64), a no-op that leaves 0 natively. The
 * sequence is spelled out so that clones build without valgrind's headers.
 */
static bool on_valgrind(void)
{
#if defined(__x86_64__)
	volatile unsigned long args[6] = { 0x1001 };
	unsigned long res = 0;

	__asm__ volatile("rolq $3, %%rdi; rolq $13, %%rdi; rolq $61, %%rdi; rolq $51, %%rdi\n\t"
			 "xchgq %%rbx, %%rbx"
			 : "=d"(res)
			 : "a"(&args[0]), "0"(res)
			 : "cc", "memory");
	return res != 0;
#else
	return false;
#endif
}

/* Arithmetic the compiler cannot drop; the clock (vDSO, no system call)
 * is read every 64 rounds. Under valgrind busy_ns stands for no amount
 * of work: a spin by the clock executes what the simulator manages in
 * that time, and as wake-ups come at wall-clock periods while requests
 * take some 50 times longer, the spin's share of the instructions per
 * request follows the host's noise (runs of one clone differed by 25%).
 * There a wake-up does no busy work; its system calls stay. */
void rt_spin(uint64_t ns)
{
	uint64_t end = rt_now_ns() + ns;
	volatile uint64_t x = 1;

	if (simulated)
		return;
	while (!atomic_load_explicit(&quit, memory_order_relaxed) && !rt_stopping()) {
		for (int i = 0; i < 64; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		if (rt_now_ns() >= end)
			break;
	}
}

const struct rt_background *rt_background_main(void)
{
	for (unsigned i = 0; i < rt_config.nbackground; i++)
		if (rt_config.background[i].threads && rt_config.background[i].name &&
		    !strcmp(rt_config.background[i].name, "main"))
			return &rt_config.background[i];
	return NULL;
}

/* The process is stopping (rt_stop) or the threads are told to end.
 * Leaving at the stop itself matters: between rt_stop and
 * rt_background_stop (after the serving threads are joined) the loop
 * below would go round without sleeping or spinning, and under valgrind
 * its threads would starve those that end the process. */
static bool bg_done(void)
{
	return atomic_load(&quit) || rt_stopping();
}

/* clock_nanosleep to an absolute deadline, in slices of at most 100 ms
 * so that a stop is seen within one slice. */
static void sleep_until(uint64_t deadline)
{
	const uint64_t slice = 100000000ull;

	while (!bg_done()) {
		uint64_t now = rt_now_ns(), to = deadline - now > slice ? now + slice : deadline;
		struct timespec ts = { (time_t)(to / 1000000000ull), (long)(to % 1000000000ull) };

		if (now >= deadline)
			return;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
}

/*
 * Under valgrind a wake-up at wall-clock periods comes some 50 times as
 * often per request as natively, and how often follows the host's load:
 * the wake-ups' cold code made up about a quarter of a memcached clone's
 * I1 misses, and its I1 rate moved by 4% between runs of one binary.
 * There each thread of a class wakes every requests_per_wake served
 * requests, as natively per request, whatever the simulator's speed; the
 * server thread that serves the request it waits for signals it alone.
 * A paced class (rt.h) is woken so natively too: the original's serving
 * class woke it, so its wake-ups, futex calls and CPU time per request
 * hold at any load and at any speed of the clone.
 */
struct bg_thread {
	const struct rt_background *b;
	_Atomic uint64_t target;	/* paced: the served count it waits for */
	struct rt_doze doze;	/* paced: where it sleeps until its target */
	double futex_acc;	/* futex calls owed (futex_per_wake), fraction kept */
	double eventfd_acc;	/* eventfd writes owed (eventfd_per_wake) */
	uint32_t word;		/* what they wake (nobody waits on it) */
	struct rt_replayer *replay;	/* its class's calls, NULL without */
	struct rt_rng rng;
};

static bool paced(const struct rt_background *b)
{
	return b->requests_per_wake && (simulated || b->paced);
}

/* The class's own futex calls, eventfd writes and other calls of a
 * wake-up (unlocked). */
static void wake_calls(struct bg_thread *t)
{
	if (t->replay)
		rt_replay_run(t->replay, &t->rng);
	t->futex_acc += t->b->futex_per_wake;
	for (; t->futex_acc >= 1; t->futex_acc -= 1)
		syscall(SYS_futex, &t->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	t->eventfd_acc += t->b->eventfd_per_wake;
	for (; t->eventfd_acc >= 1; t->eventfd_acc -= 1)
		rt_eventfd_call(true);
}
static struct bg_thread *bgs;

/* A paced thread dozes (rt_doze.c): one futex call per wake-up here and
 * one in the server that reached its target, as a pool's hand-off makes. */
static void sleep_until_served(struct bg_thread *t, uint64_t target)
{
	while (!bg_done()) {
		uint32_t seq = rt_doze_prepare(&t->doze);

		if (atomic_load(&served) >= target || bg_done()) {
			rt_doze_cancel(&t->doze);
			break;
		}
		rt_doze_wait(&t->doze, seq);
	}
}

/* Called with the lock held, returns without it. `due` is lowered before
 * `served` is read: a server thread that counts the target request then
 * sees it. */
static void paced_wait(struct bg_thread *t)
{
	uint64_t target = t->target;

	if (target < atomic_load(&due))
		atomic_store(&due, target);
	pthread_mutex_unlock(&lock);
	sleep_until_served(t, target);
}

void rt_background_served(void)
{
	uint64_t n, next = UINT64_MAX;

	if (!pacing || (n = atomic_fetch_add(&served, 1) + 1) < atomic_load(&due))
		return;
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < ntids; i++) {
		uint64_t target = atomic_load(&bgs[i].target);

		if (paced(bgs[i].b) && target > n && target < next)
			next = target;
	}
	atomic_store(&due, next);	/* a woken thread sets its next target */
	pthread_mutex_unlock(&lock);
	/* woken once the lock is free: each takes it after its work, and
	 * would otherwise wait for it at once (a futex call each side) */
	for (unsigned i = 0; i < ntids; i++)
		if (paced(bgs[i].b) && atomic_load(&bgs[i].target) <= n)
			rt_doze_wake(&bgs[i].doze);
}

/* A class that waited in an event loop's call: the same wait, unlocked. */
static void event_wait(const struct rt_background *b, int ep, uint64_t deadline)
{
	pthread_mutex_unlock(&lock);
	rt_wait_until(b->wait, ep, deadline, bg_done);
	pthread_mutex_lock(&lock);
}

static void *bg_main(void *arg)
{
	struct bg_thread *t = arg;
	const struct rt_background *b = t->b;
	uint64_t next = rt_now_ns();
	int ep = rt_wait_open(b->wait);

	/* without its replay state (a message said why) it still wakes */
	if (b->ncalls)
		t->replay = rt_replay_new_for(b->calls, b->ncalls);

	pthread_mutex_lock(&lock);
	while (!bg_done()) {
		struct timespec ts;

		if (paced(b)) {
			/* the lock is taken again after the work, not at the
			 * wake-up: the server that woke it may still hold it */
			paced_wait(t);
			if (!bg_done()) {
				rt_spin(b->busy_ns);	/* none under valgrind */
				wake_calls(t);
			}
			pthread_mutex_lock(&lock);
			t->target += b->requests_per_wake;
			continue;
		}
		if (!b->period_ns && b->wait) {
			event_wait(b, ep, 0);
			continue;
		}
		if (!b->period_ns) {
			pthread_cond_wait(&cond, &lock);
			continue;
		}
		next += b->period_ns;
		ts.tv_sec = (time_t)(next / 1000000000ull);
		ts.tv_nsec = (long)(next % 1000000000ull);
		if (b->wait) {
			event_wait(b, ep, next);
		} else if (b->sleeps) {
			pthread_mutex_unlock(&lock);
			sleep_until(next);
			pthread_mutex_lock(&lock);
		}
		while (!b->sleeps && !b->wait && !bg_done() &&
		       pthread_cond_timedwait(&cond, &lock, &ts) != ETIMEDOUT)
			;
		if (bg_done())
			break;
		pthread_mutex_unlock(&lock);
		rt_spin(b->busy_ns);
		wake_calls(t);
		pthread_mutex_lock(&lock);
		/* behind schedule: the next period starts now, no burst */
		if (next < rt_now_ns())
			next = rt_now_ns();
	}
	pthread_mutex_unlock(&lock);
	if (ep >= 0)
		close(ep);
	rt_replay_free(t->replay);
	return NULL;
}

int rt_background_start(void)
{
	pthread_condattr_t attr;
	unsigned total = 0;

	simulated = on_valgrind();
	pacing = simulated;
	for (unsigned i = 0; i < rt_config.nbackground; i++)
		pacing |= paced(&rt_config.background[i]);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&cond, &attr);
	pthread_condattr_destroy(&attr);
	for (unsigned i = 0; i < rt_config.nbackground; i++)
		total += rt_config.background[i].threads;
	total -= rt_background_main() ? 1 : 0;
	if (!total)
		return 0;
	tids = calloc(total, sizeof(*tids));
	bgs = calloc(total, sizeof(*bgs));
	if (!tids || !bgs) {
		rt_err(ENOMEM, "%u background threads", total);
		return -1;
	}
	for (unsigned i = 0; i < rt_config.nbackground; i++) {
		const struct rt_background *b = &rt_config.background[i];

		/* the main thread plays one of "main" (rt_main_thread.c) */
		for (unsigned k = b == rt_background_main(); k < b->threads; k++) {
			struct bg_thread *t = &bgs[ntids];

			/* paced: the class's threads wake staggered */
			*t = (struct bg_thread){ .b = b,
						 .target = b->requests_per_wake * (k + 1) / b->threads };
			rt_rng_seed(&t->rng, rt_config.seed, RT_BG_STREAMS | ntids);
			if (rt_thread_start(&tids[ntids], bg_main, t, "background"))
				return -1;
			ntids++;
		}
	}
	return 0;
}

void rt_background_stop(void)
{
	pthread_mutex_lock(&lock);
	atomic_store(&quit, true);
	pthread_cond_broadcast(&cond);
	for (unsigned i = 0; i < ntids; i++)
		rt_doze_wake(&bgs[i].doze);
	pthread_mutex_unlock(&lock);
	for (unsigned i = 0; i < ntids; i++)
		pthread_join(tids[i], NULL);
	pthread_mutex_lock(&lock);	/* rt_background_served() reads ntids */
	free(tids);
	free(bgs);
	tids = NULL;
	bgs = NULL;
	ntids = 0;
	pthread_mutex_unlock(&lock);
}
