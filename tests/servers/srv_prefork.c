/* SPDX-License-Identifier: MIT */
/*
 * srv_prefork: Apache-prefork style. The master opens the listen socket,
 * forks N single-threaded workers and then only waits. Every worker blocks
 * in accept() on the shared socket, serves that one connection with
 * blocking read()/write() until it closes, then accepts again. Per request
 * on a worker: 1 read, 1 write. The master forwards SIGTERM to the workers.
 */
#include "gt_common.h"	/* first: it defines _GNU_SOURCE */

#include <sys/prctl.h>
#include <sys/wait.h>

/* Read by the master's signal handler; 0 marks a reaped worker. */
static volatile pid_t kids[GT_MAX_THREADS];
static unsigned nkids;

/* The master has nothing to wake itself: forwarding from the handler
 * leaves no gap between a signal and the workers hearing of it. */
static void master_on_signal(int sig)
{
	int saved = errno;

	(void)sig;
	gt_stop = 1;
	for (unsigned i = 0; i < nkids; i++)
		if (kids[i] > 0)
			kill(kids[i], SIGTERM);
	errno = saved;
}

/* gt_conn_fd tells the handler which connection to shut down, so a stop
 * also ends a read() that is blocked mid-connection. */
static int worker(int lfd, unsigned max_seconds, const sigset_t *mask)
{
	struct gt_conn *c = gt_conn_new(-1);

	/* Our own guards: a killed master must not leave us running. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	gt_install_signals(gt_on_signal, max_seconds);
	sigprocmask(SIG_SETMASK, mask, NULL);
	if (!c)
		return 1;
	while (!gt_stop) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			gt_accept_error();
			continue;
		}
		gt_nodelay(fd);
		c->fd = fd;
		c->have = 0;
		gt_conn_fd = fd;
		if (!gt_stop)
			gt_serve_blocking(c);
		gt_conn_fd = -1;
		close(fd);
	}
	free(c);
	gt_close_listen(lfd);
	return 0;
}

/* Fork with the stop signals blocked: a worker must install its own
 * handler before any signal can reach it. */
static int spawn(int lfd, unsigned max_seconds, const sigset_t *mask)
{
	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		return -1;
	}
	if (pid == 0) {
		int rc = worker(lfd, max_seconds, mask);
		gt_response_free();
		exit(rc);
	}
	kids[nkids++] = pid;
	return 0;
}

/* Wait for every worker; one that dies on its own stops the rest. */
static int wait_all(void)
{
	int rc = 0;

	for (unsigned left = nkids; left;) {
		int st;
		pid_t pid = waitpid(-1, &st, 0);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			perror("waitpid");
			return 1;
		}
		for (unsigned i = 0; i < nkids; i++)
			if (kids[i] == pid)
				kids[i] = 0;
		left--;
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			rc = 1;
			if (!gt_stop)
				fprintf(stderr, "worker %d died unasked\n", (int)pid);
		}
		if (!gt_stop)
			master_on_signal(0);
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct gt_opts o;

	gt_parse(argc, argv, &o, 4);
	gt_response_init(o.response_bytes);
	int lfd = gt_listen(o.port, 0);
	gt_install_signals(master_on_signal, o.max_seconds);
	sigset_t old = gt_block_signals();
	while (nkids < o.threads && spawn(lfd, o.max_seconds, &old) == 0)
		;
	/* The workers hold the socket; the master never accepts. */
	gt_close_listen(lfd);
	if (nkids == o.threads)
		gt_ready();
	else
		gt_stop = 1;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (gt_stop)
		master_on_signal(0);
	int rc = wait_all();
	gt_response_free();
	return rc;
}
