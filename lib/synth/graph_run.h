/* SPDX-License-Identifier: MIT */
/*
 * A running graph (graph_up.c starts it, graph_run.c watches and stops
 * it, graph_down.c stops it from another process through up.json,
 * which graph_up_json.c reads).
 */
#ifndef DITTO_SYNTH_GRAPH_RUN_H
#define DITTO_SYNTH_GRAPH_RUN_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "graph_int.h"

struct tier {
	char name[GRAPH_NAME_MAX];
	char exe[PATH_MAX];
	char log[PATH_MAX];
	pid_t pid;			/* 0: not running */
	unsigned port;
	unsigned long long start_ticks;	/* /proc/PID/stat field 22 */
};

struct ditto_synth_run {
	char dir[PATH_MAX];
	char up_json[PATH_MAX];
	char front[GRAPH_ADDR_MAX];
	struct tier t[GRAPH_NODES_MAX];	/* start order */
	size_t n;
	pid_t pgid;
	double grace_s;
	bool stopped;
	bool published;		/* up.json written: its absence means `ditto down` */
};

/* up.json read back (graph_up_json.c). */
struct up_tier {
	pid_t pid;
	unsigned long long ticks;	/* its start time, as proc_start_ticks() */
	char exe[PATH_MAX];
};

struct up_state {
	pid_t runner;
	unsigned long long runner_ticks;
	struct up_tier tiers[GRAPH_NODES_MAX];	/* start order, as written */
	size_t n;
};

/* Read and check an up.json: -DITTO_ECORRUPT / -DITTO_EINVALID naming
 * the JSON path, -DITTO_ELIMIT, -errno for the file; *s is of no use
 * after an error. up_json_parse() reads a buffer (name: for messages). */
int up_json_read(const char *path, struct up_state *s);
int up_json_parse(const char *buf, size_t len, const char *name, struct up_state *s);

/* The start time of pid in clock ticks since boot; 0 when it is gone
 * (or a zombie). */
unsigned long long proc_start_ticks(pid_t pid);
/* up.json of the run, written to a temporary file and renamed. */
int run_write_up_json(struct ditto_synth_run *r);
/* The last lines of a tier's log into out. */
/* SIGTERM to every tier (front first) and its group, SIGKILL after the
 * grace; reaps them. Removes up.json when remove_json. */
void run_stop_all(struct ditto_synth_run *r, bool remove_json);
/* 0 while every tier runs; else the first tier found dead stops the rest
 * (-ECHILD), or up.json claimed by `ditto down` does (-ECANCELED). */
int run_check(struct ditto_synth_run *r);

#endif
