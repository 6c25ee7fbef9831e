/* SPDX-License-Identifier: MIT */
/*
 * Why and how a clone process stops: SIGTERM/SIGINT, the --max-seconds
 * timer (SIGALRM) and the --max-requests count all end in rt_stop(), which
 * sets a flag and makes an eventfd readable that every event loop watches.
 */
#include "rt_int.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int rt_stop_fd = -1;
static pthread_t main_thread;
static atomic_bool main_known;
static atomic_int stopping;
static atomic_uint_fast64_t served_here, *served = &served_here;
static pid_t parent;		/* a child forked per connection: its parent */
static atomic_int failed;

void rt_stop(void)
{
	uint64_t one = 1;

	if (atomic_exchange(&stopping, 1))
		return;
	/* Never read back: the fd stays readable for every loop. */
	if (rt_stop_fd >= 0 && write(rt_stop_fd, &one, sizeof(one)) < 0) {
		/* nothing to do in a signal handler; the flag is set */
	}
	/* The main thread may be blocked in accept4(), which no eventfd
	 * wakes: a stop from another thread (--max-requests) kicks it. */
	if (atomic_load(&main_known) && !pthread_equal(pthread_self(), main_thread))
		pthread_kill(main_thread, SIGUSR1);
}

bool rt_stopping(void)
{
	return atomic_load_explicit(&stopping, memory_order_relaxed) != 0;
}

void rt_fail(void)
{
	atomic_store(&failed, 1);
	rt_stop();
}

bool rt_failed(void)
{
	return atomic_load(&failed) != 0;
}

void rt_stop_count_request(void)
{
	uint64_t n;

	if (!rt_opts.max_requests)
		return;
	n = atomic_fetch_add(served, 1) + 1;
	if (n < rt_opts.max_requests)
		return;
	rt_stop();
	if (parent > 0)
		kill(parent, SIGTERM);
}

static void on_stop_signal(int sig)
{
	int saved = errno;

	(void)sig;
	rt_stop();
	errno = saved;
}

/* SIGUSR1 only interrupts a blocking call (no SA_RESTART). */
static void on_kick(int sig)
{
	(void)sig;
}

static int handle(int sig, void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;	/* no SA_RESTART: blocked calls return EINTR */
	return sigaction(sig, &sa, NULL);
}

static int arm_deadline(double seconds)
{
	struct itimerval it;

	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = (time_t)seconds;
	it.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
	if (!it.it_value.tv_sec && !it.it_value.tv_usec)
		it.it_value.tv_usec = 1;
	return setitimer(ITIMER_REAL, &it, NULL);
}

void rt_stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGALRM);
}

int rt_stop_init(void)
{
	sigset_t set;

	main_thread = pthread_self();
	atomic_store(&main_known, true);
	rt_stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (rt_stop_fd < 0) {
		rt_err(errno, "eventfd for stopping");
		return -1;
	}
	if (handle(SIGTERM, on_stop_signal) || handle(SIGINT, on_stop_signal) ||
	    handle(SIGALRM, on_stop_signal) || handle(SIGUSR1, on_kick) || handle(SIGPIPE, SIG_IGN)) {
		rt_err(errno, "sigaction");
		return -1;
	}
	/* A pre-forked child starts with them blocked (see rt_prefork.c). */
	rt_stop_signals(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	if (rt_opts.max_seconds > 0 && arm_deadline(rt_opts.max_seconds)) {
		rt_err(errno, "setitimer for --max-seconds");
		return -1;
	}
	return 0;
}

int rt_stop_share_count(void)
{
	void *p = mmap(NULL, sizeof(*served), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED) {
		rt_err(errno, "a request count shared with the children");
		return -1;
	}
	served = p;
	atomic_init(served, atomic_load(&served_here));
	return 0;
}

/* The parent's eventfd is shared: a stop of the child's own must not
 * stop it (nor the other children). Interval timers are not inherited;
 * the parent's stop comes as SIGTERM. */
void rt_stop_child(pid_t p)
{
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	if (rt_stop_fd >= 0)
		close(rt_stop_fd);
	rt_stop_fd = fd;	/* -1: the loops see the flag alone */
	main_thread = pthread_self();
	parent = p;
}

void rt_stop_kick_join(pthread_t t, atomic_bool *done)
{
	const struct timespec slice = { 0, 5 * 1000 * 1000 };

	/* A kick can land just before the thread blocks: repeat until done. */
	while (!atomic_load(done)) {
		pthread_kill(t, SIGUSR1);
		nanosleep(&slice, NULL);
	}
	pthread_join(t, NULL);
}

/* Started threads inherit a mask with the stop signals blocked: the
 * process's stop signals reach its main thread, the one that may block
 * in accept4() (the others are kicked out of their calls with SIGUSR1).
 * So does SIGCHLD, which wakes a forking acceptor to reap. */
int rt_thread_start(pthread_t *t, void *(*fn)(void *), void *arg, const char *what)
{
	sigset_t set, old;
	int rc;

	rt_stop_signals(&set);
	sigaddset(&set, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	rc = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		rt_err(rc, "cannot start a %s thread", what);
	return rc ? -1 : 0;
}
