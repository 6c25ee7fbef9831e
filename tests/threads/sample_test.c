/* SPDX-License-Identifier: MIT */
/*
 * Live test of the thread sampler: sample a process (a command it starts,
 * or a running PID), then print unwind quality, per-thread samples, the
 * distance matrix and the classes. Needs root or CAP_PERFMON (exit 77,
 * "skipped", otherwise).
 *
 *   sample_test [-f HZ] [-s SECONDS] [-t THRESHOLD] [-v] [--shape] [--expect-spin]
 *               [--min-unwind FRACTION] (-p PID | -- COMMAND ARGS...)
 *
 * --expect-spin checks the classes of spin_target: {spin-a1, spin-a2}
 * together, spin-b and sleep-c each apart.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "threads.h"
#include <ditto/ditto.h>

#define MAX_T 1024

struct opts {
	int hz, seconds, pid;
	double threshold, min_unwind;
	unsigned flags;		/* THREAD_SAMPLER_SHAPE with --shape */
	bool verbose, expect_spin;
	const char *expect_label;	/* a frame some thread's tree must hold */
	char **cmd;
};

struct thread_sampler;
static bool has_label(const struct thread_sampler *s, const int *tids, size_t n,
		      const char *label);

static struct {
	int tid[MAX_T];
	char comm[MAX_T][20];
	size_t n;
} known;

static bool traced(int tgid, void *user)
{
	return tgid == *(int *)user;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Thread names are read while the process lives: it is killed before the report. */
static void scan_tasks(int pid)
{
	char path[64];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (!(d = opendir(path)))
		return;
	while ((e = readdir(d)) && known.n < MAX_T) {
		int tid = atoi(e->d_name);
		size_t i;
		FILE *f;

		for (i = 0; i < known.n && known.tid[i] != tid; i++)
			;
		if (!tid || i < known.n)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
		known.tid[known.n] = tid;
		snprintf(known.comm[known.n], sizeof(known.comm[0]), "?");
		if ((f = fopen(path, "r"))) {
			if (fgets(known.comm[known.n], sizeof(known.comm[0]), f))
				known.comm[known.n][strcspn(known.comm[known.n], "\n")] = 0;
			fclose(f);
		}
		known.n++;
	}
	closedir(d);
}

static const char *comm_of(int tid)
{
	for (size_t i = 0; i < known.n; i++)
		if (known.tid[i] == tid)
			return known.comm[i];
	return "?";
}

static int parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .hz = 99, .seconds = 3, .threshold = THREAD_SAMPLER_DEFAULT_THRESHOLD };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--")) {
			o->cmd = argv + i + 1;
			break;
		} else if (!strcmp(a, "-v")) {
			o->verbose = true;
		} else if (!strcmp(a, "--expect-spin")) {
			o->expect_spin = true;
		} else if (!strcmp(a, "--shape")) {
			o->flags |= THREAD_SAMPLER_SHAPE;
		} else if (v && !strcmp(a, "-f")) {
			o->hz = atoi(argv[++i]);
		} else if (v && !strcmp(a, "-s")) {
			o->seconds = atoi(argv[++i]);
		} else if (v && !strcmp(a, "-t")) {
			o->threshold = atof(argv[++i]);
		} else if (v && !strcmp(a, "-p")) {
			o->pid = atoi(argv[++i]);
		} else if (v && !strcmp(a, "--expect-label")) {
			o->expect_label = argv[++i];
		} else if (v && !strcmp(a, "--min-unwind")) {
			o->min_unwind = atof(argv[++i]);
		} else {
			return -1;
		}
	}
	return (o->pid > 0) != (o->cmd && o->cmd[0]) ? 0 : -1;
}

static int launch(char **cmd)
{
	int pid = fork();

	if (pid == 0) {
		execvp(cmd[0], cmd);
		_exit(127);
	}
	usleep(300 * 1000);	/* let it start its threads */
	return pid;
}

static int sample(struct thread_sampler *s, const struct opts *o, int pid)
{
	double end = now_s() + o->seconds;
	struct epoll_event ev;

	while (now_s() < end) {
		int err;

		epoll_wait(thread_sampler_fd(s), &ev, 1, 200);
		if ((err = thread_sampler_drain(s)) < 0)
			return err;
		scan_tasks(pid);
	}
	thread_sampler_stop(s);
	return 0;
}

static void report_stats(const struct thread_sampler *s)
{
	struct thread_sampler_stats st;

	thread_sampler_stats(s, &st);
	printf("cpus %zu, samples read %llu, kept %llu (kernel-mode %llu%s), lost %llu\n", st.cpus,
	       (unsigned long long)st.read, (unsigned long long)st.kept,
	       (unsigned long long)st.kernel, st.kernel_excluded ? ", kernel excluded" : "",
	       (unsigned long long)st.lost);
	printf("unwind success %.2f%% (named outermost frame %.2f%% of those)\n",
	       100 * thread_sampler_unwind_success(s),
	       st.unwound ? 100.0 * (double)st.named_outermost / (double)st.unwound : 0);
	printf("unwind + symbols per sample: mean %.1f us, median %.1f us, p99 %.1f us; "
	       "%llu modules, %llu maps reads\n", st.unwind_us, st.unwind_us_p50, st.unwind_us_p99,
	       (unsigned long long)st.modules, (unsigned long long)st.maps_reads);
}

/* Sampled threads plus the process's other threads (no samples: the idle class). */
static size_t thread_list(const struct thread_sampler *s, int *tids)
{
	size_t n = 0;

	for (size_t i = 0; i < thread_sampler_thread_count(s) && n < MAX_T; i++) {
		struct thread_sampler_thread_info ti;

		thread_sampler_thread(s, i, &ti);
		tids[n++] = ti.tid;
	}
	for (size_t i = 0; i < known.n && n < MAX_T; i++) {
		size_t j;

		for (j = 0; j < n && tids[j] != known.tid[i]; j++)
			;
		if (j == n)
			tids[n++] = known.tid[i];
	}
	return n;
}

static void report_threads(const struct thread_sampler *s, const struct opts *o)
{
	for (size_t i = 0; i < thread_sampler_thread_count(s); i++) {
		struct thread_sampler_thread_info ti;

		thread_sampler_thread(s, i, &ti);
		printf("thread %-7d %-16s samples %5llu  unwound %6.2f%%  kernel %5.1f%%\n", ti.tid,
		       comm_of(ti.tid), (unsigned long long)ti.samples,
		       ti.samples ? 100.0 * (double)ti.unwound / (double)ti.samples : 0,
		       ti.samples ? 100.0 * (double)ti.kernel / (double)ti.samples : 0);
		if (o->verbose)
			thread_sampler_dump(s, ti.tid, 0.02, stdout);
	}
}

static void report_matrix(const struct thread_sampler *s, const int *tids, size_t n)
{
	printf("distances:\n%18s", "");
	for (size_t j = 0; j < n && j < 16; j++)
		printf(" %6.6s", comm_of(tids[j]));
	printf("\n");
	for (size_t i = 0; i < n && i < 16; i++) {
		printf("%-18.18s", comm_of(tids[i]));
		for (size_t j = 0; j < n && j < 16; j++) {
			double d = -1;

			thread_sampler_distance(s, tids[i], tids[j], &d);
			printf(" %6.3f", d);
		}
		printf("\n");
	}
}

static int class_named(const int *tids, const int *cls, size_t n, const char *comm)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(comm_of(tids[i]), comm))
			return cls[i];
	return -1;
}

static int check_spin(const int *tids, const int *cls, size_t n)
{
	int a1 = class_named(tids, cls, n, "spin-a1"), a2 = class_named(tids, cls, n, "spin-a2");
	int b = class_named(tids, cls, n, "spin-b"), c = class_named(tids, cls, n, "sleep-c");
	bool ok = a1 >= 0 && a1 == a2 && b >= 0 && b != a1 && c >= 0 && c != a1 && c != b;

	printf("expect {spin-a1,spin-a2} {spin-b} {sleep-c}: %s (a1 %d a2 %d b %d c %d)\n",
	       ok ? "ok" : "FAIL", a1, a2, b, c);
	return ok ? 0 : 1;
}

static int report(const struct thread_sampler *s, const struct opts *o)
{
	static int tids[MAX_T], cls[MAX_T];
	size_t n = thread_list(s, tids), nclasses;
	double t0;
	int err, rc = 0;

	report_stats(s);
	report_threads(s, o);
	report_matrix(s, tids, n);
	t0 = now_s();
	if ((err = thread_sampler_cluster(s, tids, n, o->threshold, o->flags, cls,
					  &nclasses)) < 0) {
		printf("cluster: %s\n", ditto_last_error());
		return 1;
	}
	printf("clustered %zu threads (%zu pairs) in %.2f ms: %zu classes at threshold %.2f\n", n,
	       n * (n - 1) / 2, (now_s() - t0) * 1e3, nclasses, o->threshold);
	for (size_t k = 0; k < nclasses; k++) {
		printf("  class %zu:", k);
		for (size_t i = 0; i < n; i++)
			if ((size_t)cls[i] == k)
				printf(" %d(%s)", tids[i], comm_of(tids[i]));
		printf("\n");
	}
	if (o->expect_spin)
		rc |= check_spin(tids, cls, n);
	if (o->expect_label && !has_label(s, tids, n, o->expect_label)) {
		printf("FAIL: no frame is labelled %s\n", o->expect_label);
		rc = 1;
	}
	if (thread_sampler_unwind_success(s) < o->min_unwind) {
		printf("FAIL: unwind success below %.2f\n", o->min_unwind);
		rc = 1;
	}
	return rc;
}

/* Whether a dumped tree has a line that is exactly "<indent>label <count>". */
static bool has_label(const struct thread_sampler *s, const int *tids, size_t n, const char *label)
{
	bool found = false;

	for (size_t i = 0; i < n && !found; i++) {
		char *text = NULL, *line, *save = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		if (!f)
			return false;
		thread_sampler_dump(s, tids[i], 0, f);
		fclose(f);
		for (line = strtok_r(text, "\n", &save); line && !found;
		     line = strtok_r(NULL, "\n", &save)) {
			line += strspn(line, " ");
			found = !strncmp(line, label, strlen(label)) && line[strlen(label)] == ' ';
		}
		free(text);
	}
	return found;
}

int main(int argc, char **argv)
{
	struct thread_sampler *s;
	struct opts o;
	int pid, err, rc, status;

	if (parse(argc, argv, &o)) {
		fprintf(stderr, "usage: sample_test [-f HZ] [-s SECONDS] [-t THRESHOLD] [-v] [--shape] "
			"[--expect-spin] [--expect-label NAME] [--min-unwind F] (-p PID | -- COMMAND...)\n");
		return 2;
	}
	pid = o.pid ? o.pid : launch(o.cmd);
	err = thread_sampler_new(o.hz, traced, &pid, &s);
	if (err) {
		printf("thread_sampler_new: %s\n", ditto_last_error());
		if (o.cmd)
			kill(pid, SIGKILL);
		return err == -EACCES || err == -ENOSYS || err == -EPERM ? 77 : 1;
	}
	scan_tasks(pid);
	err = sample(s, &o, pid);
	if (o.cmd) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	if (err < 0) {
		printf("sampling: %s\n", ditto_last_error());
		thread_sampler_free(s);
		return 1;
	}
	rc = report(s, &o);
	thread_sampler_free(s);
	return rc;
}
