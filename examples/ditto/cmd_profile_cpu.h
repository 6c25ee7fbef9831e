/* SPDX-License-Identifier: MIT */
/* CPU-window options of `ditto profile` and its --cpu-only mode. */
#ifndef DITTO_CMD_PROFILE_CPU_H
#define DITTO_CMD_PROFILE_CPU_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <ditto/model.h>

#define CPU_MAX_TIDS 64

struct cpu_args {
	unsigned windows;
	bool windows_set;
	uint64_t insts;
	double spacing;
	int step_mode;		/* enum ditto_step_mode */
	bool only;
	pid_t tids[CPU_MAX_TIDS];
	size_t ntids;
};

/* One of -W -I -S -M -c -t; prints the usage error and returns non-zero. */
int cpu_parse_option(int c, const char *arg, struct cpu_args *a);
/* --cpu-only: windows on a process's threads into a new model file. */
int cpu_only(long pid, const char *name, const char *output, bool quiet,
	     const struct cpu_args *a);
/* "cpu: ..." lines: what was stepped and what it cost, per class. */
void cpu_report(struct ditto_model *m);

#endif
