/* SPDX-License-Identifier: MIT */
/*
 * processes > 1: the parent forks the processes after opening the listen
 * sockets, says "ready" once all of them are serving (each writes a byte
 * on a pipe), forwards SIGTERM/SIGINT to them and waits for all.
 * --max-seconds and --max-requests apply to each process on its own. A
 * process that fails stops the others; the parent exits 1 then.
 */
#include "rt_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t *children;
static unsigned nchildren;
static volatile sig_atomic_t forwarded;

/* Only interrupts the parent's wait (no SA_RESTART). */
static void on_child(int sig)
{
	(void)sig;
}

static void forward(int sig)
{
	int saved = errno;

	(void)sig;
	forwarded = 1;
	for (unsigned i = 0; i < nchildren; i++)
		if (children[i] > 0)
			kill(children[i], SIGTERM);
	errno = saved;
}

static void stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
}

static int install_forward(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	stop_signals(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL))
		return -1;
	sa.sa_handler = on_child;
	sa.sa_flags = SA_NOCLDSTOP;
	return sigaction(SIGCHLD, &sa, NULL) ? -1 : 0;
}

/* In the child: keep only this process's listen sockets. */
static void child(const int *lfd, unsigned nlfd, unsigned p, unsigned procs, const int *ready)
{
	unsigned per = nlfd / procs, first = nlfd == 1 ? 0 : p * per, n = nlfd == 1 ? 1 : per;
	int rc;

	for (unsigned i = 0; i < nlfd; i++)
		if (i < first || i >= first + n)
			close(lfd[i]);
	close(ready[0]);
	rt_ready_fd = ready[1];
	rt_share_enter(p);
	/* rt_stop_init() installs the child's handlers, then unblocks */
	rc = rt_process_run(lfd + first, n, p);
	rt_share_leave(p);
	exit(rc ? 1 : 0);
}

/* Notes the exit of pid; false if it failed (the others are stopped). */
static bool reaped(pid_t pid, int st)
{
	for (unsigned i = 0; i < nchildren; i++)
		if (children[i] == pid) {
			children[i] = 0;
			rt_share_leave(i);	/* killed before it could say so */
		}
	if (WIFEXITED(st) && !WEXITSTATUS(st))
		return true;
	forward(SIGTERM);
	return false;
}

/* One byte per child once it serves; false if one exits before. */
static bool wait_ready(int fd, unsigned *exited, bool *ok)
{
	unsigned got = 0;

	while (got < nchildren) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char buf[64];
		int st;
		pid_t pid;
		ssize_t n;

		if (poll(&p, 1, 100) > 0 && (n = read(fd, buf, sizeof(buf))) > 0)
			got += (unsigned)n;
		while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
			(*exited)++;
			*ok = reaped(pid, st) && *ok;
		}
		if (*exited)	/* stopped or failed before all were serving */
			return false;
	}
	return true;
}

/* The master's wake-up: its call with its period as timeout (SIGCHLD and
 * the stop signals cut it short), its CPU time, then a look at the
 * children; a stopping parent looks every 100 ms. */
static int parent_wake(int ep)
{
	const struct rt_background *p = &rt_config.parent;
	uint64_t ms = (p->period_ns + 999999) / 1000000;

	if (forwarded && ms > 100)
		ms = 100;
	rt_wait_once(p->wait, ep, ms > 1000000 ? 1000000 : (int)ms);
	rt_spin(p->busy_ns);
	return WNOHANG;
}

static bool wait_all(unsigned exited, bool ok)
{
	bool paced = rt_config.parent.wait && rt_config.parent.period_ns;
	int ep = paced ? rt_wait_open(rt_config.parent.wait) : -1;

	while (exited < nchildren) {
		int st;
		pid_t pid = waitpid(-1, &st, paced ? parent_wake(ep) : 0);

		if (pid == 0 || (pid < 0 && errno == EINTR))
			continue;
		if (pid < 0)
			break;
		exited++;
		ok = reaped(pid, st) && ok;
	}
	if (ep >= 0)
		close(ep);
	return ok;
}

/* Event loops that accept for themselves on one shared socket balance
 * their connections (rt_share.c: the gate is in their loops). */
static bool balanced(unsigned procs, unsigned nlfd)
{
	enum rt_io io = rt_config.io;

	return procs > 1 && nlfd == 1 && !rt_config.fork_per_connection &&
	       !rt_config.serial_connections && !rt_config.accept_dispatch &&
	       (io == RT_IO_EPOLL || io == RT_IO_POLL || io == RT_IO_SELECT);
}

int rt_prefork_run(const int *lfd, unsigned nlfd)
{
	unsigned procs = rt_config.processes ? rt_config.processes : 1, exited = 0;
	int ready[2];
	sigset_t set, old;
	bool ok = true;

	children = calloc(procs, sizeof(*children));
	if (!children || install_forward()) {
		rt_err(children ? errno : ENOMEM, "setting up %u processes", procs);
		free(children);
		return -1;
	}
	if (balanced(procs, nlfd) && rt_share_init(procs)) {
		free(children);
		return -1;
	}
	if (pipe2(ready, O_CLOEXEC)) {
		rt_err(errno, "setting up %u processes", procs);
		free(children);
		return -1;
	}
	/* blocked while forking: a child must not run the parent's handler */
	stop_signals(&set);
	sigprocmask(SIG_BLOCK, &set, &old);
	for (unsigned p = 0; p < procs; p++) {
		pid_t pid = fork();

		if (pid == 0)
			child(lfd, nlfd, p, procs, ready);
		if (pid < 0) {
			rt_err(errno, "fork");
			ok = false;
			break;
		}
		children[nchildren++] = pid;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(ready[1]);
	for (unsigned i = 0; i < nlfd; i++)
		close(lfd[i]);
	if (!ok)
		forward(SIGTERM);
	else if (wait_ready(ready[0], &exited, &ok))
		rt_announce_ready();
	close(ready[0]);
	ok = wait_all(exited, ok);
	free(children);
	return ok ? 0 : -1;
}
