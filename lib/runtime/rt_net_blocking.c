/* SPDX-License-Identifier: MIT */
/*
 * The blocking skeleton: an acceptor in blocking accept4() (after a wait
 * in epoll, poll or select when the original's acceptor waited so) starts
 * one thread per connection, which reads and writes with blocking calls. The
 * acceptor is the main thread, as in a server whose main thread accepts,
 * unless the original accepted on a thread of its own (acceptor_thread)
 * or the main thread plays the class "main"; then the main thread waits
 * for the stop and signals the acceptor out of accept. At the stop the
 * connections are shut down (their blocked reads return) and all joined.
 */
#include "rt_int.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

struct session {
	pthread_t tid;
	int fd;			/* -1 once closed (under lock) */
	uint64_t stream;
	atomic_bool done;
	struct session *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct session *sessions;

static void *session_main(void *arg)
{
	struct session *s = arg;
	struct rt_thread t = { .replay = NULL };
	struct rt_conn *c = rt_conn_new(s->fd);

	if (c && !rt_thread_init(&t, s->stream)) {
		rt_sock_setup(s->fd);
		rt_conn_greet(c);
		rt_conn_serve_blocking(c, &t);
	}
	/* closed under the lock: the stop never shuts down a reused number */
	pthread_mutex_lock(&lock);
	if (c)
		rt_conn_free(c);
	else
		rt_conn_cap_close_fd(s->fd);
	s->fd = -1;
	pthread_mutex_unlock(&lock);
	rt_thread_fini(&t);
	atomic_store(&s->done, true);
	return NULL;
}

/* Joins the threads of closed connections (by the acceptor, as it goes). */
static void reap(void)
{
	struct session **pp = &sessions, *s;

	pthread_mutex_lock(&lock);
	while ((s = *pp)) {
		if (atomic_load(&s->done)) {
			pthread_join(s->tid, NULL);
			*pp = s->next;
			free(s);
		} else {
			pp = &s->next;
		}
	}
	pthread_mutex_unlock(&lock);
}

static void start_session(int fd, uint64_t stream)
{
	struct session *s = calloc(1, sizeof(*s));
	int rc;

	if (!s) {
		rt_conn_cap_close_fd(fd);
		return;
	}
	s->fd = fd;
	s->stream = stream;
	pthread_mutex_lock(&lock);
	rc = rt_thread_start(&s->tid, session_main, s, "connection");
	if (!rc) {
		s->next = sessions;
		sessions = s;
	}
	pthread_mutex_unlock(&lock);
	if (rc) {
		rt_conn_cap_close_fd(fd);
		free(s);
	}
}

struct blocking_acceptor {
	int lfd;
	unsigned proc;
	atomic_bool done;
};

static void *acceptor_main(void *arg)
{
	struct blocking_acceptor *a = arg;
	int epfd = rt_acceptor_epoll(a->lfd);
	uint64_t seq = 0;

	while (!rt_stopping()) {
		int fd;

		/* as the original's acceptor waited (Python's selector polls) */
		rt_acceptor_wait(a->lfd, epfd);
		if (rt_stopping())
			break;
		fd = rt_conn_cap_accept(a->lfd, SOCK_CLOEXEC);

		if (fd >= 0) {
			reap();
			start_session(fd, (uint64_t)a->proc << 32 | (1u << 31) | seq++);
		} else if (!rt_conn_cap_goes_on(errno)) {
			rt_err(errno, "accept");
			rt_fail();
		}
	}
	if (epfd >= 0)
		close(epfd);
	atomic_store(&a->done, true);
	return NULL;
}

static void stop_sessions(void)
{
	struct session *s;

	pthread_mutex_lock(&lock);
	for (s = sessions; s; s = s->next)
		if (s->fd >= 0)
			shutdown(s->fd, SHUT_RDWR);
	pthread_mutex_unlock(&lock);
	while ((s = sessions)) {
		pthread_join(s->tid, NULL);
		sessions = s->next;
		free(s);
	}
}

int rt_net_blocking_run(int lfd, unsigned proc)
{
	struct blocking_acceptor a = { .lfd = lfd, .proc = proc };
	struct pollfd p = { .fd = rt_stop_fd, .events = POLLIN };
	bool own = rt_config.acceptor_thread || rt_background_main();
	pthread_t tid;

	if (own && rt_thread_start(&tid, acceptor_main, &a, "acceptor"))
		return -1;
	rt_announce_ready();
	/* the stop signals come to this thread: accept4() returns EINTR */
	if (!own)
		acceptor_main(&a);
	else if (rt_background_main())
		rt_main_thread_run();
	while (!rt_stopping())
		poll(&p, 1, -1);
	if (own)
		rt_stop_kick_join(tid, &a.done);
	stop_sessions();
	return 0;
}
