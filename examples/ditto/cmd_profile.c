/* SPDX-License-Identifier: MIT */
/*
 * ditto profile --pid PID | -- COMMAND...: run a profile window and write
 * the model. Ctrl-C ends the window early and still writes the model.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_profile.h"
#include "cmd_profile_cpu.h"
#include "cmd_profile_otlp.h"

#define CMD "profile"

static struct ditto_profile *active;

/* Ctrl-C ends the window (a window without --duration then takes its CPU
 * windows; a second Ctrl-C ends those); SIGTERM and SIGHUP end it all now,
 * and the model of what was collected is still written. */
static void on_signal(int sig)
{
	ditto_profile_cancel(active);
	if (sig != SIGINT)
		ditto_profile_cancel(active);
}

static void usage(FILE *f)
{
	fputs("Usage: ditto profile (--pid PID... | --cgroup PATH | --listening PORTS\n"
	      "                      | -- COMMAND [ARGS...]) -o FILE [options]\n"
	      "       ditto profile --cpu-only --pid PID [--tid TID]... -o FILE [options]\n"
	      "\n"
	      "Profile a live service and write its model: system calls with their arguments\n"
	      "(eBPF), requests on accepted connections, thread classes and the network model;\n"
	      "then CPU windows (ptrace single-stepping) on the request-serving threads:\n"
	      "instruction mix, branches, working sets, dependency distances.\n"
	      "A service given by --pid keeps running; a COMMAND started by ditto is stopped\n"
	      "when the profile ends (unless --keep-running). Ctrl-C ends the window and\n"
	      "keeps the results: without --duration CPU windows follow (a second Ctrl-C\n"
	      "ends them), with one they are skipped; SIGTERM or SIGHUP end everything at\n"
	      "once and still write the model.\n"
	      "Needs root (or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE).\n"
	      "\n"
	      "Options:\n"
	      "  -p, --pid PID         profile this running process and its descendants as\n"
	      "                        one service; repeat for several services in one\n"
	      "                        window (up to 16): the model then holds each and the\n"
	      "                        graph of calls between them\n"
	      "  -d, --duration S      window length in seconds (default: until Ctrl-C)\n"
	      "  -o, --output FILE     model file to write (required)\n"
	      "      --cgroup PATH     every process of a cgroup (v2: a path, or one under\n"
	      "                        /sys/fs/cgroup), one service per process tree\n"
	      "  -L, --listening PORTS every process listening on one of PORTS (comma\n"
	      "                        separated) or on any TCP port ('any'), one service per\n"
	      "                        process tree\n"
	      "  -n, --name NAME       service name in the model (default: process name)\n"
	      "  -n, --name PORT=NAME  name the service listening on PORT (repeatable; with\n"
	      "                        several --pid, unnamed services take their executable's\n"
	      "                        name, with their first port when two share one)\n"
	      "  -G, --graph           attribute the service's outgoing calls to its requests\n"
	      "                        and fill the model's graph (on with several --pid)\n"
	      "  -r, --requests N      requests served in the window, if known better than\n"
	      "                        the count inferred from socket traffic\n"
	      "  -s, --sample-hz HZ    call-stack sampling rate (default 99; 0: off, thread\n"
	      "                        classes then come from behaviour only)\n"
	      "  -W, --cpu-windows N   CPU windows per request-serving thread class\n"
	      "                        (default 8; 0: no CPU windows)\n"
	      "  -I, --cpu-insts N     instructions per CPU window (default 20000, about\n"
	      "                        0.6 s of single-stepping)\n"
	      "  -S, --cpu-spacing S   seconds between CPU windows (default 0.25)\n"
	      "  -M, --step-mode MODE  how CPU windows run system calls: breakpoint (hardware\n"
	      "                        debug registers), syscall_stops (PTRACE_SYSCALL, for\n"
	      "                        hosts whose breakpoints never fire) or auto (default:\n"
	      "                        breakpoints if a check shows they fire here; the\n"
	      "                        environment variable DITTO_STEP_MODE overrides auto)\n"
	      "  -c, --cpu-only        CPU windows only, no system window (no BPF needed):\n"
	      "                        the threads given by --tid, or all of --pid\n"
	      "  -t, --tid TID         a thread to step with --cpu-only (repeatable)\n"
	      "  -k, --keep-running    leave the launched COMMAND running after the profile\n"
	      "                        (default: SIGTERM, SIGKILL if it still runs 5 s later)\n"
	      "  -a, --allow-idle      a window without traffic is not a failure (exit 0,\n"
	      "                        still with its warning)\n"
	      "      --otlp-listen HOST:PORT  receive spans during the window as an OTLP/HTTP\n"
	      "                        collector does (POST /v1/traces, protobuf or JSON,\n"
	      "                        e.g. 127.0.0.1:4318; port 0: any free one): the\n"
	      "                        graph's edges of source traces. Loopback only unless\n"
	      "                        --otlp-allow-remote (the receiver has no authentication)\n"
	      "      --otlp-allow-remote  listen on a non-loopback address\n"
	      "      --traces FILE     add the graph of a trace export (OTLP JSON, Jaeger JSON,\n"
	      "                        Zipkin v2 JSON; repeatable) taken during the window, as\n"
	      "                        'ditto graph import' would (not with --otlp-listen)\n"
	      "      --traces-uncorrected  leave call counts as sampled (default: scaled by\n"
	      "                        the sampling ratio the export declares)\n"
	      "  -q, --quiet           no progress line\n"
	      "  -h, --help            this help\n"
	      "\n"
	      "Exit status: 0 the model is written; 1 failure (no model, or an incomplete\n"
	      "one if the window was cut short by an error); 2 usage error; 4 the window\n"
	      "counted no request, or the network model (io_model, framing) could not be\n"
	      "inferred: the model is written, but it is a model of an idle service and a\n"
	      "warning says what is missing (load the service while it is profiled, or\n"
	      "give --allow-idle when idle is what you meant).\n",
	      f);
}

static void progress(double elapsed, double duration, uint64_t syscalls, uint64_t requests,
		     void *user)
{
	(void)user;
	if (duration > 0)
		fprintf(stderr, "\rprofiling: %.0f/%.0f s, %llu syscalls, %llu requests   ", elapsed,
			duration, (unsigned long long)syscalls, (unsigned long long)requests);
	else
		fprintf(stderr, "\rprofiling: %.0f s (Ctrl-C to stop), %llu syscalls, %llu requests   ",
			elapsed, (unsigned long long)syscalls, (unsigned long long)requests);
}

#define MAX_PIDS 16
#define MAX_NAMES 32

struct port_name_arg {
	uint16_t port;
	const char *name;
};

struct args {
	long pid;		/* the first --pid */
	pid_t pids[MAX_PIDS];
	size_t npids;
	struct port_name_arg names[MAX_NAMES];
	size_t nnames;
	bool graph;
	const char *cgroup;
	uint16_t listen[MAX_NAMES];
	size_t nlisten;
	bool listening;
	const char *traces[MAX_PIDS];
	size_t ntraces;
	double duration;
	const char *output, *name;
	uint64_t requests;
	int sample_hz;
	bool quiet, keep_running, allow_idle;
	char **command;
	struct cpu_args cpu;
	struct otlp_args otlp;
};

/* --listening any | PORT[,PORT]... */
static int parse_ports(struct args *a, const char *arg)
{
	char buf[512], *save = NULL;

	a->listening = true;
	if (strcmp(arg, "any") == 0)
		return 0;
	snprintf(buf, sizeof(buf), "%s", arg);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		uint64_t port;

		if (!cli_parse_u64(t, &port) || !port || port > 65535 || a->nlisten == MAX_NAMES) {
			cli_usage_error(CMD, "--listening: '%s' is not 'any' or ports 1..65535 "
					"(at most %d)", arg, MAX_NAMES);
			return -1;
		}
		a->listen[a->nlisten++] = (uint16_t)port;
	}
	return 0;
}

/* --name NAME (the one service) or --name PORT=NAME (a service by port). */
static int parse_name(struct args *a, const char *arg)
{
	const char *eq = strchr(arg, '=');
	uint64_t port;
	char num[8];

	if (!eq) {
		a->name = arg;
		return 0;
	}
	if ((size_t)(eq - arg) >= sizeof(num) || !eq[1]) {
		cli_usage_error(CMD, "--name: '%s' is not NAME or PORT=NAME", arg);
		return -1;
	}
	memcpy(num, arg, (size_t)(eq - arg));
	num[eq - arg] = '\0';
	if (!cli_parse_u64(num, &port) || !port || port > 65535 || a->nnames == MAX_NAMES) {
		cli_usage_error(CMD, "--name: '%s': PORT must be 1..65535 (at most %d names)",
				arg, MAX_NAMES);
		return -1;
	}
	a->names[a->nnames++] = (struct port_name_arg){ (uint16_t)port, eq + 1 };
	return 0;
}

enum { OPT_OTLP_LISTEN = 256, OPT_OTLP_ALLOW_REMOTE, OPT_TRACES_UNCORRECTED, OPT_TRACES };

static int parse(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "name", required_argument, NULL, 'n' },
		{ "requests", required_argument, NULL, 'r' },
		{ "sample-hz", required_argument, NULL, 's' },
		{ "cpu-windows", required_argument, NULL, 'W' },
		{ "cpu-insts", required_argument, NULL, 'I' },
		{ "cpu-spacing", required_argument, NULL, 'S' },
		{ "step-mode", required_argument, NULL, 'M' },
		{ "cpu-only", no_argument, NULL, 'c' },
		{ "tid", required_argument, NULL, 't' },
		{ "keep-running", no_argument, NULL, 'k' },
		{ "allow-idle", no_argument, NULL, 'a' },
		{ "graph", no_argument, NULL, 'G' },
		{ "cgroup", required_argument, NULL, 'g' },
		{ "listening", required_argument, NULL, 'L' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "otlp-listen", required_argument, NULL, OPT_OTLP_LISTEN },
		{ "otlp-allow-remote", no_argument, NULL, OPT_OTLP_ALLOW_REMOTE },
		{ "traces-uncorrected", no_argument, NULL, OPT_TRACES_UNCORRECTED },
		{ "traces", required_argument, NULL, OPT_TRACES },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t u;
	int c;

	cli_getopt_start();
	while ((c = getopt_long(argc, argv, "+:p:d:o:n:r:s:W:I:S:M:ct:kaGL:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!cli_parse_u64(optarg, &u) || u == 0 || u > 4194304)
				return cli_usage_error(CMD, "--pid: '%s' is not a process id", optarg);
			if (a->npids == MAX_PIDS)
				return cli_usage_error(CMD, "at most %d --pid", MAX_PIDS);
			a->pids[a->npids++] = (pid_t)u;
			if (!a->pid)
				a->pid = (long)u;
			break;
		case 'd':
			if (!cli_parse_f64(optarg, &a->duration) || a->duration <= 0)
				return cli_usage_error(CMD, "--duration: '%s' is not a positive number",
						       optarg);
			break;
		case 'o': a->output = optarg; break;
		case 'n':
			if (parse_name(a, optarg))
				return CLI_EUSAGE;
			break;
		case 'G': a->graph = true; break;
		case 'g': a->cgroup = optarg; break;
		case 'L':
			if (parse_ports(a, optarg))
				return CLI_EUSAGE;
			break;
		case 'r':
			if (!cli_parse_u64(optarg, &a->requests))
				return cli_usage_error(CMD, "--requests: '%s' is not a count", optarg);
			break;
		case 's':
			if (!cli_parse_u64(optarg, &u) || u > 10000)
				return cli_usage_error(CMD, "--sample-hz: '%s' is not 0..10000", optarg);
			a->sample_hz = u ? (int)u : -1;
			break;
		case 'W': case 'I': case 'S': case 'M': case 'c': case 't':
			if (cpu_parse_option(c, optarg, &a->cpu))
				return CLI_EUSAGE;
			break;
		case 'k': a->keep_running = true; break;
		case 'a': a->allow_idle = true; break;
		case 'q': a->quiet = true; break;
		case OPT_OTLP_LISTEN: a->otlp.listen = optarg; break;
		case OPT_OTLP_ALLOW_REMOTE: a->otlp.allow_remote = true; break;
		case OPT_TRACES_UNCORRECTED: a->otlp.uncorrected = true; break;
		case OPT_TRACES:
			if (a->ntraces == MAX_PIDS)
				return cli_usage_error(CMD, "at most %d --traces", MAX_PIDS);
			a->traces[a->ntraces++] = optarg;
			break;
		case 'h': usage(stdout); return -1;
		default: return cli_bad_option(CMD, c, argv);
		}
	}
	if (optind < argc)
		a->command = argv + optind;
	if ((a->pid != 0) + (a->command != NULL) + (a->cgroup != NULL) + a->listening != 1)
		return cli_usage_error(CMD, "give one of --pid PID, --cgroup PATH, --listening PORTS "
				       "or -- COMMAND");
	if (a->cpu.only && !a->pid)
		return cli_usage_error(CMD, "--cpu-only needs --pid PID");
	if (a->cpu.only && a->npids > 1)
		return cli_usage_error(CMD, "--cpu-only takes one --pid");
	if (a->npids > 1 && a->name)
		return cli_usage_error(CMD, "--name NAME names one service: with several --pid, "
				       "name them by port (--name PORT=NAME)");
	if (a->keep_running && !a->command)
		return cli_usage_error(CMD, "--keep-running goes with -- COMMAND");
	if (a->allow_idle && a->cpu.only)
		return cli_usage_error(CMD, "--allow-idle goes with a system window, not --cpu-only");
	if (a->cpu.ntids && !a->cpu.only)
		return cli_usage_error(CMD, "--tid goes with --cpu-only");
	if (a->otlp.listen && a->cpu.only)
		return cli_usage_error(CMD, "--otlp-listen goes with a system window, not --cpu-only");
	if (a->otlp.allow_remote && !a->otlp.listen)
		return cli_usage_error(CMD, "--otlp-allow-remote goes with --otlp-listen");
	if (a->otlp.uncorrected && !a->otlp.listen && !a->ntraces)
		return cli_usage_error(CMD, "--traces-uncorrected goes with --otlp-listen or --traces");
	if (a->ntraces && (a->otlp.listen || a->cpu.only))
		return cli_usage_error(CMD, "--traces goes with a system window, not --otlp-listen or "
				       "--cpu-only (one source of traces per model)");
	if (!a->output)
		return cli_usage_error(CMD, "missing --output FILE");
	return CLI_OK;
}

/*
 * The model file can be written: checked before the window, so a long
 * profile is not lost to a typo. A file that did not exist is not left.
 */
static int check_output(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd >= 0) {
		close(fd);
		unlink(path);
		return CLI_OK;
	}
	if (errno == EEXIST && access(path, W_OK) == 0)
		return CLI_OK;
	return cli_failf("%s: cannot write the model there: %s", path, strerror(errno));
}

/* The library's warning said what is missing and why; this says what the
 * status means, so that a script's log explains its failure. */
static int idle_status(unsigned gaps, bool allow_idle)
{
	if (!gaps || allow_idle)
		return CLI_OK;
	fprintf(stderr, "ditto: profile: the model is of an idle service (see the warning); "
		"exit status %d (--allow-idle: 0)\n", CLI_IDLE);
	return CLI_IDLE;
}

/* --traces FILE...: a failure still leaves the profile's model written. */
static int import_traces(const struct args *a, struct ditto_model *m)
{
	DITTO_OPTS(ditto_trace_opts, o, .uncorrected = a->otlp.uncorrected);
	int err = ditto_profile_import_traces(m, a->traces, a->ntraces, &o);

	if (err)
		return cli_fail("profile: --traces", err);
	return CLI_OK;
}

/* The services of --cgroup or --listening, said on stderr. */
static int discover(const struct args *a, pid_t *pids, size_t *n)
{
	DITTO_OPTS(ditto_discover_opts, o, .cgroup = a->cgroup, .ports = a->listen,
		   .nports = a->nlisten);
	int err = ditto_profile_discover(&o, pids, MAX_PIDS, n);

	if (err || a->quiet)
		return err;
	fprintf(stderr, "ditto: profile: %zu service%s:", *n, *n == 1 ? "" : "s");
	for (size_t i = 0; i < *n; i++)
		fprintf(stderr, " %d", (int)pids[i]);
	fputc('\n', stderr);
	return 0;
}

static int profile(const struct args *a)
{
	DITTO_OPTS(ditto_profile_opts, po, .duration_s = a->duration, .service_name = a->name,
		   .requests = a->requests, .sample_hz = a->sample_hz,
		   .progress = a->quiet || !isatty(2) ? NULL : progress,
		   .cpu_windows = a->cpu.windows_set && !a->cpu.windows ? -1 : (int)a->cpu.windows,
		   .cpu_window_insts = a->cpu.insts, .cpu_spacing_s = a->cpu.spacing,
		   .cpu_step_mode = a->cpu.step_mode, .keep_launched = a->keep_running,
		   .graph = a->graph);
	struct ditto_otlp_receiver *otlp = NULL;
	struct ditto_model *m = NULL;
	pid_t pids[MAX_PIDS];
	size_t npids = 0;
	unsigned gaps = 0;
	int err = 0, otlp_rc;

	if ((err = check_output(a->output)))
		return err;
	/* Before the window: an exporter's first batch is not lost. */
	if ((err = otlp_cli_start(&a->otlp, a->quiet, &otlp)))
		return err;
	if ((err = ditto_profile_new(&po, &active))) {
		ditto_otlp_receiver_free(otlp);
		return cli_fail("profile", err);
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	for (size_t i = 0; i < a->nnames && !err; i++)
		err = ditto_profile_name_port(active, a->names[i].port, a->names[i].name);
	if (!err && (a->cgroup || a->listening))
		err = discover(a, pids, &npids);
	if (!err)
		err = a->command ? ditto_profile_launch(active, a->command)
				 : ditto_profile_attach_many(active, npids ? pids : a->pids,
							     npids ? npids : a->npids);
	if (!err)
		err = ditto_profile_run(active);
	if (po.progress)
		fputc('\n', stderr);
	/* Spans end with the window: the CPU windows that follow slow the
	 * service down and their spans would not be its own. */
	ditto_otlp_receiver_stop(otlp);
	if (err >= 0)
		err = ditto_profile_finish(active, &m);
	if (err >= 0)
		gaps = ditto_profile_gaps(active);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	ditto_profile_free(active);
	active = NULL;
	if (err < 0) {
		ditto_otlp_receiver_free(otlp);
		return cli_fail("profile", err);
	}
	if (!a->quiet)
		cpu_report(m);
	/* A receiver that fails still leaves the profile's model written. */
	otlp_rc = otlp_cli_finish(otlp, &a->otlp, m, a->quiet);
	if (!otlp_rc && a->ntraces)
		otlp_rc = import_traces(a, m);
	ditto_otlp_receiver_free(otlp);
	err = ditto_model_save(m, a->output);
	ditto_model_free(m);
	if (err)
		return cli_fail(a->output, err);
	if (!a->quiet)
		fprintf(stderr, "ditto: model written to %s\n", a->output);
	if (otlp_rc)
		return otlp_rc;
	return idle_status(gaps, a->allow_idle);
}


int cmd_profile(int argc, char **argv)
{
	struct args a = { 0 };
	int rc = parse(argc, argv, &a);

	if (rc < 0)
		return CLI_OK;
	if (rc)
		return rc;
	if (a.cpu.only && (rc = check_output(a.output)))
		return rc;
	return a.cpu.only ? cpu_only(a.pid, a.name, a.output, a.quiet, &a.cpu) : profile(&a);
}
