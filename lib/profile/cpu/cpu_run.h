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
};

/* Public options with their defaults filled in (cpu_profile.c). */
void cpu_opts_defaults(const struct ditto_cpu_opts *o, struct cpu_run_opts *r);

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
uint64_t cpu_run_stepped_ns(const struct cpu_run *r);

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

/* dst += src (cpu_merge.c). */
int cpu_merge(struct ditto_cpu *dst, struct ditto_cpu *src);

#endif /* DITTO_CPU_RUN_H */
