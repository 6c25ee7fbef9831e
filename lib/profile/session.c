/* SPDX-License-Identifier: MIT */
/*
 * A profile session: the public ditto_profile_* API. It owns the BPF
 * collector, a timer for progress and liveness checks, an eventfd for
 * cancellation, and one epoll fd that event loops can watch.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "profile_int.h"
#include "threads.h"
#include "cpu/cpu_run.h"
#include "hw_counters.h"
#include "model_int.h"
#include "edges_int.h"

/* RUNNING: the system window; CPU: windows of single-stepping after it. */
enum state { ST_IDLE, ST_RUNNING, ST_CPU, ST_ENDED, ST_FINISHED };

/* One service: a process tree given by its root, with its own part of
 * what the window saw. */
struct session_svc {
	pid_t pid;
	char *name;		/* NULL until named (at attach, or at finish) */
	uint16_t ports[32];
	size_t nports;
	struct target_lock lock;
	struct snapshot part;
	struct classes cls;
	bool analysed;
	struct session_cpu *cpu;
	bool exited;
};

struct port_name {
	uint16_t port;
	char *name;
};

struct ditto_profile {
	double duration_s;
	char *service_name;
	uint64_t requests;
	struct session_svc svc[MAX_SERVICES];
	size_t nsvc;
	size_t cpu_next;	/* the next service whose CPU windows run */
	struct port_name names[MAX_SERVICES * 2];
	size_t nnames;
	bool graph;		/* graph events were asked for */
	struct edges *edges;
	ditto_progress_fn progress;
	void *user;
	struct collector *col;
	struct thread_sampler *ts;	/* NULL when sampling is off or unavailable */
	int sample_hz;
	int epfd, evfd, tfd;
	pid_t child;
	enum state state;
	struct timespec start;
	double elapsed_s;
	bool target_exited;
	/* what the system window saw, kept for the CPU phase and finish */
	struct snapshot snap;
	bool analysed;
	int analyse_err;
	struct cpu_run_opts cpu_opts;
	bool cpu_on;
	struct hw_counters *hwc;
	char hw_counters_why[256];
	bool keep_launched;
	double launch_grace_s;
	unsigned gaps;		/* enum ditto_profile_gap, set by finish */
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double elapsed(const struct ditto_profile *p)
{
	return now_s() - ((double)p->start.tv_sec + (double)p->start.tv_nsec / 1e9);
}

static int watch(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static int open_fds(struct ditto_profile *p)
{
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	p->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	p->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (p->epfd < 0 || p->evfd < 0 || p->tfd < 0 || watch(p->epfd, p->evfd) ||
	    watch(p->epfd, p->tfd))
		return ditto_err(-errno, "profile: cannot create event fds: %s", strerror(errno));
	return 0;
}

static int copy_cpu_opts(struct ditto_profile *p, const struct ditto_profile_opts *o)
{
	int windows = OPTS_GET(o, cpu_windows, 0);
	DITTO_OPTS(ditto_cpu_opts, co, .windows = windows > 0 ? (unsigned)windows : 0,
		   .window_insts = OPTS_GET(o, cpu_window_insts, (uint64_t)0),
		   .spacing_s = OPTS_GET(o, cpu_spacing_s, 0.0),
		   .step_mode = OPTS_GET(o, cpu_step_mode, 0));

	if (windows < -1 || co.spacing_s != co.spacing_s)
		return ditto_err(-EINVAL, "profile: cpu_windows %d or cpu_spacing_s is not valid",
				 windows);
	p->cpu_on = windows != -1;
	return p->cpu_on ? cpu_opts_defaults(&co, &p->cpu_opts) : 0;
}

static int copy_opts(struct ditto_profile *p, const struct ditto_profile_opts *o)
{
	const char *name = OPTS_GET(o, service_name, NULL);
	double d = OPTS_GET(o, duration_s, 0.0);

	if (d < 0 || d != d)
		return ditto_err(-EINVAL, "profile: duration %g is not valid", d);
	p->duration_s = d;
	p->requests = OPTS_GET(o, requests, 0);
	p->sample_hz = OPTS_GET(o, sample_hz, 0);
	if (p->sample_hz == 0)
		p->sample_hz = THREAD_SAMPLER_DEFAULT_HZ;
	p->keep_launched = OPTS_GET(o, keep_launched, false);
	p->launch_grace_s = OPTS_GET(o, launch_grace_s, 0.0);
	if (p->launch_grace_s < 0 || p->launch_grace_s != p->launch_grace_s)
		return ditto_err(-EINVAL, "profile: launch_grace_s %g is not valid",
				 p->launch_grace_s);
	p->progress = OPTS_GET(o, progress, NULL);
	p->user = OPTS_GET(o, user, NULL);
	p->graph = OPTS_GET(o, graph, false);
	int err;

	if ((err = copy_cpu_opts(p, o)))
		return err;
	if (name && !(p->service_name = strdup(name)))
		return ditto_err(-ENOMEM, "out of memory");
	return 0;
}

DITTO_API int ditto_profile_new(const struct ditto_profile_opts *opts, struct ditto_profile **out)
{
	struct ditto_profile *p;
	int err;

	*out = NULL;
	if ((err = OPTS_CHECK(opts, ditto_profile_opts)) || (err = profile_env_check()))
		return err;
	p = calloc(1, sizeof(*p));
	if (!p)
		return ditto_err(-ENOMEM, "out of memory");
	p->epfd = p->evfd = p->tfd = -1;
	for (size_t i = 0; i < MAX_SERVICES; i++)
		p->svc[i].lock.fd = p->svc[i].lock.dirfd = -1;
	if ((err = copy_opts(p, opts)) || (err = open_fds(p)) || (err = collector_open(&p->col))) {
		ditto_profile_free(p);
		return err;
	}
	*out = p;
	return 0;
}

/* Listening ports of pid, added to its service's list and to the
 * collector. */
static void add_ports(struct ditto_profile *p, struct session_svc *sv, pid_t pid)
{
	uint16_t found[32];
	size_t n = proc_listen_ports(pid, found, ARRAY_SIZE(found));

	for (size_t i = 0; i < n; i++) {
		bool have = false;

		for (size_t j = 0; j < sv->nports && !have; j++)
			have = sv->ports[j] == found[i];
		if (have || sv->nports == ARRAY_SIZE(sv->ports))
			continue;
		sv->ports[sv->nports++] = found[i];
		collector_listen_port(p->col, found[i]);
	}
}

struct thread_ctx {
	struct ditto_profile *p;
	pid_t tgid;
	unsigned svc;
};

static int add_thread(pid_t tid, const char *comm, void *user)
{
	struct thread_ctx *t = user;

	if (t->p->hwc)
		hw_counters_add_thread(t->p->hwc, tid);
	return collector_add_thread(t->p->col, tid, t->tgid, comm);
}

/* Trace a process of service svc and record its threads, idle ones
 * included. */
static int trace_process(struct ditto_profile *p, unsigned svc, pid_t pid)
{
	struct thread_ctx t = { p, pid, svc };
	int err = collector_trace(p->col, pid, svc);

	add_ports(p, &p->svc[svc], pid);
	return err ? err : proc_threads(pid, add_thread, &t);
}

static int trace_child(pid_t child, void *user)
{
	struct thread_ctx *t = user;

	return trace_process(t->p, t->svc, child);
}

static int child_ports(pid_t child, void *user)
{
	struct thread_ctx *t = user;

	add_ports(t->p, &t->p->svc[t->svc], child);
	return 0;
}

static bool is_traced(int tgid, void *user)
{
	return collector_is_traced(((struct ditto_profile *)user)->col, tgid);
}

/* Stacks refine thread classes; without them classes come from behaviour
 * alone, which is worth a warning but not a failure. */
static void start_sampler(struct ditto_profile *p)
{
	if (p->sample_hz < 0)
		return;
	if (thread_sampler_new(p->sample_hz, is_traced, p, &p->ts) ||
	    watch(p->epfd, thread_sampler_fd(p->ts))) {
		ditto_warn("stack sampling unavailable (%s): thread classes come from what the "
			   "threads do only", ditto_last_error());
		thread_sampler_free(p->ts);
		p->ts = NULL;
	}
}

/* Ports before the programs run: a connection accepted before the
 * window is known by its local port, and one seen before its port is
 * would pass for a connection the service opened (outbound). */
static int trace_services(struct ditto_profile *p)
{
	int err = 0;

	for (unsigned i = 0; i < p->nsvc && !err; i++) {
		struct thread_ctx t = { p, p->svc[i].pid, i };

		add_ports(p, &p->svc[i], p->svc[i].pid);
		proc_descendants(p->svc[i].pid, child_ports, &t);
		err = collector_trace(p->col, p->svc[i].pid, i);
	}
	return err;
}

/* Attached first, then scanned: forks in between are seen by the kernel
 * side. */
static int scan_services(struct ditto_profile *p)
{
	int err = 0;

	for (unsigned i = 0; i < p->nsvc && !err; i++) {
		struct thread_ctx t = { p, p->svc[i].pid, i };

		if (!(err = trace_process(p, i, p->svc[i].pid)))
			err = proc_descendants(p->svc[i].pid, trace_child, &t);
	}
	return err;
}

/* The graph's events are read as they come: the ring buffer is bounded. */
static int start_events(struct ditto_profile *p)
{
	int err;

	if (!p->graph)
		return 0;
	if ((err = edges_new(&p->edges)) ||
	    (err = collector_events_open(p->col, edges_event, p->edges)))
		return err;
	if (watch(p->epfd, collector_events_fd(p->col)))
		return ditto_err(-errno, "profile: cannot watch the graph events: %s",
				 strerror(errno));
	return 0;
}

static int name_services(struct ditto_profile *p);

/* A target of several that listens on no port serves no request the
 * graph can count: a client (a load generator, a batch job), or a
 * process given by mistake. Said, not refused: its calls still count. */
static void warn_no_listener(const struct ditto_profile *p)
{
	for (size_t i = 0; i < p->nsvc && p->nsvc > 1; i++)
		if (!p->svc[i].nports && !p->child && !proc_unix_listening(p->svc[i].pid))
			ditto_warn("process %d listens on no TCP port and no Unix socket: it serves "
				   "no request here, and its calls count as made outside any request "
				   "(unattributed)",
				   (int)p->svc[i].pid);
}

static int start_window(struct ditto_profile *p)
{
	struct itimerspec tick = { { 1, 0 }, { 1, 0 } };
	int err;

	/* Several services: the graph between them is the point. */
	p->graph = p->graph || p->nsvc > 1;
	collector_graph_events(p->col, p->graph);
	if ((err = start_events(p)) ||
	    (err = trace_services(p)) || (err = collector_attach(p->col)))
		return err;
	/* Counting is best effort: most VMs have no PMU (said at finish).
	 * Counters are not split by service: one service only. */
	if (p->nsvc == 1 &&
	    hw_counters_open(NULL, 0, &p->hwc, p->hw_counters_why, sizeof(p->hw_counters_why)))
		p->hwc = NULL;
	if ((err = scan_services(p))) {
		collector_detach(p->col);
		return err;
	}
	start_sampler(p);
	timerfd_settime(p->tfd, 0, &tick, NULL);
	clock_gettime(CLOCK_MONOTONIC, &p->start);
	p->state = ST_RUNNING;
	warn_no_listener(p);
	return name_services(p);
}

/* The name a port was given (ditto_profile_name_port()), or NULL. */
static const char *port_name(const struct ditto_profile *p, const struct session_svc *sv)
{
	for (size_t i = 0; i < sv->nports; i++)
		for (size_t j = 0; j < p->nnames; j++)
			if (p->names[j].port == sv->ports[i])
				return p->names[j].name;
	return NULL;
}

static bool name_taken(const struct ditto_profile *p, size_t upto, const char *name)
{
	for (size_t i = 0; i < upto; i++)
		if (p->svc[i].name && strcmp(p->svc[i].name, name) == 0)
			return true;
	return false;
}

/* A service is named by its port's given name, else (one service) the
 * session's service_name, else its executable; two of one executable
 * are told apart by their first port (node-3000, node-3001), or pid. */
static int name_one(struct ditto_profile *p, size_t i)
{
	struct session_svc *sv = &p->svc[i];
	const char *given = port_name(p, sv);
	char comm[32], buf[80];

	if (sv->name)
		return 0;
	if (!given && p->nsvc == 1 && p->service_name)
		given = p->service_name;
	if (given) {
		sv->name = strdup(given);
		return sv->name ? 0 : ditto_err(-ENOMEM, "out of memory");
	}
	if (proc_comm(sv->pid, comm, sizeof(comm)))
		snprintf(comm, sizeof(comm), "service");
	snprintf(buf, sizeof(buf), "%s", comm);
	if (p->nsvc > 1 && name_taken(p, p->nsvc, buf)) {
		if (sv->nports)
			snprintf(buf, sizeof(buf), "%s-%u", comm, (unsigned)sv->ports[0]);
		else
			snprintf(buf, sizeof(buf), "%s-%d", comm, (int)sv->pid);
	}
	sv->name = strdup(buf);
	return sv->name ? 0 : ditto_err(-ENOMEM, "out of memory");
}

/* Whether another service runs the executable comm. */
static bool comm_shared(const struct ditto_profile *p, size_t i, const char *comm)
{
	char other[32];

	for (size_t j = 0; j < p->nsvc; j++)
		if (j != i && !proc_comm(p->svc[j].pid, other, sizeof(other)) &&
		    strcmp(other, comm) == 0)
			return true;
	return false;
}

/* Two services of one name would make one model of two: refused before
 * the window, so nothing collected is lost to it. */
static int check_names(const struct ditto_profile *p)
{
	for (size_t i = 0; i < p->nsvc; i++)
		for (size_t j = i + 1; j < p->nsvc; j++)
			if (strcmp(p->svc[i].name, p->svc[j].name) == 0)
				return ditto_err(-EINVAL, "processes %d and %d would both be service "
						 "'%s': name them apart (ditto_profile_name_port(), "
						 "--name PORT=NAME)", (int)p->svc[i].pid,
						 (int)p->svc[j].pid, p->svc[i].name);
	return 0;
}

/* Executables first seen under one name are all renamed apart: name them
 * in two passes so the first of two node processes is "node-3000" too. */
static int name_services(struct ditto_profile *p)
{
	int err = 0;

	for (size_t i = 0; i < p->nsvc && !err; i++)
		err = name_one(p, i);
	for (size_t i = 0; i < p->nsvc && !err; i++) {
		char comm[32];

		if (p->nsvc < 2 || port_name(p, &p->svc[i]) || !p->svc[i].nports ||
		    proc_comm(p->svc[i].pid, comm, sizeof(comm)) || strcmp(p->svc[i].name, comm) ||
		    !comm_shared(p, i, comm))
			continue;
		free(p->svc[i].name);
		p->svc[i].name = NULL;
		if (asprintf(&p->svc[i].name, "%s-%u", comm, (unsigned)p->svc[i].ports[0]) < 0) {
			p->svc[i].name = NULL;
			err = ditto_err(-ENOMEM, "out of memory");
		}
	}
	return err ? err : check_names(p);
}

DITTO_API int ditto_profile_name_port(struct ditto_profile *p, uint16_t port, const char *name)
{
	char *copy;

	if (!p || p->state != ST_IDLE || !port || !name || !*name)
		return ditto_err(-EINVAL, "profile: name_port needs an idle session, a port and a "
				 "name");
	if (p->nnames == ARRAY_SIZE(p->names))
		return ditto_err(-E2BIG, "profile: at most %zu port names",
				 ARRAY_SIZE(p->names));
	for (size_t i = 0; i < p->nnames; i++) {
		if (p->names[i].port == port)
			return ditto_err(-EEXIST, "profile: port %u is named already",
					 (unsigned)port);
		if (strcmp(p->names[i].name, name) == 0)
			return ditto_err(-EEXIST, "profile: '%s' names port %u already", name,
					 (unsigned)p->names[i].port);
	}
	if (!(copy = strdup(name)))
		return ditto_err(-ENOMEM, "out of memory");
	p->names[p->nnames++] = (struct port_name){ port, copy };
	return 0;
}


static int check_targets(const pid_t *pids, size_t n)
{
	int err;

	if (n == 0 || n > MAX_SERVICES)
		return ditto_err(-EINVAL, "profile: %zu targets (1 to %d)", n, MAX_SERVICES);
	for (size_t i = 0; i < n; i++) {
		if (!proc_exists(pids[i]))
			return ditto_err(-ESRCH, "process %d does not exist", (int)pids[i]);
		if ((err = proc_check_user(pids[i])))
			return err;
		if (pids[i] == getpid() || proc_descends(getpid(), pids[i]))
			return ditto_err(-EINVAL, "process %d is this profiler or one of its "
					 "ancestors: a profile does not trace itself", (int)pids[i]);
		for (size_t j = 0; j < n; j++) {
			if (i != j && pids[i] == pids[j])
				return ditto_err(-EINVAL, "process %d is given twice", (int)pids[i]);
			if (i != j && proc_descends(pids[i], pids[j]))
				return ditto_err(-EINVAL, "process %d descends from %d: a service is a "
						 "whole process tree, give its root only",
						 (int)pids[i], (int)pids[j]);
		}
	}
	return 0;
}

static void release_locks(struct ditto_profile *p)
{
	for (size_t i = 0; i < MAX_SERVICES; i++)
		target_lock_release(&p->svc[i].lock);
}

DITTO_API int ditto_profile_attach_many(struct ditto_profile *p, const pid_t *pids, size_t n)
{
	int err;

	if (!p || p->state != ST_IDLE || !pids)
		return ditto_err(-EINVAL, "profile: session is not idle");
	if ((err = check_targets(pids, n)))
		return err;
	if (n > 1 && p->service_name)
		return ditto_err(-EINVAL, "profile: service_name names one service; name several "
				 "by their ports (ditto_profile_name_port())");
	for (size_t i = 0; i < n && !err; i++) {
		p->svc[i].pid = pids[i];
		err = target_lock_take(&p->svc[i].lock, pids[i]);
	}
	p->nsvc = n;
	if (err || (err = start_window(p)))
		release_locks(p);
	return err;
}

DITTO_API int ditto_profile_attach(struct ditto_profile *p, pid_t pid)
{
	return ditto_profile_attach_many(p, &pid, 1);
}

/* The child waits on a pipe until it is traced, so nothing is missed; a
 * failed exec sends its errno back on `status` (close-on-exec: a
 * successful exec closes it empty). */
static void launched_child(int rd, int status, char *const argv[])
{
	char go;
	int e;

	if (read(rd, &go, 1) != 1)
		_exit(127);
	close(rd);
	execvp(argv[0], argv);
	e = errno;
	if (write(status, &e, sizeof(e)) != (ssize_t)sizeof(e))
		_exit(126);
	_exit(127);
}

/* 0 once the command runs, or the error its exec failed with. */
static int exec_result(int status, const char *cmd)
{
	ssize_t n;
	int e;

	while ((n = read(status, &e, sizeof(e))) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(e))
		return 0;
	return ditto_err(-e, "profile: cannot run %s: %s", cmd, strerror(e));
}

DITTO_API int ditto_profile_launch(struct ditto_profile *p, char *const argv[])
{
	int pipefd[2], status[2], err;
	pid_t pid;

	if (!p || p->state != ST_IDLE || !argv || !argv[0])
		return ditto_err(-EINVAL, "profile: session is not idle or no command given");
	if (pipe2(pipefd, O_CLOEXEC))
		return ditto_err(-errno, "pipe: %s", strerror(errno));
	if (pipe2(status, O_CLOEXEC)) {
		err = ditto_err(-errno, "pipe: %s", strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return err;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		close(status[0]);
		close(status[1]);
		return ditto_err(err, "fork: %s", strerror(-err));
	}
	if (pid == 0) {
		close(pipefd[1]);
		close(status[0]);
		launched_child(pipefd[0], status[1], argv);
	}
	close(pipefd[0]);
	close(status[1]);
	p->child = pid;
	p->svc[0].pid = pid;
	p->nsvc = 1;
	if ((err = target_lock_take(&p->svc[0].lock, pid)) || (err = start_window(p))) {
		close(pipefd[1]);
		close(status[0]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		p->child = 0;
		release_locks(p);
		return err;
	}
	if (write(pipefd[1], "g", 1) != 1)
		err = ditto_err(-errno, "cannot start %s: %s", argv[0], strerror(errno));
	close(pipefd[1]);
	/* A command that cannot run is an error now, not a model of nothing. */
	if (!err)
		err = exec_result(status[0], argv[0]);
	close(status[0]);
	return err;
}

DITTO_API int ditto_profile_fd(const struct ditto_profile *p)
{
	return p ? p->epfd : -1;
}

/* One service's part of the window and its classes. */
static int analyse_svc(struct ditto_profile *p, struct session_svc *sv, unsigned i)
{
	struct snapshot *s = &sv->part;
	int err;

	if ((err = snapshot_part(&p->snap, i, s)))
		return err;
	sv->analysed = true;
	s->target = sv->pid;
	memcpy(s->ports, sv->ports, sizeof(s->ports));
	s->nports = sv->nports;
	/* Before classes form: a thread that waits to accept is an acceptor
	 * whether or not a client connected during the window. */
	listen_waiters_mark(s);
	return classify_threads(s, p->ts, &sv->cls);
}

/* Snapshot and classes of the system window, per service. */
static int analyse(struct ditto_profile *p)
{
	int err;

	if ((err = collector_events_drain(p->col)) || (err = collector_snapshot(p->col, &p->snap)))
		return err;
	p->analysed = true;
	if (p->ts)
		p->snap.reqs_by_svc[0].dropped += thread_sampler_lost(p->ts);
	for (unsigned i = 0; i < p->nsvc && !err; i++)
		err = analyse_svc(p, &p->svc[i], i);
	return err;
}

/* Request-serving classes get CPU windows, one service after the other;
 * a failure leaves the system profile whole, with a warning. False when
 * no service is left to step. */
static bool start_cpu_next(struct ditto_profile *p)
{
	while (p->cpu_next < p->nsvc) {
		struct session_svc *sv = &p->svc[p->cpu_next++];

		if (!proc_alive(sv->pid))
			continue;
		if (session_cpu_start(&sv->part, &sv->cls, &p->cpu_opts, &sv->cpu)) {
			ditto_warn("cpu windows not taken: %s", ditto_last_error());
			continue;
		}
		if (sv->cpu && watch(p->epfd, session_cpu_fd(sv->cpu)) == 0)
			return true;
	}
	return false;
}

static void start_cpu(struct ditto_profile *p)
{
	if (!p->cpu_on || p->analyse_err || p->target_exited)
		return;
	if (start_cpu_next(p))
		p->state = ST_CPU;
}

/* The service whose CPU windows run now. */
static struct session_cpu *cpu_now(struct ditto_profile *p)
{
	return p->cpu_next ? p->svc[p->cpu_next - 1].cpu : NULL;
}

static void end_window(struct ditto_profile *p)
{
	struct itimerspec off = { { 0, 0 }, { 0, 0 } };

	if (p->state == ST_CPU) {
		session_cpu_stop(cpu_now(p));
		p->cpu_next = p->nsvc;
		p->state = ST_ENDED;
	}
	if (p->state != ST_RUNNING)
		return;
	collector_detach(p->col);
	if (p->ts)
		thread_sampler_stop(p->ts);
	timerfd_settime(p->tfd, 0, &off, NULL);
	p->elapsed_s = elapsed(p);
	for (size_t i = 0; i < p->nsvc; i++)
		p->svc[i].exited = !proc_alive(p->svc[i].pid);
	p->state = ST_ENDED;
	p->analyse_err = analyse(p);
	start_cpu(p);
}

static void reap_child(struct ditto_profile *p)
{
	if (p->child > 0 && waitpid(p->child, NULL, WNOHANG) == p->child)
		p->child = 0;
}

/* The launched command ends with the session, unless asked to stay. */
static void stop_launched(struct ditto_profile *p)
{
	reap_child(p);
	if (p->child <= 0 || p->keep_launched)
		return;
	launched_stop(p->child, p->launch_grace_s);
	p->child = 0;
}

static void on_tick(struct ditto_profile *p)
{
	uint64_t n;

	if (read(p->tfd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return;
	reap_child(p);
	/* A launched service starts listening after the window opened. */
	for (size_t i = 0; i < p->nsvc; i++)
		add_ports(p, &p->svc[i], p->svc[i].pid);
	if (!collector_any_alive(p->col)) {
		p->target_exited = true;
		end_window(p);
	}
	if (p->progress) {
		uint64_t syscalls, requests;

		collector_progress(p->col, &syscalls, &requests);
		p->progress(elapsed(p), p->duration_s, syscalls, requests, p->user);
	}
}

static int wait_ms(const struct ditto_profile *p, int timeout_ms)
{
	double left;
	int ms;

	if (p->duration_s <= 0)
		return timeout_ms;
	left = p->duration_s - elapsed(p);
	ms = left <= 0 ? 0 : (int)(left * 1000) + 1;
	return timeout_ms < 0 || ms < timeout_ms ? ms : timeout_ms;
}

/* A cancel ends the system window. A window cut short (a duration was
 * set) or cancelled twice at once wants out: no CPU windows follow. A
 * window that runs until cancelled ends normally and CPU windows follow;
 * a second cancel ends those. */
static void end_cancelled(struct ditto_profile *p)
{
	uint64_t v = 0;

	(void)!read(p->evfd, &v, sizeof(v));
	if (p->duration_s > 0 || v > 1)
		p->cpu_on = false;
	end_window(p);
}

/* The CPU phase: wait for the guard child, pass a cancel on to it. */
static int cpu_step(struct ditto_profile *p, int timeout_ms)
{
	struct epoll_event ev[4];
	int n = epoll_wait(p->epfd, ev, ARRAY_SIZE(ev), timeout_ms);

	for (int i = 0; i < n; i++) {
		uint64_t v;

		if (ev[i].data.fd == p->evfd && read(p->evfd, &v, sizeof(v)) > 0) {
			session_cpu_stop(cpu_now(p));
			p->cpu_next = p->nsvc;	/* and no other service's */
		} else if (ev[i].data.fd == p->tfd) {
			(void)!read(p->tfd, &v, sizeof(v));
		}
	}
	if (session_cpu_poll(cpu_now(p)) > 0)
		return 1;
	/* A finished child's fd stays readable (EOF): watched on, it would
	 * wake every wait of the next service's windows. */
	epoll_ctl(p->epfd, EPOLL_CTL_DEL, session_cpu_fd(cpu_now(p)), NULL);
	if (!start_cpu_next(p))
		p->state = ST_ENDED;
	return p->state == ST_CPU;
}

DITTO_API int ditto_profile_step(struct ditto_profile *p, int timeout_ms)
{
	struct epoll_event ev[4];
	int n;

	if (!p)
		return ditto_err(-EINVAL, "profile: NULL session");
	if (p->state == ST_CPU)
		return cpu_step(p, timeout_ms);
	if (p->state != ST_RUNNING)
		return 0;
	n = epoll_wait(p->epfd, ev, ARRAY_SIZE(ev), wait_ms(p, timeout_ms));
	if (n < 0 && errno != EINTR)
		return ditto_err(-errno, "profile: epoll_wait: %s", strerror(errno));
	for (int i = 0; i < n && p->state == ST_RUNNING; i++) {
		if (ev[i].data.fd == p->tfd)
			on_tick(p);
		else if (p->ts && ev[i].data.fd == thread_sampler_fd(p->ts))
			thread_sampler_drain(p->ts);
		else if (ev[i].data.fd == collector_events_fd(p->col))
			collector_events_drain(p->col);
		else if (ev[i].data.fd == p->evfd)
			end_cancelled(p);
	}
	if (p->state == ST_RUNNING && p->duration_s > 0 && elapsed(p) >= p->duration_s)
		end_window(p);
	return p->state == ST_RUNNING || p->state == ST_CPU;
}

DITTO_API int ditto_profile_run(struct ditto_profile *p)
{
	int r;

	while ((r = ditto_profile_step(p, 1000)) > 0)
		;
	return r;
}

DITTO_API void ditto_profile_cancel(struct ditto_profile *p)
{
	uint64_t one = 1;
	ssize_t n;

	/* Only an eventfd write: async-signal-safe. */
	if (p && p->evfd >= 0)
		n = write(p->evfd, &one, sizeof(one));
	(void)n;
}

static void warn_gaps(const struct ditto_profile *p, const struct session_svc *sv,
		      unsigned gaps);

/* One service's model, as a profile of it alone would give. */
static int collect_svc(struct ditto_profile *p, struct session_svc *sv, struct ditto_model **out)
{
	struct build_args a = { sv->name, p->nsvc == 1 ? p->requests : 0, p->elapsed_s };
	int err;

	if ((err = build_model(&sv->part, &sv->cls, &a, out)))
		return err;
	if (sv->cpu) {
		err = session_cpu_store(sv->cpu, &sv->cls, *out);
		if (!proc_alive(sv->pid))
			ditto_warn("process %d exited during the CPU windows: its cpu section covers "
				   "what was stepped before", (int)sv->pid);
	}
	if (!err && p->nsvc == 1)
		err = session_counters_store(p->hwc, p->hw_counters_why, *out);
	if (!err) {
		unsigned gaps = model_gaps(&sv->part, *out);

		warn_gaps(p, sv, gaps);
		p->gaps |= gaps;
	}
	if (err) {
		ditto_model_free(*out);
		*out = NULL;
	}
	return err;
}

/* The services' models in one: one window, one host, several services. */
static int join(struct ditto_model *all, const struct ditto_model *one)
{
	return model_add_service_copy(all, ditto_model_service(one, 0));
}

static int store_graph(struct ditto_profile *p, struct ditto_model *m)
{
	struct edge_service es[MAX_SERVICES];
	uint64_t reqs, calls, ambiguous, lost;

	if (!p->edges)
		return 0;
	for (size_t i = 0; i < p->nsvc; i++)
		es[i] = (struct edge_service){ p->svc[i].name, p->svc[i].ports, p->svc[i].nports,
					       &p->svc[i].part };
	edges_counts(p->edges, &reqs, &calls, &ambiguous, &lost);
	if (lost)
		ditto_warn("graph: the window held more requests or calls than the graph keeps "
			   "(%u and %u): its edges cover the window up to the first one beyond",
			   EDGES_MAX_REQS, EDGES_MAX_CALLS);
	/* The ring buffer's losses are among the collector's (a full map or
	 * buffer): the edges may then miss calls. */
	if (p->snap.reqs_by_svc && p->snap.reqs_by_svc[0].dropped)
		ditto_warn("graph: the collector lost %llu events (meta.lost_events): edges may "
			   "miss calls", (unsigned long long)p->snap.reqs_by_svc[0].dropped);
	ditto_debug("graph: %llu requests, %llu calls, %llu of them attributed by a guess",
		    (unsigned long long)reqs, (unsigned long long)calls,
		    (unsigned long long)ambiguous);
	return edges_store(p->edges, es, p->nsvc, m);
}

static int collect(struct ditto_profile *p, struct ditto_model **out)
{
	struct ditto_model *one = NULL;
	int err;

	if (p->analyse_err)
		return p->analyse_err;
	if ((err = collect_svc(p, &p->svc[0], out)))
		return err;
	for (size_t i = 1; i < p->nsvc && !err; i++) {
		if (!(err = collect_svc(p, &p->svc[i], &one)))
			err = join(*out, one);
		ditto_model_free(one);
		one = NULL;
	}
	if (!err)
		err = store_graph(p, *out);
	if (!err)
		err = ditto_model_validate(*out, NULL);
	if (err) {
		ditto_model_free(*out);
		*out = NULL;
	}
	return err;
}

/* "network.io_model and framing": the model fields gaps left unknown. */
static void unknown_fields(unsigned gaps, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", gaps & DITTO_GAP_IO_MODEL ? "network.io_model" : "",
		 (gaps & DITTO_GAP_IO_MODEL) && (gaps & DITTO_GAP_FRAMING) ? " and " : "",
		 gaps & DITTO_GAP_FRAMING ? "framing" : "");
}

/* A model of an idle window is kept (nothing is lost) but never passed
 * off as a model of the service: what is missing and why, said once. */
static void warn_gaps(const struct ditto_profile *p, const struct session_svc *sv, unsigned gaps)
{
	char name[300], fields[64];

	if (!gaps)
		return;
	snprintf(name, sizeof(name), "%s", sv->name ? sv->name : "service");
	text_show_safely(name, sizeof(name));
	unknown_fields(gaps, fields, sizeof(fields));
	if (gaps & DITTO_GAP_NO_REQUESTS)
		ditto_warn("profile of '%s' (pid %d): no request was counted in the %.1f s window "
			   "(no traffic)%s%s%s: load the service while it is profiled", name,
			   (int)sv->pid, p->elapsed_s, *fields ? ", so " : "", fields,
			   *fields ? " could not be inferred and stay unknown" : "");
	else
		ditto_warn("profile of '%s' (pid %d): %s could not be inferred and stay%s unknown: "
			   "no thread was seen serving the requests counted; a longer window under "
			   "load may see them", name, (int)sv->pid, fields,
			   strchr(fields, ' ') ? "" : "s");
}

DITTO_API int ditto_profile_finish(struct ditto_profile *p, struct ditto_model **out)
{
	int err;

	if (!p || !out)
		return ditto_err(-EINVAL, "profile: NULL argument");
	*out = NULL;
	if (p->state == ST_IDLE || p->state == ST_FINISHED)
		return ditto_err(-EINVAL, "profile: nothing was profiled");
	end_window(p);
	p->state = ST_FINISHED;
	err = collect(p, out);
	stop_launched(p);
	if (err)
		return err;
	for (size_t i = 0; i < p->nsvc; i++)
		if (p->svc[i].exited)
			ditto_warn("process %d exited during the %.1f s window: the model holds what "
				   "was collected until then", (int)p->svc[i].pid, p->elapsed_s);
	return 0;
}

DITTO_API unsigned ditto_profile_gaps(const struct ditto_profile *p)
{
	return p ? p->gaps : 0;
}

DITTO_API void ditto_profile_free(struct ditto_profile *p)
{
	if (!p)
		return;
	end_window(p);
	hw_counters_free(p->hwc);
	for (size_t i = 0; i < MAX_SERVICES; i++) {
		struct session_svc *sv = &p->svc[i];

		session_cpu_free(sv->cpu);
		if (sv->analysed) {
			classes_free(&sv->cls);
			snapshot_free(&sv->part);
		}
		free(sv->name);
	}
	if (p->analysed)
		snapshot_free(&p->snap);
	for (size_t i = 0; i < p->nnames; i++)
		free(p->names[i].name);
	edges_free(p->edges);
	thread_sampler_free(p->ts);
	collector_free(p->col);
	stop_launched(p);
	for (int *fd = &p->epfd; fd <= &p->tfd; fd++)
		if (*fd >= 0)
			close(*fd);
	release_locks(p);
	free(p->service_name);
	free(p);
}
