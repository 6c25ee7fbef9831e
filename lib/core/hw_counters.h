/* SPDX-License-Identifier: MIT */
/*
 * hw_counters.h: hardware counters of a set of threads, via libpfm4.
 *
 * One counting perf event per thread and counter, user space only
 * (exclude_kernel, exclude_hv), not inherited: the caller adds each thread,
 * including those that appear after hw_counters_open(). Counts of threads that
 * exit stay in the totals. Not thread safe: one thread uses a handle at a
 * time. Functions returning int give 0 or a negative errno-style code with
 * ditto_last_error() set.
 */
#ifndef DITTO_PROFILE_CPU_HW_COUNTERS_H
#define DITTO_PROFILE_CPU_HW_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct hw_counters;

/* Counters are indexed like enum ditto_counter in include/ditto/model.h:
 * cycles, instructions, branches, branch_misses, l1i_misses, l1d_misses, l2_misses, llc_misses. */
#define HW_COUNTERS_N 8

/*
 * Open counting events for the given threads (tids > 0), user space only.
 * Returns 0 and *out when at least cycles and instructions can be counted;
 * counters the host lacks (an L2 miss event, on most PMUs other than Intel,
 * AMD Zen and Arm) are left out. Threads that already exited are skipped.
 * On failure *out is NULL and why (if not NULL) says why, as does
 * ditto_last_error():
 *  -EOPNOTSUPP  the host has no hardware counters (a VM without a PMU) or
 *               libpfm4 cannot initialize;
 *  -EACCES      perf_event_paranoid, a missing CAP_PERFMON, ptrace access
 *               to a thread or a seccomp filter blocks perf_event_open;
 *  -EMFILE etc. other perf_event_open errors, -ENOMEM, -EINVAL.
 * Needs HW_COUNTERS_N file descriptors per thread.
 */
int hw_counters_open(const pid_t *tids, size_t n, struct hw_counters **out, char *why,
		     size_t whylen);

/*
 * Count a thread that appeared later too. 0 when it is counted, already
 * counted (a tid reused within the window is therefore missed) or already
 * gone; -EACCES, -EMFILE, -ENOMEM... otherwise, the handle staying usable.
 */
int hw_counters_add_thread(struct hw_counters *h, pid_t tid);

/*
 * Totals so far over all threads; bit i of *have set when counter i was
 * counted (scaled for multiplexing with time_enabled/time_running). A
 * counter that never got a hardware counter while enabled has its bit
 * clear. h may be NULL (all zero).
 */
void hw_counters_read(struct hw_counters *h, uint64_t vals[HW_COUNTERS_N], uint32_t *have);

/* Closes every event; NULL is fine. */
void hw_counters_free(struct hw_counters *h);

#endif /* DITTO_PROFILE_CPU_HW_COUNTERS_H */
