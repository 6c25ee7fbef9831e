/* SPDX-License-Identifier: MIT */
/*
 * ditto tune MODEL -o DIR [-- ORIGINAL COMMAND...]: the feedback loop,
 * its progress per iteration, and the report as a table, JSON and plot.
 */
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_tune.h"

#define CMD "tune"

struct tune_args {
	const char *model, *output, *service, *cc, *json, *plot, *save, *path, *busy;
	const char *keep[64];
	size_t nkeep;
	char **original;
	uint64_t seed, requests, iterations, port, original_port, connections, busy_connections;
	double bound, latency_s, seconds, idle_rate;
	bool latency, quiet, profile_targets, tail;
};

static volatile int stop_flag;

static void on_sigint(int sig)
{
	(void)sig;
	stop_flag = 1;
	/* A second Ctrl-C is not caught: it ends the process at once. */
	signal(SIGINT, SIG_DFL);
}

static void usage(FILE *f)
{
	fputs("Usage: ditto tune MODEL -o DIR [options] [-- ORIGINAL COMMAND...]\n"
	      "\n"
	      "Bring the clone of a modelled service within bounds of its original: write and\n"
	      "build the clone, measure it under cachegrind with the same load as the original\n"
	      "(started with ORIGINAL COMMAND; without it, the model's recorded figures are the\n"
	      "targets), adjust the model's tuning knobs, and repeat. DIR keeps the best clone\n"
	      "so far (also on Ctrl-C); the model with its tuning section is saved.\n"
	      "\n"
	      "A model of several services (a graph) is tuned as a graph unless --service picks\n"
	      "one: the graph tree is started as `ditto up` starts it, its front tier loaded,\n"
	      "and each tier's CPU time per request held to its original's (one knob per\n"
	      "tier). With ORIGINAL COMMAND (it starts the whole original graph, each tier on\n"
	      "its port in the model) the originals are measured under the same load first,\n"
	      "with nothing attached (the profiler's own cost is not cloned), and the end-to-\n"
	      "end latency rows of --latency set the two graphs side by side; without it, the\n"
	      "profile's figures are the targets.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output DIR          clone directory (required; new, empty or a clone tree)\n"
	      "  -s, --service NAME        service of the model (default: the first)\n"
	      "      --original-port P     port ORIGINAL COMMAND listens on (default: the model's)\n"
	      "  -P, --port P              port for the clone while measured (default: a free one)\n"
	      "      --seconds S           graphs: seconds of load per measurement (default 4)\n"
	      "      --path P              graphs: an HTTP front is loaded with GETs of P\n"
	      "                            (default /)\n"
	      "      --keep NAME=HOST:PORT graphs: node NAME is not cloned (nor tuned): its\n"
	      "                            callers are given HOST:PORT (repeatable)\n"
	      "      --busy MODEL          graphs: a profile of the same graph under a busier\n"
	      "                            load: each tier's CPU per request in it is held too\n"
	      "                            (knob NODE/synth.wake_share); with ORIGINAL COMMAND,\n"
	      "                            the original measured under that load instead\n"
	      "      --busy-connections N  graphs: connections of the busy load (default 8);\n"
	      "                            with ORIGINAL COMMAND and no --busy, the original\n"
	      "                            measured under it gives the busy targets\n"
	      "      --profile-targets     graphs: targets from the profile even with ORIGINAL\n"
	      "                            COMMAND (which then serves the latency rows only)\n"
	      "      --idle-rate QPS       graphs, with ORIGINAL COMMAND: also load both graphs\n"
	      "                            at QPS requests/s evenly spaced (tiers idle between\n"
	      "                            requests): each tier's CPU per request there is held\n"
	      "                            too (knob NODE/synth.footprint_kib), and the front's\n"
	      "                            p50 there (knob NODE/synth.footprint_after_share);\n"
	      "                            these rows' bounds are at least the original's own\n"
	      "                            spread over its rounds\n"
	      "      --tail                graphs, with ORIGINAL COMMAND: also hold the front's\n"
	      "                            p99 under the base load to the original's (knob\n"
	      "                            NODE/synth.body_spread, one value for the graph);\n"
	      "                            its bound is at least the original's own spread\n"
	      "  -i, --iterations N        at most N iterations (default 8)\n"
	      "  -b, --bound X             relative error bound of the tuned metrics (default 0.05)\n"
	      "  -n, --requests N          requests per measurement (default 30000)\n"
	      "  -c, --connections N       connections of the load (default 4; graphs: 2)\n"
	      "  -L, --latency             also measure latency against load and throughput\n"
	      "      --latency-seconds S   seconds per latency load point (default 3)\n"
	      "  -j, --json FILE           write the report as JSON ('-': standard output)\n"
	      "  -p, --plot FILE.svg       write latency against load as SVG (needs --latency)\n"
	      "      --save FILE           where the tuned model goes (default: DIR.msgpack)\n"
	      "  -e, --seed N              generator seed (default 1)\n"
	      "      --cc CC               C compiler for the clone (default: cc)\n"
	      "  -q, --quiet               no progress lines\n"
	      "  -h, --help                this help\n"
	      "\n"
	      "Exit status: 0 converged (every tuned metric within its bound); 3 the loop\n"
	      "ran but the best clone is out of bounds (the report's last line, 'verdict:',\n"
	      "names the metric and why: a knob without effect, at its limit, or still\n"
	      "moving); 1 an error (bad model, the original or every clone failed); 2 a\n"
	      "usage error. A Ctrl-C stop that leaves a clone is judged the same way.\n"
	      "\n"
	      "Example:\n"
	      "  ditto tune redis.msgpack -o redis-clone -- redis-server --port 6390 --save ''\n"
	      "  ditto tune shop.msgpack -o shop-clone -L --original-port 8080 -- ./start-shop\n",
	      f);
}

static void on_progress(unsigned i, double e, const char *worst, bool best, const char *note,
			void *user)
{
	(void)worst;
	if (*(bool *)user)
		return;
	fprintf(stderr, "ditto: tune: iteration %u: max error %5.1f%%%s  (%s)\n", i, 100 * e,
		best ? "  best so far" : "             ", note);
}

static void print_table(const struct ditto_tune_report *r)
{
	printf("%-26s %14s %14s %8s %7s\n", "metric", "original", "clone", "error", "bound");
	for (size_t i = 0; i < ditto_tune_report_count(r); i++) {
		const char *name;
		double a, b, e, bound;

		ditto_tune_report_row(r, i, &name, &a, &b, &e, &bound);
		printf("%-26s %14.6g %14.6g %7.2f%% ", name, a, b, 100 * e);
		if (bound > 0)
			printf("%6.1f%% %s\n", 100 * bound, e <= bound ? "ok" : "OUT");
		else
			printf("%7s\n", "-");
	}
	for (size_t i = 0; i < ditto_tune_report_stall_count(r); i++) {
		const char *metric, *text;

		if (!ditto_tune_report_stall(r, i, &metric, NULL, NULL, NULL, &text))
			printf("stall: %s: %s\n", metric, text);
	}
	printf("%s after %u iteration%s\n", ditto_tune_report_converged(r) ? "converged" :
	       "not converged", ditto_tune_report_iterations(r),
	       ditto_tune_report_iterations(r) == 1 ? "" : "s");
}

static int write_json(const struct ditto_tune_report *r, const char *path)
{
	char *json = NULL;
	FILE *f;
	int err = ditto_tune_report_to_json(r, &json);

	if (err)
		return cli_fail("report", err);
	f = strcmp(path, "-") ? fopen(path, "w") : stdout;
	if (!f) {
		ditto_free(json);
		return cli_failf("%s: cannot write: %m", path);
	}
	fprintf(f, "%s\n", json);
	ditto_free(json);
	if (f != stdout && fclose(f))
		return cli_failf("%s: cannot write: %m", path);
	return CLI_OK;
}

static int outputs(const struct tune_args *a, struct ditto_model *m,
		   const struct ditto_tune_report *r)
{
	char save[4200];
	int err, rc = CLI_OK;

	snprintf(save, sizeof(save), "%s.msgpack", a->output);
	if ((err = ditto_model_save(m, a->save ? a->save : save)))
		rc = cli_fail(a->save ? a->save : save, err);
	else if (!a->quiet)
		fprintf(stderr, "ditto: tune: tuned model saved to %s\n", a->save ? a->save : save);
	if (!r)
		return rc;
	if (!a->json || strcmp(a->json, "-"))
		print_table(r);
	/* Also with --json -: on stderr then, so stdout stays JSON. */
	fprintf(a->json && !strcmp(a->json, "-") ? stderr : stdout, "verdict: %s\n",
		ditto_tune_report_verdict(r));
	if (a->json && write_json(r, a->json))
		rc = CLI_EINPUT;
	if (a->plot && (err = ditto_tune_report_plot_svg(r, a->plot)))
		rc = cli_fail(a->plot, err);
	return rc;
}

static int finish_run(struct tune_args *a, struct ditto_model *m, struct ditto_tune_report *r,
		      int err)
{
	int rc;

	if (err && !r) {
		ditto_model_free(m);
		return cli_fail(CMD, err);
	}
	if (stop_flag && !a->quiet)
		fprintf(stderr, "ditto: tune: stopped: the best clone so far is in %s\n", a->output);
	rc = outputs(a, m, r);
	if (err)
		rc = cli_fail(CMD, err);
	else if (rc == CLI_OK && !ditto_tune_report_converged(r))
		rc = CLI_NOT_CONVERGED;
	ditto_tune_report_free(r);
	ditto_model_free(m);
	return rc;
}

static int run_graph(struct tune_args *a, struct ditto_model *m, struct ditto_model *busy)
{
	DITTO_OPTS(ditto_tune_graph_opts, to, .dir = a->output, .original_argv = a->original,
		   .original_port = (unsigned)a->original_port,
		   .max_iterations = (unsigned)a->iterations, .bound = a->bound,
		   .connections = (unsigned)a->connections, .duration_s = a->seconds,
		   .latency = a->latency, .latency_s = a->latency_s, .http_path = a->path,
		   .keep = a->keep,
		   .keep_count = a->nkeep, .seed = a->seed, .cc = a->cc, .progress = on_progress,
		   .user = &a->quiet, .stop = &stop_flag, .busy = busy,
		   .busy_connections = (unsigned)a->busy_connections,
		   .profile_targets = a->profile_targets, .idle_qps = a->idle_rate,
		   .tail = a->tail);
	struct ditto_tune_report *r = NULL;
	int err;

	if (a->port || a->requests) {
		ditto_model_free(m);
		ditto_model_free(busy);
		return cli_usage_error(CMD, "%s is for one service: a graph's tiers keep their "
				       "ports and are loaded for --seconds", a->port ? "--port" :
				       "--requests");
	}
	signal(SIGINT, on_sigint);
	err = ditto_tune_graph(m, &to, &r);
	signal(SIGINT, SIG_DFL);
	ditto_model_free(busy);
	return finish_run(a, m, r, err);
}

static int run(struct tune_args *a)
{
	DITTO_OPTS(ditto_tune_opts, to, .dir = a->output, .service = a->service,
		   .original_argv = a->original, .original_port = (unsigned)a->original_port,
		   .port = (unsigned)a->port, .max_iterations = (unsigned)a->iterations,
		   .bound = a->bound, .requests = a->requests, .connections = (unsigned)a->connections,
		   .latency = a->latency, .latency_s = a->latency_s, .seed = a->seed, .cc = a->cc,
		   .progress = on_progress, .user = &a->quiet, .stop = &stop_flag);
	struct ditto_tune_report *r = NULL;
	struct ditto_model *m = NULL;
	int err, rc;

	if ((rc = cli_load(a->model, false, &m)))
		return rc;
	if (!a->service && cli_model_is_graph(m)) {
		struct ditto_model *busy = NULL;

		if (a->busy && (rc = cli_load(a->busy, false, &busy))) {
			ditto_model_free(m);
			return rc;
		}
		return run_graph(a, m, busy);
	}
	if (a->nkeep || a->seconds || a->path || a->busy || a->busy_connections ||
	    a->profile_targets || a->idle_rate || a->tail) {
		ditto_model_free(m);
		return cli_usage_error(CMD, "%s is for a graph (a model of several services, "
				       "tuned without --service)", a->nkeep ? "--keep" :
				       a->seconds ? "--seconds" : a->path ? "--path" :
				       a->busy ? "--busy" : a->busy_connections ?
				       "--busy-connections" : a->profile_targets ?
				       "--profile-targets" : a->idle_rate ? "--idle-rate" : "--tail");
	}
	signal(SIGINT, on_sigint);
	err = ditto_tune(m, &to, &r);
	signal(SIGINT, SIG_DFL);
	return finish_run(a, m, r, err);
}

static int number(const char *opt, const char *arg, uint64_t max, uint64_t *out)
{
	if (!cli_parse_u64(arg, out) || !*out || *out > max)
		return cli_usage_error(CMD, "--%s: '%s' is not 1..%llu", opt, arg,
				       (unsigned long long)max);
	return 0;
}

static int option(int c, const char *arg, struct tune_args *a)
{
	switch (c) {
	case 'o': a->output = arg; return 0;
	case 's': a->service = arg; return 0;
	case 'O': return number("original-port", arg, 65535, &a->original_port);
	case 'P': return number("port", arg, 65535, &a->port);
	case 'i': return number("iterations", arg, 1000, &a->iterations);
	case 'n': return number("requests", arg, UINT64_MAX, &a->requests);
	case 'c': return number("connections", arg, 10000, &a->connections);
	case 'e': return number("seed", arg, UINT64_MAX, &a->seed);
	case 'b':
		if (!cli_parse_f64(arg, &a->bound) || !(a->bound > 0 && a->bound < 1))
			return cli_usage_error(CMD, "--bound: '%s' is not a number in (0, 1)", arg);
		return 0;
	case 'S':
		if (!cli_parse_f64(arg, &a->latency_s) || !(a->latency_s > 0 && a->latency_s < 3600))
			return cli_usage_error(CMD, "--latency-seconds: '%s' is not in (0, 3600)", arg);
		return 0;
	case 'L': a->latency = true; return 0;
	case 'T':
		if (!cli_parse_f64(arg, &a->seconds) || !(a->seconds > 0 && a->seconds < 3600))
			return cli_usage_error(CMD, "--seconds: '%s' is not in (0, 3600)", arg);
		return 0;
	case 'G': a->path = arg; return 0;
	case 'B': a->busy = arg; return 0;
	case 'N': return number("busy-connections", arg, 10000, &a->busy_connections);
	case 'I':
		if (!cli_parse_f64(arg, &a->idle_rate) || !(a->idle_rate >= 1 && a->idle_rate <= 1000))
			return cli_usage_error(CMD, "--idle-rate: '%s' is not in [1, 1000]", arg);
		return 0;
	case 'E':
		if (a->nkeep == sizeof(a->keep) / sizeof(a->keep[0]))
			return cli_usage_error(CMD, "at most %zu --keep", a->nkeep);
		a->keep[a->nkeep++] = arg;
		return 0;
	case 'j': a->json = arg; return 0;
	case 'p': a->plot = arg; return 0;
	case 'W': a->save = arg; return 0;
	case 'C': a->cc = arg; return 0;
	case 'q': a->quiet = true; return 0;
	case 'R': a->profile_targets = true; return 0;
	case 'A': a->tail = true; return 0;
	default: return -1;
	}
}

int cmd_tune(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "service", required_argument, NULL, 's' },
		{ "original-port", required_argument, NULL, 'O' },
		{ "busy", required_argument, NULL, 'B' },
		{ "busy-connections", required_argument, NULL, 'N' },
		{ "profile-targets", no_argument, NULL, 'R' },
		{ "idle-rate", required_argument, NULL, 'I' },
		{ "tail", no_argument, NULL, 'A' },
		{ "port", required_argument, NULL, 'P' },
		{ "iterations", required_argument, NULL, 'i' },
		{ "bound", required_argument, NULL, 'b' },
		{ "requests", required_argument, NULL, 'n' },
		{ "connections", required_argument, NULL, 'c' },
		{ "latency", no_argument, NULL, 'L' },
		{ "latency-seconds", required_argument, NULL, 'S' },
		{ "seconds", required_argument, NULL, 'T' },
		{ "keep", required_argument, NULL, 'E' },
		{ "path", required_argument, NULL, 'G' },
		{ "json", required_argument, NULL, 'j' },
		{ "plot", required_argument, NULL, 'p' },
		{ "save", required_argument, NULL, 'W' },
		{ "seed", required_argument, NULL, 'e' },
		{ "cc", required_argument, NULL, 'C' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tune_args a = { 0 };
	int c, r;

	/* Everything after "--" is the original's command line, not ours. */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			if (i + 1 < argc)
				a.original = &argv[i + 1];
			argc = i;
			break;
		}
	cli_getopt_start();
	while ((c = getopt_long(argc, argv, ":o:s:P:i:b:n:c:Lj:p:e:qh", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return CLI_OK;
		}
		if ((r = option(c, optarg, &a)) < 0)
			return cli_bad_option(CMD, c, argv);
		if (r)
			return r;
	}
	if (optind + 1 != argc)
		return cli_usage_error(CMD, optind < argc ? "one MODEL file, then -- and the "
				       "original's command" : "missing MODEL");
	a.model = argv[optind];
	if (!a.output)
		return cli_usage_error(CMD, "missing --output DIR");
	if (a.plot && !a.latency)
		return cli_usage_error(CMD, "--plot needs --latency");
	return run(&a);
}
