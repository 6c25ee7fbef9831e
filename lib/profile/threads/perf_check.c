/* SPDX-License-Identifier: MIT */
/*
 * Why the kernel refuses system-wide perf sampling, said in words the user
 * can act on: perf_event_paranoid, missing capabilities, sample-rate caps,
 * seccomp profiles of container runtimes.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "threads_int.h"

#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38

static bool read_long(const char *path, long *v)
{
	FILE *f = fopen(path, "re");
	bool ok = f && fscanf(f, "%ld", v) == 1;

	if (f)
		fclose(f);
	return ok;
}

static uint64_t effective_caps(void)
{
	char line[256];
	uint64_t caps = 0;
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %" SCNx64, &caps) == 1)
			break;
	if (f)
		fclose(f);
	return caps;
}

static bool privileged(void)
{
	uint64_t caps = effective_caps();

	return (caps >> CAP_PERFMON_BIT & 1) || (caps >> CAP_SYS_ADMIN_BIT & 1);
}

static long paranoid(void)
{
	long v;

	return read_long("/proc/sys/kernel/perf_event_paranoid", &v) ? v : LONG_MIN;
}

int perf_check_access(int hz)
{
	long p = paranoid(), max_rate;

	if (p == LONG_MIN)
		return ditto_err(-ENOSYS, "threads: this kernel has no perf events "
				 "(no /proc/sys/kernel/perf_event_paranoid): thread sampling is unavailable");
	if (!privileged() && p > 0)
		return ditto_err(-EACCES, "threads: system-wide perf sampling needs CAP_PERFMON or "
				 "CAP_SYS_ADMIN, or kernel.perf_event_paranoid <= 0 (it is %ld): run as "
				 "root, grant CAP_PERFMON, or sysctl -w kernel.perf_event_paranoid=0", p);
	if (read_long("/proc/sys/kernel/perf_event_max_sample_rate", &max_rate) && hz > max_rate)
		return ditto_err(-EINVAL, "threads: %d Hz is above kernel.perf_event_max_sample_rate "
				 "(%ld)", hz, max_rate);
	return 0;
}

int perf_open_error(int err, int cpu, int hz)
{
	switch (err) {
	case EACCES:
	case EPERM:
		return ditto_err(-err, "threads: perf_event_open on cpu %d: %s (perf_event_paranoid "
				 "%ld; in a container, the seccomp profile may block perf_event_open: "
				 "allow it or run with CAP_PERFMON)", cpu, strerror(err), paranoid());
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP:
		return ditto_err(-err, "threads: the cpu-clock software event is not available on "
				 "cpu %d: %s", cpu, strerror(err));
	case EINVAL:
		return ditto_err(-err, "threads: perf rejected the sampling setup on cpu %d (%d Hz, "
				 "user regs, %d-byte stack copies): kernel too old or rate too high",
				 cpu, hz, THREAD_SAMPLER_STACK_BYTES);
	case EMFILE:
	case ENFILE:
		return ditto_err(-err, "threads: out of file descriptors for per-CPU perf events "
				 "(raise ulimit -n)");
	default:
		return ditto_err(-err, "threads: perf_event_open on cpu %d: %s", cpu, strerror(err));
	}
}
