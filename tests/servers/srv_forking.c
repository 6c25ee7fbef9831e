/* SPDX-License-Identifier: MIT */
/*
 * srv_forking: a process per connection, PostgreSQL's postmaster shape.
 * The master opens the listen socket, waits for it in select(), accepts
 * and forks one child per connection; it never serves. The child closes
 * the listen socket and serves its one connection with a level-triggered
 * epoll loop (epoll_wait, then one read and one write per request) until
 * the client closes it, then exits. Per request on a child: 1 read,
 * 1 write, 1 epoll_wait.
 *
 * The master keeps its stop signals and SIGCHLD blocked except while it
 * waits: it waits with pselect() (glibc's select() is the same syscall,
 * pselect6), whose mask lets them in, so a child that exits interrupts
 * the wait and is reaped at once, and a stop cannot slip in between the
 * test of gt_stop and the wait. On a stop (SIGTERM/SIGINT, or after
 * --max-seconds) it sends SIGTERM to every live child, waits for them and
 * exits 0 (1 if a child failed). Children die with the master
 * (PR_SET_PDEATHSIG). Past MAX_KIDS live children a new connection is
 * closed at once.
 */
#include "gt_common.h"	/* first: it defines _GNU_SOURCE */

#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/wait.h>

#define MAX_KIDS 1024

/* Live children; only the master's main code touches it. */
static pid_t kids[MAX_KIDS];
static unsigned nkids;
static int kids_failed;
/* The children's parent, for them to check that it is still alive. */
static pid_t master;

/* The master's handlers run only inside pselect(): they need not wake
 * anything, the wait returns EINTR. */
static void master_on_signal(int sig)
{
	(void)sig;
	gt_stop = 1;
}

static void master_on_child(int sig)
{
	(void)sig;
}

/* ---- the child ---- */

/* Level-triggered, one connection: a wakeup is one read (or the rest of
 * a response too large for the socket buffer), then its answers. */
static int serve(int ep, struct gt_conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
		perror("epoll_ctl");
		return 1;
	}
	while (!gt_stop) {
		int n = epoll_wait(ep, &ev, 1, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("epoll_wait");
			return 1;
		}
		if (n == 0)
			continue;
		enum gt_state st = gt_step(c);
		if (st == GT_CLOSE)
			break;
		int want_out = st == GT_WANT_WRITE;
		if (want_out != c->aux) {
			c->aux = want_out;
			ev.events = want_out ? EPOLLOUT : EPOLLIN;
			if (epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) < 0)
				break;
		}
	}
	return 0;
}

/* Runs with every signal the master handles blocked, as fork left it:
 * the child's own handlers are in place before any can reach it. */
static void child(int lfd, int fd, struct gt_conn *c, unsigned max_seconds,
		  const sigset_t *mask)
{
	int rc = 1, ep;

	/* A killed master must not leave us running; if it died before
	 * the prctl, no signal is coming: leave now. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != master)
		_exit(1);
	gt_close_listen(lfd);
	signal(SIGCHLD, SIG_DFL);
	gt_install_signals(gt_on_signal, max_seconds);
	/* The handler shuts the connection down: epoll reports it, and the
	 * read that follows ends the loop. */
	gt_conn_fd = fd;
	sigprocmask(SIG_SETMASK, mask, NULL);
	c->fd = fd;
	gt_nodelay(fd);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		perror("epoll_create1");
	else
		rc = serve(ep, c);
	gt_conn_fd = -1;
	close(fd);
	if (ep >= 0)
		close(ep);
	free(c);
	gt_response_free();
	/* Not exit(): stdio's buffers are the master's (empty, but its). */
	_exit(rc);
}

/* ---- the master ---- */

static void forget(pid_t pid, int st)
{
	for (unsigned i = 0; i < nkids; i++) {
		if (kids[i] == pid) {
			kids[i] = kids[--nkids];
			break;
		}
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		kids_failed = 1;
		fprintf(stderr, "child %d failed (status %#x)\n", (int)pid, st);
	}
}

/* Reap what has exited; with flags 0, wait for every child. */
static void reap(int flags)
{
	int st;
	pid_t pid;

	while (nkids && (pid = waitpid(-1, &st, flags)) != 0) {
		if (pid > 0)
			forget(pid, st);
		else if (errno != EINTR) {
			perror("waitpid");
			nkids = 0;
		}
	}
}

static void spawn(int lfd, int fd, struct gt_conn *c, unsigned max_seconds,
		  const sigset_t *mask)
{
	pid_t pid;

	if (nkids == MAX_KIDS) {
		fprintf(stderr, "%u connections already: refused\n", nkids);
		close(fd);
		return;
	}
	pid = fork();
	if (pid == 0)
		child(lfd, fd, c, max_seconds, mask);
	if (pid < 0)
		perror("fork");
	else
		kids[nkids++] = pid;
	close(fd);	/* the child's now */
}

static void loop(int lfd, struct gt_conn *c, unsigned max_seconds, const sigset_t *mask)
{
	while (!gt_stop) {
		fd_set rd;

		FD_ZERO(&rd);
		FD_SET(lfd, &rd);
		int n = pselect(lfd + 1, &rd, NULL, NULL, NULL, mask);
		reap(WNOHANG);
		if (n < 0) {
			if (errno != EINTR) {
				perror("select");
				return;
			}
			continue;
		}
		if (gt_stop || !FD_ISSET(lfd, &rd))
			continue;
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			gt_accept_error();
		else
			spawn(lfd, fd, c, max_seconds, mask);
	}
}

int main(int argc, char **argv)
{
	struct gt_opts o;
	struct sigaction sa = { .sa_handler = master_on_child, .sa_flags = SA_NOCLDSTOP };
	sigset_t blocked, waiting;

	gt_parse(argc, argv, &o, 0);
	master = getpid();
	gt_response_init(o.response_bytes);
	/* Non-blocking: a connection reset between select and accept must
	 * not leave the master stuck in accept. */
	int lfd = gt_listen(o.port, 1);
	/* One buffer, copied on write into each child. */
	struct gt_conn *c = gt_conn_new(-1);
	if (!c)
		return 1;
	/* Blocked from here on but in the wait, which has them all in. */
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGCHLD);
	sigaddset(&blocked, SIGTERM);
	sigaddset(&blocked, SIGINT);
	sigaddset(&blocked, SIGALRM);
	sigprocmask(SIG_BLOCK, &blocked, &waiting);
	sigdelset(&waiting, SIGCHLD);
	sigdelset(&waiting, SIGTERM);
	sigdelset(&waiting, SIGINT);
	sigdelset(&waiting, SIGALRM);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	gt_install_signals(master_on_signal, o.max_seconds);
	gt_ready();
	loop(lfd, c, o.max_seconds, &waiting);
	gt_close_listen(lfd);
	for (unsigned i = 0; i < nkids; i++)
		kill(kids[i], SIGTERM);
	reap(0);
	free(c);
	gt_response_free();
	return kids_failed;
}
