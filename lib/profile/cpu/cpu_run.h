/* SPDX-License-Identifier: MIT */
/* A series of CPU windows over thread classes (cpu_run.c). */
#ifndef DITTO_CPU_RUN_H
#define DITTO_CPU_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct ditto_cpu;
struct ditto_cpu_opts;

struct cpu_target {
	pid_t tgid, tid;
	int cls;		/* 0..ncls-1 */
};

struct cpu_run_opts {
	unsigned windows;	/* per class */
	uint64_t window_insts;
	double spacing_s;
	double window_timeout_s;
	int step_mode;		/* enum ditto_step_mode; AUTO is resolved at start */
	/* Names of the ncls classes, for messages (NULL: the classes have
	 * none, as in ditto_profile_cpu()); read in the tracer child, which
	 * gets its own copy at the fork. */
	const char *const *class_names;
};

/* Public options with their defaults filled in and the stepping mode
 * resolved (cpu_profile.c): 0 or the error of step_mode_resolve(). */
int cpu_opts_defaults(const struct ditto_cpu_opts *o, struct cpu_run_opts *r);

struct cpu_run;
int cpu_run_new(const struct cpu_target *t, size_t nt, unsigned ncls, const struct cpu_run_opts *o,
		struct cpu_run **out);
void cpu_run_free(struct cpu_run *r);
/* Take the next window: 1 while more are due, 0 when done, or an error
 * (a failed attach: nothing was left stopped). */
int cpu_run_step(struct cpu_run *r, const volatile int *stop);
/* Seconds until the next window is due. */
double cpu_run_wait_s(const struct cpu_run *r);
/* Add class c's results to out. */
int cpu_run_store(struct cpu_run *r, unsigned c, struct ditto_cpu *out);
uint64_t cpu_run_instructions(const struct cpu_run *r);

/* ---- the same, in a child process that is the tracer (cpu_child.c) ---- */
struct cpu_child;
struct ditto_model;
int cpu_child_start(const struct cpu_target *t, size_t nt, unsigned ncls,
		    const struct cpu_run_opts *o, struct cpu_child **out);
/* Readable when the child has news; poll: 1 running, 0 done. */
int cpu_child_fd(const struct cpu_child *c);
int cpu_child_poll(struct cpu_child *c);
/* End the current window early and take no more. */
void cpu_child_stop(struct cpu_child *c);
/* Wait for the end; *res: services[0].cpu[c] for class c, or NULL when
 * nothing was stepped. Partial results come with the error that ended them. */
int cpu_child_finish(struct cpu_child *c, struct ditto_model **res);
void cpu_child_free(struct cpu_child *c);

/* ---- adding to a cpu entry (cpu_merge.c) ---- */
enum cpu_count {
	CPU_C_WINDOWS, CPU_C_INSTRUCTIONS, CPU_C_UNDECODED, CPU_C_LOADS, CPU_C_STORES,
	CPU_C_CHASED, CPU_C_DWS_COLD, CPU_C_IWS_COLD, CPU_C_JIT, CPU_C_STEPPED_NS,
	CPU_NCOUNTS
};
enum cpu_hist {
	CPU_H_IPR, CPU_H_BRANCHES, CPU_H_DWS, CPU_H_IWS, CPU_H_RAW, CPU_H_WAR, CPU_H_WAW,
	CPU_H_MEM_RAW, CPU_NHISTS
};
struct ditto_hist;
/* dst's counts += c, histograms += h (NULL entries skipped). */
int cpu_add(struct ditto_cpu *dst, const uint64_t c[CPU_NCOUNTS],
	    const struct ditto_hist *const h[CPU_NHISTS]);
/* dst += src, mix included. */
int cpu_merge(struct ditto_cpu *dst, const struct ditto_cpu *src);

#endif /* DITTO_CPU_RUN_H */
