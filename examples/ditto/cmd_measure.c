/* SPDX-License-Identifier: MIT */
/*
 * ditto measure --port P [options] -- COMMAND...: start a service, load
 * it and print what the measurement backends saw, one metric a line or as
 * JSON. Ctrl-C stops the measurement; the service is stopped either way.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <ditto/model.h>
#include <ditto/tune.h>

#include "cli.h"
#include "cmd_tune.h"

#define CMD "measure"

static volatile int stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void usage(FILE *f)
{
	fputs("Usage: ditto measure --port P [options] -- COMMAND [ARGS...]\n"
	      "\n"
	      "Start COMMAND (a service that listens on port P and ends on SIGTERM), wait\n"
	      "until it accepts, load it in closed loop and measure it; once per backend:\n"
	      "  cachegrind  valgrind's simulated caches (I1, D1 32 KiB, LL 1 MiB) and branch\n"
	      "              predictor: instructions and miss rates per request, startup and\n"
	      "              shutdown subtracted (a run without load is measured too)\n"
	      "  profile     libditto's profiler: syscalls, socket bytes, read and write calls\n"
	      "              and CPU time per request (needs root)\n"
	      "  counters    hardware counters: IPC and MPKI (a host without a PMU has none:\n"
	      "              the backend is then skipped with a warning, or, when it is the\n"
	      "              only one asked for, the command fails saying why)\n"
	      "  cpu         libditto's CPU windows (ptrace, some seconds of load): loads per\n"
	      "              instruction, share of chased loads, mean log2 dependency\n"
	      "              distance (needs root)\n"
	      "Prints one \"name value\" line per metric.\n"
	      "\n"
	      "Options:\n"
	      "  -p, --port P             port the service listens on (required)\n"
	      "  -H, --host ADDR          its IPv4 address (default 127.0.0.1)\n"
	      "  -f, --framing NAME       wire framing: resp, memcache-text, memcache-binary,\n"
	      "                           http1, length-prefixed, raw, postgres, mysql\n"
	      "  -m, --model FILE         take framing and request sizes from a model\n"
	      "  -s, --service NAME       service of the model (default: the first)\n"
	      "  -b, --backend LIST       comma-separated backends (default cachegrind)\n"
	      "  -n, --requests N         answered requests per backend run (default 2000\n"
	      "                           unless --duration is given)\n"
	      "  -c, --connections N      connections (default 4)\n"
	      "  -d, --duration S         seconds of load per backend run at most\n"
	      "  -t, --startup-timeout S  seconds to wait for the service to accept (default 30)\n"
	      "  -w, --work-dir DIR       keep logs and cachegrind files in DIR\n"
	      "  -j, --json               print a JSON object {name: value}\n"
	      "  -h, --help               this help\n",
	      f);
}

struct measure_args {
	struct ditto_loadgen_opts *load;
	struct ditto_measure_opts *mo;
	const char *model, *service;
	bool json;
};

static int parse_backends(const char *list, unsigned *out)
{
	static const struct {
		const char *name;
		unsigned bit;
	} names[] = {
		{ "cachegrind", DITTO_BACKEND_CACHEGRIND },
		{ "profile", DITTO_BACKEND_PROFILE },
		{ "counters", DITTO_BACKEND_COUNTERS },
		{ "cpu", DITTO_BACKEND_CPU },
	};
	const char *p = list;

	*out = 0;
	while (*p) {
		size_t n = strcspn(p, ","), i;

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == n && !strncmp(names[i].name, p, n))
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return cli_usage_error(CMD, "--backend: unknown backend '%.*s'", (int)n, p);
		*out |= names[i].bit;
		p += n + (p[n] == ',');
	}
	return *out ? CLI_OK : cli_usage_error(CMD, "--backend: no backend named");
}

static int parse_number(int c, const char *arg, struct measure_args *a)
{
	uint64_t u;
	double d;

	if (c == 'd' || c == 't') {
		if (!cli_parse_f64(arg, &d) || !(d > 0))
			return cli_usage_error(CMD, "%s: '%s' is not a positive number of seconds",
					       c == 'd' ? "--duration" : "--startup-timeout", arg);
		*(c == 'd' ? &a->load->duration_s : &a->mo->startup_timeout_s) = d;
		return CLI_OK;
	}
	if (!cli_parse_u64(arg, &u) || !u || (c != 'n' && u > (c == 'p' ? 65535 : 100000)))
		return cli_usage_error(CMD, "'%s' is not a valid %s", arg,
				       c == 'p' ? "port (1..65535)" : c == 'n' ? "request count" :
				       "connection count (1..100000)");
	if (c == 'p')
		a->load->port = (unsigned)u;
	else if (c == 'n')
		a->load->requests = u;
	else
		a->load->connections = (unsigned)u;
	return CLI_OK;
}

static int parse_option(int c, const char *arg, struct measure_args *a)
{
	enum ditto_framing f;

	switch (c) {
	case 'p': case 'n': case 'c': case 'd': case 't':
		return parse_number(c, arg, a);
	case 'H': a->load->host = arg; return CLI_OK;
	case 'f':
		if (ditto_framing_parse(arg, &f) || f == DITTO_FRAMING_UNKNOWN)
			return cli_usage_error(CMD, "--framing: unknown framing '%s'", arg);
		a->load->framing = (unsigned)f;
		return CLI_OK;
	case 'm': a->model = arg; return CLI_OK;
	case 's': a->service = arg; return CLI_OK;
	case 'b': return parse_backends(arg, &a->mo->backends);
	case 'w': a->mo->work_dir = arg; return CLI_OK;
	case 'j': a->json = true; return CLI_OK;
	default: return -1;
	}
}

static void print_metrics(const struct ditto_metrics *m, bool json)
{
	size_t n = ditto_metrics_count(m);

	if (json)
		putchar('{');
	for (size_t i = 0; i < n; i++) {
		const char *name;
		double v;

		ditto_metrics_entry(m, i, &name, &v);
		if (json)
			printf("%s\"%s\": ", i ? ", " : "", name);
		else
			printf("%-32s ", name);
		cli_print_f64(stdout, v);
		if (!json)
			putchar('\n');
	}
	if (json)
		puts("}");
}

static int measure_run(struct measure_args *a)
{
	struct ditto_model *model = NULL;
	struct ditto_metrics *m = NULL;
	int err, rc;

	if (a->model && (rc = cli_load(a->model, false, &model)))
		return rc;
	a->load->model = model;
	a->load->service = a->service;
	a->mo->stop = &stop_flag;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	err = ditto_measure(a->mo, &m);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	ditto_model_free(model);
	if (err)
		return cli_fail(CMD, err);
	print_metrics(m, a->json);
	ditto_metrics_free(m);
	return CLI_OK;
}

int cmd_measure(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "host", required_argument, NULL, 'H' },
		{ "framing", required_argument, NULL, 'f' },
		{ "model", required_argument, NULL, 'm' },
		{ "service", required_argument, NULL, 's' },
		{ "backend", required_argument, NULL, 'b' },
		{ "requests", required_argument, NULL, 'n' },
		{ "connections", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'd' },
		{ "startup-timeout", required_argument, NULL, 't' },
		{ "work-dir", required_argument, NULL, 'w' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	DITTO_OPTS(ditto_loadgen_opts, load, .connections = 4);
	DITTO_OPTS(ditto_measure_opts, mo, .load = &load);
	struct measure_args a = { .load = &load, .mo = &mo };
	int c, r;

	cli_getopt_start();
	/* '+': the service's own options after COMMAND are not ours. */
	while ((c = getopt_long(argc, argv, "+:p:H:f:m:s:b:n:c:d:t:w:jh", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return CLI_OK;
		}
		if ((r = parse_option(c, optarg, &a)) < 0)
			return cli_bad_option(CMD, c, argv);
		if (r)
			return r;
	}
	if (optind == argc)
		return cli_usage_error(CMD, "missing the service's COMMAND (after --)");
	if (!load.port)
		return cli_usage_error(CMD, "missing --port P");
	if (a.model && load.framing)
		return cli_usage_error(CMD, "--framing and --model exclude each other");
	if (!a.model && !load.framing)
		return cli_usage_error(CMD, "missing --framing NAME or --model FILE");
	if (a.service && !a.model)
		return cli_usage_error(CMD, "--service needs --model");
	if (!load.requests && !load.duration_s)
		load.requests = 2000;
	mo.argv = argv + optind;
	return measure_run(&a);
}
