/* SPDX-License-Identifier: MIT */
/*
 * Why ptrace was refused a thread, said plainly: another tracer, Yama's
 * scope, or missing privileges. Used wherever the CPU windows attach or
 * read a target (stepper.c, decoder.c).
 */
#include <errno.h>
#include <stdio.h>
#include <sys/types.h>

#include "core_int.h"
#include "cpu_int.h"

/* TracerPid of a thread (0 untraced, -1 unknown), from /proc/TID/status. */
static long tracer_of(pid_t tid)
{
	char path[64], line[128];
	long tracer = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %ld", &tracer) == 1)
			break;
	fclose(f);
	return tracer;
}

int ptrace_perm_error(pid_t tid, int err)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	long tracer = tracer_of(tid);
	int scope = -1;

	/* A thread has one tracer: permissions are not the cause then. */
	if (tracer > 0) {
		if (f)
			fclose(f);
		return ditto_err(-EBUSY, "ptrace: cannot attach to thread %d: it is already traced "
				 "by process %ld (a debugger, strace or another profiler)", (int)tid,
				 tracer);
	}

	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = -1;
		fclose(f);
	}
	if (scope == 3)
		return ditto_err(err, "ptrace: cannot attach to thread %d: kernel.yama.ptrace_scope is "
				 "3 (ptrace disabled until reboot)", (int)tid);
	if (scope >= 1)
		return ditto_err(err, "ptrace: cannot attach to thread %d: not permitted; needs "
				 "CAP_SYS_PTRACE (run as root) since kernel.yama.ptrace_scope is %d",
				 (int)tid, scope);
	return ditto_err(err, "ptrace: cannot attach to thread %d: not permitted; needs the same "
			 "user as the target or CAP_SYS_PTRACE", (int)tid);
}
