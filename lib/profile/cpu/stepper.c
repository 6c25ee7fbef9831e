/* SPDX-License-Identifier: MIT */
/*
 * One execution window on one thread: PTRACE_SEIZE, interrupt, single-step
 * N instructions (one PTRACE_GETREGS per step), detach. Other threads of
 * the process keep running. Traps are the cost (~28 us each here), so a
 * rep-prefixed string instruction runs to completion under a per-thread
 * hardware breakpoint instead of trapping once per iteration.
 *
 * A system call is never single-stepped: with the trap flag set, the
 * kernel queues a SIGTRAP at its exit, and a call interrupted at the
 * window's deadline would deliver that SIGTRAP after the detach and kill
 * the thread. It runs, waited for by polling, either under a hardware
 * breakpoint on the next instruction or between PTRACE_SYSCALL entry and
 * exit stops (no trap flag: for hosts whose debug registers never fire,
 * see step_mode.c), and is interrupted at the deadline without any trap
 * pending; the kernel restarts it once released. Without breakpoints a
 * rep string is stepped iteration by iteration, within the same deadline.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <linux/ptrace.h>
#include <time.h>
#include <unistd.h>

#include "core_int.h"
#include "cpu_int.h"

#define FD_CACHE 4096

enum fdk { FDK_UNKNOWN = 0, FDK_SOCKET, FDK_OTHER };

struct stepper {
	pid_t pid, tid;
	struct decoder *d;
	struct analysis *a;
	const struct step_opts *o;
	struct step_result *res;
	double deadline;	/* of the system call being waited for */
	int pending_sig;	/* signal to deliver on the next resume */
	int mode;		/* DITTO_STEP_BREAKPOINT or DITTO_STEP_SYSCALL_STOPS */
	bool stopped;		/* the thread is in a ptrace stop */
	bool syscall_stop;	/* ... a PTRACE_SYSCALL entry or exit stop */
	bool no_progress;	/* ... before the instruction ran (signal, event) */
	bool gone;
	bool dead_bp;		/* step_breakpoints_dead(): fault injection */
	bool ran_to_deadline;	/* was running (not blocked) when interrupted */
	double rep_since;	/* a rep string stepped by iteration since then */
	bool pinned;		/* the tracer's own affinity to restore */
	cpu_set_t self_mask;
	uint8_t fdk[FD_CACHE];
	bool reading[FD_CACHE];	/* read since the thread last wrote to it */
};

static double mono_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static bool should_stop(const struct stepper *s)
{
	return s->o->stop && *s->o->stop;
}

/* Interpret a wait status: 1 stopped, 0 gone. Signals are kept for later. */
static int on_status(struct stepper *s, int st)
{
	int sig;

	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		s->gone = true;
		s->stopped = false;
		return 0;
	}
	s->stopped = true;
	sig = WSTOPSIG(st);
	s->syscall_stop = sig == (SIGTRAP | 0x80);
	/* A signal-delivery stop (deliver it on resume) or an event stop: in
	 * both the instruction has not run. */
	s->no_progress = (st >> 16) != 0;
	if ((st >> 16) == 0 && sig != SIGTRAP && !s->syscall_stop) {
		s->pending_sig = sig;
		s->no_progress = true;
	}
	return 1;
}

static int wait_blocking(struct stepper *s)
{
	int st;

	while (waitpid(s->tid, &st, __WALL) < 0)
		if (errno != EINTR) {
			s->gone = true;
			return 0;
		}
	return on_status(s, st);
}

/* The thread's /proc stat line from its state on (field 3), into buf;
 * NULL if it cannot be read. */
static const char *task_stat(const struct stepper *s, char *buf, size_t len)
{
	char path[64], *p = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)s->pid, (int)s->tid);
	if (!(f = fopen(path, "re")))
		return NULL;
	if (fgets(buf, (int)len, f) && (p = strrchr(buf, ')')) && p[1] == ' ')
		p += 2;
	else
		p = NULL;
	fclose(f);
	return p;
}

/* Scheduler state of the thread ('R', 'S', 'D'...), '?' if unknown. */
static char thread_state(const struct stepper *s)
{
	char buf[1024];
	const char *p = task_stat(s, buf, sizeof(buf));

	return p ? *p : '?';
}

/* The step may block (a system call): poll until the deadline, then
 * interrupt; the kernel restarts the call once the thread is released. */
static int wait_polled(struct stepper *s, bool *interrupted)
{
	struct timespec nap = { 0, 20000 };
	int st;
	pid_t r;

	*interrupted = false;
	s->deadline = mono_s() + (s->o->timeout_s > 0 ? s->o->timeout_s : 1.0);
	for (;;) {
		r = waitpid(s->tid, &st, __WALL | WNOHANG);
		if (r == s->tid)
			return on_status(s, st);
		if (r < 0 && errno != EINTR) {
			s->gone = true;
			return 0;
		}
		if (should_stop(s) || mono_s() >= s->deadline) {
			s->ran_to_deadline = !should_stop(s) && thread_state(s) == 'R';
			if (ptrace(PTRACE_INTERRUPT, s->tid, 0, 0) && errno == ESRCH)
				return wait_blocking(s);
			*interrupted = true;
			return wait_blocking(s);
		}
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < 2000000)
			nap.tv_nsec *= 2;
	}
}

static int resume(struct stepper *s, enum __ptrace_request how)
{
	int sig = s->pending_sig;

	s->pending_sig = 0;
	if (ptrace(how, s->tid, 0, (void *)(long)sig)) {
		s->gone = errno == ESRCH;
		return -errno;
	}
	s->stopped = false;
	return 0;
}

static bool set_dr7(const struct stepper *s, uint64_t bp)
{
	size_t dr0 = offsetof(struct user, u_debugreg[0]), dr7 = offsetof(struct user, u_debugreg[7]);
	long enable = bp && !s->dead_bp ? 1L : 0L;

	if (bp && ptrace(PTRACE_POKEUSER, s->tid, (void *)dr0, (void *)bp))
		return false;
	return ptrace(PTRACE_POKEUSER, s->tid, (void *)dr7, (void *)enable) == 0;
}

/* Run one instruction (a rep string, a system call) to its end under a
 * breakpoint on the next one: one trap, no trap flag. */
static int run_over(struct stepper *s, const struct insn *in, bool *interrupted)
{
	struct user_regs_struct r;
	int err;

	if (!set_dr7(s, in->addr + in->len)) {
		s->res->bp_failed = true;
		return -EOPNOTSUPP;
	}
	if ((err = resume(s, PTRACE_CONT)))
		return err;
	wait_polled(s, interrupted);
	if (!s->stopped)
		return 0;
	set_dr7(s, 0);
	/* Still running at the deadline (not blocked in the call), or stopped
	 * (interrupted, or by a signal) anywhere but in the instruction or
	 * right after it: the thread ran past a breakpoint that did not fire.
	 * (A rep string or a call that computes for the whole timeout looks
	 * the same; the cost of taking it for a dead breakpoint is only slower
	 * windows.) Not caught: a thread that passes the dead breakpoint and
	 * blocks in the same call again before a signal stops it. */
	if (!ptrace(PTRACE_GETREGS, s->tid, 0, &r) &&
	    ((*interrupted && s->ran_to_deadline) ||
	     (r.rip != in->addr && r.rip != in->addr + in->len)))
		s->res->bp_failed = true;
	return 0;
}

/* Run the system call at rip from its entry stop to its exit stop. A
 * signal or event stop before the entry ends it early (no_progress). */
static int run_syscall(struct stepper *s, bool *interrupted)
{
	struct ptrace_syscall_info info;
	int err;

	for (;;) {
		if ((err = resume(s, PTRACE_SYSCALL)))
			return err;
		wait_polled(s, interrupted);
		if (!s->stopped || !s->syscall_stop || *interrupted)
			return 0;
		if (ptrace(PTRACE_GET_SYSCALL_INFO, s->tid, (void *)sizeof(info), &info) <= 0)
			return ditto_err(-errno, "ptrace: PTRACE_GET_SYSCALL_INFO: %s",
					 strerror(errno));
		if (info.op != PTRACE_SYSCALL_INFO_ENTRY)
			return 0;
	}
}

static enum fdk fd_kind(struct stepper *s, int fd)
{
	char path[64], link[64];
	ssize_t n;

	if (fd < 0 || fd >= FD_CACHE)
		return FDK_OTHER;
	if (s->fdk[fd] == FDK_UNKNOWN) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)s->pid, fd);
		n = readlink(path, link, sizeof(link) - 1);
		s->fdk[fd] = n > 7 && !strncmp(link, "socket:", 7) ? FDK_SOCKET : FDK_OTHER;
	}
	return (enum fdk)s->fdk[fd];
}

/*
 * The first of read, readv, recvfrom, recvmsg that returned data from a
 * socket since the thread last wrote to that socket: the start of a
 * request. A server that reads a frame's header and then its body
 * (MariaDB: two recvfrom per request) made two boundaries per request
 * when every read was one: a sample of the few hundred instructions
 * between its reads and one of the rest.
 */
static bool is_request_read(struct stepper *s, const struct user_regs_struct *before,
			    const struct user_regs_struct *after)
{
	uint64_t nr = before->rax;
	int fd = (int)before->rdi;
	bool rd = nr == 0 || nr == 19 || nr == 45 || nr == 47;
	bool wr = nr == 1 || nr == 20 || nr == 40 || nr == 44 || nr == 46 || nr == 307;
	bool first;

	if ((!rd && !wr) || (int64_t)after->rax <= 0 || fd_kind(s, fd) != FDK_SOCKET)
		return false;
	first = rd && !s->reading[fd];
	s->reading[fd] = rd;	/* fd_kind(): 0 <= fd < FD_CACHE */
	return first;
}

static int getregs(struct stepper *s, struct user_regs_struct *r)
{
	if (ptrace(PTRACE_GETREGS, s->tid, 0, r)) {
		s->gone = errno == ESRCH;
		return -errno;
	}
	return 0;
}

/* Without breakpoints a rep string is stepped by iteration; one that
 * outlasts the window timeout ends the window like a blocked call. */
static bool rep_too_long(struct stepper *s, const struct insn *in, uint64_t rip, uint64_t prev)
{
	double now;

	if (!in->rep || in->kind != IK_STRING) {
		s->rep_since = 0;
		return false;
	}
	now = mono_s();
	if (rip != prev || !s->rep_since)
		s->rep_since = now;
	return now - s->rep_since > (s->o->timeout_s > 0 ? s->o->timeout_s : 1.0);
}

/* Execute the instruction at cur->rip; *next gets the registers after it. */
static int step_one(struct stepper *s, const struct insn *in, const struct user_regs_struct *cur,
		    struct user_regs_struct *next, bool *interrupted)
{
	/* rt_sigreturn does not return to the next instruction: a breakpoint
	 * there would not fire, its exit stop shows where it went. */
	bool sigreturn = in->kind == IK_SYSCALL && cur->rax == 15;
	int r;

	*interrupted = false;
	if ((in->kind == IK_SYSCALL || (in->rep && in->kind == IK_STRING)) &&
	    s->mode == DITTO_STEP_BREAKPOINT && !sigreturn) {
		r = run_over(s, in, interrupted);
		if (s->res->bp_failed)
			s->mode = DITTO_STEP_SYSCALL_STOPS;
		if (r != -EOPNOTSUPP)
			return r < 0 ? r : !s->stopped ? -ESRCH : getregs(s, next);
	}
	if (in->kind == IK_SYSCALL) {
		if ((r = run_syscall(s, interrupted)))
			return r;
		return !s->stopped ? -ESRCH : getregs(s, next);
	}
	if ((r = resume(s, PTRACE_SINGLESTEP)))
		return r;
	wait_blocking(s);
	if (!s->stopped)
		return -ESRCH;
	return getregs(s, next);
}

/* A call that returned a restart code runs again once the kernel has
 * dealt with the signal that interrupted it: the same instruction. */
static bool restarts(const struct user_regs_struct *r)
{
	int64_t rax = (int64_t)r->rax;

	return (int64_t)r->orig_rax >= 0 && (rax == -512 || rax == -513 || rax == -514 ||
					     rax == -516);
}

/*
 * A thread stopped inside a system call shows the registers of its return
 * with a restart code in rax; once resumed, the kernel backs rip up to the
 * syscall instruction and issues the call again. Start from there.
 */
static void restart_point(struct user_regs_struct *r)
{
	if (restarts(r)) {
		r->rip -= 2;
		r->rax = r->orig_rax;
	}
}

static int step_loop(struct stepper *s)
{
	struct user_regs_struct cur, next;
	uint64_t rep_rip = 0;
	bool interrupted;
	int err;

	if ((err = getregs(s, &cur)))
		return err;
	restart_point(&cur);
	while (s->res->insts < s->o->insts && !should_stop(s)) {
		const struct insn *in = decoder_get(s->d, cur.rip);

		if (!in)
			return ditto_err(-ENOMEM, "out of memory");
		if ((err = step_one(s, in, &cur, &next, &interrupted)))
			return err;
		if (interrupted || rep_too_long(s, in, next.rip, cur.rip)) {
			s->res->timed_out = true;
			break;
		}
		/* A signal stopped the thread before the instruction ran (the
		 * next resume delivers it, into a handler or the default), or
		 * a signal interrupted the call, which runs again (now, or
		 * after a handler that ran between syscall stops). */
		if (s->no_progress ||
		    (in->kind == IK_SYSCALL && (restarts(&next) || next.rip == cur.rip))) {
			cur = next;
			restart_point(&cur);
			continue;
		}
		/* A rep instruction stepped iteration by iteration counts once. */
		if (!(in->rep && cur.rip == rep_rip)) {
			analysis_insn(s->a, in, &cur, next.rip);
			s->res->insts++;
		}
		rep_rip = in->rep && next.rip == cur.rip ? cur.rip : 0;
		if (in->kind == IK_SYSCALL && is_request_read(s, &cur, &next))
			analysis_request_boundary(s->a);
		cur = next;
	}
	return 0;
}

/* CPU the thread last ran on, from field 39 of its stat. */
static int last_cpu(const struct stepper *s)
{
	char buf[1024];
	const char *p = task_stat(s, buf, sizeof(buf));
	int field = 3;

	for (; p && *p && field < 39; p++)
		field += *p == ' ';
	return p && field == 39 ? atoi(p) : -1;
}

/*
 * The tracer moves to the CPU the tracee last ran on: each trap then wakes
 * the tracer where the tracee stops, and the wake-up brings the tracee
 * back to the same CPU, without an inter-processor wake-up. The tracee's
 * own affinity is never changed, so nothing needs restoring if the tracer
 * dies (pinning the tracee too ran no faster: README, CPU windows).
 */
static void pin(struct stepper *s)
{
	cpu_set_t one, tracee;
	int cpu = last_cpu(s);

	if (sched_getaffinity(s->tid, sizeof(tracee), &tracee) ||
	    sched_getaffinity(0, sizeof(s->self_mask), &s->self_mask))
		return;
	if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &tracee))
		return;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	s->pinned = sched_setaffinity(0, sizeof(one), &one) == 0;
}

static void unpin(struct stepper *s)
{
	if (s->pinned)
		sched_setaffinity(0, sizeof(s->self_mask), &s->self_mask);
	s->pinned = false;
}

/* Leave the thread running, whatever state it is in. */
static void release(struct stepper *s)
{
	unpin(s);
	if (s->gone)
		return;
	if (!s->stopped && ptrace(PTRACE_INTERRUPT, s->tid, 0, 0) == 0)
		wait_blocking(s);
	if (s->stopped)
		ptrace(PTRACE_DETACH, s->tid, 0, (void *)(long)s->pending_sig);
	else
		ptrace(PTRACE_DETACH, s->tid, 0, 0);
}

static int seize(struct stepper *s)
{
	/* TRACESYSGOOD: syscall stops are told apart from traps (SIGTRAP|0x80). */
	if (ptrace(PTRACE_SEIZE, s->tid, 0, (void *)(long)PTRACE_O_TRACESYSGOOD)) {
		int err = -errno;

		if (err == -EPERM)
			return ptrace_perm_error(s->tid, err);
		if (err == -ESRCH)
			s->gone = true;
		return ditto_err(err, "ptrace: cannot attach to thread %d: %s", (int)s->tid,
				 strerror(errno));
	}
	if (ptrace(PTRACE_INTERRUPT, s->tid, 0, 0) || !wait_blocking(s))
		return -ESRCH;
	pin(s);
	return 0;
}

int step_window(pid_t pid, pid_t tid, struct decoder *d, struct analysis *a,
		const struct step_opts *o, struct step_result *res)
{
	struct stepper s = { .pid = pid, .tid = tid, .d = d, .a = a, .o = o, .res = res,
			     .mode = o->mode, .dead_bp = step_breakpoints_dead() };
	double t0 = mono_s();
	int err;

	memset(res, 0, sizeof(*res));
	analysis_window(a);
	err = seize(&s);
	if (!err)
		err = step_loop(&s);
	release(&s);
	res->thread_exited = s.gone;
	res->ns = (uint64_t)((mono_s() - t0) * 1e9);
	if (s.gone)
		return 0;	/* what was stepped before it exited is kept */
	return err == -ESRCH ? 0 : err;
}
