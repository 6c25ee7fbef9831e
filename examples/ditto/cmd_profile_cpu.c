/* SPDX-License-Identifier: MIT */
/*
 * `ditto profile` CPU windows: option parsing, --cpu-only (ptrace windows
 * without the eBPF system window) and the summary of what was stepped.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ditto/profile.h>

#include "cli.h"
#include "cmd_profile_cpu.h"

#define CMD "profile"

int cpu_parse_option(int c, const char *arg, struct cpu_args *a)
{
	uint64_t u;

	switch (c) {
	case 'W':
		if (!cli_parse_u64(arg, &u) || u > 10000)
			return cli_usage_error(CMD, "--cpu-windows: '%s' is not 0..10000", arg);
		a->windows = (unsigned)u;
		a->windows_set = true;
		return 0;
	case 'I':
		if (!cli_parse_u64(arg, &a->insts) || a->insts == 0)
			return cli_usage_error(CMD, "--cpu-insts: '%s' is not a positive count", arg);
		return 0;
	case 'S':
		if (!cli_parse_f64(arg, &a->spacing) || a->spacing < 0)
			return cli_usage_error(CMD, "--cpu-spacing: '%s' is not a number >= 0", arg);
		if (a->spacing == 0)
			a->spacing = -1;	/* the library's "none" */
		return 0;
	case 'M':
		if (ditto_step_mode_parse(arg, (enum ditto_step_mode *)&a->step_mode))
			return cli_usage_error(CMD, "--step-mode: '%s' is not auto, breakpoint or "
					       "syscall_stops", arg);
		return 0;
	case 'c':
		a->only = true;
		return 0;
	default:
		if (a->ntids == CPU_MAX_TIDS)
			return cli_usage_error(CMD, "--tid: at most %d threads", CPU_MAX_TIDS);
		if (!cli_parse_u64(arg, &u) || u == 0 || u > 4194304)
			return cli_usage_error(CMD, "--tid: '%s' is not a thread id", arg);
		a->tids[a->ntids++] = (pid_t)u;
		return 0;
	}
}

static volatile int stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* "syscall_stops", or "breakpoint 3, syscall_stops 5" when both were used. */
static const char *stepping(struct ditto_cpu *c)
{
	static char buf[96];
	struct ditto_counts *st = ditto_cpu_stepping(c);
	size_t n = st ? ditto_counts_size(st) : 0, len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && len < sizeof(buf); i++) {
		const char *key;
		uint64_t w;

		if (ditto_counts_entry(st, i, &key, &w))
			continue;
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, n == 1 ? "%s%s" : "%s%s %llu",
					i ? ", " : "", key, (unsigned long long)w);
	}
	return n ? buf : "stepping unknown";
}

void cpu_report(struct ditto_model *m)
{
	double window = ditto_meta_window_s(ditto_model_meta(m));

	for (size_t s = 0; s < ditto_model_service_count(m); s++) {
		struct ditto_service *svc = ditto_model_service(m, s);

		for (size_t i = 0; i < ditto_service_cpu_count(svc); i++) {
			struct ditto_cpu *c = ditto_service_cpu(svc, i);
			double held = (double)ditto_cpu_stepped_ns(c) / 1e9;

			fprintf(stderr, "cpu: %s: %llu windows (%s), %llu instructions (%llu "
				"undecoded), threads held %.2f s", ditto_cpu_thread_class(c),
				(unsigned long long)ditto_cpu_windows(c), stepping(c),
				(unsigned long long)ditto_cpu_instructions(c),
				(unsigned long long)ditto_cpu_undecoded(c), held);
			if (window > 0)
				fprintf(stderr, " (%.1f%% of the %.1f s profile)",
					100.0 * held / (window + held), window + held);
			fputc('\n', stderr);
		}
	}
}

static int fill(long pid, const char *name, const struct cpu_args *a, struct ditto_model *m)
{
	DITTO_OPTS(ditto_cpu_opts, o, .windows = a->windows, .window_insts = a->insts,
		   .spacing_s = a->spacing, .stop = &stop_flag, .step_mode = a->step_mode);
	struct ditto_service *svc = ditto_model_add_service(m, name);
	struct ditto_thread_class *t = svc ? ditto_service_add_thread(svc, "stepped") : NULL;
	struct ditto_cpu *c = t ? ditto_service_add_cpu(svc, "stepped") : NULL;
	int err;

	if (!c)
		return -ENOMEM;
	ditto_thread_class_set_count(t, a->ntids ? a->ntids : 1);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	err = ditto_profile_cpu((pid_t)pid, a->tids, a->ntids, &o, c);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	return err;
}

int cpu_only(long pid, const char *name, const char *output, bool quiet,
	     const struct cpu_args *a)
{
	struct ditto_model *m = ditto_model_new();
	char comm[64] = "service", path[64];
	FILE *f;
	int err;

	if (!m)
		return cli_fail("profile", -ENOMEM);
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	if (!name && (f = fopen(path, "re"))) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	err = fill(pid, name ? name : comm, a, m);
	if (ditto_model_service_count(m) && ditto_service_cpu_count(ditto_model_service(m, 0)) &&
	    ditto_cpu_instructions(ditto_service_cpu(ditto_model_service(m, 0), 0))) {
		if (err)	/* partial results are still worth keeping */
			cli_fail("profile", err);
		if (!quiet)
			cpu_report(m);
		err = ditto_model_save(m, output);
		if (!err && !quiet)
			fprintf(stderr, "ditto: model written to %s\n", output);
	} else if (!err) {
		ditto_model_free(m);
		return cli_failf("profile: no instruction was stepped: the threads stayed blocked "
				 "in system calls (no load?); no model written");
	}
	ditto_model_free(m);
	return err ? cli_fail("profile", err) : CLI_OK;
}
