/* SPDX-License-Identifier: MIT */
/*
 * CPU windows run in a child process that is the ptrace tracer. If the
 * tracer died with a thread mid-step, the kernel would release the thread
 * with its trap flag still set (exit_ptrace() does not clear it, unlike
 * PTRACE_DETACH) and the next instruction would kill it with SIGTRAP. So
 * the tracer must outlive whatever kills the profiler: it is told of its
 * parent's death (PR_SET_PDEATHSIG) and ends the window cleanly, and it
 * runs in a process group of its own, so signals to the profiler's group
 * (Ctrl-C, Ctrl-\, a shell's job kill, SIGKILL to the group) do not reach
 * it; the parent passes a stop on with SIGTERM. What no process can
 * survive is SIGKILL to the tracer itself mid-step (profile.h says so):
 * its death is then reported as an error, never as a result.
 *
 * The child sends back one message: int32 error, uint32 message length,
 * the message, then the results encoded as a model whose services[0].cpu[c]
 * holds class c (thread_class "c<c>").
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core_int.h"
#include "cpu_int.h"
#include "cpu_run.h"

struct cpu_child {
	pid_t pid;
	int fd;			/* read end of the result pipe */
	char *buf;
	size_t len, cap;
	bool eof;
};

static volatile int child_stop;

static void on_stop_signal(int sig)
{
	(void)sig;
	child_stop = 1;
}

static void nap(double s)
{
	while (s > 0 && !child_stop) {
		double d = s < 0.05 ? s : 0.05;
		struct timespec ts = { 0, (long)(d * 1e9) };

		nanosleep(&ts, NULL);
		s -= d;
	}
}

static bool write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		c += w;
		n -= (size_t)w;
	}
	return true;
}

static int store_all(struct cpu_run *run, unsigned ncls, void **buf, size_t *len)
{
	struct ditto_model *m = ditto_model_new();
	struct ditto_service *s = m ? ditto_model_add_service(m, "cpu") : NULL;
	int err = s ? 0 : -ENOMEM;

	for (unsigned c = 0; c < ncls && !err; c++) {
		char name[16];
		struct ditto_cpu *cpu;

		snprintf(name, sizeof(name), "c%u", c);
		cpu = ditto_service_add_thread(s, name) ? ditto_service_add_cpu(s, name) : NULL;
		err = cpu ? cpu_run_store(run, c, cpu) : -ENOMEM;
	}
	if (!err)
		err = ditto_model_encode(m, buf, len);
	ditto_model_free(m);
	return err;
}

static void child_main(int fd, pid_t parent, const sigset_t *old, const struct cpu_target *t,
		       size_t nt, unsigned ncls, const struct cpu_run_opts *o)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	struct cpu_run *run = NULL;
	void *res = NULL;
	size_t len = 0;
	int32_t err;
	uint32_t mlen;
	const char *msg;
	uint64_t len64;

	setpgid(0, 0);		/* also done by the parent: whoever runs first */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);	/* a parent gone before the result: keep exiting */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	sigprocmask(SIG_SETMASK, old, NULL);	/* handlers are in place: let them come */
	if (getppid() != parent)
		_exit(0);	/* the parent died before the death signal was armed */
	if (!(err = cpu_run_new(t, nt, ncls, o, &run)))
		while ((err = cpu_run_step(run, &child_stop)) > 0)
			nap(cpu_run_wait_s(run));
	if (run && cpu_run_instructions(run)) {
		int e = store_all(run, ncls, &res, &len);

		err = err ? err : e;
	}
	msg = err ? ditto_last_error() : "";
	mlen = (uint32_t)strlen(msg);
	len64 = res ? len : 0;
	if (write_all(fd, &err, sizeof(err)) && write_all(fd, &mlen, sizeof(mlen)) &&
	    write_all(fd, msg, mlen) && write_all(fd, &len64, sizeof(len64)))
		write_all(fd, res, len64);
	/* No exit handlers: they belong to the parent (and LeakSanitizer's
	 * report would be about the parent's heap). */
	_exit(0);
}

int cpu_child_start(const struct cpu_target *t, size_t nt, unsigned ncls, const struct cpu_run_opts *o,
		    struct cpu_child **out)
{
	struct cpu_child *c = calloc(1, sizeof(*c));
	pid_t parent = getpid();
	sigset_t block, old;
	int p[2];

	*out = NULL;
	if (!c)
		return ditto_err(-ENOMEM, "out of memory");
	if (pipe2(p, O_CLOEXEC)) {
		free(c);
		return ditto_err(-errno, "pipe: %s", strerror(errno));
	}
	/* Stop signals wait until the child has its handlers. */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	c->pid = fork();
	if (c->pid > 0)
		setpgid(c->pid, c->pid);
	if (c->pid != 0)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (c->pid < 0) {
		int err = -errno;

		close(p[0]);
		close(p[1]);
		free(c);
		return ditto_err(err, "fork: %s", strerror(-err));
	}
	if (c->pid == 0) {
		close(p[0]);
		child_main(p[1], parent, &old, t, nt, ncls, o);
	}
	close(p[1]);
	c->fd = p[0];
	fcntl(c->fd, F_SETFL, O_NONBLOCK);
	*out = c;
	return 0;
}

int cpu_child_fd(const struct cpu_child *c)
{
	return c->fd;
}

/* Read what is there: 1 while the child runs, 0 at the end of its message. */
int cpu_child_poll(struct cpu_child *c)
{
	while (!c->eof) {
		ssize_t n;

		if (c->len == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 65536;
			char *b = realloc(c->buf, cap);

			if (!b)
				return ditto_err(-ENOMEM, "out of memory");
			c->buf = b;
			c->cap = cap;
		}
		n = read(c->fd, c->buf + c->len, c->cap - c->len);
		if (n > 0)
			c->len += (size_t)n;
		else if (n == 0)
			c->eof = true;
		else if (errno == EAGAIN)
			return 1;
		else if (errno != EINTR)
			c->eof = true;
	}
	return 0;
}

void cpu_child_stop(struct cpu_child *c)
{
	if (c && c->pid > 0)
		kill(c->pid, SIGTERM);
}

static int parse(const struct cpu_child *c, struct ditto_model **res)
{
	int32_t err;
	uint32_t mlen;
	uint64_t len;
	const char *p = c->buf;

	if (c->len < sizeof(err) + sizeof(mlen))
		return ditto_err(-EPIPE, "cpu profile: the stepping process ended without a result");
	memcpy(&err, p, sizeof(err));
	memcpy(&mlen, p + sizeof(err), sizeof(mlen));
	p += sizeof(err) + sizeof(mlen);
	if (c->len < (size_t)(p - c->buf) + mlen + sizeof(len))
		return ditto_err(-EPIPE, "cpu profile: truncated result from the stepping process");
	memcpy(&len, p + mlen, sizeof(len));
	if (len && c->len >= (size_t)(p - c->buf) + mlen + sizeof(len) + len) {
		int e = ditto_model_decode(p + mlen + sizeof(len), len, NULL, res);

		if (e)
			return e;
	}
	if (err)
		return ditto_err(err, "%.*s", (int)mlen, p);
	return 0;
}

/* Wait for the child and take its results (partial ones too, with the
 * error of what stopped it). *res is NULL when nothing was stepped. */
int cpu_child_finish(struct cpu_child *c, struct ditto_model **res)
{
	int st, r;

	*res = NULL;
	for (;;) {
		struct timespec ts = { 0, 10000000 };

		if ((r = cpu_child_poll(c)) <= 0)
			break;
		nanosleep(&ts, NULL);
	}
	while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
		;
	c->pid = 0;
	if (r < 0)
		return r;
	if (WIFSIGNALED(st)) {
		/* Whatever it sent is kept, but its death is the news: a
		 * thread it held may have been released mid-step. */
		parse(c, res);
		return ditto_err(-ECHILD, "cpu windows: the stepping process was killed by signal "
				 "%d (%s); a thread it was stepping may have died of SIGTRAP",
				 WTERMSIG(st), strsignal(WTERMSIG(st)));
	}
	return parse(c, res);
}

void cpu_child_free(struct cpu_child *c)
{
	if (!c)
		return;
	if (c->pid > 0) {
		cpu_child_stop(c);
		while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	close(c->fd);
	free(c->buf);
	free(c);
}
