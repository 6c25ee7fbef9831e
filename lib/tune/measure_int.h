/* SPDX-License-Identifier: MIT */
/*
 * Internal interface of the measurement backends (measure*.c, counters.c,
 * cg_parse.c): the service under measurement, the load run against it and
 * the cachegrind output parser.
 */
#ifndef DITTO_MEASURE_INT_H
#define DITTO_MEASURE_INT_H

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <ditto/ditto.h>
#include <ditto/tune.h>

/* --- cachegrind output files (cg_parse.c) --- */

/* Events of cachegrind --cache-sim=yes --branch-sim=yes, in its order. */
enum cg_event {
	CG_IR, CG_I1MR, CG_ILMR,
	CG_DR, CG_D1MR, CG_DLMR,
	CG_DW, CG_D1MW, CG_DLMW,
	CG_BC, CG_BCM, CG_BI, CG_BIM,
	CG_N
};

/* The "summary:" totals of a file; bit i of have set when event i was in
 * its "events:" line. */
struct cg_totals {
	uint64_t v[CG_N];
	uint32_t have;
};

#define CG_ALL ((1u << CG_N) - 1)

/*
 * Parse the text of a cachegrind output file: the "events:" line names the
 * columns, the "summary:" line holds the totals; per-line data is ignored.
 * name prefixes messages ("cachegrind.out.123: line 4: ..."). Errors:
 * -DITTO_ECORRUPT (no events or summary line, a bad or overflowing count,
 * a column count that does not match), -DITTO_ELIMIT too many columns.
 */
int cg_parse(const char *text, size_t len, const char *name, struct cg_totals *out);
/* Read and parse a file (named by its base name in messages). */
int cg_parse_file(const char *path, struct cg_totals *out);
/* a += b; -ERANGE when a total would overflow. Keeps the events both have. */
int cg_totals_add(struct cg_totals *a, const struct cg_totals *b);

/* --- CPUs of a measurement (measure_pin.c) --- */

/* on: the machine has two CPUs or more for this process; load: the
 * first, for the generator and the observer; svc: the others. */
struct pin {
	bool on;
	cpu_set_t load, svc;
};
void pin_plan(struct pin *p);
/* Move the calling thread onto p->load; true when it was moved (saved
 * holds its CPUs before), for pin_restore(). */
bool pin_thread(const struct pin *p, cpu_set_t *saved);
void pin_restore(bool pinned, const cpu_set_t *saved);

/* --- one measurement (measure.c) --- */

/* The options of ditto_measure(), read and completed. */
struct mctx {
	char *const *argv;
	struct ditto_loadgen_opts load;	/* the caller's, with host and stop set */
	const char *host;		/* load.host or 127.0.0.1 */
	double startup_timeout_s;
	const char *dir;		/* work directory (exists) */
	const volatile int *stop;
	struct pin pin;			/* pin.on: the service and the load apart */
};

/* A started service: a process group led by pid. */
struct svc {
	pid_t pid;
	bool reaped;		/* its status is in status */
	bool stopped;		/* svc_stop() ran */
	int status;
	const char *name;	/* the service's argv[0], for messages */
	char log[PATH_MAX];	/* its stdout and stderr */
};

static inline bool measure_stopped(const struct mctx *c)
{
	return c->stop && *c->stop;
}
/* Sleep about ns nanoseconds (a signal may end it early). */
void measure_nap(long ns);
/* A connected socket to the service (host:port of c->load), or -errno. */
int measure_connect(const struct mctx *c);
/* Resolve a command like execvp would (PATH search); -ENOENT with a message. */
int cmd_resolve(const char *cmd, char *path, size_t len);
/* c->argv with argv[0] resolved into path (PATH_MAX bytes); free *argv. */
int native_argv(const struct mctx *c, char *path, char ***argv);
/* Start argv (argv[0] resolved, already) in its own process group, output
 * to ctx->dir/logname; s->name names the service in messages. */
int svc_start(const struct mctx *c, char *const *argv, const char *logname, const char *name,
	      struct svc *s);
/* Wait until it accepts on host:port: -ETIMEDOUT, -ECHILD (it exited),
 * -ECANCELED (stop set). */
int svc_wait_ready(const struct mctx *c, struct svc *s);
/* -ECHILD with its status when it exited by itself, else 0. */
int svc_check_alive(struct svc *s, const char *when);
/* SIGTERM the group, SIGKILL after 10 s; always reaps. -ETIMEDOUT when it
 * had to be killed. Safe to call twice. */
int svc_stop(struct svc *s);
/* The last lines of its log (of a file), on one line, for messages: the
 * last four lines of the file's last 2 KiB, joined by " | ", without
 * CRs, cut to len; "(nothing)" for an empty or unreadable file. (synth's
 * build.c keeps a build log's last 600 bytes as they are, lines and all:
 * a different tail for a different message.) */
void svc_log_tail(const struct svc *s, char *buf, size_t len);
void measure_log_tail_line(const char *path, char *buf, size_t len);

/* Open and close the load's connections without requests, then wait as
 * after a load: what a run without load must do to subtract connections. */
int measure_idle_connects(const struct mctx *c);
/* Pause after a load so the service sees the connections close. */
void measure_settle(void);
void measure_nap_ms(unsigned ms);

/* Run the load in the calling thread; *answered gets the requests
 * answered. -EIO when none was. */
int measure_load(const struct mctx *c, uint64_t *answered);

/* The same in a second thread, for backends that observe while it runs;
 * load_thread_stop() ends it early (the caller's stop is not seen there:
 * the observing thread forwards it). */
struct load_thread {
	pthread_t tid;
	struct mctx c;		/* the caller's, with load.stop = &stop */
	volatile int stop;
	uint64_t answered;
	int err;
	int done;		/* set (atomically) when the load ended */
	char msg[1024];		/* the load thread's error message */
};
int load_thread_start(struct load_thread *t, const struct mctx *c);
bool load_thread_done(const struct load_thread *t);
void load_thread_stop(struct load_thread *t);
/* Joins; the load's error or 0. */
int load_thread_join(struct load_thread *t);

/* --- backends --- */
/* 0, or -ENOENT (with a message) when valgrind is missing. */
int cachegrind_available(void);
int measure_cachegrind(const struct mctx *c, struct ditto_metrics *m);
int measure_profile(const struct mctx *c, struct ditto_metrics *m);
int measure_cpu(const struct mctx *c, struct ditto_metrics *m);
/* The cpu backend's metrics of one class's CPU windows. */
struct ditto_cpu;
int measure_cpu_metrics(struct ditto_cpu *cpu, struct ditto_metrics *m);
/* The service started natively and profiled with po while the load runs;
 * the model (the caller's) and the requests the load saw answered. */
struct ditto_profile_opts;
struct ditto_model;
int measure_profile_model(const struct mctx *c, const struct ditto_profile_opts *po,
			  struct ditto_model **model, uint64_t *answered);
/* The profile backend's metrics of a modelled service over `requests`. */
struct ditto_service;
int measure_service_metrics(struct ditto_service *s, double requests, struct ditto_metrics *m);

/* CPU time of every thread class of s, as the profiler's scheduler
 * events counted it (0: none recorded). */
uint64_t measure_service_cpu_ns(const struct ditto_service *s);
int measure_counters(const struct mctx *c, struct ditto_metrics *m);
/* 0, or -EOPNOTSUPP / -EACCES with the reason when counters cannot run. */
int counters_usable(void);

#endif /* DITTO_MEASURE_INT_H */
