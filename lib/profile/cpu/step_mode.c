/* SPDX-License-Identifier: MIT */
/*
 * Which mechanism CPU windows use to get past system calls and rep
 * strings: hardware breakpoints where they fire, PTRACE_SYSCALL stops
 * elsewhere. Some hosts (virtual machines) accept debug-register writes
 * and never fire them, so the write succeeding proves nothing: a
 * breakpoint is set on a throwaway child and must be seen to fire.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core_int.h"
#include "cpu_int.h"

#include <ditto/profile.h>

static const char *const mode_names[] = { "auto", "breakpoint", "syscall_stops" };
#define NMODES (sizeof(mode_names) / sizeof(mode_names[0]))

DITTO_API const char *ditto_step_mode_name(enum ditto_step_mode m)
{
	return (unsigned)m < NMODES ? mode_names[m] : "unknown";
}

DITTO_API int ditto_step_mode_parse(const char *name, enum ditto_step_mode *out)
{
	for (size_t i = 0; name && i < NMODES; i++)
		if (!strcmp(name, mode_names[i])) {
			*out = (enum ditto_step_mode)i;
			return 0;
		}
	return ditto_err(-EINVAL, "'%s' is not a stepping mode (auto, breakpoint, syscall_stops)",
			 name ? name : "(null)");
}

/* Called by the child; the breakpoint goes on its first instruction. */
__attribute__((noinline)) static void probe_target(void)
{
	__asm__ volatile("" ::: "memory");
}

static void probe_child(void)
{
	void (*volatile fn)(void) = probe_target;

	if (ptrace(PTRACE_TRACEME, 0, 0, 0) == 0 && raise(SIGSTOP) == 0)
		fn();
	_exit(0);
}

/* A stop (or the end) of the child within about a second; 0 if none. */
static pid_t wait_child(pid_t pid, int *st)
{
	for (int i = 0; i < 1000; i++) {
		struct timespec ms = { 0, 1000000 };
		pid_t r = waitpid(pid, st, __WALL | WNOHANG);

		if (r != 0 || errno == ECHILD)
			return r;
		nanosleep(&ms, NULL);
	}
	return 0;
}

static bool fired(pid_t pid)
{
	size_t dr0 = offsetof(struct user, u_debugreg[0]), dr7 = offsetof(struct user, u_debugreg[7]);
	struct user_regs_struct r;
	int st;

	if (wait_child(pid, &st) != pid || !WIFSTOPPED(st))
		return false;
	if (ptrace(PTRACE_POKEUSER, pid, (void *)dr0, (void *)probe_target) ||
	    ptrace(PTRACE_POKEUSER, pid, (void *)dr7, (void *)1L) ||
	    ptrace(PTRACE_CONT, pid, 0, 0))
		return false;
	if (wait_child(pid, &st) != pid || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP)
		return false;
	return !ptrace(PTRACE_GETREGS, pid, 0, &r) && r.rip == (uintptr_t)probe_target;
}

static int bp_works = -1;

static void check_breakpoints(void)
{
	pid_t pid = fork();

	if (pid == 0)
		probe_child();
	if (pid < 0) {
		ditto_warn("cpu windows: cannot check hardware breakpoints (fork: %s); using "
			   "syscall stops", strerror(errno));
		bp_works = 0;
		return;
	}
	bp_works = fired(pid);
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
	ditto_log(DITTO_LOG_DEBUG, "cpu windows: hardware breakpoints %s on this host",
		  bp_works ? "fire" : "do not fire");
}

DITTO_API int ditto_step_breakpoints_work(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, check_breakpoints);
	return bp_works;
}

/*
 * Fault injection for tests: DITTO_TEST_DEAD_BREAKPOINTS=1 makes every
 * breakpoint of a window accepted but disabled (DR7 enable bits clear),
 * which is what a host with dead debug registers does, and lets the
 * breakpoint mode be chosen without the check. So the detection inside a
 * window and the switch to syscall stops run on any host.
 */
bool step_breakpoints_dead(void)
{
	const char *e = getenv("DITTO_TEST_DEAD_BREAKPOINTS");

	return e && !strcmp(e, "1");
}

int step_mode_resolve(int requested)
{
	const char *env = getenv("DITTO_STEP_MODE");
	enum ditto_step_mode m;
	int err;

	if (requested < 0 || (unsigned)requested >= NMODES)
		return ditto_err(-EINVAL, "stepping mode %d is not one of enum ditto_step_mode",
				 requested);
	if (requested == DITTO_STEP_AUTO && env && *env) {
		if ((err = ditto_step_mode_parse(env, &m)))
			return ditto_err(err, "DITTO_STEP_MODE='%s' is not a stepping mode (auto, "
					 "breakpoint, syscall_stops)", env);
		requested = (int)m;
	}
	if (requested == DITTO_STEP_SYSCALL_STOPS)
		return requested;
	if (requested == DITTO_STEP_BREAKPOINT && step_breakpoints_dead())
		return requested;
	if (ditto_step_breakpoints_work() > 0)
		return DITTO_STEP_BREAKPOINT;
	if (requested == DITTO_STEP_BREAKPOINT)
		return ditto_err(-EOPNOTSUPP, "cpu windows: hardware breakpoints do not fire on "
				 "this host (a breakpoint set on a child process never "
				 "trapped); use the syscall_stops or auto stepping mode");
	return DITTO_STEP_SYSCALL_STOPS;
}

DITTO_API int ditto_step_mode_detect(void)
{
	return step_mode_resolve(DITTO_STEP_AUTO);
}
