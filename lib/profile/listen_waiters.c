/* SPDX-License-Identifier: MIT */
/*
 * Who accepts, when no accept happens in the window: a service whose
 * clients connected before the window (connection pools) accepts nothing
 * while it is profiled, yet its network model must not change with that.
 * So at the end of the window we look at what exists: which threads wait
 * on a listening socket, and mark them as accepting (TB_ACCEPTS), as if
 * they had accepted. A thread waits on a listening socket when
 *  - it is blocked in accept/accept4 on it (/proc/PID/task/TID/syscall:
 *    number and arguments of the call a blocked thread is in), or
 *  - the epoll set it waits on (the fd of the epoll_wait it is blocked in,
 *    else of the last one the collector saw it call) holds the socket
 *    with EPOLLIN (/proc/PID/fdinfo/EPFD lists the set: "tfd: N events:
 *    E ... ino: I"), or
 *  - it is blocked in poll/ppoll or select/pselect6 with the socket among
 *    the fds it waits to read (the array or bitmap read from
 *    /proc/PID/mem at the call's arguments).
 * A thread that served connections and is blocked in an event call whose
 * set holds no listener is marked TB_CONN_WAIT (netmodel.c: a sign of
 * serial connections). Sets are read as they are when the window ends; a poll or select loop
 * that is running at that moment is not seen (its set lives only in the
 * call), nor is an epoll set that changes role during the window.
 * Connections predating the window are followed by the collector already
 * (listen_ports), so who serves them is known from the window itself.
 * Reading another process's syscall, fdinfo and memory needs ptrace
 * access (root or CAP_SYS_PTRACE, as CPU windows do); without it nothing
 * is marked and netmodel.c falls back to the serving class.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "profile_int.h"

#define NR_POLL 7
#define NR_SELECT 23
#define NR_ACCEPT 43
#define NR_EPOLL_WAIT 232
#define NR_PSELECT6 270
#define NR_PPOLL 271
#define NR_EPOLL_PWAIT 281
#define NR_ACCEPT4 288
#define NR_EPOLL_PWAIT2 441

/* Enough for one process's listening sockets and a poll array's head. */
#define MAX_LISTENERS 64
#define MAX_POLLFDS 1024

struct listeners {
	pid_t tgid;
	struct proc_listener l[MAX_LISTENERS];
	size_t n;
};

static bool is_listener(const struct listeners *ls, unsigned long inode)
{
	for (size_t i = 0; inode && i < ls->n; i++)
		if (ls->l[i].inode == inode)
			return true;
	return false;
}

static bool fd_is_listener(const struct listeners *ls, int fd)
{
	return fd >= 0 && is_listener(ls, proc_fd_inode(ls->tgid, fd));
}

/* The call a blocked thread is in: its number and first three arguments
 * (-1 when it runs or is not in a system call). */
static long blocked_call(pid_t tgid, uint32_t tid, unsigned long long a[3])
{
	char path[96], line[512];
	long nr = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%u/syscall", (int)tgid, tid);
	if (!(f = fopen(path, "re")))
		return -1;
	if (!fgets(line, sizeof(line), f) ||
	    sscanf(line, "%ld %llx %llx %llx", &nr, &a[0], &a[1], &a[2]) != 4)
		nr = -1;
	fclose(f);
	return nr;
}

/* Whether the epoll set epfd of ls->tgid holds a listening socket for input. */
static bool epoll_holds_listener(const struct listeners *ls, int epfd)
{
	char path[96], line[256];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)ls->tgid, epfd);
	if (!(f = fopen(path, "re")))
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned int events;
		unsigned long ino;
		const char *p;
		int tfd;

		if (sscanf(line, "tfd: %d events: %x", &tfd, &events) != 2 ||
		    !(p = strstr(line, "ino:")) || sscanf(p, "ino:%lx", &ino) != 1)
			continue;
		found = (events & EPOLLIN) && is_listener(ls, ino);
	}
	fclose(f);
	return found;
}

static ssize_t read_mem(pid_t tgid, unsigned long long addr, void *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)tgid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = pread(fd, buf, len, (off_t)addr);
	close(fd);
	return n;
}

static bool poll_holds_listener(const struct listeners *ls, unsigned long long fds,
				unsigned long long nfds)
{
	struct pollfd p[MAX_POLLFDS];
	ssize_t got;

	if (nfds > MAX_POLLFDS)
		nfds = MAX_POLLFDS;
	got = read_mem(ls->tgid, fds, p, nfds * sizeof(p[0]));
	for (ssize_t i = 0; got > 0 && i < got / (ssize_t)sizeof(p[0]); i++)
		if ((p[i].events & POLLIN) && fd_is_listener(ls, p[i].fd))
			return true;
	return false;
}

static bool select_holds_listener(const struct listeners *ls, unsigned long long nfds,
				  unsigned long long readfds)
{
	fd_set set;

	if (!readfds || nfds > FD_SETSIZE)
		return false;
	FD_ZERO(&set);	/* only the first (nfds + 7) / 8 bytes are read */
	if (read_mem(ls->tgid, readfds, &set, (nfds + 7) / 8) != (ssize_t)((nfds + 7) / 8))
		return false;
	for (int fd = 0; fd < (int)nfds; fd++)
		if (FD_ISSET(fd, &set) && fd_is_listener(ls, fd))
			return true;
	return false;
}

/*
 * Whether the thread waits on a listening socket, and *how (the TB_ bit of
 * its multiplexing call, 0 for accept): a thread that made no call in the
 * window has no other record of its I/O model. *blocked: it is blocked in
 * that multiplexing call now (not its last epoll set, read instead).
 */
static bool waits_on_listener(const struct listeners *ls, const struct thread_rec *t,
			      uint32_t *how, bool *blocked)
{
	unsigned long long a[3] = { 0 };
	long nr = blocked_call(ls->tgid, t->tid, a);

	*how = 0;
	*blocked = nr == NR_EPOLL_WAIT || nr == NR_EPOLL_PWAIT || nr == NR_EPOLL_PWAIT2 ||
		   nr == NR_POLL || nr == NR_PPOLL || nr == NR_SELECT || nr == NR_PSELECT6;
	switch (nr) {
	case NR_ACCEPT:
	case NR_ACCEPT4:
		return fd_is_listener(ls, (int)a[0]);
	case NR_EPOLL_WAIT:
	case NR_EPOLL_PWAIT:
	case NR_EPOLL_PWAIT2:
		*how = TB_EPOLL;
		return epoll_holds_listener(ls, (int)a[0]);
	case NR_POLL:
	case NR_PPOLL:
		*how = TB_POLL;
		return poll_holds_listener(ls, a[0], a[1]);
	case NR_SELECT:
	case NR_PSELECT6:
		*how = TB_SELECT;
		return select_holds_listener(ls, a[0], a[1]);
	}
	/* Running, or in another call: the epoll set it last waited on. */
	*how = TB_EPOLL;
	return t->info.epfd > 0 && epoll_holds_listener(ls, t->info.epfd - 1);
}

/* Marks t from one look at its call; true once it is settled (blocked in
 * an event call, or not a server of connections). */
static bool mark_one(struct listeners *ls, struct thread_rec *t)
{
	uint32_t how;
	bool holds, blocked;

	if (t->info.exited_ns)
		return true;
	/* Threads of a process mostly come together in the map, but not
	 * always: re-reading a process's listeners is cheap. */
	if ((pid_t)t->info.tgid != ls->tgid) {
		ls->tgid = (pid_t)t->info.tgid;
		ls->n = proc_listeners(ls->tgid, ls->l, MAX_LISTENERS);
	}
	if (!ls->n)
		return true;
	holds = waits_on_listener(ls, t, &how, &blocked);
	if (holds && !(t->info.bits & TB_ACCEPTS)) {
		t->info.bits |= TB_ACCEPTS | TB_ACCEPT_WAIT | how;
		ditto_debug("thread %u waits on a listening socket: taken as accepting", t->tid);
	}
	/* a server of connections waiting on them alone (netmodel.c) */
	if (!holds && blocked && (t->info.bits & TB_CONN_IO))
		t->info.bits |= TB_CONN_WAIT;
	return blocked || !(t->info.bits & TB_CONN_IO);
}

/* A server under load is often running when looked at: its call is looked
 * at again, 5 ms apart (200 ms at most for all). Ten looks missed the one
 * sign of serial connections, a child waiting on its connection alone, in
 * one profile of four of a pre-forked Apache or its clone, whose children
 * are mostly busy under wrk. */
#define LOOKS 40
#define LOOK_GAP_NS 5000000

void listen_waiters_mark(struct snapshot *s)
{
	const struct timespec gap = { 0, LOOK_GAP_NS };
	struct listeners ls = { .tgid = -1 };
	bool *open = calloc(s->nthreads ? s->nthreads : 1, sizeof(*open));
	size_t left = 0;

	for (size_t i = 0; i < s->nthreads; i++) {
		bool settled = mark_one(&ls, &s->threads[i]);

		if (open && !settled) {
			open[i] = true;
			left++;
		}
	}
	for (int look = 1; open && left && look < LOOKS; look++) {
		nanosleep(&gap, NULL);
		for (size_t i = 0; i < s->nthreads; i++) {
			if (open[i] && mark_one(&ls, &s->threads[i])) {
				open[i] = false;
				left--;
			}
		}
	}
	free(open);
}
