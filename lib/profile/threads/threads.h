/* SPDX-License-Identifier: MIT */
/*
 * Thread call trees and thread classes (internal to libditto).
 *
 * A thread_sampler opens one software cpu-clock perf event per online CPU
 * (system wide: one event per thread would cost far more, see field notes),
 * keeps the samples of the processes the caller traces, unwinds each copied
 * user stack with libunwind (no frame pointers needed), symbolizes the
 * frames and adds them to a weighted call tree per thread. Threads are then
 * grouped into classes by a weighted tree edit distance and average-linkage
 * agglomerative clustering (the Ditto artifact's method, with its defects
 * fixed: weights count in the rename cost, and the distance runs in process).
 *
 * Frame labels (symbol names, "module+0xoffset") live only inside the
 * sampler: they are for distances and debugging, never for the model.
 *
 * Samples taken while a thread ran in the kernel (system calls, page
 * faults) are kept when the kernel allows it: they are attributed to the
 * thread's user stack with a "[kernel]" leaf, so that syscall-heavy threads
 * are not under-counted. thread_sampler_stats().kernel_excluded says when the kernel
 * refused and only user-mode samples were taken.
 *
 * Not thread safe: one sampler is used by one thread at a time. All
 * functions returning int give 0 (or a count) or a negative errno-style
 * code with ditto_last_error() set.
 */
#ifndef DITTO_PROFILE_THREADS_H
#define DITTO_PROFILE_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define THREAD_SAMPLER_DEFAULT_HZ 99
/* Average-linkage distance at or above which classes are not merged (artifact: 0.2). */
#define THREAD_SAMPLER_DEFAULT_THRESHOLD 0.2
/* Bytes of user stack copied per sample: 8 KiB unwinds too few stacks. */
#define THREAD_SAMPLER_STACK_BYTES 16384
#define THREAD_SAMPLER_MAX_FRAMES 64

struct thread_sampler;

struct thread_sampler_thread_info {
	int tid;
	int tgid;
	uint64_t samples;	/* samples kept for this thread */
	uint64_t unwound;	/* of which unwound to an outermost frame */
	uint64_t kernel;	/* of which were taken in kernel mode */
};

struct thread_sampler_stats {
	uint64_t read;		/* sample records read from the rings */
	uint64_t kept;		/* of which passed traced() */
	uint64_t unwound;	/* of kept: reached an outermost frame */
	uint64_t named_outermost; /* of unwound: outermost frame has a known name (_start, clone...) */
	uint64_t kernel;	/* of kept: taken in kernel mode */
	uint64_t lost;		/* samples the kernel dropped (PERF_RECORD_LOST*) */
	uint64_t maps_reads;	/* /proc/PID/maps parses */
	uint64_t modules;	/* ELF modules opened */
	double unwind_us;	/* mean unwind + symbolization time per kept sample */
	double unwind_us_p50, unwind_us_p99;	/* its quantiles (the mean holds ELF loads) */
	size_t cpus;		/* perf events opened */
	bool kernel_excluded;	/* the kernel only allowed user-mode samples */
};

/*
 * Start sampling every online CPU at hz (1..kernel.perf_event_max_sample_rate)
 * and keep the samples of processes for which traced(tgid, user) is true;
 * traced NULL keeps every process but the caller's. Needs CAP_PERFMON or
 * CAP_SYS_ADMIN, or kernel.perf_event_paranoid <= 0: -EACCES otherwise, with
 * what to do in the message. -ENOSYS when the kernel has no perf events.
 */
int thread_sampler_new(int hz, bool (*traced)(int tgid, void *user), void *user,
	      struct thread_sampler **out);

/* An epoll fd, readable when some ring is a quarter full; -1 after thread_sampler_stop. */
int thread_sampler_fd(const struct thread_sampler *s);

/*
 * Consume every pending sample: unwind, symbolize, add to the thread's
 * call tree. Returns the number of samples kept (>= 0) or an error. Drain
 * at least every ~0.5 s at 99 Hz, or rings overflow (counted in lost).
 */
int thread_sampler_drain(struct thread_sampler *s);

/* Disable the events, drain what is left, unmap and close (idempotent). Trees stay. */
void thread_sampler_stop(struct thread_sampler *s);

/* Threads seen so far, in first-sample order. */
size_t thread_sampler_thread_count(const struct thread_sampler *s);
int thread_sampler_thread(const struct thread_sampler *s, size_t i,
			  struct thread_sampler_thread_info *out);

/*
 * Share of kept samples whose unwinding ended where the unwind tables say
 * the stack ends (return address undefined: _start for the main thread,
 * clone/clone3 for the others); 0 with no samples.
 */
double thread_sampler_unwind_success(const struct thread_sampler *s);
uint64_t thread_sampler_lost(const struct thread_sampler *s);
void thread_sampler_stats(const struct thread_sampler *s, struct thread_sampler_stats *out);

/*
 * Normalised weighted tree edit distance in [0,1] between two threads'
 * call trees: TED / (W(a) + W(b)), W = sum of node weights (inclusive sample
 * counts). Delete and insert cost the node's weight; a rename costs
 * |w1 - w2| between equal labels, w1 + w2 otherwise, so equal shapes with
 * different sample counts are apart. Siblings are put in label order first,
 * so the order in which paths were first sampled does not matter. Trees are
 * pruned to nodes holding >= 1% of the thread's samples and at most 256
 * nodes (the heaviest; the pruned weight stays in the ancestors).
 * A thread without samples (or unknown tid) is an empty tree: distance 0 to
 * another empty tree, 1 to any sampled one.
 */
int thread_sampler_distance(const struct thread_sampler *s, int tid_a, int tid_b, double *out);

/* thread_sampler_cluster flag: compare each tree's shares of its own samples, so
 * threads that run the same code at different loads are near (a pool
 * whose threads served 1:3 of the requests is one class), each pair from
 * the first frame both threads' heavy paths share, so that how a thread
 * was started (a worker loop on the main thread or on a started one) does
 * not count. */
#define THREAD_SAMPLER_SHAPE 1u

/*
 * Cluster tids[0..n) by average linkage on thread_sampler_distance, merging while the
 * closest classes are nearer than threshold (in [0,1]; THREAD_SAMPLER_DEFAULT_THRESHOLD
 * is the artifact's). flags: 0 or THREAD_SAMPLER_SHAPE. class_of[i] gets
 * 0..*nclasses-1, numbered in order of
 * first appearance in tids. All threads without samples share one class
 * ("idle"): nothing tells them apart here; the scheduler and syscall
 * collectors can split it. O(n^2) distances, O(n^3) linkage: meant for up to
 * a few hundred threads.
 */
int thread_sampler_cluster(const struct thread_sampler *s, const int *tids, size_t n,
			   double threshold, unsigned flags, int *class_of, size_t *nclasses);

/* Debugging: print tid's call tree (nodes with >= min_share of its samples). */
int thread_sampler_dump(const struct thread_sampler *s, int tid, double min_share, FILE *f);

void thread_sampler_free(struct thread_sampler *s);

#endif /* DITTO_PROFILE_THREADS_H */
