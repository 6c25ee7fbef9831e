/* SPDX-License-Identifier: MIT */
/*
 * Connections capped below the process's descriptor limit, so that a
 * clone holding many idle connections keeps serving new clients instead
 * of failing every accept with EMFILE (and spinning on a level-triggered
 * listener that stays readable).
 *
 * At startup the soft RLIMIT_NOFILE is raised to the hard one (as
 * memcached does) and the cap derived from it: the limit (FD_SETSIZE at
 * most for select) minus what the process holds besides connections (the
 * descriptors open now: standard streams, listen sockets, stop eventfd,
 * scratch file, the reserve below; per serving thread its set and hand-over
 * eventfd and the replay's descriptors; the acceptor's and the main
 * thread's sets; a margin), over what one connection costs (its socket,
 * and in the blocking skeleton its own thread's replay descriptors).
 *
 * Every accept of the process goes through rt_conn_cap_accept(). Past the
 * cap, the least recently active idle connection of the process (no
 * request in progress), whichever thread owns it or is yet to adopt it, is
 * shut down under the registry's lock: its thread reads EOF and drops it
 * as if the client had left, and takes the same lock before it closes (so
 * a shutdown never hits a reused number). A request that arrives just then is lost, as at a
 * keep-alive timeout. With none idle the new connection is closed at
 * once: refused, never left waiting in the backlog. Idleness is stamped
 * by each connection's own thread with no lock and no system call.
 *
 * Out of descriptors all the same (connections shut down for room not
 * closed yet, the system's table full), a reserve descriptor is closed to
 * take the pending connection and close it, then reopened.
 */
#include "rt_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Room for connections shut down for room until their threads close them
 * (an epoll wake-up accepts up to 32) and for the odd passing descriptor. */
#define MARGIN 32
#define PAUSE_NS (10 * 1000 * 1000)
/* Descriptors whose accept is stamped (higher ones: at their adoption). */
#define BORN_MAX (1u << 20)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct rt_conn **reg;	/* connections that may be shut down when idle */
static size_t nreg, regcap;
static size_t nopen;		/* accepted sockets not closed yet */
static size_t nshut;		/* of them shut down for room */
static size_t cap = SIZE_MAX;	/* no cap before rt_conn_cap_init() */
static rlim_t limit;
static bool told;
/* When each descriptor was accepted, while no thread has adopted it yet:
 * a connection is idle since then until its first request, in accept
 * order even when its thread adopts it later (a blocking skeleton's thread
 * starts in its own time, an epoll thread takes a batch from its queue).
 * Such a pending one is the oldest idle of all on a loaded host, so it is
 * shut down like a registered one: SHUT marks it until its thread adopts
 * it (and reads EOF) or closes it. Stamps are odd, SHUT is even. */
#define SHUT 2
static uint64_t *born;
static size_t nborn;
static size_t born_top;		/* above the highest number stamped */

static pthread_mutex_t reserve_lock = PTHREAD_MUTEX_INITIALIZER;
static int reserve = -1;

/* ---- the cap ---- */

static rlim_t raise_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 1024;
	if (rl.rlim_cur < rl.rlim_max) {
		rlim_t soft = rl.rlim_cur;

		rl.rlim_cur = rl.rlim_max;
		/* an infinite hard limit is above the kernel's nr_open: refused */
		if (setrlimit(RLIMIT_NOFILE, &rl))
			rl.rlim_cur = soft;
	}
	return rl.rlim_cur;
}

/* Descriptors open in the process now. */
static size_t open_now(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	size_t n = 0;

	if (!d) {
		/* no /proc: ask each number (a bounded startup cost) */
		for (long fd = 0; fd < (long)(limit < 65536 ? limit : 65536); fd++)
			n += fcntl((int)fd, F_GETFD) >= 0;
		return n;
	}
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n ? n - 1 : 0;	/* not the directory's own */
}

/* Descriptors one thread's replay may hold: its ring if the model opens
 * files, and one per file call entry (plain forms have their own). */
static size_t replay_fds(void)
{
	size_t n = 0;
	bool opens = false;

	for (unsigned i = 0; i < rt_config.ncalls; i++) {
		enum rt_replay k = rt_config.calls[i].kind;

		opens |= k == RT_REPLAY_OPEN;
		n += k == RT_REPLAY_FILE_READ || k == RT_REPLAY_FILE_WRITE;
	}
	return n + (opens ? RT_REPLAY_RING : 0);
}

/* Descriptor numbers the process can use. */
static size_t usable(void)
{
	rlim_t top = limit;

	if (rt_config.io == RT_IO_SELECT && top > FD_SETSIZE)
		top = FD_SETSIZE;
	return top > INT_MAX ? INT_MAX : (size_t)top;
}

static size_t derive_cap(void)
{
	bool blocking = rt_config.io == RT_IO_BLOCKING;
	size_t threads = blocking ? 0 : rt_config.threads ? rt_config.threads : 1;
	size_t per_conn = 1 + (blocking ? replay_fds() : 0);
	size_t fixed = open_now() + threads * (2 + replay_fds()) + 2 + MARGIN;

	if (usable() <= fixed + per_conn)
		return 1;
	return (usable() - fixed) / per_conn;
}

void rt_conn_cap_init(void)
{
	limit = raise_limit();
	/* none: no refusal when out of descriptors, only pauses */
	reserve = open("/dev/null", O_RDONLY | O_CLOEXEC);
	cap = derive_cap();
	nborn = usable() < BORN_MAX ? usable() : BORN_MAX;
	born = calloc(nborn, sizeof(*born));	/* pages touched as numbers are used */
	nborn = born ? nborn : 0;
}

void rt_conn_cap_fini(void)
{
	free(reg);
	reg = NULL;
	nreg = regcap = 0;
	free(born);
	born = NULL;
	nborn = born_top = 0;
	if (reserve >= 0)
		close(reserve);
	reserve = -1;
}

/* ---- the registry ---- */

static uint64_t stamp(void)
{
#if defined(__x86_64__)
	/* no system call on the request path (the clone's calls are the
	 * model's); the TSC only orders connections */
	return __builtin_ia32_rdtsc() | 1;
#else
	return rt_now_ns() | 1;
#endif
}

void rt_conn_cap_mark(struct rt_conn *c, bool idle)
{
	atomic_store_explicit(&c->idle_since, idle ? stamp() : 0, memory_order_relaxed);
}

void rt_conn_cap_add(struct rt_conn *c)
{
	uint64_t t;

	c->cap_slot = SIZE_MAX;
	pthread_mutex_lock(&lock);
	t = c->fd >= 0 && (size_t)c->fd < nborn ? born[c->fd] : 0;
	if (t)
		born[c->fd] = 0;
	if (t == SHUT) {	/* shut down for room before its adoption */
		c->cap_shut = true;
		pthread_mutex_unlock(&lock);
		return;
	}
	atomic_store_explicit(&c->idle_since, t ? t : stamp(), memory_order_relaxed);
	if (nreg == regcap) {
		size_t n = regcap ? 2 * regcap : 64;
		struct rt_conn **p = realloc(reg, n * sizeof(*p));

		if (p) {
			reg = p;
			regcap = n;
		}
	}
	if (nreg < regcap) {	/* else never shut down for room */
		c->cap_slot = nreg;
		reg[nreg++] = c;
	}
	pthread_mutex_unlock(&lock);
}

static void unregister(struct rt_conn *c)
{
	struct rt_conn *last = reg[--nreg];

	reg[c->cap_slot] = last;
	last->cap_slot = c->cap_slot;
	c->cap_slot = SIZE_MAX;
}

void rt_conn_cap_close(struct rt_conn *c)
{
	pthread_mutex_lock(&lock);
	if (c->cap_slot != SIZE_MAX)
		unregister(c);
	nshut -= c->cap_shut;
	nopen--;
	pthread_mutex_unlock(&lock);
	close(c->fd);
}

void rt_conn_cap_close_fd(int fd)
{
	pthread_mutex_lock(&lock);
	if (fd >= 0 && (size_t)fd < nborn) {
		nshut -= born[fd] == SHUT;
		born[fd] = 0;
	}
	nopen--;
	pthread_mutex_unlock(&lock);
	close(fd);
}

/* Under the lock: the oldest accepted connection no thread adopted yet,
 * -1 if none is. */
static int oldest_pending(uint64_t *when)
{
	int fd = -1;

	for (size_t i = 0; i < born_top; i++) {
		if ((born[i] & 1) && born[i] < *when) {
			*when = born[i];
			fd = (int)i;
		}
	}
	return fd;
}

/* Under the lock: shuts the least recently active idle connection down;
 * false if none is idle. */
static bool shut_oldest_idle(void)
{
	struct rt_conn *old = NULL;
	uint64_t oldest = UINT64_MAX;
	int pending;

	for (size_t i = 0; i < nreg; i++) {
		uint64_t t = atomic_load_explicit(&reg[i]->idle_since, memory_order_relaxed);

		if (t && t < oldest) {
			oldest = t;
			old = reg[i];
		}
	}
	pending = oldest_pending(&oldest);
	if (pending >= 0) {
		born[pending] = SHUT;
		nshut++;
		shutdown(pending, SHUT_RDWR);
		return true;
	}
	if (!old)
		return false;
	unregister(old);
	old->cap_shut = true;
	nshut++;
	shutdown(old->fd, SHUT_RDWR);
	return true;
}

/* ---- accepting ---- */

static void tell(void)
{
	if (told)
		return;
	told = true;
	rt_err(0, "%zu connections, the cap below the fd limit (%llu): closing the oldest idle ones, "
	       "refusing new clients while none is idle", cap, (unsigned long long)limit);
}

/* A new socket counted; past the cap an idle one makes room, or it is
 * closed (-1, ECONNABORTED). */
static int admit(int fd)
{
	bool room = true;

	pthread_mutex_lock(&lock);
	nopen++;
	if ((size_t)fd < nborn) {
		born[fd] = stamp();
		born_top = (size_t)fd >= born_top ? (size_t)fd + 1 : born_top;
	}
	if (nopen - nshut > cap) {
		tell();
		room = shut_oldest_idle();
		nopen -= !room;
	}
	pthread_mutex_unlock(&lock);
	if (room)
		return fd;
	close(fd);
	errno = ECONNABORTED;
	return -1;
}

static void pause_briefly(void)
{
	const struct timespec ts = { 0, PAUSE_NS };

	nanosleep(&ts, NULL);
}

/*
 * accept4() failed for want of descriptors or memory. A pending
 * connection is taken in the reserve descriptor's place and closed (-1,
 * ECONNABORTED); a blocking listener is polled first, not to wait in
 * accept for the next client. Otherwise a pause (-1, err): the caller may
 * try again at once without spinning.
 */
static int refuse_pending(int lfd, int flags, int err)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	int fd = -1;

	pthread_mutex_lock(&reserve_lock);
	if ((err == EMFILE || err == ENFILE) && reserve >= 0 && poll(&p, 1, 0) == 1) {
		close(reserve);
		reserve = -1;
		fd = accept4(lfd, NULL, NULL, flags);
		if (fd >= 0)
			close(fd);
	}
	if (reserve < 0)
		reserve = open("/dev/null", O_RDONLY | O_CLOEXEC);
	pthread_mutex_unlock(&reserve_lock);
	if (fd < 0) {
		pause_briefly();
		errno = err;
		return -1;
	}
	errno = ECONNABORTED;
	return -1;
}

int rt_conn_cap_accept(int lfd, int flags)
{
	int fd = accept4(lfd, NULL, NULL, flags);

	if (fd >= 0)
		return admit(fd);
	if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
		return refuse_pending(lfd, flags, errno);
	return -1;
}

/* A refusal, a pause taken, a signal, a client gone before its accept. */
bool rt_conn_cap_goes_on(int err)
{
	return err == ECONNABORTED || err == EMFILE || err == ENFILE || err == ENOBUFS ||
	       err == ENOMEM || err == EINTR || err == EAGAIN || err == EPROTO;
}
