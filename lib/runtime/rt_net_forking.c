/* SPDX-License-Identifier: MIT */
/*
 * A process per connection, as PostgreSQL's postmaster forks a backend:
 * the main thread waits for the listen socket the way the original's
 * acceptor did (rt_config.accept_wait), accepts, and forks. The child
 * keeps only the connection and serves it on its one thread, with the
 * event loop of rt_config.io or with blocking reads, and exits when the
 * client closes it; fork copies no other thread, so the background
 * classes run once, in the parent, where they lived. SIGCHLD interrupts
 * the parent's wait (other threads block it) and it reaps, as the
 * postmaster does; at its stop it sends each child SIGTERM and waits.
 * SIGCHLD is blocked but in the wait itself (pselect, ppoll, epoll_pwait):
 * unblocked throughout, a child that ended after the parent reaped and
 * before it waited again stayed a zombie until the next connection (two
 * clients that leave at once).
 * Past MAX_CHILDREN live children a new connection is closed at once.
 */
#include "rt_int.h"
#include "rt_otlp.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CHILDREN 1024

static pid_t kids[MAX_CHILDREN];
static unsigned nkids;

/* Only interrupts the wait (no SA_RESTART). */
static void on_child(int sig)
{
	(void)sig;
}

/* The handler, SIGCHLD blocked; *chld: SIGCHLD alone, *during: the mask
 * of the waits (this thread's without SIGCHLD). */
static int catch_children(sigset_t *chld, sigset_t *during)
{
	struct sigaction sa = { .sa_handler = on_child, .sa_flags = SA_NOCLDSTOP };

	sigemptyset(&sa.sa_mask);
	sigemptyset(chld);
	sigaddset(chld, SIGCHLD);
	if (sigaction(SIGCHLD, &sa, NULL) || pthread_sigmask(SIG_BLOCK, chld, during)) {
		rt_err(errno, "SIGCHLD");
		return -1;
	}
	sigdelset(during, SIGCHLD);
	return 0;
}

/* ---- the child ---- */

/* One thread's state for its one connection, served with blocking calls
 * or with the io's loop. */
static void serve(int fd, uint64_t stream)
{
	struct rt_worker w;

	if (rt_worker_init_one(&w, stream))
		rt_conn_cap_close_fd(fd);
	else if (rt_config.io == RT_IO_BLOCKING)
		rt_conn_serve_blocking_fd(fd, &w.t);
	else
		rt_worker_serve_one(&w, fd);
	rt_worker_fini_one(&w);
}

static void child(int fd, int lfd, int epfd, pid_t parent, uint64_t stream)
{
	close(lfd);
	if (epfd >= 0)
		close(epfd);
	signal(SIGCHLD, SIG_DFL);
	rt_stop_child(parent);
	rt_otlp_forked();	/* the parent's exporter thread is not here */
	serve(fd, stream);
	/* not exit(): the parent's scratch file and stdio are its own */
	_exit(rt_failed() ? 1 : 0);
}

/* ---- the parent ---- */

/* Forgets pid; false if it failed (it printed why). */
static bool forget(pid_t pid, int st)
{
	for (unsigned i = 0; i < nkids; i++) {
		if (kids[i] == pid) {
			kids[i] = kids[--nkids];
			break;
		}
	}
	return (WIFEXITED(st) && !WEXITSTATUS(st)) ||
	       (WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
}

static void reap(int flags)
{
	pid_t pid;
	int st;

	while (nkids && ((pid = waitpid(-1, &st, flags)) > 0 || (pid < 0 && errno == EINTR))) {
		if (pid > 0 && !forget(pid, st)) {
			rt_err(0, "the process of a connection failed");
			rt_fail();
		}
	}
}

static void spawn(int fd, int lfd, int epfd, uint64_t stream)
{
	pid_t parent = getpid(), pid;

	if (nkids == MAX_CHILDREN) {	/* refused, not left waiting */
		rt_conn_cap_close_fd(fd);
		return;
	}
	pid = fork();
	if (pid == 0)
		child(fd, lfd, epfd, parent, stream);
	if (pid < 0)
		rt_err(errno, "fork for a connection");
	else
		kids[nkids++] = pid;
	rt_conn_cap_close_fd(fd);	/* the child's now */
}

int rt_net_forking_run(int lfd, unsigned proc)
{
	int flags = SOCK_CLOEXEC | (rt_config.io == RT_IO_BLOCKING ? 0 : SOCK_NONBLOCK);
	int epfd = rt_acceptor_epoll(lfd);
	uint64_t seq = 0;
	sigset_t chld, during;

	if ((rt_opts.max_requests && rt_stop_share_count()) || catch_children(&chld, &during))
		return -1;
	rt_announce_ready();
	while (!rt_stopping()) {
		bool waited = rt_acceptor_wait_sig(lfd, epfd, &during);
		int fd;

		reap(WNOHANG);
		if (rt_stopping())
			break;
		/* a blocking accept4() is the wait: SIGCHLD interrupts it */
		if (!waited)
			pthread_sigmask(SIG_SETMASK, &during, NULL);
		fd = rt_conn_cap_accept(lfd, flags);
		if (!waited)
			pthread_sigmask(SIG_BLOCK, &chld, NULL);
		if (fd >= 0)
			spawn(fd, lfd, epfd, (uint64_t)proc << 32 | (1u << 30) | seq++);
		else if (!rt_conn_cap_goes_on(errno)) {
			rt_err(errno, "accept");
			rt_fail();
		}
	}
	for (unsigned i = 0; i < nkids; i++)
		kill(kids[i], SIGTERM);
	reap(0);
	if (epfd >= 0)
		close(epfd);
	return 0;
}
