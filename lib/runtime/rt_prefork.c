/* SPDX-License-Identifier: MIT */
/*
 * processes > 1: the parent forks the processes after opening the listen
 * sockets, says "ready" once, forwards SIGTERM/SIGINT to them and waits
 * for all. --max-seconds and --max-requests apply to each process on its
 * own. A process that fails stops the others; the parent exits 1 then.
 */
#include "rt_int.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t *children;
static unsigned nchildren;

static void forward(int sig)
{
	int saved = errno;

	(void)sig;
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
	return sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL) ? -1 : 0;
}

/* In the child: keep only this process's listen sockets. */
static void child(const int *lfd, unsigned nlfd, unsigned p, unsigned procs)
{
	unsigned per = nlfd / procs, first = nlfd == 1 ? 0 : p * per, n = nlfd == 1 ? 1 : per;

	for (unsigned i = 0; i < nlfd; i++)
		if (i < first || i >= first + n)
			close(lfd[i]);
	/* rt_stop_init() installs the child's handlers, then unblocks */
	exit(rt_process_run(lfd + first, n, p, false) ? 1 : 0);
}

/* Waits for every child; false if one failed (the others are stopped). */
static bool wait_all(void)
{
	unsigned left = nchildren;
	bool ok = true;

	while (left) {
		int st;
		pid_t pid = waitpid(-1, &st, 0);

		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0)
			break;
		for (unsigned i = 0; i < nchildren; i++)
			if (children[i] == pid)
				children[i] = 0;
		left--;
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			ok = false;
			forward(SIGTERM);
		}
	}
	return ok;
}

int rt_prefork_run(const int *lfd, unsigned nlfd)
{
	unsigned procs = rt_config.processes;
	sigset_t set, old;
	bool ok = true;

	children = calloc(procs, sizeof(*children));
	if (!children || install_forward()) {
		rt_err(children ? errno : ENOMEM, "setting up %u processes", procs);
		return -1;
	}
	/* blocked while forking: a child must not run the parent's handler */
	stop_signals(&set);
	sigprocmask(SIG_BLOCK, &set, &old);
	for (unsigned p = 0; p < procs; p++) {
		pid_t pid = fork();

		if (pid == 0)
			child(lfd, nlfd, p, procs);
		if (pid < 0) {
			rt_err(errno, "fork");
			ok = false;
			break;
		}
		children[nchildren++] = pid;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	for (unsigned i = 0; i < nlfd; i++)
		close(lfd[i]);
	if (ok)
		rt_announce_ready();
	else
		forward(SIGTERM);
	ok = wait_all() && ok;
	free(children);
	return ok ? 0 : -1;
}
