/* SPDX-License-Identifier: MIT */
/*
 * The life of a service under measurement: resolve and start its command
 * in its own process group with its output in a log, wait until it
 * accepts, tell whether it died and why, and stop it (SIGTERM, then
 * SIGKILL) so that it is never left running.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "core_int.h"
#include "measure_int.h"

#define POLL_NS 50000000L	/* readiness and exit polling */
#define STOP_GRACE_S 10.0

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void measure_nap(long ns)
{
	struct timespec t = { ns / 1000000000L, ns % 1000000000L };

	nanosleep(&t, NULL);
}

static bool executable(const char *path)
{
	struct stat st;

	return access(path, X_OK) == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int cmd_resolve(const char *cmd, char *path, size_t len)
{
	const char *dirs = getenv("PATH");

	if (strchr(cmd, '/')) {
		bool exists = access(cmd, F_OK) == 0;

		if (!executable(cmd))
			return ditto_err(exists ? -EACCES : -ENOENT, "measure: %s: %s", cmd,
					 exists ? "not an executable file" : "no such file");
		if (snprintf(path, len, "%s", cmd) >= (int)len)
			return ditto_err(-ENAMETOOLONG, "measure: %s: name too long", cmd);
		return 0;
	}
	for (const char *p = dirs && *dirs ? dirs : "/usr/local/bin:/usr/bin:/bin"; p; ) {
		const char *colon = strchr(p, ':');
		int n = colon ? (int)(colon - p) : (int)strlen(p);

		/* An empty PATH entry is the current directory, as for execvp. */
		if (snprintf(path, len, "%.*s%s%s", n, p, n ? "/" : "", cmd) < (int)len &&
		    executable(path))
			return 0;
		p = colon ? colon + 1 : NULL;
	}
	return ditto_err(-ENOENT, "measure: %s: command not found in PATH", cmd);
}

/* A connected socket to the service, or -errno. */
int measure_connect(const struct mctx *c)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)c->load.port) };
	struct pollfd p;
	int fd, err = 0;
	socklen_t len = sizeof(err);

	inet_pton(AF_INET, c->host, &a.sin_addr);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
		return fd;
	if (errno != EINPROGRESS) {
		err = -errno;
		close(fd);
		return err;
	}
	p = (struct pollfd){ .fd = fd, .events = POLLOUT };
	if (poll(&p, 1, 200) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) || err) {
		close(fd);
		return err ? -err : -ETIMEDOUT;
	}
	return fd;
}

/* Before starting: a port already served would measure someone else. */
static int port_free(const struct mctx *c)
{
	int fd = measure_connect(c);

	if (fd < 0)
		return 0;
	close(fd);
	return ditto_err(-EADDRINUSE, "measure: something already accepts on %s:%u", c->host,
			 c->load.port);
}

int native_argv(const struct mctx *c, char *path, char ***argv)
{
	size_t argc = 0;
	int err;

	if ((err = cmd_resolve(c->argv[0], path, PATH_MAX)))
		return err;
	while (c->argv[argc])
		argc++;
	if (!(*argv = calloc(argc + 1, sizeof(**argv))))
		return ditto_err(-ENOMEM, "measure: out of memory");
	memcpy(*argv, c->argv, argc * sizeof(**argv));
	(*argv)[0] = path;
	return 0;
}

extern char **environ;

/*
 * The caller's environment without glibc's malloc debugging
 * (MALLOC_PERTURB_, which meson's test runner sets, fills every block
 * malloc hands out and free takes back): measured, it would be the
 * debugging's memory traffic, not the service's. Made before the fork.
 */
static char **service_env(void)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	if (!(env = calloc(n + 1, sizeof(*env))))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "MALLOC_PERTURB_=", 16))
			env[k++] = environ[i];
	return env;
}

/* In the child, between fork and exec: async-signal-safe calls only. */
static void child_exec(char *const *argv, char **env, int logfd, int nullfd, int errfd,
		       pid_t parent, const struct pin *pin)
{
	sigset_t none;
	int e;

	setpgid(0, 0);
	/* A caller that dies must not leave the service behind. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	/* Every thread it starts inherits the CPUs (best effort). */
	if (pin->on)
		sched_setaffinity(0, sizeof(pin->svc), &pin->svc);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Ignored signals survive exec; Python ignores SIGPIPE, for one. */
	signal(SIGPIPE, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	dup2(nullfd, 0);
	dup2(logfd, 1);
	dup2(logfd, 2);
	close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);	/* the caller's fds stay the caller's */
	execve(argv[0], argv, env);
	e = errno;
	if (write(errfd, &e, sizeof(e)) != (ssize_t)sizeof(e))
		e = 0;	/* the parent then sees the exit status 127 */
	_exit(127);
}

/* After fork: did exec work? The pipe closes on exec, or carries errno. */
static int exec_result(int fd, char *const *argv, struct svc *s)
{
	ssize_t n;
	int e;

	do
		n = read(fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(e))
		return 0;
	waitpid(s->pid, &s->status, 0);
	s->reaped = s->stopped = true;
	return ditto_err(-e, "measure: cannot run %s: %s", argv[0], strerror(e));
}

static int open_files(const struct mctx *c, const char *logname, struct svc *s, int fds[4])
{
	if (snprintf(s->log, sizeof(s->log), "%s/%s", c->dir, logname) >= (int)sizeof(s->log))
		return ditto_err(-ENAMETOOLONG, "measure: %s: name too long", c->dir);
	fds[0] = open(s->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	fds[1] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fds[0] < 0 || fds[1] < 0 || pipe2(fds + 2, O_CLOEXEC))
		return ditto_err(-errno, "measure: %s: %s", s->log, strerror(errno));
	return 0;
}

int svc_start(const struct mctx *c, char *const *argv, const char *logname, const char *name,
	      struct svc *s)
{
	int fds[4] = { -1, -1, -1, -1 }, err;
	pid_t parent = getpid();
	char **env = NULL;

	memset(s, 0, sizeof(*s));
	s->pid = -1;
	s->name = name;
	s->stopped = true;	/* nothing to stop until the fork */
	if ((err = port_free(c)) || (err = open_files(c, logname, s, fds)))
		goto out;
	if (!(env = service_env())) {
		err = ditto_err(-ENOMEM, "measure: out of memory");
		goto out;
	}
	s->pid = fork();
	if (s->pid == 0)
		child_exec(argv, env, fds[0], fds[1], fds[3], parent, &c->pin);
	if (s->pid < 0) {
		err = ditto_err(-errno, "measure: fork: %s", strerror(errno));
		goto out;
	}
	/* Also here: no moment where kill(-pid) could miss it. */
	setpgid(s->pid, s->pid);
	s->stopped = false;
	close(fds[3]);
	fds[3] = -1;
	err = exec_result(fds[2], argv, s);
out:
	free(env);
	for (int i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return err;
}

/* Up to len bytes of the end of a file; its length read. */
static ssize_t read_tail(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	off_t size = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
	ssize_t n = -1;

	if (size >= 0)
		n = pread(fd, buf, len, size > (off_t)len ? size - (off_t)len : 0);
	if (fd >= 0)
		close(fd);
	return n > 0 ? n : 0;
}

void svc_log_tail(const struct svc *s, char *buf, size_t len)
{
	measure_log_tail_line(s->log, buf, len);
}

void measure_log_tail_line(const char *path, char *buf, size_t len)
{
	char t[2048];
	ssize_t n = read_tail(path, t, sizeof(t));
	size_t start, o = 0;
	int lines = 0;

	while (n > 0 && (t[n - 1] == '\n' || t[n - 1] == '\r'))
		n--;
	/* The last four lines, joined on one line. */
	for (start = (size_t)n; start > 0; start--)
		if (t[start - 1] == '\n' && ++lines == 4)
			break;
	for (size_t i = start; i < (size_t)n && o + 4 < len; i++) {
		if (t[i] == '\n') {
			memcpy(buf + o, " | ", 3);
			o += 3;
		} else if (t[i] != '\r') {
			buf[o++] = t[i];
		}
	}
	snprintf(buf + o, len - o, "%s", o ? "" : "(nothing)");
}

static void status_text(const struct svc *s, char *buf, size_t len)
{
	if (!s->reaped)
		snprintf(buf, len, "is gone");
	else if (WIFEXITED(s->status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(s->status));
	else if (WIFSIGNALED(s->status))
		snprintf(buf, len, "was killed by signal SIG%s",
			 sigabbrev_np(WTERMSIG(s->status)) ? sigabbrev_np(WTERMSIG(s->status)) : "?");
	else
		snprintf(buf, len, "ended with wait status 0x%x", (unsigned)s->status);
}

/* 1 when the leader exited (reaped now or before), 0 while it runs. */
static int reap(struct svc *s, int flags)
{
	pid_t r;

	if (s->reaped)
		return 1;
	do
		r = waitpid(s->pid, &s->status, flags);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return 0;
	/* r < 0: reaped by someone else (SIGCHLD ignored); status unknown. */
	s->reaped = r == s->pid;
	return 1;
}

int svc_check_alive(struct svc *s, const char *when)
{
	char st[64], tail[600];

	if (!reap(s, WNOHANG))
		return 0;
	status_text(s, st, sizeof(st));
	svc_log_tail(s, tail, sizeof(tail));
	return ditto_err(-ECHILD, "measure: %s %s %s; its output: %s", s->name, st, when, tail);
}

static bool group_alive(pid_t pgid)
{
	return kill(-pgid, 0) == 0 || errno == EPERM;
}

int svc_stop(struct svc *s)
{
	double deadline = now_s() + STOP_GRACE_S;
	bool killed = false;

	if (s->stopped || s->pid <= 0)
		return 0;
	s->stopped = true;
	kill(-s->pid, SIGTERM);
	/* The leader, then whatever else of its group still runs (forked
	 * workers write their own cachegrind files as they exit). */
	while ((!reap(s, WNOHANG) || group_alive(s->pid)) && now_s() < deadline)
		measure_nap(POLL_NS / 5);
	if (!reap(s, WNOHANG) || group_alive(s->pid)) {
		killed = true;
		kill(-s->pid, SIGKILL);
		reap(s, 0);
	}
	if (killed)
		return ditto_err(-ETIMEDOUT, "measure: %s ignored SIGTERM for %.0f s and was killed",
				 s->name, STOP_GRACE_S);
	return 0;
}

int svc_wait_ready(const struct mctx *c, struct svc *s)
{
	double deadline = now_s() + c->startup_timeout_s;
	char when[128], tail[600];
	int fd, err;

	snprintf(when, sizeof(when), "before accepting on %s:%u", c->host, c->load.port);
	for (;;) {
		if ((err = svc_check_alive(s, when)))
			return err;
		if (measure_stopped(c))
			return ditto_err(-ECANCELED, "measure: stopped while %s started", s->name);
		if ((fd = measure_connect(c)) >= 0) {
			close(fd);
			return 0;
		}
		if (now_s() > deadline)
			break;
		measure_nap(POLL_NS);
	}
	svc_log_tail(s, tail, sizeof(tail));
	return ditto_err(-ETIMEDOUT, "measure: %s did not accept on %s:%u within %g s; its output: %s",
			 s->name, c->host, c->load.port, c->startup_timeout_s, tail);
}

/* ------------------------------------------------------------------ */
/* The load                                                             */
/* ------------------------------------------------------------------ */
